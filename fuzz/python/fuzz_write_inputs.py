"""atheris fuzz target: the Python write inputs of ``rntuple.recreate`` (issue 16).

The fuzzer's bytes decode (``hostile.py``) into a structured hostile input:
a dict of numpy arrays / plain lists / pyarrow arrays, an awkward record
array, a pyarrow Table or RecordBatch, a pandas DataFrame or a dict of
types; odd field and RNTuple names, mismatched lengths; random writer
keywords (compression strings, sizes, budgets), type overrides and
representations. It is written to a file in a tmpfs directory by one of
``file[name] = data``, ``mkrntuple(name, data) + extend(...)``,
``mkrntuple(name, rntuple.schema_of(data)) + extend(data)``.

An input passes when either

* a Python exception of the allowed families is raised (``ALLOWED``:
  ``ValueError`` — which ``rntuple.WriteError`` and pyarrow's ``ArrowInvalid``
  are —, ``TypeError``, ``KeyError``, ``OverflowError``,
  ``NotImplementedError``, ``rntuple.RNTupleError`` and its subclasses), or
* the file is completed and reads back through ``rntuple.open(...)`` with
  the entries of every accepted batch, the input's top-level field names in
  order and, for plain numeric 1-d numpy columns, equal values (NaN equal
  to NaN).

Anything else is a bug: another exception (``pyo3_runtime.PanicException``,
``IndexError``, ``AttributeError``, ``MemoryError``, ...), a completed file
that does not read back or reads back different, a hang (libFuzzer's
``-timeout``) or an unbounded allocation (``-rss_limit_mb``).

    fuzz/python/run.sh 30                                   # what CI runs (.ci/fuzz_python)
    python fuzz/python/fuzz_write_inputs.py crash-input     # replay one input

``check(data)`` is the same test as a function (used by
``tests/python/test_fuzz_regressions.py``): it raises ``Bug`` on a finding.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import sys
import tempfile
import warnings
from typing import Any

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

with atheris.instrument_imports(include=["rntuple", "hostile", "hostile_frames"]):
    import awkward as ak
    import hostile as h
    import hostile_frames as hf
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import rntuple

ALLOWED = (ValueError, TypeError, KeyError, OverflowError, NotImplementedError, rntuple.RNTupleError)


class Bug(AssertionError):
    """A finding: the write-input code did something the contract above does not allow."""


# libFuzzer ends the process with exit(), past Python's clean-up: the runner scripts give a
# directory (RNTUPLE_PYFUZZ_TMP) they remove afterwards; else (pytest, a replay) it is made here and
# removed at the interpreter's exit.
_TMP = os.environ.get("RNTUPLE_PYFUZZ_TMP") or tempfile.mkdtemp(
    prefix="rntuple-pyfuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None
)
if "RNTUPLE_PYFUZZ_TMP" not in os.environ:
    atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
_PATH = os.path.join(_TMP, "out.root")


# ---------------------------------------------------------------------------
# decoding the bytes into an input
# ---------------------------------------------------------------------------


def _lengths(d: Any, n: int, count: int) -> list[int]:
    """The entries of each column: ``n``, or (rarely) another length."""
    return [n if d.ConsumeIntInRange(0, 7) else d.ConsumeIntInRange(0, 9) for _ in range(count)]


def _index_names(index: Any) -> list[str]:
    """The columns a non-RangeIndex adds, named as the docs of ``mkrntuple`` say (pyarrow's rule)."""
    if isinstance(index, pd.RangeIndex):
        return []
    return [f"__index_level_{i}__" if n is None else str(n) for i, n in enumerate(index.names)]


def build_data(d: Any) -> tuple[Any, h.Expect]:
    """One data object and what it must read back as."""
    kind = d.ConsumeIntInRange(0, 7)
    n = d.ConsumeIntInRange(0, 9) if d.ConsumeIntInRange(0, 5) else d.ConsumeIntInRange(0, 300)
    names = [h.name(d) for _ in range(d.ConsumeIntInRange(0 if d.ConsumeIntInRange(0, 7) == 0 else 1, 4))]
    if kind not in (3, 4):  # dict keys and DataFrame columns: unique (pyarrow keeps duplicates)
        names = list(dict.fromkeys(names))
    lengths = _lengths(d, n, len(names))
    expect = h.Expect(n, [])
    if kind == 0:  # dict of numpy arrays
        data = {k: h.numpy_column(d, m, expect, k) for k, m in zip(names, lengths, strict=True)}
        expect.names = list(data)
    elif kind == 1:  # dict of plain lists
        data = {k: h.python_column(d, m) for k, m in zip(names, lengths, strict=True)}
        expect.names = list(data)
    elif kind == 2:  # awkward record array
        unique = list(dict.fromkeys(names))
        data = h.awkward_array(d, n, unique)
        expect.length, expect.names = len(data), list(data.fields)
        entries = data.to_list()
        expect.entries = entries if h.plain(entries) else None
    elif kind in (3, 4):  # pyarrow Table / RecordBatch (duplicate names possible)
        arrays = [hf.arrow_column(d, m) for m in lengths]
        if kind == 3:
            data = pa.Table.from_arrays([hf.chunked(d, a) for a in arrays], names=names)
        else:
            data = pa.RecordBatch.from_arrays(arrays, names=names)
        expect.names = list(names)
    elif kind == 5:  # pandas DataFrame
        columns = {k: hf.pandas_column(d, n, expect, k) for k in names}
        frame = pd.DataFrame(columns, index=hf.pandas_index(d, n))
        if d.ConsumeIntInRange(0, 5) == 0 and names:  # non-string column labels
            frame.columns = [pick for pick in range(len(frame.columns))]
            expect.values.clear()
        data = frame
        expect.names = [str(c) for c in frame.columns] + _index_names(frame.index)
        expect.values = {k: v for k, v in expect.values.items() if k in frame.columns}
    elif kind == 6:  # dict of mixed kinds
        data = {}
        for k, m in zip(names, lengths, strict=True):
            which = d.ConsumeIntInRange(0, 3)
            if which == 0:
                data[k] = h.numpy_column(d, m, expect, k)
            elif which == 1:
                data[k] = hf.arrow_column(d, m)
            elif which == 2:
                data[k] = ak.Array(h.awkward_layout(d, m))
            else:
                data[k] = pd.Series(h.python_column(d, m), dtype=object)
        expect.names = list(data)
    else:  # types only (schema), nothing written with it
        specs = [
            "var * float32",
            "int32",
            "?float64",
            "string",
            "{x: int32, y: var * bool}",
            "var * var * int8",
            "bogus",
            "3 * float32",
            "0 * int64",
            "union[int32, string]",
            "datetime64",
            np.int32,
            np.float16,
            np.dtype("U3"),
            np.dtype("O"),
            ak.types.from_datashape("var * ?int64", highlevel=False),
            "?string",
            "bytes",
            "complex128",
            "timedelta64[s]",
        ]
        data = {k: h.pick(d, specs) for k in names}
        expect.names, expect.length = list(data), 0
    if isinstance(data, pa.Table | pa.RecordBatch):
        expect.length = data.num_rows
    elif isinstance(data, dict) and kind != 7:
        expect.length = _common_length(data.values(), n)
    return data, expect


def _common_length(columns: Any, default: int) -> int:
    """The length all columns share (what a dict of them writes), else ``default`` (it is refused)."""
    try:
        lengths = {len(c) for c in columns}
    except TypeError:  # a 0-d numpy array
        return default
    return lengths.pop() if len(lengths) == 1 else default


def build_options(d: Any) -> dict[str, Any]:
    """Writer keywords. The names are listed here on purpose, not taken from ``rntuple._write``: an
    option the package stopped accepting is still tried, and regression inputs keep decoding alike."""
    opts: dict[str, Any] = {}
    for _ in range(d.ConsumeIntInRange(0, 4)):
        key = h.pick(
            d,
            [
                "compression",
                "compression_level",
                "approx_zipped_cluster_size",
                "max_unzipped_cluster_size",
                "initial_unzipped_page_size",
                "max_unzipped_page_size",
                "page_buffer_budget",
                "memory_budget",
                "page_checksums",
                "same_page_merging",
                "index32",
                "cluster_group_size",
                "compression_threads",
                "description",
                "bogus_option",
            ],
        )
        if key == "compression":
            opts[key] = h.pick(d, h.COMPRESSIONS)
        elif key in ("compression_level", "cluster_group_size", "compression_threads"):
            opts[key] = h.pick(d, [0, 1, 3, 9, 99, -1, 2**31, 2**64, None, "5", 1.5, True])
        elif key in ("page_checksums", "same_page_merging", "index32"):
            opts[key] = h.pick(d, [True, False, np.bool_(True), 1, "yes", None])
        elif key == "description":
            opts[key] = h.pick(d, ["", "d\u00e9scription", "\x00", "x" * 70000, 5])
        else:
            opts[key] = h.pick(d, h.SIZES)
    return opts


def build_overrides(d: Any, names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not names or d.ConsumeIntInRange(0, 3):
        return out
    paths = [*names, f"{names[0]}._0", f"{names[0]}._0.x", "nope"]
    if d.ConsumeBool():
        out["types"] = {h.pick(d, paths): h.pick(d, h.TYPE_NAMES) for _ in range(d.ConsumeIntInRange(1, 2))}
    else:
        out["representations"] = {h.pick(d, paths): h.pick(d, h.REPRESENTATIONS)}
    return out


# ---------------------------------------------------------------------------
# writing and reading back
# ---------------------------------------------------------------------------


def _write(d: Any, data: Any, expect: h.Expect) -> tuple[str, h.Expect] | None:
    """Writes ``data`` as asked by the bytes; returns the RNTuple name and what it must read back as,
    or None when an allowed exception refused it (then the file is abandoned or without it)."""
    mode = d.ConsumeIntInRange(0, 3)
    name = h.pick(d, h.RNTUPLE_NAMES) if d.ConsumeIntInRange(0, 5) == 0 else "Events"
    file_opts = build_options(d) if d.ConsumeIntInRange(0, 3) == 0 else {}
    opts = build_options(d)
    overrides = build_overrides(d, expect.names)
    if overrides:  # a lossy representation (Real16, Real32Trunc, ...) or another type: values may change
        expect = h.Expect(expect.length, expect.names)
    opts.update(overrides)
    more, more_expect = build_data(d) if mode == 3 else (None, None)
    commit = d.ConsumeIntInRange(0, 3) == 0
    with rntuple.recreate(_PATH, **file_opts) as f:
        if mode == 0:
            if opts:
                f.mkrntuple(name, data, **opts).close()
            else:
                f[name] = data
            return name, expect
        if mode == 1:  # the schema of the data, then the data
            schema = rntuple.schema_of(data)
            w = f.mkrntuple(name, schema, **opts)
            w.extend(data)
            w.close()
            return name, expect
        w = f.mkrntuple(name, data, **opts)
        written = h.Expect(
            0 if isinstance(data, dict) and rntuple._write._is_schema_only(data) else expect.length,
            expect.names,
            dict(expect.values),
            expect.entries,
        )
        for batch, e in [(data, expect)] if mode == 2 else [(more, more_expect)]:
            if commit:
                w.commit_cluster()
            try:
                w.extend(batch)
            except ALLOWED:
                continue  # a refused batch leaves the writer usable and writes nothing
            if e.names != written.names:
                raise Bug(f"extend accepted a batch with fields {e.names} into an RNTuple with fields {written.names}")
            written.length += e.length
            written.entries = None if written.entries is None or e.entries is None else written.entries + e.entries
            written.values = {
                k: np.concatenate([written.values[k], e.values[k]]) for k in written.values if k in e.values
            }
        w.close()
        return name, written


def _read_back(name: str, expect: h.Expect) -> None:
    with rntuple.open(_PATH) as f:
        names = f.rntuple_names()
        if len(names) != 1:
            raise Bug(f"the file has RNTuples {names}, expected one named {name!r}")
        array = f[names[0]].arrays()
    if len(array) != expect.length:
        raise Bug(f"read back {len(array)} entries, wrote {expect.length}")
    if list(array.fields) != expect.names:
        raise Bug(f"read back fields {array.fields}, wrote {expect.names}")
    if expect.entries is not None:
        got_entries = array.to_list()
        if not h.same(got_entries, expect.entries):
            raise Bug(f"read back {got_entries!r}, wrote {expect.entries!r}")
    for key, want in expect.values.items():
        got = ak.to_numpy(array[key])
        if got.dtype.kind == "M" or want.dtype.kind == "M":
            got, want = got.view(np.int64), want.view(np.int64)
        nan = want.dtype.kind == "f"
        if got.shape != want.shape or not np.array_equal(got, want.astype(got.dtype), equal_nan=nan):
            raise Bug(f"field {key!r}: read back {got!r}, wrote {want!r}")


def check(data: bytes) -> None:
    """The test of one input; raises ``Bug`` (or the unexpected exception) on a finding."""
    d = atheris.FuzzedDataProvider(data)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value, expect = build_data(d)
    except Exception:
        return  # the decoder made something numpy/pyarrow/awkward/pandas refuse to build: not an input
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = _write(d, value, expect)
    except Bug:
        raise
    except ALLOWED:
        return
    except BaseException as err:
        if isinstance(err, KeyboardInterrupt):
            raise
        raise Bug(f"writing raised {type(err).__module__}.{type(err).__name__}, not an allowed error: {err}") from err
    finally:
        gc.collect()
    if result is not None:
        try:
            _read_back(*result)
        except Bug:
            raise
        except BaseException as err:
            raise Bug(f"a file the writer completed does not read back: {type(err).__name__}: {err}") from err


def TestOneInput(data: bytes) -> None:  # noqa: N802 (atheris' name)
    check(data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
