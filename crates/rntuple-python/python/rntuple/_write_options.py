"""Writer options and field overrides from Python: ``compression=``, the size, bool and integer options,
``types=``, ``representations=``, ``soa=`` and ``projections=`` turned into what the Rust writer takes
(``rntuple._lib.FileWriter.rntuple``; the compression setting is parsed by Rust's one parser).
Used by every writer (``_write``, ``_parallel``, ``_attributes``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from . import _lib
from ._errors import WrongTypeError
from ._filters import parse_memory_size

WriteError = _lib.WriteError

# A C++ type name, or {"type": name, "type_version": v, "type_checksum": c} (any of the keys).
TypeSpec = str | Mapping[str, Any]

_SIZE_OPTIONS = (
    "approx_zipped_cluster_size",
    "max_unzipped_cluster_size",
    "initial_unzipped_page_size",
    "max_unzipped_page_size",
    "page_buffer_budget",
    "page_buffer_memory",
    "memory_budget",
)
_BOOL_OPTIONS = ("page_checksums", "same_page_merging", "group_pages_by_column", "index32")
_INT_OPTIONS = ("cluster_group_size", "compression_threads")
_OPTIONS = (*_SIZE_OPTIONS, *_BOOL_OPTIONS, *_INT_OPTIONS, "description", "compression", "compression_level")

# representations={...}: name -> (override key, value) or a real encoding with its arguments
_REAL_ENCODINGS = {"real16": "Real16", "real32": "Real32", "real32trunc": "Real32Trunc", "real32quant": "Real32Quant"}
_REAL_ARITY = {"Real16": 0, "Real32": 0, "Real32Trunc": 1, "Real32Quant": 3, "Double32_t": 0}


def compression_setting(compression: int | str | None | Any, level: int | None = None) -> int:
    """ROOT's compression setting (``algorithm * 100 + level``) of ``compression``.

    ``compression`` is a setting (``505``), an algorithm name with an optional
    level (``"zstd"``, ``"zstd:9"``, ``"zlib"``, ``"lzma:7"``, ``"lz4"``,
    ``"none"``/``None``) or an uproot compression object (``uproot.ZSTD(5)``);
    ``level`` replaces its level (names without a level get ROOT's default:
    zstd 5, zlib 1, lzma 7, lz4 4). The parser is the Rust crate's
    (``rntuple::write::Compression``), shared with ``rntuple merge`` and the CLI.
    """
    return _lib.compression_setting(compression, level)


def _options(
    options: Mapping[str, Any], defaults: Mapping[str, Any] | None = None, compression: int = 505
) -> dict[str, Any]:
    """Checks keyword options and converts them to what ``_lib`` takes; ``compression``: the base
    setting that ``compression_level`` alone modifies."""
    merged = {**(defaults or {}), **options}
    out: dict[str, Any] = {}
    for key, value in merged.items():
        if key not in _OPTIONS:
            raise WrongTypeError(f"unknown write option {key!r}; the options are: {', '.join(_OPTIONS)}")
        if key in ("compression", "compression_level"):
            continue
        if key in _SIZE_OPTIONS:
            try:
                out[key] = parse_memory_size(value)
            except (TypeError, ValueError) as err:
                raise WriteError(f"{key}: {err}") from None
            if out[key] < 0:
                raise WriteError(f"{key} must not be negative, not {value!r}")
        elif key in _BOOL_OPTIONS:
            if not isinstance(value, bool | np.bool_):
                raise WrongTypeError(f"{key} must be True or False, not {value!r}")
            out[key] = bool(value)
        elif key in _INT_OPTIONS:
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise WriteError(f"{key} must be a non-negative integer, not {value!r}")
            out[key] = int(value)
        else:  # description
            if not isinstance(value, str):
                raise WrongTypeError(f"description must be a string, not {value!r}")
            out[key] = value
    if "compression" in merged or "compression_level" in merged:
        out["compression"] = compression_setting(
            merged.get("compression", compression), merged.get("compression_level")
        )
    return out


_TYPE_KEYS = ("type", "type_version", "type_checksum")


def _overrides(
    types: Mapping[str, TypeSpec] | None,
    representations: Mapping[str, Any] | None,
    soa: Iterable[str] | None = None,
) -> dict[str, dict]:
    """``types``, ``representations`` and ``soa`` (paths of struct-of-arrays fields) as the per-field
    overrides ``_lib`` takes."""
    out: dict[str, dict] = {}
    if isinstance(soa, str | bytes) or (soa is not None and not isinstance(soa, Iterable)):
        raise WrongTypeError(f"soa is a list of field paths, not {soa!r}")
    for path in soa or ():
        if not isinstance(path, str):
            raise WrongTypeError(f"soa is a list of field paths (strings), not {path!r}")
        out.setdefault(path, {})["soa"] = True
    for path, spec in (types or {}).items():
        if isinstance(path, str) and isinstance(spec, str):
            out.setdefault(path, {})["type"] = spec
        elif isinstance(path, str) and isinstance(spec, Mapping) and set(spec) <= set(_TYPE_KEYS):
            out.setdefault(path, {}).update({k: spec[k] for k in _TYPE_KEYS if k in spec})
        else:
            raise WrongTypeError(
                "types maps field paths to C++ type names (strings) or to dicts of 'type', 'type_version' "
                f"and 'type_checksum', not {path!r}: {spec!r}"
            )
    for path, reps in (representations or {}).items():
        if not isinstance(path, str):
            raise WrongTypeError(f"representations maps field paths (strings) to representations, not {path!r}")
        spec = out.setdefault(path, {})
        items = [reps] if isinstance(reps, str | tuple) else list(reps)
        for rep in items:
            _add_representation(path, rep, spec)
    return out


def _add_representation(path: str, rep: Any, spec: dict) -> None:
    args: tuple[Any, ...]
    if isinstance(rep, str):
        name, args = rep, ()
    elif isinstance(rep, tuple) and rep and isinstance(rep[0], str):
        name, args = rep[0], rep[1:]
    else:
        raise WrongTypeError(
            f"field {path!r}: a representation is a name ('Real16', 'Index32', 'split', ...) or a tuple "
            f"('Real32Trunc', bits) / ('Real32Quant', bits, min, max), not {rep!r}"
        )
    key = name.strip().lower().replace("_", "")
    if key in ("split", "unsplit"):
        simple = ("split", key == "split")
    elif key in ("index32", "index64"):
        simple = ("index32", key == "index32")
    else:
        simple = None
    if simple is not None:
        if args:
            raise WriteError(f"field {path!r}: representation {name!r} takes no arguments")
        spec[simple[0]] = simple[1]
        return
    kind = "Double32_t" if key in ("double32t", "double32") else _REAL_ENCODINGS.get(key)
    if kind is None:
        raise WriteError(
            f"field {path!r}: unknown representation {name!r}; use 'Real16', 'Real32', ('Real32Trunc', bits), "
            "('Real32Quant', bits, min, max), 'Double32_t', 'Index32', 'Index64', 'split' or 'unsplit'"
        )
    if len(args) != _REAL_ARITY[kind]:
        shape = {"Real32Trunc": "('Real32Trunc', bits)", "Real32Quant": "('Real32Quant', bits, min, max)"}
        raise WriteError(f"field {path!r}: {kind} is written {shape.get(kind, repr(kind))}, not {rep!r}")
    bits, lo, hi = 0, 0.0, 0.0
    if kind == "Real32Trunc":
        bits = _bits(path, args[0])
    elif kind == "Real32Quant":
        bits = _bits(path, args[0])
        try:
            lo, hi = float(args[1]), float(args[2])
        except (TypeError, ValueError):
            raise WriteError(f"field {path!r}: the Real32Quant range must be two numbers, not {args[1:]!r}") from None
    if "real" in spec:
        raise WriteError(f"field {path!r} has two floating-point representations")
    spec["real"] = (kind, bits, lo, hi)


def _projections(projections: Mapping[str, Any] | None) -> list[tuple[str, str, str | None]]:
    """``projections`` as the (name, source path, C++ type or None) list ``_lib`` takes."""
    if projections is None:
        return []
    if not isinstance(projections, Mapping):
        raise WrongTypeError(
            f"projections maps new field names to source paths or (type, path) tuples, not {projections!r}"
        )
    out: list[tuple[str, str, str | None]] = []
    for name, spec in projections.items():
        if not isinstance(name, str):
            raise WrongTypeError(f"projections: field names are strings, not {name!r}")
        if isinstance(spec, str):
            out.append((name, spec, None))
        elif isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, str) for x in spec):
            out.append((name, spec[1], spec[0]))
        else:
            raise WrongTypeError(
                f"projection {name!r}: give a source path ('_collection0._0.Muon_pt') or a (C++ type, source path) "
                f"tuple like ('ROOT::RNTupleCardinality<std::uint32_t>', '_collection0'), not {spec!r}"
            )
    return out


def _bits(path: str, bits: Any) -> int:
    if isinstance(bits, bool) or not isinstance(bits, int | np.integer) or not 0 < bits < 65536:
        raise WriteError(f"field {path!r}: bits must be a positive integer, not {bits!r}")
    return int(bits)
