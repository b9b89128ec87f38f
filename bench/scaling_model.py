"""A start-up and run-time model of ``rntuple.dask`` on 1 to 30 nodes x 64 workers (docs/scaling.md).

    python bench/scaling_model.py --measure      # measure the three costs here, then model
    python bench/scaling_model.py                # model with the costs recorded in docs/scaling.md

Measured on this machine (small runs):

* ``meta_s``: client time per file to read its footer (open + clusters), with
  the thread pool ``rntuple.dask`` uses, divided by the number of files;
* ``task_s``: scheduler + worker overhead per task on a distributed
  ``LocalCluster`` (tasks that read one tiny partition each);
* ``byte_s``: worker time per byte of pages read and decoded (one thread).

Modelled (parameters below): a 100 TB dataset of 2 GB files read at 4.1% (the
AGC's share of NanoAOD), partitions of ``--partition`` bytes on storage (whole
clusters), storage that serves ``--storage-gbps`` in total and a latency per
metadata request for remote files. Start-up = footers (parallel on the client)
+ graph construction; run = max(work spread over the workers, the scheduler's
serial per-task cost, the storage bandwidth).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# Recorded on the 2-core CI-like machine (see docs/scaling.md); --measure replaces them.
RECORDED = {"meta_s": 0.62e-3, "task_s": 31.4e-3, "byte_s": 1 / 194e6, "graph_s": 0.058e-3}


def _write(path: Path, n: int, seed: int) -> None:
    import awkward as ak
    import rntuple

    rng = np.random.default_rng(seed)
    counts = rng.poisson(5, n)
    data = ak.Array(
        {"a": rng.normal(size=n), "b": ak.unflatten(rng.normal(size=int(counts.sum())).astype(np.float32), counts)}
    )
    with rntuple.recreate(path) as f:
        f["Events"] = data


def measure(workdir: Path) -> dict[str, float]:
    """The per-file metadata, per-task and per-byte costs, measured with small runs."""
    import awkward as ak
    import distributed
    import rntuple
    from rntuple.integrations import dask as rdask

    workdir.mkdir(parents=True, exist_ok=True)
    small = workdir / "small.root"
    _write(small, 1000, 1)
    files = []
    for i in range(300):
        p = workdir / f"s{i:04d}.root"
        if not p.exists():
            p.write_bytes(small.read_bytes())
        files.append(str(p))
    start = time.perf_counter()
    rntuple.dask(files)
    with_meta = time.perf_counter() - start
    start = time.perf_counter()
    rntuple.dask(files, open_files=False)
    graph_only = time.perf_counter() - start
    meta_s = max(with_meta - graph_only, 1e-6) / len(files)
    graph_s = graph_only / len(files)

    big = workdir / "big.root"
    _write(big, 2_000_000, 2)
    ntuple = rntuple.open(big)["Events"]
    ntuple.reset_io_stats()
    start = time.perf_counter()
    ntuple.arrays(threads=1)
    byte_s = (time.perf_counter() - start) / max(1, ntuple.io_stats()["bytes_read"])

    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        array = rntuple.dask(files)
        client.compute(ak.num(array.a, axis=0)).result()  # warm the workers
        client.run(rdask.reset_read_log)
        start = time.perf_counter()
        client.compute(array.a).result()
        elapsed = time.perf_counter() - start
    # two workers ran the tasks side by side: per-task cost as one worker would see it
    task_s = elapsed * 2 / len(files)
    return {"meta_s": meta_s, "task_s": task_s, "byte_s": byte_s, "graph_s": graph_s}


def startup(costs: dict[str, float], args: argparse.Namespace, files: int, tasks: int) -> dict[str, float]:
    """Client start-up seconds: footers (several ways) + graph construction."""
    graph = tasks * costs["graph_s"]
    remote = costs["meta_s"] + args.remote_latency_s * 2  # two requests per file
    return {
        f"remote, {args.client_threads} threads": files * remote / args.client_threads + graph,
        "remote, 256 threads": files * remote / 256 + graph,
        "footers cached": files * costs["meta_s"] / args.client_threads + graph,
        "steps given": graph,
        "uproot-like serial": files * (remote + 0.038),  # uproot.dask: 38 ms per local file here
    }


def model(costs: dict[str, float], args: argparse.Namespace) -> list[dict[str, Any]]:
    dataset = args.dataset_tb * 1e12
    files = int(dataset // (args.file_gb * 1e9))
    read_bytes = dataset * args.fraction
    rows = []
    for nodes in (1, 2, 4, 8, 16, 30):
        workers = nodes * args.workers_per_node
        for partition in (100e6, 1e9, args.file_gb * 1e9):
            # a partition is whole clusters of one file: at least one per file
            tasks = max(files, int(dataset / partition))
            work = read_bytes * costs["byte_s"] / workers + tasks * costs["task_s"] / workers
            scheduler = tasks * args.scheduler_task_s
            storage = read_bytes / (args.storage_gbps * 1e9)
            run = max(work, scheduler, storage)
            bound = "workers" if run == work else ("scheduler" if run == scheduler else "storage")
            start = startup(costs, args, files, tasks)[f"remote, {args.client_threads} threads"]
            rows.append(
                {
                    "nodes": nodes,
                    "workers": workers,
                    "partition_MB": partition / 1e6,
                    "tasks": tasks,
                    "startup_s": start,
                    "run_s": run,
                    "total_s": start + run,
                    "bound": bound,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true", help="measure the costs here first")
    parser.add_argument("--dataset-tb", type=float, default=100.0)
    parser.add_argument("--file-gb", type=float, default=2.0)
    parser.add_argument("--fraction", type=float, default=0.041, help="share of the bytes the analysis reads")
    parser.add_argument("--workers-per-node", type=int, default=64)
    parser.add_argument("--client-threads", type=int, default=16)
    parser.add_argument("--remote-latency-s", type=float, default=0.005, help="per metadata request (2 per file)")
    parser.add_argument("--scheduler-task-s", type=float, default=0.5e-3, help="serial scheduler cost per task")
    parser.add_argument("--storage-gbps", type=float, default=200.0, help="aggregate storage bandwidth, GB/s")
    args = parser.parse_args(argv)
    costs = dict(RECORDED)
    if args.measure:
        costs = measure(Path(os.environ.get("SCALING_DIR", tempfile.mkdtemp(prefix="scaling_"))))
    print(
        "costs: meta {:.2f} ms/file, graph {:.3f} ms/partition, task {:.2f} ms, read+decode {:.0f} MB/s/worker".format(
            costs["meta_s"] * 1e3, costs["graph_s"] * 1e3, costs["task_s"] * 1e3, 1e-6 / costs["byte_s"]
        )
    )
    files = int(args.dataset_tb * 1e12 // (args.file_gb * 1e9))
    print(f"dataset {args.dataset_tb:g} TB in {files} files of {args.file_gb:g} GB; start-up with one task per file:")
    for label, seconds in startup(costs, args, files, files).items():
        print(f"  {label:28s} {seconds:8.1f} s")
    print(f"{'nodes':>5} {'workers':>7} {'part MB':>7} {'tasks':>8} {'start s':>8} {'run s':>8} {'total s':>8}  bound")
    for r in model(costs, args):
        print(
            f"{r['nodes']:5d} {r['workers']:7d} {r['partition_MB']:7.0f} {r['tasks']:8d} "
            f"{r['startup_s']:8.1f} {r['run_s']:8.1f} {r['total_s']:8.1f}  {r['bound']}"
        )


if __name__ == "__main__":
    main()
