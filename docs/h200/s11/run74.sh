#!/bin/bash
# Session 11: run73 again with the probe's config tuple fixed (run73 passed the loader's registers as
# the row block and failed every config before launching); no GPU tests this time.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r74; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
( time timeout 330 python3 docs/h200/s11/gluon_probe.py $R > $R/gluon_probe.txt 2> $R/gluon_probe.err ) 2> $R/gluon_probe.time
cat $R/gpu.txt $R/gluon_probe.txt; tail -n 6 $R/gluon_probe.err | cut -c1-400; grep real $R/gluon_probe.time
tar czf $OUT/run74.tgz -C /tmp r74
