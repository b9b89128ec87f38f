#!/usr/bin/env bash
# The crash journal's cost in instructions: the same data (the
# `measure_journal_cost` test of crates/rntuple-tools/tests/recover.rs) written
# with the journal, without it, and not written at all (the input alone), each
# counted by valgrind (cachegrind without cache simulation: "I refs", every
# instruction the process executed). Unlike wall time, this does not move with
# the load of a shared machine. Writer cost = I(off) - I(none); journal cost =
# I(on) - I(off). System calls are not instructions of the process: the
# journal adds one write(2) per committed cluster, listed beside.
#
# usage: bench/journal_cost.sh [ENTRIES] [CLUSTER_BYTES...]
#   defaults: 200000 entries; clusters of 16384 and 1048576 bytes (about 40 and 1 commits)
set -euo pipefail
cd "$(dirname "$0")/.."
ENTRIES=${1:-200000}
shift || true
CLUSTERS=("$@")
[ ${#CLUSTERS[@]} -eq 0 ] && CLUSTERS=(16384 1048576)
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: apt-get install valgrind)" >&2; exit 2; }
BIN=$(cargo test --release -p rntuple-tools --test recover --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="recover": print(m["executable"])' | tail -1)
[ -x "$BIN" ] || { echo "could not build the recover test binary" >&2; exit 2; }
count() { # MODE CLUSTER -> instructions
    RNTUPLE_COST_ONLY=$1 RNTUPLE_COST_ENTRIES=$ENTRIES RNTUPLE_COST_CLUSTER=$2 \
        valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$BIN" measure_journal_cost --exact --test-threads=1 2>&1 >/dev/null \
        | sed -n 's/.*I *refs: *//p' | tr -d ,
}
echo "entries $ENTRIES"
printf '%-10s %16s %16s %16s %10s %10s\n' cluster input_only without_journal with_journal writer journal/writer
for c in "${CLUSTERS[@]}"; do
    none=$(count none "$c"); off=$(count off "$c"); on=$(count on "$c")
    python3 - "$c" "$none" "$off" "$on" <<'PY'
import sys
c, none, off, on = (int(x) for x in sys.argv[1:])
writer = off - none
print(f"{c:<10d} {none:16d} {off:16d} {on:16d} {writer:10.3e} {100 * (on - off) / writer:+9.3f}%")
PY
done
