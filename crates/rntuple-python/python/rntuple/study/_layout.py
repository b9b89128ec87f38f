"""``rntuple study layout``: the DUNE layout matrix on generated ``recob::Hit`` / ``recob::Wire`` data."""

from __future__ import annotations

import itertools
import os
import statistics
from typing import Any

from .._errors import InvalidArgumentError
from ._measure import machine, run_child
from ._shapes import AXES, names, reads, skip_reason

__all__ = ["cells", "run"]


def cells(threads: int, quick: bool = False, axes: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every cell of the matrix (skipped ones with ``skip``: the reason), in a stable order.

    ``threads``: the most writer threads (Python threads, each filling its own fill context of a
    parallel writer); the matrix has 1 and ``threads``. ``quick`` keeps the
    cells that answer the DUNE study's questions with the fewest files (no group split, one
    thread count). ``axes`` narrows axes of the matrix to some of their values
    (``{"rows": ["event", "element"]}``)."""
    if threads < 1:
        raise InvalidArgumentError(f"threads must be at least 1, not {threads}")
    chosen = dict(AXES)
    for axis, values in (axes or {}).items():
        if axis not in AXES:
            raise InvalidArgumentError(f"no axis {axis!r} in the layout matrix; the axes are: {', '.join(AXES)}")
        bad = [v for v in values if v not in AXES[axis]]
        if bad or not values:
            raise InvalidArgumentError(
                f"{axis} takes {', '.join(AXES[axis])}, not {', '.join(map(repr, bad)) or 'nothing'}"
            )
        chosen[axis] = tuple(values)
    counts = sorted({1, threads}) if not quick else [threads]
    out = []
    for model, rows, split, rois in itertools.product(*chosen.values()):
        if quick and split == "group":
            continue
        for t in counts:
            cell: dict[str, Any] = {"model": model, "rows": rows, "split": split, "rois": rois, "threads": t}
            reason = skip_reason(cell)
            if reason is not None:
                if t != counts[0]:
                    continue  # one record of a skipped combination is enough
                cell["skip"] = reason
            out.append(cell)
    return out


def cell_id(cell: dict[str, Any]) -> str:
    return f"{cell['model']}-{cell['rows']}-{cell['split']}-{cell['rois']}-t{cell['threads']}"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run(
    output: str,
    *,
    events: int = 2000,
    threads: int = 2,
    runs: int = 3,
    seed: int = 1,
    quick: bool = False,
    keep_files: bool = False,
    progress: Any = None,
    axes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Measures every cell; returns the results (the report's JSON)."""
    os.makedirs(output, exist_ok=True)
    work = os.path.join(output, "files")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "products.npz")
    products = run_child({"task": "generate", "events": events, "seed": seed, "path": data})
    todo = cells(threads, quick, axes)
    results, skipped = [], []
    for cell in todo:
        if "skip" in cell:
            skipped.append(cell)
            continue
        path = os.path.join(work, cell_id(cell) + ".root")
        written = run_child(
            {"task": "write_layout", "data": data, "cell": cell, "path": path, "threads": cell["threads"]}
        )
        read = run_child({"task": "read", "path": path, "reads": reads(cell), "runs": runs})
        results.append(
            {
                **cell,
                "id": cell_id(cell),
                "file": path,
                "rntuples": names(cell),
                "file_size": written["file_size"],
                "write_seconds": written["write_seconds"],
                "write_events_per_second": events / written["write_seconds"],
                "write_peak_rss": written["peak_rss"],
                "write_rss_before": written["rss_before_write"],
                "fill_contexts": written["fill_contexts"],
                "entries_per_context": written["entries_per_context"],
                "read_peak_rss": read["peak_rss"],
                "cold_read_seconds": _median(read["cold_seconds"]),
                "warm_read_seconds": _median(read["warm_seconds"]),
                "cold_runs": read["cold_seconds"],
                "warm_runs": read["warm_seconds"],
                "resident_before_cold": read["resident_before"],
                "resident_after_cold": read["resident_after"],
                "file_pages": read["file_pages"],
                "read_bytes": read["io"].get("bytes_read", 0),
            }
        )
        if not keep_files:
            os.remove(path)
        if progress is not None:
            progress.update(1)
    if not keep_files:
        os.remove(data)
        if not os.listdir(work):
            os.rmdir(work)
    return {
        "study": "layout",
        "settings": {
            "events": events,
            "threads": threads,
            "runs": runs,
            "seed": seed,
            "quick": quick,
            "spills": products["spills"],
            "compression": 505,
            "axes": axes,
        },
        "data": products["checksums"],
        "machine": machine(),
        "cells": results,
        "skipped": skipped,
        "conclusions": conclusions(results),
    }


def _best(results: list[dict[str, Any]], key: str, high: bool = False) -> dict[str, Any]:
    return (max if high else min)(results, key=lambda r: r[key])


def _mean_by(results: list[dict[str, Any]], axis: str, key: str) -> dict[str, float]:
    groups: dict[str, list[float]] = {}
    for r in results:
        groups.setdefault(str(r[axis]), []).append(r[key])
    return {k: statistics.fmean(v) for k, v in groups.items()}


def conclusions(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures the report states: the best cell for each measure and the mean of each measure
    along each axis of the matrix."""
    if not results:
        return {}
    keys = {
        "file_size": False,
        "write_events_per_second": True,
        "cold_read_seconds": False,
        "warm_read_seconds": False,
        "write_peak_rss": False,
    }
    return {
        "best": {k: _best(results, k, high)["id"] for k, high in keys.items()},
        "by_axis": {axis: {k: _mean_by(results, axis, k) for k in keys} for axis in (*AXES, "threads")},
    }
