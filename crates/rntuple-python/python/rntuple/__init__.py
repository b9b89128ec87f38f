"""Read and write ROOT RNTuple files: a fast, independent implementation with a Rust core.

>>> import rntuple
>>> with rntuple.open("nano.root") as f:
...     events = f["Events"].arrays(filter_name=["nMuon", "Muon_*"])
>>> with rntuple.recreate("out.root") as f:
...     f["Events"] = events

``arrays()`` returns awkward arrays with the same forms uproot gives for the
same data; ``library="np"``, ``"pd"`` and ``"pa"`` give numpy, pandas and
pyarrow instead. ``recreate()`` writes awkward arrays, pyarrow tables, pandas
DataFrames and dicts of arrays.
"""

from __future__ import annotations

from . import _lib
from ._fields import Field
from ._file import File, open
from ._lib import (
    AllocationError,
    ChecksumError,
    DecompressionError,
    FormatError,
    RNTupleError,
    TruncatedError,
    UnsupportedError,
    WriteError,
)
from ._ntuple import Cluster, Column, RNTuple
from ._write import RNTupleWriter, WritableFile, compression_setting, recreate

__version__: str = _lib.__version__

__all__ = [
    "AllocationError",
    "ChecksumError",
    "Cluster",
    "Column",
    "DecompressionError",
    "Field",
    "File",
    "FormatError",
    "RNTuple",
    "RNTupleError",
    "RNTupleWriter",
    "TruncatedError",
    "UnsupportedError",
    "WritableFile",
    "WriteError",
    "__version__",
    "compression_setting",
    "open",
    "recreate",
]
