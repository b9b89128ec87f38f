"""The rows of each layout of the matrix, built from the generated products.

A layout is a *cell*: ``model`` (``aos``: a collection of records; ``soa``:
one collection per member; ``rsoa``: ROOT's own SOA representation, an
``RSoAField`` (field flag 0x08) per product, which on disk is the AOS
collection of records under an SoA class name, see :func:`soa_options`),
``rows`` (``event``, ``spill``, ``top``: one row per hit and per wire,
``element``: one row per hit and per ROI), ``split`` (``one`` RNTuple
for all products, one per ``product``, one per ``group``: header + hits,
wires), ``rois`` (``nested``: a collection of ROI records
each with its vector of floats; ``flat``: per wire the ROI offsets and
sizes and one vector of all its samples) and ``threads``. :func:`skip_reason`
says why a combination makes no sense; :func:`tables` gives the RNTuples
of a cell as awkward arrays, :func:`reads` the fields the study reads back
from each (hit peak amplitude, wire channel, ROI data).
"""

from __future__ import annotations

from typing import Any

import awkward as ak
import numpy as np

from .._errors import InvalidArgumentError
from ._data import Products

__all__ = ["AXES", "names", "reads", "skip_reason", "soa_options", "tables"]

AXES: dict[str, tuple[str, ...]] = {
    "model": ("aos", "soa", "rsoa"),
    "rows": ("event", "spill", "top", "element"),
    "split": ("one", "product", "group"),
    "rois": ("nested", "flat"),
}


def skip_reason(cell: dict[str, Any]) -> str | None:
    """Why ``cell`` is not a layout of its own (None: it is one)."""
    for axis, values in AXES.items():
        if cell[axis] not in values:
            raise InvalidArgumentError(f"{axis} must be one of {', '.join(values)}, not {cell[axis]!r}")
    per_object = cell["rows"] in ("top", "element")
    if per_object and cell["split"] != "product":
        return "hits, wires and headers have different row counts: they cannot share an RNTuple"
    if per_object and cell["model"] in ("soa", "rsoa"):
        return "one object per row: AOS and SOA are the same columns"
    if cell["rows"] == "element" and cell["rois"] == "flat":
        return "one ROI per row: nested and flat ROIs are the same columns"
    return None


def _unflatten(values: Any, counts: np.ndarray) -> ak.Array:
    return ak.unflatten(values, counts)


def _row_counts(per_event: np.ndarray, p: Products, rows: str) -> np.ndarray:
    if rows == "event":
        return per_event
    return np.bincount(p.spill_of_event, weights=per_event, minlength=p.spills).astype(np.int64)


def _event_of(per_event: np.ndarray, p: Products) -> np.ndarray:
    return np.repeat(p.event_id, per_event)


def _roi_columns(p: Products, rois: str) -> dict[str, ak.Array]:
    """The ROI members of one wire (a row per wire)."""
    if rois == "nested":
        data = _unflatten(p.samples, p.samples_per_roi)
        return {"rois": _unflatten(ak.zip({"offset": p.roi_offset, "data": data}, depth_limit=1), p.rois_per_wire)}
    samples_per_wire = _sum_by(p.samples_per_roi, p.rois_per_wire)
    return {
        "roi_offset": _unflatten(p.roi_offset, p.rois_per_wire),
        "roi_size": _unflatten(p.samples_per_roi.astype(np.uint32), p.rois_per_wire),
        "adc": _unflatten(p.samples, samples_per_wire),
    }


