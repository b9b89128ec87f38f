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

    python bench/dask_startup.py --phases [--files 40] [--events 50000]

splits the time of one computation (the scalar sum of the jets' pT above 30 GeV, which reads
``Jet_pt`` only) run with ``rntuple.dask`` against the same computation run eagerly with
``rntuple.iterate``, into the phases where the difference can come from: building the graph,
building the expression (dask-awkward computes each step's form on type tracers), optimising
(the column projection traces the whole graph once more), the tasks themselves (``sync``
scheduler: no threads, no serialisation), the threaded scheduler, and a ``LocalCluster`` of 2
worker processes x 1 thread (with the sum of its tasks' durations from the task stream) and of
one in-process worker x 2 threads. Each figure is the best of ``--repeat`` runs. ``--agc`` runs
the AGC example's ``observables`` (examples/agc/analysis.py: 15 columns, jets, leptons, b-tags,
trijet masses) instead.
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


def _work(events: Any) -> Any:
    """The computation of ``--phases``: works on awkward and dask-awkward arrays alike."""
    import awkward as ak

    jets = events.Jet_pt
    return ak.sum(jets[jets > 30], axis=None)


def _agc() -> Any:
    """examples/agc/analysis.py as a module (its ``observables`` and ``COLUMNS``)."""
    spec = importlib.util.spec_from_file_location("agc_analysis", _GENERATE.parent / "analysis.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def phases(files: list[str], repeat: int, agc: bool = False) -> dict[str, float]:
    """Seconds per phase of the same computation through rntuple.dask and eagerly (with
    ``agc``: the AGC example's observables over its columns instead of the jets' pT sum)."""
    import dask
    from distributed import Client, LocalCluster, get_task_stream

    work, columns = _work, ["Jet_pt"]
    if agc:
        analysis = _agc()
        work, columns = analysis.observables, analysis.COLUMNS

    def eager(threads: int | None) -> Any:
        out = [work(b) for b in rntuple.iterate(files, filter_name=columns, step_size="1 GB", threads=threads)]
        return out if agc else sum(float(x) for x in out)

    out: dict[str, float] = {}
    out["eager: rntuple.iterate, one batch per file"], want = _best(lambda: eager(None), repeat)
    out["eager: the same, decoding on 1 thread (as a task)"], _ = _best(lambda: eager(1), repeat)
    out["dask: build the graph (rntuple.dask)"], array = _best(
        lambda: rntuple.dask(files, filter_name=columns, step_size="1 GB"), repeat
    )
    out["dask: build the expression (typetracer forms)"], total = _best(lambda: work(array), repeat)
    out["dask: optimise (column projection)"], _ = _best(lambda: dask.optimize(total), repeat)
    out["dask: compute, sync scheduler (incl. optimise)"], got = _best(
        lambda: dask.compute(total, scheduler="sync")[0], repeat
    )
    out["dask: compute, threads scheduler (incl. optimise)"], _ = _best(
        lambda: dask.compute(total, scheduler="threads")[0], repeat
    )
    if not agc:  # (the AGC histograms are compared in tests/python/test_agc.py)
        assert abs(float(got) - want) <= 1e-4 * abs(want), (got, want)  # float32 sums, other order
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        client.gather(client.compute(total))  # warm the workers (imports)
        best, busy = float("inf"), 0.0
        for _ in range(repeat):
            start = time.perf_counter()
            with get_task_stream(client) as ts:
                client.gather(client.compute(total))
            wall = time.perf_counter() - start
            if wall < best:
                best = wall
                busy = sum(s["stop"] - s["start"] for t in ts.data for s in t["startstops"] if s["action"] == "compute")
        out["dask: LocalCluster 2x1, compute (incl. optimise)"] = best
        out["dask: LocalCluster 2x1, sum of task compute times"] = busy
    with (
        LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        out["dask: LocalCluster 1 in-process worker x 2 threads"], _ = _best(
            lambda: client.gather(client.compute(total)), repeat
        )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--dir", default="/tmp/rntuple_dask_startup")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--phases", action="store_true", help="split a computation's time into phases")
    parser.add_argument("--events", type=int, default=50_000, help="events per file with --phases")
    parser.add_argument("--agc", action="store_true", help="with --phases: the AGC example's observables")
    args = parser.parse_args(argv)

    if args.phases:
        directory = Path(args.dir) / f"phases-{args.events}"
        directory.mkdir(parents=True, exist_ok=True)
        files = []
        for i in range(args.files):
            path = directory / f"f{i:04d}.root"
            if not path.exists():
                _generate_module().write_file(path, args.events, seed=i, cluster_entries=args.events // 5)
            files.append(str(path))
        mb = sum(Path(f).stat().st_size for f in files) / 1e6
        print(f"{len(files)} files, {args.events:,} events each, {mb:.0f} MB; best of {args.repeat}")
        for label, seconds in phases(files, args.repeat, args.agc).items():
            print(f"{label:52s} {seconds:8.3f} s")
        return

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
