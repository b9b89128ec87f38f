"""``RNTuple``: one RNTuple of an open file, read into awkward, numpy, pandas or pyarrow."""

from __future__ import annotations

import atexit
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

import awkward as ak
import pyarrow as pa

from ._awkward import batch_to_layout
from ._fields import Field, build_fields, iter_fields
from ._filters import Filter, make_filter, parse_memory_size
from ._numpy import to_numpy_dict, to_pandas

if TYPE_CHECKING:
    from . import _lib
    from ._attributes import AttributeSet

__all__ = ["Cluster", "Column", "RNTuple"]

_LIBRARIES = {
    "ak": "ak",
    "awkward": "ak",
    "np": "np",
    "numpy": "np",
    "pd": "pd",
    "pandas": "pd",
    "pa": "pa",
    "pyarrow": "pa",
    "arrow": "pa",
}

# Entries read to estimate the bytes per entry when iterating by memory size.
_PROBE_ENTRIES = 1000

# Handles alive, so that their I/O reports are printed at exit
# (RNTUPLE_IO_REPORT=1) even when the garbage collector never frees them.
_LIVE: weakref.WeakSet[RNTuple] = weakref.WeakSet()


@atexit.register
def _print_io_reports() -> None:
    for ntuple in list(_LIVE):
        ntuple._inner.print_io_report()


class Column(NamedTuple):
    """A physical column (spec "Column Description")."""

    id: int
    type: str
    bits: int
    field_id: int
    representation: int


class Cluster(NamedTuple):
    """A cluster: a range of entries stored together."""

    first_entry: int
    num_entries: int
    group: int


def _library(library: str) -> str:
    try:
        return _LIBRARIES[library.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"library must be one of 'ak', 'np', 'pd' or 'pa', not {library!r}") from None


