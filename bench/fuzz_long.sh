#!/usr/bin/env bash
# A long fuzz run: every target of fuzz/ (or FUZZ_TARGETS) for a share of a
# total time, one libFuzzer process at a time, on the corpus kept in the
# repository (fuzz/seeds, fuzz/regressions) grown in $RNTUPLE_CACHE/fuzz/corpus.
# Appends one line per target to the results file: executions, libFuzzer's
# final coverage figures (cov: edges, ft: features), corpus size, crashes.
#
#   bench/fuzz_long.sh TOTAL_SECONDS [RESULTS_FILE]
#
# Default results file: bench/results/fuzz_long.tsv. A crash leaves its input
# in $RNTUPLE_CACHE/fuzz/artifacts/<target>/ and is listed in the results;
# keep it in fuzz/regressions/<target>/ once fixed. Same toolchain choice as
# .ci/fuzz (nightly with AddressSanitizer if installed).
set -euo pipefail
cd "$(dirname "$0")/.."
TOTAL=${1:?usage: bench/fuzz_long.sh TOTAL_SECONDS [RESULTS_FILE]}
RESULTS=${2:-bench/results/fuzz_long.tsv}
export RNTUPLE_CACHE=${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}
FUZZ_DIR="$RNTUPLE_CACHE/fuzz"
export PATH="$RNTUPLE_CACHE/cargo-bin/bin:$PATH"
export CARGO_BUILD_JOBS=${FUZZ_JOBS:-1}
if [ "${FUZZ_TOOLCHAIN:-}" != stable ] && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    FUZZ=(cargo +nightly fuzz)
    SANITIZER=address
else
    export RUSTC_BOOTSTRAP=1
    FUZZ=(cargo fuzz)
    SANITIZER=none
fi
export CARGO_TARGET_DIR="$FUZZ_DIR/target-$SANITIZER"
# python_write_inputs: the atheris target of the Python write inputs (fuzz/python/README.md),
# run with the installed `rntuple` package; FUZZ_TARGETS=python_write_inputs runs only it.
TARGETS=${FUZZ_TARGETS:-$("${FUZZ[@]}" list --fuzz-dir fuzz) python_write_inputs}
n=$(wc -w <<<"$TARGETS")
per=$((TOTAL / n))
CARGO_TARGETS=$(tr ' ' '\n' <<<"$TARGETS" | grep -vx python_write_inputs | xargs || true)
# Build every target once, then run copies of the binaries: editing or
# rebuilding the tree meanwhile does not disturb the run.
[ -z "$CARGO_TARGETS" ] || "${FUZZ[@]}" build --fuzz-dir fuzz --sanitizer "$SANITIZER"
RUN_BIN="$FUZZ_DIR/long-run-bin"
mkdir -p "$RUN_BIN"
for target in $CARGO_TARGETS; do
    cp "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/$target" "$RUN_BIN/$target"
done
# The Python target writes its files here (libFuzzer exits without Python's clean-up).
RNTUPLE_PYFUZZ_TMP=$(mktemp -d "$([ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/rntuple-pyfuzz.XXXXXX")
export RNTUPLE_PYFUZZ_TMP
trap 'rm -rf "$RNTUPLE_PYFUZZ_TMP"' EXIT
mkdir -p "$(dirname "$RESULTS")"
if [ ! -s "$RESULTS" ]; then
    printf 'date\ttarget\tseconds\tsanitizer\texecutions\texec_per_s\tcov_edges\tfeatures\tcorpus_files\tpeak_rss_mb\tcrashes\n' >"$RESULTS"
fi
for target in $TARGETS; do
    corpus="$FUZZ_DIR/corpus/$target"
    artifacts="$FUZZ_DIR/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    seeds=("fuzz/seeds/$target")
    # Targets that read whole files start from the whole_file seeds.
    [ -d "${seeds[0]}" ] || seeds=(fuzz/seeds/whole_file)
    [ -d "fuzz/regressions/$target" ] && seeds+=("fuzz/regressions/$target")
    [ "$target" = whole_file ] && seeds+=(tests/data/bad)
    run=("$RUN_BIN/$target" -malloc_limit_mb=2048)
    sanitizer=$SANITIZER
    if [ "$target" = python_write_inputs ]; then
        run=(python fuzz/python/fuzz_write_inputs.py -max_len=4096)
        seeds=(fuzz/python/seeds fuzz/python/regressions)
        sanitizer=atheris
    fi
    log="$FUZZ_DIR/$target.long.log"
    before=$(find "$artifacts" -type f | wc -l)
    echo "--- $target for ${per}s"
    # One libFuzzer process at a time (fork mode costs 10x in executions);
    # after a crash (its input saved) it starts again for the time left.
    : >"$log"
    execs=0
    start=$(date +%s)
    while left=$((per - ($(date +%s) - start))) && [ "$left" -gt 2 ]; do
        set +e
        ASAN_OPTIONS=detect_odr_violation=0 "${run[@]}" "$corpus" "${seeds[@]}" \
            -max_total_time="$left" -rss_limit_mb=2048 -timeout=10 \
            -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log.part" 2>&1
        set -e
        cat "$log.part" >>"$log"
        n=$({ grep -aoE '^stat::number_of_executed_units: [0-9]+' "$log.part" || true; } | grep -aoE '[0-9]+$' || true)
        execs=$((execs + ${n:-0}))
    done
    last() { { grep -aoE "$1" "$log" || true; } | tail -1 | grep -aoE '[0-9]+' || echo 0; }
    cov=$(last 'cov: [0-9]+')
    ft=$(last 'ft: [0-9]+')
    rss=$({ grep -aoE 'rss: [0-9]+' "$log" || true; } | grep -aoE '[0-9]+' | sort -n | tail -1 || echo 0)
    files=$(find "$corpus" -type f | wc -l)
    crashes=$(($(find "$artifacts" -type f | wc -l) - before))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$per" "$sanitizer" \
        "$execs" "$((execs / (per > 0 ? per : 1)))" "$cov" "$ft" "$files" "${rss:-0}" "$crashes" | tee -a "$RESULTS"
done
