"""Hostile pyarrow arrays and pandas frames decoded from fuzzer bytes (see ``hostile.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from hostile import Expect, floats, ints, name, numpy_column, pick, python_column

# ---------------------------------------------------------------------------
# pyarrow
# ---------------------------------------------------------------------------


def arrow_column(d: Any, n: int, depth: int = 0) -> pa.Array:
    k = d.ConsumeIntInRange(0, 22 if depth < 2 else 5)
    if k == 0:
        return pa.array(
            ints(d, n, -(2**31), 2**31 - 1), type=pick(d, [pa.int32(), pa.int64(), pa.uint64(), pa.int8()]), safe=False
        )
    if k == 1:
        return pa.array(
            floats(d, n), type=pick(d, [pa.float64(), pa.float32(), pa.float16()]) if False else pa.float64()
        )
    if k == 2:
        return pa.array(
            [d.ConsumeUnicodeNoSurrogates(3) for _ in range(n)],
            type=pick(d, [pa.string(), pa.large_string(), pa.string_view()]),
        )
    if k == 3:
        return pa.array(
            [d.ConsumeBytes(3) for _ in range(n)],
            type=pick(d, [pa.binary(), pa.large_binary(), pa.binary(3), pa.binary_view()]),
        )
    if k == 4:
        return pa.nulls(n, type=pick(d, [pa.null(), pa.int32(), pa.string()]))
    if k == 5:
        return pa.array([d.ConsumeBool() if d.ConsumeIntInRange(0, 3) else None for _ in range(n)], type=pa.bool_())
    if k == 6:  # dictionary
        dictionary = pa.array(["a", "b", "c"]) if d.ConsumeBool() else pa.array([1.5, 2.5])
        idx = pa.array(ints(d, n, 0, len(dictionary) - 1), type=pick(d, [pa.int8(), pa.uint32(), pa.int64()]))
        return pa.DictionaryArray.from_arrays(idx, dictionary)
    if k in (7, 8):  # list / large_list / list_view / large_list_view / fixed_size_list
        size = d.ConsumeIntInRange(0, 3)
        kind = d.ConsumeIntInRange(0, 4)
        if kind == 4:
            return pa.FixedSizeListArray.from_arrays(arrow_column(d, n * size, depth + 1), size)
        counts = [d.ConsumeIntInRange(0, 3) for _ in range(n)]
        offsets = np.concatenate([[0], np.cumsum(counts)])
        values = arrow_column(d, int(offsets[-1]), depth + 1)
        if kind == 0:
            return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
        if kind == 1:
            return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), values)
        cls = pa.ListViewArray if kind == 2 else pa.LargeListViewArray
        return cls.from_arrays(
            pa.array(offsets[:-1], pa.int32() if kind == 2 else pa.int64()),
            pa.array(counts, pa.int32() if kind == 2 else pa.int64()),
            values,
        )
    if k == 9:  # decimal
        return pa.array([d.ConsumeIntInRange(-999, 999) for _ in range(n)], pa.int64()).cast(
            pick(d, [pa.decimal128(5, 2), pa.decimal256(40, 0), pa.decimal128(38, 38)]), safe=False
        )
    if k == 10:  # map
        counts = [d.ConsumeIntInRange(0, 2) for _ in range(n)]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
        m = int(offsets[-1])
        keys = pa.array([d.ConsumeUnicodeNoSurrogates(2) for _ in range(m)]) if d.ConsumeBool() else pa.array(range(m))
        return pa.MapArray.from_arrays(pa.array(offsets), keys, arrow_column(d, m, depth + 1))
    if k == 11:  # struct, maybe with duplicate or no names
        nf = d.ConsumeIntInRange(0, 3)
        names = [name(d) for _ in range(nf)]
        if nf == 0:
            return pa.array([{}] * n, type=pa.struct([]))
        return pa.StructArray.from_arrays([arrow_column(d, n, depth + 1) for _ in names], names)
    if k == 12:  # sliced (offset into a bigger array)
        extra = d.ConsumeIntInRange(0, 3)
        return arrow_column(d, n + extra, depth + 1).slice(extra, n)
    if k == 13:  # time types
        t = pick(
            d,
            [
                pa.date32(),
                pa.date64(),
                pa.time32("s"),
                pa.time64("ns"),
                pa.duration("us"),
                pa.timestamp("ns"),
                pa.timestamp("s", tz="Europe/Zurich"),
                pa.month_day_nano_interval(),
            ],
        )
        if t == pa.month_day_nano_interval():
            return pa.array([(1, 2, 3)] * n, type=t)
        return (
            pa.array(ints(d, n, 0, 10**6), pa.int64()).cast(t, safe=False)
            if t != pa.time32("s")
            else pa.array(ints(d, n, 0, 86399), pa.int32()).cast(t)
        )
    if k == 14:  # unions
        children = [arrow_column(d, n, depth + 1), arrow_column(d, n, depth + 1)]
        types = pa.array([d.ConsumeIntInRange(0, 1) for _ in range(n)], pa.int8())
        if d.ConsumeBool():
            return pa.UnionArray.from_sparse(types, children)
        return pa.UnionArray.from_dense(types, pa.array(range(n), pa.int32()), children)
    if k == 15:  # run-end encoded
        return pa.RunEndEncodedArray.from_arrays(pa.array(range(1, n + 1), pa.int32()), pa.array(range(n)))
    if k == 16:  # float16
        return pa.array(np.array(floats(d, n), dtype=np.float16))
    if k == 17:  # nulls inside a non-null-looking type
        values = ints(d, n, -3, 3)
        return pa.array([v if v else None for v in values], pa.int16())
    if k == 18:  # extension type (uuid / json / bool8 in pyarrow >= 18)
        return (
            pa.array([b"0123456789abcdef"] * n, pa.binary(16)).cast(pa.uuid()) if hasattr(pa, "uuid") else pa.nulls(n)
        )
    if k == 19:  # list with nulls and a sliced child
        inner = arrow_column(d, n, depth + 1)
        return pa.ListArray.from_arrays(
            pa.array(list(range(n)) + [n], pa.int32()), inner, mask=pa.array([d.ConsumeBool() for _ in range(n)])
        )
    if k == 20:  # nested list of structs
        return pa.array([[{"a": 1, "b": "x"}] * d.ConsumeIntInRange(0, 2) for _ in range(n)])
    if k == 21:  # int64 extremes
        return pa.array(ints(d, n), pa.int64())
    return pa.array([pick(d, [None, 1.0, float("nan")]) for _ in range(n)])


def chunked(d: Any, array: pa.Array) -> pa.ChunkedArray:
    """``array`` cut into chunks at fuzzer-chosen points (maybe empty chunks)."""
    cuts = sorted(d.ConsumeIntInRange(0, len(array)) for _ in range(d.ConsumeIntInRange(0, 3)))
    pieces, start = [], 0
    for c in [*cuts, len(array)]:
        pieces.append(array.slice(start, c - start))
        start = c
    return pa.chunked_array(pieces, type=array.type)


# ---------------------------------------------------------------------------
# pandas
# ---------------------------------------------------------------------------


def pandas_index(d: Any, n: int) -> Any:
    k = d.ConsumeIntInRange(0, 8)
    if k == 0:
        return pd.RangeIndex(5, 5 + 2 * n, 2)
    if k == 1:
        return pd.Index(ints(d, n, -5, 5), name=pick(d, [None, "idx", "x", ""]))
    if k == 2:
        return pd.Index([d.ConsumeUnicodeNoSurrogates(2) for _ in range(n)])
    if k == 3:
        return pd.MultiIndex.from_arrays(
            [list(range(n)), [str(i) for i in range(n)]], names=[pick(d, [None, "a", "x"]), None]
        )
    if k == 4:
        return pd.date_range("2020-01-01", periods=n, freq="h", tz=pick(d, [None, "UTC"]))
    if k == 5:
        return pd.Index(floats(d, n))
    if k == 6:
        return pd.CategoricalIndex([pick(d, ["a", "b"]) for _ in range(n)])
    if k == 7:
        return pd.IntervalIndex.from_breaks(range(n + 1)) if n else pd.RangeIndex(0)
    return pd.RangeIndex(n)


def pandas_column(d: Any, n: int, expect: Expect, key: str) -> Any:
    k = d.ConsumeIntInRange(0, 7)
    if k == 0:
        return numpy_column(d, n, expect, key)
    if k == 1:
        return pd.array(
            [v if d.ConsumeBool() else pd.NA for v in ints(d, n, -9, 9)], dtype=pick(d, ["Int64", "UInt8", "Float32"])
        )
    if k == 2:
        return pd.Categorical([pick(d, ["a", "b", None]) for _ in range(n)])
    if k == 3:
        return pd.array(
            [d.ConsumeUnicodeNoSurrogates(2) if d.ConsumeBool() else None for _ in range(n)], dtype="string"
        )
    if k == 4:  # per-entry numpy arrays (library="pd" reads of jagged fields)
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = np.arange(d.ConsumeIntInRange(0, 3), dtype=pick(d, ["f8", "i4"]))
        return out
    if k == 5:
        return pd.to_datetime(ints(d, n, 0, 10**12), unit="s", utc=d.ConsumeBool())
    if k == 6:
        return pd.array([d.ConsumeBool() if d.ConsumeBool() else pd.NA for _ in range(n)], dtype="boolean")
    return python_column(d, n)
