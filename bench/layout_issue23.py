#!/usr/bin/env python3
"""Issue 23: the default writer (pages spilled to a scratch file, copied at the commit in ROOT's
column-grouped layout) against the streaming writer before it and ROOT 6.40's RNTupleWriter.

    python bench/layout_issue23.py --base BIN --new BIN [--runs 3] [--workloads nanoaod,aod,cmsaod]

BIN: ``rntuple-bench`` binaries (``cargo build --release -p rntuple-bench``) of the two commits.
Inputs and ROOT's writer programs come from ``bench/run.py``'s cache (built when missing). Per
workload and run, ROOT, base and new write in turn (ROOT's codec of the workload: zstd 5, cmsaod
LZMA 4; 1 thread) under the heap counter; then the three files are read with ``--new``'s reader for
the workload's 3-field selection (``workloads.SELECT3``), whose I/O statistics give the ranges
(requests) a sparse read needs. Prints one JSON line per write and read, and the medians.
"""

from __future__ import annotations

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import heapcount  # noqa: E402
import run  # noqa: E402
import workloads  # noqa: E402


def main() -> int:
    a, bench = run.two_builds(__doc__, 3, "nanoaod,aod,cmsaod")
    heaplib = heapcount.build(run.cache_root(), bench.log)
    summary = {}
    for name in a.workloads.split(","):
        entries = workloads.SIZES[name]["full"]
        w = bench.prepare(name, entries)
        common = run.write_args(w, name)
        cmds = {
            "root": [w["exe"], "write-rntuple", *common, "--entries", str(entries)],
            "base": [a.base, "write", *common],
            "new": [a.new, "write", *common],
        }
        for i in range(a.runs):
            for comp, cmd in cmds.items():
                out = os.path.join(a.scratch, f"issue23-{name}-{comp}.root")
                heap = os.path.join(a.scratch, f"issue23-heap-{name}-{comp}-{i}.jsonl")
                r = run.run_child([*cmd, "--output", out], heap=(heaplib, heap))
                r["rss_above"] = r["peak_rss"] - r["rss_after_load"]
                r["file_size"] = os.path.getsize(out)
                row = {k: r.get(k) for k in ("wall", "cpu", "rss_above", "heap_above_input", "file_size")}
                summary.setdefault(name, {}).setdefault(comp, []).append(row)
                print(json.dumps({"workload": name, "writer": comp, "run": i, **row}), flush=True)
        for comp in cmds:
            out = os.path.join(a.scratch, f"issue23-{name}-{comp}.root")
            fields = ",".join(workloads.SELECT3[name])
            r = run.run_child(
                [
                    a.new,
                    "read",
                    "--file",
                    out,
                    "--name",
                    "Events",
                    "--fields",
                    fields,
                    "--start",
                    "0",
                    "--stop",
                    str(entries),
                    "--threads",
                    "1",
                ]
            )
            print(json.dumps({"workload": name, "writer": comp, "read3": r["io"]}), flush=True)
    for name, comps in summary.items():
        med = {c: {k: statistics.median(x[k] for x in rows) for k in rows[0]} for c, rows in comps.items()}
        print(json.dumps({"workload": name, "medians": med}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
