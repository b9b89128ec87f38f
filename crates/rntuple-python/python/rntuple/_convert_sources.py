"""Where ``rntuple.convert`` reads from: TTrees (through uproot, laid out as
ROOT's ``RNTupleImporter`` lays them out), Parquet files and RNTuples, each
as a source of Arrow record batches in bounded steps (see ``_convert``)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import awkward as ak
import numpy as np
import pyarrow as pa

from . import _lib
from ._errors import WrongTypeError
from ._fields import Field, iter_fields
from ._file import open as open_file
from ._filters import parse_memory_size
from ._write_input import null_paths

RNTUPLE_CLASS = "ROOT::RNTuple"
TREE_CLASSES = ("TTree", "TNtuple", "TNtupleD")
CARDINALITY = "ROOT::RNTupleCardinality<std::uint32_t>"
# Key of the Parquet schema metadata in which RNTuple -> Parquet keeps what Arrow cannot say.
PARQUET_METADATA_KEY = b"rntuple"
DEFAULT_NAME = "Events"
# Characters that RNTuple field names may not hold (spec "Naming specification"): replaced by "_".
_BAD_NAME_CHARS = ".\\/ "


class ConvertError(_lib.RNTupleError):
    """A conversion that cannot be done: unsupported input, inconsistent inputs, bad arguments."""


def _need_uproot() -> Any:
    try:
        import uproot
    except ImportError:
        raise ConvertError(
            "reading TTrees needs uproot: pip install uproot (or install rntuple with the 'convert' extra)"
        ) from None
    return uproot


# ---------------------------------------------------------------------------
# Arrow helpers
# ---------------------------------------------------------------------------


def _strict_type(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field non-nullable and list items named ``_0`` (TTrees hold no missing values)."""
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.large_list(pa.field("_0", _strict_type(t.value_type), nullable=False))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field("_0", _strict_type(t.value_type), nullable=False), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _strict_type(t.field(i).type), False) for i in range(t.num_fields)])
    return t


