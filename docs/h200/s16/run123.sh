#!/bin/bash
# Session 16, fifth call: ncu on the headline's cluster winners at 16 rows (one row a cluster)
# and 64 rows (16-row tl.dot tile): time, stall reasons, memory; then every contender (both
# torch.compile modes too) at 1, 16, 64, 256 and 1024 rows on the shipped table (run122's).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r123; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
which ncu; ncu --version | tail -1
for m in 16 64; do
  timeout 100 ncu --clock-control none --launch-skip 30 --launch-count 1 -k regex:_k_cluster --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --page raw python3 docs/h200/s16/ncu_target.py tuned/$H.py $m > $R/ncu_raw$m.txt 2> $R/ncu$m.err
  timeout 60 ncu --clock-control none --launch-skip 30 --launch-count 1 -k regex:_k_cluster --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis python3 docs/h200/s16/ncu_target.py tuned/$H.py $m > $R/ncu$m.txt 2>> $R/ncu$m.err
  echo "== ncu $m rows"; tail -n 2 $R/ncu$m.err | cut -c1-200
  grep -E "Duration|Warp Cycles Per Issued|L2 Hit|Mem Busy|Max Bandwidth|Registers Per|Achieved Occ" $R/ncu$m.txt | awk '{$1=$1};1' | head -12 | cut -c1-120
  grep -E "gpu__time_duration.sum|smsp__average_warp_latency_issue_stalled|smsp__pcsamp_warps_issue_stalled|warp_issue_stalled_.*per_warp_active.pct " $R/ncu_raw$m.txt | awk '$NF+0 > 0.5 {$1=$1; print}' | head -30 | cut -c1-120
done
( time timeout 220 mlpgen bench tuned/$H.py --batches 1,16,64,256,1024 --json --plot $R/bench.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time" | tail -n 30 | cut -c1-170; grep real $R/bench_all.time
tar czf $OUT/run123.tgz -C /tmp r123
