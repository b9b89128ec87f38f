"""coffea's NanoEvents on rntuple's reader, in coffea's eager, virtual and dask modes.

>>> from coffea.nanoevents import NanoAODSchema
>>> from rntuple.integrations.coffea import NanoEventsFactory
>>> events = NanoEventsFactory.from_root({"nano.root": "Events"}, schemaclass=NanoAODSchema,
...                                       mode="virtual").events()

``NanoEventsFactory.from_root`` takes coffea's own arguments and returns coffea's
``NanoEventsFactory`` (so ``.events()``, ``access_log``, pickling work as with coffea);
only the bytes come through ``rntuple`` instead of uproot. coffea has no hook for another
reader, so this module is the smallest adapter over coffea's own pieces (docs/dask.md,
"coffea"):

* eager: every field read at once (one ``RNTuple.arrays`` call) and handed to coffea's
  ``PreloadedSourceMapping``, as coffea's ``from_preloaded`` does;
* virtual: the same mapping over a column source that reads a field only when coffea
  touches one of its buffers (``access_log`` lists what was read);
* dask: coffea's own form mapping of its dask mode (``_map_schema_uproot``: the schema's
  form and its buffer keys) under an IO function of ours that speaks dask-awkward's
  projection protocol, so a computation reads only the fields it touches
  (:func:`rntuple.integrations.dask.read_log` lists them, per partition). Partitions are
  whole clusters, as ``rntuple.dask`` cuts them (``steps_per_file`` is not used).

Fields whose names start with ``_`` (ROOT's ``RNTupleImporter`` writes a NanoAOD's
collections as ``_collectionN`` records and presents their members again as projected
fields ``Muon_pt``, ``nMuon``) are left out: coffea builds its collections from the flat
fields, as it does for the TTree. ``uproot_options`` are not used (there is no uproot);
``verify_checksums`` and ``max_memory`` among them are passed to ``rntuple.open``, and
``filter_name`` (there or in ``iteritems_options``, in any mode) chooses among the names
coffea is given.

PHYSLITESchema reads an ATLAS PHYSLITE RNTuple (``EventData``) through a renaming layer
(:func:`_physlite_columns`): the schema expects a TTree's branch names, ``XAuxDyn.pt``, where
the RNTuple has fields ``XAuxDyn:pt`` and records ``XAux:``; ElementLinks are records
``{m_persKey, m_persIndex}`` in both, so coffea's cross-references work unchanged.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .._errors import InvalidArgumentError, NotFoundError
from . import require

__all__ = ["NanoEventsFactory"]

_FEATURE = "rntuple.integrations.coffea"
_UNSET: Any = object()
_OPEN_OPTIONS = ("verify_checksums", "max_memory")


def _coffea() -> Any:
    require("coffea", feature=_FEATURE, extra=None)
    import coffea.nanoevents.factory as factory

    return factory


# What coffea is given: its column name -> (top-level field, member of that field or None).
_Columns = dict[str, tuple[str, str | None]]


def _physlite(schemaclass: Any) -> tuple[str, ...] | None:
    """For PHYSLITESchema (or a subclass): the collections it makes truth particles; else None."""
    from coffea.nanoevents.schemas import PHYSLITESchema

    if isinstance(schemaclass, type) and issubclass(schemaclass, PHYSLITESchema):
        schema: Any = schemaclass  # a subclass may change its truth collections
        return tuple(schema.truth_collections)
    return None


def _columns(ntuple: Any, physlite: tuple[str, ...] | None, keep: Callable[[str], bool] | None = None) -> _Columns:
    """The columns coffea is given, for PHYSLITESchema (``physlite``: see :func:`_physlite`) or
    another schema (module documentation); ``keep``: the user's ``filter_name`` on their names."""
    tops = [f.name for f in ntuple.fields if not f.name.startswith("_")]
    if physlite is not None:
        columns = _physlite_columns(ntuple, tops, physlite)
    else:
        columns = {name: (name, None) for name in tops}
    return columns if keep is None else {name: column for name, column in columns.items() if keep(name)}


def _filter_name(*option_dicts: dict[str, Any] | None) -> Callable[[str], bool] | None:
    """The ``filter_name`` of coffea's ``iteritems_options`` (eager, virtual) and ``uproot_options``
    (dask), in any mode: a column is kept if it passes each one given."""
    from .._filters import make_filter

    filters = [make_filter(d["filter_name"]) for d in option_dicts if d and d.get("filter_name") is not None]
    if not filters:
        return None
    return lambda name: all(f(name) for f in filters)


