"""The Arrow PyCapsule stream of an RNTuple (``RNTuple.__arrow_c_stream__``).

Any consumer of the Arrow C stream interface reads an RNTuple without an
intermediate table: ``pyarrow.RecordBatchReader.from_stream(nt)``,
``pyarrow.table(nt)``, ``duckdb.sql("select ... from nt")``,
``polars.from_arrow(nt)``. The stream yields one record batch per cluster, in
the Arrow types ``arrays(library="pa")`` gives, so a consumer holds one
cluster's columns at a time.

How it crosses: each cluster is read by the Rust core into an Arrow record
batch that reaches pyarrow through the Arrow C data interface (no copy of
the buffers); the batches are handed on by a ``pyarrow.RecordBatchReader``
over a Python generator, whose C stream the consumer pulls. The values are
never copied through Python objects, but each batch passes through the
interpreter (a C stream produced by Rust alone, without the generator, is
for a later version).

A ``requested_schema`` (the consumer's wish, an Arrow schema capsule) selects
fields by name: only those are read (projection), in its order, and cast to
its types when they differ (pyarrow's casts; an impossible cast raises).
An unknown field name raises ``NotFoundError`` naming the close ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ._errors import unknown_name_error

__all__ = ["chain_reader", "record_batch_reader"]


def _requested(requested_schema: Any) -> pa.Schema | None:
    """The ``pa.Schema`` of a requested-schema capsule (or of a schema-like object), or None."""
    if requested_schema is None:
        return None
    if isinstance(requested_schema, pa.Schema):
        return requested_schema
    if hasattr(requested_schema, "__arrow_c_schema__"):
        return pa.schema(requested_schema)
    return pa.Schema._import_from_c_capsule(requested_schema)


def record_batch_reader(ntuple: Any, requested_schema: Any = None) -> pa.RecordBatchReader:
    """A reader of ``ntuple``'s (an ``RNTuple``'s) readable top-level fields (or of those ``requested_schema`` names),
    one record batch per cluster, in the types of ``arrays(library="pa")``."""
    wanted = _requested(requested_schema)
    names: list[str] | None = None
    if wanted is not None:
        known = [f.name for f in ntuple.fields if f.readable]
        names = list(wanted.names)
        for name in names:
            if name not in known:
                raise unknown_name_error(name, known, "field", f" in RNTuple '{ntuple.name}'")
    empty = ntuple.arrays(names, entry_start=0, entry_stop=0, library="pa")
    schema = empty.schema if wanted is None else wanted

    def batches() -> Iterator[pa.RecordBatch]:
        for cluster in ntuple.clusters:
            start, stop = cluster.first_entry, cluster.first_entry + cluster.num_entries
            table = ntuple.arrays(names, entry_start=start, entry_stop=stop, library="pa")
            if wanted is not None and table.schema != wanted:
                table = table.cast(wanted)
            yield from table.to_batches()

    return pa.RecordBatchReader.from_batches(schema, batches())


def chain_reader(chain: Any, requested_schema: Any = None) -> pa.RecordBatchReader:
    """A reader of a ``Chain``'s fields (or of those ``requested_schema`` names), one batch per
    step of ``chain.iterate(step_size="100 MB")`` (whole clusters, never two files), in the
    types of ``chain.arrays(library="pa")``."""
    wanted = _requested(requested_schema)
    names = None if wanted is None else list(wanted.names)
    schema = wanted if wanted is not None else chain.arrays(entry_start=0, entry_stop=0, library="pa").schema

    def batches() -> Iterator[pa.RecordBatch]:
        for table in chain.iterate(names, library="pa"):
            if table.schema != schema:
                table = table.cast(schema)
            yield from table.to_batches()

    return pa.RecordBatchReader.from_batches(schema, batches())
