"""Datasets: which files (and which RNTuple in each) a files argument names.

The forms are uproot's: a path or URL, a list of them, a glob
(``"data/*.root"``), any of them ending in ``:NAME`` (``"f.root:Events"``,
``"root://host//f.root:dir/Events"``), or a dict ``{path_or_url: "Events"}``.
Globs expand in sorted order; a URL is taken as it is (no globbing over the
network).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

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
    if m is None and (os.path.exists(text) or ":" not in text):
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


def expand(files: Any) -> list[tuple[str, str | None]]:
    """The (path or URL, RNTuple name or None) pairs that ``files`` names, in order.

    Raises ``FileNotFoundError`` for a local path that does not exist or a
    glob that matches nothing, ``IsADirectoryError`` for a directory and
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
        raise TypeError(f"files must be a path, URL, glob, list or dict, not {type(files).__name__}")
    out: list[tuple[str, str | None]] = []
    for path, name in pairs:
        if is_url(path):
            out.append((path, name))
        elif any(c in path for c in "*?["):
            matches = sorted(p for p in glob.glob(path) if os.path.isfile(p))
            if not matches:
                raise FileNotFoundError(2, "no file matches the pattern", path)
            out += [(p, name) for p in matches]
        else:
            if not os.path.exists(path):
                raise FileNotFoundError(2, "no such file", path)
            if os.path.isdir(path):
                raise IsADirectoryError(21, "an input is a directory, not a file", path)
            out.append((path, name))
    if not out:
        raise ValueError("no input files")
    return out
