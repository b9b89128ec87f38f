"""``File``: a ROOT file opened for reading its RNTuples.

Locations: a local path, a ``file://`` URL, or a URL whose scheme picks a
storage backend of the Rust core (``http(s)://`` and ``s3://``, see
docs/remote.md; ``root://``, ``xroot://``: "no backend for scheme X yet"
until that backend lands).
The dispatch happens once, in the core (``rntuple_container::storage::url``),
so the command line and Python accept the same locations.

Pickling: a ``File`` and the ``RNTuple`` objects it hands out pickle as
(path or URL, name, options) and unpickle by opening the file again, so that
they can be sent to worker processes (``concurrent.futures``, Dask). A local
path is made absolute when the file is opened, so that a worker with another
working directory finds the same file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from . import _lib
from ._filters import Filter, make_filter
from ._ntuple import RNTuple

__all__ = ["RNTUPLE_CLASS", "File", "open"]

RNTUPLE_CLASS = "ROOT::RNTuple"


# `scheme://` at the start of a location (RFC 3986 scheme characters).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _location(path: str) -> str:
    """What a pickled handle reopens: a URL as given, a local path made absolute."""
    return path if _URL.match(path) else os.path.abspath(path)


def _reopen_file(location: str, options: dict[str, Any]) -> File:
    return File(location, **options)


def _reopen_rntuple(location: str, name: str, options: dict[str, Any]) -> RNTuple:
    return File(location, **options)[name]


def _reduce_rntuple(ntuple: RNTuple) -> tuple[Any, ...]:
    """``RNTuple.__reduce__``: (reopen, (path or URL, name with cycle, options))."""
    origin = getattr(ntuple, "_origin", None)
    if origin is None:
        raise TypeError(f"{ntuple!r} was not obtained from a file (rntuple.open(...)[name]) and cannot be pickled")
    return (_reopen_rntuple, origin)


def _split_cycle(where: str) -> tuple[str, int | None]:
    """``"dir/Events;2"`` -> ``("dir/Events", 2)``; ``"Events"`` -> ``("Events", None)``."""
    path, sep, cycle = where.rpartition(";")
    if sep and cycle.strip().lstrip("-").isdigit():
        return path, int(cycle)
    return where, None


def _normalize(path: str) -> str:
    """Drops leading slashes and the cycles of intermediate directories (``"dir;1/Events"``)."""
    parts = [p.rpartition(";")[0] if ";" in p else p for p in path.strip("/").split("/")[:-1]]
    return "/".join([*parts, path.strip("/").split("/")[-1]])


class File:
    """A ROOT file; use ``rntuple.open(path)``.

    A mapping from uproot-style key names (``"Events;1"``, ``"dir/Events;1"``)
    to its RNTuples: ``file["Events"]`` is the highest cycle of ``Events``.
    """

    def __init__(self, path: str | os.PathLike[str], verify_checksums: bool = True, threads: int | None = None) -> None:
        self._path = os.fspath(path)
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 0):
            raise ValueError(f"threads must be None, 0 (one per core) or a positive number, not {threads!r}")
        self._inner: _lib.File | None = _lib.File(self._path, verify_checksums, threads or 0)
        # What a pickle holds: enough to open the same file elsewhere.
        self._location = _location(self._path)
        self._options: dict[str, Any] = {"verify_checksums": bool(verify_checksums), "threads": threads}
        self._keys: list[tuple[str, str, int]] | None = None

    def __repr__(self) -> str:
        state = "" if self._inner is not None else " (closed)"
        return f"<rntuple.File {self._path!r}{state}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as (path or URL, options); unpickling opens the file again."""
        if self._inner is None:
            raise ValueError(f"file {self._path!r} is closed and cannot be pickled")
        return (_reopen_file, (self._location, dict(self._options)))

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Releases the file. RNTuples obtained from it stay readable."""
        self._inner = None

    @property
    def closed(self) -> bool:
        return self._inner is None

    @property
    def path(self) -> str:
        """The path the file was opened with."""
        return self._path

    @property
    def _lib_file(self) -> _lib.File:
        if self._inner is None:
            raise ValueError(f"file {self._path!r} is closed")
        return self._inner

    def _all_keys(self) -> list[tuple[str, str, int]]:
        if self._keys is None:
            self._keys = self._lib_file.keys()
        return self._keys

    def _iter_keys(
        self, recursive: bool, cycle: bool, filter_name: Filter, filter_classname: Filter
    ) -> Iterator[tuple[str, str]]:
        accept_name = make_filter(filter_name)
        accept_class = make_filter(filter_classname)
        seen = set()
        for path, classname, number in self._all_keys():
            if not recursive and "/" in path:
                continue
            if accept_name(path) and accept_class(classname):
                name = f"{path};{number}" if cycle else path
                if name not in seen:  # without cycles, several keys can have one name
                    seen.add(name)
                    yield name, classname

    def keys(
        self,
        recursive: bool = True,
        cycle: bool = True,
        filter_name: Filter = None,
        filter_classname: Filter = None,
    ) -> list[str]:
        """Names of the keys, like uproot: ``"name;cycle"``, subdirectory contents as ``"dir/name;cycle"``.

        Filters apply to the path without cycle and to the class name.
        """
        return [k for k, _ in self._iter_keys(recursive, cycle, filter_name, filter_classname)]

    def classnames(
        self,
        recursive: bool = True,
        cycle: bool = True,
        filter_name: Filter = None,
        filter_classname: Filter = None,
    ) -> dict[str, str]:
        """Class name of every key (``{"Events;1": "ROOT::RNTuple", ...}``)."""
        return dict(self._iter_keys(recursive, cycle, filter_name, filter_classname))

    def rntuple_names(self) -> list[str]:
        """Paths of the RNTuples in the file (highest cycles)."""
        return self._lib_file.rntuple_names()

    def _find(self, where: str) -> tuple[str, str, int]:
        path, number = _split_cycle(where)
        path = _normalize(path)
        candidates = [k for k in self._all_keys() if k[0] == path and (number is None or k[2] == number)]
        if not candidates:
            raise KeyError(f"{where!r} not found in {self._path!r} (keys: {self.keys()})")
        return max(candidates, key=lambda k: k[2])

    def __getitem__(self, where: str) -> RNTuple:
        """The RNTuple at ``where`` (``"Events"``, ``"Events;1"``, ``"dir/Events"``)."""
        path, classname, number = self._find(where)
        if classname != RNTUPLE_CLASS:
            raise TypeError(
                f"{where!r} in {self._path!r} is a {classname}, not a {RNTUPLE_CLASS}; "
                "rntuple reads RNTuples only (use uproot for other objects)"
            )
        ntuple = RNTuple(self._lib_file.rntuple(f"{path};{number}"), self._path, path)
        ntuple._origin = (self._location, f"{path};{number}", dict(self._options))  # for pickling
        return ntuple

    def get(self, where: str, default: Any = None) -> RNTuple | Any:
        """``file[where]``, or ``default`` when there is no such key."""
        try:
            return self[where]
        except KeyError:
            return default

    def __contains__(self, where: object) -> bool:
        if not isinstance(where, str):
            return False
        try:
            self._find(where)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._all_keys())


def open(  # noqa: A001
    path: str | os.PathLike[str], verify_checksums: bool = True, threads: int | None = None
) -> File:
    """Opens a ROOT file for reading its RNTuples: a local path or a ``file://`` URL
    (remote URLs are recognized, their storage backends are still to come).

    ``threads``: threads that decompress and decode pages (None or 0: one
    per core; 1: on the calling thread only); ``arrays(threads=...)``
    overrides it per read. Results do not depend on it.

    >>> with rntuple.open("data.root") as f:
    ...     events = f["Events"].arrays(filter_name="Muon_*")
    """
    return File(path, verify_checksums=verify_checksums, threads=threads)
