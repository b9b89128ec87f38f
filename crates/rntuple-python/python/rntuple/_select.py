"""Which fields a read selects (``RNTuple.arrays(expressions, filter_name=...)``), as uproot selects them.

``choose`` applies the filters to every field of the given top-level trees.
``plain_paths`` is the short way for the common read of a few names or
dotted paths (``["MET_pt", "Muon.pt"]``): it builds only the trees those
can match (the top-level fields they name, and those with subfields of
these names), instead of the whole field tree of a schema that may have
thousands of fields, and gives the same selection as ``choose`` over all
fields, or None when it cannot be sure of that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ._fields import Field, build_fields, iter_fields

if TYPE_CHECKING:
    from . import _lib

__all__ = ["Selected", "choose", "in_order", "plain_paths"]

# (top-level fields to read, display paths kept or None for all, on-disk paths the reader reads)
Selected = tuple[list[Field], frozenset[str] | None, list[str]]

# Characters that make a filter string a glob or a regex (``_filters.make_filter``).
_PATTERN = frozenset("*?[/")


def choose(
    candidates: list[Field],
    accept_name: Callable[[str], bool],
    accept_type: Callable[[str], bool],
    filter_field: Callable[[Field], bool] | None,
    exact: bool = False,
) -> Selected:
    """The selection among the trees of ``candidates`` (readable top-level fields, in schema order).

    A field is chosen when ``accept_name`` takes its display name, its
    dotted path or that path with a leading dot, ``accept_type`` its C++
    type and ``filter_field`` the ``Field``; it comes with all its
    subfields, and with its parents but not their other members. With
    ``exact`` (expressions rather than a filter), ``accept_name`` is asked
    about the dotted path only: a subfield's own name does not select it
    (``"Muon_pt"`` is the top-level field, not also ``_collection15.Muon_pt``).
    """
    paths = []
    chosen = set()
    on_disk = []
    for f in iter_fields(candidates):
        path = f.display_path
        if path is None:
            continue
        paths.append(path)
        name = f.display_name
        if exact:
            named = accept_name(path) or accept_name("." + path)
        else:
            named = accept_name(name) or (path != name and accept_name(path)) or accept_name("." + path)
        if named and accept_type(f.type_name) and (filter_field is None or filter_field(f)):
            chosen.add(path)
            on_disk.append(f.path)
    # A selected field brings its subfields; every ancestor of a kept path is kept too.
    keys: set[str] = set()
    for path in paths:
        if "." not in path:  # a top-level field
            if path in chosen:
                keys.add(path)
            continue
        prefixes = [path[:i] for i, char in enumerate(path) if char == "."]
        if path in chosen or any(p in chosen for p in prefixes):
            keys.add(path)
            keys.update(prefixes)
    fields = [f for f in candidates if f.name in keys]
    return fields, frozenset(keys), on_disk


def _plain(text: object) -> bool:
    """Whether ``text`` can only be matched exactly (no pattern, no leading dot, no class prefix)."""
    return isinstance(text, str) and text[:1] not in ("", ".") and "::" not in text and _PATTERN.isdisjoint(text)


def plain_paths(
    inner: _lib.RNTuple, texts: list[str], built: list[Field] | None, exact: bool = False
) -> Selected | None:
    """``choose`` for a name filter of exact display paths ``texts``, over the trees it can match
    only (``built``: all top-level fields if already built, else those trees are built alone);
    None when a text names no field (a formula, a typo, a pattern) or might match otherwise than
    by its exact text: the caller then takes the general way.

    The trees it can match: display paths start with their top-level name and display names have
    no dots, so a dotted text can only be a path of the tree it starts with; a text without a dot
    is that top-level field's name and, in other trees, the display name of subfields, which is
    their on-disk name (``fields_with_subfields_named``) unless it is a tuple member's (digits) or
    a disambiguated one (with ``::``).
    """
    if not texts or not all(_plain(t) for t in texts):
        return None
    tops = list(dict.fromkeys(t.split(".", 1)[0] for t in texts))
    plain = [t for t in texts if "." not in t]
    if any(t.isdigit() for t in plain):
        return None
    if built is None:
        owners = inner.fields_with_subfields_named(plain) if plain else []
        trees = build_fields(inner.fields(tops + owners))
    else:
        wanted = set(tops)
        names = set(plain)
        trees = [f for f in built if f.name in wanted or any(c.name in names for c in iter_fields(f.children))]
    trees = [f for f in trees if f.readable]  # as the general way's candidates
    if not {f.name for f in trees}.issuperset(tops):
        return None
    known = {f.display_path for f in iter_fields(trees)}
    if not known.issuperset(texts):
        return None
    if exact:
        return in_order(
            choose([f for f in trees if f.name in tops], set(texts).__contains__, lambda _: True, None, True), texts
        )
    return choose(trees, set(texts).__contains__, lambda _: True, None)


def in_order(selected: Selected, texts: list[str]) -> Selected:
    """``selected`` with its top-level fields in the order ``texts`` (expressions) first name them."""
    fields, keys, on_disk = selected
    rank = {t.split(".", 1)[0]: i for i, t in reversed(list(enumerate(texts)))}
    ordered = sorted(fields, key=lambda f: rank.get(f.display_name, rank.get(f.name, len(texts))))
    # the reader returns the top-level fields in the order of the paths it is given
    place = {f.name: i for i, f in enumerate(ordered)}
    paths = sorted(on_disk, key=lambda p: place.get(p.split(".", 1)[0], len(place)))
    return ordered, keys, paths
