"""The field tree of an RNTuple as Python objects.

``Field`` mirrors one entry of the header's field list (spec "Field
Description") with its subfields and columns. Besides the on-disk name, every
field carries the name uproot shows for it (``display_name``) so that the
awkward arrays built from it have the same record field names as uproot's:

* subfields ``_0``, ``_1``... of a record (tuple and pair members) lose the
  leading underscore;
* base-class subfields ``:_0``, ``:_1``... of a record are transparent: their
  members appear directly in the derived record;
* when that makes two members of one record share a name, each is prefixed
  with the names of the classes it comes from (``"Base::member"``), one
  class at a time, outermost first, until the names are unique.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._errors import InvalidArgumentError

if TYPE_CHECKING:
    from ._lib import FieldInfo

__all__ = ["Field", "build_fields", "iter_fields"]

_TUPLE_MEMBER = re.compile(r"_[0-9]+")
_UNKNOWN = object()
_BASE_CLASS = re.compile(r":_[0-9]+")

# Structural roles (spec "Field Description"), derived from the reader's field kinds.
LEAF, COLLECTION, RECORD, VARIANT, STREAMER = "leaf", "collection", "record", "variant", "streamer"
_ROLE_OF_KIND = {
    "record": RECORD,
    "collection": COLLECTION,
    "optional": COLLECTION,
    "variant": VARIANT,
    "streamer": STREAMER,
}


@dataclass(eq=False)
class Field:
    """One field of an RNTuple, with its subfields."""

    id: int
    name: str
    type_name: str
    type_alias: str
    description: str
    kind: str
    projected: bool
    columns: list[list[tuple[int, str, int]]]
    """Physical columns ``(column id, column type, bits on storage)``, one list per representation."""
    children: list[Field] = field(default_factory=list)
    type_version: int = 0
    """Version of the C++ type (a class's ``ClassDef`` version)."""
    type_checksum: int | None = None
    """ROOT's checksum of the class layout, when stored."""
    array_size: int | None = None
    """Size of a fixed-size array (``std::array``, ``std::bitset``)."""
    source_field_id: int | None = None
    """For a projected field: the id of the field it presents."""
    parent: Field | None = field(default=None, repr=False)
    display_name: str = ""
    """The name uproot gives this field (see the module documentation)."""
    _ntuple: Any = field(default=None, repr=False)
    """The RNTuple it was obtained from (``ntuple[name]``), for :meth:`array`."""
    _display_path: str | None | object = field(default=_UNKNOWN, repr=False, compare=False)
    """``display_path`` worked out once for the whole tree by :func:`build_fields` (a wide RNTuple's
    first read asks it of every field), or ``_UNKNOWN`` for a field built by hand."""

    def __repr__(self) -> str:
        """Concise: path, type and kind, the number of subfields (``to_dict()`` has everything)."""
        kind = self.kind + (", projected" if self.projected else "")
        below = f", {len(self.children)} subfield{'s' if len(self.children) != 1 else ''}" if self.children else ""
        return f"<Field {self.path!r} {self.type_name or '(untyped)'} ({kind}{below})>"

    def _repr_html_(self) -> str:
        """The notebook view: this field's subtree with types and sizes (``_html``; no page read)."""
        from ._html import field_html

        return field_html(self)

    def array(
        self,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        *,
        library: str = "ak",
        threads: int | None = None,
    ) -> Any:
        """Reads this field alone (uproot's ``ntuple["run"].array()``): an awkward array, or with
        ``library="np"`` a numpy array."""
        if self._ntuple is None:
            raise InvalidArgumentError(
                f"field {self.path!r} was not obtained from an RNTuple (ntuple[name]); it cannot read"
            )
        path = self.display_path
        if path is None:
            raise InvalidArgumentError(
                f"field {self.path!r} has no name of its own (an item or base class); read its parent"
            )
        if library not in ("ak", "awkward", "np", "numpy"):
            raise InvalidArgumentError(f"library must be 'ak' or 'np' for Field.array(), not {library!r}")
        records = self._ntuple.arrays(
            filter_field=lambda f: f is self, entry_start=entry_start, entry_stop=entry_stop, threads=threads
        )
        out = records
        for part in path.split("."):
            out = out[part]
        if library in ("np", "numpy"):
            from ._numpy import _field_to_numpy

            return _field_to_numpy(out)
        return out

    @property
    def top_level(self) -> bool:
        """Whether this is a top-level field."""
        return self.parent is None

    @property
    def role(self) -> str:
        """Structural role: ``"leaf"``, ``"collection"``, ``"record"``, ``"variant"`` or ``"streamer"``."""
        return _ROLE_OF_KIND.get(self.kind, LEAF)

    @property
    def is_repetitive(self) -> bool:
        """Whether this is a fixed-size array (``std::array``, C array, ``std::bitset``)."""
        return self.kind in ("array", "bitset")

    @property
    def readable(self) -> bool:
        """Whether this reader can read the field and all of its subfields."""
        return not self.kind.startswith("unsupported") and all(c.readable for c in self.children)

    @property
    def is_transparent(self) -> bool:
        """Whether the field adds no name to paths (an item field, a base class, an atomic's value)."""
        p = self.parent
        if p is None:
            return False
        if p.role in (COLLECTION, VARIANT) or p.is_repetitive:
            return True
        if p.role == LEAF and self.name == "_0":
            return True
        return p.role == RECORD and _BASE_CLASS.fullmatch(self.name) is not None

    @property
    def in_variant(self) -> bool:
        """Whether some ancestor is a ``std::variant``."""
        p = self.parent
        while p is not None:
            if p.role == VARIANT:
                return True
            p = p.parent
        return False

    @property
    def path(self) -> str:
        """Dotted path of on-disk names from the top-level field."""
        names = []
        f: Field | None = self
        while f is not None:
            names.append(f.name)
            f = f.parent
        return ".".join(reversed(names))

    @property
    def display_path(self) -> str | None:
        """Dotted path of display names, skipping transparent fields; ``None`` for transparent fields."""
        if self._display_path is not _UNKNOWN:
            return self._display_path  # type: ignore[return-value]
        if self.is_transparent or self.in_variant:
            return None
        names = [self.display_name]
        p = self.parent
        while p is not None:
            if not p.is_transparent:
                names.append(p.display_name)
            p = p.parent
        return ".".join(reversed(names))

    def record_members(self) -> list[tuple[Field, list[int]]]:
        """Members shown for a record: (field, child positions from this record down to it).

        Base-class subfields are expanded in place of themselves, in the order
        uproot uses (a depth-first walk that visits the last base class first).
        """
        out: list[tuple[Field, list[int]]] = []
        pending: list[tuple[Field, list[int]]] = [(self, [])]
        while pending:
            current, route = pending.pop()
            for i, child in enumerate(current.children):
                if child.is_transparent:
                    pending.append((child, [*route, i]))
                else:
                    out.append((child, [*route, i]))
        return out

    def is_tuple_like(self) -> bool:
        """Whether a record's members are all named ``_0``, ``_1``... (pairs, tuples, empty classes)."""
        return all(_TUPLE_MEMBER.fullmatch(f.name) is not None for f, _ in self.record_members())

    def to_dict(self) -> dict[str, object]:
        """The field as a nested ``dict`` (``RNTuple.field_tree()``)."""
        return {
            "id": self.id,
            "name": self.name,
            "type_name": self.type_name,
            "type_alias": self.type_alias,
            "description": self.description,
            "kind": self.kind,
            "projected": self.projected,
            "columns": self.columns,
            "children": [c.to_dict() for c in self.children],
        }


def iter_fields(fields: list[Field]) -> Iterator[Field]:
    """All fields of the trees in ``fields``, depth first."""
    stack = list(reversed(fields))
    while stack:
        f = stack.pop()
        yield f
        stack.extend(reversed(f.children))


def _from_info(info: FieldInfo, parent: Field | None) -> Field:
    f = Field(
        id=info.id,
        name=info.name,
        type_name=info.type_name,
        type_alias=info.type_alias,
        description=info.description,
        kind=info.kind,
        projected=info.projected,
        columns=[[(c.id, c.column_type, c.bits_on_storage) for c in rep] for rep in info.columns],
        parent=parent,
        type_version=info.type_version,
        type_checksum=info.type_checksum,
        array_size=info.array_size,
        source_field_id=info.source_field_id,
    )
    f.children = [_from_info(c, f) for c in info.children]
    return f


def build_fields(infos: list[FieldInfo]) -> list[Field]:
    """Builds the field trees from the reader's (``_lib.RNTuple.fields()``) and assigns every field its
    display name."""
    top = [_from_info(i, None) for i in infos]
    every = list(iter_fields(top))
    for f in every:
        p = f.parent
        if p is not None and p.role == RECORD and _TUPLE_MEMBER.fullmatch(f.name):
            f.display_name = f.name[1:]
        else:
            f.display_name = f.name
    transparent = [f.is_transparent for f in every]
    paths = _display_paths(every, transparent)
    if _disambiguate(every, paths):  # renamed members: their paths (and their subfields') change
        paths = _display_paths(every, transparent)
    for f, path in zip(every, paths, strict=True):
        f._display_path = path
    return top


def _display_paths(every: list[Field], transparent: list[bool]) -> list[str | None]:
    """``display_path`` of each field of ``every`` (depth first, parents before their children, as
    :func:`iter_fields` gives them; ``transparent``: their ``is_transparent``), in one pass down the
    tree instead of one walk up per field."""
    # the path of non-transparent names down to a field, and whether a variant is above it
    prefix: dict[int, tuple[str, bool]] = {}
    out: list[str | None] = []
    for f, hidden in zip(every, transparent, strict=True):
        p = f.parent
        above, in_variant = ("", False) if p is None else prefix[id(p)]
        if p is not None and p.role == VARIANT:
            in_variant = True
        own = above if hidden else (f"{above}.{f.display_name}" if above else f.display_name)
        prefix[id(f)] = (own, in_variant)
        out.append(None if hidden or in_variant else own)
    return out


def _disambiguate(every: list[Field], paths: list[str | None]) -> bool:
    """Prefixes class names to members that end up with the same display path (``paths``: that of
    each field of ``every``); whether it renamed any."""
    groups: dict[str, list[Field]] = defaultdict(list)
    for f, path in zip(every, paths, strict=True):
        if path is not None:
            groups[path].append(f)
    renames: list[tuple[Field, str]] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        chains = []
        for f in members:
            chain = []
            a: Field | None = f
            while a is not None:
                chain.append(a)
                a = a.parent
            chains.append(chain)
        # Drop the ancestors all members share.
        while all(len(c) > 1 for c in chains) and all(c[-1] is chains[0][-1] for c in chains[1:]):
            for c in chains:
                c.pop()
        # [member name, type of its class, type of that class's owner, ...]
        stacks = [[c[0].display_name] + [a.type_name for a in c[1:]] for c in chains]
        depth = [0] * len(stacks)
        names = [_prefixed(s, 0) for s in stacks]
        limit = max(len(s) for s in stacks)
        while len(set(names)) != len(names):
            counts = Counter(names)
            for i, s in enumerate(stacks):
                if counts[names[i]] > 1:
                    depth[i] += 1
                    if depth[i] >= limit:
                        break
                    names[i] = _prefixed(s, depth[i])
            else:
                continue
            break  # cannot be made unique: keep what we have
        renames.extend(zip(members, names, strict=True))
    for f, name in renames:
        f.display_name = name
    return bool(renames)


def _prefixed(stack: list[str], depth: int) -> str:
    """``["m", "Base", "Child"]`` with depth 1 -> ``"Child::m"``, depth 2 -> ``"Child::Base::m"``."""
    if len(stack) < 2 or depth == 0:
        return stack[0]
    depth = min(depth, len(stack) - 1)
    outer_first = stack[:0:-1]
    return "::".join(outer_first[:depth]) + "::" + stack[0]
