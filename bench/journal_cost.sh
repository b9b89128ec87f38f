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
#   defaults: 200000 entries; clusters of 16384 and 1048576 bytes (about 30 and 1 commits);
#   REPS=3 runs of each mode (median)
set -euo pipefail
cd "$(dirname "$0")/.."
ENTRIES=${1:-200000}
REPS=${REPS:-3}
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
once() { # MODE CLUSTER -> instructions of one run
    RNTUPLE_COST_ONLY=$1 RNTUPLE_COST_ENTRIES=$ENTRIES RNTUPLE_COST_CLUSTER=$2 \
        valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$BIN" measure_journal_cost --exact --test-threads=1 2>&1 >/dev/null \
        | sed -n 's/.*I *refs: *//p' | tr -d ,
}
count() { # MODE CLUSTER -> "min,median,max" over REPS runs (threads make the count vary a little)
    local runs=()
    for _ in $(seq "$REPS"); do runs+=("$(once "$1" "$2")"); done
    printf '%s\n' "${runs[@]}" | sort -n | python3 -c 'import sys; v=[int(x) for x in sys.stdin]; print(f"{v[0]},{v[len(v)//2]},{v[-1]}")'
}
echo "entries $ENTRIES, median of $REPS runs each (spread: max - min of the runs of one mode)"
printf '%-8s %13s %13s %13s %11s %12s %12s\n' cluster input_only without with writer journal/writer spread/writer
for c in "${CLUSTERS[@]}"; do
    none=$(count none "$c"); off=$(count off "$c"); on=$(count on "$c")
    python3 - "$c" "$none" "$off" "$on" <<'PY'
import sys
c = int(sys.argv[1])
none, off, on = ([int(x) for x in a.split(",")] for a in sys.argv[2:])
writer = off[1] - none[1]
spread = max(off[2] - off[0], on[2] - on[0])
print(f"{c:<8d} {none[1]:13d} {off[1]:13d} {on[1]:13d} {writer:11.4e} {100 * (on[1] - off[1]) / writer:+11.3f}% {100 * spread / writer:11.3f}%")
PY
done
# The system calls the journal adds (strace -c, if installed): calls and kernel seconds of write(2).
if command -v strace >/dev/null; then
    echo "write(2) calls / seconds in the kernel, clusters of ${CLUSTERS[0]} bytes (strace -c):"
    for m in off on; do
        RNTUPLE_COST_ONLY=$m RNTUPLE_COST_ENTRIES=$ENTRIES RNTUPLE_COST_CLUSTER=${CLUSTERS[0]} \
            strace -f -c -e trace=write,pwrite64,writev,fsync -o "/tmp/journal_cost_strace_$m.txt" \
            "$BIN" measure_journal_cost --exact --test-threads=1 >/dev/null 2>&1
        awk -v m="$m" '$NF=="write" {print "  journal " m ": " $4 " calls, " $2 " s"}' "/tmp/journal_cost_strace_$m.txt"
        rm -f "/tmp/journal_cost_strace_$m.txt"
    done
fi
