"""Converting TTrees and Parquet files to RNTuples, and RNTuples to Parquet: ``rntuple.convert``.

>>> rntuple.convert("nano.root:Events", "nano_rntuple.root")           # TTree -> RNTuple
>>> rntuple.convert(["a.parquet", "b.parquet"], "ab.root", name="Events")  # Parquet -> RNTuple
>>> rntuple.convert("nano_rntuple.root:Events", "nano.parquet")         # RNTuple -> Parquet

TTrees are read with uproot, in steps of bounded size, and written with the
Rust writer. The layout follows ROOT's ``RNTupleImporter``: flat branches
become fields of the same type (in branch order); the branches that share a
count leaf (NanoAOD's ``nMuon`` with ``Muon_pt``, ``Muon_eta``, ...) become
one untyped collection ``_collectionN`` of untyped records ``_0`` (numbered in
the order of the count leaves' names), and projected fields give every
original branch name back (``Muon_pt`` is a ``ROOT::VecOps::RVec<float>``
projected on ``_collectionN._0.Muon_pt``, ``nMuon`` a
``ROOT::RNTupleCardinality<std::uint32_t>`` on ``_collectionN``). Where we
differ from ROOT's importer, see ``docs/convert.md``.

The output is written under its own name in a hidden temporary directory
beside it and renamed into place when complete; an error,
``KeyboardInterrupt`` or ``SIGTERM`` removes it, so no half-written output is
ever left behind.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import signal
import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ._convert_sources import (
    PARQUET_METADATA_KEY,
    RNTUPLE_CLASS,
    TREE_CLASSES,
    ConvertError,
    _fspath_list,
    _ParquetSource,
    _Plan,
    _RNTupleSource,
    _TreeSource,
)
from ._dataset import expand, is_url
from ._errors import DirectoryError, MissingFileError
from ._file import open as open_file
from ._term import Progress
from ._write import compression_setting, recreate

__all__ = ["ConvertError", "ConvertResult", "Progress", "convert"]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


@dataclass(frozen=True)
class ConvertResult:
    """What ``convert`` wrote."""

    output: str
    format: str
    """``"rntuple"`` or ``"parquet"``."""
    name: str | None
    """The RNTuple's name (``None`` for Parquet output)."""
    entries: int
    inputs: tuple[str, ...]
    size: int
    """Bytes of the output file."""


