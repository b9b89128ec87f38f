"""``rntuple.dask``: a dataset of RNTuples as a dask-awkward array (or a dict of dask arrays).

Built on dask-awkward's ``from_map``. The IO function, :class:`ReadPartition`,
implements dask-awkward's column-projection protocol (``ColumnProjectionMixin``:
``mock``, ``prepare_for_projection``, ``necessary_columns``,
``project_columns``): when a graph is optimized, dask-awkward runs it on type
tracers, learns which columns the computation touches and asks the IO function
for a copy that reads only those. A partition is whole clusters of one file
(see :func:`plan_partitions`), so no cluster's pages are read by two tasks of
one pass. What a task pickles is small: the form, the selected columns, the
options and, per partition, (path or URL, RNTuple name, entry start, entry
stop); never an open handle. Workers open files themselves (one handle per
file and thread, kept for the next partitions of the same file).

Building the graph reads each file's metadata only (anchor, header, footer and
page-list envelopes: entry counts and cluster boundaries; never page data), in
parallel on a thread pool, and the schema of the first file; with
``open_files=False`` or with the steps or entry counts given (uproot's
``{path: {"object_path": ..., "steps": [[start, stop], ...]}}``) it reads only
the first file.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from .._dataset import expand, is_url, plan_steps
from .._errors import InvalidArgumentError, MissingFileError
from .._filters import Filter, parse_step_size
from . import require

__all__ = ["Partition", "ReadPartition", "dask", "plan_partitions", "read_log", "reset_read_log"]

_FEATURE = "rntuple.dask"
_DEFAULT_STEP = "100 MB"
_METADATA_THREADS = 16


class Partition(NamedTuple):
    """One task's input: an entry range of one RNTuple (whole clusters unless steps were given)."""

    location: str
    name: str
    entry_start: int
    entry_stop: int | None  # None: to the end (the file was not opened up front)


# --------------------------------------------------------------------------
# Partitioning


def plan_partitions(clusters: list[tuple[int, int]], step_entries: int) -> list[tuple[int, int]]:
    """Groups consecutive whole clusters ``(first_entry, num_entries)`` into ranges of at most
    ``step_entries`` entries; a cluster larger than the step is a range of its own (never split,
    so no cluster's pages are read by two tasks): ``_dataset.plan_steps`` with ``split=False``."""
    end = max((first + count for first, count in clusters), default=0)
    return plan_steps([(first, count, 0.0) for first, count in clusters], 0, end, step_entries, split=False)