def _physlite_object(store: str) -> str:
    """The collection PHYSLITESchema makes of an aux store (it drops these parts of the name)."""
    return store.replace("Analysis", "").replace("AuxDyn", "").replace("Aux", "")


def _physlite_columns(ntuple: Any, tops: list[str], truth: tuple[str, ...]) -> _Columns:
    """An ATLAS RNTuple's fields under the names PHYSLITESchema expects of a PHYSLITE TTree's
    branches: ``XAuxDyn:pt`` as ``XAuxDyn.pt``, each member ``m`` of a record ``XAux:`` as
    ``XAux.m`` (empty ones left out); a field without ``:`` only if it is not the interface
    object of a collection whose aux store is there (``AnalysisElectrons``, a list of empty
    records beside ``AnalysisElectronsAuxDyn:*``): PHYSLITESchema would merge it into that
    collection as a nameless member. The ``e`` of a ``truth`` collection that also has ``m`` is
    left out: coffea's four-vectors refuse a record with both (``multiple temporal aliases``),
    and ``px, py, pz, m`` keep the stored mass exact (the energy is computed from them).

    Lists of numbers come first: PHYSLITESchema takes a collection's offsets from its first
    member and its ``_eventindex`` from its first list, so ``Electrons.pt`` then reads
    ``pt`` only, not a list of element links that happens to come first in the RNTuple."""
    stores = [name for name in tops if name.endswith(":")]
    sample = ntuple.arrays(stores, entry_stop=0, how=dict) if stores else {}
    out: _Columns = {}
    for name in tops:
        store, colon, member = name.partition(":")
        if not colon:
            continue
        if member:
            out[f"{store}.{member}"] = (name, None)
        else:
            for field in sample[name].fields:
                out[f"{store}.{field}"] = (name, field)
    for key in [key for key in out if key.endswith(".e")]:
        store = key[: -len(".e")]
        if _physlite_object(store) in truth and f"{store}.m" in out:
            del out[key]
    collections = {_physlite_object(key.split(".", 1)[0]) for key in out}
    for name in tops:
        if ":" not in name and _physlite_object(name) not in collections:
            out[name] = (name, None)
    typenames = ntuple.typenames(recursive=True)

    def numbers_first(item: tuple[str, tuple[str, str | None]]) -> bool:
        return re.fullmatch(r"std::vector<[\w:]+>", typenames.get(_path(item[1]), "")) is None

    return dict(sorted(out.items(), key=numbers_first))


def _path(column: tuple[str, str | None]) -> str:
    top, member = column
    return top if member is None else f"{top}.{member}"


def _read_columns(ntuple: Any, columns: _Columns, names: Any, start: int | None, stop: int | None) -> dict[str, Any]:
    """The arrays of coffea's columns ``names``, entries ``start:stop``, in one read."""
    paths = sorted({_path(columns[name]) for name in names})
    arrays = ntuple.arrays(paths, entry_start=start, entry_stop=stop, how=dict) if paths else {}
    out = {}
    for name in names:
        top, member = columns[name]
        out[name] = arrays[top] if member is None else arrays[top][member]
    return out


def _typenames(ntuple: Any, columns: _Columns) -> dict[str, str]:
    typenames = ntuple.typenames(recursive=True)
    return {name: typenames.get(_path(column), "") for name, column in columns.items()}


def _one_file(file: Any, treepath: Any) -> tuple[str, str | None]:
    from .dask import _expand_specs

    if isinstance(file, str) and treepath is not _UNSET and treepath is not None:
        file = {file: treepath}
    specs = _expand_specs(file)
    if len(specs) != 1:
        raise InvalidArgumentError(f"eager and virtual modes read one file, not {len(specs)}; use mode='dask'")
    path, name, _ = specs[0]
    if name is None and treepath is not _UNSET:
        name = treepath
    return path, name


class _Sliced:
    """An array already cut to the mapping's entry range, sliced by coffea with that range."""

    def __init__(self, array: Any, start: int, stop: int) -> None:
        self._array, self._range = array, (start, stop)

    def __getitem__(self, s: slice) -> Any:
        if (s.start, s.stop) != self._range:
            raise InvalidArgumentError(f"entries {s.start}:{s.stop} asked of a column read for {self._range}")
        return self._array


