"""What ``rntuple.recreate``'s writers accept as data, turned into Arrow
tables for the Rust writer: awkward arrays, pyarrow tables and batches,
pandas DataFrames, dicts of numpy or awkward arrays, and type
specifications (schema only). Nullability is inferred in Rust
(``_lib.null_paths``/``_lib.tighten_schema``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from . import _lib
from ._errors import WrongTypeError

if TYPE_CHECKING:
    import awkward as ak

WriteError = _lib.WriteError


def _awkward() -> Any:
    """awkward, imported when data needs it: writing Arrow, pandas or numpy-structured data does
    not pay its import (~0.2 s, hundreds of modules)."""
    import awkward

    return awkward


def _loaded_awkward() -> Any:
    """awkward if something imported it already, else None: a value cannot be one of its types
    before it is imported."""
    return sys.modules.get("awkward")


def _is_awkward_array(value: Any) -> bool:
    ak = _loaded_awkward()
    return ak is not None and isinstance(value, ak.Array)


def _is_type_spec(value: Any) -> bool:
    if isinstance(value, type):
        return issubclass(value, np.generic)
    if isinstance(value, str | np.dtype):
        return True
    ak = _loaded_awkward()
    return ak is not None and isinstance(value, ak.types.Type)


def _empty_of_type(name: str, spec: Any) -> ak.Array:
    """A zero-length awkward array of the type ``spec`` (datashape string, numpy dtype or awkward type)."""
    ak = _awkward()
    try:
        if isinstance(spec, ak.types.ArrayType):
            spec = spec.content
        elif isinstance(spec, str):
            spec = ak.types.from_datashape(spec, highlevel=False)
        elif not isinstance(spec, ak.types.Type):
            spec = ak.types.from_datashape(str(np.dtype(spec)), highlevel=False)
        return ak.Array(ak.forms.from_type(spec).length_zero_array())
    except Exception as err:
        raise WriteError(f"column {name!r}: cannot use {spec!r} as a type ({err})") from None


def _to_awkward(name: str, value: Any) -> ak.Array:
    ak = _awkward()
    if isinstance(value, ak.Array):
        return value
    if isinstance(value, pa.Array | pa.ChunkedArray):
        try:
            return ak.from_arrow(value)
        except Exception as err:  # awkward asserts on Arrow types it has no form for (list_view, ...)
            raise WriteError(
                f"column {name!r}: awkward cannot take the Arrow type {value.type} "
                f"({type(err).__name__}: {err}); give all columns as pyarrow arrays (a Table)"
            ) from None
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):  # pandas Series
        value = value.to_numpy()
    if isinstance(value, np.ndarray) and value.dtype != object:
        return ak.from_numpy(value)
    if isinstance(value, np.ndarray) or (isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)):
        try:
            return ak.from_iter(value.tolist() if isinstance(value, np.ndarray) else value)
        except Exception as err:  # awkward's builder raises RuntimeError for ints beyond 64 bits
            raise WriteError(
                f"column {name!r}: awkward cannot build an array of these values ({type(err).__name__}: "
                f"{str(err).splitlines()[0] if str(err) else ''})"
            ) from None
    raise WrongTypeError(
        f"column {name!r}: cannot write a {type(value).__name__}; give an array (numpy, awkward, pyarrow)"
    )


def _from_awkward(array: ak.Array) -> pa.Table:
    ak = _awkward()
    # layout.purelist_depth, not array.ndim: ndim raises AttributeError for some unions (awkward 2.x)
    if not isinstance(array, ak.Array) or not array.fields or array.layout.purelist_depth != 1:
        raise WrongTypeError(
            f"an awkward array to write must be a record array (its fields are the RNTuple's fields), not of "
            f"type {array.type}; write {{'name': array}} for a single field"
        )
    try:
        # Packed first: awkward 2.x converts a masked list (ak.mask of strings, sliced) whose offsets do
        # not start at 0 into an Arrow array with wrong offsets.
        packed = ak.to_packed(array)
        return ak.to_arrow_table(packed, extensionarray=False, categorical_as_dictionary=False)
    except Exception:
        pass
    try:
        # awkward 2.x packs an option of lists whose entries are all missing into an empty list
        # array that its Arrow conversion then indexes out of bounds (IndexError); unpacked it converts.
        return ak.to_arrow_table(array, extensionarray=False, categorical_as_dictionary=False)
    except Exception as err:  # awkward's own bugs too (IndexError, AssertionError)
        raise WriteError(
            f"cannot convert the awkward array of type {array.type} to Arrow: {type(err).__name__}: {err}"
        ) from None


def _from_mapping(data: Mapping[str, Any]) -> tuple[pa.Table, bool]:
    for key in data:
        if not isinstance(key, str):
            raise WrongTypeError(f"the columns of a dict must be named by strings, not {key!r}")
    if data and all(isinstance(v, pa.Array | pa.ChunkedArray) for v in data.values()):
        return pa.table(dict(data)), False
    columns = {k: _to_awkward(k, v) for k, v in data.items()}
    lengths = {k: len(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise WriteError(f"the columns have different lengths: {lengths}")
    if not columns:
        raise WriteError("no columns to write")
    n = next(iter(lengths.values()))
    # The record array built directly: ak.zip(depth_limit=1) returns a single ak.Record for some
    # union columns (awkward 2.x), where the entries are the columns' entries.
    ak = _awkward()
    record = ak.contents.RecordArray([c.layout for c in columns.values()], list(columns), length=n)
    return _from_awkward(ak.Array(record)), True


def _numpy_to_arrow(values: np.ndarray) -> pa.Array:
    """A numpy array as Arrow: structured dtypes as structs, extra dimensions as fixed-size lists."""
    if values.dtype.names:
        return pa.StructArray.from_arrays(
            [_numpy_to_arrow(np.ascontiguousarray(values[n])) for n in values.dtype.names], list(values.dtype.names)
        )
    if values.ndim > 1:
        inner = _numpy_to_arrow(values.reshape((-1, *values.shape[2:])))
        return pa.FixedSizeListArray.from_arrays(inner, values.shape[1])
    return pa.array(values)


def _object_column(values: list[Any]) -> pa.Array | None:
    """An object column of per-entry numpy arrays (``arrays(library="pd")`` of jagged or nested
    fields) as an Arrow list array; None when it holds anything else."""
    if not values or not all(isinstance(v, np.ndarray) for v in values):
        return None
    if len({(v.dtype, v.shape[1:]) for v in values}) != 1:
        return None
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    return pa.LargeListArray.from_arrays(pa.array(offsets), _numpy_to_arrow(np.concatenate(values)))


def _index_columns(frame: Any) -> tuple[list[str], list[Any]]:
    """The index levels written as columns, as ``pyarrow.Table.from_pandas`` does: a RangeIndex (the
    default, and what ``arrays(library="pd")`` makes) is dropped; other levels become columns named
    by the level's name, or ``__index_level_N__`` when unnamed."""
    import pandas as pd

    if isinstance(frame.index, pd.RangeIndex):
        return [], []
    names, values = [], []
    for level in range(frame.index.nlevels):
        name = frame.index.names[level]
        names.append(f"__index_level_{level}__" if name is None else str(name))
        values.append(frame.index.get_level_values(level))
    return names, values


