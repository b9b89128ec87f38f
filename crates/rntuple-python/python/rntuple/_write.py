"""Writing RNTuples: ``rntuple.recreate(path)``.

>>> with rntuple.recreate("out.root") as f:
...     f["Events"] = events                        # awkward, pyarrow, pandas, dict of arrays
...     with f.mkrntuple("More", first_batch, compression="lz4") as w:
...         for batch in batches:
...             w.extend(batch)

The data are converted to Arrow record batches here and written by the Rust
engine (``rntuple::write``) with the GIL released.

A file is complete only when it is closed: until then it starts with a
placeholder instead of a ROOT file header. A file nobody closed is closed
(completed) when it is garbage-collected and, as uproot's files are, at the
normal end of the interpreter (``atexit``). An exception that leaves the
file's ``with`` block abandons the file (it stays incomplete: ROOT, uproot and
``rntuple.open`` refuse it); an exception that leaves an RNTuple writer's
``with`` block abandons that RNTuple (it will not be in the file).
"""

from __future__ import annotations

import atexit
import os
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pyarrow as pa

from . import _lib
from ._errors import StateError, WrongTypeError, unknown_name_error
from ._filters import parse_memory_size
from ._parallel import ParallelWriter, fill_once
from ._write_input import _is_schema_only, _schema_and_overrides, _schema_of
from ._write_options import TypeSpec, _options, _overrides, _projections, compression_setting
from ._writer import Completed, RNTupleWriter

__all__ = ["RNTupleWriter", "WritableFile", "compression_setting", "recreate", "schema_of"]

W = TypeVar("W", RNTupleWriter, ParallelWriter)


