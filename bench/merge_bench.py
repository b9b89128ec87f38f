#!/usr/bin/env python3
"""Benchmark: ``rntuple merge`` against ROOT 6.40's ``hadd`` on the same inputs.

Usage (with the venv that has ROOT and the ``rntuple`` package)::

    python bench/merge_bench.py [--files 6] [--entries 150000] [--runs 5] [--keep]

The inputs are NanoAOD-like RNTuples (event ids, a dozen scalars, jagged
Muon/Jet/Electron collections of records), written once with
``rntuple.recreate`` (zstd 505, ROOT's default) into
``$RNTUPLE_CACHE/bench-merge/`` and reused. Each tool merges all of them into
a new file, ``--runs`` times, alternating tools, with the inputs in the page
cache (one warm-up run each first); the table gives the median wall time,
the CPU time (user + system) and the peak RSS of that run (from ``wait4``),
and the ratio of hadd's median wall time to ours (> 1: we are faster).

Scenarios:

* fast path: the output keeps the inputs' compression, so both tools copy
  the compressed pages without decompressing them
  (``rntuple merge OUT IN...`` — the first input's setting — against
  ``hadd -ff OUT IN...``, which RNTuple merging turns into the same fast path);
* recompress: the output is LZ4 (``--compression 404`` against ``hadd -f404``),
  every page is decompressed and compressed again.

``rntuple`` is the Rust binary (``cargo build --release -p rntuple-cli``,
built if missing); the pip-installed console script does the same work after
starting Python (its row shows that overhead). Both outputs are checked: same
number of entries, ``rntuple verify`` passes, and the first entries dump equal.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(HERE)
CACHE = os.environ.get("RNTUPLE_CACHE", os.path.expanduser("~/.cache/rntuple-ci"))


def find_hadd() -> str:
    exe = shutil.which("hadd")
    if exe:
        return exe
    # The PyPI ROOT package ships hadd inside the package, not on PATH.
    import importlib.util

    spec = importlib.util.find_spec("ROOT")
    if spec and spec.origin:
        cand = os.path.join(os.path.dirname(spec.origin), "bin", "hadd")
        if os.access(cand, os.X_OK):
            return cand
    sys.exit("hadd not found: install ROOT (pip install root) or put hadd on PATH")


def find_rntuple_binary(build: bool) -> str:
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT_DIR, "target"))
    exe = os.path.join(target, "release", "rntuple")
    if build or not os.access(exe, os.X_OK):
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "rntuple-cli"], cwd=ROOT_DIR, check=True)
    return exe


def make_inputs(n_files: int, entries: int) -> list[str]:
    import awkward as ak
    import numpy as np
    import rntuple

    d = os.path.join(CACHE, "bench-merge", f"v1-{entries}")
    os.makedirs(d, exist_ok=True)
    paths = []
    for k in range(n_files):
        path = os.path.join(d, f"nano{k}.root")
        paths.append(path)
        if os.path.exists(path):
            continue
        rng = np.random.default_rng(1000 + k)
        n = entries

        def jagged(mean, members, rng=rng, n=n):
            counts = rng.poisson(mean, n)
            total = int(counts.sum())
            rec = {}
            for name, kind in members.items():
                if kind == "f":
                    rec[name] = rng.exponential(30.0, total).astype(np.float32)
                elif kind == "a":
                    rec[name] = rng.uniform(-3.1416, 3.1416, total).astype(np.float32)
                else:
                    rec[name] = rng.integers(-1, 2, total).astype(np.int32)
            return ak.unflatten(ak.zip(rec), counts)

        ev = {
            "run": np.full(n, 1 + k, dtype=np.int32),
            "luminosityBlock": (np.arange(n) // 1000).astype(np.int32),
            "event": np.arange(k * n, (k + 1) * n, dtype=np.uint64),
            "nPV": rng.poisson(20, n).astype(np.int32),
        }
        for j in range(12):
            ev[f"scalar{j}"] = rng.normal(0, 1 + j, n).astype(np.float32)
        ev["Muon"] = jagged(1.5, {"pt": "f", "eta": "a", "phi": "a", "mass": "f", "charge": "i", "iso": "f"})
        ev["Jet"] = jagged(5.0, {"pt": "f", "eta": "a", "phi": "a", "mass": "f", "btag": "f", "area": "f"})
        ev["Electron"] = jagged(1.0, {"pt": "f", "eta": "a", "phi": "a", "charge": "i", "id": "i"})
        tmp = path + ".writing"
        with rntuple.recreate(tmp, compression=505) as f:
            f["Events"] = ak.Array(ev)
        os.replace(tmp, path)
    return paths


def timed(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one run.

    CPU and RSS come from GNU time when it is installed: a child forked from
    this Python process would otherwise report Python's own pages as its peak.
    """
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        full = [gnu_time, "-f", "%U %S %M", "-o", report.name, *cmd] if gnu_time else cmd
        start = time.perf_counter()
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed ({status}): {' '.join(cmd)}\n{err}")
        if gnu_time:
            user, system, rss_kb = report.read().split()[-3:]
            return wall, float(user) + float(system), int(rss_kb) / 1024.0
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def num_entries(rntuple_exe: str, path: str) -> int:
    out = subprocess.run([rntuple_exe, "inspect", path, "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["rntuples"][0]["num_entries"]


def head_dump(rntuple_exe: str, path: str) -> str:
    return subprocess.run(
        [rntuple_exe, "dump", f"{path}:Events", "--entries", "0:200"], capture_output=True, text=True, check=True
    ).stdout


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=6)
    p.add_argument("--entries", type=int, default=150_000, help="entries per input file")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--build", action="store_true", help="rebuild the rntuple binary first")
    p.add_argument("--keep", action="store_true", help="keep the merged files (printed)")
    args = p.parse_args()

    hadd = find_hadd()
    ours = find_rntuple_binary(args.build)
    script = shutil.which("rntuple")
    inputs = make_inputs(args.files, args.entries)
    in_bytes = sum(os.path.getsize(f) for f in inputs)
    expected = args.files * args.entries
    work = tempfile.mkdtemp(prefix="merge-bench-", dir=os.path.join(CACHE, "bench-merge"))

    scenarios = {
        "fast path (zstd 505 kept)": {
            "rntuple": lambda out: [ours, "merge", "-q", out, *inputs],
            "rntuple (pip console script)": (lambda out: [script, "merge", "-q", out, *inputs]) if script else None,
            "hadd": lambda out: [hadd, "-ff", out, *inputs],
        },
        "recompress to lz4 (404)": {
            "rntuple": lambda out: [ours, "merge", "-q", out, *inputs, "--compression", "404"],
            "hadd": lambda out: [hadd, "-f404", out, *inputs],
        },
    }
    rows = []
    for scenario, tools in scenarios.items():
        tools = {k: v for k, v in tools.items() if v is not None}
        results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in tools}
        outputs = {}
        for run in range(args.runs + 1):  # run 0 warms the page cache and is not counted
            order = list(tools) if run % 2 == 0 else list(reversed(tools))
            for tool in order:
                out = os.path.join(work, f"t{list(tools).index(tool)}-{len(rows)}-{run}.root")
                if os.path.exists(out):
                    os.remove(out)
                r = timed(tools[tool](out))
                if run > 0:
                    results[tool].append(r)
                if run < args.runs:
                    os.remove(out)
                else:
                    outputs[tool] = out
        for out in outputs.values():
            assert num_entries(ours, out) == expected, out
            subprocess.run([ours, "verify", "-q", out], check=True)
        heads = {tool: head_dump(ours, out) for tool, out in outputs.items()}
        assert len(set(heads.values())) == 1, "merged files differ"
        hadd_wall = statistics.median(w for w, _, _ in results["hadd"])
        for tool, rs in results.items():
            wall = statistics.median(w for w, _, _ in rs)
            median_run = sorted(rs)[len(rs) // 2]
            rows.append(
                (
                    scenario,
                    tool,
                    wall,
                    median_run[1],
                    median_run[2],
                    hadd_wall / wall,
                    os.path.getsize(outputs[tool]),
                    " ".join(os.path.basename(a) if os.sep in a else a for a in tools[tool]("OUT")[:4]) + " ...",
                )
            )
        if not args.keep:
            for out in outputs.values():
                os.remove(out)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)

    print(
        f"Inputs: {args.files} files x {args.entries:,} entries "
        f"({in_bytes / 1e6:.1f} MB, zstd 505), {args.runs} runs per tool, median; "
        f"{os.cpu_count()} cores; hadd = {hadd}"
    )
    print()
    print("| scenario | tool | command | wall (s) | CPU (s) | peak RSS (MB) | output (MB) | hadd wall / wall |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for scenario, tool, wall, cpu, rss, ratio, size, cmd in rows:
        print(
            f"| {scenario} | {tool} | `{cmd}` | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {size / 1e6:.1f} | {ratio:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