class _LazyColumns:
    """A column source that reads a field when coffea asks for one of its buffers. coffea asks
    for the offsets and the content of a collection separately: the last few fields read are
    kept, so each is read once."""

    _KEEP = 8

    def __init__(self, ntuple: Any, columns: _Columns) -> None:
        self._ntuple = ntuple
        self._columns = columns
        self._kept: OrderedDict[tuple[str, int, int], Any] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, name: object) -> bool:
        return name in self._columns

    def __getitem__(self, name: str) -> _LazyColumn:
        if name not in self._columns:
            raise NotFoundError(name)
        return _LazyColumn(self, name)

    def read(self, name: str, start: int, stop: int) -> Any:
        key = (name, start, stop)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            array = _read_columns(self._ntuple, self._columns, [name], start, stop)[name]
            self._kept[key] = array
            while len(self._kept) > self._KEEP:
                self._kept.popitem(last=False)
            return array


class _LazyColumn:
    def __init__(self, source: _LazyColumns, name: str) -> None:
        self._source, self._name = source, name

    def __getitem__(self, s: slice) -> Any:
        return self._source.read(self._name, s.start, s.stop)


def _mapping_class(factory: Any) -> type:
    """coffea's ``PreloadedSourceMapping`` that can also hand out virtual buffers."""

    class _RNTupleSourceMapping(factory.PreloadedSourceMapping):
        def __init__(self, start: int, stop: int, access_log: Any, buffer_cache: Any, virtual: bool) -> None:
            super().__init__(None, start, stop, cache={}, access_log=access_log, buffer_cache=buffer_cache)
            self._virtual = virtual

        def key_root(self) -> str:
            return "RNTupleSourceMapping:"

    return _RNTupleSourceMapping


class NanoEventsFactory:
    """``from_root`` with coffea's signature, reading through ``rntuple`` (module documentation)."""

    @classmethod
    def from_root(
        cls,
        file: Any,
        *,
        mode: str = "virtual",
        treepath: Any = _UNSET,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        steps_per_file: Any = _UNSET,
        preload: Any = None,
        buffer_cache: Any = None,
        schemaclass: Any = None,
        metadata: dict[str, Any] | None = None,
        uproot_options: dict[str, Any] | None = None,
        iteritems_options: dict[str, Any] | None = None,
        access_log: list[Any] | None = None,
        use_ak_forth: bool = True,
        known_base_form: Any = None,
        decompression_executor: Any = None,
        interpretation_executor: Any = None,
        step_size: int | str = "100 MB",
    ) -> Any:
        """coffea's ``NanoEventsFactory.from_root`` (same arguments, same result type) on rntuple's
        reader. ``file``: a path, ``"path:Events"``, ``{path: "Events"}`` or, in dask mode, what
        ``rntuple.dask`` takes (several files, globs, uproot's steps). ``step_size`` (dask mode):
        entries or bytes per partition, as ``rntuple.dask``. ``preload``, ``use_ak_forth``,
        ``iteritems_options`` and the executors are accepted and not needed."""
        factory = _coffea()
        from coffea.nanoevents.schemas import NanoAODSchema

        schemaclass = NanoAODSchema if schemaclass is None else schemaclass
        if mode not in ("eager", "virtual", "dask"):
            raise InvalidArgumentError(f"mode must be 'eager', 'virtual' or 'dask', not {mode!r}")
        options = {k: v for k, v in (uproot_options or {}).items() if k in _OPEN_OPTIONS}
        keep = _filter_name(uproot_options, iteritems_options)
        if mode == "dask":
            if getattr(schemaclass, "__dask_capable__", False):
                if isinstance(file, str) and treepath is not _UNSET:
                    file = {file: treepath}
                io, partitions, divisions = _dask_io(factory, file, schemaclass, metadata, options, keep, step_size)
                dak = require("dask_awkward", feature=_FEATURE, extra="dask")
                from .dask import _token

                def opener(**_: Any) -> Any:
                    return dak.from_map(
                        io, partitions, label="rntuple-coffea", token=_token(io, partitions), divisions=divisions
                    )

                return factory.NanoEventsFactory(io.info, opener, None, mode="dask")
            mode = "virtual"  # coffea does the same (with a warning) for a schema that is not dask capable
        return _eager_or_virtual(
            factory, file, treepath, mode, entry_start, entry_stop, schemaclass, metadata, options, keep,
            access_log, buffer_cache,
        )  # fmt: skip


