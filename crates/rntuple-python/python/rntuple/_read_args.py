"""The arguments of a read, declared once: ``arrays`` and ``iterate`` of an RNTuple, a chain and a
join, the module-level ``rntuple.iterate``/``concatenate``, and the options of opening a file.

Each set of arguments is a frozen dataclass (:class:`ArraysArgs`, :class:`IterateArgs`,
:class:`OpenOptions`...). :func:`takes` turns a function of such an object into the public
function with the dataclass's keyword parameters, so that ``help()``, ``inspect.signature``,
IDEs and mypy all see the explicit keywords, while the code behind them receives one checked
object. Checks and normalizations of single arguments (``library``, ``threads``, entry ranges)
live here too.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, fields
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    import os

    from ._fields import Field
    from ._filters import Filter

__all__ = [
    "ArraysArgs",
    "ChainOptions",
    "ConcatenateArgs",
    "DatasetIterateArgs",
    "IterateArgs",
    "OpenOptions",
    "check_threads",
    "entry_range",
    "library",
    "memory_budget",
    "takes",
    "takes_after",
]

P = ParamSpec("P")
A = TypeVar("A")
S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


def takes(args_type: Callable[P, A]) -> Callable[[Callable[[S, A], R]], Callable[Concatenate[S, P], R]]:
    """Decorates ``impl(owner, args)`` into ``f(owner, <the parameters of args_type>)``: the
    arguments are bound to ``args_type`` (which checks them) and handed to ``impl`` as one object.
    ``owner`` is ``self`` for a method, or the first positional argument of a function."""

    def decorate(impl: Callable[[S, A], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(impl)
        def call(owner: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return impl(owner, args_type(*args, **kwargs))

        return _with_signature(call, impl, args_type, 1)

    return decorate


def takes_after(args_type: Callable[P, A]) -> Callable[[Callable[[S, T, A], R]], Callable[Concatenate[S, T, P], R]]:
    """:func:`takes` for ``impl(owner, first, args)``: a method with one positional parameter
    before the declared ones (``File(path, ...)``, ``Chain(files, ...)``)."""

    def decorate(impl: Callable[[S, T, A], R]) -> Callable[Concatenate[S, T, P], R]:
        @functools.wraps(impl)
        def call(owner: S, first: T, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return impl(owner, first, args_type(*args, **kwargs))

        return _with_signature(call, impl, args_type, 2)

    return decorate


def _with_signature(call: F, impl: Callable[..., Any], args_type: Callable[..., Any], leading: int) -> F:
    """``call`` with the signature ``help()`` and ``inspect.signature`` show (the first ``leading``
    parameters of ``impl``, then those of ``args_type``), named as ``impl`` without its leading
    underscore."""
    own = inspect.signature(impl)
    declared = inspect.signature(args_type)
    first = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in list(own.parameters.values())[:leading]]
    parameters = [*first, *declared.parameters.values()]
    call.__signature__ = declared.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=own.return_annotation
    )
    if impl.__name__.startswith("_") and not impl.__name__.startswith("__"):
        # ``arrays = takes(ArraysArgs)(_arrays)``: the public function has the public name
        call.__name__ = impl.__name__[1:]
        call.__qualname__ = (
            impl.__qualname__.rpartition(".")[0] + "." + call.__name__ if "." in impl.__qualname__ else call.__name__
        )
    return call


_LIBRARIES = {
    "ak": "ak",
    "awkward": "ak",
    "np": "np",
    "numpy": "np",
    "pd": "pd",
    "pandas": "pd",
    "pa": "pa",
    "pyarrow": "pa",
    "arrow": "pa",
}


def library(name: str) -> str:
    """The short name (``"ak"``, ``"np"``, ``"pd"``, ``"pa"``) of a ``library`` argument."""
    try:
        return _LIBRARIES[name.lower()]
    except (KeyError, AttributeError):
        raise InvalidArgumentError(f"library must be one of 'ak', 'np', 'pd' or 'pa', not {name!r}") from None


def check_threads(threads: int | None) -> int | None:
    """Checks a ``threads`` argument: None (the file's setting), 0 (one per core) or a positive count."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise InvalidArgumentError(f"threads must be None, 0 (one per core) or a positive number, not {threads!r}")
    return threads


def memory_budget(size: int | str | None, what: str = "max_memory") -> int | None:
    """Bytes of a ``max_memory``-like argument: None (no budget), a number of bytes, or a size such
    as ``"2 GB"`` (powers of 1000) or ``"2 GiB"`` (of 1024), as ``step_size`` takes them."""
    if size is None:
        return None
    from ._filters import parse_memory_size

    n = parse_memory_size(size)
    if n <= 0:
        raise InvalidArgumentError(f"{what} must be a positive size in bytes (or None), not {size!r}")
    return n


def entry_range(num_entries: int, entry_start: int | None, entry_stop: int | None) -> tuple[int, int]:
    """Python-slice-like bounds: None means the end, negative counts from the end, clamped to the entries."""
    start = 0 if entry_start is None else int(entry_start)
    stop = num_entries if entry_stop is None else int(entry_stop)
    if start < 0:
        start += num_entries
    if stop < 0:
        stop += num_entries
    start = min(num_entries, max(0, start))
    stop = min(num_entries, max(0, stop))
    return start, max(start, stop)


@dataclass(frozen=True)
class ArraysArgs:
    """The arguments of ``arrays()`` (RNTuple, chain, join); see :meth:`RNTuple.arrays`."""

    expressions: str | list[str] | None = None
    cut: str | None = None
    _: KW_ONLY
    filter_name: Filter = None
    filter_typename: Filter = None
    filter_field: Callable[[Field], bool] | None = None
    aliases: dict[str, str] | None = None
    entry_start: int | None = None
    entry_stop: int | None = None
    library: str = "ak"
    how: Any = None
    threads: int | None = None
    max_memory: int | str | None = None

    def __post_init__(self) -> None:
        library(self.library)  # refused before anything is read
        check_threads(self.threads)
        memory_budget(self.max_memory)

    @property
    def lib(self) -> str:
        """``library`` as its short name."""
        return library(self.library)

    def entries(self, num_entries: int) -> tuple[int, int]:
        """``[entry_start, entry_stop)`` within ``num_entries`` (:func:`entry_range`)."""
        return entry_range(num_entries, self.entry_start, self.entry_stop)

    def stepping(self, step_size: int | str, **changes: Any) -> IterateArgs:
        """These arguments as ``iterate``'s, with ``step_size`` and ``changes``."""
        values = {f.name: getattr(self, f.name) for f in fields(ArraysArgs)}
        return IterateArgs(**{**values, "step_size": step_size, **changes})


@dataclass(frozen=True, kw_only=True)
class IterateArgs(ArraysArgs):
    """The arguments of ``iterate()``: those of ``arrays()`` with ``step_size`` and ``report``."""

    step_size: int | str = "100 MB"
    report: bool = False


@dataclass(frozen=True, kw_only=True)
class _DatasetArgs:
    union: bool = False
    allow_missing: bool = False


@dataclass(frozen=True, kw_only=True)
class ChainOptions(_DatasetArgs):
    """The options of a chain: ``rntuple.chain(files, ...)``, ``Chain(files, ...)``."""

    verify_checksums: bool = True
    threads: int | None = None


@dataclass(frozen=True, kw_only=True)
class DatasetIterateArgs(IterateArgs, _DatasetArgs):
    """``rntuple.iterate(files, ...)``: those of ``iterate()`` with the chain's ``union`` and ``allow_missing``,
    and ``progress`` (a bar of the files done, ``_term``)."""

    progress: bool | None = None


@dataclass(frozen=True, kw_only=True)
class ConcatenateArgs(ArraysArgs, _DatasetArgs):
    """``rntuple.concatenate(files, ...)``: those of ``arrays()`` with ``union`` and ``allow_missing``."""


@dataclass(frozen=True)
class OpenOptions:
    """The options of opening a file for reading: ``rntuple.open(path, ...)``."""

    verify_checksums: bool = True
    threads: int | None = None
    cache: str | os.PathLike[str] | None = None
    coalesce_gap: int | None = None
    max_request: int | None = None
    max_memory: int | str | None = None
    max_page_size: int | str | None = None
    max_envelope_size: int | str | None = None

    def __post_init__(self) -> None:
        check_threads(self.threads)
        memory_budget(self.max_memory)
        memory_budget(self.max_page_size, "max_page_size")
        memory_budget(self.max_envelope_size, "max_envelope_size")
        for what in ("coalesce_gap", "max_request"):
            value = getattr(self, what)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise InvalidArgumentError(f"{what} must be None or a number of bytes, not {value!r}")

    def given(self) -> dict[str, Any]:
        """The options as keywords, those left at None omitted (what a pickled handle keeps)."""
        out: dict[str, Any] = {"verify_checksums": bool(self.verify_checksums), "threads": self.threads}
        out.update(
            {
                k: getattr(self, k)
                for k in ("cache", "coalesce_gap", "max_request", "max_memory", "max_page_size", "max_envelope_size")
                if getattr(self, k) is not None
            }
        )
        return out