def _step_in_entries(step_size: int | str, num_entries: int, nbytes: int | None) -> int:
    """Entries per partition: ``step_size`` as entries, or as bytes on storage of the whole
    clusters, converted with the file's mean bytes per entry (``nbytes`` = file size)."""
    entries, target = parse_step_size(step_size)
    if target is None:
        return entries  # type: ignore[return-value]
    if not nbytes or num_entries <= 0:
        return max(1, num_entries)
    return max(1, int(target * num_entries // nbytes))


class _FileMeta(NamedTuple):
    location: str
    name: str  # with cycle: what reopens exactly this RNTuple
    num_entries: int
    clusters: list[tuple[int, int]]
    nbytes: int | None


def _open_ntuple(location: str, name: str | None, options: dict[str, Any]) -> Any:
    from .._file import File

    f = File(location, **options)
    if name is None:
        names = f.rntuple_names()
        if len(names) != 1:
            raise InvalidArgumentError(
                f"{location!r} holds {len(names)} RNTuples ({names}); name the one to read "
                "('file.root:Events' or {path: 'Events'})"
            )
        name = names[0]
    return f[name]


def _file_meta(location: str, name: str | None, options: dict[str, Any], need_size: bool) -> _FileMeta:
    return _meta_of(_open_ntuple(location, name, options), need_size)


def _meta_of(ntuple: Any, need_size: bool) -> _FileMeta:
    clusters = [(c.first_entry, c.num_entries) for c in ntuple.clusters]
    origin_location, full_name, _ = ntuple._origin
    nbytes = None
    if need_size:
        if is_url(origin_location) and not origin_location.startswith("file://"):
            nbytes = int(_inspect_size(origin_location, full_name))
        else:
            nbytes = os.path.getsize(origin_location.removeprefix("file://"))
    return _FileMeta(origin_location, full_name, ntuple.num_entries, clusters, nbytes)


def _inspect_size(location: str, name: str) -> int:
    from .. import _lib

    report = _lib.inspect(location, name.rpartition(";")[0] or name)
    return int(report["file_size"])


# --------------------------------------------------------------------------
# What a task runs


_local = threading.local()
_LOG: deque[dict[str, Any]] = deque(maxlen=100_000)
_LOG_LOCK = threading.Lock()
_HANDLES_PER_THREAD = 8


def _handle(location: str, name: str, options: dict[str, Any]) -> Any:
    """An open RNTuple for this thread: the last few stay open for the next partitions."""
    cache: dict[tuple[str, str, tuple[tuple[str, Any], ...]], Any] = getattr(_local, "handles", None) or {}
    _local.handles = cache
    key = (location, name, tuple(sorted(options.items())))
    ntuple = cache.pop(key, None)
    if ntuple is None:
        ntuple = _open_ntuple(location, name, options)
        while len(cache) >= _HANDLES_PER_THREAD:
            cache.pop(next(iter(cache)))
    cache[key] = ntuple  # most recent last
    return ntuple


def read_log() -> list[dict[str, Any]]:
    """What the partitions read in this process: one dict per task with ``location``,
    ``name``, ``entry_start``, ``entry_stop``, ``columns`` (the dotted paths asked for) and
    the I/O it did (``bytes_read``, ``requests``, ``pages``). On a distributed cluster,
    ``client.run(rntuple.integrations.dask.read_log)`` collects it from every worker."""
    with _LOG_LOCK:
        return list(_LOG)


def reset_read_log() -> None:
    """Empties :func:`read_log` (in this process)."""
    with _LOG_LOCK:
        _LOG.clear()


def _read(part: Partition, columns: tuple[str, ...] | None, options: dict[str, Any], library: str) -> Any:
    """Reads ``columns`` (dotted paths of the form; None: all) of one partition."""
    ntuple = _handle(part.location, part.name, options)
    wanted = None if columns is None else frozenset(columns)
    before = ntuple.io_stats()
    if wanted is not None and not wanted:
        # Only the length is needed: no column at all.
        import awkward as ak

        start, stop = part.entry_start, ntuple.num_entries if part.entry_stop is None else part.entry_stop
        result = ak.Array(ak.contents.RecordArray([], [], length=max(0, stop - start)))
    else:
        select: Callable[[Any], bool] | None = None if wanted is None else (lambda f: f.display_path in wanted)
        result = ntuple.arrays(
            filter_field=select,
            entry_start=part.entry_start,
            entry_stop=part.entry_stop,
            library=library,
            threads=1,
        )
    _log_read(ntuple, before, part.location, part.name, part.entry_start, part.entry_stop, columns)
    return result


def _log_read(
    ntuple: Any,
    before: dict[str, Any],
    location: str,
    name: str,
    entry_start: int,
    entry_stop: int | None,
    columns: Iterable[str] | None,
) -> None:
    """Appends one read to :func:`read_log`: where, which entries and fields (``columns``; None:
    all), the process, and what ``ntuple.io_stats()`` counted since ``before`` (its value when
    the read began)."""
    after = ntuple.io_stats()
    entry = {
        "location": location,
        "name": name,
        "entry_start": entry_start,
        "entry_stop": entry_stop,
        "columns": None if columns is None else sorted(columns),
        "pid": os.getpid(),
    }
    entry.update({k: v - before.get(k, 0) for k, v in after.items() if isinstance(v, int | float)})
    with _LOG_LOCK:
        _LOG.append(entry)


class ReadPartition:
    """dask-awkward IO function: reads one :class:`Partition` into an awkward array.

    Implements dask-awkward's column-projection protocol through its
    ``ColumnProjectionMixin`` (mixed in at construction, so that this module
    imports without dask-awkward).
    """

    def __init__(
        self, form: Any, columns: tuple[str, ...] | None, options: dict[str, Any], behavior: Any = None
    ) -> None:
        self.form = form
        self.columns = columns
        self.options = options
        self.behavior = behavior
        self.attrs = None
        self._meta: Any = None  # set by dask() for the collection's meta; never pickled

    @property
    def use_optimization(self) -> bool:
        return True

    def mock(self) -> Any:
        """The collection's meta (dask-awkward asks for it once, in ``from_map``): the typetracer of
        the first file's zero-length sample when :func:`dask` made one (a third of the time of
        building it from the form: 1.5 ms against 4.9 ms for the AGC files' 30 fields), else from
        the form (what ``ColumnProjectionMixin.mock`` does)."""
        if self._meta is not None:
            return self._meta
        from awkward.typetracer import typetracer_from_form

        return typetracer_from_form(self.form, behavior=self.behavior, attrs=self.attrs)

    def __call__(self, part: Partition) -> Any:
        array = _read(Partition(*part), self.columns, self.options, "ak")
        if self.behavior is not None:
            import awkward as ak

            array = ak.Array(array, behavior=self.behavior)
        return array

    def project_columns(self, columns: frozenset[str]) -> ReadPartition:
        chosen = tuple(sorted(columns))
        return _projecting(self.form.select_columns(list(chosen)), chosen, self.options, self.behavior)

    def __dask_tokenize__(self) -> Any:
        return ("rntuple.ReadPartition", self.form.to_json(), self.columns, sorted(self.options.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_projecting, (self.form, self.columns, self.options, self.behavior))


_CLASSES: dict[str, type] = {}


def _projecting(form: Any, columns: tuple[str, ...] | None, options: dict[str, Any], behavior: Any) -> ReadPartition:
    """A :class:`ReadPartition` that also has dask-awkward's ``ColumnProjectionMixin``."""
    cls = _CLASSES.get("ak")
    if cls is None:
        columnar = require("dask_awkward.lib.io.columnar", feature=_FEATURE, extra="dask")
        cls = type("ReadPartition", (ReadPartition, columnar.ColumnProjectionMixin), {"__module__": __name__})
        _CLASSES["ak"] = cls
    return cls(form, columns, options, behavior)


class _ReadNumpyColumn:
    """Task function of ``library="np"``: one top-level field of one partition as a numpy array
    (its leaf ``columns``); a jagged field is always an object array of per-entry arrays, even in a
    partition where every entry happens to have the same length (dask needs one shape)."""

    def __init__(self, field: str, columns: tuple[str, ...], jagged: bool, options: dict[str, Any]) -> None:
        self.field = field
        self.columns = columns
        self.jagged = jagged
        self.options = options

    def __call__(self, part: tuple[Any, ...]) -> Any:
        import numpy as np

        values = _read(Partition(*part), self.columns, self.options, "np")[self.field]
        if self.jagged and (values.dtype != object or values.ndim != 1):
            out = np.empty(len(values), dtype=object)
            out[:] = list(values)
            return out
        return values


# --------------------------------------------------------------------------
# The entry point


def _expand_specs(files: Any, allow_missing: bool = False) -> list[tuple[str, str | None, dict[str, Any]]]:
    """(path or URL, name or None, uproot-style extras such as ``steps``) for each file."""
    if isinstance(files, Mapping) and any(isinstance(v, Mapping) for v in files.values()):
        out = []
        for spec, value in files.items():
            extra = dict(value) if isinstance(value, Mapping) else {"object_path": value}
            name = extra.pop("object_path", None)
            try:
                out += [(path, inline, extra) for path, inline in expand({spec: name})]
            except FileNotFoundError:
                if not allow_missing:
                    raise
        if not out:
            raise MissingFileError(2, "none of the input files exists", ", ".join(map(str, files)))
        return out
    return [(path, name, {}) for path, name in expand(files, allow_missing)]


def _first_found(specs: list[Any], options: dict[str, Any]) -> tuple[list[Any], Any]:
    """With ``allow_missing``: the specs from the first whose RNTuple opens, and that RNTuple."""
    for i, (path, name, _) in enumerate(specs):
        try:
            return specs[i:], _open_ntuple(path, name, options)
        except (FileNotFoundError, KeyError):
            continue
    raise MissingFileError(2, "none of the input files holds its RNTuple", ", ".join(s[0] for s in specs))


def dask(
    files: Any,
    *,
    filter_name: Filter = None,
    filter_typename: Filter = None,
    step_size: int | str = _DEFAULT_STEP,
    library: str = "ak",
    open_files: bool = True,
    allow_missing: bool = False,
    verify_checksums: bool = True,
    metadata_threads: int = _METADATA_THREADS,
    behavior: Any = None,
    max_memory: int | str | None = None,
) -> Any:
    """A dataset of RNTuples as a lazy dask-awkward array (``library="ak"``) or a dict of dask
    arrays, one per field (``library="np"``), as ``uproot.dask`` gives them.

    Args:
        files: a path or URL, a glob, a list of them, ``"f.root:Events"``,
            ``{path: "Events"}`` or uproot's ``{path: {"object_path": "Events",
            "steps": [[0, 1000], [1000, 2000]]}}`` or ``{path: {"object_path":
            "Events", "num_entries": 5000}}`` (steps or entry count given: that file
            is not opened to build the graph; entries are cut every ``step_size``).
        filter_name, filter_typename: the fields (as ``RNTuple.arrays``); a
            computation reads only the columns it uses among them.
        step_size: entries per partition (an int) or bytes on storage (``"100 MB"``,
            estimated from the file size); partitions are whole clusters and a
            cluster larger than the step is a partition of its own.
        open_files: True reads every file's footer now (in parallel, on
            ``metadata_threads`` threads) to cut partitions at clusters; False
            reads only the first file's schema and makes one partition per file,
            opened by the worker that reads it.
        allow_missing: leave out files that do not exist or lack the named RNTuple
            (as uproot's): missing paths always, missing RNTuples of the files opened
            to build the graph; none left is an error.
        verify_checksums: passed to every ``rntuple.open`` (on the workers too).
        max_memory: the memory budget of each partition's read (bytes or ``"2 GB"``),
            passed to every ``rntuple.open``: a partition that needs more fails with
            :class:`MemoryLimitError` (a ``MemoryError``) before allocating; use a
            smaller ``step_size``.
        behavior: awkward behavior for the arrays (``library="ak"``).
    """
    from .._read_args import library as _library

    lib = _library(library)
    if lib not in ("ak", "np"):
        raise InvalidArgumentError(f"rntuple.dask gives library='ak' or 'np', not {library!r}")
    require("dask", feature=_FEATURE, extra="dask")
    if lib == "ak":
        require("dask_awkward", feature=_FEATURE, extra="dask")
    specs = _expand_specs(files, allow_missing)
    options: dict[str, Any] = {"verify_checksums": bool(verify_checksums), "threads": 1}
    if max_memory is not None:
        options["max_memory"] = max_memory

    # The schema of the first file fixes the form (uproot does the same).
    if allow_missing:
        specs, first = _first_found(specs, options)
    else:
        first = _open_ntuple(specs[0][0], specs[0][1], options)
    sample = first.arrays(filter_name=filter_name, filter_typename=filter_typename, entry_stop=0)
    columns = _leaf_columns(sample.layout.form)

    partitions = _partitions(specs, first, options, step_size, open_files, metadata_threads, allow_missing)
    if lib == "np":
        return _numpy_dict(partitions, _numpy_meta(first, columns, sample), options)
    dak = require("dask_awkward", feature=_FEATURE, extra="dask")
    io = _projecting(sample.layout.form, tuple(columns), options, behavior)
    import awkward as ak

    io._meta = ak.Array(sample.layout.to_typetracer(forget_length=True), behavior=behavior)
    divisions = _divisions(partitions)
    # Plain tuples and our own token: dask tokenizes (and pickles, twice) what from_map is given,
    # and a NamedTuple pickles through a Python-level __getnewargs__ per partition; with 1,000
    # files that was most of the time spent building the graph without opening them.
    inputs = [tuple(p) for p in partitions]
    return dak.from_map(io, inputs, label="rntuple", token=_token(io, inputs), divisions=divisions)


def _token(io: Any, inputs: list[tuple[Any, ...]]) -> str:
    """The graph's name token: what dask's ``tokenize`` would make of the IO function and the
    partitions (deterministic: same files, entries and options, same token), in a fraction of
    its time."""
    import hashlib

    from dask.base import tokenize

    digest = hashlib.blake2b(repr(inputs).encode(), digest_size=16)
    digest.update(tokenize(io).encode())
    return digest.hexdigest()


def _leaf_columns(form: Any) -> list[str]:
    """Dotted paths of the fields of a (record) form down to its leaves, as dask-awkward names columns."""
    out: list[str] = []

    def walk(f: Any, prefix: str) -> None:
        while f.is_list or f.is_option or f.is_indexed:
            f = f.content
        if f.is_record:
            if not f.fields and prefix:
                out.append(prefix)
            for name, content in zip(f.fields, f.contents, strict=True):
                walk(content, f"{prefix}.{name}" if prefix else name)
        elif prefix:
            out.append(prefix)

    walk(form, "")
    return out


def _partitions(
    specs: list[tuple[str, str | None, dict[str, Any]]],
    first: Any,
    options: dict[str, Any],
    step_size: int | str,
    open_files: bool,
    threads: int,
    allow_missing: bool = False,
) -> list[Partition]:
    need_size = parse_step_size(step_size)[1] is not None
    metas: dict[int, _FileMeta] = {}
    given = ("steps", "num_entries")
    to_open = [
        i
        for i, (_, _, extra) in enumerate(specs)
        if (open_files or i == 0) and not (extra and any(k in extra for k in given))
    ]
    if to_open and to_open[0] == 0:  # already open for its schema
        metas[0] = _meta_of(first, need_size)
        to_open = to_open[1:]
    if to_open:
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(to_open)))) as pool:

            def meta(i: int) -> _FileMeta | None:
                try:
                    return _file_meta(specs[i][0], specs[i][1], options, need_size)
                except (FileNotFoundError, KeyError):
                    if allow_missing:
                        return None
                    raise

            found = pool.map(meta, to_open)
            metas.update((i, m) for i, m in zip(to_open, found, strict=True) if m is not None)
    missing = set(to_open) - set(metas)
    name_of_first = first._origin[1]
    bare_name_of_first = name_of_first.rpartition(";")[0]
    out: list[Partition] = []
    for i, (path, name, extra) in enumerate(specs):
        if i in missing:
            continue
        if extra and any(k in extra for k in given):
            location, full = _location_of(path), name or name_of_first
            if "steps" in extra:
                steps = _given_steps(extra["steps"], path)
            else:  # entries known: cut every step_size entries (one partition for a size in bytes)
                total = int(extra["num_entries"])
                every = parse_step_size(step_size)[0] or max(1, total)
                steps = [(a, min(total, a + every)) for a in range(0, total, every)]
            out += [Partition(location, full, start, stop) for start, stop in steps]
        elif i in metas:
            fm = metas[i]
            step = _step_in_entries(step_size, fm.num_entries, fm.nbytes)
            out += [Partition(fm.location, fm.name, a, b) for a, b in plan_partitions(fm.clusters, step)]
        else:
            out.append(Partition(_location_of(path), name or bare_name_of_first, 0, None))
    if not out:
        raise InvalidArgumentError("the input files hold no entries")
    return out


