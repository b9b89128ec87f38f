"""An RNTuple (or a chain) as a ``pyarrow.dataset.Dataset`` (``RNTuple.arrow_dataset()``), for
engines that push their projection and filters into a pyarrow dataset: DuckDB reads only the
fields a query uses (``duckdb.sql("select avg(MET_pt) from events")`` with
``events = nt.arrow_dataset()``), where the Arrow C stream (``_arrow_stream``) gets no requested
schema from it and reads every field.

The class derives from ``pyarrow.dataset.Dataset`` because that is what such engines recognise
(DuckDB's replacement scan calls ``scanner(columns=..., filter=...)`` on it). Nothing of
pyarrow's C++ dataset is set up: every public method is defined here, in terms of
:meth:`ArrowDataset.scanner`, or raises ``rntuple.UnsupportedError``.

A scanner reads the fields named in ``columns`` and those the ``filter`` refers to, cluster by
cluster (``_arrow_stream``), and pyarrow's ``Scanner.from_batches`` applies the filter and the
projection. Which fields a filter refers to is found by binding it (pyarrow has no public list
of an expression's fields): to the fields whose names appear in its text first, then by
bisection over the others if that binding fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from ._errors import UnsupportedError, unknown_name_error

__all__ = ["ArrowDataset"]

Reader = Callable[[pa.Schema | None], pa.RecordBatchReader]


def _binds(expr: Any, schema: pa.Schema) -> bool:
    """Whether ``expr`` refers only to fields of ``schema``."""
    try:
        ds.Scanner.from_batches(iter(()), schema=schema, filter=expr)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
    return True


def _fields_of(expr: Any, schema: pa.Schema) -> list[str]:
    """The top-level fields of ``schema`` that ``expr`` refers to (a superset never read: the
    fewest found by binding)."""
    text = str(expr)
    guess = [n for n in schema.names if n in text]

    def needed(candidates: list[str], kept: list[str]) -> list[str]:
        # Which of `candidates` must stay, all of `kept` staying: drop halves while it binds.
        if not candidates or _binds(expr, pa.schema([schema.field(n) for n in kept])):
            return []
        if len(candidates) == 1:
            return candidates
        mid = len(candidates) // 2
        first, second = candidates[:mid], candidates[mid:]
        in_first = needed(first, kept + second)
        return in_first + needed(second, kept + in_first)

    if _binds(expr, pa.schema([schema.field(n) for n in guess])):
        pool = guess
    else:
        pool = list(schema.names)
    return sorted(needed(pool, []), key=schema.names.index)


class ArrowDataset(ds.Dataset):
    """The readable top-level fields of an RNTuple (or a chain) as a pyarrow dataset that reads
    only what a scan asks for. Made by ``RNTuple.arrow_dataset()`` / ``Chain.arrow_dataset()``."""

    def __init__(self, schema: pa.Schema, reader: Reader, num_rows: Callable[[], int], what: str) -> None:
        # pyarrow's Dataset constructor refuses direct calls; nothing of it is needed here.
        self._schema = schema
        self._reader = reader
        self._num_rows = num_rows
        self._what = what

    def __repr__(self) -> str:
        return f"<rntuple.ArrowDataset of {self._what}: {len(self._schema)} fields>"

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the readable top-level fields (``arrays(library="pa")``'s)."""
        return self._schema

    def _names(self, columns: Iterable[str]) -> list[str]:
        names = list(columns)
        for name in names:
            if name not in self._schema.names:
                raise unknown_name_error(name, self._schema.names, "field", f" in {self._what}")
        return names

    def scanner(self, schema: Any = None, columns: Any = None, filter: Any = None, **_: Any) -> ds.Scanner:
        """A scanner of ``columns`` (names; all fields when None) of the entries where ``filter``
        (a ``pyarrow.compute.Expression``) holds. Only those fields and the filter's are read.
        Other keywords of ``Dataset.scanner`` (batch size, readahead, ...) are accepted and
        ignored: batches are clusters."""
        if schema is not None and schema != self._schema:
            raise UnsupportedError(f"{self._what} cannot be scanned with another schema")
        if isinstance(columns, dict):
            projected = None  # expressions: any field may be needed
        else:
            projected = self._names(self._schema.names if columns is None else columns)
        if projected is None:
            read = list(self._schema.names)
        else:
            extra = [] if filter is None else _fields_of(filter, self._schema)
            read = [n for n in self._schema.names if n in projected or n in extra]
        if not read and len(self._schema):
            read = [self._schema.names[0]]  # entries are counted from a field's batches
        read_schema = pa.schema([self._schema.field(n) for n in read])
        source = self._reader(None if read == list(self._schema.names) else read_schema)
        return ds.Scanner.from_batches(source, columns=columns, filter=filter)

    def to_table(self, columns: Any = None, filter: Any = None, **kwargs: Any) -> pa.Table:
        """The table of ``columns`` where ``filter`` holds (:meth:`scanner`)."""
        return self.scanner(columns=columns, filter=filter, **kwargs).to_table()

    def to_batches(self, columns: Any = None, filter: Any = None, **kwargs: Any) -> Iterable[pa.RecordBatch]:
        """The record batches (one or more per cluster) of :meth:`scanner`."""
        return self.scanner(columns=columns, filter=filter, **kwargs).to_batches()

    def to_reader(self, columns: Any = None, filter: Any = None, **kwargs: Any) -> pa.RecordBatchReader:
        """A ``RecordBatchReader`` of :meth:`scanner`."""
        return self.scanner(columns=columns, filter=filter, **kwargs).to_reader()

    def head(self, num_rows: int, columns: Any = None, filter: Any = None, **kwargs: Any) -> pa.Table:
        """The first ``num_rows`` rows (reading clusters until they are found)."""
        return self.scanner(columns=columns, filter=filter, **kwargs).head(num_rows)

    def take(
        self, indices: Sequence[int] | pa.Array, columns: Any = None, filter: Any = None, **kwargs: Any
    ) -> pa.Table:
        """The rows at ``indices`` (of the filtered rows)."""
        return self.scanner(columns=columns, filter=filter, **kwargs).take(indices)

    def count_rows(self, filter: Any = None, **kwargs: Any) -> int:
        """The number of entries (where ``filter`` holds: reads its fields)."""
        if filter is None:
            return self._num_rows()
        return self.scanner(columns=[], filter=filter, **kwargs).count_rows()

    def _unavailable(self, name: str) -> UnsupportedError:
        return UnsupportedError(f"{name} is not available on {self._what}'s Arrow dataset: use to_table() first")

    def filter(self, expression: Any) -> Any:
        raise self._unavailable("filter")

    def get_fragments(self, filter: Any = None) -> Any:
        raise self._unavailable("get_fragments")

    def join(self, *args: Any, **kwargs: Any) -> Any:
        raise self._unavailable("join")

    def join_asof(self, *args: Any, **kwargs: Any) -> Any:
        raise self._unavailable("join_asof")

    def replace_schema(self, schema: Any) -> Any:
        raise self._unavailable("replace_schema")

    def sort_by(self, sorting: Any, **kwargs: Any) -> Any:
        raise self._unavailable("sort_by")

    @property
    def partition_expression(self) -> Any:
        raise self._unavailable("partition_expression")

    def __reduce__(self) -> Any:
        raise self._unavailable("pickling")
