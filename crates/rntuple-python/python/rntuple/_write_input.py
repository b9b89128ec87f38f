"""What ``rntuple.recreate``'s writers accept as data, turned into Arrow
tables for the Rust writer: awkward arrays, pyarrow tables and batches,
pandas DataFrames, dicts of numpy or awkward arrays, and type
specifications (schema only). Nullability is inferred in Rust
(``_lib.null_paths``/``_lib.tighten_schema``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import awkward as ak
import numpy as np
import pyarrow as pa

from . import _lib

WriteError = _lib.WriteError


def _is_type_spec(value: Any) -> bool:
    if isinstance(value, type):
        return issubclass(value, np.generic)
    return isinstance(value, str | np.dtype | ak.types.Type)


def _empty_of_type(name: str, spec: Any) -> ak.Array:
    """A zero-length awkward array of the type ``spec`` (datashape string, numpy dtype or awkward type)."""
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
    if isinstance(value, ak.Array):
        return value
    if isinstance(value, pa.Array | pa.ChunkedArray):
        return ak.from_arrow(value)
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):  # pandas Series
        value = value.to_numpy()
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ak.from_iter(value.tolist())
        return ak.from_numpy(value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        return ak.from_iter(value)
    raise TypeError(f"column {name!r}: cannot write a {type(value).__name__}; give an array (numpy, awkward, pyarrow)")


def _from_awkward(array: ak.Array) -> pa.Table:
    if not array.fields or array.ndim != 1:
        raise TypeError(
            f"an awkward array to write must be a record array (its fields are the RNTuple's fields), not of "
            f"type {array.type}; write {{'name': array}} for a single field"
        )
    try:
        # Packed first: awkward 2.x converts a masked list (ak.mask of strings, sliced) whose offsets do
        # not start at 0 into an Arrow array with wrong offsets.
        packed = ak.to_packed(array)
        return ak.to_arrow_table(packed, extensionarray=False, categorical_as_dictionary=False)
    except (TypeError, ValueError) as err:
        raise WriteError(f"cannot convert the awkward array of type {array.type} to Arrow: {err}") from None


def _from_mapping(data: Mapping[str, Any]) -> tuple[pa.Table, bool]:
    for key in data:
        if not isinstance(key, str):
            raise TypeError(f"the columns of a dict must be named by strings, not {key!r}")
    if data and all(isinstance(v, pa.Array | pa.ChunkedArray) for v in data.values()):
        return pa.table(dict(data)), False
    columns = {k: _to_awkward(k, v) for k, v in data.items()}
    lengths = {k: len(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise WriteError(f"the columns have different lengths: {lengths}")
    if not columns:
        raise WriteError("no columns to write")
    return _from_awkward(ak.zip(columns, depth_limit=1)), True


def _from_pandas(frame: Any) -> pa.Table:
    """The columns of a DataFrame (not its index). NaN stays a float value; missing values are
    ``None``/``pd.NA`` (pandas' nullable dtypes)."""
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        raise WriteError(f"the DataFrame has duplicate column names: {names}")
    arrays = []
    for i, name in enumerate(names):
        try:
            arrays.append(pa.array(frame.iloc[:, i], from_pandas=False))
        except (pa.ArrowException, TypeError, ValueError) as err:
            raise WriteError(f"column {name!r} of the DataFrame cannot be converted to Arrow: {err}") from None
    return pa.Table.from_arrays(arrays, names=names)


def _to_table(data: Any) -> tuple[pa.Table, bool]:
    """``data`` as an Arrow table, and whether its nullability is meant (awkward: option types) or not."""
    if isinstance(data, pa.Table):
        return data, False
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data]), False
    if isinstance(data, ak.Array):
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
    raise TypeError(
        f"cannot write a {type(data).__name__}: give an awkward record array, a pyarrow Table or RecordBatch, "
        "a pandas DataFrame, or a dict of arrays"
    )


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


def _schema_of(data_or_schema: Any) -> pa.Schema:
    """The schema fields are declared with: a ``pyarrow.Schema`` as is, a dict of types, or the types of data."""
    if isinstance(data_or_schema, pa.Schema):
        return data_or_schema
    if (
        isinstance(data_or_schema, Mapping)
        and data_or_schema
        and all(_is_type_spec(v) for v in data_or_schema.values())
    ):
        data_or_schema = {k: _empty_of_type(k, v) for k, v in data_or_schema.items()}
    table, exact = _to_table(data_or_schema)
    return _declared_schema(_decode_dictionaries(table), exact)
