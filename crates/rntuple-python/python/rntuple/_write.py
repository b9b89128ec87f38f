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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

import pyarrow as pa

from . import _lib
from ._filters import parse_memory_size
from ._write_input import _conform, _is_schema_only, _schema_and_overrides, _schema_of, _table_of
from ._write_options import TypeSpec, _options, _overrides, _projections, compression_setting  # noqa: F401

if TYPE_CHECKING:
    from ._attributes import AttributeSetWriter
    from ._parallel import ParallelWriter

__all__ = ["RNTupleWriter", "WritableFile", "compression_setting", "recreate", "schema_of"]

WriteError = _lib.WriteError

# ---------------------------------------------------------------------------
# writers
# ---------------------------------------------------------------------------


def _write_table(inner: Any, table: pa.Table) -> None:
    """Appends ``table`` through ``inner`` (a writer or fill context of ``_lib``), its batches all
    checked before any is written: a refused table writes nothing."""
    batches = table.to_batches()
    if len(batches) > 1:
        for batch in batches:
            inner.check(batch)
    for batch in batches:
        inner.extend(batch)


class _Writer:
    """What the writers of one RNTuple share (``RNTupleWriter``, ``rntuple._parallel.ParallelWriter``)."""

    def __init__(self, inner: Any, file: WritableFile) -> None:
        self._inner = inner
        self._file = file
        self._schema: pa.Schema = pa.schema(inner.schema)
        self._schemas = [self._schema]  # the schema after each add_fields, oldest first

    def __repr__(self) -> str:
        state = f"{self.state}, {self.num_entries} entries"
        return f"<rntuple.RNTupleWriter {self.name!r} in {self._file.path!r} ({state})>"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abandon()

    @property
    def name(self) -> str:
        """The RNTuple's path in the file (``"dir/Events"``)."""
        return self._inner.name

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the RNTuple: as declared and with the fields added since (nullable fields
        are ``std::optional``)."""
        return self._schema

    @property
    def state(self) -> str:
        """``"open"``, ``"closed"``, ``"abandoned"`` or ``"failed"``."""
        return self._inner.state

    @property
    def closed(self) -> bool:
        return self.state != "open"

    @property
    def num_entries(self) -> int:
        """Entries written so far."""
        return self._inner.num_entries

    def add_fields(
        self,
        schema_or_data: Any = None,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
        projections: Mapping[str, Any] | None = None,
    ) -> None:
        """Adds top-level fields: those of ``schema_or_data`` (a schema or data, as ``mkrntuple`` takes;
        only the types are used) and ``projections`` (as ``mkrntuple`` takes; sources may be old or new
        fields). ``types`` and ``representations`` name paths of the new fields.

        Before the first entry the fields are part of the header. After entries were written they go into
        the footer's schema extension with deferred columns, as ROOT's ``RNTupleModelUpdater`` adds them:
        the earlier entries read as the types' zero values (0, empty collections and strings, empty
        optionals). From then on ``extend`` needs the new fields too (a parallel writer's contexts also
        take batches of an earlier schema: the fields missing read as zeros). A refused addition
        (``WriteError``) leaves the writer as it was.
        """
        if schema_or_data is None:
            schema = pa.schema([])
        else:
            schema = _schema_of(schema_or_data)
        self._inner.add_fields(schema, _overrides(types, representations), _projections(projections))
        self._schema = pa.schema(self._inner.schema)
        self._schemas.append(self._schema)

    def close(self) -> None:
        """Writes the RNTuple's last cluster, page lists, footer and anchor (no-op when closed)."""
        self._inner.close()

    def abandon(self) -> None:
        """Gives the RNTuple up: it will not be in the file (its bytes written so far stay as dead space)."""
        self._inner.abandon()


