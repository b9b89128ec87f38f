"""Layout studies with plots: the measurements experiments make by hand before choosing a layout.

``layout(output, ...)``: DUNE-like ``recob::Hit`` / ``recob::Wire`` data under a matrix of layouts
(AOS/SOA/ROOT SoA fields, event/spill/top-object/element rows, one RNTuple / one per product / one per group,
nested or flat ROIs, writer threads: Python threads filling the fill contexts of one parallel writer):
write rate, peak RSS, file size, cold and warm reads.

``knobs(target, output, ...)``: the user's RNTuple (``FILE[:NAME]``) rewritten under a sweep of
writer settings: size, write time, peak RSS, full and 1% sparse reads; the Pareto front and a
recommendation for ``optimize`` (``size``, ``read``, ``sparse``, ``write``, ``memory``).

Both write ``report.md``, ``report.html``, PNG plots and ``results.json`` into ``output`` and
return the results as a dict. The same as ``rntuple study layout|knobs`` on the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import InvalidArgumentError
from . import _knobs, _layout, _report
from ._knobs import pareto_front, recommend

__all__ = ["knobs", "layout", "pareto_front", "recommend", "sample"]


def _positive(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidArgumentError(f"{name} must be a positive integer, not {value!r}")


def _reported(output: str, bar: Any, run: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """``run(*args, progress=bar, **kwargs)``, the bar closed after, and its report written to ``output``."""
    try:
        result = run(*args, progress=bar, **kwargs)
    finally:
        bar.close()
    result["report"] = _report.write(result, output)
    return result


def layout(
    output: str,
    *,
    events: int | None = None,
    threads: int | None = None,
    runs: int | None = None,
    seed: int = 1,
    quick: bool = False,
    progress: bool | None = None,
    keep_files: bool = False,
    axes: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Runs the layout matrix and writes its report into ``output`` (see the module's text).

    ``events`` (default 2000, 200 with ``quick``), ``threads`` (the most writer threads, each with
    its own fill context; default 2),
    ``runs`` (of each read, default 3, 1 with ``quick``); ``keep_files`` keeps the files written;
    ``axes`` narrows the matrix (``{"rows": ["event"], "split": ["one", "product"]}``)."""
    for name, value in (("events", events), ("threads", threads), ("runs", runs)):
        _positive(name, value)
    events = events or (200 if quick else 2000)
    threads = threads or 2
    runs = runs or (1 if quick else 3)
    from .._term import Progress

    todo = [c for c in _layout.cells(threads, quick, axes) if "skip" not in c]
    return _reported(output, Progress(len(todo), "study layout", progress, "cells"), _layout.run, output,
                     events=events, threads=threads, runs=runs, seed=seed, quick=quick, keep_files=keep_files,
                     axes=axes)  # fmt: skip


def knobs(
    target: str,
    output: str,
    *,
    optimize: str = "size",
    entries: int | None = None,
    runs: int | None = None,
    seed: int = 1,
    quick: bool = False,
    progress: bool | None = None,
    keep_files: bool = False,
    sweep: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Sweeps writer settings over ``target`` (``FILE[:NAME]``) and writes the report into ``output``.

    ``entries``: how many entries of it each setting rewrites (default all, 20000 with ``quick``);
    ``sweep``: the settings (default ``rntuple.study._knobs.settings(quick)``): dicts of write
    options with a ``label`` and optionally ``unsplit=True`` or ``streamer=True`` (record fields as
    streamer fields, ``_child.streamer_types``)."""
    for name, value in (("entries", entries), ("runs", runs)):
        _positive(name, value)
    if optimize not in _knobs.METRICS:
        raise InvalidArgumentError(f"optimize must be one of {', '.join(_knobs.METRICS)}, not {optimize!r}")
    entries = entries or (20000 if quick else None)
    runs = runs or (1 if quick else 3)
    todo = sweep if sweep is not None else _knobs.settings(quick)
    from .._term import Progress

    return _reported(output, Progress(len(todo), "study knobs", progress, "settings"), _knobs.run, target, output,
                     entries=entries, runs=runs, seed=seed, optimize=optimize, quick=quick, keep_files=keep_files,
                     sweep=todo)  # fmt: skip


def sample(path: str, events: int = 500, seed: int = 1) -> str:
    """Writes generated DUNE-like data (the layout study's products) as one RNTuple ``Events`` in
    ``path``, one row per event, hits and wires as collections of records with nested ROIs:
    an input for ``knobs`` to try it out. Returns ``path``."""
    import rntuple

    from ._data import generate
    from ._shapes import tables

    _positive("events", events)
    cell = {"model": "aos", "rows": "event", "split": "one", "rois": "nested"}
    with rntuple.recreate(path) as f:
        for name, cols in tables(generate(events, seed=seed), cell).items():
            f[name] = cols
    return path
