"""``File``: a ROOT file opened for reading its RNTuples.

Locations: a local path, a ``file://`` URL, or a URL whose scheme picks a
storage backend of the Rust core (``root://``, ``xroot://``, ``http(s)://``,
``s3://``). The dispatch happens once, in the core
(``rntuple_container::storage::url``), so the command line and Python accept
the same locations. A remote file can be read through a local cache
(``cache=DIR`` or ``RNTUPLE_CACHE_DIR``) that keeps exactly the bytes read.

Pickling: a ``File`` and the ``RNTuple`` objects it hands out pickle as
(path or URL, name, options) and unpickle by opening the file again, so that
they can be sent to worker processes (``concurrent.futures``, Dask). A local
path is made absolute when the file is opened, so that a worker with another
working directory finds the same file.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Iterator
from typing import Any

from . import _lib
from ._credentials import picklable_location
from ._errors import StateError, WrongTypeError, unknown_name_error
from ._fields import Field
from ._filters import Filter, make_filter
from ._ntuple import RNTuple
from ._read_args import OpenOptions, memory_budget, takes, takes_after

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
    return File(location, **options)._rntuple(name)


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

    @takes_after(OpenOptions)
    def __init__(self, path: Any, options: OpenOptions) -> None:
        verify_checksums, threads = options.verify_checksums, options.threads
        cache, coalesce_gap, max_request = options.cache, options.coalesce_gap, options.max_request
        cache = None if cache is None else os.path.abspath(os.path.expanduser(os.fspath(cache)))
        budget, page_cap = memory_budget(options.max_memory), memory_budget(options.max_page_size, "max_page_size")
        envelope_cap = memory_budget(options.max_envelope_size, "max_envelope_size")
        if _is_file_like(path):
            # Read through the object's seek/read, as the reader asks (_lib.open_reader, src/readat.rs),
            # with the budget and caps a path gets.
            self._inner: _lib.File | None = _lib.open_reader(
                path, verify_checksums, threads or 0, budget, page_cap, envelope_cap
            )
            self._path = self._inner.path
            self._location: str | None = None
        else:
            self._path = os.fspath(path)
            self._inner = _lib.File(
                self._path,
                verify_checksums,
                threads or 0,
                cache,
                coalesce_gap,
                max_request,
                budget,
                page_cap,
                envelope_cap,
            )
            # What a pickle holds: enough to open the same file elsewhere.
            self._location = _location(self._path)
        self._options = OpenOptions(
            verify_checksums,
            threads,
            cache,
            coalesce_gap,
            max_request,
            max_memory=options.max_memory,
            max_page_size=options.max_page_size,
            max_envelope_size=options.max_envelope_size,
        ).given()
        self._keys: list[tuple[str, str, int]] | None = None
        self._ntuples: weakref.WeakSet[RNTuple] = weakref.WeakSet()

    def __repr__(self) -> str:
        state = "" if self._inner is not None else " (closed)"
        return f"<rntuple.File {self._path!r}{state}>"

    def _repr_html_(self) -> str:
        """The notebook view: the keys, with entries and fields of the RNTuples (``_html``)."""
        from ._html import file_html

        return file_html(self)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as (path or URL, options); unpickling opens the file again."""
        if self._inner is None:
            raise StateError(f"file {self._path!r} is closed and cannot be pickled")
        if self._location is None:
            raise WrongTypeError(f"file {self._path!r} was opened from a file-like object and cannot be pickled")
        return (_reopen_file, (picklable_location(self._location), dict(self._options)))

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
            raise StateError(f"file {self._path!r} is closed")
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
            raise unknown_name_error(
                where, self.keys(cycle=False), "key", head=f"{where!r} not found in {self._path!r}"
            )
        return max(candidates, key=lambda k: k[2])

    def _split_field(self, where: str) -> tuple[str, str] | None:
        """``"Events/Muon_pt"`` -> ``("Events", "Muon_pt")`` when ``Events`` is an RNTuple key."""
        path = _split_cycle(where)[0].strip("/")
        names = {k[0] for k in self._all_keys() if k[1] == RNTUPLE_CLASS}
        parts = path.split("/")
        for i in range(len(parts) - 1, 0, -1):
            if "/".join(parts[:i]) in names:
                return "/".join(parts[:i]), "/".join(parts[i:])
        return None

    def __getitem__(self, where: str) -> RNTuple | Field:
        """The RNTuple at ``where`` (``"Events"``, ``"Events;1"``, ``"dir/Events"``), or as in
        uproot a field of one (``"Events/Muon_pt"``, ``"Events/jets/pt"``)."""
        if where not in self:
            split = self._split_field(where)
            if split is not None:
                return self._rntuple(split[0])[split[1]]
        return self._rntuple(where)

    def _rntuple(self, where: str) -> RNTuple:
        path, classname, number = self._find(where)
        if classname != RNTUPLE_CLASS:
            raise WrongTypeError(
                f"{where!r} in {self._path!r} is a {classname}, not a {RNTUPLE_CLASS}; "
                "rntuple reads RNTuples only (use uproot for other objects)"
            )
        ntuple = RNTuple(self._lib_file.rntuple(f"{path};{number}"), self._path, path)
        if self._location is not None:  # for pickling (not a file-like object's)
            ntuple._origin = (self._location, f"{path};{number}", dict(self._options))
            ntuple._reopen = _reopen_rntuple
        self._ntuples.add(ntuple)
        return ntuple

    def io_stats(self) -> dict[str, Any]:
        """I/O of the file so far: the planner's figures summed over the RNTuples
        read from it (see :meth:`RNTuple.io_stats`), ``file_size``, and ``wire``,
        the storage's figures (metadata included; ``None`` for a local file)."""
        keys = ("requests", "vectored_calls", "bytes_read", "bytes_needed", "pages", "read_time")
        total: dict[str, Any] = dict.fromkeys(keys, 0)
        for ntuple in list(self._ntuples):
            stats = ntuple.io_stats()
            for key in keys:
                total[key] += stats[key]
        total["read_rate"] = total["bytes_read"] / total["read_time"] if total["read_time"] > 0 else 0.0
        total["file_size"] = self._lib_file.size
        total["wire"] = self._lib_file.transport_stats()
        return total

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

    def items(self, recursive: bool = True, cycle: bool = True, filter_name: Filter = None) -> list[tuple[str, Any]]:
        """``(key, RNTuple)`` of the RNTuples among the keys, as uproot's ``items()`` (other objects are
        not read by this package and are left out)."""
        names = self.keys(recursive, cycle, filter_name, RNTUPLE_CLASS)
        return [(name, self[name]) for name in names]

    def values(self, recursive: bool = True, cycle: bool = True, filter_name: Filter = None) -> list[Any]:
        """The RNTuples among the keys (see :meth:`items`)."""
        return [value for _, value in self.items(recursive, cycle, filter_name)]

    def __len__(self) -> int:
        return len(self._all_keys())


