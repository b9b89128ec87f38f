"""The value checksum every reader of the benchmark reports (the same
definition as ``crates/rntuple-bench/src/checksum.rs`` and
``bench/cpp/rntuple_read.cxx``):

* a leaf column at path ``p``: sum of bits(v_k) * k mod 2**64 over its values
  in flattened order (k = 1, 2, ...), bits = the little-endian bit pattern
  zero-extended to 64 bits (bool: 0 / 1);
* a collection at path ``p``: sum of size_k * k mod 2**64 over its instances;
* paths: a top-level field's name, ``parent.member`` for record members,
  ``parent[]`` for the items of a collection.

Order-sensitive, so swapped values or shifted offsets change it, and
computable chunk by chunk in any implementation.
"""

from __future__ import annotations

import os

import numpy as np

_U64 = np.uint64
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(values: np.ndarray) -> np.ndarray:
    """Bit patterns of ``values`` zero-extended to uint64."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        return values.astype(_U64)
    return values.view(_UNSIGNED[values.dtype.itemsize]).astype(_U64)


class Sums:
    """Running checksums by path."""

    def __init__(self) -> None:
        self.sums: dict[str, tuple[int, int]] = {}

    def add(self, path: str, values: np.ndarray) -> None:
        """Adds the bit patterns (uint64) of the next values of ``path``."""
        total, count = self.sums.get(path, (0, 0))
        n = len(values)
        if n:
            k = np.arange(count + 1, count + n + 1, dtype=_U64)
            with np.errstate(over="ignore"):
                total = (total + int(np.multiply(values, k, dtype=_U64).sum(dtype=_U64))) % (1 << 64)
        self.sums[path] = (total, count + n)

    def as_dict(self) -> dict[str, str]:
        return {p: str(s) for p, (s, _) in sorted(self.sums.items())}


# ---------------------------------------------------------------------------
# expected values from the neutral input


def _array(directory: str, name: str, dtype, start: int, stop: int) -> np.ndarray:
    if stop <= start:  # (an empty file cannot be mapped)
        return np.zeros(0, dtype=np.dtype(dtype).newbyteorder("<"))
    mm = np.memmap(os.path.join(directory, name), dtype=np.dtype(dtype).newbyteorder("<"), mode="r")
    return np.asarray(mm[start:stop])


def _add_input(sums: Sums, directory: str, path: str, t: dict, start: int, stop: int, keep: dict | None = None) -> None:
    """Adds the checksums of input field ``t`` at ``path``; ``keep``: the record members to take (a
    tree of member names, see ``_selection``; None: all), passed through collections to their items."""
    from workloads import DTYPES

    if t["kind"] == "scalar":
        if keep is not None:
            raise ValueError(f"checksum: '{path}' is a number, it has no sub-fields {sorted(keep)}")
        values = _array(directory, t["file"], DTYPES[t["dtype"]], start, stop)
        if t["dtype"] == "b":
            values = values != 0
        sums.add(path, bits(values))
    elif t["kind"] == "vector":
        offsets = _array(directory, t["offsets"], np.int64, start, stop + 1)
        sums.add(path, np.diff(offsets).astype(_U64))
        _add_input(sums, directory, path + "[]", t["item"], int(offsets[0]), int(offsets[-1]), keep)
    else:
        members = {m["name"]: m for m in t["members"]}
        unknown = sorted(set(keep or ()) - set(members))
        if unknown:
            raise ValueError(f"checksum: record '{path}' has no member {unknown[0]!r}")
        for name, m in members.items():
            if keep is None or name in keep:
                _add_input(
                    sums, directory, f"{path}.{name}", m["type"], start, stop, None if keep is None else keep[name]
                )


def _selection(fields: list[str]) -> dict:
    """Dotted field paths (``"Muon.pt"``: member ``pt`` of the items of collection ``Muon``, as the
    readers' selections name them) as a tree ``{"Muon": {"pt": None}}``; None: the whole field."""
    tree: dict = {}
    for text in fields:
        node = tree
        parts = text.split(".")
        for i, part in enumerate(parts):
            if part in node and node[part] is None:
                break  # the whole field is already selected
            if i == len(parts) - 1:
                node[part] = None
            else:
                node = node.setdefault(part, {})
    return tree


def input_checksums(
    directory: str, manifest: dict, fields: list[str] | None = None, start: int = 0, stop: int | None = None
) -> dict[str, str]:
    """Checksums of the input's ``fields`` (all when None; top-level names or dotted paths of
    sub-fields, ``"Muon.pt"``) over entries ``[start, stop)``."""
    stop = manifest["entries"] if stop is None else min(stop, manifest["entries"])
    sums = Sums()
    wanted = None if fields is None else _selection(fields)
    unknown = sorted(set(wanted or ()) - {f["name"] for f in manifest["fields"]})
    if unknown:
        raise ValueError(f"checksum: the input has no field {unknown[0]!r}")
    for f in manifest["fields"]:
        if wanted is None or f["name"] in wanted:
            keep = None if wanted is None else wanted[f["name"]]
            _add_input(sums, directory, f["name"], f["type"], start, stop, keep)
    return sums.as_dict()


# ---------------------------------------------------------------------------
# checksums of what a Python reader returned


def _add_layout(sums: Sums, path: str, layout) -> None:
    import awkward as ak

    if isinstance(layout, ak.contents.RecordArray):
        for name in layout.fields:
            _add_layout(sums, f"{path}.{name}" if path else name, layout.content(name))
    elif isinstance(layout, ak.contents.ListOffsetArray):
        offsets = np.asarray(layout.offsets)
        sums.add(path, np.diff(offsets).astype(_U64))
        _add_layout(sums, path + "[]", layout.content[int(offsets[0]) : int(offsets[-1])])
    elif isinstance(layout, ak.contents.NumpyArray):
        sums.add(path, bits(np.asarray(layout.data)))
    else:
        raise TypeError(f"checksum: unexpected awkward layout {type(layout).__name__} at '{path}'")


def awkward_checksums(array) -> dict[str, str]:
    """Checksums of an awkward record array (a reader's result)."""
    import awkward as ak

    sums = Sums()
    _add_layout(sums, "", ak.to_packed(array).layout)
    return sums.as_dict()
