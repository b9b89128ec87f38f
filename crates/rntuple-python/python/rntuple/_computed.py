"""What ``arrays(expressions=..., cut=..., aliases=...)`` computes, as uproot's, over the safe
formula engine of ``draw`` (``_formula``: ``ast`` checked against a whitelist, never ``eval``).

:func:`compile_selection` is the one place that turns those arguments into
what to read (``Selection.fields``) and how to compute the result from it
(``Selection.apply``); ``RNTuple.arrays``/``iterate`` and dataset iteration
call it alike.

* An expression is a field name (top-level, or a dotted path such as
  ``"jets.pt"``), an alias, or a formula of fields and aliases
  (``"sqrt(Muon_pt**2 + 1)"``, ``"Muon_pt[0]"``, ``"len(Muon_pt)"``); the
  result has one field per expression, named by its text (as uproot names it).
* ``aliases`` maps new names to formulas; formulas may use other aliases.
* ``cut`` keeps the entries where it is true: it must have one value per
  entry (reduce a collection with ``len``, ``sum``, ``min``, ``max`` or
  ``Muon_pt[0]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import awkward as ak
import numpy as np

from ._errors import InvalidArgumentError, WrongTypeError, unknown_name_error
from ._formula import DrawError, Expression

__all__ = ["Selection", "compile_selection"]


@dataclass
class Selection:
    """What :func:`compile_selection` made: the top-level fields to read and the computation."""

    fields: list[str]
    """Top-level fields (display names) to read, in first-use order."""
    outputs: list[tuple[str, Expression | None]] = field(default_factory=list)
    """Each output: its name and its formula (None: a field read as is). Empty: every field read."""
    cut: Expression | None = None
    aliases: dict[str, Expression] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Aliases in an order where each comes after those it uses."""

    def mask(self, array: ak.Array) -> np.ndarray | None:
        """The entries the cut keeps (None: no cut)."""
        if self.cut is None:
            return None
        env = self._environment(array)
        values = self.cut.evaluate(env)
        if not isinstance(values, ak.Array | np.ndarray):
            return np.full(len(array), bool(values))
        values = ak.Array(values) if isinstance(values, np.ndarray) else values
        if values.ndim != 1 or values.fields:
            raise DrawError(
                f"cut {self.cut.text!r} must give one value per entry, not {values.type}; reduce a collection "
                "with len(), sum(), min(), max() or an index (Muon_pt[0])"
            )
        return np.asarray(ak.fill_none(values != 0, False), dtype=bool)

    def apply(self, array: ak.Array, keep: np.ndarray | None = None) -> ak.Array:
        """The result over ``array`` (a record array with :attr:`fields`): the outputs, cut applied
        (``keep``: the cut's :meth:`mask` when already computed)."""
        if keep is None:
            keep = self.mask(array)
        if keep is not None:
            array = array[keep]
        if not self.outputs:
            return array
        env = self._environment(array)
        columns: dict[str, Any] = {}
        for name, formula in self.outputs:
            if formula is None:
                columns[name] = _path(array, name)
                continue
            value = formula.evaluate(env)
            if not isinstance(value, ak.Array):
                value = ak.Array(np.broadcast_to(np.asarray(value), (len(array),)).copy())
            columns[name] = value
        if not columns:
            return array[[]]
        return ak.zip(columns, depth_limit=1)

    def _environment(self, array: ak.Array) -> dict[str, Any]:
        env: dict[str, Any] = {name: array[name] for name in self.fields if name in array.fields}
        for name in self.order:
            env[name] = self.aliases[name].evaluate(env)
        return env


def _path(array: ak.Array, dotted: str) -> ak.Array:
    out = array
    for part in dotted.split("."):
        out = out[part]
    return out


def compile_selection(
    expressions: str | Iterable[str] | None,
    cut: str | None = None,
    aliases: Mapping[str, str] | None = None,
    *,
    fields: Iterable[str],
    paths: Iterable[str] = (),
) -> Selection:
    """Parses and checks ``expressions``, ``cut`` and ``aliases`` against ``fields`` (top-level
    display names; ``paths``: dotted subfield paths that may be expressions as they are).

    Raises ``DrawError`` (a ``ValueError``) for a formula that is not allowed or names an unknown
    field, and ``NotFoundError`` (a ``KeyError``) naming the closest fields for an expression that
    is a bare unknown name.
    """
    top = list(dict.fromkeys(fields))
    known_paths = set(paths)
    alias_texts = dict(aliases or {})
    for name, text in alias_texts.items():
        if not isinstance(name, str) or not name.isidentifier() or not isinstance(text, str):
            raise WrongTypeError(f"aliases maps names (identifiers) to expressions (strings), not {name!r}: {text!r}")
        if name in top:
            raise InvalidArgumentError(f"alias {name!r} has the name of a field")
    names = set(top) | set(alias_texts)
    parsed = {name: Expression(text, f"alias {name!r}", names) for name, text in alias_texts.items()}
    order = _alias_order(parsed)

    used: list[str] = []

    def use(expr: Expression) -> None:
        for n in expr.names:
            if n in parsed:
                use(parsed[n])
            elif n not in used:
                used.append(n)

    outputs: list[tuple[str, Expression | None]] = []
    if expressions is not None:
        for text in [expressions] if isinstance(expressions, str) else list(expressions):
            if not isinstance(text, str):
                raise WrongTypeError(f"an expression is a string, not {text!r}")
            if text in top or text in known_paths:
                outputs.append((text, None))
                head = text.split(".")[0]
                if head not in used:
                    used.append(head)
                continue
            if text.isidentifier() and text not in alias_texts:
                raise unknown_name_error(text, list(top) + sorted(known_paths), "field")
            expr = Expression(text, "expression", names)
            use(expr)
            outputs.append((text, expr))
    else:
        used.extend(top)
    cut_expr = None
    if cut is not None:
        cut_expr = Expression(cut, "cut", names)
        use(cut_expr)
    return Selection(fields=used, outputs=outputs, cut=cut_expr, aliases=parsed, order=order)


def _alias_order(parsed: dict[str, Expression]) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, chain: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise InvalidArgumentError(f"aliases refer to each other in a circle: {' -> '.join([*chain, name])}")
        state[name] = 1
        for n in parsed[name].names:
            if n in parsed:
                visit(n, [*chain, name])
        state[name] = 2
        order.append(name)

    for name in parsed:
        visit(name, [])
    return order
