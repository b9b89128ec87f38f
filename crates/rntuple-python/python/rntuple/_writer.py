"""The writer of one RNTuple: what ``RNTupleWriter`` (``_write``) and ``ParallelWriter``
(``_parallel``) share, and ``RNTupleWriter`` itself, which one thread fills batch by batch.

The file a writer belongs to (``WritableFile``, ``_write``) makes its writers; a writer knows
the file's path only.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping
from typing import Any, Self

import pyarrow as pa

from . import _lib
from ._attributes import AttributeSetWriter, create_attribute_set
from ._write_input import _conform, _schema_of, _table_of
from ._write_options import TypeSpec, _overrides, _projections

__all__ = ["Completed", "RNTupleWriter"]


def _write_table(inner: Any, table: pa.Table) -> None:
    """Appends ``table`` through ``inner`` (a writer or fill context of ``_lib``), its batches all
    checked before any is written: a refused table writes nothing."""
    batches = table.to_batches()
    if len(batches) > 1:
        for batch in batches:
            inner.check(batch)
    for batch in batches:
        inner.extend(batch)


class Completed(abc.ABC):
    """``with`` for what ``close()`` completes and ``abandon()`` gives up (a file being written, the
    writer of an RNTuple): leaving the block normally closes it, with an exception abandons it."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abandon()

    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def abandon(self) -> None: ...


class _Writer(Completed):
    """What the writers of one RNTuple share (``RNTupleWriter``, ``rntuple._parallel.ParallelWriter``)."""

    def __init__(self, inner: Any, file_path: str) -> None:
        self._inner = inner
        self._file_path = file_path
        self._schema: pa.Schema = pa.schema(inner.schema)
        self._schemas = [self._schema]  # the schema after each add_fields, oldest first

    def __repr__(self) -> str:
        return f"<rntuple.{type(self).__name__} {self.name!r} in {self._file_path!r} ({self._summary()})>"

    def _summary(self) -> str:
        return f"{self.state}, {self.num_entries} entries"

    @property
    def name(self) -> str:
        """The RNTuple's path in the file (``"dir/Events"``)."""
        return self._inner.name

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the RNTuple: as declared and with the fields added since (nullable fields
        are ``std::optional``)."""
        return self._schema

    @property
    def state(self) -> str:
        """``"open"``, ``"closed"``, ``"abandoned"`` or ``"failed"``."""
        return self._inner.state

    @property
    def closed(self) -> bool:
        return self.state != "open"

    @property
    def num_entries(self) -> int:
        """Entries written so far (of a parallel writer: in the clusters committed so far, by all contexts)."""
        return self._inner.num_entries

    def add_fields(
        self,
        schema_or_data: Any = None,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
        projections: Mapping[str, Any] | None = None,
        soa: Iterable[str] | None = None,
    ) -> None:
        """Adds top-level fields: those of ``schema_or_data`` (a schema or data, as ``mkrntuple`` takes;
        only the types are used) and ``projections`` (as ``mkrntuple`` takes; sources may be old or new
        fields). ``types``, ``representations`` and ``soa`` name paths of the new fields.

        Before the first entry the fields are part of the header. After entries were written they go into
        the footer's schema extension with deferred columns, as ROOT's ``RNTupleModelUpdater`` adds them:
        the earlier entries read as the types' zero values (0, empty collections and strings, empty
        optionals). From then on ``extend`` needs the new fields too (a parallel writer's contexts also
        take batches of an earlier schema: the fields missing read as zeros). A refused addition
        (``WriteError``) leaves the writer as it was.
        """
        if schema_or_data is None:
            schema = pa.schema([])
        else:
            schema = _schema_of(schema_or_data)
        self._inner.add_fields(schema, _overrides(types, representations, soa), _projections(projections))
        self._schema = pa.schema(self._inner.schema)
        self._schemas.append(self._schema)

    def create_attribute_set(
        self,
        name: str,
        data_or_schema: Any,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
    ) -> AttributeSetWriter:
        """Creates the attribute set ``name`` (ROOT 6.40's ``CreateAttributeSet``): its fields are those of
        ``data_or_schema``, ``types`` and ``representations`` as for ``mkrntuple``. Its entries, each for a
        range of this RNTuple's entries, are written when this RNTuple is closed (``AttributeSetWriter``).

        Of a parallel writer, the ranges refer to the committed entries, numbered in commit order:
        ``begin_range()`` is ``num_entries`` (committed so far), and ``commit_range(start, values)``
        covers the entries committed since, by any context."""
        return create_attribute_set(self, name, data_or_schema, types, representations)

    def close(self) -> None:
        """Writes the RNTuple's last cluster, page lists, footer and anchor (no-op when closed)."""
        self._inner.close()

    def abandon(self) -> None:
        """Gives the RNTuple up: it will not be in the file (its bytes written so far stay as dead space)."""
        self._inner.abandon()


class RNTupleWriter(_Writer):
    """One RNTuple being written; made by ``WritableFile.mkrntuple``.

    ``extend(batch)`` appends entries; ``close()`` (or leaving its ``with``
    block) writes the RNTuple's footer and anchor. An exception that leaves
    the ``with`` block abandons the RNTuple: it will not be in the file.
    """

    _inner: _lib.RNTupleWriter

    @property
    def memory_use(self) -> dict[str, int] | None:
        """Bytes the writer's buffers hold now (``"held"``) and held at most so far (``"high_water"``),
        as bounded by the ``memory_budget`` option; ``None`` once closed."""
        use = self._inner.memory_use
        return None if use is None else {"held": use[0], "high_water": use[1]}

    def extend(self, data: Any) -> None:
        """Appends the entries of ``data`` (the kinds ``mkrntuple`` takes), with the RNTuple's fields.

        Columns are matched by name. A batch whose types or values do not fit
        (another type, nulls in a field that is not ``std::optional``, strings
        that are not UTF-8, values outside a Real32Quant range) is refused as a
        whole with a ``WriteError`` and the writer stays usable; a failure
        while writing (I/O) marks it failed.
        """
        table, _, _ = _table_of(data)
        _write_table(self._inner, _conform(table, self._schema, self.name))

    def commit_cluster(self) -> None:
        """Ends the current cluster here (clusters otherwise end by size)."""
        self._inner.commit_cluster()