def _eager_or_virtual(
    factory: Any,
    file: Any,
    treepath: Any,
    mode: str,
    entry_start: int | None,
    entry_stop: int | None,
    schemaclass: Any,
    metadata: Any,
    options: dict[str, Any],
    keep: Callable[[str], bool] | None,
    access_log: Any,
    buffer_cache: Any,
) -> Any:
    from .dask import _open_ntuple

    path, name = _one_file(file, treepath)
    ntuple = _open_ntuple(path, name, options)
    n = ntuple.num_entries
    start = 0 if entry_start is None or entry_start < 0 else min(entry_start, n)
    stop = n if entry_stop is None or entry_stop > n else max(entry_stop, start)
    columns = _columns(ntuple, _physlite(schemaclass), keep)
    sample = _read_columns(ntuple, columns, columns, 0, 0)
    source: Any
    if mode == "eager":
        arrays = _read_columns(ntuple, columns, columns, start, stop)
        source = {k: _Sliced(v, start, stop) for k, v in arrays.items()}
    else:
        source = _LazyColumns(ntuple, columns)
    origin = ntuple._origin[0] if ntuple._origin else path
    partition_key = (origin, ntuple.name, f"{start}-{stop}")
    mapping = _mapping_class(factory)(start, stop, access_log, buffer_cache, mode == "virtual")
    mapping.preload_column_source(partition_key[0], partition_key[1], source)
    base_form = factory.PreloadedSourceMapping._extract_base_form(sample)
    base_form["typenames"] = {k: v for k, v in _typenames(ntuple, columns).items() if k in base_form["fields"]}
    return factory.NanoEventsFactory._from_mapping(mapping, partition_key, base_form, schemaclass, metadata, mode)


# --------------------------------------------------------------------------
# dask mode


class _TreeView:
    """What coffea's dask-mode form mapping asks of the tree of one partition (``arrays``,
    ``in``, ``file.uuid``, ``file.file_path``, ``object_path``), answered by an RNTuple; the
    read is logged in :func:`rntuple.integrations.dask.read_log`."""

    class _File:
        def __init__(self, location: str) -> None:
            self.uuid = location
            self.file_path = location

    def __init__(self, ntuple: Any, location: str, name: str, columns: _Columns) -> None:
        self._ntuple, self._columns = ntuple, columns
        self.file = self._File(location)
        self.object_path = name

    def __contains__(self, key: object) -> bool:
        return key in self._columns

    def arrays(self, keys: list[str], entry_start: int, entry_stop: int, **_: Any) -> dict[str, Any]:
        """coffea's columns ``keys``; the log lists the RNTuple's fields read for them."""
        from .dask import _log_read

        before = self._ntuple.io_stats()
        out = _read_columns(self._ntuple, self._columns, keys, entry_start, entry_stop)
        fields = {_path(self._columns[key]) for key in keys}
        _log_read(self._ntuple, before, self.file.file_path, self.object_path, entry_start, entry_stop, fields)
        return out


