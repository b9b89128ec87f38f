"""The AGC ttbar analysis as a coffea processor: coffea on rntuple's reader against coffea on uproot.

    python bench/coffea_agc.py [--events 200000] [--dir /tmp/coffea_agc] [--repeat 3]

Writes one NanoAOD-like RNTuple with ``examples/agc/generate.py`` (``--events`` entries, clusters
of 50,000), then runs ``examples/agc/coffea_processor.py``'s processor over it with

* ``rntuple.integrations.coffea.NanoEventsFactory`` in virtual and in dask mode (sync
  scheduler), and
* coffea's own ``NanoEventsFactory`` (uproot) in virtual mode, and in dask mode where uproot
  5.7 can (its dask mode fails on RNTuple fields: ``'RField' object has no attribute
  'title'``; reported as such),

checking that the histograms agree. Figures: wall time (best of ``--repeat``, each run in a fresh
factory; the page cache is warm) and bytes read by the process (``rchar`` of ``/proc/self/io``,
what went through read(2)/pread(2): both readers read local files that way).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

AGC = Path(__file__).resolve().parents[1] / "examples" / "agc"


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"agc_{name}", AGC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rchar() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar")).split()[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--dir", default="/tmp/coffea_agc")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    generate, proc = _load("generate"), _load("coffea_processor")
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"agc_{args.events}.root"
    if not path.exists():
        generate.write_file(path, args.events, seed=11, cluster_entries=50_000)
    size = os.path.getsize(path)
    print(f"{args.events:,} events, {size / 2**20:.1f} MiB; load {os.getloadavg()[0]:.1f}")
    rows, reference = [], None
    for reader, mode in (("rntuple", "virtual"), ("uproot", "virtual"), ("rntuple", "dask"), ("uproot", "dask")):
        walls, read = [], 0
        try:
            for _ in range(args.repeat):
                before, t = _rchar(), time.perf_counter()
                h = proc.run(str(path), mode=mode, reader=reader)
                walls.append(time.perf_counter() - t)
                read = _rchar() - before
        except Exception as err:  # uproot's dask mode on RNTuple
            rows.append((reader, mode, None, None, f"fails: {type(err).__name__}: {str(err)[:80]}"))
            continue
        counts = {r: h[r].values() for r in h}
        if reference is None:
            reference = counts
        for r in counts:
            np.testing.assert_array_equal(counts[r], reference[r])
        rows.append((reader, mode, min(walls), read, ""))
    print(f"| reader | mode | wall (best of {args.repeat}) | bytes read | |")
    print("|---|---|---:|---:|---|")
    for reader, mode, wall, read, note in rows:
        w = "–" if wall is None else f"{wall:.2f} s"
        b = "–" if read is None else f"{read / 2**20:.1f} MiB ({read / size:.2f} of the file)"
        print(f"| {reader} | {mode} | {w} | {b} | {note} |")


if __name__ == "__main__":
    main()
