"""Writing one RNTuple from several threads: ``WritableFile.mkrntuple_parallel``.

>>> with rntuple.recreate("out.root") as f:
...     with f.mkrntuple_parallel("Events", rntuple.schema_of(example)) as w:
...         def fill(chunks):
...             with w.fill_context() as ctx:       # one context per thread
...                 for chunk in chunks:
...                     ctx.extend(chunk)           # GIL released while it fills and compresses
...         threads = [threading.Thread(target=fill, args=(part,)) for part in parts]
...         for t in threads: t.start()
...         for t in threads: t.join()

As ROOT's ``RNTupleParallelWriter`` with its ``RNTupleFillContext``s (Rust:
``rntuple::write::ParallelWriter``): each :class:`FillContext` has its own
page buffers and builds its own clusters; a cluster is written when its
context commits it (by size, ``commit_cluster()`` or ``close()``), and
clusters are numbered in commit order, so the entries of one context keep
their order and the entries of different contexts interleave by cluster.
Filling and compressing run in parallel with the GIL released; writing a
committed cluster is serialized. Inputs, options, types and representations
are those of ``mkrntuple``; ``projections`` are not available.
``add_fields`` may be called while contexts fill on other threads: the new
fields' columns are deferred to the entries committed so far, and a context
keeps taking batches of the schema it had (the fields they lack read as
zeros, as ROOT reads deferred columns) until it is given a batch with the new
fields.
"""

from __future__ import annotations

from typing import Any

from . import _lib
from ._write_input import _conform, _table_of
from ._writer import _write_table, _Writer

__all__ = ["FillContext", "ParallelWriter", "fill_once"]


class FillContext:
    """One context of a :class:`ParallelWriter`: fills clusters of its RNTuple, e.g. on one thread.

    ``extend(data)`` appends entries (the kinds ``mkrntuple`` takes); a cluster
    is committed when it reaches the writer's cluster size, at
    ``commit_cluster()`` and at ``close()`` (or the end of the ``with`` block,
    with or without an exception). A context that is garbage-collected
    unclosed commits its last cluster too, as ROOT's does in its destructor.
    One context is meant for one thread at a time (calls on it from several
    threads are serialized).
    """

    def __init__(self, inner: _lib.FillContext, writer: ParallelWriter) -> None:
        self._inner = inner
        self._writer = writer

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<rntuple.FillContext of {self._writer.name!r} ({state}, {self.num_entries} entries)>"

    def __enter__(self) -> FillContext:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
            return
        try:
            self.close()
        except Exception:  # the exception in flight is the one to report; the writer fails at close
            pass

    @property
    def closed(self) -> bool:
        return self._inner.closed

    @property
    def num_entries(self) -> int:
        """Entries appended through this context (committed or not)."""
        return self._inner.num_entries

    @property
    def memory_use(self) -> dict[str, int] | None:
        """Bytes this context's buffers hold now and at most (``memory_budget`` is per context);
        ``None`` once closed."""
        use = self._inner.memory_use
        return None if use is None else {"held": use[0], "high_water": use[1]}

    def extend(self, data: Any) -> None:
        """Appends the entries of ``data``, with the RNTuple's fields (matched by name).

        The fields may be those of any schema the writer had (before or after
        ``add_fields``). A batch of other fields or types, or whose values do not
        fit (nulls in a field that is not ``std::optional``, ...), is refused
        with a ``WriteError`` and the context stays usable; a failure while
        writing fails the context and the writer.
        """
        table, _, _ = _table_of(data)
        names = set(table.column_names)
        schema = next((s for s in reversed(self._writer._schemas) if set(s.names) == names), self._writer.schema)
        _write_table(self._inner, _conform(table, schema, self._writer.name))

    def commit_cluster(self) -> None:
        """Commits the entries appended since the last cluster as a cluster (no-op without any)."""
        self._inner.commit_cluster()

    def close(self) -> None:
        """Commits the open cluster and ends the context (no-op when closed)."""
        self._inner.close()


class ParallelWriter(_Writer):
    """One RNTuple filled by several :class:`FillContext`; made by ``WritableFile.mkrntuple_parallel``.

    ``fill_context()`` makes a context (one per thread); ``num_entries`` counts
    the entries of the clusters committed so far; ``close()`` (or leaving its
    ``with`` block) writes the page lists, footer and anchor once every
    context is closed: while one is open it raises ``ValueError`` and the
    writer stays open. An exception that leaves the ``with`` block abandons
    the RNTuple (it will not be in the file).
    """

    _inner: _lib.ParallelWriter

    def _summary(self) -> str:
        return f"{self.state}, {self.num_entries} entries committed, {self.open_contexts} open contexts"

    @property
    def open_contexts(self) -> int:
        """Fill contexts made and not yet closed (or garbage-collected)."""
        return self._inner.open_contexts

    def fill_context(self) -> FillContext:
        """A new fill context (usable on any thread)."""
        return FillContext(self._inner.fill_context(), self)


def fill_once(writer: ParallelWriter, data: Any) -> None:
    """Writes ``data`` through a fill context of its own (the entries given to ``mkrntuple_parallel``)."""
    with writer.fill_context() as ctx:
        ctx.extend(data)
