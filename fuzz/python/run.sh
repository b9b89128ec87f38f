#!/usr/bin/env bash
# Smoke run of the atheris target fuzz/python/fuzz_write_inputs.py (the Python write inputs):
# SECONDS of one core, a 2 GiB RSS limit, 10 s per input; stops at the first finding (exit 1),
# naming the input. The corpus grows in $RNTUPLE_CACHE/fuzz/corpus/python_write_inputs from
# fuzz/python/seeds and fuzz/python/regressions; a failing input is saved under
# $RNTUPLE_CACHE/fuzz/artifacts/python_write_inputs/. Prints the executions and atheris'
# final cov/ft. Long runs: FUZZ_TARGETS=python_write_inputs bench/fuzz_long.sh SECONDS.
#
#   fuzz/python/run.sh SECONDS
#
# Needs the `rntuple` package and atheris (requirements-dev.txt) in the Python on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TOTAL=${1:?usage: fuzz/python/run.sh SECONDS}
export RNTUPLE_CACHE=${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}
target=python_write_inputs
corpus="$RNTUPLE_CACHE/fuzz/corpus/$target"
artifacts="$RNTUPLE_CACHE/fuzz/artifacts/$target"
log="$RNTUPLE_CACHE/fuzz/$target.log"
mkdir -p "$corpus" "$artifacts"
# The harness writes its files here (tmpfs when there is one); libFuzzer exits without
# running Python's clean-up, so the directory is removed here.
RNTUPLE_PYFUZZ_TMP=$(mktemp -d "$([ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/rntuple-pyfuzz.XXXXXX")
export RNTUPLE_PYFUZZ_TMP
trap 'rm -rf "$RNTUPLE_PYFUZZ_TMP"' EXIT
set +e
python fuzz/python/fuzz_write_inputs.py "$corpus" fuzz/python/seeds fuzz/python/regressions \
    -max_total_time="$SECONDS_TOTAL" -rss_limit_mb=2048 -timeout=10 -max_len=4096 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log" 2>&1
rc=$?
set -e
execs=$(grep -aoE '^stat::number_of_executed_units: [0-9]+' "$log" | grep -aoE '[0-9]+$' || echo 0)
figures=$(grep -aoE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
echo "$target: $execs executions in ${SECONDS_TOTAL}s, ${figures:-no coverage figures}"
if [ "$rc" -ne 0 ]; then
    echo "FUZZ FINDING in $target (exit code $rc); full log: $log"
    grep -a -m1 -A3 -E '^(Bug|=== Uncaught|==[0-9]+== ERROR)' "$log" | sed 's/^/  /' || true
    sed -n 's/.*Test unit written to \(.*\)$/  failing input: \1/p' "$log"
    echo "  reproduce: python fuzz/python/fuzz_write_inputs.py <input>"
    exit 1
fi
