"""Hostile write inputs decoded from fuzzer bytes (``atheris.FuzzedDataProvider``).

Every generator takes the provider ``d`` and a length ``n`` and returns a
column (or a whole data object) of one of the kinds ``rntuple.recreate``'s
writers accept: numpy arrays of every dtype and memory layout, awkward arrays
with odd forms, pyarrow arrays of every type, pandas frames with odd indexes,
plain lists. Values that have to stay exact for the read-back check are
recorded in ``Expect``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import awkward as ak
import numpy as np
import pandas as pd

# Field and RNTuple names, from ordinary to odd.
NAMES = [
    "x",
    "pt",
    "f0",
    "",
    ".",
    "/",
    "a.b",
    "a/b",
    "_0",
    " ",
    "é",
    "\u2603",
    "\U0001f642",
    "a" * 300,
    ":",
    "a b",
    "\x00",
    "_collection0",
    "__index_level_0__",
    "x",
    "0",
    "std::vector",
    "-",
]
RNTUPLE_NAMES = ["Events", "", "/", "a/b/c", "/x/", "\u00e9v", "a" * 300, ".", "..", "a//b", " ", "\x00"]
COMPRESSIONS = [
    505,
    "zstd",
    "zstd:99",
    "zstd:0",
    "lz4:-1",
    "lz4",
    "zlib:1",
    "lzma:9",
    "none",
    None,
    0,
    9999,
    -1,
    "",
    "zstd:",
    "gzip",
    "ZSTD:5",
    101,
    404,
    100,
    "zstd:5:5",
    2**40,
    1.5,
    b"zstd",
    "lz4:10",
]
SIZES = [
    0,
    1,
    7,
    256,
    65536,
    "1 MiB",
    "1KiB",
    "-1",
    "abc",
    -5,
    2**31,
    2**63 - 1,
    2**63,
    2**64,
    1e300,
    "10 GiB",
    None,
    "0",
    1.5,
    True,
    "1 EiB",
]
TYPE_NAMES = [
    "std::int32_t",
    "float",
    "double",
    "std::uint8_t",
    "std::string",
    "bool",
    "std::vector<float>",
    "ROOT::VecOps::RVec<double>",
    "std::array<float,0>",
    "std::array<float,3>",
    "std::bitset<5>",
    "std::optional<double>",
    "std::map<std::string,float>",
    "std::unique_ptr<int>",
    "Klass",
    "",
    "std::vector<",
    "std::int64_t",
    "char",
    "std::variant<int,float>",
    "std::pair<int,float>",
    "std::tuple<>",
    "std::set<int>",
    "std::atomic<int>",
    "Double32_t",
    "ROOT::RNTupleCardinality<std::uint32_t>",
    "std::byte",
    "std::int16_t",
    "std::vector<std::vector<bool>>",
    "std::array<std::int8_t,1000000000>",
]
REPRESENTATIONS = [
    "Real16",
    "Real32",
    ("Real32Trunc", 10),
    ("Real32Trunc", 0),
    ("Real32Quant", 8, 0.0, 1.0),
    ("Real32Quant", 40, 1.0, 0.0),
    ("Real32Quant", 1, float("nan"), 1.0),
    "Double32_t",
    "Index32",
    "Index64",
    "split",
    "unsplit",
    "bogus",
    ("Real32Trunc",),
    5,
    ["Real16", "Real32"],
    ("Real32Trunc", 2**20),
]
SPECIAL_FLOATS = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e308, -1e-308, 5e-324, 65504.0, 1e-8]


@dataclasses.dataclass
class Expect:
    """What a written file must read back as: the entry count, the top-level field names in order and,
    for columns whose values survive the conversion exactly, the values (``numpy`` 1-d arrays)."""

    length: int
    names: list[str]
    values: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    # Entries (``ak.to_list``) an awkward input must read back as, when every value is plain.
    entries: list[Any] | None = None


def pick(d: Any, items: list[Any]) -> Any:
    return items[d.ConsumeIntInRange(0, len(items) - 1)]


def name(d: Any) -> str:
    if d.ConsumeIntInRange(0, 7) == 0:
        return d.ConsumeUnicodeNoSurrogates(d.ConsumeIntInRange(0, 12))
    return pick(d, NAMES)


def floats(d: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        out.append(pick(d, SPECIAL_FLOATS) if d.ConsumeIntInRange(0, 3) == 0 else d.ConsumeRegularFloat())
    return out


def ints(d: Any, n: int, lo: int = -(2**63), hi: int = 2**63 - 1) -> list[int]:
    return [d.ConsumeIntInRange(lo, hi) for _ in range(n)]


# ---------------------------------------------------------------------------
# numpy
# ---------------------------------------------------------------------------

PLAIN_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    ">i4",
    ">f8",
    "<u2",
]
ODD_DTYPES = [
    "float16",
    "complex64",
    "complex128",
    "U5",
    "S4",
    "object",
    "datetime64[ns]",
    "datetime64[s]",
    "datetime64[D]",
    "datetime64[Y]",
    "timedelta64[ms]",
    "V3",
    "struct",
    "nested_struct",
    "subarray_struct",
    "longdouble",
    "datetime64",
    "str_object",
]


def numpy_values(d: Any, dtype: str, n: int) -> np.ndarray:
    if dtype == "bool":
        return np.array([d.ConsumeBool() for _ in range(n)], dtype=bool)
    kind = (
        np.dtype(dtype.replace("struct", "i4"))
        if "struct" not in dtype and dtype not in ("object", "str_object")
        else None
    )
    if kind is not None and kind.kind in "iu":
        info = np.iinfo(kind)
        return np.array(ints(d, n, int(info.min), int(info.max)), dtype=kind)
    if kind is not None and kind.kind == "f":
        return np.array(floats(d, n), dtype=np.float64).astype(kind)
    if kind is not None and kind.kind == "c":
        return (np.array(floats(d, n)) + 1j * np.array(floats(d, n))).astype(kind)
    if kind is not None and kind.kind == "U":
        return np.array([d.ConsumeUnicodeNoSurrogates(5) for _ in range(n)], dtype=kind)
    if kind is not None and kind.kind == "S":
        return np.array([d.ConsumeBytes(4) for _ in range(n)], dtype=kind)
    if kind is not None and kind.kind in "mM":
        return (
            np.array(ints(d, n, -(2**62), 2**62), dtype=np.int64).view(kind)
            if kind.name != "datetime64"
            else (np.array(ints(d, n, 0, 2**40), dtype="datetime64[s]").astype("datetime64"))
        )
    if kind is not None and kind.kind == "V":
        return np.frombuffer(d.ConsumeBytes(3 * n).ljust(3 * n, b"\0"), dtype=kind)[:n]
    if dtype == "struct":
        dt = np.dtype([("a", "i4"), ("b", "f8")])
        return np.array([(x, y) for x, y in zip(ints(d, n, -5, 5), floats(d, n), strict=True)], dtype=dt)
    if dtype == "nested_struct":
        dt = np.dtype([("a", [("x", "u1"), ("y", "f4")]), ("b", "?")])
        return np.zeros(n, dtype=dt)
    if dtype == "subarray_struct":
        dt = np.dtype(
            [("a", "i2", (2, d.ConsumeIntInRange(0, 2))), ("", "f4")] if d.ConsumeBool() else [("a", "i2", (3,))]
        )
        return np.zeros(n, dtype=dt)
    if dtype == "str_object":
        return np.array([d.ConsumeUnicodeNoSurrogates(3) for _ in range(n)], dtype=object)
    # object: anything a user might put there
    out = np.empty(n, dtype=object)
    choices = [
        lambda: None,
        lambda: d.ConsumeInt(4),
        lambda: d.ConsumeRegularFloat(),
        lambda: "s",
        lambda: b"b",
        lambda: [1, 2],
        lambda: np.arange(d.ConsumeIntInRange(0, 3)),
        lambda: {"k": 1},
        lambda: np.float32(1),
        lambda: np.arange(4).reshape(2, 2),
        lambda: 2**70,
        lambda: float("nan"),
        lambda: (1, "a"),
        lambda: pd.NA,
    ]
    mode = d.ConsumeIntInRange(0, len(choices))
    for i in range(n):
        out[i] = choices[d.ConsumeIntInRange(0, len(choices) - 1) if mode == len(choices) else mode]()
    return out


def numpy_layout(d: Any, values: np.ndarray, n: int) -> np.ndarray:
    """``values`` (``n`` entries) in an odd memory layout; the result still has ``n`` entries unless the
    layout is 0-d or multi-dimensional on purpose."""
    layout = d.ConsumeIntInRange(0, 9)
    if layout == 1 and n > 0:  # strided view
        return np.repeat(values, 2)[::2] if values.ndim == 1 else values
    if layout == 2:  # reversed
        return values[::-1]
    if layout == 3:  # 0-d
        return values[0] if n > 0 else np.array(0)
    if layout == 4:  # (n, k), maybe k == 0, maybe Fortran order
        k = d.ConsumeIntInRange(0, 3)
        out = np.repeat(values, k).reshape(n, k) if values.ndim == 1 else values
        return np.asfortranarray(out) if d.ConsumeBool() else out
    if layout == 5:  # (n, 2, k)
        k = d.ConsumeIntInRange(0, 2)
        return np.repeat(values, 2 * k).reshape(n, 2, k) if values.ndim == 1 else values
    if layout == 6:  # read-only
        values = values.copy()
        values.flags.writeable = False
        return values
    if layout == 7 and values.dtype.itemsize > 1 and values.dtype.kind in "iuf" and n > 0:  # misaligned
        buf = np.zeros(values.nbytes + 1, dtype=np.uint8)[1:]
        out = buf.view(values.dtype)[:n]
        out[:] = values
        return out
    if layout == 8:  # zero-size slice of a bigger array
        return values[n:]
    return values


def numpy_column(d: Any, n: int, expect: Expect, key: str) -> np.ndarray:
    plain = d.ConsumeBool()
    dtype = pick(d, PLAIN_DTYPES if plain else ODD_DTYPES)
    values = numpy_values(d, dtype, n)
    out = numpy_layout(d, values, n)
    if plain and out.ndim == 1 and len(out) == n:
        expect.values[key] = np.array(out, dtype=values.dtype.newbyteorder("="))
    return out


# ---------------------------------------------------------------------------
# python lists
# ---------------------------------------------------------------------------


def python_item(d: Any, depth: int = 0) -> Any:
    k = d.ConsumeIntInRange(0, 9 if depth < 3 else 4)
    if k == 0:
        return None
    if k == 1:
        return d.ConsumeInt(8)
    if k == 2:
        return pick(d, SPECIAL_FLOATS)
    if k == 3:
        return d.ConsumeUnicodeNoSurrogates(4)
    if k == 4:
        return d.ConsumeBool()
    if k in (5, 6):
        return [python_item(d, depth + 1) for _ in range(d.ConsumeIntInRange(0, 3))]
    if k == 7:
        return {pick(d, ["a", "b", ""]): python_item(d, depth + 1) for _ in range(d.ConsumeIntInRange(0, 2))}
    if k == 8:
        return d.ConsumeBytes(3)
    return (python_item(d, depth + 1), python_item(d, depth + 1))


def python_column(d: Any, n: int) -> list[Any]:
    if d.ConsumeBool():  # homogeneous: one recipe for every entry
        recipe = d.ConsumeIntInRange(0, 3)
        if recipe == 0:
            return [d.ConsumeInt(4) for _ in range(n)]
        if recipe == 1:
            return [[d.ConsumeRegularFloat() for _ in range(d.ConsumeIntInRange(0, 3))] for _ in range(n)]
        if recipe == 2:
            return [d.ConsumeUnicodeNoSurrogates(3) if d.ConsumeIntInRange(0, 4) else None for _ in range(n)]
        return [{"a": d.ConsumeInt(2), "b": [d.ConsumeBool()] * d.ConsumeIntInRange(0, 2)} for _ in range(n)]
    return [python_item(d) for _ in range(n)]


# ---------------------------------------------------------------------------
# awkward
# ---------------------------------------------------------------------------


def awkward_layout(d: Any, n: int, depth: int = 0) -> ak.contents.Content:
    k = d.ConsumeIntInRange(0, 15 if depth < 3 else 2)
    num = ak.contents.NumpyArray
    if k == 0:
        return num(np.array(floats(d, n)))
    if k == 1:
        return num(np.array(ints(d, n, -100, 100), dtype=pick(d, ["i1", "u8", "i8", "bool"])))
    if k == 2:  # strings
        return ak.to_layout([d.ConsumeUnicodeNoSurrogates(3) for _ in range(n)])
    if k == 3:  # jagged
        counts = [d.ConsumeIntInRange(0, 3) for _ in range(n)]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(pick(d, ["i4", "i8", "u4"]))
        return ak.contents.ListOffsetArray(ak.index.Index(offsets), awkward_layout(d, int(offsets[-1]), depth + 1))
    if k == 4:  # regular, maybe size 0
        size = d.ConsumeIntInRange(0, 2)
        return ak.contents.RegularArray(awkward_layout(d, n * size, depth + 1), size, zeros_length=n)
    if k == 5:  # record, maybe without fields, maybe a tuple
        nf = d.ConsumeIntInRange(0, 3)
        fields = None if d.ConsumeIntInRange(0, 3) == 0 else [name(d) for _ in range(nf)]
        if fields is not None and len(set(fields)) != len(fields):
            fields = [f"{f}{i}" for i, f in enumerate(fields)]
        params = {"__record__": "Klass"} if d.ConsumeBool() else None
        return ak.contents.RecordArray(
            [awkward_layout(d, n, depth + 1) for _ in range(nf)], fields, length=n, parameters=params
        )
    if k == 6:  # option (byte-masked / bit-masked / indexed / unmasked)
        inner = awkward_layout(d, n, depth + 1)
        mask = np.array([d.ConsumeBool() for _ in range(n)], dtype=np.int8)
        kind = d.ConsumeIntInRange(0, 3)
        if kind == 0:
            return ak.contents.ByteMaskedArray.simplified(ak.index.Index8(mask), inner, valid_when=d.ConsumeBool())
        if kind == 1:
            return ak.contents.UnmaskedArray.simplified(inner)
        index = np.where(mask.astype(bool), np.arange(n), -1).astype(np.int64)
        return ak.contents.IndexedOptionArray.simplified(ak.index.Index64(index), inner)
    if k == 7:  # option of option (not simplified)
        inner = ak.contents.UnmaskedArray(awkward_layout(d, n, depth + 1))
        index = np.array([i if d.ConsumeBool() else -1 for i in range(n)], dtype=np.int64)
        return ak.contents.IndexedOptionArray(ak.index.Index64(index), inner)
    if k == 8:  # union
        a, b = awkward_layout(d, n, depth + 1), awkward_layout(d, n, depth + 1)
        tags = np.array([d.ConsumeIntInRange(0, 1) for _ in range(n)], dtype=np.int8)
        return ak.contents.UnionArray(ak.index.Index8(tags), ak.index.Index64(np.arange(n)), [a, b])
    if k == 9:  # indexed (a permutation, maybe repeating)
        m = d.ConsumeIntInRange(1, 4)
        inner = awkward_layout(d, m, depth + 1)
        return ak.contents.IndexedArray(ak.index.Index64(np.array(ints(d, n, 0, m - 1), dtype=np.int64)), inner)
    if k == 10:  # categorical
        m = d.ConsumeIntInRange(1, 3)
        inner = ak.to_layout([d.ConsumeUnicodeNoSurrogates(2) for _ in range(m)])
        idx = ak.index.Index64(np.array(ints(d, n, 0, m - 1), dtype=np.int64))
        return ak.contents.IndexedArray(idx, inner, parameters={"__array__": "categorical"})
    if k == 11:  # parameters on a plain array
        return num(np.array(ints(d, n, 0, 9), dtype=np.int32), parameters={pick(d, ["__doc__", "x", "__array__"]): "y"})
    if k == 12:  # list with start/stop arrays (not offsets)
        starts = np.array(ints(d, n, 0, 2), dtype=np.int64)
        stops = starts + np.array(ints(d, n, 0, 2), dtype=np.int64)
        return ak.contents.ListArray(ak.index.Index64(starts), ak.index.Index64(stops), awkward_layout(d, 4, depth + 1))
    if k == 13:  # datetime / complex numpy inside
        return num(
            np.array(ints(d, n, 0, 2**40), dtype="datetime64[ms]")
            if d.ConsumeBool()
            else np.array(floats(d, n), dtype=np.complex128)
        )
    if k == 14:  # empty array, no type
        return ak.contents.EmptyArray() if n == 0 else num(np.zeros(n))
    return ak.to_layout(ak.from_iter(python_column(d, n), highlevel=False))


def awkward_array(d: Any, n: int, names: list[str]) -> ak.Array:
    layout = ak.contents.RecordArray([awkward_layout(d, n) for _ in names], names, length=n)
    if d.ConsumeIntInRange(0, 5) == 0 and n > 1:  # sliced record array
        return ak.Array(layout)[1:]
    return ak.Array(layout)


def plain(value: Any, top: bool = True) -> bool:
    """Whether ``ak.to_list`` output holds only values every conversion keeps: numbers, strings,
    None, lists and records of them (no bytes, tuples, datetimes or complex numbers), and no record
    member below the top level named ``_0``, ``_1``... (read back as ``0``, ``1``..., as uproot
    names them)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(plain(v, top) for v in value)
    if isinstance(value, dict):
        return all(
            isinstance(k, str) and (top or re.fullmatch(r"_[0-9]+", k) is None) and plain(v, False)
            for k, v in value.items()
        )
    return False


def same(a: Any, b: Any) -> bool:
    """``a == b`` with NaN equal to NaN and 1 == 1.0 == True as Python has it."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b
