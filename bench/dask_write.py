"""The AGC-like skim written from a LocalCluster: ``rntuple.dask_write`` vs ``uproot.dask_write``.

    python bench/dask_write.py [--files 8] [--events 25000] [--repeat 2] [--dir /tmp/rntuple_dask_write]

Generates the AGC example's files (examples/agc/generate.py, clusters of 5,000 events), starts a
``LocalCluster`` of 2 worker processes x 1 thread and, in the same run, computes the skim of
``examples/agc/skim.py`` (the AGC preselection, the 15 columns the analysis reads; the input read
with ``rntuple.dask`` and its column projection) and writes it

* with ``rntuple.dask_write`` (RNTuple; its default zstd level 5, and zlib level 1 = uproot's
  default), also merged into one file (``merge=``);
* with ``uproot.dask_write`` (TTree, its only format; zlib level 1 = its default, and zstd 5),

each the best of ``--repeat`` runs into a fresh directory (after one untimed run of each library),
and prints wall time, files, bytes written and entries. Every output is read back once to check the entry count.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rntuple

_AGC = Path(__file__).resolve().parents[1] / "examples" / "agc"


def _module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"agc_{name}", _AGC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(directory: Path, files: int, events: int) -> list[str]:
    directory = directory / f"in-{files}x{events}"
    done = directory / ".done"
    if not done.exists():
        _module("generate").generate(directory, files, events, 5000, real=False)
        done.touch()
    return sorted(glob.glob(str(directory / "ttbar_*.root")))


def _size(paths: list[str]) -> int:
    return sum(os.path.getsize(p) for p in paths)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--events", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dir", default="/tmp/rntuple_dask_write")
    args = parser.parse_args(argv)

    import uproot
    from distributed import Client, LocalCluster

    skim_module = _module("skim")
    base = Path(args.dir)
    files = _inputs(base, args.files, args.events)
    print(f"{len(files)} files, {args.events:,} events each, {_size(files) / 1e6:.1f} MB; best of {args.repeat}")

    def skim() -> Any:
        return skim_module.preselect(rntuple.dask(files, step_size="100 MB"))

    def ours(**options: Any) -> Callable[[Path], list[str]]:
        merged = options.pop("merge", None)

        def run(out: Path) -> list[str]:
            result = rntuple.dask_write(skim(), out, merge=None if merged is None else out / merged, **options)
            return [*result.paths, *([result.merged] if result.merged else [])]

        return run

    def theirs(**options: Any) -> Callable[[Path], list[str]]:
        def run(out: Path) -> list[str]:
            uproot.dask_write(skim(), str(out), prefix="part", tree_name="Events", **options)
            return sorted(glob.glob(str(out / "*.root")))

        return run

    runs: dict[str, Callable[[Path], list[str]]] = {
        "rntuple.dask_write (zstd 5, default)": ours(),
        "rntuple.dask_write (zlib 1)": ours(compression=101),
        "rntuple.dask_write (zstd 5) + merge": ours(merge="merged.root"),
        "uproot.dask_write TTree (zlib 1, default)": theirs(),
        "uproot.dask_write TTree (zstd 5)": theirs(compression="zstd", compression_level=5),
    }
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: __import__("rntuple.integrations.dask_write") and __import__("uproot") and None)
        for warm in (ours(), theirs()):  # one untimed run of each: first-use costs in client and workers
            shutil.rmtree(base / "out" / "warm", ignore_errors=True)
            warm(base / "out" / "warm")
        for label, run in runs.items():
            best, outputs = float("inf"), []
            for attempt in range(args.repeat):
                out = base / "out" / f"{label.split()[0]}-{abs(hash(label))}-{attempt}"
                shutil.rmtree(out, ignore_errors=True)
                start = time.perf_counter()
                paths = run(out)
                wall = time.perf_counter() - start
                if wall < best:
                    best, outputs = wall, paths
            parts = [p for p in outputs if "merged" not in os.path.basename(p)]
            merged = [p for p in outputs if "merged" in os.path.basename(p)]
            if label.startswith("uproot"):
                entries = sum(uproot.open(p)["Events"].num_entries for p in parts)
            else:
                entries = sum(rntuple.open(p)["Events"].num_entries for p in parts)
            line = f"{label:44s} {best:7.2f} s  {len(parts):3d} files {_size(parts) / 1e6:8.2f} MB"
            line += f"  {entries:8d} entries"
            if merged:
                line += f"  + merged {_size(merged) / 1e6:.2f} MB"
            print(line)


if __name__ == "__main__":
    main()