def _from_pandas(frame: Any) -> pa.Table:
    """The columns of a DataFrame, then its index levels unless it is a RangeIndex
    (:func:`_index_columns`). NaN stays a float value; missing values are ``None``/``pd.NA``
    (pandas' nullable dtypes). Object columns of per-entry numpy arrays (jagged fields read with
    ``library="pd"``) become lists."""
    index_names, index_values = _index_columns(frame)
    names = [str(c) for c in frame.columns] + index_names
    if len(set(names)) != len(names):
        raise WriteError(f"the DataFrame has duplicate column names (index levels included): {names}")
    columns = [frame.iloc[:, i] for i in range(len(frame.columns))] + index_values
    arrays = []
    for name, column in zip(names, columns, strict=True):
        try:
            arrays.append(pa.array(column, from_pandas=False))
        except (pa.ArrowException, TypeError, ValueError) as err:
            listed = _object_column(list(column)) if str(getattr(column, "dtype", "")) == "object" else None
            if listed is None:
                raise WriteError(f"column {name!r} of the DataFrame cannot be converted to Arrow: {err}") from None
            arrays.append(listed)
    if not arrays:  # no columns: the entries are still there (an RNTuple without fields)
        return pa.Table.from_batches([pa.RecordBatch.from_struct_array(pa.array([{}] * len(frame), pa.struct([])))])
    return pa.Table.from_arrays(arrays, names=names)


