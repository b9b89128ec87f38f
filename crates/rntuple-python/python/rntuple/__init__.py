"""Read ROOT RNTuple files: a fast, independent reader with a Rust core.

>>> import rntuple
>>> with rntuple.open("nano.root") as f:
...     events = f["Events"].arrays(filter_name=["nMuon", "Muon_*"])

``arrays()`` returns awkward arrays with the same forms uproot gives for the
same data; ``library="np"``, ``"pd"`` and ``"pa"`` give numpy, pandas and
pyarrow instead.
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
)
from ._ntuple import Cluster, Column, RNTuple

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
    "TruncatedError",
    "UnsupportedError",
    "__version__",
    "open",
]
