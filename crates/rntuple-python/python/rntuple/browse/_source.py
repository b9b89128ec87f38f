"""What the browse page shows, read from one file (a path or a URL).

Everything comes from the package's own API: the container's regions and,
per RNTuple, the report of ``rntuple inspect --json`` and the page records of
a cluster (``_lib.layout_regions`` and ``_lib.Inspected``); values through
``rntuple.open(...)[name].arrays``; histograms with numpy. A file that cannot
be read whole gives what could be read and the error where it stopped
(``summary()["error"]`` or an RNTuple's ``error``).
"""

from __future__ import annotations

import math
import threading
from typing import Any

from .. import _lib
from .._errors import InvalidArgumentError, NotFoundError

__all__ = ["Source"]

#: Page records sent with the summary when an RNTuple has at most this many
#: pages; above, the page asks for them cluster by cluster.
EAGER_PAGES = 20_000
#: The page asks for the page records of the clusters in the byte map's view
#: when they are at most this many.
CLUSTERS_IN_VIEW = 16
#: Most entries one values request returns.
MAX_VALUES = 1000
#: Most histogram bins.
MAX_BINS = 1000
#: Histograms kept (per RNTuple, field and bin count); the oldest goes first.
CACHED_HISTOGRAMS = 64
#: The memory budget of each read (``rntuple.open(max_memory=)``) unless given
#: (``rntuple browse --max-memory``): a server shared by whoever can reach it
#: must not be ended by one request for a column larger than the machine, so a
#: read over it is refused (an error on the page) before it allocates. 1 GiB
#: holds a histogram's column of 134 M doubles; the conversion to numpy may
#: copy it once more.
DEFAULT_MAX_MEMORY = "1 GiB"


def _error_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}" if not str(err) else str(err)


