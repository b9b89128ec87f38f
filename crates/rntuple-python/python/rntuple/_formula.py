"""The safe formula engine of ``rntuple.draw`` and of ``arrays(expressions=, cut=)`` (see ``_draw``
for the language): Python expressions parsed with ``ast``, checked against a whitelist and
evaluated over awkward arrays, never given to ``eval``."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any, cast

import awkward as ak
import numpy as np

from ._errors import InvalidArgumentError, close_names


class DrawError(InvalidArgumentError):
    """An expression, cut or argument that ``draw`` cannot use."""


def _reduce(fn: Callable[..., Any]) -> Callable[[Any], Any]:
    def reduce(x: Any) -> Any:
        if not isinstance(x, ak.Array) or x.ndim < 2:
            raise DrawError(f"{fn.__name__}() takes a collection (a field with several values per entry)")
        return fn(x, axis=-1)

    return reduce


def _length(x: Any) -> Any:
    if not isinstance(x, ak.Array) or x.ndim < 2:
        raise DrawError("len() takes a collection (a field with several values per entry)")
    return ak.num(x, axis=1)


# name -> (function, number of arguments)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int]] = {
    **{
        name: (getattr(np, name), 1)
        for name in (
            "sqrt",
            "abs",
            "fabs",
            "exp",
            "expm1",
            "exp2",
            "log",
            "log10",
            "log2",
            "log1p",
            "sin",
            "cos",
            "tan",
            "arcsin",
            "arccos",
            "arctan",
            "sinh",
            "cosh",
            "tanh",
            "arcsinh",
            "arccosh",
            "arctanh",
            "floor",
            "ceil",
            "rint",
            "sign",
            "square",
            "cbrt",
            "isnan",
            "isfinite",
            "isinf",
            "degrees",
            "radians",
        )
    },
    **{name: (getattr(np, name), 2) for name in ("arctan2", "hypot", "minimum", "maximum", "power", "fmod")},
    "asin": (np.arcsin, 1),
    "acos": (np.arccos, 1),
    "atan": (np.arctan, 1),
    "atan2": (np.arctan2, 2),
    "where": (np.where, 3),
    "len": (_length, 1),
    "sum": (_reduce(ak.sum), 1),
    "min": (_reduce(ak.min), 1),
    "max": (_reduce(ak.max), 1),
}
CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}

_BINARY = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.true_divide,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.Pow: np.power,
    ast.BitAnd: np.bitwise_and,
    ast.BitOr: np.bitwise_or,
    ast.BitXor: np.bitwise_xor,
}
_COMPARE = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
}


class Expression:
    """A parsed, checked expression over the fields of an RNTuple."""

    def __init__(self, text: str, what: str, fields: set[str]) -> None:
        if not isinstance(text, str) or not text.strip():
            raise DrawError(f"the {what} is empty")
        self.text = text
        self.what = what
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as err:
            raise DrawError(f"{what} {text!r}: syntax error at column {err.offset}: {err.msg}") from None
        self.names: list[str] = []
        self._fields = fields
        self._check(tree.body)
        self.tree = tree.body

    def _fail(self, node: ast.AST, why: str) -> DrawError:
        col = getattr(node, "col_offset", None)
        where = f" (column {col + 1})" if col is not None else ""
        return DrawError(f"{self.what} {self.text!r}{where}: {why}")

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool | int | float):
                return
            raise self._fail(node, f"only numbers can be constants, not {node.value!r}")
        if isinstance(node, ast.Name):
            if node.id in self._fields:
                if node.id not in self.names:
                    self.names.append(node.id)
                return
            if node.id in CONSTANTS:
                return
            if node.id in FUNCTIONS:
                raise self._fail(node, f"{node.id} is a function: call it, {node.id}(...)")
            raise self._fail(node, _no_field(node.id, self._fields))
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                raise self._fail(node, f"operator {type(node.op).__name__} is not allowed")
            self._check(node.left)
            self._check(node.right)
            return
        if isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub | ast.UAdd | ast.Not | ast.Invert):
                raise self._fail(node, f"operator {type(node.op).__name__} is not allowed")
            self._check(node.operand)
            return
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                self._check(v)
            return
        if isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _COMPARE:
                    raise self._fail(node, f"comparison {type(op).__name__} is not allowed")
            self._check(node.left)
            for c in node.comparators:
                self._check(c)
            return
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
                raise self._fail(node, f"unknown function {name!r} (functions: {', '.join(sorted(FUNCTIONS))})")
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise self._fail(node, f"{node.func.id}() takes positional arguments only")
            arity = FUNCTIONS[node.func.id][1]
            if len(node.args) != arity:
                raise self._fail(node, f"{node.func.id}() takes {arity} argument(s), not {len(node.args)}")
            for a in node.args:
                self._check(a)
            return
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("__"):
                raise self._fail(node, f"no member {node.attr!r}")
            self._check(node.value)
            return
        if isinstance(node, ast.Subscript):
            index = node.slice
            if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
                raise self._fail(node, "an index must be a non-negative integer, as in Muon_pt[0]")
            self._check(node.value)
            return
        raise self._fail(node, f"{type(node).__name__} is not allowed in an expression")

    def evaluate(self, env: dict[str, Any]) -> Any:
        with np.errstate(all="ignore"):
            try:
                return self._eval(self.tree, env)
            except DrawError:
                raise
            except (ValueError, TypeError, IndexError) as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
                raise DrawError(f"{self.what} {self.text!r}: {first}") from None

    def _eval(self, node: ast.AST, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else CONSTANTS[node.id]
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env)
            if isinstance(node.op, ast.USub):
                return np.negative(v)
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, ast.Not):
                return np.logical_not(v)
            return np.invert(v)
        if isinstance(node, ast.BoolOp):
            combine = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = self._eval(node.values[0], env)
            for v in node.values[1:]:
                out = combine(out, self._eval(v, env))
            return out
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, env)
            out = None
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self._eval(comp, env)
                part = _COMPARE[type(op)](left, right)
                out = part if out is None else np.logical_and(out, part)
                left = right
            return out
        if isinstance(node, ast.Call):
            fn = FUNCTIONS[cast(ast.Name, node.func).id][0]  # a Name: checked when parsed
            return fn(*(self._eval(a, env) for a in node.args))
        if isinstance(node, ast.Attribute):
            value = self._eval(node.value, env)
            if not isinstance(value, ak.Array) or node.attr not in ak.fields(value):
                members = ak.fields(value) if isinstance(value, ak.Array) else []
                raise self._fail(node, f"no member {node.attr!r} (members: {members})")
            return value[node.attr]
        if isinstance(node, ast.Subscript):
            value = self._eval(node.value, env)
            i = node.slice.value  # type: ignore[attr-defined]
            if not isinstance(value, ak.Array) or value.ndim < 2:
                raise self._fail(node, "only a collection can be indexed")
            return ak.pad_none(value, i + 1, axis=1)[:, i]
        raise self._fail(node, f"{type(node).__name__} is not allowed")  # unreachable: _check refused it


def _no_field(name: str, fields: set[str]) -> str:
    """ "no field 'nMuonn'; did you mean 'nMuon'?": the close names, not the first ones alphabetically."""
    close = close_names(name, sorted(fields))
    if close:
        return f"no field {name!r}; did you mean {', '.join(repr(c) for c in close)}?"
    return f"no field {name!r} (fields: {_some(fields)})"


def _some(names: set[str], n: int = 12) -> str:
    listed = sorted(names)
    return ", ".join(listed[:n]) + (f", ... ({len(listed)} in all)" if len(listed) > n else "")
