"""Datasets on one machine: ``iterate`` and ``concatenate`` over many files (as uproot's), chains
(RNTuples one after the other) and joins (RNTuples side by side, or matched on index fields),
after ROOT's ``RNTupleProcessor`` (``CreateChain``, ``CreateJoin``).

Entry numbers are global over a chain: ``entry_start``/``entry_stop`` count from the first
entry of the first file. A step never spans two files and follows the clusters
(``_dataset.plan_steps``). Files are opened one at a time and closed when done.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import awkward as ak
import numpy as np

from ._dataset import cluster_table, expand, plan_steps
from ._errors import InvalidArgumentError, MissingFileError, NotFoundError, WrongTypeError
from ._file import open as open_file
from ._filters import Filter, make_filter
from ._ntuple import RNTuple
from ._read_args import (
    ArraysArgs,
    ChainOptions,
    ConcatenateArgs,
    DatasetIterateArgs,
    IterateArgs,
    entry_range,
    takes,
    takes_after,
)
from ._results import Report, apply_how, concatenate_results, to_library
from ._term import Progress, wanted

__all__ = ["Chain", "SchemaMismatchError", "chain", "concatenate", "iterate"]


class SchemaMismatchError(InvalidArgumentError):
    """Chained RNTuples whose fields differ (the message names the field and the files)."""


def no_rntuple(f: Any, path: str) -> str:
    """What a file without RNTuples holds, and what to do."""
    found = [f"{cls} '{key}'" for key, cls in f.classnames(cycle=False).items()]
    if not found:
        return "the file holds no RNTuple (and no other object)"
    is_tree = "TTree" in f.classnames().values()
    hint = f"; convert a TTree first: rntuple convert {path} out.root" if is_tree else ""
    return f"the file holds no RNTuple, only {', '.join(found)}{hint}"


_CARDINALITY = re.compile(r"^ROOT::RNTupleCardinality<(.+)>$")


def _top_fields(ntuple: RNTuple) -> dict[str, str]:
    """Top-level field -> C++ type, with types that read as the same values made equal: a
    collection size ``ROOT::RNTupleCardinality<T>`` (imported NanoAOD's ``nJet``) as ``T``, and
    ``ROOT::VecOps::RVec<T>`` as ``std::vector<T>`` (ROOT stores both the same way)."""
    out = {}
    for f in ntuple.fields:
        if f.readable:
            t = _CARDINALITY.sub(r"\1", f.type_name)
            out[f.display_name] = t.replace("ROOT::VecOps::RVec<", "std::vector<")
    return out


class Chain:
    """RNTuples one after the other, with global entry numbers (ROOT's ``RNTupleProcessor::CreateChain``).

    ``files`` takes every form of ``rntuple.iterate``. The fields must agree between the
    members (same top-level names and C++ types), else :class:`SchemaMismatchError` names the
    first differing field and the two files; with ``union=True`` a field missing from some
    members is read as None there (an option type), whether selected by filters or named among
    the expressions (a formula must find its fields in every member).

    ``allow_missing=True`` (as uproot's): members whose file does not exist or lacks the named
    RNTuple are left out (each member is opened now to find out); none left is an error.
    """

    @takes_after(ChainOptions)
    def __init__(self, files: Any, options: ChainOptions) -> None:
        self._specs = expand(files, options.allow_missing)
        self._union = options.union
        self._verify = options.verify_checksums
        self._threads = options.threads
        self._counts: list[int | None] = [None] * len(self._specs)
        self._schemas: list[dict[str, str] | None] = [None] * len(self._specs)
        if options.allow_missing:
            self._drop_missing()

    def _drop_missing(self) -> None:
        """Leaves out the members that cannot be found (``allow_missing=True``)."""
        found = []
        for i, spec in enumerate(self._specs):
            try:
                f, _ = self._open(i)
            except (FileNotFoundError, KeyError):  # MissingFileError, NotFoundError
                continue
            f.close()
            found.append((spec, self._counts[i], self._schemas[i]))
        if not found:
            listed = ", ".join(p if n is None else f"{p}:{n}" for p, n in self._specs)
            raise MissingFileError(f"none of the {len(self._specs)} files holds its RNTuple: {listed}")
        self._specs = [spec for spec, _, _ in found]
        self._counts = [count for _, count, _ in found]
        self._schemas = [schema for _, _, schema in found]

    def __repr__(self) -> str:
        return f"<Chain of {len(self._specs)} RNTuples>"

    @property
    def files(self) -> list[tuple[str, str | None]]:
        """``(path or URL, RNTuple name or None)`` of the members, in order."""
        return list(self._specs)

    def _open(self, i: int) -> tuple[Any, RNTuple]:
        path, name = self._specs[i]
        f = open_file(path, verify_checksums=self._verify, threads=self._threads)
        try:
            if name is None:
                names = f.rntuple_names()
                if not names:
                    raise NotFoundError(f"{path}: {no_rntuple(f, path)}")
                if len(names) != 1:
                    raise InvalidArgumentError(f"{path}: {len(names)} RNTuples ({names}); choose one with FILE:NAME")
                name = names[0]
            try:
                ntuple = f[name]
            except TypeError as err:  # another class under that name (a TTree)
                raise WrongTypeError(
                    f"{path}: {err}; convert a TTree first: rntuple convert {path}:{name} out.root"
                ) from None
        except BaseException:
            f.close()
            raise
        self._counts[i] = ntuple.num_entries
        self._schemas[i] = _top_fields(ntuple)
        return f, ntuple

    def _members(self) -> Iterator[tuple[int, RNTuple]]:
        for i in range(len(self._specs)):
            f, ntuple = self._open(i)
            with f:
                yield i, ntuple

    def _entry_counts(self) -> list[int]:
        for i, count in enumerate(self._counts):
            if count is None:
                f, _ = self._open(i)
                f.close()
        return [c or 0 for c in self._counts]

    @property
    def num_entries(self) -> int:
        """Entries of all members (opens each file once to read its footer)."""
        return sum(self._entry_counts())

    def __len__(self) -> int:
        return self.num_entries

    def _schema(self) -> dict[str, str]:
        """Top-level field -> C++ type of the chain; checks that the members agree."""
        self._entry_counts()
        schemas = [s or {} for s in self._schemas]
        out = dict(schemas[0])
        for i, s in enumerate(schemas[1:], 1):
            for name in [*out, *s]:
                mine, theirs = out.get(name), s.get(name)
                if mine is not None and theirs is not None and mine != theirs:
                    self._mismatch(name, mine, 0, theirs, i)
                if mine is None or theirs is None:
                    if not self._union:
                        self._mismatch(name, mine, 0, theirs, i)
                    out.setdefault(name, theirs or "")
        return out

    def _mismatch(self, name: str, a: str | None, i: int, b: str | None, j: int) -> None:
        def where(k: int, t: str | None) -> str:
            return f"{self._specs[k][0]} ({t})" if t is not None else f"{self._specs[k][0]} (missing)"

        hint = "" if a is not None and b is not None else "; pass union=True to read a missing field as None"
        raise SchemaMismatchError(f"field {name!r} differs between chained files: {where(i, a)} vs {where(j, b)}{hint}")

    def keys(self, filter_name: Filter = None) -> list[str]:
        """Top-level field names (of all members with ``union=True``)."""
        accept = make_filter(filter_name)
        return [n for n in self._schema() if accept(n)]

    def typenames(self) -> dict[str, str]:
        return self._schema()

    def _iterate(self, args: IterateArgs) -> Iterator[Any]:
        """Batches of consecutive entries (with ``report=True``: ``(batch, Report)`` pairs).

        A batch never spans two files; steps align with clusters (``_dataset.plan_steps``:
        whole clusters up to ``step_size`` entries or bytes, a larger cluster split in equal
        pieces). ``expressions``, ``cut`` and ``aliases`` as for :meth:`RNTuple.arrays`
        (``_computed.compile_selection``).
        """
        lib = args.lib
        expressions, entry_start, entry_stop = args.expressions, args.entry_start, args.entry_stop
        stop: int | None
        if (entry_start is not None and entry_start < 0) or (entry_stop is not None and entry_stop < 0):
            start, stop = entry_range(self.num_entries, entry_start, entry_stop)
        else:
            start, stop = entry_start or 0, entry_stop
        schema = self._schema() if self._union else None
        offset = 0
        first_read: set[str] = set()  # the fields read from the first member
        for i in range(len(self._specs)):
            if stop is not None and offset >= stop:
                break
            known = self._counts[i]
            if known is not None and offset + known <= start:
                offset += known
                continue
            f, ntuple = self._open(i)
            with f:
                n = ntuple.num_entries
                lo, hi = max(0, start - offset), n if stop is None else min(n, stop - offset)
                if lo < hi:
                    wanted = None
                    member = args
                    if schema is not None:
                        texts, wanted = _union_names(expressions, schema, ntuple)
                        member = dataclasses.replace(args, expressions=texts)
                    plan = ntuple._plan(member)
                    # the fields read, without the importer's untyped collections that hold them
                    read = {f.display_name for f in plan.inputs[0] if f.type_name}
                    if i == 0:
                        first_read = read
                    elif schema is None:
                        self._check_against_first(i, read | first_read)
                    step_size = args.step_size
                    for a, b in plan_steps(cluster_table(ntuple, plan, step_size), lo, hi, step_size):
                        batch = plan(a, b, "ak" if schema else lib, args.threads, offset + a)
                        if schema is not None:
                            filled = _fill_missing(batch, schema, wanted, expressions, args.filter_name)
                            batch = to_library(filled, lib, offset + a)
                        batch = apply_how(batch, args.how, lib)
                        report = Report(ntuple._file_path or "", ntuple.name, a, b, offset)
                        yield (batch, report) if args.report else batch
            offset += n

    iterate = takes(IterateArgs)(_iterate)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow C stream of the chain, one record batch per step of ``iterate`` (a step never
        spans two files); ``requested_schema`` selects fields by name (``_arrow_stream``)."""
        from ._arrow_stream import chain_reader

        return chain_reader(self, requested_schema).__arrow_c_stream__()

    def arrow_dataset(self) -> Any:
        """The chain as a ``pyarrow.dataset.Dataset`` that reads only the fields a scan asks for
        and its filter uses (DuckDB pushes both into it), as ``RNTuple.arrow_dataset``."""
        from ._arrow_dataset import ArrowDataset
        from ._arrow_stream import chain_reader

        schema = self.arrays(entry_start=0, entry_stop=0, library="pa").schema
        return ArrowDataset(schema, lambda wanted: chain_reader(self, wanted), lambda: self.num_entries, "the chain")

    def _check_against_first(self, i: int, read: set[str]) -> None:
        """Member ``i`` agrees with the first on the fields ``read`` (as uproot and ROOT's
        processor, fields that are not read may differ)."""
        if self._schemas[0] is None:
            f, _ = self._open(0)
            f.close()
        first, mine = self._schemas[0] or {}, self._schemas[i] or {}
        for name in [n for n in dict.fromkeys([*first, *mine]) if n in read]:
            if first.get(name) != mine.get(name):
                self._mismatch(name, first.get(name), 0, mine.get(name), i)

    def _arrays(self, args: ArraysArgs) -> Any:
        """All selected entries at once (the arguments of :meth:`iterate`, but ``step_size`` and
        ``report``); equal to reading each member alone and concatenating."""
        parts = list(self._iterate(args.stepping(1 << 62, how=None)))
        if not parts:
            f, ntuple = self._open(0)
            with f:
                parts = [ntuple._plan(args)(0, 0, args.lib, None)]
        return apply_how(concatenate_results(parts, args.lib), args.how, args.lib)

    arrays = takes(ArraysArgs)(_arrays)


def _union_names(expressions: Any, schema: dict[str, str], ntuple: RNTuple) -> tuple[Any, list[str] | None]:
    """With ``union=True``: what member ``ntuple`` reads of ``expressions`` and the top-level
    names of the result (None: as the filters select). Plain field names the member lacks are
    not read there (they are filled with None); formulas are read as they are."""
    texts = [expressions] if isinstance(expressions, str) else expressions
    if texts is None or not all(isinstance(t, str) and t in schema for t in texts):
        return expressions, None
    have = set(ntuple.keys())
    mine = [t for t in texts if t in have]
    # none of them here: read one field for the entry count (dropped by _fill_missing)
    return mine or [next(n for n in schema if n in have)], list(texts)


def _fill_missing(
    batch: ak.Array, schema: dict[str, str], wanted: list[str] | None, expressions: Any, filter_name: Filter
) -> ak.Array:
    """The union's fields of ``batch`` in the chain's order (or those ``wanted``), those this
    member lacks as None; formula results as they are."""
    if wanted is None and expressions is not None:
        return batch
    present = set(ak.fields(batch))
    if wanted is None:
        accept = make_filter(filter_name)
        wanted = [name for name in schema if name in present or accept(name)]
    columns = {}
    for name in wanted:
        if name in present:
            columns[name] = batch[name]
        else:
            index = ak.index.Index64(np.full(len(batch), -1, dtype=np.int64))
            columns[name] = ak.Array(ak.contents.IndexedOptionArray(index, ak.contents.EmptyArray()))
    return ak.Array(columns) if columns else batch


@takes(ChainOptions)
def chain(files: Any, options: ChainOptions) -> Chain:
    """A :class:`Chain` of the RNTuples ``files`` names (any form of :func:`iterate`)."""
    return Chain(files, **vars(options))


@takes(DatasetIterateArgs)
def iterate(files: Any, args: DatasetIterateArgs) -> Iterator[Any]:
    """Iterates over the RNTuples of many files, like ``uproot.iterate``.

    ``files``: a path or URL, a glob, a list of them, ``"f.root:Events"`` or
    ``{path: "Events"}`` (``_dataset.expand``); the RNTuple is the one named, else the only
    one in each file. The other arguments are those of :meth:`Chain.iterate`: ``filter_name``,
    ``filter_typename``, ``filter_field``, ``entry_start``/``entry_stop`` (global entry
    numbers), ``step_size`` (entries or ``"100 MB"``), ``library``, ``how``, ``report``;
    ``union`` and ``allow_missing`` as for :class:`Chain`. ``progress``: a bar of the files
    done over a dataset of several files (``None``: when the output is a terminal or a
    notebook, see ``rntuple._term``).
    """
    members = Chain(files, union=args.union, allow_missing=args.allow_missing)
    if len(members._specs) < 2 or wanted(args.progress) is False:
        return members._iterate(args)
    return _with_progress(members, args)


def _with_progress(members: Chain, args: DatasetIterateArgs) -> Iterator[Any]:
    """``members._iterate(args)`` with a bar that advances as each file is done."""
    total = len(members._specs)
    bar = Progress(total, "iterate", args.progress, "files")
    current: tuple[str, str] | None = None
    try:
        for batch, report in members._iterate(dataclasses.replace(args, report=True)):
            here = (report.file_path or "", report.object_path)
            if current is not None and here != current:
                bar.update(1)
            current = here
            yield (batch, report) if args.report else batch
        bar.update(total - bar.done)
    finally:
        bar.close()


@takes(ConcatenateArgs)
def concatenate(files: Any, args: ConcatenateArgs) -> Any:
    """All entries of the RNTuples of many files in one array, like ``uproot.concatenate``."""
    members = Chain(files, union=args.union, allow_missing=args.allow_missing)
    return members._arrays(args)
