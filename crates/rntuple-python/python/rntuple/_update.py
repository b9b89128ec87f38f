"""Appending to a finished file: ``rntuple.update(path)``, as ``uproot.update``.

>>> with rntuple.update("events.root") as f:
...     f["Events"].extend(more_events)          # new entries (new clusters)
...     f["Events"].extend(with_a_new_field)     # and new fields (schema extension)

How: the entries given to ``extend`` are written, with the RNTuple's own
field types and compression, to a side file next to the original; closing
the file merges the original RNTuple and the side file's entries (``merge``,
mode ``"union"``: the original's pages are copied as stored, never
decompressed; fields that are new get deferred columns in the footer's schema
extension, the original entries reading them as zero values, as ROOT's
``RNTupleModelUpdater`` writes them) into a temporary file in the same
directory, which is renamed over the original only when it is complete.

So the original is never modified in place: a writer that dies or fails at
any point leaves the original file as it was (every original entry still
reads) and, at worst, hidden temporary files (``.NAME.PID.rntuple-update*``).
The price is one copy of the file's bytes at ``close()`` (uproot writes in
place instead; a crash in the middle of its update can leave the file
unreadable).

What is not supported (refused with a clear error, nothing changed): a file
that holds anything besides the one RNTuple updated (other RNTuples,
histograms; the merged file would lose them), an RNTuple with attribute sets,
remote URLs, and ``f[name] = data`` (in uproot a new object, not an append).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import pyarrow as pa

from . import _lib
from ._errors import InvalidArgumentError, StateError, UnsupportedError, WrongTypeError, unknown_name_error
from ._write import WritableFile, recreate
from ._writer import Completed, RNTupleWriter, _table_of

__all__ = ["RNTupleUpdater", "UpdatableFile", "update"]

# Keys a file holds besides its objects: the streamer infos, the free segments, ...
_BOOKKEEPING = {"StreamerInfo", "KeysList", "FreeSegments"}


def _temp_next_to(path: str, what: str) -> str:
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{os.getpid()}.rntuple-update{what}")


def _types_of(fields: list[Any]) -> dict[str, Any]:
    """What the side file's writer is told so that its fields are the original's exactly (merge
    refuses others): each top-level field's C++ type, and the type version and checksum of every
    field that has them (ROOT's classes, at any depth)."""
    from ._fields import iter_fields

    out: dict[str, Any] = {f.name: f.type_name for f in fields}
    for f in iter_fields(fields):
        if f.type_version or f.type_checksum is not None:
            spec: dict[str, Any] = {"type_version": f.type_version}
            if f.parent is None:  # a subfield's type comes with its parent's type name
                spec["type"] = f.type_name
            if f.type_checksum is not None:
                spec["type_checksum"] = f.type_checksum
            out[f.path] = spec
    return out


class RNTupleUpdater:
    """The entries to append to one RNTuple of an :class:`UpdatableFile` (``f[name]``)."""

    def __init__(self, owner: UpdatableFile, name: str, schema: pa.Schema, types: dict[str, Any]) -> None:
        self._owner = owner
        self._name = name
        self._schema = schema  # the original's fields as Arrow types (what batches are conformed to)
        self._types = types  # their C++ types, kept in the side file so that merge copies as stored
        self._writer: RNTupleWriter | None = None
        self._side: WritableFile | None = None
        self._appended = 0

    def __repr__(self) -> str:
        return f"<rntuple.RNTupleUpdater {self._name!r} of {self._owner.path!r} (+{self._appended} entries)>"

    @property
    def name(self) -> str:
        return self._name

    @property
    def num_entries(self) -> int:
        """Entries appended so far (not counting the original's)."""
        return self._appended

    @property
    def schema(self) -> pa.Schema:
        """The fields entries must have: the original's and those added by ``extend``."""
        return self._schema if self._writer is None else self._writer.schema

    def extend(self, data: Any) -> None:
        """Appends the entries of ``data`` (what ``WritableFile.mkrntuple`` takes) after the
        RNTuple's entries. They must have every field of the RNTuple; fields it does not have
        are added (schema extension: the entries before read them as zero values: 0, empty
        collections and strings)."""
        self._owner._check_open()
        table, _, _ = _table_of(data)
        missing = [n for n in self._schema.names if n not in table.schema.names]
        if missing:
            raise InvalidArgumentError(
                f"entries appended to RNTuple {self._name!r} of {self._owner.path!r} lack its field(s) "
                f"{', '.join(repr(m) for m in missing)}"
            )
        if self._writer is None:
            new = [table.schema.field(n) for n in table.schema.names if n not in self._schema.names]
            first = pa.schema([*self._schema, *new])
            self._side = recreate(self._owner._side_path(self._name), compression=self._owner._compression)
            self._writer = self._side.mkrntuple(self._name, first, types=self._types)
        else:
            known = set(self._writer.schema.names)
            new = [table.schema.field(n) for n in table.schema.names if n not in known]
            if new:
                self._writer.add_fields(pa.schema(new))
        self._writer.extend(table)
        self._appended += table.num_rows

    def _finish_side(self) -> str | None:
        """Completes the side file; its path, or ``None`` when nothing was appended."""
        if self._side is None:
            return None
        self._side.close()
        return self._side.path

    def _drop(self) -> None:
        if self._side is not None:
            path = self._side.path
            with contextlib.suppress(Exception):
                self._side.abandon()
            with contextlib.suppress(OSError):
                os.remove(path)
            self._side = None
            self._writer = None


class UpdatableFile(Completed):
    """A finished ROOT file opened to append entries (and fields) to its RNTuple; made by
    :func:`update`. ``f[name]`` gives the :class:`RNTupleUpdater` to ``extend``; closing the file
    (``close()``, the end of its ``with`` block) writes the result over the original; an exception
    leaving the ``with`` block (or ``abandon()``) keeps the original as it was."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        verify_checksums: bool = True,
        threads: int = 0,
        progress: bool | None = None,
    ) -> None:
        from ._file import open as open_file

        if not isinstance(path, str | os.PathLike):
            raise WrongTypeError(f"update takes the path of a local file, not {path!r}")
        self._path = os.fspath(path)
        if "://" in self._path:
            raise UnsupportedError(f"update works on local files only, not {self._path!r}")
        self._verify = verify_checksums
        self._threads = threads
        self._progress = progress
        with open_file(self._path) as f:
            names = [n.split(";")[0] for n in f.rntuple_names()]
            others = sorted(
                {k[0] for k in f._all_keys() if k[0] not in names and k[1] != "ROOT::RNTuple"} - _BOOKKEEPING
            )
            # what an updater needs of each RNTuple, read now (no page is read)
            self._rntuples: dict[str, tuple[pa.Schema, dict[str, Any], list[str]]] = {}
            for n in names:
                nt = f._rntuple(n)
                types = _types_of(nt.fields)
                schema = nt.arrays(entry_stop=0, library="pa").schema
                self._rntuples[n] = (schema, types, list(nt.attribute_sets))
        self._others = others
        self._compression = self._compression_of()
        self._updaters: dict[str, RNTupleUpdater] = {}
        self._open = True

    def _compression_of(self) -> int:
        """The compression setting of the file's RNTuples' first column (merge keeps it)."""
        with contextlib.suppress(Exception):
            report = _lib.inspect(self._path, None, False)
            for r in report["rntuples"]:
                for c in r.get("columns", []):
                    if c.get("compression") is not None:
                        return int(c["compression"])
        return 505

    def __repr__(self) -> str:
        return f"<rntuple.UpdatableFile {self._path!r} ({'open' if self._open else 'closed'})>"

    @property
    def path(self) -> str:
        return self._path

    @property
    def closed(self) -> bool:
        return not self._open

    def _check_open(self) -> None:
        if not self._open:
            raise StateError(f"file {self._path!r} is closed")

    def _side_path(self, name: str) -> str:
        return _temp_next_to(self._path, f"-{name.replace('/', '_')}.side")

    def keys(self) -> list[str]:
        """The RNTuples of the file."""
        return list(self._rntuples)

    def __getitem__(self, name: str) -> RNTupleUpdater:
        self._check_open()
        if not isinstance(name, str):
            raise WrongTypeError(f"an RNTuple name must be a string, not {name!r}")
        key = name.strip("/").split(";")[0]
        if key not in self._rntuples:
            raise unknown_name_error(
                name, list(self._rntuples), "RNTuple", head=f"no RNTuple {name!r} in {self._path!r}"
            )
        if key not in self._updaters:
            self._updaters[key] = self._updater(key)
        return self._updaters[key]

    def _updater(self, name: str) -> RNTupleUpdater:
        if self._others or len(self._rntuples) > 1:
            held = sorted({*self._others, *(n for n in self._rntuples if n != name)})
            raise UnsupportedError(
                f"update appends to a file that holds one RNTuple only; {self._path!r} also holds "
                f"{', '.join(repr(h) for h in held[:5])}{' ...' if len(held) > 5 else ''}"
            )
        schema, types, attribute_sets = self._rntuples[name]
        if attribute_sets:
            raise UnsupportedError(
                f"RNTuple {name!r} of {self._path!r} has attribute sets ({', '.join(attribute_sets)}); "
                "update would lose them"
            )
        return RNTupleUpdater(self, name, schema, types)

    def __setitem__(self, name: str, data: Any) -> None:
        """Refused: in ``uproot.update`` this writes a new object (a new cycle) rather than
        appending, which this file cannot do; ``f[name].extend(data)`` appends."""
        raise UnsupportedError(
            f"update appends to existing RNTuples: use f[{name!r}].extend(data); writing a new "
            f"object into {self._path!r} is not supported"
        )

    def close(self) -> None:
        """Writes the original entries and those appended over the original file (no-op when
        closed, or when nothing was appended). On any failure the original is left as it was."""
        if not self._open:
            return
        self._open = False
        out = _temp_next_to(self._path, ".tmp")
        try:
            for name, u in self._updaters.items():
                side = u._finish_side()
                if side is None:
                    continue
                from ._tools import merge

                summary = merge(
                    out,
                    [self._path, side],
                    name,
                    mode="union",
                    compression=self._compression,
                    overwrite=True,
                    verify_checksums=self._verify,
                    threads=self._threads,
                    progress=self._progress,
                )
                if summary.attribute_sets_dropped:  # refused when opened; checked again before the swap
                    raise UnsupportedError(f"update would lose attribute sets {summary.attribute_sets_dropped}")
                os.replace(out, self._path)
        finally:
            with contextlib.suppress(OSError):
                os.remove(out)
            self._drop_all()

    def abandon(self) -> None:
        """Gives the update up: the original file stays as it was."""
        self._open = False
        self._drop_all()

    def _drop_all(self) -> None:
        for u in self._updaters.values():
            u._drop()
        self._updaters = {}


def update(
    path: str | os.PathLike[str], *, verify_checksums: bool = True, threads: int = 0, progress: bool | None = None
) -> UpdatableFile:
    """Opens the finished ROOT file ``path`` to append entries, and fields, to its RNTuple, as
    ``uproot.update``: ``f = rntuple.update(path); f["Events"].extend(arrays); f.close()``.

    Appended entries become new clusters; fields they have that the RNTuple has not are added
    through schema extension (the earlier entries read them as zero values). The result replaces
    the original when the file is closed: the original's pages are copied as stored into a
    temporary file that is renamed over it, so a failure (or a crash) at any point leaves the
    original as it was. ``progress``: a bar of that copy (as ``merge``'s). See ``docs/writing.md``,
    "Appending to a finished file".
    """
    return UpdatableFile(path, verify_checksums=verify_checksums, threads=threads, progress=progress)
