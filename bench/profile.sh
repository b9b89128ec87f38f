#!/usr/bin/env bash
# CPU profiles of the read and write hot paths (issue 15), kept in docs/profiles/:
# for each case a `perf report` summary (<case>.txt: the symbols with the most samples, self time,
# and the share of each thread) and a flame graph (<case>.svg, inferno).
#
#     bash bench/profile.sh            # all cases, ~3 min on the 2-core machine
#
# Sampling is by `perf record -e cpu-clock` (software clock: the VM has no hardware counters),
# 999 Hz, with call graphs (frame pointers are not kept by release builds: `--call-graph dwarf`).
# Inputs are the benchmark's (bench/workloads.py, cached under $RNTUPLE_CACHE/bench), written
# and read by `rntuple-bench` as `bench/run.py` does. Not part of CI: the figures depend on the
# machine; docs/profiles/README.md says what was read from them.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}
OUT=$REPO/docs/profiles
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
PY=${PYTHON:-python3}
mkdir -p "$OUT" "$CACHE/bench/profile"
command -v perf >/dev/null || { echo "profile.sh: perf is not installed (Debian: linux-perf)" >&2; exit 2; }
if ! command -v inferno-flamegraph >/dev/null; then
  [ -x "$CACHE/cargo-bin/bin/inferno-flamegraph" ] || cargo install --quiet inferno --root "$CACHE/cargo-bin"
  export PATH=$CACHE/cargo-bin/bin:$PATH
fi
(cd "$REPO" && cargo build --quiet --release -p rntuple-bench)
B=$TARGET/release/rntuple-bench
input() {  # input <workload>: the directory of the benchmark's full-size input
  (cd "$REPO/bench" && "$PY" -c "import sys, workloads; print(workloads.generate(sys.argv[1], sys.argv[2], workloads.SIZES[sys.argv[2]]['full']))" "$CACHE/bench" "$1")
}
W=$CACHE/bench/profile
for wl in nanoaod aod run2012; do
  d=$(input $wl)
  # our default writer's bytes are ROOT 6.40's (zstd 5, default sizes): the file the readers read
  "$B" write --input "$d" --output "$W/$wl.root" --compression 505 --threads 1 >/dev/null
  eval "INPUT_$wl=\$d"
done

profile() {  # profile <name> <command...>
  local name=$1
  shift
  perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -o "$W/$name.perf" -- "$@" >/dev/null 2>&1
  {
    echo "# $name: $*" | sed "s#$W/#<cache>/#g; s#$CACHE/bench/inputs/#<inputs>/#g; s#$TARGET/release/##g"
    echo "# perf record -e cpu-clock -F 999 --call-graph dwarf; self time by thread, then by symbol"
    # (`head` closes the pipe early: the pipelines' status is not the report's)
    perf report -i "$W/$name.perf" --no-children --sort comm --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' | head -5 || true
    echo
    perf report -i "$W/$name.perf" --no-children --sort sym --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' | head -30 || true
  } >"$OUT/$name.txt"
  # perf script exits non-zero on some unwinding warnings; the stacks it printed are still good
  (perf script --no-inline -i "$W/$name.perf" 2>/dev/null || true) | inferno-collapse-perf >"$W/$name.folded"
  [ -s "$W/$name.folded" ] || { echo "profile.sh: no stacks for $name" >&2; exit 1; }
  inferno-flamegraph --title "$name" --minwidth 0.2 <"$W/$name.folded" >"$OUT/$name.svg"
  rm -f "$W/$name.folded"
  rm -f "$W/$name.perf"
  echo "profile.sh: $OUT/$name.txt, $name.svg"
}

profile write-nanoaod-1thread "$B" write --input "$INPUT_nanoaod" --output "$W/w.root" --compression 505 --threads 1
profile write-nanoaod-2threads "$B" write --input "$INPUT_nanoaod" --output "$W/w.root" --compression 505 --threads 2
profile write-run2012-1thread "$B" write --input "$INPUT_run2012" --output "$W/w.root" --compression 505 --threads 1
profile read-nanoaod-1thread "$B" read --file "$W/nanoaod.root" --threads 1
profile read-aod-1thread "$B" read --file "$W/aod.root" --threads 1
profile read-nanoaod-2threads "$B" read --file "$W/nanoaod.root" --threads 2
rm -f "$W/w.root"
