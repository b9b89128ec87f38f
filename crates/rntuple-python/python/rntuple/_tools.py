"""The data-manager tools from Python: ``inspect``, ``verify``, ``merge``.

They are the functions behind ``rntuple inspect``, ``rntuple verify`` and
``rntuple merge`` (see ``docs/tools.md``), run in Rust with the GIL released.
Ctrl-C stops ``verify`` and ``merge`` (a merge then leaves no output) and
raises ``KeyboardInterrupt``.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import _lib
from ._errors import InvalidArgumentError
from ._term import for_rust
from ._write_options import compression_setting

__all__ = ["FileReport", "MergeSummary", "Problem", "VerifyReport", "inspect", "merge", "verify"]

PathLike = str | os.PathLike[str]


def inspect(path: PathLike, name: str | None = None, *, verify_checksums: bool = True) -> dict[str, Any]:
    """Where the bytes go: the report of ``rntuple inspect --json`` as a dict.

    ``{"schema_version": 1, "file": ..., "file_size": ..., "rntuples": [...]}``
    with one entry per RNTuple of the file (only ``name`` when given): sizes of
    envelopes and pages, cluster groups, clusters, top-level fields and
    columns (largest first) with their compression, encodings and page-size
    distribution. The layout is documented in ``docs/tools.md``.
    """
    return _lib.inspect(os.fspath(path), name, verify_checksums)


@dataclass(frozen=True)
class Problem:
    """One problem found by :func:`verify`, with where it was found."""

    file: str
    rntuple: str | None
    field: str | None
    column: int | None
    cluster: int | None
    page: int | None
    offset: int | None
    check: str
    message: str
    text: str = dataclasses.field(repr=False, default="")

    def __str__(self) -> str:
        return self.text or f"{self.file}: {self.check}: {self.message}"


@dataclass(frozen=True)
class FileReport:
    """What :func:`verify` found in one file."""

    file: str
    ok: bool
    rntuples: list[str]
    num_pages: int
    page_bytes: int
    num_problems: int
    problems: list[Problem]
    interrupted: bool = False

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class VerifyReport:
    """The reports of all files; true when every file passed."""

    files: list[FileReport]

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.files)

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.files for p in f.problems]

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        lines = [str(p) for p in self.problems]
        for f in self.files:
            plural = "" if f.num_problems == 1 else "s"
            lines.append(f"{f.file}: OK" if f.ok else f"{f.file}: FAILED ({f.num_problems} problem{plural})")
        return "\n".join(lines)


def verify(
    paths: PathLike | Iterable[PathLike],
    *,
    read_values: bool = True,
    max_problems: int = 1000,
    progress: bool = False,
) -> VerifyReport:
    """Reads every envelope and page of the files and checks every checksum and invariant.

    Returns a :class:`VerifyReport` (true when all passed) listing each
    :class:`Problem` with its file, RNTuple, field, column, cluster, page and
    byte offset. A missing or unreadable file is a problem of that file, not
    an exception. ``read_values=False`` skips the final pass that reads every
    cluster through the reader; ``progress=True`` draws a bar on a terminal.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    files = [os.fspath(p) for p in paths]
    if max_problems < 1:
        raise InvalidArgumentError(f"max_problems must be at least 1, not {max_problems}")
    reports = _lib.verify(files, read_values, max_problems, for_rust(progress) if progress else False)
    return VerifyReport(
        [
            FileReport(
                file=r["file"],
                ok=r["ok"],
                rntuples=r["rntuples"],
                num_pages=r["num_pages"],
                page_bytes=r["page_bytes"],
                num_problems=r["num_problems"],
                problems=[Problem(**p) for p in r["problems"]],
                interrupted=r["interrupted"],
            )
            for r in reports
        ]
    )


@dataclass(frozen=True)
class MergeSummary:
    """What :func:`merge` did."""

    name: str
    inputs: int
    entries: int
    clusters: int
    cluster_groups: int
    compression: int
    pages_copied: int
    pages_recompressed: int
    pages_default: int
    pages_shared: int
    fields_added: list[str]
    fields_dropped: list[str]
    #: attribute sets of the inputs left out, as ROOT's ``RNTupleMerger`` leaves them out
    attribute_sets_dropped: list[str]
    bytes: int
    #: what did not stop the merge but should be known (an input in a newer format version); also
    #: issued as ``UserWarning``
    warnings: list[str]


def merge(
    out: PathLike,
    inputs: PathLike | Iterable[PathLike],
    name: str | None = None,
    mode: str = "strict",
    compression: int | str | None | Any = None,
    *,
    overwrite: bool = False,
    verify_checksums: bool = True,
    threads: int = 0,
    sync: bool = False,
    progress: bool | None = None,
) -> MergeSummary:
    """Concatenates the RNTuple ``name`` of ``inputs`` into the new file ``out``.

    ``name`` defaults to the only RNTuple of the first input. ``mode`` is
    ``"strict"`` (identical top-level fields), ``"union"`` (all fields; values
    an input lacks are defaults) or ``"filter"`` (the first input's fields),
    as ROOT's ``RNTupleMerger``. Pages are copied without decompression when
    their compression equals the output's: ``compression`` (a setting like
    ``505`` or a name like ``"zstd"``), by default the first input's. The
    output appears only when complete (written to a temporary file, then
    renamed); an existing ``out`` is replaced only with ``overwrite=True``.
    ``progress``: a bar on a terminal or in a notebook (``None``: when the output is one,
    unless ``RNTUPLE_PROGRESS=0``; see ``rntuple._term``).
    """
    if isinstance(inputs, str | os.PathLike):
        inputs = [inputs]
    files = [os.fspath(p) for p in inputs]
    setting = None if compression is None else compression_setting(compression)
    if threads < 0:
        raise InvalidArgumentError(f"threads must not be negative, not {threads}")
    show = for_rust(progress)
    s = _lib.merge(os.fspath(out), files, name, mode, setting, overwrite, verify_checksums, threads, sync, show)
    for w in s["warnings"]:
        warnings.warn(w, stacklevel=2)
    return MergeSummary(**s)


def recover(
    broken: PathLike, out: PathLike | None = None, *, overwrite: bool = False, sync: bool = False
) -> dict[str, Any]:
    """Completes ``broken``, a file whose writer died, with every cluster it committed.

    The writer keeps a journal beside the file (``broken + ".rntuple-journal"``)
    from which the committed clusters are found again; every envelope and page
    kept passes its checksum (docs/recover.md). With ``out`` the recovered file
    is written there (through a temporary file renamed when complete); without
    it only the report is made. Returns the report: ``state`` (``"complete"`` or
    ``"unfinished"``), ``entries`` kept, ``rntuples`` (name, entries, clusters,
    dropped), ``kept_bytes`` / ``file_bytes``, ``torn_journal``, ``output`` and
    ``text`` (what ``rntuple recover`` prints). Raises when nothing can be
    recovered.
    """
    target = None if out is None else os.fspath(out)
    return _lib.recover(os.fspath(broken), target, overwrite, sync)
