"""Datasets: which files (and which RNTuple in each) a files argument names.

The forms are uproot's: a path or URL, a list of them, a glob
(``"data/*.root"``), any of them ending in ``:NAME`` (``"f.root:Events"``,
``"root://host//f.root:dir/Events"``), or a dict ``{path_or_url: "Events"}``.
Globs expand in sorted order; a URL is taken as it is (no globbing over the
network).
"""

from __future__ import annotations

import glob
import math
import os
import re
import stat
from collections.abc import Iterable, Mapping
from typing import Any

from ._errors import DirectoryError, InvalidArgumentError, MissingFileError, WrongTypeError
from ._filters import parse_memory_size

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(text: str) -> bool:
    """True for ``scheme://...`` (``file://`` included)."""
    return _URL.match(text) is not None


def object_spec(spec: str | os.PathLike[str]) -> tuple[str, str | None]:
    """``"file.root:dir/Events"`` -> ``("file.root", "dir/Events")``.

    A local path that exists is taken whole. In a URL only a colon after the
    host part counts (``http://host:8080/f.root`` has no object name).
    """
    text = os.fspath(spec)
    m = _URL.match(text)
    if m is None and (":" not in text or os.path.exists(text)):  # no stat for a plain path
        return text, None
    start = 0
    if m is not None:
        slash = text.find("/", m.end())
        if slash < 0:
            return text, None
        start = slash
    colon = text.rfind(":", start)
    if colon < 0:
        return text, None
    path, name = text[:colon], text[colon + 1 :]
    if not path or not name:
        return text, None
    return path, name


def expand(files: Any, allow_missing: bool = False) -> list[tuple[str, str | None]]:
    """The (path or URL, RNTuple name or None) pairs that ``files`` names, in order.

    Raises ``FileNotFoundError`` for a local path that does not exist or a
    glob that matches nothing (with ``allow_missing``: leaves them out, and
    raises when nothing is left), ``IsADirectoryError`` for a directory and
    ``ValueError`` when nothing is named.
    """
    pairs: list[tuple[str, str | None]] = []
    if isinstance(files, Mapping):
        for spec, name in files.items():
            path, inline = object_spec(spec)
            pairs.append((path, name if name is not None else inline))
    elif isinstance(files, (str, os.PathLike)):
        pairs.append(object_spec(files))
    elif isinstance(files, Iterable):
        for spec in files:
            if isinstance(spec, tuple) and len(spec) == 2:
                pairs.append((os.fspath(spec[0]), spec[1]))
            else:
                pairs.append(object_spec(spec))
    else:
        raise WrongTypeError(f"files must be a path, URL, glob, list or dict, not {type(files).__name__}")
    out: list[tuple[str, str | None]] = []
    for path, name in pairs:
        if is_url(path):
            out.append((path, name))
        elif any(c in path for c in "*?["):
            matches = sorted(p for p in glob.glob(path) if os.path.isfile(p))
            if not matches and not allow_missing:
                raise MissingFileError(2, "no file matches the pattern", path)
            out += [(p, name) for p in matches]
        else:
            try:  # one stat per file (exists, then isdir, was two: 1,000 files are 1,000 stats)
                is_dir = stat.S_ISDIR(os.stat(path).st_mode)
            except (OSError, ValueError):
                if allow_missing:
                    continue
                raise MissingFileError(2, "no such file", path) from None
            if is_dir:
                raise DirectoryError(21, "an input is a directory, not a file", path)
            out.append((path, name))
    if not out:
        if pairs and allow_missing:
            raise MissingFileError(2, "none of the input files exists", ", ".join(p for p, _ in pairs))
        raise InvalidArgumentError("no input files")
    return out


# ---------------------------------------------------------------------------
# Cluster-aligned steps, shared by iterate/concatenate, chains, joins (``_chain``) and Dask;
# what to read in each (expressions, cut, aliases) is ``RNTuple._plan`` (``_computed``).


def plan_steps(
    clusters: list[tuple[int, int, float]], start: int, stop: int, step_size: int | str, split: bool = True
) -> list[tuple[int, int]]:
    """Entry ranges of ``[start, stop)`` to read one after the other, aligned with clusters.

    ``clusters`` are ``(first_entry, num_entries, bytes)`` (``RNTuple.cluster_sizes``);
    ``step_size`` is a number of entries or a memory size (``"100 MB"``). The rule: a step
    is a run of whole clusters (cut at ``start``/``stop``) whose entries (or estimated bytes)
    stay within ``step_size``, at least one cluster; a cluster larger than ``step_size`` on
    its own is split into the fewest pieces that fit, of sizes differing by one entry at most
    (a 10-entry cluster by 3 entries: 3, 3, 2, 2; so no step reads a cluster's
    pages twice except such a cluster, and then each piece reads only its own pages), for
    bounded memory; with ``split=False`` it is a step of its own, whole (so no cluster is
    read by two steps: Dask's partitions).
    """
    if isinstance(step_size, bool):
        raise WrongTypeError(f"step_size must be a number of entries or a size like '100 MB', not {step_size!r}")
    by_entries = isinstance(step_size, int)
    limit = parse_memory_size(step_size)  # an int is itself (a number of entries)
    if limit <= 0:
        raise InvalidArgumentError(f"step_size must be positive, not {step_size!r}")
    steps: list[tuple[int, int]] = []
    lo = hi = -1
    used = 0.0
    for first, n, nbytes in clusters:
        a, b = max(first, start), min(first + n, stop)
        if a >= b:
            continue
        cost = float(b - a) if by_entries else nbytes * (b - a) / n
        if lo >= 0 and used + cost > limit:
            steps.append((lo, hi))
            lo, used = -1, 0.0
        if cost > limit and not split:
            steps.append((a, b))
            continue
        if cost > limit:
            # as equal as can be: sizes differ by one entry at most (10 by 3 is 3, 3, 2, 2)
            pieces = min(b - a, math.ceil(cost / limit))
            size, longer = divmod(b - a, pieces)
            for k in range(pieces):
                n_k = size + (k < longer)
                steps.append((a, a + n_k))
                a += n_k
            continue
        if lo < 0:
            lo = a
        hi = b
        used += cost
    if lo >= 0:
        steps.append((lo, hi))
    return steps


def cluster_table(ntuple: Any, plan: Any, step_size: int | str) -> list[tuple[int, int, float]]:
    """``(first_entry, num_entries, bytes)`` per cluster of ``ntuple`` for ``plan_steps``: bytes of
    the fields ``plan`` (``RNTuple._plan``) reads (``RNTuple.cluster_sizes``, from the page lists
    already loaded) when ``step_size`` is a memory size."""
    if isinstance(step_size, int):
        return [(c.first_entry, c.num_entries, 0.0) for c in ntuple.clusters]
    return ntuple.cluster_sizes([f.name for f in plan.inputs[0]])
