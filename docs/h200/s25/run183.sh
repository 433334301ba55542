#!/bin/bash
# Session 25, fifth call: ncu on the headline's shipped 1024-row persist kernel (one launch after
# 30, inputs fixed: docs/h200/s16/ncu_target.py), L2 kept warm between launches as in the tuner's
# back-to-back measure (--cache-control none) and flushed (ncu's default): time, throughput,
# L2 traffic and hit rate, warp stalls.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run183; mkdir -p $R
H=tuned/mlp_256x512x256_gelu_fp16.py
ncu --version | tail -1
for cc in none all; do
  timeout 90 ncu --clock-control none --cache-control $cc --launch-skip 30 --launch-count 1 -k regex:_k_persist --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --page raw python3 docs/h200/s16/ncu_target.py $H 1024 > $R/ncu_raw_$cc.txt 2> $R/ncu_$cc.err
  echo "== cache-control $cc"; tail -n 1 $R/ncu_$cc.err | cut -c1-200
  grep -E " (gpu__time_duration.sum|sm__throughput.avg.pct_of_peak_sustained_elapsed|lts__throughput.avg.pct_of_peak_sustained_elapsed|dram__throughput.avg.pct_of_peak_sustained_elapsed|lts__t_bytes.sum|lts__t_sector_hit_rate.pct|dram__bytes_read.sum|l1tex__t_bytes.sum|launch__registers_per_thread|launch__grid_size|smsp__average_warp_latency_per_inst_issued.ratio) " $R/ncu_raw_$cc.txt | awk '{$1=$1};1' | cut -c1-120
  grep -E "smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active.ratio " $R/ncu_raw_$cc.txt | awk '$NF+0 > 0.3 {$1=$1; print}' | cut -c1-120
done
cd $OUT && tar czf run183.tgz run183 && rm -rf run183
