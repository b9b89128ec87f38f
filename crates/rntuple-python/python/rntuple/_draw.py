"""A quick look at an RNTuple, like ``TTree::Draw``: ``rntuple.draw``.

>>> h = rntuple.draw("nano.root:Events", "sqrt(Muon_pt**2 + Muon_eta**2)", cut="nMuon >= 2", bins=50,
...                  range=(0, 200), output="muons.png")
>>> h.counts, h.edges, h.underflow, h.overflow

The expression and the cut are Python expressions parsed with ``ast`` and
checked against a small whitelist; they are never given to ``eval``:

* names of top-level fields (only those are read) and the constants ``pi``,
  ``e``, ``inf`` and ``nan``; numbers and ``True``/``False``;
* ``+ - * / // % **``, ``& | ^ ~``, comparisons (chains too), ``and``, ``or``,
  ``not`` (element-wise);
* ``field.member`` (a member of a record field) and ``field[i]`` (the ``i``-th
  element of a collection in each entry; entries with fewer are skipped);
* the functions in ``FUNCTIONS``: numpy's element-wise maths (``sqrt``,
  ``abs``, ``log``, ``exp``, ``sin``, ``arctan2``, ``hypot``, ``minimum``,
  ...) and per-entry reductions of collections (``len``, ``sum``, ``min``,
  ``max``).

Collections (jagged fields) are flattened consistently: values of one entry
broadcast over the elements of a collection in that entry, so ``Muon_pt *
MET_pt`` has one value per muon; two collections in one expression must have
the same number of elements in each entry. A cut with one value per entry
selects entries, a cut with one value per element selects elements; a
non-boolean cut selects where it is non-zero. The histogram follows
``numpy.histogram``: ``bins`` equal bins over ``range`` (default: the
smallest and largest value), the last bin including its upper edge; values
outside are counted as underflow and overflow, NaN values separately.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import awkward as ak
import numpy as np

from ._convert import Progress, atomic_output
from ._errors import InvalidArgumentError, WrongTypeError
from ._formula import FUNCTIONS, DrawError, Expression
from ._ntuple import RNTuple

__all__ = ["FUNCTIONS", "DrawError", "Histogram", "draw"]


@dataclass
class Histogram:
    """The result of ``draw``: counts per bin and what fell outside."""

    counts: np.ndarray
    edges: np.ndarray
    underflow: int
    overflow: int
    nan: int
    """NaN values (not counted anywhere else)."""
    entries: int
    """Values filled: in the bins, underflow and overflow."""
    mean: float
    """Mean of the values in the bins (``nan`` if none)."""
    std: float
    """Standard deviation of the values in the bins."""
    expression: str
    cut: str | None
    output: str | None
    """The PNG written, if any."""

    def to_dict(self) -> dict[str, Any]:
        """Plain Python values (what ``rntuple draw --json`` prints)."""
        return {
            "expression": self.expression,
            "cut": self.cut,
            "counts": [int(c) for c in self.counts],
            "edges": [float(e) for e in self.edges],
            "underflow": self.underflow,
            "overflow": self.overflow,
            "nan": self.nan,
            "entries": self.entries,
            "mean": None if math.isnan(self.mean) else self.mean,
            "std": None if math.isnan(self.std) else self.std,
            "output": self.output,
        }

    def summary(self) -> str:
        lo, hi = self.edges[0], self.edges[-1]
        text = (
            f"{self.expression}: {len(self.counts)} bins over [{lo:g}, {hi:g}], {self.entries:,} entries, "
            f"mean {self.mean:.6g}, std dev {self.std:.6g}, underflow {self.underflow:,}, overflow {self.overflow:,}"
        )
        if self.nan:
            text += f", NaN {self.nan:,}"
        return text


def _flat_values(values: Any, what: str, text: str) -> np.ndarray:
    if isinstance(values, bool | int | float | np.number | np.bool_):
        raise DrawError(f"{what} {text!r} is a constant; use at least one field")
    if isinstance(values, ak.Array):
        if values.fields:
            raise DrawError(f"{what} {text!r} is a record (members: {values.fields}); draw one of its members")
        flat = ak.flatten(values, axis=None)
        try:
            out = ak.to_numpy(flat)
        except (ValueError, TypeError) as err:
            raise DrawError(f"{what} {text!r} has values that are not numbers ({flat.type})") from err
    else:
        out = np.asarray(values)
    if out.dtype.kind not in "biuf":
        raise DrawError(f"{what} {text!r} has values that are not numbers (dtype {out.dtype})")
    return out.astype(np.float64, copy=False)


def _select(values: Any, cut: Any, expr: Expression, cut_expr: Expression) -> Any:
    """The values of ``expr`` where ``cut`` holds (broadcast per entry / per element)."""
    if isinstance(cut, ak.Array) and cut.fields:
        raise DrawError(f"cut {cut_expr.text!r} is a record; cut on one of its members")
    if not isinstance(values, ak.Array):
        raise DrawError(f"expression {expr.text!r} is a constant; use at least one field")
    if not isinstance(cut, ak.Array):
        return values if bool(cut) else values[np.zeros(len(values), dtype=bool)]
    try:
        if cut.ndim > values.ndim:
            raise InvalidArgumentError("the cut has more values per entry than the expression")
        values, cut = ak.broadcast_arrays(values, cut)
    except ValueError as err:
        raise DrawError(
            f"cannot apply cut {cut_expr.text!r} to {expr.text!r}: their collections have different lengths "
            f"in some entry ({str(err).splitlines()[0]})"
        ) from None
    cut = ak.fill_none(cut != 0, False)
    return values[cut]


def _source(source: Any, name: str | None, verify_checksums: bool) -> tuple[RNTuple, Any, Any]:
    """(the RNTuple whose fields the expressions use, the file to close or None, what to read:
    that RNTuple, or the chain of several files)."""
    from ._chain import Chain
    from ._dataset import expand

    if isinstance(source, RNTuple):
        return source, None, source
    if isinstance(source, Chain):
        chain = source
    elif isinstance(source, str | os.PathLike) or isinstance(source, list | tuple | dict):
        pairs = [(p, n if n is not None else name) for p, n in expand(source)]
        chain = Chain(pairs, verify_checksums=verify_checksums)
    else:
        raise WrongTypeError(
            f"source must be 'FILE:NAME', a path (with name=...), a list or glob of them, "
            f"a Chain or an RNTuple, not {source!r}"
        )
    try:
        f, first = chain._open(0)
    except ValueError as err:
        raise DrawError(str(err)) from None
    if len(chain.files) == 1:
        return first, f, first
    return first, f, chain


def draw(
    source: Any,
    expression: str,
    output: str | os.PathLike[str] | None = None,
    *,
    cut: str | None = None,
    bins: int = 100,
    range: tuple[float, float] | None = None,  # noqa: A002 - numpy's name
    name: str | None = None,
    entry_start: int | None = None,
    entry_stop: int | None = None,
    step_size: int | str = "100 MB",
    title: str | None = None,
    logy: bool = False,
    progress: bool | None = None,
    verify_checksums: bool = True,
) -> Histogram:
    """Histograms ``expression`` over the entries of an RNTuple (where ``cut`` holds) and writes a PNG.

    ``source``: ``"file.root:Events"``, a path with ``name=``, an
    ``RNTuple``, or several files in any form of ``rntuple.iterate`` (a list, a
    glob, ``{path: name}``, a ``Chain``): their chain is histogrammed.
    ``output``: the PNG to write (needs matplotlib; ``None``
    only computes). ``bins``/``range``: as ``numpy.histogram`` (default
    range: smallest to largest value; then the data are read twice if they
    are too many to keep). See the module documentation for expressions.
    """
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise DrawError(f"bins must be a positive integer, not {bins!r}")
    if range is not None:
        try:
            lo, hi = (float(x) for x in range)
        except (TypeError, ValueError):
            raise DrawError(f"range must be two numbers (low, high), not {range!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise DrawError(f"range must be two finite numbers with low < high, not {range!r}")
        range = (lo, hi)
    if output is not None:
        _need_matplotlib()
    ntuple, file, reader = _source(source, name, verify_checksums)
    try:
        return _draw(
            ntuple,
            expression,
            output,
            cut,
            int(bins),
            range,
            entry_start,
            entry_stop,
            step_size,
            title,
            logy,
            progress,
            reader,
        )
    finally:
        if file is not None:
            file.close()


# Values kept in memory to find the range in one pass (else the data are read a second time).
_KEEP_VALUES = 1 << 24


def _draw(
    ntuple: RNTuple,
    expression: str,
    output: str | os.PathLike[str] | None,
    cut: str | None,
    bins: int,
    range_: tuple[float, float] | None,
    entry_start: int | None,
    entry_stop: int | None,
    step_size: int | str,
    title: str | None,
    logy: bool,
    progress: bool | None,
    reader: Any = None,
) -> Histogram:
    """``reader`` (default ``ntuple``): what is read, ``ntuple`` or a chain with its fields."""
    reader = ntuple if reader is None else reader
    fields = {f.display_name: f for f in ntuple.fields if f.readable}
    expr = Expression(expression, "expression", set(fields))
    cut_expr = Expression(cut, "cut", set(fields)) if cut is not None else None
    needed = list(dict.fromkeys(expr.names + (cut_expr.names if cut_expr else [])))
    if not needed:
        raise DrawError(f"expression {expression!r} uses no field")
    wanted = {fields[n].name for n in needed}
    start, stop = _bounds(reader.num_entries, entry_start, entry_stop)

    def chunks() -> Iterator[np.ndarray]:
        bar = Progress(stop - start, "draw", enabled=progress)
        try:
            for array in reader.iterate(
                filter_field=lambda f: f.top_level and f.name in wanted,
                step_size=step_size,
                entry_start=start,
                entry_stop=stop,
            ):
                env = {n: array[n] for n in needed}
                values = expr.evaluate(env)
                if cut_expr is not None:
                    values = _select(values, cut_expr.evaluate(env), expr, cut_expr)
                bar.update(len(array))
                yield _flat_values(values, "expression", expression)
        finally:
            bar.close()

    nan = 0
    kept: list[np.ndarray] | None = None
    if range_ is None:
        lo, hi = math.inf, -math.inf
        kept, size = [], 0
        for v in chunks():
            finite = v[np.isfinite(v)]
            if finite.size:
                lo, hi = min(lo, float(finite.min())), max(hi, float(finite.max()))
            if kept is not None:
                kept.append(v)
                size += v.size
                if size > _KEEP_VALUES:
                    kept = None
        if lo > hi:  # no values
            lo, hi = 0.0, 1.0
        elif lo == hi:  # as numpy.histogram does for a single value
            lo, hi = lo - 0.5, hi + 0.5
        range_ = (lo, hi)
    edges = np.linspace(range_[0], range_[1], bins + 1)
    counts = np.zeros(bins, dtype=np.int64)
    under = over = 0
    total = 0.0
    total2 = 0.0
    inside = 0
    for v in kept if kept is not None else chunks():
        isnan = np.isnan(v)
        nan += int(isnan.sum())
        v = v[~isnan]
        below = v < range_[0]
        above = v > range_[1]
        under += int(below.sum())
        over += int(above.sum())
        v = v[~(below | above)]
        c, _ = np.histogram(v, bins=edges)
        counts += c
        inside += v.size
        total += float(v.sum())
        total2 += float(np.square(v).sum())
    mean = total / inside if inside else math.nan
    std = math.sqrt(max(total2 / inside - mean * mean, 0.0)) if inside else math.nan
    hist = Histogram(
        counts=counts,
        edges=edges,
        underflow=under,
        overflow=over,
        nan=nan,
        entries=inside + under + over,
        mean=mean,
        std=std,
        expression=expression,
        cut=cut,
        output=None if output is None else os.fspath(output),
    )
    if output is not None:
        _plot(hist, os.fspath(output), title or f"{ntuple.name}", logy)
    return hist


def _bounds(n: int, start: int | None, stop: int | None) -> tuple[int, int]:
    s = slice(start, stop).indices(n)
    return s[0], max(s[0], s[1])


def _need_matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise DrawError(
            "writing a PNG needs matplotlib: pip install matplotlib (or install rntuple with the 'draw' extra)"
        ) from None
    return matplotlib


def _plot(hist: Histogram, path: str, title: str, logy: bool) -> None:
    _need_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 6), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.stairs(hist.counts, hist.edges, fill=True, alpha=0.35, color="tab:blue")
    ax.stairs(hist.counts, hist.edges, color="tab:blue", linewidth=1.2)
    ax.set_xlim(hist.edges[0], hist.edges[-1])
    ax.set_xlabel(hist.expression)
    ax.set_ylabel("entries / bin")
    ax.set_title(title if hist.cut is None else f"{title}  [{hist.cut}]")
    if logy and hist.counts.any():
        ax.set_yscale("log")
    rows = [
        ("Entries", f"{hist.entries:,}"),
        ("Mean", f"{hist.mean:.4g}"),
        ("Std Dev", f"{hist.std:.4g}"),
        ("Underflow", f"{hist.underflow:,}"),
        ("Overflow", f"{hist.overflow:,}"),
    ]
    width = max(len(v) for _, v in rows)
    stats = "\n".join(f"{k:<10} {v:>{width}}" for k, v in rows)
    ax.text(
        0.98,
        0.97,
        stats,
        transform=ax.transAxes,
        ha="right",
        va="top",
        family="monospace",
        fontsize=9,
        bbox={"boxstyle": "square", "facecolor": "white", "edgecolor": "0.5"},
    )
    fig.tight_layout()
    with atomic_output(path) as tmp:
        try:
            fig.savefig(tmp, format="png")
        except OSError:
            raise
        except Exception as err:  # matplotlib's own errors
            raise DrawError(f"cannot write {path}: {err}") from None
