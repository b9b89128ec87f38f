"""Our reader against ROOT 6.40 (and uproot 5.7) on ROOT-written files.

For every RNTuple in every file of tests/data/ and of the generated matrix
(tests/reference/generate.py), ROOT's values (tests/reference/root_dump.py,
canonical JSON of docs/dump-format.md) must equal what our
``rntuple dump FILE:NAME`` prints, entry by entry: floats exactly (and with
their sign), NaN equal to NaN, integers and floats never mixed.

Top-level fields that ROOT itself cannot read are left out of ROOT's dump
(``skipped_fields`` in its metadata; see conftest.py for the list) and are
removed from our dump before comparing.

uproot: ``test_uproot_matches_root`` reads the same RNTuples with uproot
(``ak.to_list`` of each top-level field, normalized to the canonical JSON
values) and compares with ROOT.  A field is skipped only where uproot raises
for it.  Observed with uproot 5.7 (the test records the exception per field in
its skip message):
  * projected fields (tests/data cmsopendata NanoAOD importer file and the
    generated projections.root): read fine where uproot resolves them;
  * fields uproot raises on are reported per case as "uproot cannot read".
Known value differences between uproot and ROOT are listed in
UPROOT_KNOWN_DIFFERENCES with the reason and are xfailed.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import subprocess

import pytest
from conftest import (
    REFERENCE,
    Case,
    _sha256_file,
    all_cases,
    cache_dir,
    canon_diff,
    canon_float,
    dumper_hash,
    root_python,
)

CASES = all_cases()

# "<case id>::<top-level field>" glob pattern -> why uproot 5.7 reads different values than ROOT 6.40
UPROOT_KNOWN_DIFFERENCES: dict[str, str] = {
    "generated/*::char": "uproot reads the Char column as unsigned; ROOT's char is signed",
    "generated/types.root:types::f_char": "uproot reads the Char column as unsigned; ROOT's char is signed",
    "generated/columns_*::variant": "uproot mis-reads Switch columns after the first cluster",
    "generated/columns_*::vec_variant": "uproot mis-reads Switch columns after the first cluster",
    "generated/types.root:types::variant*": "uproot mis-reads Switch columns after the first cluster",
    "generated/extension.root:extension::var": "uproot mis-reads a late-added (deferred) Switch column",
    "generated/columns_*::double_quant16": "uproot dequantizes Real32Quant into float32 also for double "
    "fields; ROOT computes the double value in double precision",
    "data/double_real32quant_rntuple_v1-0-2-0.root:quant::*": "uproot dequantizes Real32Quant into float32 "
    "also for double fields; ROOT computes the double value in double precision",
    "generated/multirep.root:multirep::*": "uproot ignores column representations switching between clusters",
    "data/test_class_inheritance_rntuple_v1-0-0-1.root:rntpl::multi_grandparent": "uproot renames "
    "members inherited twice (e.g. 'MultiParent::base_a1') when flattening base classes",
}


def known_uproot_difference(case, field):
    for pattern, reason in UPROOT_KNOWN_DIFFERENCES.items():
        if fnmatch.fnmatchcase(f"{case.id}::{field}", pattern):
            return reason
    return None


# ---------------------------------------------------------------------------
# canonical comparison
# ---------------------------------------------------------------------------


def compare_rows(expected: list[dict], actual: list[dict], what: str):
    assert len(actual) == len(expected), f"{what}: {len(actual)} entries, ROOT has {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
        d = canon_diff(e, a)
        if d:
            pytest.fail(f"{what}: entry {i} (of the compared range) differs from ROOT: {d}")


# ---------------------------------------------------------------------------
# ROOT's listing agrees with tests/data/ntuples.json and the generated plan
# ---------------------------------------------------------------------------


def test_listing_matches_root(reference_store):
    """root_dump.py --list (keys of class ROOT::RNTuple, incl. subdirectories) matches our indexes."""
    cases = [c for c in CASES if c.origin in ("data", "generated")]
    files = sorted({(c.origin, c.file) for c in cases})
    paths = [reference_store.path_of(Case(o, f, "")) for o, f in files if o == "data" or reference_store.gen_dir]
    key = json.dumps([dumper_hash()] + [_sha256_file(p) for p in paths])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    cache = os.path.join(cache_dir(), "reference", f"listing-v2-{digest}.json")
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as fh:
            listing = json.load(fh)
    else:
        script = (
            "import json, sys; sys.path.insert(0, sys.argv[1]); import root_dump; "
            "print(json.dumps({p: root_dump.list_ntuples(p) for p in sys.argv[2:]}))"
        )
        proc = subprocess.run([root_python(), "-c", script, REFERENCE] + paths, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        by_path = json.loads(proc.stdout.strip().splitlines()[-1])
        # Cached by position (the key hashes the contents in order), not by
        # path: another checkout has the same files under other paths.
        listing = [by_path[p] for p in paths]
        with open(cache, "w", encoding="utf-8") as fh:
            json.dump(listing, fh)
    listing = dict(zip(paths, listing, strict=True))
    expected = {}
    for c in cases:
        p = reference_store.path_of(c) if (c.origin == "data" or reference_store.gen_dir) else None
        if p:
            expected.setdefault(p, []).append(c.ntuple)
    for p in paths:
        expected.setdefault(p, [])
        assert sorted(listing[p]) == sorted(expected[p]), f"{p}: ROOT lists {listing[p]}, index has {expected[p]}"


# ---------------------------------------------------------------------------
# ROOT's dump works and has the advertised entry count
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_root_reference_available(case, reference_store):
    rows, meta = reference_store.get(case)
    if case.entries is not None:
        assert meta["entries"] == case.entries
    if case.ranges:
        expected = sum(min(b, meta["entries"]) - min(a, meta["entries"]) for a, b in case.ranges)
    else:
        expected = meta["entries"]
    assert len(rows) == expected


# ---------------------------------------------------------------------------
# our dump == ROOT's dump
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_matches_root(case, reference_store, our_dump):
    expected, meta = reference_store.get(case)
    skipped = meta.get("skipped_fields") or {}
    actual = our_dump(reference_store.path_of(case), case.ntuple, case.ranges)
    if skipped:
        actual = [{k: v for k, v in row.items() if k not in skipped} for row in actual]
    compare_rows(expected, actual, f"{case.id} (ours vs ROOT)")


# ---------------------------------------------------------------------------
# uproot == ROOT (where uproot can read the field)
# ---------------------------------------------------------------------------


def _canon_text(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def normalize_uproot(value):
    """uproot/awkward Python value -> canonical JSON scalars (floats, strings); tuples become lists."""
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, (list, tuple)):
        return [normalize_uproot(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize_uproot(v) for k, v in value.items()}
    return canon_float(value)


def _take_base(flat: dict, expected: dict) -> dict:
    """uproot flattens base-class members into the derived record: rebuild the ':_k' subrecords."""
    out = {}
    for k, ev in expected.items():
        if k.startswith(":_") and k not in flat and isinstance(ev, dict):
            out[k] = _take_base(flat, ev)
        elif k in flat:
            out[k] = coerce(flat.pop(k), ev)
    return out


def coerce(v, e):
    """Bring uproot's representation of a value into the canonical shape of ROOT's value `e`.

    Only representation differences are bridged (tuples and pairs as lists,
    empty records as [], base classes flattened, unique_ptr as a 0/1-element
    list); values are never changed."""
    if isinstance(e, dict):
        if isinstance(v, list):
            if not v:
                v = {}
            elif len(v) == len(e) and all(k == f"_{i}" for i, k in enumerate(e)):
                v = dict(zip(e, v, strict=True))
        if isinstance(v, dict):
            rest = dict(v)
            out = _take_base(rest, e)
            out.update(rest)  # leftovers show up in the comparison
            return out
        if isinstance(v, list) and len(v) == 1:  # unique_ptr holding a record
            return coerce(v[0], e)
        return v
    if e is None and v == []:
        return None  # empty unique_ptr
    if isinstance(e, list):
        if isinstance(v, list):
            return [coerce(x, y) for x, y in zip(v, e, strict=False)] + v[len(e) :]
        return v
    if isinstance(v, list) and len(v) == 1 and e is not None:
        return coerce(v[0], e)  # unique_ptr holding a value
    return v


def sort_unordered(v, rfield):
    """Sort the items of std::unordered_* containers like the canonical format (by canonical JSON text)."""
    if rfield is None:
        return v
    try:
        subs = list(rfield.values())
    except Exception:  # noqa: BLE001
        subs = []
    typename = getattr(rfield, "typename", "") or ""
    if isinstance(v, list):
        child = subs[0] if len(subs) == 1 else None
        items = [sort_unordered(x, child) for x in v]
        if typename.startswith("std::unordered_"):
            items.sort(key=_canon_text)
        return items
    if isinstance(v, dict):
        by_name = {f.name: f for f in subs}
        return {k: sort_unordered(x, by_name.get(k)) for k, x in v.items()}
    return v


def _uproot_rows(path, ntuple, fields, ranges, n_entries):
    import awkward as ak
    import uproot

    rn = uproot.open(path)[ntuple]
    columns, errors = {}, {}
    spans = ranges or [[0, n_entries]]
    for name in fields:
        try:
            rfield = rn[name]
            values = []
            for a, b in spans:
                a, b = min(a, n_entries), min(b, n_entries)
                if b > a:
                    values += ak.to_list(rfield.array(entry_start=a, entry_stop=b))
            columns[name] = (rfield, [normalize_uproot(v) for v in values])
        except Exception as exc:  # noqa: BLE001 - uproot raising is what we record
            errors[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return columns, errors


@pytest.mark.parametrize("case", [c for c in CASES if c.origin != "big"], ids=lambda c: c.id)
def test_uproot_matches_root(case, reference_store):
    pytest.importorskip("uproot")
    pytest.importorskip("awkward")
    expected, meta = reference_store.get(case)
    fields = list(expected[0].keys()) if expected else []
    columns, errors = _uproot_rows(reference_store.path_of(case), case.ntuple, fields, case.ranges, meta["entries"])
    failures, known = [], []
    for name, (rfield, values) in columns.items():
        want = [row[name] for row in expected]
        values = [sort_unordered(coerce(v, w), rfield) for v, w in zip(values, want, strict=False)]
        values += columns[name][1][len(want) :]
        d = canon_diff(want, values, name)
        if d:
            reason = known_uproot_difference(case, name)
            (known if reason else failures).append(f"{d}" + (f" (known: {reason})" if reason else ""))
    if failures:
        pytest.fail(f"{case.id}: uproot differs from ROOT:\n  " + "\n  ".join(failures[:20]))
    # Every field uproot reads was compared above; differences are allowed only
    # where they are documented uproot bugs (UPROOT_KNOWN_DIFFERENCES), and
    # fields uproot cannot read at all are reported, not compared.
    assert columns or not fields, f"uproot cannot read any field of {case.id}: {next(iter(errors.values()))}"
    if known:
        print(f"{case.id}: known uproot differences: " + "; ".join(known))
    if errors:
        listed = "; ".join(f"{k}: {v}" for k, v in errors.items())
        print(f"{case.id}: uproot cannot read {len(errors)} field(s): {listed[:2000]}")
