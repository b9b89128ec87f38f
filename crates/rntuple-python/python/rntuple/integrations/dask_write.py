"""``rntuple.dask_write``: a dask-awkward array written as RNTuples by the workers that compute it.

Each partition ``i`` becomes one file ``{destination}/{prefix}-{i:05d}.root`` holding one RNTuple
``name``, written by the task that computed the partition (the data never travel to the client).
The graph has the shape of ``uproot.dask_write`` and ``dask_awkward.to_parquet``: one write task
per partition (a ``map_partitions`` layer annotated ``ak_output``, so that dask-awkward's column
projection reads exactly the columns the written array needs, plus those of its cuts) and one
final task that gathers what was written and, with ``merge=``, merges the parts in partition order
with :func:`rntuple.merge` (pages copied, not recompressed).

Every part has the RNTuple schema of the array's form (the collection's meta), whatever its
partition holds, so the parts are one dataset that a strict merge concatenates: an empty
partition is a file of 0 entries, a partition whose optional fields are all missing writes them
as missing values of the declared type.

A part never reads as complete before it is: a local part is written to a hidden temporary name
in the destination (``.{prefix}-{i:05d}.root.{attempt}.tmp``; until its writer completes it, the
file starts with a placeholder header every reader refuses), synced and renamed over the final
name. A task that fails or is cancelled abandons and deletes its temporary file; a worker killed
mid-write leaves it (hidden, unreadable, not matched by ``*.root``), and the final task removes
those of this graph. A retried task writes its own part again and replaces only that name. A URL
destination (``s3://``, ``root://``, ``https://``) is handed to ``rntuple.recreate`` with the part's
URL: the remote sink shows the object only when it is complete.
"""

from __future__ import annotations

import contextlib
import glob
import os
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._dataset import is_url
from .._errors import InvalidArgumentError
from . import require

__all__ = ["DaskWriteResult", "dask_write"]

_FEATURE = "rntuple.dask_write"
# recreate()'s own keywords; the rest of **writer_options are mkrntuple's.
_FILE_OPTIONS = ("compression", "compression_level", "max_key_size")
_RNTUPLE_ARGS = ("types", "representations", "projections")


@dataclass(frozen=True)
class DaskWriteResult:
    """What :func:`dask_write` wrote (the value of its lazy object once computed)."""

    #: the part files (paths or URLs), in partition order
    paths: list[str]
    #: entries in each part
    entries: list[int]
    #: bytes of each local part (None for a URL)
    bytes: list[int | None]
    #: the merged file (``merge=``), else None
    merged: str | None = None
    #: whether the parts are still there (False only with ``merge=`` and ``keep_parts=False``)
    parts_kept: bool = True
    #: what the merge did (:class:`rntuple.MergeSummary`), else None
    merge: Any = field(default=None, repr=False)

    @property
    def num_entries(self) -> int:
        return sum(self.entries)


def _is_remote(destination: str) -> bool:
    return is_url(destination) and not destination.startswith("file://")


def _local_dir(destination: str) -> str:
    return os.path.abspath(destination.removeprefix("file://"))


def _join(destination: str, filename: str) -> str:
    """A URL is joined as a string (``s3://bucket/skim`` + ``part-00000.root``), a directory with os.path."""
    if _is_remote(destination):
        return destination.rstrip("/") + "/" + filename
    return os.path.join(destination, filename)


def part_name(prefix: str, index: int, width: int = 5) -> str:
    """The file name of partition ``index``: zero-padded to ``width`` digits (5, more when there are
    more than 100,000 partitions) so that a sorted glob is partition order."""
    return f"{prefix}-{index:0{width}d}.root"


def _tmp_glob(prefix: str, token: str) -> str:
    return f".{prefix}-[0-9]*.root.{token}-*.tmp*"


# --------------------------------------------------------------------------
# What a task runs


@dataclass(frozen=True)
class _Part:
    index: int
    path: str
    entries: int
    nbytes: int | None


