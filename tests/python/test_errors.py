"""The exception hierarchy (issue 23): every exception the package raises derives from
``rntuple.RNTupleError`` and keeps the built-in base that says the same thing, so that both
``except rntuple.RNTupleError`` and ``except ValueError`` (``KeyError``, ``FileNotFoundError``...)
catch it. Also: the read arguments of ``arrays``/``iterate`` are one declaration that RNTuples,
chains and joins share."""

from __future__ import annotations

import ast
import builtins
import inspect
import pickle
from pathlib import Path

import numpy as np
import pytest
import rntuple

PACKAGE = Path(rntuple.__file__).resolve().parent
# Built-in exceptions the package may still raise: interpreter protocols, not errors of rntuple.
ALLOWED = {"SystemExit", "KeyboardInterrupt", "StopIteration", "GeneratorExit"}


def _builtin_exception_calls(source: str) -> list[tuple[int, str]]:
    """(line, name) of every call that makes a built-in exception (``raise ValueError(...)``,
    ``err = KeyError(...)``) or raises the bare class."""
    found = []
    for node in ast.walk(ast.parse(source)):
        target = node.func if isinstance(node, ast.Call) else node.exc if isinstance(node, ast.Raise) else None
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "builtins":
            name = target.attr
        elif isinstance(target, ast.Name):
            name = target.id
        else:
            continue
        value = getattr(builtins, name, None)
        if isinstance(value, type) and issubclass(value, BaseException) and name not in ALLOWED:
            found.append((node.lineno, name))
    return sorted(found)


def test_the_scan_finds_built_in_exceptions() -> None:
    source = "def f(x):\n    if x:\n        raise ValueError('no')\n    e = KeyError(x)\n    raise TypeError\n"
    assert _builtin_exception_calls(source) == [(3, "ValueError"), (4, "KeyError"), (5, "TypeError")]
    assert _builtin_exception_calls("raise rntuple.InvalidArgumentError('x')\nraise SystemExit(1)\n") == []


def test_the_package_raises_its_own_exceptions_only() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for line, name in _builtin_exception_calls(source):
            where = f"{path.relative_to(PACKAGE)}:{line}"
            # a module's __getattr__ must raise AttributeError (the import protocol)
            if name == "AttributeError" and "def __getattr__" in source:
                continue
            offenders.append(f"{where} {name}")
    assert offenders == [], "raise rntuple's classes (rntuple._errors), not built-ins: " + ", ".join(offenders)


def test_every_exported_exception_is_an_rntuple_error() -> None:
    classes = [getattr(rntuple, n) for n in rntuple.__all__]
    exceptions = [c for c in classes if isinstance(c, type) and issubclass(c, BaseException)]
    assert len(exceptions) >= 20
    assert [c.__name__ for c in exceptions if not issubclass(c, rntuple.RNTupleError)] == []


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        ("InvalidArgumentError", ValueError),
        ("WriteError", ValueError),
        ("StateError", ValueError),
        ("SchemaMismatchError", ValueError),
        ("DrawError", ValueError),
        ("WrongTypeError", TypeError),
        ("NotFoundError", KeyError),
        ("StorageError", OSError),
        ("MissingFileError", FileNotFoundError),
        ("PermissionDeniedError", PermissionError),
        ("DirectoryError", IsADirectoryError),
        ("MissingDependencyError", ImportError),
        ("OutOfMemoryError", MemoryError),
        ("MemoryLimitError", MemoryError),
    ],
)
def test_classes_keep_their_built_in_base(cls: str, builtin: type[BaseException]) -> None:
    klass = getattr(rntuple, cls)
    assert issubclass(klass, rntuple.RNTupleError) and issubclass(klass, builtin)
    assert klass.__module__.startswith("rntuple")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("errors") / "small.root")
    with rntuple.recreate(path) as f:
        f["Events"] = {"x": np.arange(5, dtype=np.int32), "y": np.arange(5) * 0.5}
    return path


def _raised(fn, *bases: type[BaseException]) -> BaseException:
    with pytest.raises(rntuple.RNTupleError) as info:
        fn()
    for base in bases:
        assert isinstance(info.value, base), f"{type(info.value).__mro__} is not a {base.__name__}"
    return info.value


