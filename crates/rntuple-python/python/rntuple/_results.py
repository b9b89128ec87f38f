"""Shapes of ``arrays()``/``iterate()`` results that uproot users ask for:
``how=`` (tuple, dict, zip), ``report=True`` on ``iterate``, datetime64
fields written by ``rntuple`` (an ``std::int64_t`` whose description records
the unit), and the library conversion of computed (expression) results."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import awkward as ak
import numpy as np
import pyarrow as pa

from ._errors import InvalidArgumentError
from ._fields import Field

__all__ = ["Report", "apply_how", "concatenate_results", "datetime_units", "to_library", "with_datetimes"]

# What `_write_input.DATETIME_DESCRIPTION` writes.
_DATETIME = re.compile(r"^datetime64\[(\w+)\]")
_UNITS = ("s", "ms", "us", "ns")


@dataclass(frozen=True)
class Report:
    """Where a result of ``iterate(..., report=True)`` came from, named as uproot's ``Report``.

    ``tree_entry_start``/``tree_entry_stop`` (also ``entry_start``/``entry_stop``) are entry
    numbers in the file's RNTuple; ``global_entry_start``/``global_entry_stop`` (also
    ``start``/``stop``) in the whole dataset, ``global_offset`` being the file's first one
    (0 for ``RNTuple.iterate``). ``name`` is ``object_path``.
    """

    file_path: str | None
    object_path: str
    tree_entry_start: int
    tree_entry_stop: int
    global_offset: int = 0

    @property
    def name(self) -> str:
        return self.object_path

    @property
    def entry_start(self) -> int:
        return self.tree_entry_start

    @property
    def entry_stop(self) -> int:
        return self.tree_entry_stop

    @property
    def global_entry_start(self) -> int:
        return self.tree_entry_start + self.global_offset

    @property
    def global_entry_stop(self) -> int:
        return self.tree_entry_stop + self.global_offset

    start = global_entry_start
    stop = global_entry_stop

    def to_global(self, global_offset: int) -> Report:
        return replace(self, global_offset=global_offset)

    def __repr__(self) -> str:
        return f"<Report start={self.start} stop={self.stop} of {self.object_path!r} in {self.file_path!r}>"


def datetime_units(fields: list[Field]) -> dict[str, str]:
    """Top-level ``std::int64_t`` fields written from datetimes: display name -> unit."""
    out = {}
    for f in fields:
        m = _DATETIME.match(f.description or "")
        if m and f.type_name == "std::int64_t" and m.group(1) in _UNITS:
            out[f.display_name] = m.group(1)
    return out


def with_datetimes(result: Any, units: dict[str, str]) -> Any:
    """``result`` (awkward array or pyarrow table) with the datetime fields as datetime64 / timestamp."""
    if not units:
        return result
    if isinstance(result, pa.Table):
        for name, unit in units.items():
            if name in result.column_names:
                i = result.column_names.index(name)
                result = result.set_column(i, name, result.column(i).cast(pa.timestamp(unit)))
        return result
    if isinstance(result, ak.Array) and result.fields:
        columns = {}
        for name in result.fields:
            column = result[name]
            if name in units:
                column = ak.values_astype(column, np.dtype(f"datetime64[{units[name]}]"))
            columns[name] = column
        return ak.zip(columns, depth_limit=1)
    return result


def to_library(array: ak.Array, lib: str, index: int | np.ndarray) -> Any:
    """An awkward record array in ``lib``'s form (``"ak"``, ``"np"``, ``"pd"``, ``"pa"``), as
    ``RNTuple.arrays`` gives it; ``index``: the first entry's number or the entry numbers
    (pandas' index)."""
    from ._numpy import to_numpy_dict, to_pandas

    if lib == "ak":
        return array
    if lib == "np":
        return to_numpy_dict(array)
    if lib == "pa":
        return ak.to_arrow_table(array, extensionarray=False)
    if isinstance(index, int | np.integer):
        return to_pandas(array, int(index))
    frame = to_pandas(array, 0)
    frame.index = index
    return frame


def concatenate_results(parts: list[Any], lib: str) -> Any:
    """One result from the batches of ``iterate`` (in order)."""
    if lib == "ak":
        return ak.concatenate(parts) if len(parts) != 1 else parts[0]
    if lib == "np":
        names = list(parts[0]) if parts else []
        return {n: np.concatenate([p[n] for p in parts]) for n in names}
    if lib == "pd":
        import pandas as pd

        return pd.concat(parts) if len(parts) != 1 else parts[0]
    return pa.concat_tables(parts) if len(parts) != 1 else parts[0]


def apply_how(result: Any, how: Any, lib: str) -> Any:
    """uproot's ``how=``: ``tuple``/``"tuple"`` or ``list``/``"list"`` (the fields in order),
    ``dict``/``"dict"`` (by name), ``"zip"`` (jagged fields ``X_a``, ``X_b``... of equal lengths
    zipped into records ``X``), or None (the library's default)."""
    if how is None:
        return result
    if lib not in ("ak", "np"):
        raise InvalidArgumentError(f"how= applies to library='ak' and 'np', not {lib!r}")
    names = list(result.fields) if lib == "ak" else list(result)
    if how in (tuple, "tuple"):
        return tuple(result[n] for n in names)
    if how in (list, "list"):
        return [result[n] for n in names]
    if how in (dict, "dict"):
        return {n: result[n] for n in names}
    if how == "zip" and lib == "ak":
        return _zip_prefixes(result)
    raise InvalidArgumentError(f"how must be None, tuple, list, dict or 'zip' (library='ak'), not {how!r}")


def _zip_prefixes(array: ak.Array) -> ak.Array:
    groups: dict[str, list[str]] = {}
    for name in array.fields:
        prefix, sep, _ = name.partition("_")
        if prefix and sep and array[name].ndim > 1:
            groups.setdefault(prefix, []).append(name)
    grouped = {m for members in groups.values() for m in members}
    # as uproot's: the fields that are not zipped first, then the zipped groups
    columns: dict[str, Any] = {name: array[name] for name in array.fields if name not in grouped}
    for prefix, members in groups.items():
        try:
            columns[prefix] = ak.zip({m[len(prefix) + 1 :]: array[m] for m in members})
        except ValueError:  # different lengths: left as they are
            columns.update({m: array[m] for m in members})
    return ak.zip(columns, depth_limit=1)
