"""Writing attribute sets: values that belong to ranges of an RNTuple's entries (ROOT 6.40's
``RNTupleAttr*``).

An attribute set is stored as an RNTuple of its own, linked from the main
RNTuple's footer; each of its entries holds the values of the set's fields
for one range of the main RNTuple's entries (a run number for the entries of
that run, ...). Writing: ``writer.create_attribute_set(...)`` gives an
:class:`AttributeSetWriter` (this module). Reading: ``events.attribute_sets``
lists the names, ``events.attribute_set("runs")`` gives an ``AttributeSet``,
an RNTuple of attribute entries (``_ntuple``). See docs/reading.md and
docs/writing.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pyarrow as pa

from . import _lib
from ._errors import InvalidArgumentError, WriteError, WrongTypeError
from ._write_input import _conform, _decode_dictionaries, _schema_of, _to_table
from ._write_options import TypeSpec, _overrides

__all__ = ["AttributeSetWriter", "create_attribute_set"]


class _MainWriter(Protocol):
    """The writer of the RNTuple an attribute set belongs to (``RNTupleWriter``, ``ParallelWriter``)."""

    @property
    def name(self) -> str: ...
    @property
    def num_entries(self) -> int: ...
    @property
    def _inner(self) -> _lib.RNTupleWriter | _lib.ParallelWriter: ...


class AttributeSetWriter:
    """An attribute set of an RNTuple being written; made by ``RNTupleWriter.create_attribute_set``.

    As ROOT's ``BeginRange``/``CommitRange``: ``start = attrs.begin_range()``,
    then fill the RNTuple, then ``attrs.commit_range(start, {"run": 1})``
    binds those values to the entries written in between. ``extend`` appends
    many attribute entries at once with explicit ranges. The entries are
    written with the RNTuple when it is closed.
    """

    def __init__(self, writer: _MainWriter, name: str, schema: pa.Schema) -> None:
        self._writer = writer
        self._name = name
        self._schema = schema

    def __repr__(self) -> str:
        return f"<rntuple.AttributeSetWriter {self._name!r} of {self._writer.name!r}>"

    @property
    def name(self) -> str:
        return self._name

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the set's fields."""
        return self._schema

    def begin_range(self) -> int:
        """The start of a range: the number of entries written so far."""
        return self._writer.num_entries

    def commit_range(self, start: int, values: Mapping[str, Any]) -> range:
        """One attribute entry with ``values`` (one value per field) for the entries written since ``start``.

        Returns the range of main entries it covers.
        """
        stop = self._writer.num_entries
        if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= stop:
            raise InvalidArgumentError(
                f"the range start must be an int in [0, {stop}] (the entries written), not {start!r}"
            )
        missing = [f.name for f in self._schema if f.name not in values]
        if missing or len(values) != len(self._schema):
            extra = [k for k in values if k not in self._schema.names]
            raise WriteError(
                f"attribute set {self._name!r}: give one value per field {self._schema.names}"
                + (f"; missing: {missing}" if missing else "")
                + (f"; not a field: {extra}" if extra else "")
            )
        try:
            columns = [pa.array([values[f.name]], type=f.type) for f in self._schema]
        except (pa.ArrowException, TypeError, ValueError) as err:
            raise WriteError(f"attribute set {self._name!r}: {err}") from None
        self._commit(pa.Table.from_arrays(columns, schema=self._schema), [range(start, stop)])
        return range(start, stop)

    def extend(self, data: Any, ranges: Sequence[range | tuple[int, int]]) -> None:
        """Appends one attribute entry per entry of ``data`` (the kinds ``mkrntuple`` takes);
        ``ranges[i]`` is the ``range(start, stop)`` or ``(start, stop)`` of main entries of entry ``i``,
        within the entries written so far."""
        table, _ = _to_table(data)
        table = _conform(_decode_dictionaries(table), self._schema, self._name)
        for i, field in enumerate(self._schema):
            if table.column(i).type != field.type:
                try:
                    column = table.column(i).cast(field.type)
                except (pa.ArrowException, TypeError, ValueError):
                    continue  # the writer reports the mismatch
                table = table.set_column(i, pa.field(field.name, field.type, field.nullable), column)
        self._commit(table, list(ranges))

    def _commit(self, table: pa.Table, ranges: list[range | tuple[int, int]]) -> None:
        bounds = []
        for r in ranges:
            start, stop = (r.start, r.stop) if isinstance(r, range) else r
            if isinstance(r, range) and r.step != 1:
                raise InvalidArgumentError(f"an entry range must be contiguous, not {r!r}")
            if not 0 <= start <= stop:
                raise InvalidArgumentError(f"an entry range must have 0 <= start <= stop, not {r!r}")
            bounds.append((start, stop))
        if len(bounds) != table.num_rows:
            raise InvalidArgumentError(f"{len(bounds)} ranges for {table.num_rows} attribute entries")
        starts = [b[0] for b in bounds]
        lengths = [b[1] - b[0] for b in bounds]
        offset = 0
        for batch in table.combine_chunks().to_batches():
            n = batch.num_rows
            self._send(batch, starts[offset : offset + n], lengths[offset : offset + n])
            offset += n

    def _send(self, batch: pa.RecordBatch, starts: list[int], lengths: list[int]) -> None:
        _lib.commit_attributes(self._writer._inner, self._name, batch, starts, lengths)


def create_attribute_set(
    writer: _MainWriter,
    name: str,
    data_or_schema: Any,
    types: Mapping[str, TypeSpec] | None = None,
    representations: Mapping[str, Any] | None = None,
) -> AttributeSetWriter:
    """For ``RNTupleWriter.create_attribute_set`` and ``ParallelWriter.create_attribute_set``."""
    if not isinstance(name, str):
        raise WrongTypeError(f"an attribute set name must be a string, not {name!r}")
    schema = _schema_of(data_or_schema)
    overrides = _overrides(types, representations)
    _lib.create_attribute_set(writer._inner, name, schema, overrides)
    return AttributeSetWriter(writer, name, schema)