def _to_table(data: Any) -> tuple[pa.Table, bool]:
    """``data`` as an Arrow table, and whether its nullability is meant (awkward: option types) or not."""
    if isinstance(data, pa.Table):
        return data, False
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data]), False
    if _is_awkward_array(data):
        return _from_awkward(data), True
    if isinstance(data, Mapping):
        return _from_mapping(data)
    module = type(data).__module__.split(".")[0]
    if module == "pandas" and hasattr(data, "columns"):
        return _from_pandas(data), False
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data), False
    if hasattr(data, "__arrow_c_array__"):
        return pa.Table.from_batches([pa.record_batch(data)]), False
    raise WrongTypeError(
        f"cannot write a {type(data).__name__}: give an awkward record array, a pyarrow Table or RecordBatch, "
        "a pandas DataFrame, or a dict of arrays"
    )


# The unit of a timestamp column, recorded in its field's description (read back by `_fields`).
DATETIME_DESCRIPTION = "datetime64[{unit}]: {unit} since 1970-01-01T00:00:00 UTC"


def _special_columns(table: pa.Table) -> tuple[pa.Table, dict[str, dict]]:
    """Top-level columns of types RNTuple has no field for, mapped to one it has, and the
    per-field overrides that record how: float16 is written as a ``float`` field with a Real16
    column (spec "Column Types": 0x0F, IEEE half precision); a timestamp (numpy datetime64,
    pandas datetimes) as ``std::int64_t`` counts of its unit, with the unit in the field's
    description (``datetime64[ns]: ...``)."""
    overrides: dict[str, dict] = {}
    for i, field in enumerate(table.schema):
        if pa.types.is_float16(field.type):
            column = table.column(i).cast(pa.float32())  # exact: every half is a float
            overrides[field.name] = {"real": ("Real16", 0, 0.0, 0.0)}
        elif pa.types.is_timestamp(field.type):
            column = table.column(i).cast(pa.int64())
            overrides[field.name] = {"description": DATETIME_DESCRIPTION.format(unit=field.type.unit)}
        else:
            continue
        table = table.set_column(i, pa.field(field.name, column.type, field.nullable), column)
    return table, overrides


