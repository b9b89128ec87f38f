#!/usr/bin/env bash
# Runs the atheris target fuzz/python/fuzz_write_inputs.py (the Python write
# inputs) for SECONDS of one core, one process at a time, with a 2 GiB RSS
# limit and 10 s per input. The growing corpus lives in
# $RNTUPLE_CACHE/fuzz/corpus/python_write_inputs, seeded from fuzz/python/seeds
# and fuzz/python/regressions; a failing input is saved under
# $RNTUPLE_CACHE/fuzz/artifacts/python_write_inputs/.
#
#   fuzz/python/run.sh SECONDS                 # smoke: stops at the first finding, exit 1
#   fuzz/python/run.sh SECONDS RESULTS_FILE    # long: restarts after a finding until the time
#                                              # is used, appends a line to RESULTS_FILE
#
# Prints the executions, atheris' final cov/ft figures and the findings. Needs
# the `rntuple` package and atheris (requirements-dev.txt) in the Python on PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
TOTAL=${1:?usage: fuzz/python/run.sh SECONDS [RESULTS_FILE]}
RESULTS=${2:-}
export RNTUPLE_CACHE=${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}
target=python_write_inputs
corpus="$RNTUPLE_CACHE/fuzz/corpus/$target"
artifacts="$RNTUPLE_CACHE/fuzz/artifacts/$target"
log="$RNTUPLE_CACHE/fuzz/$target.log"
mkdir -p "$corpus" "$artifacts"
# The harness writes its files here (tmpfs when there is one); libFuzzer exits without
# running Python's clean-up, so the directory is removed here.
RNTUPLE_PYFUZZ_TMP=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/rntuple-pyfuzz.XXXXXX")
export RNTUPLE_PYFUZZ_TMP
trap 'rm -rf "$RNTUPLE_PYFUZZ_TMP"' EXIT
seeds=(fuzz/python/seeds)
[ -d fuzz/python/regressions ] && seeds+=(fuzz/python/regressions)
before=$(find "$artifacts" -type f | wc -l)
: >"$log"
execs=0
start=$(date +%s)
status=0
while left=$((TOTAL - ($(date +%s) - start))) && [ "$left" -gt 2 ]; do
    set +e
    python fuzz/python/fuzz_write_inputs.py "$corpus" "${seeds[@]}" -max_total_time="$left" \
        -rss_limit_mb=2048 -timeout=10 -max_len=4096 -artifact_prefix="$artifacts/" -print_final_stats=1 \
        >"$log.part" 2>&1
    rc=$?
    set -e
    cat "$log.part" >>"$log"
    n=$({ grep -aoE '^stat::number_of_executed_units: [0-9]+' "$log.part" || true; } | grep -aoE '[0-9]+$' || true)
    execs=$((execs + ${n:-0}))
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "FUZZ FINDING in $target (exit code $rc); full log: $log"
        grep -a -m1 -A3 -E '^(Bug|=== Uncaught|==[0-9]+== ERROR)' "$log.part" | sed 's/^/  /' || true
        sed -n 's/.*Test unit written to \(.*\)$/  failing input: \1/p' "$log.part"
        echo "  reproduce: python fuzz/python/fuzz_write_inputs.py <input>"
        [ -n "$RESULTS" ] || break
    fi
done
last() { { grep -aoE "$1" "$log" || true; } | tail -1 | grep -aoE '[0-9]+' || echo 0; }
cov=$(last 'cov: [0-9]+')
ft=$(last 'ft: [0-9]+')
rss=$({ grep -aoE 'rss: [0-9]+' "$log" || true; } | grep -aoE '[0-9]+' | sort -n | tail -1 || echo 0)
files=$(find "$corpus" -type f | wc -l)
crashes=$(($(find "$artifacts" -type f | wc -l) - before))
echo "$target: $execs executions in ${TOTAL}s, cov: $cov ft: $ft, corpus $files files, peak rss ${rss:-0} MB, findings: $crashes"
if [ -n "$RESULTS" ]; then
    mkdir -p "$(dirname "$RESULTS")"
    if [ ! -s "$RESULTS" ]; then
        printf 'date\ttarget\tseconds\tsanitizer\texecutions\texec_per_s\tcov_edges\tfeatures\tcorpus_files\tpeak_rss_mb\tcrashes\n' >"$RESULTS"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$TOTAL" atheris \
        "$execs" "$((execs / (TOTAL > 0 ? TOTAL : 1)))" "$cov" "$ft" "$files" "${rss:-0}" "$crashes" >>"$RESULTS"
    exit 0
fi
exit "$status"
