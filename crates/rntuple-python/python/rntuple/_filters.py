"""Name filters and size strings, with the semantics uproot users know.

A filter is ``None`` (everything), a callable ``str -> bool``, a string or an
iterable of those. A string between slashes (``"/^Muon_.*/i"``) is a regular
expression matched at the start of the name, a string with ``*``, ``?`` or
``[`` is a shell glob, and any other string must equal the name.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable

from ._errors import InvalidArgumentError, WrongTypeError

__all__ = ["Filter", "make_filter", "parse_memory_size", "parse_step_size"]

Filter = None | str | Callable[[str], bool] | Iterable["str | Callable[[str], bool]"]

_REGEX = re.compile(r"^/(.*)/([iLmsux]*)$", re.DOTALL)
_FLAGS = {
    "i": re.IGNORECASE,
    "L": re.LOCALE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "u": re.UNICODE,
    "x": re.VERBOSE,
}


def _everything(name: str) -> bool:
    return True


def make_filter(spec: Filter) -> Callable[[str], bool]:
    """Turns a filter specification into a predicate on names."""
    if spec is None:
        return _everything
    if callable(spec):
        return spec
    if isinstance(spec, str):
        m = _REGEX.match(spec)
        if m is not None:
            flags = 0
            for letter in m.group(2):
                flags |= _FLAGS[letter]
            if flags & re.LOCALE:
                # re.LOCALE is only valid for bytes patterns; accept and ignore it.
                flags &= ~re.LOCALE
            pattern = re.compile(m.group(1), flags)
            return lambda name: pattern.match(name) is not None
        if any(c in spec for c in "*?["):
            return lambda name: fnmatch.fnmatchcase(name, spec)
        return lambda name: name == spec
    if isinstance(spec, Iterable) and not isinstance(spec, (bytes, bytearray)):
        predicates = [make_filter(s) for s in spec]
        return lambda name: any(p(name) for p in predicates)
    raise WrongTypeError(
        f"a filter must be None, a callable, a glob or '/regex/flags' string, or an iterable of those, not {spec!r}"
    )


_SIZE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([kmgtpezy]?i?b)\s*$", re.IGNORECASE)
_PREFIXES = "kmgtpezy"


def parse_memory_size(size: int | str) -> int:
    """Bytes in ``size``: an int, or a string such as ``"100 MB"`` (powers of 1000) or ``"1 GiB"`` (of 1024)."""
    if isinstance(size, bool):
        raise WrongTypeError(f"a memory size must be an int or a string like '100 MB', not {size!r}")
    if isinstance(size, int):
        return size
    if isinstance(size, str):
        m = _SIZE.match(size)
        if m is not None:
            value = float(m.group(1))
            unit = m.group(2).lower()
            if len(unit) > 1:
                base = 1024 if unit.endswith("ib") else 1000
                value *= base ** (_PREFIXES.index(unit[0]) + 1)
            return int(value)
    raise InvalidArgumentError(f"a memory size must be an int or a string like '100 MB' or '1 GiB', not {size!r}")


def parse_step_size(step_size: int | str) -> tuple[int | None, int | None]:
    """``(entries, None)`` for an int ``step_size``, ``(None, bytes)`` for a size such as ``"100 MB"``;
    ValueError unless positive."""
    if isinstance(step_size, int) and not isinstance(step_size, bool):
        if step_size <= 0:
            raise InvalidArgumentError(f"step_size must be positive, not {step_size}")
        return step_size, None
    target = parse_memory_size(step_size)
    if target <= 0:
        raise InvalidArgumentError(f"step_size must be positive, not {step_size!r}")
    return None, target