class WritableFile(Completed):
    """A ROOT file being written; made by ``rntuple.recreate``.

    ``file["Events"] = data`` writes an RNTuple and, as in uproot,
    ``file["Events"].extend(more)`` appends entries to it until the file is
    closed; ``file.mkrntuple("Events", schema_or_data, **options)`` returns an
    ``RNTupleWriter`` to fill batch by batch. The file is complete when it is
    closed (``close()``, the end of its ``with`` block, its garbage collection
    or the interpreter's normal exit), which also closes the RNTuple writers
    still open. An exception that leaves the ``with`` block
    abandons the file instead: it keeps a placeholder header and every reader
    (ROOT, uproot, ``rntuple.open``) refuses it as not completed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        compression: int | str | None = 505,
        compression_level: int | None = None,
        max_key_size: int | str | None = None,
        **options: Any,
    ) -> None:
        self._path = os.fspath(path)
        setting = compression_setting(compression, compression_level)
        _options(options)  # refuse bad options before creating the file
        self._defaults = dict(options)
        key_size = None if max_key_size is None else parse_memory_size(max_key_size)
        self._inner: _lib.FileWriter | None = _lib.FileWriter(self._path, setting, key_size)
        self._compression = setting
        self._writers: list[RNTupleWriter | ParallelWriter] = []
        self._named: dict[str, RNTupleWriter | ParallelWriter] = {}  # by name, for ``file[name]``
        _OPEN_FILES.add(self)

    def __repr__(self) -> str:
        state = "open" if self._inner is not None and self._inner.is_open else "closed"
        return f"<rntuple.WritableFile {self._path!r} ({state})>"

    def __del__(self) -> None:
        self._complete_unattended()

    def _complete_unattended(self) -> None:
        """Completes a file nobody closed (collected, or open at interpreter exit), as uproot's
        files are readable then; if that fails the file is abandoned, with a warning."""
        inner = getattr(self, "_inner", None)
        if inner is None or not inner.is_open:
            return
        try:
            self.close()
        except Exception as err:
            warnings.warn(
                f"rntuple: {self._path!r} was not closed and could not be completed ({err}); "
                "it is left incomplete (unreadable)",
                ResourceWarning,
                stacklevel=2,
            )

    @property
    def path(self) -> str:
        return self._path

    @property
    def compression(self) -> int:
        """The file's compression setting, the default of its RNTuples."""
        return self._compression

    @property
    def closed(self) -> bool:
        return self._inner is None or not self._inner.is_open

    @property
    def _lib_file(self) -> _lib.FileWriter:
        if self._inner is None or not self._inner.is_open:
            raise StateError(f"file {self._path!r} is closed")
        return self._inner

    def mkrntuple(
        self,
        name: str,
        data_or_schema: Any,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
        projections: Mapping[str, Any] | None = None,
        streamer: Iterable[str] | None = None,
        soa: Iterable[str] | None = None,
        **options: Any,
    ) -> RNTupleWriter:
        """Starts the RNTuple ``name`` (``"dir/name"``: in subdirectory ``dir``).

        ``data_or_schema`` fixes its fields: a ``pyarrow.Schema`` (taken as is:
        nullable fields become ``std::optional``) or a dict of types
        (``{"pt": "var * float32", "n": np.int32}``: awkward datashapes, numpy
        dtypes), which write nothing; or data of any kind ``extend`` takes,
        whose types declare the fields and whose entries are written as the
        first entries, as uproot's ``mkrntuple`` does (``extend`` appends after
        them; to declare fields from example data without writing it, pass
        ``rntuple.schema_of(data)``). For awkward, option types become
        ``std::optional``; for pyarrow and pandas, nullable columns become
        ``std::optional`` only if they hold nulls. A pandas index that is not
        a ``RangeIndex`` is written as columns (named as pyarrow's
        ``Table.from_pandas`` names them); float16 columns become ``float``
        fields with Real16 columns; datetime64 / timestamp columns become
        ``std::int64_t`` fields with the unit in the field description, read
        back as datetime64.

        ``types`` maps field paths (``"jets"``, ``"jets._0.pt"``) to C++ types
        (``"std::map<std::string,float>"``, ``"ROOT::VecOps::RVec<float>"``,
        ``"std::optional<double>"``, a class name for a record, ...), or to
        ``{"type": "Klass", "type_version": 3, "type_checksum": 840875}``
        (a user class's version and ROOT checksum, stored in the header);
        ``representations`` maps field paths to column representations:
        ``"Real16"``, ``"Real32"``, ``("Real32Trunc", bits)``, ``("Real32Quant",
        bits, min, max)``, ``"Double32_t"``, ``"Index32"``/``"Index64"``,
        ``"split"``/``"unsplit"`` (several in a list).

        ``streamer`` lists top-level fields written as streamer fields (ROOT's
        ``RStreamerField``): a struct field with a class name in ``types``
        (``types={"hit": "Hit"}, streamer=["hit"]``), or a list of such structs
        typed ``std::vector<Hit>``, stored whole per entry as ROOT's
        ``TBufferFile`` streams the class, with its streamer info in the footer;
        ROOT reads them through the class's dictionary (``docs/writing.md``,
        "Streamer fields").
        ``soa`` lists fields (lists of structs) to write as struct-of-arrays
        fields, ROOT's ``RSoAField`` (field flag 0x08): ``types`` must name
        the SoA class for the field and the record class for its ``_0``,
        ``soa=["hits"], types={"hits": "HitSoA", "hits._0": "HitRecord"}``
        (see ``docs/writing.md``, "Struct-of-arrays fields").

        ``projections`` adds projected fields (ROOT's ``AddProjectedField``):
        ``{new_name: source_path}`` or ``{new_name: (cpp_type, source_path)}``,
        e.g. ``{"Muon_pt": "_collection0._0.Muon_pt", "nMuon":
        ("ROOT::RNTupleCardinality<std::uint32_t>", "_collection0")}``. A
        projected field presents the source's data (alias columns: no bytes
        written, batches do not carry it). With a bare path it keeps the
        source's type, in one ``ROOT::VecOps::RVec<…>`` per collection the
        path crosses, as ROOT's ``RNTupleImporter`` does; the tuple form gives
        the type (``std::vector<T>``, ``ROOT::RNTupleCardinality<std::uint64_t>``,
        ...), which must fit the source's structure.

        ``options`` (default: the file's): ``compression`` (setting or name),
        ``compression_level``, ``approx_zipped_cluster_size``,
        ``max_unzipped_cluster_size``, ``initial_unzipped_page_size``,
        ``max_unzipped_page_size`` (sizes as ints or strings like ``"1 MiB"``),
        ``page_buffer_budget`` (where pages end; ROOT's 256 MiB),
        ``page_buffer_memory`` (how much of it stays in memory, 16 MiB; the
        rest waits in a scratch file), ``page_checksums``, ``same_page_merging``,
        ``group_pages_by_column`` (hold a cluster's compressed pages in
        memory instead of spilling them to a scratch file; the bytes
        written are the same: ROOT's column-grouped layout either way),
        ``cluster_group_size``, ``description``, ``index32``,
        ``compression_threads``, ``memory_budget`` (bytes the writer may hold;
        see ``docs/writing.md``).
        """

        def make(file: _lib.FileWriter, path: str, schema: pa.Schema, overrides: dict, opts: dict) -> RNTupleWriter:
            inner = file.rntuple(path, schema, overrides, opts, _projections(projections))
            return RNTupleWriter(inner, self._path)

        return self._start(
            name, data_or_schema, types, representations, options, make, RNTupleWriter.extend, streamer, soa
        )

    def mkrntuple_parallel(
        self,
        name: str,
        data_or_schema: Any,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
        soa: Iterable[str] | None = None,
        **options: Any,
    ) -> ParallelWriter:
        """Starts the RNTuple ``name`` to be filled by several threads (``rntuple._parallel``); arguments
        as for ``mkrntuple`` but ``projections``; data given are written through one fill context."""

        def make(file: _lib.FileWriter, path: str, schema: pa.Schema, overrides: dict, opts: dict) -> ParallelWriter:
            return ParallelWriter(_lib.ParallelWriter(file, path, schema, overrides, opts), self._path)

        return self._start(name, data_or_schema, types, representations, options, make, fill_once, soa=soa)

    def _start(
        self,
        name: str,
        data_or_schema: Any,
        types: Mapping[str, TypeSpec] | None,
        representations: Mapping[str, Any] | None,
        options: dict[str, Any],
        make: Callable[[_lib.FileWriter, str, pa.Schema, dict[str, Any], dict[str, Any]], W],
        first: Callable[[W, Any], None],
        streamer: Iterable[str] | None = None,
        soa: Iterable[str] | None = None,
    ) -> W:
        """Starts a writer of the RNTuple ``name``: ``make(file, path, schema, overrides, options)``
        creates it, ``first(writer, data)`` writes the entries of ``data_or_schema`` unless it
        declares fields only (a failure there abandons the writer)."""
        file = self._lib_file
        if not isinstance(name, str):
            raise WrongTypeError(f"an RNTuple name must be a string, not {name!r}")
        schema, special = _schema_and_overrides(data_or_schema)
        opts = _options(options, self._defaults, self._compression)
        overrides = _overrides(types, representations, soa)
        for path, spec in special.items():
            overrides[path] = {**spec, **overrides.get(path, {})}
        if isinstance(streamer, str) or not all(isinstance(p, str) for p in streamer or ()):
            raise WrongTypeError(f"streamer is a list of field names, not {streamer!r}")
        for path in streamer or ():
            overrides.setdefault(path, {})["streamer"] = True
        writer = make(file, name.strip("/"), schema, overrides, opts)
        self._writers.append(writer)
        self._named[name.strip("/")] = writer
        if not _is_schema_only(data_or_schema):
            try:
                first(writer, data_or_schema)
            except BaseException:
                writer.abandon()
                raise
        return writer

    def __setitem__(self, name: str, data: Any) -> None:
        """Writes ``data`` as the RNTuple ``name`` with the file's default options; the RNTuple
        stays open for ``file[name].extend(more)`` (uproot's way to append) until the file is
        closed, or ``file[name].close()``."""
        self.mkrntuple(name, data)

    def __getitem__(self, name: str) -> RNTupleWriter | ParallelWriter:
        """The writer of the RNTuple ``name`` made in this file (``file[name] = data`` or
        ``mkrntuple``), to ``extend`` while it is open."""
        if not isinstance(name, str):
            raise WrongTypeError(f"an RNTuple name must be a string, not {name!r}")
        writer = self._named.get(name.strip("/"))
        if writer is None:
            raise unknown_name_error(
                name, list(self._named), "RNTuple", head=f"no RNTuple {name!r} is written in {self._path!r}"
            )
        if writer.closed:
            raise StateError(
                f"RNTuple {name!r} of {self._path!r} is {writer.state}: it cannot be extended "
                "(appending to a finished RNTuple, uproot's update(), is not supported yet)"
            )
        return writer

    def close(self) -> None:
        """Closes the RNTuple writers still open and completes the file (no-op when closed).

        If that fails, the file is abandoned (left incomplete) and the error raised.
        """
        if self._inner is None or not self._inner.is_open:
            return
        try:
            for w in self._writers:
                if w.state == "open":
                    w.close()
            self._inner.finish()
        except BaseException:
            self.abandon()
            raise
        finally:
            self._writers = []
            self._named = {}

    def abandon(self) -> None:
        """Gives the file up without completing it: every reader refuses it as not completed."""
        for w in self._writers:
            w.abandon()
        self._writers = []
        self._named = {}
        if self._inner is not None:
            self._inner.abandon()


