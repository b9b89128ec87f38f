"""``rntuple study knobs FILE[:NAME]``: rewrite a user's RNTuple under a sweep of writer settings.

The sweep: compression algorithm × level against the target cluster size
(Bockelman's grid), and from ROOT's defaults one knob at a time: a small and
a large maximum page size, unsplit encodings, memory budgets, and ATLAS's
combination for sparse reads (unsplit with small clusters). Each setting is
written by a fresh child process (file size, write time, peak RSS) and read
by another (full read cold and warm, and 1% of the entries at random, cold).
"""

from __future__ import annotations

import os
import statistics
from typing import Any

from .._errors import InvalidArgumentError, MissingFileError, NotFoundError
from ._measure import machine, run_child

__all__ = ["METRICS", "pareto_front", "recommend", "run", "settings"]

# Every measure the sweep minimises, by the --optimize name that favours it.
METRICS = {
    "size": "file_size",
    "read": "read_seconds",
    "sparse": "sparse_seconds",
    "write": "write_seconds",
    "memory": "write_peak_rss",
}
DEFAULT = {"compression": "zstd:5", "approx_zipped_cluster_size": "128 MiB", "max_unzipped_page_size": "1 MiB"}


def settings(quick: bool = False) -> list[dict[str, Any]]:
    """The writer settings of the sweep, each with a short ``label``. ``quick``: ROOT's defaults,
    LZ4 with small clusters, ATLAS's unsplit small clusters and a small memory budget."""
    if quick:
        return [
            {**DEFAULT, "label": "zstd:5 cluster 128 MiB"},
            {**DEFAULT, "label": "lz4 cluster 1 MiB", "compression": "lz4", "approx_zipped_cluster_size": "1 MiB"},
            {
                **DEFAULT,
                "label": "unsplit cluster 1 MiB (ATLAS)",
                "unsplit": True,
                "approx_zipped_cluster_size": "1 MiB",
            },
            {**DEFAULT, "label": "memory budget 8 MiB", "memory_budget": "8 MiB"},
            {**DEFAULT, "label": "streamer fields", "streamer": True},
            {
                **DEFAULT,
                "label": "streamer fields cluster 1 MiB (ATLAS no-split)",
                "streamer": True,
                "approx_zipped_cluster_size": "1 MiB",
            },
        ]
    out = []
    for algo in ("none", "lz4", "zstd:1", "zstd:5", "zstd:9", "zlib:1", "lzma:7"):
        for cluster in ("1 MiB", "16 MiB", "128 MiB"):
            out.append(
                {
                    **DEFAULT,
                    "label": f"{algo} cluster {cluster}",
                    "compression": algo,
                    "approx_zipped_cluster_size": cluster,
                }
            )
    changes: tuple[tuple[str, dict[str, Any]], ...] = (
        ("page 64 KiB", {"max_unzipped_page_size": "64 KiB"}),
        ("page 8 MiB", {"max_unzipped_page_size": "8 MiB"}),
        ("unsplit", {"unsplit": True}),
        ("memory budget 64 MiB", {"memory_budget": "64 MiB"}),
        ("memory budget 8 MiB", {"memory_budget": "8 MiB"}),
        ("unsplit cluster 1 MiB (ATLAS)", {"unsplit": True, "approx_zipped_cluster_size": "1 MiB"}),
        ("streamer fields", {"streamer": True}),
        (
            "streamer fields cluster 1 MiB (ATLAS no-split)",
            {"streamer": True, "approx_zipped_cluster_size": "1 MiB"},
        ),
    )
    for label, change in changes:
        out.append({**DEFAULT, "label": label, **change})
    return out


def _split_fields(path: str, name: str) -> list[str]:
    """Paths (``hits._0.channel``) of the fields with split-encoded columns, for ``unsplit``."""
    import rntuple

    with rntuple.open(path) as f:
        tree = f[name].field_tree()
    out: list[str] = []

    def walk(fields: list[dict[str, Any]], prefix: str) -> None:
        for fd in fields:
            here = prefix + fd["name"]
            if any(col[1].startswith("Split") for rep in fd["columns"] for col in rep):
                out.append(here)
            walk(fd["children"], here + ".")

    walk(tree, "")
    return out


def pareto_front(cells: list[dict[str, Any]], metrics: list[str] | None = None) -> list[int]:
    """Indices of the cells no other cell beats: another cell dominates one when it is at least as
    good in every metric (smaller) and better in one."""
    keys = metrics or list(METRICS.values())
    front = []
    for i, a in enumerate(cells):
        dominated = any(
            all(b[k] <= a[k] for k in keys) and any(b[k] < a[k] for k in keys) for j, b in enumerate(cells) if j != i
        )
        if not dominated:
            front.append(i)
    return front