# ---------------------------------------------------------------------------
# atomic output
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While converting, SIGTERM raises ``SystemExit(143)`` (so that cleanup runs) instead of killing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not allowed here (embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[str]:
    """Yields a temporary path for writing ``path``; renames it to ``path`` on success, removes it on any exception.

    The temporary file has the output's own name (a ROOT file records its
    name) inside a hidden temporary directory beside the output, so that the
    rename stays on one file system.

    A URL of a remote store (``s3://``, ``root://``, ``http(s)://``) is
    yielded as it is: its sink never shows an unfinished file (docs/remote.md,
    "Writing to a URL"), and a writer that fails leaves nothing complete.
    """
    if _remote(path):
        yield path
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise MissingFileError(2, "the output's directory does not exist", directory)
    if os.path.isdir(path):
        raise DirectoryError(21, "the output is a directory", path)
    base = os.path.basename(path)
    tmp_dir = os.path.join(directory, f".{base}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    os.mkdir(tmp_dir)
    tmp = os.path.join(tmp_dir, base)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        for leftover in (tmp, tmp + ".rntuple-journal"):  # the writer's commit journal (docs/recover.md)
            with contextlib.suppress(OSError):
                os.remove(leftover)
        raise
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(tmp_dir)


# ---------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------


def _expand(specs: Iterable[str | os.PathLike[str]]) -> list[tuple[str, str | None]]:
    """Input files (globs expanded, in sorted order) with their object names."""
    try:
        return expand(list(specs))
    except ValueError as e:
        raise ConvertError(str(e)) from None


def _file_format(path: str) -> str:
    if is_url(path):
        if not path.lower().startswith("file://"):
            return "root"  # remote inputs are ROOT files, read through the core's backends
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic == b"root":
        return "root"
    if magic == b"PAR1":
        return "parquet"
    raise ConvertError(f"{path}: neither a ROOT file nor a Parquet file (it starts with {magic!r})")


def _root_object(path: str, name: str | None) -> tuple[str, str]:
    """(object path, kind "tree" or "rntuple") of the TTree or RNTuple ``name`` in ``path``, or the only one."""
    with open_file(path) as f:
        classes = {k: c for k, c in f.classnames(cycle=False).items()}
    wanted = {k: c for k, c in classes.items() if c in TREE_CLASSES or c == RNTUPLE_CLASS}
    if name is None:
        if len(wanted) == 1:
            name = next(iter(wanted))
        elif not wanted:
            raise ConvertError(f"{path}: no TTree or RNTuple in this file (keys: {sorted(classes)})")
        else:
            raise ConvertError(
                f"{path}: several TTrees/RNTuples ({', '.join(sorted(wanted))}); choose one with FILE:NAME"
            )
    key = name.split(";")[0].strip("/")
    if key not in classes:
        raise ConvertError(f"{path}: no object {name!r} in this file (TTrees and RNTuples: {sorted(wanted)})")
    classname = classes[key]
    if key not in wanted:
        raise ConvertError(f"{path}:{key} is a {classname}, not a TTree or an RNTuple")
    return key, ("rntuple" if classname == RNTUPLE_CLASS else "tree")


# ---------------------------------------------------------------------------
# sinks
# ---------------------------------------------------------------------------


def _write_rntuple(
    tmp: str,
    name: str,
    plan: _Plan,
    batches: Iterator[tuple[pa.Table, int]],
    progress: Progress,
    compression: int,
    options: dict[str, Any],
) -> int:
    entries = 0
    with recreate(tmp, compression=compression) as f:
        extra: dict[str, Any] = {}
        if plan.projections:
            extra["projections"] = plan.projections
        writer = f.mkrntuple(
            name,
            plan.schema,
            types=plan.types or None,
            representations=plan.representations or None,
            **extra,
            **options,
        )
        with writer:
            for table, n in batches:
                writer.extend(table)
                entries += n
                progress.update(n)
    return entries


# Parquet codecs for ROOT's algorithms (lzma has no Parquet codec).
_PARQUET_CODECS = {0: "none", 1: "gzip", 4: "lz4", 5: "zstd"}


def _write_parquet(
    tmp: str, source: _RNTupleSource, batches: Iterator[tuple[pa.Table, int]], progress: Progress, compression: int
) -> int:
    import pyarrow.parquet as pq

    algorithm, level = divmod(compression, 100)
    codec = _PARQUET_CODECS.get(algorithm)
    if codec is None:
        raise ConvertError(
            f"compression setting {compression}: Parquet has no codec for it (use zstd, lz4, zlib or none)"
        )
    kwargs: dict[str, Any] = {"compression": codec}
    if codec in ("zstd", "gzip") and level:
        kwargs["compression_level"] = level
    entries = 0
    writer = None
    metadata = {PARQUET_METADATA_KEY: json.dumps(source.metadata).encode()}
    try:
        for table, n in batches:
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema.with_metadata(metadata), **kwargs)
            writer.write_table(table.replace_schema_metadata(metadata))
            entries += n
            progress.update(n)
        if writer is None:  # no entries: an empty file with the schema
            writer = pq.ParquetWriter(tmp, _empty_schema(source).with_metadata(metadata), **kwargs)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise ConvertError(f"{source.where}: cannot be written as Parquet: {err}") from None
    finally:
        if writer is not None:
            writer.close()
    return entries


def _empty_schema(source: _RNTupleSource) -> pa.Schema:
    wanted = set(source.fields)
    table = source.ntuple.arrays(filter_field=lambda f: f.top_level and f.name in wanted, entry_stop=0, library="pa")
    return table.schema


# ---------------------------------------------------------------------------
# convert()
# ---------------------------------------------------------------------------


def _remote(path: str) -> bool:
    """A URL other than ``file://``: written by a remote store's sink."""
    return is_url(path) and not path.lower().startswith("file://")


def _output_size(path: str) -> int:
    """Bytes of the output written: a URL's answer to the reader's first request."""
    if not _remote(path):
        return os.path.getsize(path)
    with open_file(path) as f:
        return f._lib_file.size


def _output_format(path: str) -> str:
    return "parquet" if path.lower().endswith(PARQUET_SUFFIXES) else "rntuple"


def convert(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    name: str | None = None,
    compression: int | str | None = 505,
    compression_level: int | None = None,
    cluster_size: int | str | None = None,
    step_size: int | str = "100 MB",
    progress: bool | None = None,
    **options: Any,
) -> ConvertResult:
    """Converts TTrees or Parquet files into one RNTuple, or an RNTuple into a Parquet file.

    ``inputs``: a path or a list of paths; each may end in ``:NAME`` (the
    TTree or RNTuple in a ROOT file, ``"dir/Events"``; by default the only
    one in the file) and may be a glob (``"data/*.root:Events"``). Several
    inputs (same branches/columns) are written one after the other into one
    output.

    ``output``: a ``.parquet`` (``.pq``) path writes Parquet (input: one
    RNTuple), any other path a ROOT file with the RNTuple ``name`` (default:
    the TTree's name; for Parquet input, the name it was exported from, else
    ``"Events"``). An existing output is replaced, only once the new one is
    complete.

    ``compression`` (``505``, ``"zstd"``, ``"zstd:7"``, ``"lz4"``, ``"none"``,
    ...; default ROOT's 505) and ``compression_level``; ``cluster_size`` the
    approximate compressed cluster size (``"50 MB"``; ROOT's default
    128 MiB); ``step_size`` the entries or memory read per step; other
    ``options`` go to the RNTuple writer (see ``WritableFile.mkrntuple``).
    ``progress``: show a progress bar on stderr (default: when stderr is a
    terminal).
    """
    specs = _fspath_list(inputs)
    out = os.fspath(output)
    setting = compression_setting(compression, compression_level)
    files = _expand(specs)
    out_abs = os.path.abspath(out)
    for path, _ in files:
        if os.path.exists(out) and not is_url(path) and os.path.samefile(path, out_abs):
            raise ConvertError(f"the output {out!r} is also an input")
    formats = {_file_format(p) for p, _ in files}
    if len(formats) > 1:
        raise ConvertError("the inputs mix ROOT and Parquet files")
    in_format = formats.pop()
    out_format = _output_format(out)
    if out_format == "parquet" and _remote(out):
        raise ConvertError(f"Parquet output goes to a local file, not to the URL {out!r}")
    if out_format == "parquet":
        if options:
            raise ConvertError(f"options {sorted(options)} apply to RNTuple output only")
        if cluster_size is not None:  # Parquet: row groups of about this many uncompressed bytes
            step_size = cluster_size
    elif cluster_size is not None:
        options["approx_zipped_cluster_size"] = cluster_size

    source: Any
    if in_format == "parquet":
        if out_format == "parquet":
            raise ConvertError("Parquet -> Parquet is not a conversion; give an output that is not .parquet")
        source = _ParquetSource([p for p, _ in files], step_size)
    else:
        resolved = [(p, *_root_object(p, n)) for p, n in files]
        kinds = {k for _, _, k in resolved}
        if len(kinds) > 1:
            raise ConvertError("the inputs mix TTrees and RNTuples")
        kind = kinds.pop()
        if kind == "rntuple":
            if out_format != "parquet":
                raise ConvertError(
                    f"{files[0][0]}:{resolved[0][1]} is already an RNTuple; give an output ending in .parquet to "
                    "export it (`rntuple merge` rewrites RNTuples with other settings)"
                )
            source = _RNTupleSource([(p, o) for p, o, _ in resolved], step_size)
        else:
            if out_format == "parquet":
                raise ConvertError("TTree -> Parquet is not supported; convert to an RNTuple first")
            source = _TreeSource([(p, o) for p, o, _ in resolved], step_size)

    bar = Progress(source.total, os.path.basename(out), enabled=progress)
    rntuple_name = None
    try:
        with _sigterm_raises(), atomic_output(out) as tmp:
            try:
                if out_format == "parquet":
                    if name is not None:
                        source.metadata["name"] = name
                    entries = _write_parquet(tmp, source, source.batches(), bar, setting)
                else:
                    rntuple_name = name or source.default_name
                    entries = _write_rntuple(tmp, rntuple_name, source.plan, source.batches(), bar, setting, options)
            finally:
                bar.close()
            size = _output_size(tmp)
    finally:
        source.close()
    return ConvertResult(
        output=out,
        format=out_format,
        name=rntuple_name,
        entries=entries,
        inputs=tuple(p for p, _ in files),
        size=size,
    )


def describe(result: ConvertResult) -> str:
    """One line for the command line."""
    what = f"RNTuple '{result.name}'" if result.format == "rntuple" else "Parquet"
    inputs = result.inputs[0] if len(result.inputs) == 1 else f"{len(result.inputs)} files"
    return f"wrote {result.output}: {what}, {result.entries:,} entries from {inputs} ({_bytes(result.size)})"


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    exp = min(int(math.log(n, 1024)), 4)
    return f"{n / 1024**exp:.1f} {'BKMGT'[exp]}iB"