# Files being written: completed at normal interpreter exit (a file collected
# earlier is completed by `__del__`).
_OPEN_FILES: weakref.WeakSet[WritableFile] = weakref.WeakSet()


@atexit.register
def _complete_open_files() -> None:
    for f in list(_OPEN_FILES):
        f._complete_unattended()


def schema_of(data: Any) -> pa.Schema:
    """The Arrow schema ``mkrntuple`` declares for ``data``; pass it to ``mkrntuple`` to declare
    the fields of example data without writing its entries."""
    return _schema_of(data)


def recreate(
    path: str | os.PathLike[str],
    *,
    compression: int | str | None = 505,
    compression_level: int | None = None,
    max_key_size: int | str | None = None,
    **options: Any,
) -> WritableFile:
    """Creates (or replaces) the ROOT file ``path`` for writing RNTuples.

    ``path`` may be a URL: ``s3://bucket/key``, ``root://host//path`` or
    ``https://host/path`` (WebDAV); the file appears there only once it is
    complete (docs/remote.md, "Writing to a URL").

    ``compression`` (a ROOT setting like ``505``, or ``"zstd"``, ``"zlib"``,
    ``"lzma"``, ``"lz4"``, ``"none"`` with ``compression_level``) is the file's
    and the default of its RNTuples; ``max_key_size`` the largest payload of
    one key (ROOT's default 1 GiB); other ``options`` (see
    ``WritableFile.mkrntuple``) are defaults of its RNTuples.

    >>> with rntuple.recreate("out.root", compression="lz4") as f:
    ...     f["Events"] = ak.Array({"pt": [[1.0, 2.0], []]})
    """
    return WritableFile(
        path, compression=compression, compression_level=compression_level, max_key_size=max_key_size, **options
    )
