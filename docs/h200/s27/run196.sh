#!/bin/bash
# Session 27, the final code and tables: the GPU tests of the shipped modules (every shipped
# winner against the fp32 reference, bf16 included, which the interpreter cannot check), chain
# and the PDL links. Outputs straight under $OUT/run196.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run196; mkdir -p $R
S=$SECONDS
MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/ -k "shipped or chain or linked_by_pdl" > $R/tests.txt 2>&1
echo "tests rc $? $((SECONDS-S)) s" | tee -a $R/tests.txt; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" $R/tests.txt | head -8 | cut -c1-300
