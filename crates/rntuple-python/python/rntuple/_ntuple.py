"""``RNTuple``: one RNTuple of an open file, read into awkward, numpy, pandas or pyarrow."""

from __future__ import annotations

import atexit
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TextIO

import awkward as ak
import numpy as np
import pyarrow as pa

from . import _lib
from ._awkward import batch_to_layout
from ._computed import compile_selection
from ._credentials import picklable_location
from ._dataset import cluster_table, plan_steps
from ._errors import InvalidArgumentError, WrongTypeError, unknown_name_error
from ._fields import Field, build_fields, iter_fields
from ._filters import Filter, make_filter, parse_memory_size, parse_step_size
from ._numpy import to_numpy_dict, to_pandas
from ._read_args import ArraysArgs, IterateArgs, check_threads, entry_range, memory_budget, takes
from ._results import Report, apply_how, datetime_units, to_library, with_datetimes
from ._select import Selected, choose, in_order, plain_paths
from ._streamer import warn_undecoded

__all__ = ["AttributeSet", "Cluster", "Column", "RNTuple"]

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


class RNTuple:
    """An RNTuple: a table of entries whose fields may be nested.

    Obtained from a file, ``rntuple.open("f.root")["Events"]``.
    """

    def __init__(self, inner: _lib.RNTuple, file_path: str | None = None, name: str | None = None) -> None:
        self._inner = inner
        self._file_path = file_path
        self._name = inner.name if name is None else name
        self._fields: list[Field] | None = None
        self._paths: list[str] | None = None
        # Where it came from, (path or URL, "name;cycle", options), and the function that opens it
        # again from that: set by the ``File`` it came from (``_file``), so that the handle pickles.
        self._origin: tuple[str, str, dict[str, Any]] | None = None
        self._reopen: Callable[[str, str, dict[str, Any]], RNTuple] | None = None
        _LIVE.add(self)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as (path or URL, name, options); unpickling opens the file again (``_file``)."""
        if self._reopen is None or self._origin is None:
            raise WrongTypeError(
                f"{self!r} was not obtained from a file (rntuple.open(...)[name]) and cannot be pickled"
            )
        location, name, options = self._origin
        return (self._reopen, (picklable_location(location), name, options))

    def __repr__(self) -> str:
        # the counts' words of ``rntuple show``/``inspect``: top-level fields (``fields``,
        # ``keys(recursive=False)``), fields in all (every field record of the schema)
        where = f" in {self._file_path!r}" if self._file_path else ""
        top = self._inner.counts[0]
        return f"<RNTuple {self.name!r} ({self.num_entries:,} entries, {top:,} top-level fields){where}>"

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow C stream of the readable top-level fields, one record batch per cluster
        (``pyarrow.RecordBatchReader.from_stream(nt)``, ``duckdb.sql("select ... from nt")``,
        ``polars.from_arrow(nt)``); ``requested_schema`` selects fields by name, read alone
        (``_arrow_stream``)."""
        from ._arrow_stream import record_batch_reader

        return record_batch_reader(self, requested_schema).__arrow_c_stream__()

    def arrow_dataset(self) -> Any:
        """The readable top-level fields as a ``pyarrow.dataset.Dataset`` that reads only the
        fields a scan asks for and its filter uses: hand it to DuckDB
        (``events = nt.arrow_dataset(); duckdb.sql("select avg(MET_pt) from events")``), which
        pushes its projection and filters into it, where it reads every field of ``nt`` itself
        (``_arrow_dataset``)."""
        from ._arrow_dataset import ArrowDataset
        from ._arrow_stream import record_batch_reader

        schema = self.arrays(entry_start=0, entry_stop=0, library="pa").schema
        return ArrowDataset(
            schema, lambda wanted: record_batch_reader(self, wanted), lambda: self.num_entries, f"RNTuple '{self.name}'"
        )

    def _repr_html_(self) -> str:
        """The notebook view: counts, sizes and the collapsible field tree (``_html``; no page read)."""
        from ._html import rntuple_html

        return rntuple_html(self)

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

    def keys(self, filter_name: Filter = None, recursive: bool = True) -> list[str]:
        """Names of the fields: top-level names and, as uproot's ``keys()`` (``recursive=True``, the
        default), the dotted paths of subfields; ``recursive=False``: top-level names only.

        Subfield paths are those of the awkward records: item fields of
        collections and base classes add no segment.
        """
        if filter_name is None and recursive:  # every path: worked out once (a read with formulas asks twice)
            if self._paths is None:
                self._paths = [name for name, _ in self._iter_named(None, True)]
            return list(self._paths)
        return [name for name, _ in self._iter_named(filter_name, recursive)]

    def typenames(self, filter_name: Filter = None, recursive: bool = True) -> dict[str, str]:
        """C++ type name of each field ``keys()`` lists (projected fields: the projection's type)."""
        return {name: f.type_name for name, f in self._iter_named(filter_name, recursive)}

    def items(self, filter_name: Filter = None, recursive: bool = True) -> list[tuple[str, Field]]:
        """``(name, Field)`` of each field ``keys()`` lists."""
        return list(self._iter_named(filter_name, recursive))

    def values(self, filter_name: Filter = None, recursive: bool = True) -> list[Field]:
        """The ``Field`` of each name ``keys()`` lists."""
        return [f for _, f in self._iter_named(filter_name, recursive)]

    def __contains__(self, name: object) -> bool:
        return any(f.name == name for f in self.fields)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys(recursive=False))

    def __getitem__(self, path: str) -> Field:
        """The field at ``path`` (on-disk names, or the dotted names ``keys()`` lists, separated by
        ``.`` or ``/``); ``ntuple["run"].array()`` reads it."""
        dotted = path.replace("/", ".")
        named = dict(self._iter_named(None, True))
        if dotted in named:
            found = named[dotted]
        else:
            level = self.fields
            for part in dotted.split("."):
                match = next((f for f in level if f.name == part), None)
                if match is None:
                    raise unknown_name_error(path, list(named), "field", f" in RNTuple '{self.name}'")
                found, level = match, match.children
        found._ntuple = self
        return found

    def num_entries_for(
        self,
        memory_size: int | str,
        expressions: str | list[str] | None = None,
        *,
        filter_name: Filter = None,
        filter_typename: Filter = None,
        entry_start: int | None = None,
        entry_stop: int | None = None,
    ) -> int:
        """How many entries of the selected fields fit in ``memory_size`` (bytes, or ``"100 MB"``),
        estimated from the first entries as ``iterate(step_size=...)`` does (uproot's method)."""
        size = parse_memory_size(memory_size)
        fields, _, paths = self._select(expressions, filter_name, filter_typename)
        start, stop = entry_range(self.num_entries, entry_start, entry_stop)
        return min(max(0, stop - start), self._step_entries(f"{size} B", fields, paths, start, stop))

    @property
    def attribute_sets(self) -> list[str]:
        """Names of the attribute sets linked to this RNTuple (ROOT 6.40); :meth:`attribute_set` reads one."""
        return _lib.attribute_set_names(self._inner)

    def attribute_set(self, name: str) -> AttributeSet:
        """The attribute set ``name``: read like an RNTuple, one entry per range of this RNTuple's entries."""
        return AttributeSet(_lib.open_attribute_set(self._inner, name), self)

    @property
    def columns(self) -> list[Column]:
        """Physical columns, in column-id order."""
        return [Column(*c) for c in self._inner.columns()]

    @property
    def clusters(self) -> list[Cluster]:
        """Clusters, in entry order."""
        return [Cluster(*c) for c in self._inner.clusters()]

    def cluster_sizes(self, fields: list[str] | None = None) -> list[tuple[int, int, float]]:
        """``(first_entry, num_entries, bytes)`` per cluster: the in-memory bytes of the columns of
        the top-level ``fields`` (all when None) in that cluster, from the page lists loaded when
        the RNTuple was opened (elements × in-memory element size); reads nothing."""
        return [(a, n, float(b)) for a, n, b in self._inner.cluster_bytes(fields)]

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

    def show(self, stream: TextIO | None = None, *, max_fields: int | None = None, width: int | None = None) -> None:
        """Prints the schema and storage summary (the text of ``rntuple show``): the first
        ``max_fields`` top-level fields with their subfields (None: all), lines cut at ``width``
        characters (None: whole; the command cuts at 100 unless ``--wide``)."""
        for what, value in (("max_fields", max_fields), ("width", width)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidArgumentError(f"{what} must be None or a positive number, not {value!r}")
        text = self._inner.show(max_fields, width)
        print(text, end="", file=sys.stdout if stream is None else stream)

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
        used as a ``filter_name``; an unknown one raises ``NotFoundError`` (a ``KeyError``).
        """
        if expressions is not None:
            if filter_name is not None:
                raise InvalidArgumentError("give either expressions (field names) or filter_name, not both")
            wanted = [expressions] if isinstance(expressions, str) else list(expressions)
            known = set(self.keys(recursive=True)) | {f.name for f in self.fields}
            missing = [n for n in wanted if n not in known]
            if missing:
                raise unknown_name_error(missing[0], sorted(known), "field", f" in RNTuple '{self.name}'")
        if filter_field is not None and not callable(filter_field):
            raise WrongTypeError(f"filter_field must be None or a function of Field -> bool, not {filter_field!r}")
        candidates = [f for f in self.fields if f.readable]
        if expressions is not None:  # exact names or paths, in their order (docs/reading.md)
            selected = choose(candidates, set(wanted).__contains__, make_filter(filter_typename), filter_field, True)
            return in_order(selected, wanted)
        if filter_name is None and filter_typename is None and filter_field is None:
            return candidates, None, [f.name for f in candidates]
        return choose(candidates, make_filter(filter_name), make_filter(filter_typename), filter_field)

    def _select_plain(self, names: Filter, exact: bool = False) -> Selected | None:
        """``_select(filter_name=names)`` (``exact``: ``_select(expressions=names)``) when ``names``
        are exact field names or dotted paths, from the trees of the top-level fields they name
        only (``_select.plain_paths``); else None."""
        texts = [names] if isinstance(names, str) else names
        if not isinstance(texts, list | tuple):
            return None
        return plain_paths(self._inner, list(texts), self._fields, exact)

    def _read_batch(
        self,
        fields: list[Field],
        start: int,
        stop: int,
        threads: int | None = None,
        paths: list[str] | None = None,
        library: str = "ak",
        max_memory: int | None = None,
    ) -> pa.RecordBatch:
        """Reads ``fields`` or, with ``paths``, only those (dotted, on-disk) parts of them; in the
        Arrow types of the C++ types for ``library="pa"``, else in those uproot's forms use.
        ``max_memory``: this read's budget in bytes (None: the file's, from ``rntuple.open``)."""
        names = [f.name for f in fields] if paths is None else paths
        threads = check_threads(threads)
        batch, undecoded = self._inner.read(names, start, stop, threads, library != "pa", max_memory)
        warn_undecoded(undecoded)
        return pa.record_batch(batch)

    def _convert(
        self, batch: pa.RecordBatch, fields: list[Field], keys: frozenset[str] | None, library: str, start: int
    ) -> Any:
        units = datetime_units(fields)
        if library == "pa":
            return with_datetimes(pa.Table.from_batches([batch]), units)
        array = with_datetimes(ak.Array(batch_to_layout(batch, fields, keys)), units)
        if library == "ak":
            return array
        if library == "np":
            return to_numpy_dict(array)
        return to_pandas(array, start)

    def _arrays(self, args: ArraysArgs) -> Any:
        """Reads fields over a range of entries.

        Args:
            expressions: what to read, in this order: field names or dotted
                paths, or formulas of fields as uproot takes them
                (``"sqrt(Muon_pt**2 + 1)"``, ``"Muon_pt[0]"``,
                ``"len(Muon_pt)"``, aliases; the language of ``rntuple.draw``,
                never ``eval``); the result's fields are named by the
                expressions' texts. All readable fields when None.
            cut: a formula with one value per entry; only entries where it is
                true are returned (``"nMuon > 0"``, ``"max(Muon_pt) > 20"``).
            filter_name: selects fields by name or dotted path: a name, a glob
                (``"Muon_*"``), a regex between slashes (``"/^Muon_(pt|eta)$/"``),
                a callable, or a list of those. A selected subfield of a record
                comes with its parents, without its siblings (as in uproot).
            filter_typename: selects fields by C++ type name (same forms).
            filter_field: selects fields with a function of :class:`Field`.
            aliases: names for formulas, usable in ``expressions`` and ``cut``.
            entry_start, entry_stop: entry range like a Python slice (None for
                the ends, negative from the end).
            library: ``"ak"`` (awkward Array with uproot's forms), ``"np"`` (dict
                of numpy arrays), ``"pd"`` (pandas DataFrame) or ``"pa"``
                (pyarrow Table).
            how: ``tuple``, ``list``, ``dict`` or ``"zip"`` as in uproot (``"ak"``, ``"np"``).
            threads: threads that decompress and decode pages for this read;
                None uses the file's setting (``rntuple.open(..., threads=)``,
                by default one per core), 1 reads on the calling thread only.
                The result is the same for any number.
            max_memory: the memory budget of this read, in bytes or as a size
                (``"2 GB"``, ``"1.5 GiB"``); None uses the file's
                (``rntuple.open(..., max_memory=)``, by default none). A read that
                would take more (the buffers of the values, the read buffers and the
                largest page) fails with :class:`MemoryLimitError` (a ``MemoryError``)
                before allocating; ``iterate(step_size=...)`` reads in steps instead.
        """
        start, stop = args.entries(self.num_entries)
        plan = self._plan(args)
        return apply_how(plan(start, stop, args.lib, args.threads), args.how, args.lib)

    arrays = takes(ArraysArgs)(_arrays)

    def _iterate(self, args: IterateArgs) -> Iterator[Any]:
        """Reads fields in consecutive ranges of entries, yielding one ``arrays()`` result per range
        (with ``report=True``: ``(result, Report)``, the report naming the range's entries as uproot's).

        ``step_size`` is a number of entries or a memory size such as
        ``"100 MB"`` (estimated from the footer's page sizes of the fields read).
        The steps are those of ``rntuple.iterate`` (``_dataset.plan_steps``):
        runs of whole clusters within ``step_size``, a larger cluster cut into
        the fewest pieces that fit, of sizes differing by one entry at most.
        The other arguments as for :meth:`arrays`.
        """
        lib = args.lib
        plan = self._plan(args)
        start, stop = args.entries(self.num_entries)
        step_size = args.step_size
        steps = plan_steps(cluster_table(self, plan, step_size), start, stop, step_size)
        for lo, hi in steps:
            result = apply_how(plan(lo, hi, lib, args.threads), args.how, lib)
            yield (result, Report(self._file_path, self.name, lo, hi)) if args.report else result

    iterate = takes(IterateArgs)(_iterate)

    def _plan(self, args: ArraysArgs) -> _ReadPlan:
        """How ``arrays``/``iterate`` read: plain fields as they are, or, with a cut, aliases or
        formulas among the expressions, the fields they use evaluated by ``compile_selection``;
        every read of the plan within ``args.max_memory`` (None: the file's budget)."""
        plan = self._plan_fields(args)
        plan.max_memory = memory_budget(args.max_memory)
        return plan

    def _plan_fields(self, args: ArraysArgs) -> _ReadPlan:
        """What ``_plan`` reads and computes."""
        expressions, cut, aliases = args.expressions, args.cut, args.aliases
        filter_name, filter_typename, filter_field = args.filter_name, args.filter_typename, args.filter_field
        texts = [expressions] if isinstance(expressions, str) else expressions
        if cut is None and not aliases and filter_typename is None and filter_field is None:
            # a few names or paths (the common read): only their trees are built, not the whole schema's
            plain = None
            if texts is not None and filter_name is None:
                plain = self._select_plain(texts, exact=True)
            elif texts is None and filter_name is not None:
                plain = self._select_plain(filter_name)
            if plain is not None:
                return _ReadPlan(self, plain, None)
        # the plain read (no cut, alias or formula) needs no list of every path: a wide RNTuple's first read
        paths = self.keys(recursive=True) if texts is not None or cut is not None or aliases else []
        formulas = texts is not None and any(t not in paths for t in texts if isinstance(t, str))
        if cut is None and not aliases and not formulas:
            return _ReadPlan(self, self._select(expressions, filter_name, filter_typename, filter_field), None)
        top = [f.display_name for f in self.fields if f.readable]
        if texts is not None and (filter_name is not None or filter_typename is not None or filter_field):
            raise InvalidArgumentError("give either expressions or filters (filter_name, ...), not both")
        if texts is None:
            selection = compile_selection([], cut, aliases, fields=top, paths=paths)
            main = self._select(None, filter_name, filter_typename, filter_field)
        elif not formulas and not aliases:
            # names or paths with a cut: the fields the same call without the cut returns, filtered
            selection = compile_selection([], cut, aliases, fields=top, paths=paths)
            main = self._select(expressions, None)
        else:
            selection = compile_selection(texts, cut, aliases, fields=top, paths=paths)
            main = None
        by_display = {f.display_name: f.name for f in self.fields}
        wanted = {by_display[n] for n in selection.fields}
        inputs = self._select(None, None, None, lambda f: f.top_level and f.name in wanted)
        return _ReadPlan(self, main if main is not None else inputs, (selection, inputs))

    def _read_selected(
        self,
        selected: tuple[list[Field], frozenset[str] | None, list[str]],
        start: int,
        stop: int,
        lib: str,
        threads: int | None,
        first: int | None = None,
        max_memory: int | None = None,
    ) -> Any:
        fields, keys, paths = selected
        batch = self._read_batch(fields, start, stop, threads, paths, lib, max_memory)
        return self._convert(batch, fields, keys, lib, start if first is None else first)

    def _step_entries(self, step_size: int | str, fields: list[Field], paths: list[str], start: int, stop: int) -> int:
        entries, target = parse_step_size(step_size)
        if target is None:
            return entries  # type: ignore[return-value]
        n = min(stop - start, _PROBE_ENTRIES)
        if n <= 0 or not fields:
            return max(1, stop - start)
        nbytes = self._read_batch(fields, start, start + n, paths=paths).nbytes
        if nbytes == 0:
            return max(1, stop - start)
        return max(1, int(target * n // nbytes))


class _ReadPlan:
    """What ``arrays``/``iterate`` read and compute for one entry range (``RNTuple._plan``)."""

    def __init__(self, ntuple: RNTuple, read: tuple[list[Field], frozenset[str] | None, list[str]], computed: Any):
        self.ntuple = ntuple
        self.read = read
        self.computed = computed
        # the budget of every read of the plan, in bytes (None: the file's)
        self.max_memory: int | None = None

    @property
    def inputs(self) -> tuple[list[Field], frozenset[str] | None, list[str]]:
        """What is read from storage: the fields the computation uses, or those selected."""
        return self.read if self.computed is None else self.computed[1]

    def __call__(self, start: int, stop: int, lib: str, threads: int | None, first: int | None = None) -> Any:
        """Entries ``[start, stop)`` in ``lib``; ``first``: the number of entry ``start`` in a
        pandas index (a chain's global one), ``start`` when None."""
        nt, budget = self.ntuple, self.max_memory
        first = start if first is None else first
        if self.computed is None:
            return nt._read_selected(self.read, start, stop, lib, threads, first, budget)
        selection, inputs = self.computed
        data = nt._read_selected(inputs, start, stop, "ak", threads, max_memory=budget)
        entries = np.arange(first, first + stop - start)
        if selection.outputs or self.read is inputs:
            keep = selection.mask(data)
            result = selection.apply(data, keep)
        else:  # a cut (and aliases) over the fields the filters select
            keep = selection.mask(data)
            result = nt._read_selected(self.read, start, stop, "ak", threads, max_memory=budget)
            if keep is not None:
                result = result[keep]
        index = entries if keep is None else entries[keep]
        return to_library(result, lib, index)


class AttributeSet(RNTuple):
    """One attribute set of an RNTuple: an RNTuple whose entries are attribute entries.

    ``keys()``, ``arrays()``, ``iterate()`` and the rest of the :class:`RNTuple`
    API read the set's own fields, one entry per attribute entry;
    ``entry_ranges[i]`` is the range of the main RNTuple's entries that
    attribute entry ``i`` belongs to. The ``entries_*`` methods select
    attribute entries by main entry, as ROOT's ``GetAttributes*`` do.
    """

    def __init__(self, inner: _lib.AttributeSet, main: RNTuple) -> None:
        super().__init__(inner.values(), main._file_path, inner.name)
        self._set = inner
        self._main_name = main.name

    def __repr__(self) -> str:
        return (
            f"<AttributeSet {self.name!r} of {self._main_name!r} "
            f"({self.num_entries:,} entries, {len(self.fields):,} top-level fields)>"
        )

    @property
    def schema_version(self) -> tuple[int, int]:
        """(major, minor) of the attribute schema (ROOT 6.40 writes 1.0)."""
        return self._set.schema_version

    @property
    def entry_ranges(self) -> list[range]:
        """The main RNTuple's entries of each attribute entry, as ``range(start, stop)`` (may be empty)."""
        starts, lengths = self._set.ranges()
        return [range(s, s + n) for s, n in zip(starts, lengths, strict=True)]

    def entries(self) -> list[int]:
        """Every attribute entry, ordered by the start of its range (ties in entry order)."""
        return self._set.entries()

    def entries_containing(self, entry: int) -> list[int]:
        """Attribute entries whose range holds main entry ``entry`` (empty ranges never do)."""
        return self._set.entries_containing(_index(entry))

    def entries_containing_range(self, start: int, stop: int) -> list[int]:
        """Attribute entries whose range holds all of the main entries ``[start, stop)``."""
        return self._set.entries_containing_range(_index(start), _index(stop))

    def entries_in_range(self, start: int, stop: int) -> list[int]:
        """Attribute entries whose (non-empty) range lies within the main entries ``[start, stop)``."""
        return self._set.entries_in_range(_index(start), _index(stop))


def _index(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"an entry number must be a non-negative int, not {value!r}")
    return value