def _decoded_type(t: pa.DataType) -> pa.DataType:
    """``t`` with dictionary-encoded parts (pandas categoricals) replaced by their value types."""
    if pa.types.is_dictionary(t):
        return _decoded_type(t.value_type)
    if pa.types.is_large_list(t) or pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        item = t.value_field.with_type(_decoded_type(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(item, t.list_size)
        return pa.large_list(item) if pa.types.is_large_list(t) else pa.list_(item)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_decoded_type(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(_decoded_type(t.key_type)), t.item_field.with_type(_decoded_type(t.item_type))
        )
    return t


def _conform(table: pa.Table | pa.RecordBatch, schema: pa.Schema, where: str) -> pa.Table:
    """``table`` with ``schema``'s column order and exact types (nullability, list item names)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    try:
        table = table.select(schema.names)
        return table.cast(schema)
    except (pa.ArrowException, KeyError, ValueError, TypeError) as err:
        raise ConvertError(f"{where}: the data do not fit the schema of the first input ({err})") from None


def _fspath_list(inputs: Any) -> list[str | os.PathLike[str]]:
    if isinstance(inputs, str | os.PathLike):
        return [inputs]
    try:
        return list(inputs)
    except TypeError:
        raise WrongTypeError(f"inputs must be a path or a list of paths, not {inputs!r}") from None


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------


@dataclass
class _Plan:
    """What an RNTuple is declared with and how its batches are made."""

    schema: pa.Schema
    types: dict[str, str] = field(default_factory=dict)
    representations: dict[str, Any] = field(default_factory=dict)
    projections: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Collection:
    """Branches sharing one count leaf: an untyped collection of untyped records."""

    count_leaf: str
    count_branch: str
    field_name: str
    members: list[tuple[str, str]] = field(default_factory=list)
    """(branch name, field name)"""


def _field_name(branch: str) -> str:
    out = "".join("_" if (c in _BAD_NAME_CHARS or not c.isprintable()) else c for c in branch)
    return out or "_"


def _leaf_class(branch: Any) -> str:
    leaves = branch.member("fLeaves")
    return leaves[0].classname if len(leaves) else ""


class _TreeSource:
    """TTrees (one per input file) read with uproot."""

    def __init__(self, inputs: list[tuple[str, str]], step_size: int | str) -> None:
        self.uproot = _need_uproot()
        self.inputs = inputs
        self.step_size = step_size
        self.default_name = inputs[0][1]
        path, tree_name = inputs[0]
        with self._open(path) as f:
            tree = self._tree(f, path, tree_name)
            self._layout(tree, path)
            self.plan = self._make_plan(tree)
            self.signature = self._signature(tree)
        self.total = 0
        for path, tree_name in inputs:
            with self._open(path) as f:
                tree = self._tree(f, path, tree_name)
                if len(inputs) > 1:
                    self._check_same(tree, path, tree_name)
                self.total += int(tree.num_entries)

    def _open(self, path: str) -> Any:
        try:
            return self.uproot.open(path)
        except OSError:
            raise
        except Exception as err:
            raise ConvertError(f"{path}: uproot cannot open it: {type(err).__name__}: {err}") from None

    def _tree(self, f: Any, path: str, tree_name: str) -> Any:
        try:
            return f[tree_name]
        except Exception as err:
            raise ConvertError(
                f"{path}:{tree_name}: uproot cannot read the TTree: {type(err).__name__}: {err}"
            ) from None

    # the field layout (from the first input)

    def _layout(self, tree: Any, path: str) -> None:
        branches = list(tree.branches)
        counted: dict[str, tuple[str, str]] = {}  # count leaf name -> (count branch name, leaf name)
        arrays: dict[str, str] = {}  # array branch -> count leaf name
        for b in branches:
            cb = getattr(b, "count_branch", None)
            cl = getattr(b, "count_leaf", None)
            if cb is None or cl is None:
                continue
            if len(cb.member("fLeaves")) != 1:
                raise ConvertError(
                    f"{path}: branch {b.name!r} counts with leaf {cl.member('fName')!r} of the leaf list "
                    f"{cb.name!r}; count leaves in leaf lists are not supported"
                )
            leaf_name = cl.member("fName")
            counted[leaf_name] = (cb.name, leaf_name)
            arrays[b.name] = leaf_name
        self.count_branches = {cb for cb, _ in counted.values()}
        # ROOT's importer numbers the collections in the order of the count leaves' names (a std::map)
        self.collections: dict[str, _Collection] = {}
        for i, leaf_name in enumerate(sorted(counted)):
            self.collections[leaf_name] = _Collection(leaf_name, counted[leaf_name][0], f"_collection{i}")
        self.flat: list[tuple[str, str]] = []  # (branch name, field name)
        for b in branches:
            if b.name in self.count_branches:
                continue
            if b.name in arrays:
                self.collections[arrays[b.name]].members.append((b.name, _field_name(b.name)))
            else:
                self.flat.append((b.name, _field_name(b.name)))
        self.branches = {b.name: b for b in branches}
        # names must stay unique after replacing characters RNTuple does not allow
        seen: dict[str, str] = {}
        names = [*self.flat, *((c.field_name, c.field_name) for c in self.collections.values())]
        for c in self.collections.values():
            names.append((c.count_branch, _field_name(c.count_leaf)))
            names += c.members
        for branch, name in names:
            if name in seen and seen[name] != branch:
                raise ConvertError(
                    f"{path}: branches {seen[name]!r} and {branch!r} would both become the field {name!r}"
                )
            seen[name] = branch

    def _arrow_type(self, branch: Any, path: str) -> pa.DataType:
        interp = branch.interpretation
        if isinstance(interp, self.uproot.interpretation.identify.UnknownInterpretation):
            raise ConvertError(f"{path}: branch {branch.name!r} ({branch.typename}): uproot cannot read it: {interp}")
        if isinstance(interp, self.uproot.interpretation.grouped.AsGrouped):
            subs = ", ".join(b.name for b in branch.branches)
            raise ConvertError(
                f"{path}: branch {branch.name!r} ({branch.typename}) is an object split into sub-branches ({subs}); "
                "split object branches are not supported"
            )
        try:
            form = interp.awkward_form(branch.file)
            t = ak.to_arrow(ak.Array(form.length_zero_array()), extensionarray=False).type
        except Exception as err:
            raise ConvertError(
                f"{path}: branch {branch.name!r} ({branch.typename}) cannot be converted: {err}"
            ) from None
        return _strict_type(t)

    def _is_double32(self, branch: Any) -> bool:
        """A ``Double32_t`` leaf without range: float on disk, double in memory (ROOT's ``Double32_t``)."""
        interp = branch.interpretation
        if _leaf_class(branch) != "TLeafD32":
            return False
        content = getattr(interp, "content", interp)
        return isinstance(content, self.uproot.interpretation.numerical.AsDtype)

    def _make_plan(self, tree: Any) -> _Plan:
        path = self.inputs[0][0]
        fields = []
        types: dict[str, str] = {}
        for bname, fname in self.flat:
            b = self.branches[bname]
            fields.append(pa.field(fname, self._arrow_type(b, path), nullable=False))
            if self._is_double32(b):
                types[fname] = "Double32_t"
        projections: dict[str, Any] = {}
        for c in self.collections.values():
            members = []
            for bname, fname in c.members:
                b = self.branches[bname]
                t = self._arrow_type(b, path)
                if not (pa.types.is_large_list(t) or pa.types.is_list(t)):
                    raise ConvertError(
                        f"{path}: branch {bname!r} is counted by {c.count_leaf!r} but not read as a list"
                    )
                members.append(pa.field(fname, t.value_type, nullable=False))
                if self._is_double32(b):
                    types[f"{c.field_name}._0.{fname}"] = "Double32_t"
            record = pa.struct(members)
            fields.append(pa.field(c.field_name, pa.large_list(pa.field("_0", record, nullable=False)), False))
            for _, fname in c.members:
                projections[fname] = f"{c.field_name}._0.{fname}"
            projections[_field_name(c.count_leaf)] = (CARDINALITY, c.field_name)
        return _Plan(pa.schema(fields), types=types, projections=projections)

    def _signature(self, tree: Any) -> list[tuple[str, str, str | None]]:
        return [
            (b.name, str(b.interpretation), getattr(getattr(b, "count_leaf", None), "name", None))
            for b in tree.branches
        ]

    def _check_same(self, tree: Any, path: str, tree_name: str) -> None:
        sig = self._signature(tree)
        if sig == self.signature:
            return
        first = dict((n, (i, c)) for n, i, c in self.signature)
        this = dict((n, (i, c)) for n, i, c in sig)
        missing = [n for n in first if n not in this]
        extra = [n for n in this if n not in first]
        changed = [n for n in first if n in this and first[n] != this[n]]
        what = []
        if missing:
            what.append(f"missing branches {missing[:5]}")
        if extra:
            what.append(f"extra branches {extra[:5]}")
        if changed:
            n = changed[0]
            what.append(f"branch {n!r} is {this[n][0]} here but {first[n][0]} in {self.inputs[0][0]}")
        if not what:
            what.append("the branches are in another order")
        raise ConvertError(f"{path}:{tree_name} does not have the branches of the first input: {'; '.join(what)}")

    def close(self) -> None:
        pass

    # batches

    def batches(self) -> Iterator[tuple[pa.Table, int]]:
        """(batch, entries) in entry order over all inputs."""
        wanted = [b for b, _ in self.flat]
        for c in self.collections.values():
            wanted.append(c.count_branch)
            wanted += [b for b, _ in c.members]
        wanted_set = set(wanted)
        for path, tree_name in self.inputs:
            with self._open(path) as f:
                tree = self._tree(f, path, tree_name)
                if tree.num_entries == 0:
                    continue
                chunks = tree.iterate(
                    filter_branch=lambda b: b.name in wanted_set,
                    step_size=self.step_size,
                    library="ak",
                    how=dict,
                )
                while True:
                    try:
                        chunk = next(chunks)
                    except StopIteration:
                        break
                    except Exception as err:  # uproot's many exception types for data it cannot read
                        what = f"{type(err).__name__}: {err}"
                        raise ConvertError(f"{path}:{tree_name}: uproot cannot read it: {what}") from None
                    table = self._table(chunk, f"{path}:{tree_name}")
                    yield table, table.num_rows

    def _table(self, chunk: dict[str, ak.Array], where: str) -> pa.Table:
        columns = []
        schema = self.plan.schema
        for i, (bname, _) in enumerate(self.flat):
            columns.append(_to_arrow(chunk[bname], schema.field(i).type, where, bname))
        for j, c in enumerate(self.collections.values()):
            ftype = schema.field(len(self.flat) + j).type
            counts = np.asarray(ak.to_numpy(chunk[c.count_branch])).astype(np.int64)
            if counts.size and counts.min() < 0:
                raise ConvertError(f"{where}: count leaf {c.count_leaf!r} holds a negative count")
            offsets = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            record_type = ftype.value_type
            contents = []
            for k, (bname, _) in enumerate(c.members):
                jagged = chunk[bname]
                if not np.array_equal(np.asarray(ak.num(jagged, axis=1)), counts):
                    raise ConvertError(f"{where}: branch {bname!r} does not have {c.count_leaf!r} elements per entry")
                flat = ak.flatten(jagged, axis=1)
                contents.append(_to_arrow(flat, record_type.field(k).type, where, bname))
            record = pa.StructArray.from_arrays(contents, fields=list(record_type))
            columns.append(pa.LargeListArray.from_arrays(_numpy_to_arrow(offsets), record, type=ftype))
        return pa.Table.from_arrays(columns, schema=schema)


def _numpy_to_arrow(x: np.ndarray) -> pa.Array:
    """A 1-d numpy array as an Arrow array without a copy (bools are bit-packed); ``pa.array`` would
    import pandas, half a second."""
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    x = np.ascontiguousarray(x)
    if x.dtype == np.bool_:
        return pa.Array.from_buffers(pa.bool_(), len(x), [None, pa.py_buffer(np.packbits(x, bitorder="little"))])
    return pa.Array.from_buffers(pa.from_numpy_dtype(x.dtype), len(x), [None, pa.py_buffer(x)])


def _to_arrow(array: ak.Array, t: pa.DataType, where: str, branch: str) -> pa.Array:
    try:
        layout = array.layout
        if isinstance(layout, ak.contents.NumpyArray) and layout.data.ndim == 1 and layout.data.dtype.kind in "biuf":
            out = _numpy_to_arrow(np.asarray(layout.data))
        else:
            out = ak.to_arrow(array, extensionarray=False)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        return out.cast(t) if out.type != t else out
    except (pa.ArrowException, ValueError, TypeError) as err:
        raise ConvertError(f"{where}: branch {branch!r}: cannot convert its values ({err})") from None


class _ParquetSource:
    """Parquet files read with pyarrow, in row batches."""

    def __init__(self, inputs: list[str], step_size: int | str) -> None:
        import pyarrow.parquet as pq

        self.pq = pq
        self.inputs = inputs
        files = [pq.ParquetFile(p) for p in inputs]
        first = files[0].schema_arrow
        for p, pf in zip(inputs[1:], files[1:], strict=True):
            if not pf.schema_arrow.remove_metadata().equals(first.remove_metadata()):
                raise ConvertError(f"{p} does not have the columns of {inputs[0]} (schemas differ: {pf.schema_arrow})")
        self.total = sum(pf.metadata.num_rows for pf in files)
        meta = _read_metadata(first)
        schema = pa.schema([f.with_type(_decoded_type(f.type)) for f in first])
        if meta is None:
            schema = self._tighten(files, schema)
        self.plan = _Plan(schema)
        self.default_name = DEFAULT_NAME
        if meta is not None:
            self.default_name = meta.get("name") or DEFAULT_NAME
            self.plan.types = {k: v for k, v in (meta.get("types") or {}).items() if isinstance(v, str)}
            self.plan.projections = {
                k: tuple(v) if isinstance(v, list) else v for k, v in (meta.get("projections") or {}).items()
            }
        self.step_size = step_size
        self._files = files

    def _tighten(self, files: list[Any], schema: pa.Schema) -> pa.Schema:
        """Parquet marks most columns optional; a column becomes ``std::optional`` only if it holds nulls."""
        nulls: set[str] = set()
        scan = []
        for f in schema:
            if not _any_nullable(f):
                continue
            if not (pa.types.is_nested(f.type)) and all(_stats_null_count(pf, f.name) == 0 for pf in files):
                continue
            scan.append(f.name)
        if scan:
            for pf in files:
                for batch in pf.iter_batches(batch_size=65536, columns=scan):
                    for name in scan:
                        null_paths(batch.column(name), name, nulls)
        return pa.schema(_lib.tighten_schema(schema, nulls, maps=True))

    def close(self) -> None:
        for pf in self._files:
            with contextlib.suppress(Exception):
                pf.close()

    def batches(self) -> Iterator[tuple[pa.Table, int]]:
        for path, pf in zip(self.inputs, self._files, strict=True):
            rows = _rows_per_step(pf, self.step_size)
            for batch in pf.iter_batches(batch_size=rows):
                yield _conform(batch, self.plan.schema, path), batch.num_rows


def _any_nullable(f: pa.Field) -> bool:
    if f.nullable:
        return True
    t = f.type
    return any(_any_nullable(t.field(i)) for i in range(t.num_fields)) if t.num_fields else False


def _stats_null_count(pf: Any, name: str) -> int | None:
    """Nulls in the flat column ``name`` by the file's statistics (None when unknown)."""
    meta = pf.metadata
    total = 0
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for c in range(group.num_columns):
            col = group.column(c)
            if col.path_in_schema == name:
                stats = col.statistics
                if stats is None or not stats.has_null_count:
                    return None
                total += stats.null_count
                break
        else:
            return None
    return total


def _rows_per_step(pf: Any, step_size: int | str) -> int:
    if isinstance(step_size, int) and not isinstance(step_size, bool):
        return max(1, step_size)
    target = parse_memory_size(step_size)
    meta = pf.metadata
    nbytes = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if meta.num_rows == 0 or nbytes == 0:
        return 65536
    return max(1, min(meta.num_rows, int(target * meta.num_rows // nbytes)))


def _read_metadata(schema: pa.Schema) -> dict | None:
    raw = (schema.metadata or {}).get(PARQUET_METADATA_KEY)
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


class _RNTupleSource:
    """An RNTuple (for Parquet output): its top-level fields except projected ones."""

    def __init__(self, inputs: list[tuple[str, str]], step_size: int | str) -> None:
        from ._chain import Chain

        path, name = inputs[0]
        self.file = open_file(path)
        self.ntuple = self.file[name]
        self.name = name
        self.where = f"{path}:{name}"
        self.step_size = step_size
        # Several inputs: their chain (the same fields in every one, else a SchemaMismatchError).
        self.reader: Any = Chain(inputs) if len(inputs) > 1 else self.ntuple
        self.total = self.reader.num_entries
        fields = [f for f in self.ntuple.fields if not f.projected]
        bad = [f.name for f in fields if not f.readable]
        if bad:
            raise ConvertError(f"{path}:{name}: fields this reader cannot read: {bad}")
        self.fields = [f.name for f in fields]
        self.metadata = {
            "version": 1,
            "name": name.rsplit("/", 1)[-1],
            "types": _declared_types(fields),
            "projections": _projections_of(self.ntuple.fields),
        }

    def batches(self) -> Iterator[tuple[pa.Table, int]]:
        wanted = set(self.fields)
        for table in self.reader.iterate(
            filter_field=lambda f: f.top_level and f.name in wanted, step_size=self.step_size, library="pa"
        ):
            yield table, table.num_rows

    def close(self) -> None:
        self.file.close()


def _declared_types(fields: list[Field]) -> dict[str, str]:
    """C++ types that Arrow cannot tell, by field path: the top-level fields' and those of members of
    untyped records and of classes (the type names of templates such as ``std::vector<T>`` give their
    subfields' types)."""
    out: dict[str, str] = {}

    def walk(f: Field, path: str, free: bool) -> None:
        if free and f.type_name:
            alias = f.type_alias if "Double32_t" in f.type_alias else ""
            out[path] = alias or f.type_name
        members_free = f.kind == "record" and not f.type_name.startswith(("std::pair<", "std::tuple<"))
        for c in f.children:
            walk(c, f"{path}.{c.name}", members_free)

    for f in fields:
        walk(f, f.name, True)
    return out


def _projections_of(fields: list[Field]) -> dict[str, list[str]]:
    """Projected top-level fields as ``{name: [type, source path]}`` where the source is one field."""
    owner: dict[int, str] = {}
    for f in iter_fields([f for f in fields if not f.projected]):
        for rep in f.columns:
            for column_id, _, _ in rep:
                owner.setdefault(column_id, f.path)
    out: dict[str, list[str]] = {}
    for f in fields:
        if not f.projected:
            continue
        g = f
        while g.children and len(g.children) == 1:
            g = g.children[0]
        if g.children or not g.columns or not g.columns[0]:
            continue
        source = owner.get(g.columns[0][0][0])
        if source is not None:
            out[f.name] = [f.type_name, source]
    return out