def _threads(threads: int | None) -> int | None:
    """Checks a ``threads`` argument: None (the file's setting), 0 (one per core) or a positive count."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(f"threads must be None, 0 (one per core) or a positive number, not {threads!r}")
    return threads


def _entry_range(num_entries: int, entry_start: int | None, entry_stop: int | None) -> tuple[int, int]:
    """Python-slice-like bounds: None means the end, negative counts from the end, clamped to the entries."""
    start = 0 if entry_start is None else int(entry_start)
    stop = num_entries if entry_stop is None else int(entry_stop)
    if start < 0:
        start += num_entries
    if stop < 0:
        stop += num_entries
    start = min(num_entries, max(0, start))
    stop = min(num_entries, max(0, stop))
    return start, max(start, stop)


class RNTuple:
    """An RNTuple: a table of entries whose fields may be nested.

    Obtained from a file, ``rntuple.open("f.root")["Events"]``.
    """

    def __init__(self, inner: _lib.RNTuple, file_path: str | None = None, name: str | None = None) -> None:
        self._inner = inner
        self._file_path = file_path
        self._name = inner.name if name is None else name
        self._fields: list[Field] | None = None
        # (location, "name;cycle", options) of the file it came from, set by
        # ``File`` so that the handle pickles (``_file._reduce_rntuple``).
        self._origin: tuple[str, str, dict[str, Any]] | None = None
        _LIVE.add(self)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as (path or URL, name, options); unpickling opens the file again (``_file``)."""
        from ._file import _reduce_rntuple

        return _reduce_rntuple(self)

    def __repr__(self) -> str:
        where = f" in {self._file_path!r}" if self._file_path else ""
        return f"<RNTuple {self.name!r} ({self.num_entries} entries, {len(self.fields)} fields){where}>"

    @property
    def name(self) -> str:
        """Path of the RNTuple in its file (``"Events"``, ``"dir/Events"``)."""
        return self._name

    @property
    def num_entries(self) -> int:
        """Number of entries."""
        return self._inner.num_entries

    def __len__(self) -> int:
        return self._inner.num_entries

    @property
    def description(self) -> str:
        """The description stored in the header."""
        return self._inner.description

    @property
    def fields(self) -> list[Field]:
        """Top-level fields, each with its subfields (``Field.children``)."""
        if self._fields is None:
            self._fields = build_fields(self._inner.fields())
        return self._fields

    def field_tree(self) -> list[dict[str, Any]]:
        """The field tree as nested dicts."""
        return [f.to_dict() for f in self.fields]

    def _iter_named(self, filter_name: Filter, recursive: bool) -> Iterator[tuple[str, Field]]:
        accept = make_filter(filter_name)
        if not recursive:
            yield from ((f.name, f) for f in self.fields if accept(f.name))
            return
        for f in iter_fields(self.fields):
            path = f.display_path
            if path is not None and accept(path):
                yield path, f

    def keys(self, filter_name: Filter = None, recursive: bool = False) -> list[str]:
        """Names of the top-level fields; with ``recursive=True`` also dotted paths of subfields.

        Subfield paths are those of the awkward records (uproot's ``keys()``):
        item fields of collections and base classes add no segment.
        """
        return [name for name, _ in self._iter_named(filter_name, recursive)]

    def typenames(self, filter_name: Filter = None, recursive: bool = False) -> dict[str, str]:
        """C++ type name of each field ``keys()`` lists."""
        return {name: f.type_name for name, f in self._iter_named(filter_name, recursive)}

    def __contains__(self, name: object) -> bool:
        return any(f.name == name for f in self.fields)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __getitem__(self, path: str) -> Field:
        """The field at ``path`` (on-disk names separated by ``.`` or ``/``)."""
        level = self.fields
        found: Field | None = None
        for part in path.replace("/", ".").split("."):
            found = next((f for f in level if f.name == part), None)
            if found is None:
                raise KeyError(f"no field '{path}' in RNTuple '{self.name}'")
            level = found.children
        assert found is not None
        return found

    @property
    def attribute_sets(self) -> list[str]:
        """Names of the attribute sets linked to this RNTuple (ROOT 6.40); :meth:`attribute_set` reads one."""
        from ._attributes import attribute_set_names

        return attribute_set_names(self)

    def attribute_set(self, name: str) -> AttributeSet:
        """The attribute set ``name``: read like an RNTuple, one entry per range of this RNTuple's entries."""
        from ._attributes import open_attribute_set

        return open_attribute_set(self, name)

    @property
    def columns(self) -> list[Column]:
        """Physical columns, in column-id order."""
        return [Column(*c) for c in self._inner.columns()]

    @property
    def clusters(self) -> list[Cluster]:
        """Clusters, in entry order."""
        return [Cluster(*c) for c in self._inner.clusters()]

    def io_stats(self) -> dict[str, Any]:
        """I/O done by the reads of this RNTuple so far.

        The planner's figures: ``requests`` sent to the storage (merged byte
        ranges), ``vectored_calls``, ``bytes_read`` (gaps between merged pages
        included), ``bytes_needed`` (the pages' own bytes), ``pages`` decoded,
        ``read_time`` (seconds spent in reads), ``read_rate`` (bytes read per
        second of it) and ``file_size``. ``wire``: what crossed the network
        (``single_requests``, ``vectored_requests``, ``sub_ranges``,
        ``bytes_transferred``, ``retries``, ``cache_hits``, ``cache_bytes``;
        shared by the RNTuples of one file, metadata included), or ``None``
        for a local file. ``reset_io_stats()`` zeroes the planner's figures.
        """
        return dict(self._inner.io_stats())

    def io_report(self) -> str:
        """The I/O report (requests, bytes transferred and needed, average
        request, share of the file read, cache hits, wall time, read rate) that
        ``RNTUPLE_IO_REPORT=1`` prints to stderr when the handle goes."""
        return self._inner.io_report()

    def reset_io_stats(self) -> None:
        """Sets the :meth:`io_stats` counters to zero."""
        self._inner.reset_io_stats()

    def show(self, stream: TextIO | None = None) -> None:
        """Prints the schema and storage summary (the text of ``rntuple show``)."""
        print(self._inner.show(), end="", file=sys.stdout if stream is None else stream)

    def _select(
        self,
        expressions: str | list[str] | None,
        filter_name: Filter,
        filter_typename: Filter = None,
        filter_field: Callable[[Field], bool] | None = None,
    ) -> tuple[list[Field], frozenset[str] | None, list[str]]:
        """Top-level fields to read, the display paths to keep when only parts of records are
        selected (None: everything), and the on-disk paths the reader reads.

        Like uproot, the filters are tried on every field: ``filter_name`` on
        its name and on its dotted path (``"rec.member"``, also with a leading
        dot), ``filter_typename`` on its C++ type, ``filter_field`` on the
        ``Field``; a field passing all three is selected with all its
        subfields, and a selected subfield comes with its parents but not with
        its siblings: the reader reads that subfield's columns and the offsets
        of the collections above it only. ``expressions`` are names or paths,
        used as a ``filter_name``; an unknown one raises ``KeyError``.
        """
        if expressions is not None:
            if filter_name is not None:
                raise ValueError("give either expressions (field names) or filter_name, not both")
            wanted = [expressions] if isinstance(expressions, str) else list(expressions)
            known = set(self.keys(recursive=True)) | {f.name for f in self.fields}
            missing = [n for n in wanted if n not in known]
            if missing:
                raise KeyError(f"no field {missing[0]!r} in RNTuple '{self.name}' (fields: {self.keys()})")
            filter_name = wanted
        if filter_field is not None and not callable(filter_field):
            raise TypeError(f"filter_field must be None or a function of Field -> bool, not {filter_field!r}")
        candidates = [f for f in self.fields if f.readable]
        if filter_name is None and filter_typename is None and filter_field is None:
            return candidates, None, [f.name for f in candidates]
        accept_name = make_filter(filter_name)
        accept_type = make_filter(filter_typename)
        paths = []
        chosen = set()
        on_disk = []
        for f in iter_fields(candidates):
            path = f.display_path
            if path is None:
                continue
            paths.append(path)
            name = f.display_name
            if (
                (accept_name(name) or (path != name and accept_name(path)) or accept_name("." + path))
                and accept_type(f.type_name)
                and (filter_field is None or filter_field(f))
            ):
                chosen.add(path)
                on_disk.append(f.path)
        # A selected field brings its subfields; every ancestor of a kept path is kept too.
        keys: set[str] = set()
        for path in paths:
            prefixes = [path[:i] for i, char in enumerate(path) if char == "."]
            if path in chosen or any(p in chosen for p in prefixes):
                keys.add(path)
                keys.update(prefixes)
        fields = [f for f in candidates if f.name in keys]
        return fields, frozenset(keys), on_disk

    def _read_batch(
        self,
        fields: list[Field],
        start: int,
        stop: int,
        threads: int | None = None,
        paths: list[str] | None = None,
        library: str = "ak",
    ) -> pa.RecordBatch:
        """Reads ``fields`` or, with ``paths``, only those (dotted, on-disk) parts of them; in the
        Arrow types of the C++ types for ``library="pa"``, else in those uproot's forms use."""
        names = [f.name for f in fields] if paths is None else paths
        return pa.record_batch(self._inner.read(names, start, stop, _threads(threads), library != "pa"))

    def _convert(
        self, batch: pa.RecordBatch, fields: list[Field], keys: frozenset[str] | None, library: str, start: int
    ) -> Any:
        if library == "pa":
            return pa.Table.from_batches([batch])
        array = ak.Array(batch_to_layout(batch, fields, keys))
        if library == "ak":
            return array
        if library == "np":
            return to_numpy_dict(array)
        return to_pandas(array, start)

    def arrays(
        self,
        expressions: str | list[str] | None = None,
        *,
        filter_name: Filter = None,
        filter_typename: Filter = None,
        filter_field: Callable[[Field], bool] | None = None,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library: str = "ak",
        threads: int | None = None,
    ) -> Any:
        """Reads fields over a range of entries.

        Args:
            expressions: top-level field names to read (in this order); all
                readable fields when None.
            filter_name: selects fields by name or dotted path: a name, a glob
                (``"Muon_*"``), a regex between slashes (``"/^Muon_(pt|eta)$/"``),
                a callable, or a list of those. A selected subfield of a record
                comes with its parents, without its siblings (as in uproot).
            filter_typename: selects fields by C++ type name (same forms).
            filter_field: selects fields with a function of :class:`Field`.
            entry_start, entry_stop: entry range like a Python slice (None for
                the ends, negative from the end).
            library: ``"ak"`` (awkward Array with uproot's forms), ``"np"`` (dict
                of numpy arrays), ``"pd"`` (pandas DataFrame) or ``"pa"``
                (pyarrow Table).
            threads: threads that decompress and decode pages for this read;
                None uses the file's setting (``rntuple.open(..., threads=)``,
                by default one per core), 1 reads on the calling thread only.
                The result is the same for any number.
        """
        lib = _library(library)
        fields, keys, paths = self._select(expressions, filter_name, filter_typename, filter_field)
        start, stop = _entry_range(self.num_entries, entry_start, entry_stop)
        return self._convert(self._read_batch(fields, start, stop, threads, paths, lib), fields, keys, lib, start)

    def iterate(
        self,
        expressions: str | list[str] | None = None,
        *,
        step_size: int | str = "100 MB",
        filter_name: Filter = None,
        filter_typename: Filter = None,
        filter_field: Callable[[Field], bool] | None = None,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library: str = "ak",
        threads: int | None = None,
    ) -> Iterator[Any]:
        """Reads fields in consecutive ranges of entries, yielding one ``arrays()`` result per range.

        ``step_size`` is a number of entries or a memory size such as
        ``"100 MB"`` (estimated from the in-memory size of the first entries).
        ``threads`` as for :meth:`arrays`.
        """
        lib = _library(library)
        fields, keys, paths = self._select(expressions, filter_name, filter_typename, filter_field)
        start, stop = _entry_range(self.num_entries, entry_start, entry_stop)
        step = self._step_entries(step_size, fields, paths, start, stop)
        for lo in range(start, stop, step):
            hi = min(stop, lo + step)
            yield self._convert(self._read_batch(fields, lo, hi, threads, paths, lib), fields, keys, lib, lo)

    def _step_entries(self, step_size: int | str, fields: list[Field], paths: list[str], start: int, stop: int) -> int:
        if isinstance(step_size, int) and not isinstance(step_size, bool):
            if step_size <= 0:
                raise ValueError(f"step_size must be positive, not {step_size}")
            return step_size
        target = parse_memory_size(step_size)
        if target <= 0:
            raise ValueError(f"step_size must be positive, not {step_size!r}")
        n = min(stop - start, _PROBE_ENTRIES)
        if n <= 0 or not fields:
            return max(1, stop - start)
        nbytes = self._read_batch(fields, start, start + n, paths=paths).nbytes
        if nbytes == 0:
            return max(1, stop - start)
        return max(1, int(target * n // nbytes))
