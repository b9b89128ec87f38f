"""Awkward arrays to numpy and pandas, shaped the way uproot's ``library="np"``/``"pd"`` shapes them.

Per top-level field: a rectangular field is one numpy array (numbers, fixed-size
arrays as extra dimensions, classes as structured dtypes, strings as ``<U``);
anything jagged is an object array with one numpy array (or scalar) per entry,
where each entry is itself made rectangular when it can be.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import awkward as ak
import numpy as np

from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["to_numpy_dict", "to_pandas"]


def _object_array(items: list[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _stack(items: list[Any]) -> np.ndarray:
    """Items as one array when they all have the same shape, else an object array of them."""
    shapes = {item.shape if isinstance(item, np.ndarray) else (1,) for item in items}
    if len(shapes) == 1:
        return np.array(items)
    return _object_array(items)


def _plain_lists(layout: ak.contents.Content) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets, numbers) when the layout is a list of plain numbers (not strings)."""
    if isinstance(layout, ak.contents.ListOffsetArray | ak.contents.ListArray | ak.contents.RegularArray):
        if layout.parameter("__array__") is None and isinstance(layout.content, ak.contents.NumpyArray):
            content = layout.content
            if content.data.ndim == 1 and content.parameter("__array__") is None:
                lists = layout.to_ListOffsetArray64(True)
                offsets = np.asarray(lists.offsets)
                return offsets, np.asarray(lists.content.data)
    return None


def _convert(data: Any) -> Any:
    """One value (an awkward array, a record or a scalar) to numpy."""
    if isinstance(data, str):
        return data
    if isinstance(data, ak.Array):
        layout = data.layout
        if isinstance(layout, ak.contents.RecordArray):
            try:
                return data.to_numpy()
            except (TypeError, ValueError):
                fields = data.fields
                parts = [_convert(data[f]) for f in fields]
                dtypes = [p.dtype if p.ndim == 1 else np.dtype(object) for p in parts]
                rows = [tuple(p[i] for p in parts) for i in range(len(data))]
                return np.array(rows, dtype=list(zip(fields, dtypes, strict=True)))
        if isinstance(layout, ak.contents.NumpyArray) and layout.parameter("__array__") is None:
            return layout.to_backend_array(allow_missing=False)
        lists = _plain_lists(layout)
        if lists is not None and len(layout) > 0:
            offsets, numbers = lists
            return _stack(np.split(numbers[offsets[0] : offsets[-1]], offsets[1:-1] - offsets[0]))
    if not isinstance(data, Iterable) or len(data) == 0:  # type: ignore[arg-type]
        return np.asarray(data)
    return _stack([_convert(item) for item in data])


def _field_to_numpy(array: ak.Array) -> np.ndarray:
    try:
        return array.to_numpy()
    except (TypeError, ValueError):
        return _convert(array)


def to_numpy_dict(array: ak.Array) -> dict[str, np.ndarray]:
    """One numpy array per top-level field of a record array."""
    out = {}
    for name in array.fields:
        try:
            out[name] = _field_to_numpy(array[name])
        except Exception as err:
            raise InvalidArgumentError(f"field '{name}' cannot be converted to NumPy") from err
    return out


def to_pandas(array: ak.Array, entry_start: int) -> pd.DataFrame:
    """A DataFrame with one column per top-level field, indexed by entry number.

    Fixed-size arrays (2-d and more) become object columns of per-entry arrays.
    """
    import pandas as pd

    columns = {}
    for name, values in to_numpy_dict(array).items():
        if values.ndim > 1:
            values = _object_array(list(values))
        columns[name] = values
    index = pd.RangeIndex(entry_start, entry_start + len(array))
    return pd.DataFrame(columns, index=index)