def _decode_dictionaries(table: pa.Table) -> pa.Table:
    """Dictionary-encoded columns (pandas categoricals) as their values."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            column = table.column(i).cast(field.type.value_type)
            table = table.set_column(i, pa.field(field.name, column.type, field.nullable), column)
    return table


def null_paths(array: pa.Array, path: str, out: set[str]) -> None:
    """Adds ``path`` and the paths below it whose values hold nulls under valid parents (the only
    nulls that matter; the inference is the Rust package's, ``src/nulls.rs``)."""
    out.update(_lib.null_paths(array, path))


def _declared_schema(table: pa.Table, exact: bool) -> pa.Schema:
    """The schema an RNTuple is declared with: awkward's nullability as is (option types); for other
    sources, where Arrow marks almost everything nullable, a field is nullable (``std::optional``)
    only if the data hold nulls in it."""
    if exact:
        schema = table.schema
    else:
        nulls: set[str] = set()
        for i, name in enumerate(table.column_names):
            for chunk in table.column(i).chunks:
                null_paths(chunk, name, nulls)
        schema = pa.schema(_lib.tighten_schema(table.schema, nulls))
    for field in schema:
        if _has_null_type(field.type):
            raise WriteError(
                f"field {field.name!r} has no type (Arrow type {field.type}: only empty lists or only "
                "missing values?); give data of the intended type or declare it with a schema"
            )
    return schema


def _has_null_type(t: pa.DataType) -> bool:
    if pa.types.is_null(t):
        return True
    return any(_has_null_type(t.field(i).type) for i in range(t.num_fields)) if t.num_fields else False


def _conform(table: pa.Table, schema: pa.Schema, name: str) -> pa.Table:
    """``table`` with its columns in the order of ``schema`` (same names required), and columns
    without a type (only empty lists or nulls, Arrow type null inside) cast to the declared type."""
    names = table.column_names
    wanted = schema.names
    if names != wanted:
        if sorted(names) != sorted(wanted):
            missing = [n for n in wanted if n not in names]
            extra = [n for n in names if n not in wanted]
            raise WriteError(
                f"the batch does not have the fields of RNTuple {name!r}"
                + (f"; missing: {missing}" if missing else "")
                + (f"; not in the RNTuple: {extra}" if extra else "")
            )
        table = table.select(wanted)
    for i, field in enumerate(schema):
        column = table.column(i)
        if column.type != field.type and _has_null_type(column.type):
            try:
                column = column.cast(field.type)
            except (pa.ArrowException, TypeError, ValueError):
                continue  # the writer reports the mismatch
            table = table.set_column(i, pa.field(field.name, field.type, table.schema.field(i).nullable), column)
    return table


def _is_schema_only(data_or_schema: Any) -> bool:
    """A ``pyarrow.Schema`` or a dict of types (not data): declares fields, writes nothing."""
    if isinstance(data_or_schema, pa.Schema):
        return True
    return (
        isinstance(data_or_schema, Mapping)
        and bool(data_or_schema)
        and all(_is_type_spec(v) for v in data_or_schema.values())
    )


def _table_of(data: Any) -> tuple[pa.Table, bool, dict[str, dict]]:
    """``data`` as the Arrow table the writer takes, whether its nullability is exact, and the
    overrides its special columns need (:func:`_special_columns`)."""
    table, exact = _to_table(data)
    table, overrides = _special_columns(_decode_dictionaries(table))
    return _compact_sliced_structs(table), exact, overrides


def _has_sliced_struct(array: pa.Array) -> bool:
    """Whether ``array`` is or holds a struct array that starts at an offset (a slice)."""
    t = array.type
    if pa.types.is_struct(t):
        return array.offset != 0 or any(_has_sliced_struct(array.field(i)) for i in range(t.num_fields))
    if pa.types.is_union(t):
        return any(_has_sliced_struct(array.field(i)) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_map(t):
        return _has_sliced_struct(array.values)
    return False


def _compact_sliced_structs(table: pa.Table) -> pa.Table:
    """``table`` with chunks that hold sliced structs copied to offset 0: the Arrow C data import
    of the Rust side (arrow-rs 59) panics on a sliced struct with struct members (``table.slice``
    of nested records; found by the fuzz target of fuzz/python)."""
    for i, column in enumerate(table.columns):
        if any(_has_sliced_struct(c) for c in column.chunks):
            chunks = [pa.concat_arrays([c]) if _has_sliced_struct(c) else c for c in column.chunks]
            table = table.set_column(i, table.schema.field(i), pa.chunked_array(chunks, column.type))
    return table


def _schema_and_overrides(data_or_schema: Any) -> tuple[pa.Schema, dict[str, dict]]:
    """The schema fields are declared with (a ``pyarrow.Schema`` as is, a dict of types, or the
    types of data) and the overrides of its special columns."""
    if isinstance(data_or_schema, pa.Schema):
        return data_or_schema, {}
    if _is_schema_only(data_or_schema):
        data_or_schema = {k: _empty_of_type(k, v) for k, v in data_or_schema.items()}
    table, exact, overrides = _table_of(data_or_schema)
    return _declared_schema(table, exact), overrides


def _schema_of(data_or_schema: Any) -> pa.Schema:
    """The schema fields are declared with (see :func:`_schema_and_overrides`)."""
    return _schema_and_overrides(data_or_schema)[0]
