"""The exceptions of the package: every one derives from :class:`RNTupleError`.

The classes are made by the Rust core (``src/errors.rs``, where the one mapping
of its error enum onto them lives); those with a built-in meaning derive from
the built-in exception too (``InvalidArgumentError`` is a ``ValueError``,
``NotFoundError`` a ``KeyError``, ``MissingFileError`` a ``FileNotFoundError``
...), so that ``except ValueError`` keeps working. Python code of the package
raises these classes, never the built-ins alone.
"""

from __future__ import annotations

import difflib

from ._lib import (
    AllocationError,
    ChecksumError,
    DecompressionError,
    DirectoryError,
    FormatError,
    InternalError,
    InvalidArgumentError,
    MemoryLimitError,
    MissingFileError,
    NotFoundError,
    OutOfMemoryError,
    PermissionDeniedError,
    RNTupleError,
    StateError,
    StorageError,
    TruncatedError,
    UnsupportedError,
    WriteError,
    WrongTypeError,
)

__all__ = [
    "AllocationError",
    "ChecksumError",
    "DecompressionError",
    "DirectoryError",
    "FormatError",
    "InternalError",
    "InvalidArgumentError",
    "MemoryLimitError",
    "MissingDependencyError",
    "MissingFileError",
    "NotFoundError",
    "OutOfMemoryError",
    "PermissionDeniedError",
    "RNTupleError",
    "StateError",
    "StorageError",
    "TruncatedError",
    "UnsupportedError",
    "WriteError",
    "WrongTypeError",
]


class MissingDependencyError(RNTupleError, ImportError):
    """An optional dependency a feature needs is not installed (also an ImportError)."""


# The classes are made by the extension module (``rntuple._lib``) but belong to the package's API:
# tracebacks and reprs name them as users import them, ``rntuple.TruncatedError``.
for _name in __all__:
    globals()[_name].__module__ = "rntuple"
del _name


def close_names(name: str, known: list[str], n: int = 5) -> list[str]:
    """The known names closest to ``name`` (each once, closest first), else those containing it."""
    unique = list(dict.fromkeys(known))
    close = difflib.get_close_matches(name, unique, n=n, cutoff=0.6)
    if not close:
        lowered = name.lower()
        close = [k for k in unique if lowered in k.lower()][:n]
    return close


def unknown_name_error(
    name: str, known: list[str], what: str, where: str = "", head: str | None = None
) -> NotFoundError:
    """A short :class:`NotFoundError` (a ``KeyError``) for an unknown ``name``: the closest known names,
    not all of them. The message starts ``no {what} {name!r}{where}`` (or ``head``)."""
    close = close_names(name, known)
    count = len(set(known))
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else f" ({count} {what}s)"
    return NotFoundError(f"{head or f'no {what} {name!r}{where}'}{hint}")