class _CoffeaRead:
    """dask-awkward IO function of coffea's dask mode: reads the fields (``keys``) of one
    partition and builds the schema's form from their buffers through coffea's form mapping
    (``info``); buffers of fields not read are placeholders the computation never touches.
    ``columns`` is coffea's column -> field mapping, made once from the first file (as the
    form is), not again per partition."""

    def __init__(
        self,
        expected_form: Any,
        info: Any,
        keys: frozenset[str],
        options: dict[str, Any],
        columns: _Columns,
    ) -> None:
        self.expected_form = expected_form
        self.info = info
        self.keys = keys
        self.options = options
        self.columns = columns

    # what a task runs
    def __call__(self, part: tuple[Any, ...]) -> Any:
        import awkward as ak
        from awkward._nplikes.numpy import Numpy

        from .dask import Partition, _handle

        p = Partition(*part)
        ntuple = _handle(p.location, p.name, self.options)
        stop = ntuple.num_entries if p.entry_stop is None else p.entry_stop
        tree = _TreeView(ntuple, p.location, p.name, self.columns)
        keys = sorted(self.keys)
        mapping = self.info.load_buffers(tree, keys, p.entry_start, stop, None, None, {"ak_add_doc": False})
        container: dict[str, Any] = {}
        nplike = Numpy.instance()
        wanted = self.keys
        for buffer_key, dtype in self.expected_form.expected_from_buffers(buffer_key=self.info.buffer_key).items():
            if self.info.keys_for_buffer_keys(frozenset({buffer_key})) <= wanted:
                container[buffer_key] = mapping[buffer_key]
            else:
                container[buffer_key] = ak.typetracer.PlaceholderArray(
                    nplike=nplike, shape=(ak.typetracer.unknown_length,), dtype=dtype
                )
        return ak.from_buffers(
            self.expected_form,
            stop - p.entry_start,
            container,
            behavior=self.info.behavior,
            buffer_key=self.info.buffer_key,
        )

    # dask-awkward's protocol (mocking and projection)
    def mock(self) -> Any:
        import awkward as ak

        return ak.typetracer.typetracer_from_form(self.expected_form, highlevel=True, behavior=self.info.behavior)

    def mock_empty(self, backend: str = "cpu") -> Any:
        import awkward as ak

        empty = self.expected_form.length_zero_array(highlevel=False)
        return ak.to_backend(empty, backend=backend, highlevel=True, behavior=self.info.behavior)

    def prepare_for_projection(self) -> tuple[Any, Any, dict[str, Any]]:
        import awkward as ak
        from dask_awkward.lib.utils import trace_form_structure

        meta, report = ak.typetracer.typetracer_with_report(
            self.expected_form, highlevel=True, behavior=self.info.behavior, buffer_key=self.info.buffer_key
        )
        return meta, report, {"trace": trace_form_structure(self.expected_form, buffer_key=self.info.buffer_key)}

    def necessary_columns(self, report: Any, state: dict[str, Any]) -> frozenset[str]:
        """The fields whose buffers the computation touched: their data, and the buffers above
        those whose shape it needed (dask-awkward's rule)."""
        from dask_awkward.lib.utils import buffer_keys_required_to_compute_shapes

        trace = state["trace"]
        touched = {
            *report.data_touched,
            *buffer_keys_required_to_compute_shapes(
                self.info.parse_buffer_key,
                report.shape_touched,
                trace["form_key_to_parent_form_key"],
                trace["form_key_to_buffer_keys"],
            ),
        }
        return frozenset(self.info.keys_for_buffer_keys(touched)) & self.keys

    def project(self, report: Any, state: dict[str, Any]) -> _CoffeaRead:
        return self.project_manually(self.necessary_columns(report, state))

    def project_manually(self, columns: frozenset[str]) -> _CoffeaRead:
        return _CoffeaRead(self.expected_form, self.info, frozenset(columns), self.options, self.columns)

    def __dask_tokenize__(self) -> Any:
        return (
            "rntuple.coffea",
            self.expected_form.to_json(),
            sorted(self.keys),
            sorted(self.options.items()),
            sorted(self.columns.items()),
        )


def _dask_io(
    factory: Any,
    file: Any,
    schemaclass: Any,
    metadata: Any,
    options: dict[str, Any],
    keep: Callable[[str], bool] | None,
    step_size: int | str,
) -> tuple[_CoffeaRead, list[tuple[Any, ...]], Any]:
    """The IO function and the partitions of coffea's dask mode over the files ``file``."""
    import awkward as ak

    from .dask import _divisions, _expand_specs, _open_ntuple, _partitions

    specs = _expand_specs(file)
    first = _open_ntuple(specs[0][0], specs[0][1], options)
    columns = _columns(first, _physlite(schemaclass), keep)
    sample = _read_columns(first, columns, columns, 0, 0)
    typenames = _typenames(first, columns)
    docs = {f.name: f.description for f in first.fields}
    contents, fields = [], []
    for name, array in sample.items():
        top, member = columns[name]
        doc = docs.get(top, "") if member is None else ""
        form = array.layout.form.copy(parameters={"__doc__": doc, "typename": typenames[name]})
        contents.append(form)
        fields.append(name)
    base_form = ak.forms.RecordForm(contents, fields, parameters={"__doc__": first.description, "typenames": typenames})
    map_schema = factory._map_schema_uproot(
        schemaclass=schemaclass, behavior=dict(schemaclass.behavior()), metadata=metadata, version="latest"
    )
    expected_form, info = map_schema(base_form)
    partitions = _partitions(specs, first, options, step_size, True, 16)
    io = _CoffeaRead(expected_form, info, frozenset(columns), options, columns)
    return io, [tuple(p) for p in partitions], _divisions(partitions)
