#!/bin/bash
# Session 26, last call: persist_pdl_probe.py (where persist's kernel lets the next call's kernel
# launch: at its start, as shipped, or after its grid barrier; and without PDL) at the
# headline's 1024 and 256 rows. (run187, on two GPUs, was refused: no such machine lent.)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run188; mkdir -p $R
( time timeout 150 python3 docs/h200/s26/persist_pdl_probe.py $R/pdl 1024 256 > $R/pdl.log 2>&1 ) 2> $R/pdl.time; echo "probe rc $?"
grep -v Warning $R/pdl.log | tail -16 | cut -c1-250; grep real $R/pdl.time; rm -f $R/pdl/*.py
cd $OUT && tar czf run188.tgz run188 && rm -rf run188
