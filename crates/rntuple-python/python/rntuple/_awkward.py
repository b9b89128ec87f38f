"""Arrow arrays from the reader to awkward layouts with uproot's forms.

The layouts are built directly on the Arrow buffers (``numpy.frombuffer``),
so numbers, offsets and string bytes are not copied. The reader already gives
the dtypes uproot's forms use (``rntuple::ArrowShape::ColumnTypes``: numbers in
their column's type, booleans one byte each, 32-bit offsets for 32-bit index
columns). Copies happen only where uproot's form needs other values: validity
bitmaps become option indices and variant tags are shifted.

Form per field kind (uproot 5.7 for RNTuple):

===========================  ==============================================
primitive, cardinality       NumpyArray of the first column's type
string                       ListOffsetArray(NumpyArray uint8 "char") "string"
streamer (uproot: error)     decoded (at any depth): the split field's form (_streamer.py);
                             else ListOffsetArray(NumpyArray uint8 "byte") "bytestring"
collection                   ListOffsetArray (offsets i32 for 32-bit index columns)
std::optional                IndexedOptionArray (of a variant: UnionArray of
                             option contents)
std::unique_ptr              IndexedOptionArray, as ROOT reads it (uproot:
                             ListOffsetArray with zero or one item)
std::array, std::bitset      RegularArray
class                        RecordArray with field names
pair, tuple, empty class     RecordArray without field names (a tuple)
std::variant                 UnionArray(i8, i64): [IndexedOptionArray(EmptyArray)
                             for the valueless state, UnmaskedArray(alternative)...]
std::atomic, enum            the inner type
===========================  ==============================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import awkward as ak
import numpy as np
import pyarrow as pa

from ._errors import InternalError
from ._streamer import is_decoded
from ._streamer import to_layout as streamer_layout

if TYPE_CHECKING:
    from ._fields import Field

__all__ = ["batch_to_layout", "field_to_layout"]

# numpy dtype of each fixed-width Arrow type the reader produces (by the type's name).
_ARROW_DTYPE: dict[str, np.dtype] = {
    name: np.dtype(dt)
    for name, dt in [
        ("int8", np.int8),
        ("uint8", np.uint8),
        ("int16", np.int16),
        ("uint16", np.uint16),
        ("int32", np.int32),
        ("uint32", np.uint32),
        ("int64", np.int64),
        ("uint64", np.uint64),
        ("halffloat", np.float16),
        ("float", np.float32),
        ("double", np.float64),
    ]
}


def _index_is_32bit(f: Field) -> bool:
    """Whether the field's index column is 32-bit (uproot then uses an i32 index for its option)."""
    return bool(f.columns and f.columns[0] and f.columns[0][0][2] == 32)


def _is_bit(f: Field) -> bool:
    """Whether the field's values are a Bit column (read one byte per boolean)."""
    return bool(f.columns and f.columns[0] and f.columns[0][0][1] == "Bit")


def _index(values: np.ndarray, wide: bool) -> ak.index.Index:
    if wide:
        return ak.index.Index64(values.astype(np.int64, copy=False))
    return ak.index.Index32(values.astype(np.int32, copy=False))


def _buffer_values(arr: pa.Array, which: int, dtype: np.dtype, count: int, start: int) -> np.ndarray:
    """``count`` values of ``dtype`` from buffer ``which`` of ``arr`` starting at element ``start`` (no copy)."""
    buf = arr.buffers()[which]
    if count == 0 or buf is None:
        return np.empty(0, dtype)
    return np.frombuffer(buf, dtype, count=start + count)[start:]


