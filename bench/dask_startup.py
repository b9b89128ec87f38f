"""Graph construction time of ``rntuple.dask`` vs ``uproot.dask`` over many small local files.

    python bench/dask_startup.py [--files 1000] [--dir /tmp/dask_startup]

Writes one small NanoAOD-like file (examples/agc/generate.py, two clusters)
and copies it ``--files`` times, then times, in the same run, building the
dask-awkward array (no computing) with

* ``rntuple.dask(files)``: every footer read on a thread pool (cluster boundaries),
* ``rntuple.dask(files, open_files=False)``: only the first file read,
* ``uproot.dask(files)`` (``open_files=True``, its default) and
  ``uproot.dask(files, open_files=False)``,

each the best of ``--repeat`` runs, and prints the ratios.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rntuple

_GENERATE = Path(__file__).resolve().parents[1] / "examples" / "agc" / "generate.py"


def _generate_module() -> Any:
    spec = importlib.util.spec_from_file_location("agc_generate", _GENERATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(directory: Path, n: int) -> list[str]:
    directory.mkdir(parents=True, exist_ok=True)
    template = directory / "template.root"
    if not template.exists():
        _generate_module().write_file(template, 2000, seed=7, cluster_entries=1000)
    paths = []
    for i in range(n):
        path = directory / f"f{i:05d}.root"
        if not path.exists():
            shutil.copyfile(template, path)
        paths.append(str(path))
    return paths


def _best(build: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = build()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--dir", default="/tmp/rntuple_dask_startup")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import uproot

    files = _files(Path(args.dir), args.files)
    by_name = {f: "Events" for f in files}
    runs = {
        "rntuple.dask": lambda: rntuple.dask(files),
        "rntuple.dask open_files=False": lambda: rntuple.dask(files, open_files=False),
        "uproot.dask": lambda: uproot.dask(by_name),
        "uproot.dask open_files=False": lambda: uproot.dask(by_name, open_files=False),
    }
    times = {}
    for label, build in runs.items():
        seconds, array = _best(build, args.repeat)
        times[label] = seconds
        print(f"{label:32s} {seconds * 1e3:9.1f} ms  {array.npartitions:5d} partitions")
    print(f"files: {len(files)}")
    print(f"uproot.dask / rntuple.dask (both opening files): {times['uproot.dask'] / times['rntuple.dask']:.1f}x")
    ratio = times["uproot.dask open_files=False"] / times["rntuple.dask open_files=False"]
    print(f"uproot.dask / rntuple.dask (open_files=False): {ratio:.1f}x")


if __name__ == "__main__":
    main()
