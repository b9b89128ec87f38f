"""Read and write ROOT RNTuple files: a fast, independent implementation with a Rust core.

>>> import rntuple
>>> with rntuple.open("nano.root") as f:
...     events = f["Events"].arrays(filter_name=["nMuon", "Muon_*"])
>>> with rntuple.recreate("out.root") as f:
...     f["Events"] = events

``arrays()`` returns awkward arrays with the same forms uproot gives for the
same data; ``library="np"``, ``"pd"`` and ``"pa"`` give numpy, pandas and
pyarrow instead. ``recreate()`` writes awkward arrays, pyarrow tables, pandas
DataFrames and dicts of arrays. ``convert()`` turns TTrees and Parquet files
into RNTuples (and RNTuples into Parquet); ``draw()`` histograms an
expression of fields into a PNG.
"""

# The names of `__all__` below come from `_errors` (star import) or are
# loaded lazily by `__getattr__`: none is defined here.
# ruff: noqa: F405

from __future__ import annotations

import importlib
from typing import Any

from . import _lib

# Every exception class of the package (listed once, in `_errors.__all__`).
from ._errors import *  # noqa: F403
from ._errors import __all__ as _EXCEPTIONS

# The rest of the API is imported on first use (PEP 562), so that the
# `rntuple` command starts without importing awkward, pyarrow and uproot
# for the subcommands that do not need them (ls, show, inspect, verify, merge...).
_LAZY = {
    "_attributes": ("AttributeSetWriter",),
    "_chain": ("Chain", "SchemaMismatchError", "chain", "concatenate", "iterate"),
    "_results": ("Report",),
    "_convert": ("ConvertError", "ConvertResult", "convert"),
    "_draw": ("DrawError", "Histogram", "draw"),
    "_fields": ("Field",),
    "_join": ("Join", "join"),
    "_file": ("File", "open"),
    "_ntuple": ("AttributeSet", "Cluster", "Column", "RNTuple"),
    "_parallel": ("FillContext", "ParallelWriter"),
    "_writer": ("RNTupleWriter",),
    "_tools": ("FileReport", "MergeSummary", "Problem", "VerifyReport", "inspect", "merge", "recover", "verify"),
    "_write": ("WritableFile", "compression_setting", "recreate", "schema_of"),
    "_update": ("RNTupleUpdater", "UpdatableFile", "update"),
    "integrations.dask": ("dask",),
    "integrations.dask_write": ("DaskWriteResult", "dask_write"),
    "integrations.polars": ("scan_polars",),
}
_ORIGIN = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    if name == "study":  # the subpackage (rntuple.study.layout / knobs), imported on first use
        return importlib.import_module(".study", __name__)
    module = _ORIGIN.get(name)
    if module is None:
        raise AttributeError(f"module 'rntuple' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ORIGIN) | {"study"})


__version__: str = _lib.__version__

__all__ = [
    *_EXCEPTIONS,
    "AttributeSet",
    "AttributeSetWriter",
    "Chain",
    "Cluster",
    "Column",
    "ConvertError",
    "ConvertResult",
    "DaskWriteResult",
    "DrawError",
    "Field",
    "File",
    "FileReport",
    "FillContext",
    "Histogram",
    "Join",
    "MergeSummary",
    "ParallelWriter",
    "Problem",
    "RNTuple",
    "RNTupleWriter",
    "Report",
    "RNTupleUpdater",
    "SchemaMismatchError",
    "UpdatableFile",
    "VerifyReport",
    "WritableFile",
    "__version__",
    "chain",
    "compression_setting",
    "concatenate",
    "convert",
    "dask",
    "dask_write",
    "draw",
    "inspect",
    "iterate",
    "join",
    "merge",
    "open",
    "recover",
    "recreate",
    "scan_polars",
    "schema_of",
    "update",
    "verify",
]