def _is_file_like(obj: Any) -> bool:
    return not isinstance(obj, str | bytes | os.PathLike) and hasattr(obj, "read") and hasattr(obj, "seek")


@takes(OpenOptions)
def open(path: Any, options: OpenOptions) -> Any:  # noqa: A001
    """Opens a ROOT file for reading its RNTuples: a local path, a ``file://``
    URL, or a remote URL (``root://``, ``xroot://``, ``http(s)://``, ``s3://``).

    As in uproot, ``"file.root:Events"`` (also ``"root://host//f.root:dir/Events"``)
    returns the RNTuple ``Events`` instead of the file; the file is closed with
    the RNTuple's last reference. A binary file-like object (``read`` and ``seek``:
    ``io.BytesIO``, an open file, an fsspec file) is read through its methods,
    only the byte ranges the reader needs, one ``seek`` + ``read`` at a time
    (memory stays bounded; such a file cannot be pickled).

    ``threads``: threads that decompress and decode pages (None or 0: one
    per core; 1: on the calling thread only); ``arrays(threads=...)``
    overrides it per read. Results do not depend on it.

    ``cache``: a directory where the bytes read from a remote file are kept
    (exactly the ranges read; a changed remote file is never served stale);
    default: ``RNTUPLE_CACHE_DIR`` if set. Local files are never cached.

    ``coalesce_gap``, ``max_request``: bytes; two needed pages at most
    ``coalesce_gap`` apart are read in one request of at most ``max_request``
    bytes. Default: the storage's (64 KiB and 8 MiB for a local file).

    ``max_memory``: the memory budget of each read (bytes, or ``"2 GB"`` /
    ``"2 GiB"`` as ``step_size`` takes them; default: none); ``arrays`` and
    ``iterate`` take it per read too. A read over it fails with
    :class:`MemoryLimitError` (a ``MemoryError``) before allocating.
    ``max_page_size``: the largest decompressed page accepted (default 1 GiB);
    ``max_envelope_size``: the largest header, footer or page list envelope
    accepted, stored or inflated, checked before it is read (default 1 GiB).
    Without a budget, a read the machine cannot hold raises
    :class:`OutOfMemoryError` (a ``MemoryError``) instead of ending the process.

    ``RNTUPLE_IO_REPORT=1`` prints an I/O report of every RNTuple read to
    stderr when its handle goes or at exit (``RNTuple.io_report()`` gives it).

    >>> with rntuple.open("data.root") as f:
    ...     events = f["Events"].arrays(filter_name="Muon_*")
    """
    if _is_file_like(path):
        return File(path, **options.given())
    text = os.fspath(path) if isinstance(path, str | os.PathLike) else path
    if isinstance(text, str) and ":" not in text:
        return File(text, **options.given())  # no URL, no ":NAME" (and no import of the dataset module)
    from ._dataset import object_spec

    where, name = object_spec(path)
    if name is None:
        return File(where, **options.given())
    return File(where, **options.given())[name]
