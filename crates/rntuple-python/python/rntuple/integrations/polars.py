"""``rntuple.scan_polars``: an RNTuple as a Polars ``LazyFrame`` (a Polars IO plugin).

The frame is registered with ``polars.io.plugins.register_io_source``: Polars
tells the source which columns a query uses (projection pushdown), how many
rows it needs (slice pushdown) and its filter. Only the top-level fields the
query names are read, cluster by cluster; a query that needs the first ``n``
rows stops reading after the cluster that completes them; the filter is
applied to each cluster's frame as it is read. ``RNTuple.io_stats()`` shows
what was read (``tests/python/test_arrow_stream.py``: one column of twenty reads
a twentieth of the bytes).

Types are those of ``arrays(library="pa")`` as Polars converts them
(``pl.DataFrame(nt)`` gives the same frame, eagerly).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import require

__all__ = ["scan_polars"]


def _rntuple(source: Any, name: str | None) -> Any:
    """The RNTuple ``source`` is, or names (``"f.root:Events"``, or a path with ``name``)."""
    if hasattr(source, "arrays") and hasattr(source, "clusters"):
        return source
    from .._file import open as open_file

    if name is not None:
        return open_file(source)[name]
    opened = open_file(source)
    if hasattr(opened, "rntuple_names"):  # a file: its only RNTuple
        names = opened.rntuple_names()
        if len(names) != 1:
            from .._errors import InvalidArgumentError

            raise InvalidArgumentError(
                f"{source!r} holds {len(names)} RNTuples ({', '.join(names)}); name one: "
                "scan_polars('file.root:NAME') or scan_polars(path, 'NAME')"
            )
        return opened[names[0]]
    return opened


def scan_polars(source: Any, name: str | None = None) -> Any:
    """A Polars ``LazyFrame`` over an RNTuple's readable top-level fields, read when collected.

    ``source``: an ``RNTuple``, ``"file.root:Events"``, or a path (or URL) with ``name``
    (optional when the file holds one RNTuple). Projection, slice and filter pushdown as the
    module says.

    >>> rntuple.scan_polars("nano.root:Events").filter(pl.col("nMuon") > 1).select("MET_pt").collect()
    """
    pl = require("polars", feature="rntuple.scan_polars")
    plugins = require("polars.io.plugins", feature="rntuple.scan_polars")
    ntuple = _rntuple(source, name)
    schema = pl.from_arrow(ntuple.arrays(entry_start=0, entry_stop=0, library="pa")).schema
    first_field = next(iter(schema), None)

    def read(
        with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None
    ) -> Iterator[Any]:
        names = list(schema) if with_columns is None else list(with_columns)
        wanted = names or ([first_field] if first_field is not None else [])
        left = n_rows
        for cluster in ntuple.clusters:
            if left is not None and left <= 0:
                return
            start, stop = cluster.first_entry, cluster.first_entry + cluster.num_entries
            if left is not None and predicate is None:
                stop = min(stop, start + left)
            frame = pl.DataFrame(ntuple.arrays(wanted, entry_start=start, entry_stop=stop, library="pa"))
            if predicate is not None:
                frame = frame.filter(predicate)
            if left is not None:
                frame = frame.head(left)
                left -= frame.height
            yield frame.select(names)

    return plugins.register_io_source(
        read, schema=schema, explain_name="rntuple", explain_detail=f"RNTuple {ntuple.name!r}"
    )
