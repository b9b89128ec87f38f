"""Streamer fields (``ROOT::RStreamerField``) read as values.

ROOT stores such a field's object whole, streamed by ``TBufferFile`` with the
class's streamer info, which it keeps in the footer. The reader returns one
blob of bytes per entry; :func:`decode_columns` turns the top-level streamer
fields of a batch into Arrow arrays with the types a split field of the class
would have (records of the members, ``:_0`` for a base class, lists for
``std::vector`` and C arrays, strings), decoded in Rust
(``rntuple::streamer``). What cannot be decoded (a member type not handled,
a class missing from the streamer info, bytes that disagree with it) stays
bytes, with a ``UserWarning`` naming the field, the class and the reason.
Streamer fields nested inside other fields stay bytes.
"""

from __future__ import annotations

import warnings
from typing import Any

import awkward as ak
import pyarrow as pa

STREAMER = "streamer"


def decode_columns(inner: Any, batch: pa.RecordBatch, fields: list[Any]) -> pa.RecordBatch:
    """``batch`` with its top-level streamer columns decoded where possible."""
    kinds = {f.name: f for f in fields if f.kind == STREAMER}
    if not kinds:
        return batch
    columns = []
    changed = False
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        f = kinds.get(name)
        if f is not None and (pa.types.is_large_binary(column.type) or pa.types.is_binary(column.type)):
            try:
                column = pa.array(inner.decode_streamer(f.type_name, column))
                changed = True
            except ValueError as e:
                warnings.warn(
                    f"streamer field {name!r} of class {f.type_name}: kept as bytes ({e})", UserWarning, stacklevel=4
                )
        columns.append(column)
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)


def is_decoded(arr: pa.Array) -> bool:
    """Whether a streamer field's array holds decoded values (not bytes)."""
    return not (pa.types.is_large_binary(arr.type) or pa.types.is_binary(arr.type))


def to_layout(arr: pa.Array) -> ak.contents.Content:
    """The awkward layout of decoded streamer values (no option types: nothing in them is null)."""
    layout = ak.from_arrow(arr, highlevel=False)
    return ak.to_layout(ak.drop_none(ak.Array(layout)), allow_record=False) if layout.is_option else layout