class Source:
    """One file: loaded once, asked many times (thread-safe)."""

    def __init__(
        self,
        path: str,
        first: str | None = None,
        verify_checksums: bool = True,
        max_memory: int | str | None = DEFAULT_MAX_MEMORY,
    ) -> None:
        from .._read_args import memory_budget

        self.path = path
        #: The budget of each read in bytes (None: none).
        self.max_memory = memory_budget(max_memory)
        #: The path or URL as shown (on the page, in its title): without credentials.
        self.shown = _lib.redact_url(path)
        self.first = first
        self.verify_checksums = verify_checksums
        self._lock = threading.Lock()
        self._inspected: dict[str, Any] = {}
        self._ntuples: dict[str, Any] = {}
        self._file: Any = None
        self._summary: dict[str, Any] | None = None
        self._histograms: dict[tuple[str, str, int], dict[str, Any]] = {}
        # One histogram (a read of a whole column) computed at a time.
        self._histogram_lock = threading.Lock()

    # -- structure ----------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """File size, regions, and per RNTuple its inspect report (or error),
        its cluster extents and, when small, its page records."""
        with self._lock:
            if self._summary is None:
                self._summary = self._load_summary()
            return self._summary

    def _load_summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.shown,
            "file_size": None,
            "regions": [],
            "error": None,
            "walk_stopped": None,
            "rntuples": [],
            "clusters_in_view": CLUSTERS_IN_VIEW,
        }
        try:
            layout = _lib.layout_regions(self.path, self.verify_checksums)
        except Exception as err:  # noqa: BLE001 - shown on the page
            out["error"] = _error_text(err)
            return out
        out["file_size"] = layout["file_size"]
        out["regions"] = layout["regions"]
        out["error"] = layout["error"]
        out["walk_stopped"] = layout.get("walk_stopped")
        names = [r["name"] for r in layout["regions"] if r["class"] == "ROOT::RNTuple"]
        try:  # key-list order, as inspect lists them (the regions are in file order)
            names = _lib.File(self.path, self.verify_checksums).rntuple_names()
        except Exception:  # noqa: BLE001, S110 - the regions' order then
            pass
        if self.first is not None and self.first not in names:
            names.insert(0, self.first)
        elif self.first is not None:
            names.insert(0, names.pop(names.index(self.first)))
        for name in dict.fromkeys(names):
            out["rntuples"].append(self._load_rntuple(name))
        return out

    def _load_rntuple(self, name: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": name, "report": None, "error": None, "extents": [], "pages": None}
        try:
            inspected = _lib.Inspected(self.path, name, self.verify_checksums)
            report = inspected.report()
        except Exception as err:  # noqa: BLE001 - shown on the page
            entry["error"] = _error_text(err)
            return entry
        self._inspected[name] = inspected
        entry["report"] = report
        extents: list[list[int]] = []
        pages = inspected.pages(None) if report["num_pages"] <= EAGER_PAGES else None
        for cluster in report["clusters"]:
            records = pages if pages is not None else inspected.pages(cluster["id"])
            lo, hi = math.inf, -math.inf
            for p in records:
                if p[0] == cluster["id"]:
                    lo = min(lo, p[2])
                    hi = max(hi, p[2] + p[3] + 8 * p[4])
            extents.append([int(lo), int(hi)] if records and lo <= hi else [0, 0])
        entry["extents"] = extents
        entry["pages"] = pages
        return entry

    def rntuple_names(self) -> list[str]:
        return [r["name"] for r in self.summary()["rntuples"]]

    def pages(self, name: str, cluster: int) -> list[list[int]]:
        """Page records ``[cluster, column, offset, size, checksum, elements]`` of one cluster."""
        self.summary()
        inspected = self._inspected.get(name)
        if inspected is None:
            raise NotFoundError(f"no readable RNTuple {name!r}")
        return inspected.pages(cluster)

    # -- values -------------------------------------------------------------

    def fields(self, name: str) -> list[str]:
        """The top-level fields (projections included) whose values can be shown."""
        for r in self.summary()["rntuples"]:
            if r["name"] == name and r["report"] is not None:
                out = [f["name"] for f in r["report"]["fields"]]
                out.extend(p["name"] for f in r["report"]["fields"] for p in f["projections"])
                return list(dict.fromkeys(out))
        raise NotFoundError(f"no readable RNTuple {name!r}")

    def _ntuple(self, name: str) -> Any:
        with self._lock:
            if name not in self._ntuples:
                from .._file import File

                if self._file is None:
                    self._file = File(self.path, verify_checksums=self.verify_checksums, max_memory=self.max_memory)
                self._ntuples[name] = self._file[name]
            return self._ntuples[name]

    def _read(self, name: str, field: str, start: int | None, stop: int | None) -> Any:
        if field not in self.fields(name):
            raise NotFoundError(f"no field {field!r} in {name!r}")
        nt = self._ntuple(name)
        arrays = nt.arrays(filter_field=lambda f: f.path == field, entry_start=start, entry_stop=stop)
        return arrays[field]

    def values(self, name: str, field: str, start: int, count: int) -> dict[str, Any]:
        """Entries ``start`` to ``start + count`` of a top-level field, as JSON values."""
        num = self._ntuple(name).num_entries
        start = max(0, min(start, num))
        stop = min(num, start + max(0, min(count, MAX_VALUES)))
        column = self._read(name, field, start, stop)
        return {
            "rntuple": name,
            "field": field,
            "start": start,
            "stop": stop,
            "num_entries": num,
            "values": [_jsonable(v) for v in column.to_list()],
        }

    def histogram(self, name: str, field: str, bins: int) -> dict[str, Any]:
        """A histogram of every value of a numeric field (collections flattened):
        computed once per field and bin count, one at a time, then cached."""
        bins = max(1, min(bins, MAX_BINS))
        key = (name, field, bins)
        with self._histogram_lock:
            cached = self._histograms.get(key)
            if cached is None:
                cached = self._histogram(name, field, bins)
                if len(self._histograms) >= CACHED_HISTOGRAMS:
                    self._histograms.pop(next(iter(self._histograms)))
                self._histograms[key] = cached
            return cached

    def _histogram(self, name: str, field: str, bins: int) -> dict[str, Any]:
        import awkward as ak
        import numpy as np

        column = self._read(name, field, None, None)
        try:
            flat = ak.flatten(column, axis=None) if column.ndim > 1 else column
            data = np.asarray(ak.to_numpy(flat), dtype=np.float64)
        except Exception as err:  # noqa: BLE001 - awkward raises several kinds
            raise InvalidArgumentError(f"{field!r} holds no plain numbers to histogram ({err})") from None
        finite = data[np.isfinite(data)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        counts, edges = np.histogram(finite, bins=bins, range=(lo, hi))
        return {
            "rntuple": name,
            "field": field,
            "edges": edges.tolist(),
            "counts": counts.tolist(),
            "entries": int(data.size),
            "non_finite": int(data.size - finite.size),
            "mean": float(finite.mean()) if finite.size else None,
            "std": float(finite.std()) if finite.size else None,
        }

    def close(self) -> None:
        with self._lock:
            self._ntuples.clear()
            if self._file is not None and hasattr(self._file, "close"):
                self._file.close()
            self._file = None


def _jsonable(v: Any) -> Any:
    """Floats JSON cannot hold (nan, inf) as strings; containers recursively."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    return v
