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
    """The awkward layout of decoded streamer values (no option types: nothing in them is null),
    base classes flattened as in split fields' records (:func:`_flatten_bases`)."""
    layout = ak.from_arrow(arr, highlevel=False)
    if layout.is_option:
        layout = ak.to_layout(ak.drop_none(ak.Array(layout)), allow_record=False)
    return _flatten_bases(layout)


def _is_base(name: str) -> bool:
    return name.startswith(":_") and name[2:].isdigit()


def _flatten_bases(layout: ak.contents.Content) -> ak.contents.Content:
    """Records with base-class members ``:_N`` get the bases' members in their place, in the order
    uproot and the split fields' forms use (``Field.record_members``: the record's own members, then
    the bases', the last base first, depth first). A base whose member names would collide with names
    already there stays a nested ``:_N`` record."""
    if isinstance(layout, ak.contents.RecordArray):
        contents = [_flatten_bases(c) for c in layout.contents]
        names: list[str] = []
        out: list[ak.contents.Content] = []
        pending = [(layout.fields, contents)]
        while pending:
            fields, items = pending.pop()
            for name, c in zip(fields, items, strict=True):
                if _is_base(name) and isinstance(c, ak.contents.RecordArray) and not set(c.fields) & set(names):
                    pending.append((c.fields, c.contents))
                else:
                    names.append(name)
                    out.append(c)
        return ak.contents.RecordArray(out, names, length=layout.length)
    if isinstance(layout, ak.contents.ListOffsetArray):
        return ak.contents.ListOffsetArray(layout.offsets, _flatten_bases(layout.content), parameters=layout.parameters)
    if isinstance(layout, ak.contents.RegularArray):
        return ak.contents.RegularArray(
            _flatten_bases(layout.content), layout.size, zeros_length=layout.length, parameters=layout.parameters
        )
    return layout
