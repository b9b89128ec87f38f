"""Streamer fields (``ROOT::RStreamerField``) read as values.

ROOT stores such a field's object whole, streamed by ``TBufferFile`` with the
class's streamer info, which it keeps in the footer. The reader (Rust,
``rntuple::streamer``) decodes every streamer field it reads, at any depth (a
member of a split class, the item of a collection), into the Arrow array a
split field of the class would have (records of the members, ``:_0`` for a
base class, lists for ``std::vector`` and C arrays, strings). What cannot be
decoded (a member type not handled, a class missing from the streamer info,
bytes that disagree with it) stays bytes; :func:`warn_undecoded` turns the
reasons the read returns into a ``UserWarning`` per field naming the field,
the class and the reason. :func:`to_layout` makes the awkward layout of
decoded values.
"""

from __future__ import annotations

import warnings

import awkward as ak
import pyarrow as pa


def warn_undecoded(undecoded: list[tuple[str, str, str]]) -> None:
    """A ``UserWarning`` for each (field path, class, reason) of a streamer field a read left as bytes."""
    for path, type_name, reason in undecoded:
        warnings.warn(
            f"streamer field {path!r} of class {type_name}: kept as bytes ({reason})", UserWarning, stacklevel=4
        )


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
