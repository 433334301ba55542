#!/bin/bash
# Written in session 26 for the next session (not run: no device time left): pdl_order_probe.py
# (each shipped PDL cell of the headline, and chain at 1024 rows: plain, as shipped, and with
# its wait before its release) at 1, 16, 64, 256 and 1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run192; mkdir -p $R
( time timeout 200 python3 docs/h200/s26/pdl_order_probe.py $R/order 1 16 64 256 1024 > $R/order.log 2>&1 ) 2> $R/order.time; echo "probe rc $?"
grep -v Warning $R/order.log | grep -E "^(checked|\|)" | cut -c1-200; grep real $R/order.time; rm -f $R/order/rows*/*.py; cat $R/order/rows*/tiles.txt > $R/order.txt
cd $OUT && tar czf run192.tgz run192 && rm -rf run192
