#!/usr/bin/env python3
"""Write time of two ``rntuple-bench`` binaries on the same inputs, in turns.

    python bench/write_time.py --base BIN --new BIN [--runs 7] [--workloads nanoaod,aod,run2012]
                               [--new-args "--page-buffer-memory 268435456"]

For issue 23's target "write time within 5 % of the streaming writer": BIN are ``rntuple-bench``
binaries (``cargo build --release -p rntuple-bench``) of two commits, or one binary with other
options (``--base-args`` / ``--new-args``). Each run writes every workload with base, then new
(1 thread, the workload's ROOT codec), so that the machine's load falls on both alike. The figure is
the CPU time of the timed write (the binary's ``cpu``: loading the input is not timed). On a shared
machine other processes only ever add time, so the report gives the minimum of the runs beside the
median, and the ratios new/base of both.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run  # noqa: E402
import workloads  # noqa: E402


def main() -> int:
    def more(p):
        p.add_argument("--base-args", default="")
        p.add_argument("--new-args", default="")

    a, bench = run.two_builds(__doc__, 7, "nanoaod,aod,run2012", more)
    cpu: dict[str, dict[str, list[float]]] = {}
    for name in a.workloads.split(","):
        w = bench.prepare(name, workloads.SIZES[name]["full"])
        common = run.write_args(w, name)
        cmds = {
            "base": [a.base, "write", *common, *shlex.split(a.base_args)],
            "new": [a.new, "write", *common, *shlex.split(a.new_args)],
        }
        for i in range(a.runs):
            for comp, cmd in cmds.items():
                out = os.path.join(a.scratch, f"write-time-{name}-{comp}.root")
                r = run.run_child([*cmd, "--output", out])
                cpu.setdefault(name, {}).setdefault(comp, []).append(r["cpu"])
                print(json.dumps({"workload": name, "writer": comp, "run": i, "cpu": r["cpu"], "wall": r["wall"]}))
        for comp in cmds:
            os.remove(os.path.join(a.scratch, f"write-time-{name}-{comp}.root"))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    heads = ("base min", "new min", "new/base", "base med", "new med", "new/base")
    print(f"{'workload':10} " + " ".join(f"{h:>9}" for h in heads))
    for name, c in cpu.items():
        bmin, nmin = min(c["base"]), min(c["new"])
        bmed, nmed = statistics.median(c["base"]), statistics.median(c["new"])
        print(f"{name:10} {bmin:8.3f}s {nmin:8.3f}s {nmin / bmin:8.3f}x {bmed:8.3f}s {nmed:8.3f}s {nmed / bmed:8.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