def recommend(cells: list[dict[str, Any]], optimize: str, tolerance: float = 0.05) -> int:
    """The index of the cell to recommend for ``optimize`` (a key of ``METRICS``): among the cells of
    the Pareto front within ``tolerance`` of the best value of that metric, the one whose other
    metrics, each relative to their best among those cells, sum to the least (ties: the first)."""
    if optimize not in METRICS:
        raise InvalidArgumentError(f"optimize must be one of {', '.join(METRICS)}, not {optimize!r}")
    if not cells:
        raise InvalidArgumentError("no cells to recommend from")
    key = METRICS[optimize]
    front = pareto_front(cells)
    best = min(cells[i][key] for i in front)
    near = [i for i in front if cells[i][key] <= best * (1 + tolerance)]
    others = [k for k in METRICS.values() if k != key]
    floor = {k: min(cells[i][k] for i in near) for k in others}

    def cost(i: int) -> float:
        return sum(cells[i][k] / floor[k] if floor[k] > 0 else 0.0 for k in others)

    return min(near, key=lambda i: (cost(i), i))


def _split_target(target: str) -> tuple[str, str | None]:
    if os.path.exists(target) or ":" not in target:
        return target, None
    path, name = target.rsplit(":", 1)
    return path, name or None


def _resolve(target: str) -> tuple[str, str]:
    import rntuple

    path, name = _split_target(target)
    if not os.path.exists(path):
        raise MissingFileError(2, "No such file or directory", path)
    with rntuple.open(path) as f:
        names = f.rntuple_names()
    if name is None:
        if len(names) != 1:
            raise InvalidArgumentError(
                f"{path} holds {len(names)} RNTuples ({', '.join(names)}): name one as FILE:NAME"
            )
        name = names[0]
    elif name not in names:
        raise NotFoundError(f"{path} has no RNTuple {name!r}; it has: {', '.join(names) or 'none'}")
    return path, name


def _options(setting: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in setting.items() if k not in ("label", "unsplit", "streamer")}


def run(
    target: str,
    output: str,
    *,
    entries: int | None = None,
    runs: int = 3,
    seed: int = 1,
    optimize: str = "size",
    quick: bool = False,
    keep_files: bool = False,
    progress: Any = None,
    sweep: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Measures every setting of the sweep on ``target`` (FILE[:NAME]); returns the results."""
    if optimize not in METRICS:
        raise InvalidArgumentError(f"optimize must be one of {', '.join(METRICS)}, not {optimize!r}")
    path, name = _resolve(target)
    work = os.path.join(output, "files")
    os.makedirs(work, exist_ok=True)
    sweep = sweep if sweep is not None else settings(quick)
    unsplit: list[str] | None = None
    results = []
    for i, setting in enumerate(sweep):
        out = os.path.join(work, f"knobs-{i:02d}.root")
        task: dict[str, Any] = {
            "task": "write_knobs",
            "source": path,
            "name": name,
            "entries": entries,
            "path": out,
            "options": _options(setting),
        }
        if setting.get("unsplit"):
            if unsplit is None:
                unsplit = _split_fields(path, name)
            task["unsplit"] = unsplit
        if setting.get("streamer"):
            task["streamer"] = True
        written = run_child(task)
        read = run_child(
            {"task": "read", "path": out, "reads": {name: []}, "runs": runs, "name": name, "sparse": 0.01, "seed": seed}
        )
        results.append(
            {
                "label": setting["label"],
                "setting": setting,
                "file": out,
                "entries": written["entries"],
                "input_bytes": written["input_bytes"],
                "file_size": written["file_size"],
                "write_seconds": written["write_seconds"],
                "write_peak_rss": written["peak_rss"],
                "write_rss_before": written["rss_before_write"],
                "read_seconds": statistics.median(read["cold_seconds"]),
                "warm_read_seconds": statistics.median(read["warm_seconds"]),
                "read_peak_rss": read["peak_rss"],
                "resident_before_cold": read["resident_before"],
                "sparse_seconds": read["sparse_seconds"],
                "sparse_entries": read["sparse_entries"],
                "sparse_bytes_read": read["sparse_bytes_read"],
                "sparse_pages": read["sparse_pages"],
            }
        )
        if not keep_files:
            os.remove(out)
        if progress is not None:
            progress.update(1)
    if not keep_files and not os.listdir(work):
        os.rmdir(work)
    front = pareto_front(results)
    picks = {goal: recommend(results, goal) for goal in METRICS} if results else {}
    return {
        "study": "knobs",
        "settings": {
            "source": path,
            "name": name,
            "entries": entries,
            "runs": runs,
            "seed": seed,
            "quick": quick,
            "optimize": optimize,
            "sparse_fraction": 0.01,
        },
        "machine": machine(),
        "cells": results,
        "pareto_front": [results[i]["label"] for i in front],
        "recommendations": {goal: results[i]["label"] for goal, i in picks.items()},
        "recommendation": results[picks[optimize]]["label"] if results else None,
    }
