#!/bin/bash
# Session 13: whether the wide public-matrix modules' calls take the native lane (run99 was run as
# this script with the probe named native_decline_probe.py and its output native_decline.txt;
# both renamed after it).
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
mkdir -p /tmp/r99; timeout 150 python3 docs/h200/s13/native_lanes_probe.py 2>&1 | tee /tmp/r99/native_lanes.txt | cut -c1-400
tar czf $OUT/run99.tgz -C /tmp r99
