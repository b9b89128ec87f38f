"""Joins: RNTuples side by side (friends), or matched on the values of index fields, after ROOT's
``RNTupleProcessor::CreateJoin(primary, auxiliaries, joinFields)``.

Naming, as ROOT's processor: the primary's fields keep their names; an auxiliary's fields are
``"<prefix>.<field>"`` where the prefix is by default the auxiliary RNTuple's name (ROOT uses
that name). ``names=[...]`` gives one prefix per input (None: no prefix).

Without ``on`` the inputs must have the same number of entries and entry ``i`` of each goes
together. With ``on="event"`` (or several fields) entry ``i`` of the primary is matched with the
auxiliary entry whose index fields have the same values (the first such entry); where none
has, the auxiliary's fields are None in that entry (an option type; ROOT marks them invalid).
Each auxiliary's index fields and selected fields are read whole to build the match.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import awkward as ak
import numpy as np

from ._chain import Chain
from ._errors import InvalidArgumentError, NotFoundError
from ._filters import Filter, make_filter
from ._read_args import ArraysArgs, IterateArgs, takes
from ._results import apply_how, concatenate_results, to_library

__all__ = ["Join", "join"]


class Join:
    """RNTuples side by side (see the module documentation)."""

    def __init__(
        self,
        inputs: list[Any],
        names: list[str | None] | None = None,
        on: str | list[str] | None = None,
        **options: Any,
    ) -> None:
        if len(inputs) < 2:
            raise InvalidArgumentError("a join needs a primary and at least one auxiliary input")
        self._chains = [x if isinstance(x, Chain) else Chain(x, **options) for x in inputs]
        self._on = [on] if isinstance(on, str) else None if on is None else list(on)
        if names is None:
            names = [None] + [self._name_of(c) for c in self._chains[1:]]
        if len(names) != len(self._chains):
            raise InvalidArgumentError(f"names has {len(names)} prefixes for {len(self._chains)} inputs")
        used = [n for n in names if n]
        if len(set(used)) != len(used):
            raise InvalidArgumentError(f"the prefixes {names} repeat; give distinct ones with names=[...]")
        self._names = names
        if self._on is None:
            counts = [c.num_entries for c in self._chains]
            if len(set(counts)) != 1:
                listed = ", ".join(f"{c.files[0][0]}: {n}" for c, n in zip(self._chains, counts, strict=True))
                raise InvalidArgumentError(
                    f"joined RNTuples must have the same number of entries without on=... ({listed})"
                )
        else:
            for c in self._chains:
                missing = [k for k in self._on if k not in c.keys()]
                if missing:
                    raise NotFoundError(f"index field {missing[0]!r} is not in {c.files[0][0]}")

    @staticmethod
    def _name_of(chain: Chain) -> str:
        path, name = chain.files[0]
        if name is None:
            f, ntuple = chain._open(0)
            f.close()
            name = ntuple.name
        return name.rsplit("/", 1)[-1]

    @property
    def num_entries(self) -> int:
        """Entries of the primary (a join has one entry per primary entry)."""
        return self._chains[0].num_entries

    def __len__(self) -> int:
        return self.num_entries

    def _prefixed(self, i: int, name: str) -> str:
        prefix = self._names[i]
        return f"{prefix}.{name}" if prefix else name

    def keys(self, filter_name: Filter = None) -> list[str]:
        """Field names of the join: the primary's, then each auxiliary's with its prefix."""
        accept = make_filter(filter_name)
        out = [self._prefixed(i, k) for i, c in enumerate(self._chains) for k in c.keys()]
        return [k for k in out if accept(k)]

    def _wanted(self, args: ArraysArgs) -> list[list[str]]:
        """The fields of each input that ``args`` select: by ``expressions`` (names of the join's
        fields, no formulas) and ``filter_name``; the other selections are refused."""
        refused = [k for k in ("cut", "aliases", "filter_typename", "filter_field") if getattr(args, k) is not None]
        if refused:
            raise InvalidArgumentError(f"a join selects fields by name only; it does not take {', '.join(refused)}")
        names = [args.expressions] if isinstance(args.expressions, str) else args.expressions
        if names is not None:
            unknown = [n for n in names if n not in self.keys()]
            if unknown:
                raise NotFoundError(f"no field {unknown[0]!r} in the join (its fields: {self.keys()})")
        accept = make_filter(args.filter_name)
        return [
            [k for k in c.keys() if accept(self._prefixed(i, k)) and (names is None or self._prefixed(i, k) in names)]
            for i, c in enumerate(self._chains)
        ]

    def _iterate(self, args: IterateArgs) -> Iterator[Any]:
        """Batches over the primary's entries (its steps, aligned with its clusters), each with the
        auxiliaries' fields beside; ``report=True`` yields ``(batch, Report)`` of the primary.

        The arguments are those of :meth:`RNTuple.iterate`; a join selects fields by name only:
        ``expressions`` are names of its fields (``"prefix.field"`` for an auxiliary's), and
        ``filter_name`` filters them; ``cut``, ``aliases``, ``filter_typename`` and
        ``filter_field`` raise ``InvalidArgumentError``."""
        lib = args.lib
        wanted = self._wanted(args)
        index = None
        if self._on is not None:
            index = [self._aux_lookup(i, wanted[i]) for i in range(1, len(self._chains))]
        primary_fields = list(dict.fromkeys(wanted[0] + (self._on or [])))
        for batch, rep in self._chains[0].iterate(
            primary_fields or None,
            entry_start=args.entry_start,
            entry_stop=args.entry_stop,
            step_size=args.step_size,
            report=True,
            threads=args.threads,
            max_memory=args.max_memory,
        ):
            columns = {self._prefixed(0, k): batch[k] for k in wanted[0]}
            for i in range(1, len(self._chains)):
                if index is None:
                    aux = self._chains[i].arrays(
                        wanted[i] or None,
                        entry_start=rep.global_entry_start,
                        entry_stop=rep.global_entry_stop,
                        threads=args.threads,
                        max_memory=args.max_memory,
                    )
                else:
                    aux = _match(batch, self._on or [], *index[i - 1])
                for k in wanted[i]:
                    columns[self._prefixed(i, k)] = aux[k]
            out = to_library(ak.Array(columns), lib, rep.global_entry_start)
            out = apply_how(out, args.how, lib)
            yield (out, rep) if args.report else out

    iterate = takes(IterateArgs)(_iterate)

    def _aux_lookup(self, i: int, fields: list[str]) -> tuple[ak.Array, dict[Any, int] | None, Any]:
        """The auxiliary's fields and the map from index values to its entries."""
        on = self._on or []
        arrays = self._chains[i].arrays(list(dict.fromkeys(fields + on)))
        keys = [np.asarray(ak.to_numpy(arrays[k])) for k in on]
        if len(keys) == 1:
            order = np.argsort(keys[0], kind="stable")
            return arrays, None, (keys[0][order], order)
        first: dict[Any, int] = {}
        for row, key in enumerate(zip(*(k.tolist() for k in keys), strict=True)):
            first.setdefault(key, row)
        return arrays, first, None

    def _arrays(self, args: ArraysArgs) -> Any:
        """All entries of the join at once (the arguments of :meth:`iterate` but ``step_size``/``report``)."""
        parts = list(self._iterate(args.stepping(1 << 62, how=None)))
        if not parts:
            raise InvalidArgumentError("the join selects no entries")
        return apply_how(concatenate_results(parts, args.lib), args.how, args.lib)

    arrays = takes(ArraysArgs)(_arrays)


def _match(primary: ak.Array, on: list[str], aux: ak.Array, first: dict[Any, int] | None, table: Any) -> ak.Array:
    """``aux``'s entries matching each entry of ``primary`` on the ``on`` fields, None where none does."""
    keys = [np.asarray(ak.to_numpy(primary[k])) for k in on]
    if first is None:
        sorted_keys, order = table
        pos = np.searchsorted(sorted_keys, keys[0], side="left")
        pos_ok = np.minimum(pos, max(len(sorted_keys) - 1, 0))
        found = (pos < len(sorted_keys)) & (sorted_keys[pos_ok] == keys[0]) if len(sorted_keys) else pos < 0
        rows = np.where(found, order[pos_ok] if len(sorted_keys) else 0, -1).astype(np.int64)
    else:
        rows = np.array(
            [first.get(k, -1) for k in zip(*(k.tolist() for k in keys), strict=True)], dtype=np.int64
        ).reshape(-1)
    return ak.Array(ak.contents.IndexedOptionArray(ak.index.Index64(rows), aux.layout))


def join(
    inputs: list[Any], names: list[str | None] | None = None, on: str | list[str] | None = None, **options: Any
) -> Join:
    """A :class:`Join`: ``inputs[0]`` is the primary, the others auxiliaries (each any form of
    ``rntuple.iterate``'s ``files``, or a :class:`Chain`)."""
    return Join(inputs, names, on, **options)