def test_read_errors(small: str, tmp_path: Path) -> None:
    _raised(lambda: rntuple.open(str(tmp_path / "missing.root")), FileNotFoundError, rntuple.MissingFileError)
    _raised(lambda: rntuple.open(small, threads=-1), ValueError, rntuple.InvalidArgumentError)
    with rntuple.open(small) as f:
        nt = f["Events"]
        _raised(lambda: f["Nope"], KeyError, rntuple.NotFoundError)
        _raised(lambda: nt.arrays(["nope"]), KeyError, rntuple.NotFoundError)
        _raised(lambda: nt["nope"], KeyError, rntuple.NotFoundError)
        _raised(lambda: nt.arrays(library="excel"), ValueError, rntuple.InvalidArgumentError)
        _raised(lambda: nt.arrays("x", filter_name="y"), ValueError)
        _raised(lambda: nt.arrays(filter_field=3), TypeError, rntuple.WrongTypeError)
        _raised(lambda: nt.arrays(cut="x +"), ValueError, rntuple.DrawError)
        _raised(lambda: nt.attribute_set("runs"), KeyError)
    _raised(f.rntuple_names, ValueError, rntuple.StateError)  # closed file
    with open(small, "rb") as handle:
        from_object = rntuple.open(handle)
        _raised(lambda: pickle.dumps(from_object), TypeError, rntuple.WrongTypeError)


def test_chain_errors(small: str, tmp_path: Path) -> None:
    other = str(tmp_path / "other.root")
    with rntuple.recreate(other) as f:
        f["Events"] = {"x": np.arange(3, dtype=np.float64), "y": np.arange(3) * 0.5}
    err = _raised(lambda: rntuple.concatenate([small, other], ["x"]), ValueError, rntuple.SchemaMismatchError)
    assert "'x'" in str(err)
    _raised(lambda: rntuple.chain([str(tmp_path / "no*.root")]), FileNotFoundError)
    joined = rntuple.join([small, small], names=[None, "again"])
    _raised(lambda: joined.arrays(cut="x > 1"), ValueError, rntuple.InvalidArgumentError)
    _raised(lambda: joined.arrays(["nope"]), KeyError, rntuple.NotFoundError)


def test_write_errors(tmp_path: Path) -> None:
    path = tmp_path / "w.root"
    _raised(lambda: rntuple.recreate(path, compression_level="high"), ValueError, rntuple.WriteError)
    _raised(lambda: rntuple.recreate(path, compression=[5]), TypeError, rntuple.WrongTypeError)
    with rntuple.recreate(path) as f:
        _raised(lambda: f.mkrntuple(3, {"x": np.arange(2)}), TypeError, rntuple.WrongTypeError)
        w = f.mkrntuple("Events", {"x": np.arange(2, dtype=np.int32)})
        _raised(lambda: w.extend({"x": np.array(["a", "b"])}), ValueError, rntuple.WriteError)
        w.close()
        _raised(lambda: w.extend({"x": np.arange(2, dtype=np.int32)}), ValueError, rntuple.StateError)
        p = f.mkrntuple_parallel("Par", {"x": np.arange(2, dtype=np.int32)})
        ctx = p.fill_context()
        _raised(p.close, ValueError, rntuple.StateError)  # a context is still open
        ctx.close()
        ctx_closed = ctx
        _raised(lambda: ctx_closed.extend({"x": np.arange(2, dtype=np.int32)}), ValueError, rntuple.StateError)
    _raised(lambda: f.mkrntuple("Late", {"x": np.arange(2)}), ValueError, rntuple.StateError)  # closed file


def _keywords(fn) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]


def test_read_arguments_are_declared_once_and_shown() -> None:
    arrays = inspect.signature(rntuple.RNTuple.arrays)
    assert list(arrays.parameters)[:3] == ["self", "expressions", "cut"]
    assert {"filter_name", "filter_typename", "entry_start", "entry_stop", "library", "how", "threads"} <= set(
        _keywords(rntuple.RNTuple.arrays)
    )
    assert set(_keywords(rntuple.RNTuple.iterate)) == set(_keywords(rntuple.RNTuple.arrays)) | {"step_size", "report"}
    for cls in (rntuple.Chain, rntuple.Join):
        assert inspect.signature(cls.arrays) == arrays, cls
        assert inspect.signature(cls.iterate) == inspect.signature(rntuple.RNTuple.iterate), cls
    # Over several files: how they are combined, and a progress bar counting them.
    over_files = {"union", "allow_missing", "progress"}
    assert set(_keywords(rntuple.iterate)) == set(_keywords(rntuple.RNTuple.iterate)) | over_files
    assert set(_keywords(rntuple.concatenate)) == set(_keywords(rntuple.RNTuple.arrays)) | {"union", "allow_missing"}
    assert "Reads fields over a range of entries" in (rntuple.RNTuple.arrays.__doc__ or "")
    assert rntuple.RNTuple.arrays.__name__ == "arrays" and rntuple.Chain.iterate.__qualname__ == "Chain.iterate"
    assert list(inspect.signature(rntuple.open).parameters) == [
        "path",
        "verify_checksums",
        "threads",
        "cache",
        "coalesce_gap",
        "max_request",
        "max_memory",
        "max_page_size",
        "max_envelope_size",
    ]


def test_an_unknown_read_keyword_is_refused(small: str) -> None:
    with rntuple.open(small) as f, pytest.raises(TypeError, match="filter_nam"):
        f["Events"].arrays(filter_nam="x")