@dataclass(eq=False)
class _WritePart:
    """The write task's function: ``(partition, block_index) -> _Part``."""

    destination: str
    name: str
    prefix: str
    token: str
    schema: Any
    form: Any
    file_options: dict[str, Any]
    rntuple_options: dict[str, Any]
    storage_options: dict[str, Any] | None
    width: int = 5

    def __call__(self, data: Any, block_index: tuple[int, ...]) -> _Part:
        index = int(block_index[0])
        data = self._conform(data)
        final = _join(self.destination, part_name(self.prefix, index, self.width))
        if _is_remote(self.destination):
            # The remote sink completes the object only when the file is closed (multipart upload,
            # write then rename on the server): nothing to rename here.
            entries = self._write(final, data)
            return _Part(index, final, entries, None)
        os.makedirs(self.destination, exist_ok=True)
        tmp = os.path.join(
            self.destination, f".{part_name(self.prefix, index, self.width)}.{self.token}-{uuid.uuid4().hex}.tmp"
        )
        try:
            entries = self._write(tmp, data)
            _fsync(tmp)
            os.replace(tmp, final)  # atomic: the final name is the complete file or what it was before
            _fsync_dir(self.destination)
        except BaseException:
            _remove(tmp)
            raise
        return _Part(index, final, entries, os.path.getsize(final))

    def _conform(self, data: Any) -> Any:
        """The partition with the form of the collection (as its schema was declared from it)."""
        import awkward as ak

        if not isinstance(data, ak.Array):
            data = ak.Array(data)
        if data.layout.form.type != self.form.type:  # e.g. ?unknown where every value is None
            data = ak.enforce_type(data, self.form.type)
        return data

    def _write(self, path: str, data: Any) -> int:
        from .._write import recreate

        # an exception leaving either `with` abandons the file: it keeps its placeholder header
        with _environment(self.storage_options), recreate(path, **self.file_options) as f:
            with f.mkrntuple(self.name, self.schema, **self.rntuple_options) as w:
                if len(data):
                    w.extend(data)
                entries = w.num_entries
        return int(entries)


_ENVIRONMENT_LOCK = threading.Lock()


@contextlib.contextmanager
def _environment(settings: Mapping[str, str] | None) -> Iterator[None]:
    """Sets the environment variables of ``storage_options`` (the stores' settings and credentials,
    which the Rust core reads from the environment when a file is created or opened) for the
    duration of one write or merge on a worker, then restores them. Writes in threads of one worker
    that need settings take turns."""
    if not settings:
        yield
        return
    with _ENVIRONMENT_LOCK:
        saved = {k: os.environ.get(k) for k in settings}
        os.environ.update(settings)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs directories
        _fsync(path)