class RNTupleWriter(_Writer):
    """One RNTuple being written; made by ``WritableFile.mkrntuple``.

    ``extend(batch)`` appends entries; ``close()`` (or leaving its ``with``
    block) writes the RNTuple's footer and anchor. An exception that leaves
    the ``with`` block abandons the RNTuple: it will not be in the file.
    """

    _inner: _lib.RNTupleWriter

    @property
    def memory_use(self) -> dict[str, int] | None:
        """Bytes the writer's buffers hold now (``"held"``) and held at most so far (``"high_water"``),
        as bounded by the ``memory_budget`` option; ``None`` once closed."""
        use = self._inner.memory_use
        return None if use is None else {"held": use[0], "high_water": use[1]}

    def extend(self, data: Any) -> None:
        """Appends the entries of ``data`` (the kinds ``mkrntuple`` takes), with the RNTuple's fields.

        Columns are matched by name. A batch whose types or values do not fit
        (another type, nulls in a field that is not ``std::optional``, strings
        that are not UTF-8, values outside a Real32Quant range) is refused as a
        whole with a ``WriteError`` and the writer stays usable; a failure
        while writing (I/O) marks it failed.
        """
        table, _, _ = _table_of(data)
        _write_table(self._inner, _conform(table, self._schema, self.name))

    def create_attribute_set(
        self,
        name: str,
        data_or_schema: Any,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
    ) -> AttributeSetWriter:
        """Creates the attribute set ``name`` (ROOT 6.40's ``CreateAttributeSet``): its fields are those of
        ``data_or_schema``, ``types`` and ``representations`` as for ``mkrntuple``. Its entries, each for a
        range of this RNTuple's entries, are written when this RNTuple is closed (``AttributeSetWriter``)."""
        from ._attributes import create_attribute_set

        return create_attribute_set(self, name, data_or_schema, types, representations)

    def commit_cluster(self) -> None:
        """Ends the current cluster here (clusters otherwise end by size)."""
        self._inner.commit_cluster()


class WritableFile:
    """A ROOT file being written; made by ``rntuple.recreate``.

    ``file["Events"] = data`` writes an RNTuple in one go;
    ``file.mkrntuple("Events", schema_or_data, **options)`` returns an
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
        _OPEN_FILES.add(self)

    def __repr__(self) -> str:
        state = "open" if self._inner is not None and self._inner.is_open else "closed"
        return f"<rntuple.WritableFile {self._path!r} ({state})>"

    def __enter__(self) -> WritableFile:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abandon()

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
            raise ValueError(f"file {self._path!r} is closed")
        return self._inner

    def mkrntuple(
        self,
        name: str,
        data_or_schema: Any,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
        projections: Mapping[str, Any] | None = None,
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
        ``page_buffer_budget``, ``page_checksums``, ``same_page_merging``,
        ``group_pages_by_column`` (hold a cluster's pages and write them
        grouped by column, as ROOT does, instead of streaming them),
        ``cluster_group_size``, ``description``, ``index32``,
        ``compression_threads``, ``memory_budget`` (bytes the writer may hold;
        see ``docs/writing.md``).
        """
        file = self._lib_file
        if not isinstance(name, str):
            raise TypeError(f"an RNTuple name must be a string, not {name!r}")
        schema, special = _schema_and_overrides(data_or_schema)
        opts = _options(options, self._defaults, self._compression)
        overrides = _overrides(types, representations)
        for path, spec in special.items():
            overrides[path] = {**spec, **overrides.get(path, {})}
        inner = file.rntuple(name.strip("/"), schema, overrides, opts, _projections(projections))
        writer = RNTupleWriter(inner, self)
        self._writers.append(writer)
        if not _is_schema_only(data_or_schema):
            try:
                writer.extend(data_or_schema)
            except BaseException:
                writer.abandon()
                raise
        return writer

    def mkrntuple_parallel(
        self,
        name: str,
        data_or_schema: Any,
        *,
        types: Mapping[str, TypeSpec] | None = None,
        representations: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> ParallelWriter:
        """Starts the RNTuple ``name`` to be filled by several threads (``rntuple._parallel``); arguments
        as for ``mkrntuple`` but ``projections``; data given are written through one fill context."""
        from ._parallel import mkrntuple_parallel

        return mkrntuple_parallel(self, name, data_or_schema, types, representations, options)

    def __setitem__(self, name: str, data: Any) -> None:
        """Writes ``data`` as the RNTuple ``name`` with the file's default options."""
        self.mkrntuple(name, data).close()

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

    def abandon(self) -> None:
        """Gives the file up without completing it: every reader refuses it as not completed."""
        for w in self._writers:
            w.abandon()
        self._writers = []
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