def _sum_by(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of consecutive runs of ``values`` of lengths ``counts`` (empty runs give 0)."""
    ends = np.cumsum(values)
    idx = np.cumsum(counts)
    total = np.concatenate([[0], ends])[idx]
    return np.diff(np.concatenate([[0], total])).astype(np.int64)


def _hit_members(p: Products, rows: str) -> dict[str, Any]:
    members: dict[str, Any] = dict(p.hits)
    if rows != "event":
        members = {"event": _event_of(p.hits_per_event, p), **members}
    return members


def _wire_members(p: Products, rows: str, rois: str) -> dict[str, Any]:
    members: dict[str, Any] = {"channel": p.wire_channel, "view": p.wire_view}
    if rows != "event":
        members = {"event": _event_of(p.wires_per_event, p), **members}
    return {**members, **_roi_columns(p, rois)}


def _header(p: Products, rows: str) -> dict[str, Any]:
    ids = p.event_id
    if rows == "spill":
        counts = np.bincount(p.spill_of_event, minlength=p.spills).astype(np.int64)
        return {
            "run": np.ones(p.spills, np.uint32),
            "spill": np.arange(p.spills, dtype=np.uint32),
            "event": _unflatten(ids, counts),
        }
    return {"run": np.ones(p.events, np.uint32), "spill": p.spill_of_event, "event": ids}


def _collection(name: str, members: dict[str, Any], counts: np.ndarray, model: str) -> dict[str, ak.Array]:
    """``members`` (one value per object) as the collection ``name`` of each row."""
    if model in ("aos", "rsoa"):
        return {name: _unflatten(ak.zip(members, depth_limit=1), counts)}
    return {f"{name}_{key}": _unflatten(value, counts) for key, value in members.items()}


def _element_wires(p: Products) -> dict[str, Any]:
    wire_of_roi = np.repeat(np.arange(len(p.wire_channel)), p.rois_per_wire)
    event_of_wire = _event_of(p.wires_per_event, p)
    return {
        "event": event_of_wire[wire_of_roi],
        "channel": p.wire_channel[wire_of_roi],
        "view": p.wire_view[wire_of_roi],
        "offset": p.roi_offset,
        "data": _unflatten(p.samples, p.samples_per_roi),
    }


def tables(p: Products, cell: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The RNTuples of ``cell``: name -> {top-level field: array}, all with one length per RNTuple."""
    rows, model, split = cell["rows"], cell["model"], cell["split"]
    if rows in ("top", "element"):
        wires = _element_wires(p) if rows == "element" else _wire_members(p, rows, cell["rois"])
        return {"Header": _header(p, "event"), "Hits": _hit_members(p, rows), "Wires": wires}
    header = _header(p, rows)
    hits = _collection("hits", _hit_members(p, rows), _row_counts(p.hits_per_event, p, rows), model)
    wires = _collection("wires", _wire_members(p, rows, cell["rois"]), _row_counts(p.wires_per_event, p, rows), model)
    if split == "one":
        return {"Events": {**header, **hits, **wires}}
    if split == "group":
        return {"Reco": {**header, **hits}, "Raw": wires}
    return {"Header": header, "Hits": hits, "Wires": wires}


def names(cell: dict[str, Any]) -> list[str]:
    """The RNTuples a file of ``cell`` holds, in the order they are written."""
    if cell["rows"] in ("top", "element") or cell["split"] == "product":
        return ["Header", "Hits", "Wires"]
    return ["Events"] if cell["split"] == "one" else ["Reco", "Raw"]


def reads(cell: dict[str, Any]) -> dict[str, list[str]]:
    """The fields the study reads back, per RNTuple of ``cell``: hit peak amplitude, wire channel,
    ROI data (field paths as ``RNTuple.arrays(filter_name=...)`` takes them)."""
    rows, model, split, rois = cell["rows"], cell["model"], cell["split"], cell["rois"]
    if rows == "element":
        return {"Hits": ["peak_amplitude"], "Wires": ["channel", "data"]}
    roi = "rois" if rois == "nested" else "adc"
    if rows == "top":
        return {"Hits": ["peak_amplitude"], "Wires": ["channel", roi]}
    if model in ("aos", "rsoa"):
        hit, wire = ["hits.peak_amplitude"], ["wires.channel", f"wires.{roi}"]
    else:
        hit, wire = ["hits_peak_amplitude"], ["wires_channel", f"wires_{roi}"]
    if split == "one":
        return {"Events": hit + wire}
    if split == "group":
        return {"Reco": hit, "Raw": wire}
    return {"Hits": hit, "Wires": wire}


# The classes of the ``rsoa`` model: the SoA class of each product and its record (as a
# rootcling dictionary with ``rntupleSoARecord`` would name them).
_SOA_CLASSES = {"hits": ("recob::HitSoA", "recob::Hit"), "wires": ("recob::WireSoA", "recob::Wire")}


def soa_options(cell: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    """The ``mkrntuple`` options (``soa``, ``types``) that write the products among ``fields`` (the
    top-level fields of one RNTuple of ``cell``) as ROOT's SoA fields in the ``rsoa`` model; nothing
    for the other models."""
    if cell["model"] != "rsoa":
        return {}
    soa = [name for name in fields if name in _SOA_CLASSES]
    types: dict[str, str] = {}
    for name in soa:
        types[name], types[f"{name}._0"] = _SOA_CLASSES[name]
    if "wires" in soa and cell["rois"] == "nested":
        types["wires._0.rois._0"] = "recob::ROI"  # a record below a class needs a class name
    return {"soa": soa, "types": types}