def _remove(tmp: str) -> None:
    for leftover in (tmp, tmp + ".rntuple-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(leftover)


@dataclass(eq=False)
class _Finish:
    """The final task: gathers the parts (in partition order), merges them with ``merge=``."""

    destination: str
    name: str
    prefix: str
    token: str
    merge: str | None
    keep_parts: bool
    storage_options: dict[str, str] | None = None

    def __call__(self, *parts: Any) -> DaskWriteResult | None:
        if any(not isinstance(p, _Part) for p in parts):
            # dask-awkward's column-projection pass runs the graph on type tracers with the write
            # tasks replaced by a function that only touches the data (it returns None).
            return None
        ordered = sorted(parts, key=lambda p: p.index)
        paths = [p.path for p in ordered]
        if not _is_remote(self.destination):
            # hidden temporary files of attempts that died (killed workers) in this graph
            for leftover in glob.glob(os.path.join(self.destination, _tmp_glob(self.prefix, self.token))):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(leftover)
        summary = None
        if self.merge is not None:
            from .._tools import merge

            with _environment(self.storage_options):
                summary = merge(self.merge, paths, self.name, overwrite=True)
            if not self.keep_parts:
                for path in paths:
                    os.remove(path)
        return DaskWriteResult(
            paths=paths,
            entries=[p.entries for p in ordered],
            bytes=[p.nbytes for p in ordered],
            merged=self.merge,
            parts_kept=self.merge is None or self.keep_parts,
            merge=summary,
        )


# --------------------------------------------------------------------------
# The entry point


def _is_record(form: Any) -> bool:
    while form.is_indexed or form.is_option:
        form = form.content
    return bool(form.is_record)


def dask_write(
    array: Any,
    destination: str | os.PathLike[str],
    *,
    name: str = "Events",
    prefix: str = "part",
    compute: bool = True,
    merge: str | os.PathLike[str] | None = None,
    keep_parts: bool = True,
    storage_options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    **writer_options: Any,
) -> Any:
    """Writes a dask-awkward array of records as RNTuples, one file per partition, from the
    workers that compute the partitions (``uproot.dask_write``'s shape, for RNTuple).

    Args:
        array: a ``dask_awkward.Array`` of records: its fields become the RNTuple's fields.
        destination: a directory (created if missing) or a URL prefix (``s3://bucket/skim``,
            ``root://host//path``, ``https://host/dav/path``). Partition ``i`` is written to
            ``{destination}/{prefix}-{i:05d}.root``, replacing a file of that name; other files
            there are left alone.
        name: the RNTuple's name in each file.
        prefix: the start of the part files' names.
        compute: True writes now and returns a :class:`DaskWriteResult`; False returns the lazy
            object (a ``dask_awkward.Scalar``) whose computation writes and gives that result, to
            compute with other outputs in one graph (``dask.compute(skim_write, histograms)``).
        merge: also merge the parts, in partition order, into this file (path or URL) with
            :func:`rntuple.merge` (pages copied, not recompressed); an existing file is replaced.
            The merge runs in the graph's final task, on a worker.
        keep_parts: with ``merge``, False deletes the parts once merged (local destinations only).
        storage_options: the remote store's settings, as the environment variables the project's
            readers and writers take (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
            ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``RNTUPLE_S3_PART_SIZE``,
            ``BEARER_TOKEN``, ... docs/remote.md): set on the worker while it writes its part
            (and merges), for workers that do not share the client's environment (URL
            destinations only).
        progress: with ``compute=True``, a bar of the tasks done (``rntuple._term``: ``None``
            shows it when the output is a terminal or a notebook). It follows dask's local
            schedulers (threads, processes, synchronous); a ``distributed`` cluster shows its
            progress on its dashboard instead.
        writer_options: ``rntuple.recreate``'s ``compression``, ``compression_level`` and
            ``max_key_size``, and ``mkrntuple``'s options (``types``, ``representations``,
            ``projections``, page and cluster sizes, ``memory_budget``, ...).

    Returns:
        A :class:`DaskWriteResult` (``compute=True``) or the lazy ``dask_awkward.Scalar``.
    """
    dak = require("dask_awkward", feature=_FEATURE, extra="dask")
    from dask.base import tokenize
    from dask.blockwise import BlockIndex
    from dask.highlevelgraph import HighLevelGraph
    from dask_awkward.layers import AwkwardMaterializedLayer
    from dask_awkward.lib.core import map_partitions, new_scalar_object

    from .._write_options import _options, compression_setting

    if not isinstance(array, dak.Array):
        raise InvalidArgumentError(f"rntuple.dask_write writes a dask_awkward.Array, not {type(array).__name__}")
    destination = os.fspath(destination)
    if not isinstance(name, str) or not name.strip("/"):
        raise InvalidArgumentError(f"name must be an RNTuple name, not {name!r}")
    if not isinstance(prefix, str) or not prefix or "/" in prefix or os.sep in prefix:
        raise InvalidArgumentError(f"prefix must be a file-name prefix without '/', not {prefix!r}")
    remote = _is_remote(destination)
    if not remote:
        destination = _local_dir(destination)
        if os.path.exists(destination) and not os.path.isdir(destination):
            raise InvalidArgumentError(f"destination {destination!r} exists and is not a directory")
        if storage_options:
            raise InvalidArgumentError("storage_options apply to a URL destination, not a local directory")
    if storage_options is not None and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in dict(storage_options).items()
    ):
        raise InvalidArgumentError("storage_options maps environment variable names to string values")
    merged = None
    if merge is not None:
        merged = os.fspath(merge)
        if not _is_remote(merged):
            merged = _local_dir(merged)
        if not keep_parts and remote:
            raise InvalidArgumentError("keep_parts=False deletes parts of a local destination only")
    elif not keep_parts:
        raise InvalidArgumentError("keep_parts=False needs merge= (the parts are the output otherwise)")

    file_options = {k: writer_options.pop(k) for k in _FILE_OPTIONS if k in writer_options}
    rntuple_options = dict(writer_options)
    checked = {k: v for k, v in rntuple_options.items() if k not in _RNTUPLE_ARGS}
    _options(checked)  # a bad option fails here, not in every task
    compression_setting(file_options.get("compression", 505), file_options.get("compression_level"))
    form = array.form
    if not _is_record(form):
        raise InvalidArgumentError(
            "rntuple.dask_write writes records (an RNTuple's fields); this array's type is "
            f"{array.type}: give it a field name, e.g. dak.zip({{'x': array}})"
        )
    import awkward as ak

    from .._write import schema_of

    schema = schema_of(ak.Array(form.length_zero_array()))
    if not remote:
        os.makedirs(destination, exist_ok=True)

    token = tokenize(array, destination, name, prefix, merged, keep_parts, file_options, rntuple_options)
    short = token[:12]
    writer = _WritePart(
        destination,
        name,
        prefix,
        short,
        schema,
        form,
        file_options,
        rntuple_options,
        dict(storage_options) if storage_options else None,
        max(5, len(str(array.npartitions - 1))),
    )
    written = map_partitions(
        writer,
        array,
        BlockIndex((array.npartitions,)),
        label="rntuple-write",
        token=token,
        meta=array._meta,
    )
    written.dask.layers[written.name].annotations = {"ak_output": True}

    final_name = f"rntuple-write-finish-{token}"
    finish = _Finish(
        destination, name, prefix, short, merged, keep_parts, dict(storage_options) if storage_options else None
    )
    task = (finish, *written.__dask_keys__())
    graph = HighLevelGraph.from_collections(
        final_name,
        AwkwardMaterializedLayer({(final_name, 0): task}, previous_layer_names=[written.name]),
        dependencies=[written],
    )
    out = new_scalar_object(graph, final_name, dtype="f8")
    if compute:
        with _progress_of_tasks(progress, "dask_write"):
            return out.compute()
    return out


class _progress_of_tasks:
    """A progress bar (``rntuple._term``) of the tasks a local dask scheduler runs, through dask's
    scheduler callbacks."""

    def __init__(self, progress: bool | None, label: str) -> None:
        from .._term import wanted

        self._label = label
        self._on = wanted(progress)
        self._callback: Any = None
        self._bar: Any = None

    def __enter__(self) -> _progress_of_tasks:
        if self._on is False:
            return self
        from dask.callbacks import Callback

        from .._term import Progress

        outer = self

        class _Tasks(Callback):
            def _start_state(self, dsk: Any, state: Any) -> None:
                total = sum(len(state[k]) for k in ("ready", "waiting", "running", "finished"))
                outer._bar = Progress(total, outer._label, outer._on, "tasks")

            def _posttask(self, key: Any, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
                if outer._bar is not None:
                    outer._bar.update(1)

        self._callback = _Tasks()
        self._callback.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._callback is not None:
            self._callback.__exit__(*exc)
        if self._bar is not None:
            self._bar.close()
