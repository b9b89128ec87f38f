"""Attribute sets: values that belong to ranges of an RNTuple's entries (ROOT 6.40's ``RNTupleAttr*``).

An attribute set is stored as an RNTuple of its own, linked from the main
RNTuple's footer; each of its entries holds the values of the set's fields
for one range of the main RNTuple's entries (a run number for the entries of
that run, ...). Reading: ``events.attribute_sets`` lists the names,
``events.attribute_set("runs")`` gives an :class:`AttributeSet`, read like an
RNTuple. Writing: ``writer.create_attribute_set(...)`` gives an
:class:`AttributeSetWriter`. See docs/reading.md and docs/writing.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from . import _lib
from ._ntuple import RNTuple
from ._write import _overrides
from ._write_input import _conform, _decode_dictionaries, _schema_of, _to_table

if TYPE_CHECKING:
    from ._parallel import ParallelWriter
    from ._write import RNTupleWriter, TypeSpec

__all__ = ["AttributeSet", "AttributeSetWriter"]


class AttributeSet(RNTuple):
    """One attribute set of an RNTuple: an RNTuple whose entries are attribute entries.

    ``keys()``, ``arrays()``, ``iterate()`` and the rest of the :class:`RNTuple`
    API read the set's own fields, one entry per attribute entry;
    ``entry_ranges[i]`` is the range of the main RNTuple's entries that
    attribute entry ``i`` belongs to. The ``entries_*`` methods select
    attribute entries by main entry, as ROOT's ``GetAttributes*`` do.
    """

    def __init__(self, inner: _lib.AttributeSet, main: RNTuple) -> None:
        super().__init__(inner.values(), main._file_path, inner.name)
        self._set = inner
        self._main_name = main.name

    def __repr__(self) -> str:
        return (
            f"<AttributeSet {self.name!r} of {self._main_name!r} "
            f"({self.num_entries} entries, {len(self.fields)} fields)>"
        )

    @property
    def schema_version(self) -> tuple[int, int]:
        """(major, minor) of the attribute schema (ROOT 6.40 writes 1.0)."""
        return self._set.schema_version

    @property
    def entry_ranges(self) -> list[range]:
        """The main RNTuple's entries of each attribute entry, as ``range(start, stop)`` (may be empty)."""
        starts, lengths = self._set.ranges()
        return [range(s, s + n) for s, n in zip(starts, lengths, strict=True)]

    def entries(self) -> list[int]:
        """Every attribute entry, ordered by the start of its range (ties in entry order)."""
        return self._set.entries()

    def entries_containing(self, entry: int) -> list[int]:
        """Attribute entries whose range holds main entry ``entry`` (empty ranges never do)."""
        return self._set.entries_containing(_index(entry))

    def entries_containing_range(self, start: int, stop: int) -> list[int]:
        """Attribute entries whose range holds all of the main entries ``[start, stop)``."""
        return self._set.entries_containing_range(_index(start), _index(stop))

    def entries_in_range(self, start: int, stop: int) -> list[int]:
        """Attribute entries whose (non-empty) range lies within the main entries ``[start, stop)``."""
        return self._set.entries_in_range(_index(start), _index(stop))


def _index(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"an entry number must be a non-negative int, not {value!r}")
    return value


def attribute_set_names(ntuple: RNTuple) -> list[str]:
    """Names of the attribute sets of ``ntuple`` (for ``RNTuple.attribute_sets``)."""
    return _lib.attribute_set_names(ntuple._inner)


def open_attribute_set(ntuple: RNTuple, name: str) -> AttributeSet:
    """The attribute set ``name`` of ``ntuple`` (for ``RNTuple.attribute_set``)."""
    return AttributeSet(_lib.open_attribute_set(ntuple._inner, name), ntuple)


class AttributeSetWriter:
    """An attribute set of an RNTuple being written; made by ``RNTupleWriter.create_attribute_set``.

    As ROOT's ``BeginRange``/``CommitRange``: ``start = attrs.begin_range()``,
    then fill the RNTuple, then ``attrs.commit_range(start, {"run": 1})``
    binds those values to the entries written in between. ``extend`` appends
    many attribute entries at once with explicit ranges. The entries are
    written with the RNTuple when it is closed.
    """

    def __init__(self, writer: RNTupleWriter | ParallelWriter, name: str, schema: pa.Schema) -> None:
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
            raise ValueError(f"the range start must be an int in [0, {stop}] (the entries written), not {start!r}")
        missing = [f.name for f in self._schema if f.name not in values]
        if missing or len(values) != len(self._schema):
            extra = [k for k in values if k not in self._schema.names]
            raise _lib.WriteError(
                f"attribute set {self._name!r}: give one value per field {self._schema.names}"
                + (f"; missing: {missing}" if missing else "")
                + (f"; not a field: {extra}" if extra else "")
            )
        try:
            columns = [pa.array([values[f.name]], type=f.type) for f in self._schema]
        except (pa.ArrowException, TypeError, ValueError) as err:
            raise _lib.WriteError(f"attribute set {self._name!r}: {err}") from None
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
                raise ValueError(f"an entry range must be contiguous, not {r!r}")
            if not 0 <= start <= stop:
                raise ValueError(f"an entry range must have 0 <= start <= stop, not {r!r}")
            bounds.append((start, stop))
        if len(bounds) != table.num_rows:
            raise ValueError(f"{len(bounds)} ranges for {table.num_rows} attribute entries")
        starts = [b[0] for b in bounds]
        lengths = [b[1] - b[0] for b in bounds]
        offset = 0
        for batch in table.combine_chunks().to_batches():
            n = batch.num_rows
            self._send(batch, starts[offset : offset + n], lengths[offset : offset + n])
            offset += n

    def _send(self, batch: pa.RecordBatch, starts: list[int], lengths: list[int]) -> None:
        inner = self._writer._inner
        if isinstance(inner, _lib.ParallelWriter):
            inner.commit_attributes(self._name, batch, starts, lengths)
        else:
            _lib.commit_attributes(inner, self._name, batch, starts, lengths)


def create_attribute_set(
    writer: RNTupleWriter | ParallelWriter,
    name: str,
    data_or_schema: Any,
    types: Mapping[str, TypeSpec] | None = None,
    representations: Mapping[str, Any] | None = None,
) -> AttributeSetWriter:
    """For ``RNTupleWriter.create_attribute_set`` and ``ParallelWriter.create_attribute_set``."""
    if not isinstance(name, str):
        raise TypeError(f"an attribute set name must be a string, not {name!r}")
    schema = _schema_of(data_or_schema)
    overrides = _overrides(types, representations)
    if isinstance(writer._inner, _lib.ParallelWriter):
        writer._inner.create_attribute_set(name, schema, overrides)
    else:
        _lib.create_attribute_set(writer._inner, name, schema, overrides)
    return AttributeSetWriter(writer, name, schema)