def _bits(buf: pa.Buffer | None, first: int, n: int) -> np.ndarray:
    """``n`` bits of an Arrow bitmap from bit ``first``, as numpy bools."""
    if n == 0 or buf is None:
        return np.empty(0, np.bool_)
    raw = np.frombuffer(buf, np.uint8, count=(first + n + 7) // 8)
    return np.unpackbits(raw, count=first + n, bitorder="little")[first:].view(np.bool_)


def _numbers(arr: pa.Array, boolean: bool = False) -> np.ndarray:
    """Values of a fixed-width Arrow array as numpy, ignoring its validity (booleans come one byte each)."""
    values = _buffer_values(arr, 1, _ARROW_DTYPE[str(arr.type)], len(arr), arr.offset)
    return values.view(np.bool_) if boolean else values


def _valid(arr: pa.Array) -> np.ndarray:
    """Validity of each element as a numpy bool array."""
    if arr.null_count == 0:
        return np.ones(len(arr), np.bool_)
    return _bits(arr.buffers()[0], arr.offset, len(arr))


def _list_offsets(arr: pa.Array) -> ak.index.Index:
    """The ``len(arr) + 1`` offsets of a list, string or binary array (32 or 64-bit, no copy)."""
    large = pa.types.is_large_list(arr.type) or pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    dtype = np.dtype(np.int64 if large else np.int32)
    if len(arr) == 0:
        values = np.zeros(1, dtype)
    else:
        values = _buffer_values(arr, 1, dtype, len(arr) + 1, arr.offset)
    return ak.index.Index64(values) if large else ak.index.Index32(values)


def _bytes_list(arr: pa.Array, parameters: dict, inner: dict) -> ak.contents.Content:
    offsets = _list_offsets(arr)
    n = int(offsets[-1])
    data = _buffer_values(arr, 2, np.dtype(np.uint8), n, 0)
    content = ak.contents.NumpyArray(data, parameters=inner)
    return ak.contents.ListOffsetArray(offsets, content, parameters=parameters)


def field_to_layout(arr: pa.Array, f: Field, keys: frozenset[str] | None = None) -> ak.contents.Content:
    """The awkward layout of field ``f`` from its Arrow array (whose validity, if any, belongs to a parent).

    With ``keys`` (the display paths of the selected fields, of all their
    subfields and of all their ancestors), record members not in ``keys`` are
    left out, as uproot does when a filter selects some subfields of a record.
    """
    kind = f.kind
    if kind in ("primitive", "cardinality"):
        return ak.contents.NumpyArray(_numbers(arr, _is_bit(f)))
    if kind == "string":
        return _bytes_list(arr, {"__array__": "string"}, {"__array__": "char"})
    if kind == "streamer":
        if is_decoded(arr):
            return streamer_layout(arr)
        return _bytes_list(arr, {"__array__": "bytestring"}, {"__array__": "byte"})
    if kind == "collection":
        content = field_to_layout(arr.values, f.children[0], keys)
        return ak.contents.ListOffsetArray(_list_offsets(arr), content)
    if kind == "optional":
        return _optional(arr, f, keys)
    if kind in ("array", "bitset"):
        size = arr.type.list_size
        values = arr.values.slice(arr.offset * size, len(arr) * size)
        if kind == "array":
            content = field_to_layout(values, f.children[0], keys)
        else:
            content = ak.contents.NumpyArray(_numbers(values, boolean=True))
        return ak.contents.RegularArray(content, size, zeros_length=len(arr))
    if kind == "record":
        return _record(arr, f, keys)
    if kind == "variant":
        return _variant(arr, f, keys)
    if kind == "wrapper":
        return field_to_layout(arr, f.children[0], keys)
    raise InternalError(f"field '{f.path}' of type '{f.type_name}' cannot be converted ({kind})")


def _optional(arr: pa.Array, f: Field, keys: frozenset[str] | None) -> ak.contents.Content:
    """``std::optional`` and ``std::unique_ptr`` -> IndexedOptionArray (None or the value, as ROOT reads
    both); around a ``std::variant`` the option goes into the union's contents (awkward has no option
    of a union)."""
    valid = _valid(arr)
    content = field_to_layout(arr, f.children[0], keys)
    wide = not _index_is_32bit(f)
    positions = np.arange(len(arr), dtype=np.int64 if wide else np.int32)
    index = _index(np.where(valid, positions, -1), wide)
    if content.is_union:
        return ak.contents.IndexedOptionArray.simplified(index, content)
    return ak.contents.IndexedOptionArray(index, content)


def _record(arr: pa.Array, f: Field, keys: frozenset[str] | None) -> ak.contents.Content:
    contents = []
    names = []
    for member, route in f.record_members():
        if keys is not None and not member.in_variant and member.display_path not in keys:
            continue  # not read (the reader leaves out unselected members)
        a, at = arr, f
        for i in route:
            at = at.children[i]
            a = a.field(at.name)
        contents.append(field_to_layout(a, member, keys))
        names.append(member.display_name)
    return ak.contents.RecordArray(contents, None if f.is_tuple_like() else names, length=len(arr))


def _variant(arr: pa.Array, f: Field, keys: frozenset[str] | None) -> ak.contents.Content:
    """Dense union -> uproot's union with an extra first content for valueless variants."""
    # (UnionArray.type_codes and .offsets ignore a slice's offset; the buffers don't.)
    codes = _buffer_values(arr, 1, np.dtype(np.int8), len(arr), arr.offset)
    offsets = _buffer_values(arr, 2, np.dtype(np.int32), len(arr), arr.offset)
    alternative = np.empty(256, np.int8)
    alternative[np.asarray(arr.type.type_codes, np.uint8)] = np.arange(arr.type.num_fields, dtype=np.int8)
    tags = alternative[codes.view(np.uint8)] + np.int8(1)
    index = offsets.astype(np.int64)
    # Valueless entries point at null slots of the first alternative.
    first = arr.field(0)
    if first.null_count:
        in_first = tags == 1
        null_slot = in_first.copy()
        null_slot[in_first] = ~_valid(first)[offsets[in_first]]
        tags[null_slot] = 0
        index[null_slot] = np.arange(np.count_nonzero(null_slot))
    n_invalid = int(np.count_nonzero(tags == 0))
    contents: list[ak.contents.Content] = [
        ak.contents.IndexedOptionArray(ak.index.Index64(np.full(n_invalid, -1, np.int64)), ak.contents.EmptyArray())
    ]
    for k, child in enumerate(f.children):
        c = field_to_layout(arr.field(k), child, keys)
        if not (c.is_option or c.is_union):
            c = ak.contents.UnmaskedArray(c)
        contents.append(c)
    return ak.contents.UnionArray(ak.index.Index8(tags), ak.index.Index64(index), contents)


def batch_to_layout(
    batch: pa.RecordBatch, fields: list[Field], keys: frozenset[str] | None = None
) -> ak.contents.RecordArray:
    """A record batch of top-level fields (in the order of ``fields``) as one RecordArray.

    ``keys``: see :func:`field_to_layout`; None keeps every member.
    """
    contents = [field_to_layout(batch.column(i), f, keys) for i, f in enumerate(fields)]
    return ak.contents.RecordArray(contents, [f.name for f in fields], length=batch.num_rows)