def _location_of(path: str) -> str:
    if path.startswith("/") and "/." not in path and "//" not in path:
        return path  # already absolute and normal: what abspath would return, without its cost
    return path if is_url(path) else os.path.abspath(path)


def _given_steps(steps: Iterable[Any], path: str) -> list[tuple[int, int]]:
    out = []
    for step in steps:
        start, stop = (int(x) for x in step)
        if start < 0 or stop < start:
            raise InvalidArgumentError(f"bad step {list(step)!r} for {path!r}: need 0 <= start <= stop")
        out.append((start, stop))
    return out


def _divisions(partitions: list[Partition]) -> tuple[int, ...] | tuple[None, ...]:
    if any(p.entry_stop is None for p in partitions):
        return (None,) * (len(partitions) + 1)
    bounds = [0]
    for p in partitions:
        bounds.append(bounds[-1] + p.entry_stop - p.entry_start)  # type: ignore[operator]
    return tuple(bounds)


def _numpy_meta(first: Any, columns: list[str], sample: Any) -> dict[str, tuple[Any, tuple[str, ...], bool]]:
    """Per top-level field: (an empty numpy array of its dtype and inner shape, its leaf
    columns, whether it is jagged), from the form and from the first entry of the first file."""
    import numpy as np

    wanted = set(columns)
    one = first.arrays(filter_field=lambda f: f.display_path in wanted, entry_stop=1, library="np")
    out = {}
    for field in sample.fields:
        leaves = tuple(c for c in columns if c == field or c.startswith(field + "."))
        kind = str(sample[field].type.content)
        jagged = "var" in kind or "?" in kind or "option" in kind
        empty = np.empty(0, dtype=object) if jagged or field not in one else one[field][:0]
        out[field] = (empty, leaves, jagged)
    return out


def _numpy_dict(
    partitions: list[Partition], meta: dict[str, tuple[Any, tuple[str, ...], bool]], options: dict[str, Any]
) -> dict[str, Any]:
    """``library="np"``: a dask array per field, chunked like the partitions."""
    da = require("dask.array", feature=_FEATURE, extra="dask")
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    known = all(p.entry_stop is not None for p in partitions)
    chunks = tuple((p.entry_stop - p.entry_start) if known else float("nan") for p in partitions)  # type: ignore[operator]
    token = tokenize(partitions, sorted(options.items()))
    out = {}
    for column, (empty, leaves, jagged) in meta.items():
        name = f"rntuple-np-{column}-{token}"
        reader = _ReadNumpyColumn(column, leaves, jagged, options)
        graph: dict[Any, Any] = {(name, i): (reader, tuple(p)) for i, p in enumerate(partitions)}
        hlg = HighLevelGraph.from_collections(name, graph, dependencies=())
        out[column] = da.Array(hlg, name, chunks=(chunks, *((n,) for n in empty.shape[1:])), meta=empty[:0])
    return out
