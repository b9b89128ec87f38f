"""What JSROOT (the version in tests/jsroot/JSROOT_VERSION, driven as in ``test_write_jsroot.py``)
makes of the class fields of issue 26: struct-of-arrays fields (ROOT 6.40's ``RSoAField``, and ours
written with ``soa=``) and streamer fields (``RStreamerField``, ROOT's
``tests/data/streamer_root640.root``, and ours written with ``streamer=``).

Values JSROOT reads are compared with the values written (SoA: ``test_soa.filled``, the values
``tests/reference/soa_root.py`` fills) or with ROOT's ``RNTupleReader`` reading of the same file
(``tests/data/streamer_root640.json``) or with the values we wrote. What it does not read is
asserted as it behaves now, so a JSROOT that learns it makes the test fail (docs/format-notes.md lists these limits).
"""

from __future__ import annotations

import json
import os

import pytest
import rntuple
from conftest import DATA
from test_soa import SOA_TYPES, filled, soa_data
from test_streamer_write import recovered
from test_streamer_write import rows as streamer_rows
from test_streamer_write import write as write_streamer
from test_write_jsroot import jsroot_dumps, same

SOA = os.path.join(DATA, "soa_root640.root")
STREAMER = os.path.join(DATA, "streamer_root640.root")


@pytest.fixture(scope="module")
def soa_files(tmp_path_factory) -> dict[str, str]:
    path = str(tmp_path_factory.mktemp("jsroot-soa") / "soa_ours.root")
    with rntuple.recreate(path) as f:
        f.mkrntuple("Events", soa_data(), soa=["hits"], types=SOA_TYPES)
    return {"ROOT's": SOA, "ours": path}


@pytest.mark.parametrize("whose", ["ROOT's", "ours"])
def test_jsroot_reads_the_other_fields_of_soa_files(soa_files, whose, tmp_path):
    (got,) = jsroot_dumps([(soa_files[whose], "Events", ["n"])], str(tmp_path))
    assert not isinstance(got, str), got
    assert same([{"n": e["n"]} for e in filled()], got)


@pytest.mark.parametrize("whose", ["ROOT's", "ours"])
def test_jsroot_reads_an_soa_field_as_its_offsets(soa_files, whose, tmp_path):
    """Known limit: JSROOT 7.11 does not know the SoA class and gives, per entry, the collection's
    index column (the running count of records: 0, 1, 3, 6, 6 for 0, 1, 2, 3, 0 hits) instead of
    the records; the record's members cannot be selected (``hits._0.x``: not found)."""
    whole, member = jsroot_dumps(
        [(soa_files[whose], "Events", ["hits"]), (soa_files[whose], "Events", ["hits._0.x"])], str(tmp_path)
    )
    assert not isinstance(whole, str), whole
    ends, total = [], 0
    for e in filled():
        total += len(e["hits"])
        ends.append({"hits": total})
    assert same(ends, whole), f"JSROOT now reads SoA fields ({whole}): test their values instead"
    assert isinstance(member, str) and "hits._0.x not found" in member, member


def _as_jsroot(value):
    """ROOT's reading (streamer_root640.json) in JSROOT's shape: a base class's members (``:_0``)
    lifted into the object, as JSROOT's streamers give them."""
    if isinstance(value, list):
        return [_as_jsroot(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for k, v in value.items():
        if k == ":_0":
            out.update(_as_jsroot(v))
        else:
            out[k] = _as_jsroot(v)
    return out


def _without_typename(value):
    if isinstance(value, list):
        return [_without_typename(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_typename(v) for k, v in value.items() if k != "_typename"}
    return value


@pytest.fixture(scope="module")
def streamer_dumps(tmp_path_factory) -> dict[str, list[dict] | str]:
    fields = ["hit", "hits", "der", "tob"]
    jobs = [(STREAMER, "Events", [name]) for name in fields]
    return dict(zip(fields, jsroot_dumps(jobs, str(tmp_path_factory.mktemp("jsroot-streamer"))), strict=True))


@pytest.mark.parametrize(
    ("field", "typename"), [("hit", "Hit"), ("der", "Derived26"), ("tob", "Tagged26")], ids=["Hit", "base", "TObject"]
)
def test_jsroot_reads_roots_streamer_fields(streamer_dumps, field, typename):
    """Streamer fields of a class with a vector and a string (``Hit``), with a base class, a C array,
    a nested class and a vector of it written member-wise (``Derived26``), and TObject-derived
    (``Tagged26``): JSROOT decodes them with the file's streamer infos to what ROOT reads."""
    _assert_roots_values(streamer_dumps[field], field, typename)


def _assert_roots_values(got, field: str, typename: str) -> None:
    """JSROOT's reading `got` of `field` equals ROOT's ``RNTupleReader`` reading of the field in
    ``streamer_root640.root``, each entry an object of class `typename`."""
    with open(os.path.join(DATA, "streamer_root640.json"), encoding="utf-8") as fh:
        root = json.load(fh)["Events"]
    assert not isinstance(got, str), got
    assert [e[field]["_typename"] for e in got] == [typename] * len(root)
    want = [_as_jsroot(e[field]) for e in root]
    assert same(want, [_without_typename(e[field]) for e in got])


def test_jsroot_does_not_read_a_streamer_field_of_a_vector(streamer_dumps):
    """Known limit: a streamer field of ``std::vector<Hit>`` (its type is a collection, not a class:
    no streamer info of its own in the file) fails in JSROOT 7.11."""
    got = streamer_dumps["hits"]
    assert isinstance(got, str) and "No streamer for type 'std::vector<Hit>'" in got, got


def _bytewise_strings(value):
    """JSROOT 7.11 turns a streamed ``std::string`` into one character per byte (``"é"``, UTF-8 bytes
    C3 A9, reads as ``"Ã©"``): the same for ROOT's bytes, which ours equal (test_streamer_write.py)."""
    if isinstance(value, str):
        return value.encode("utf-8").decode("latin-1")
    if isinstance(value, list):
        return [_bytewise_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _bytewise_strings(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def our_streamer_dumps(tmp_path_factory) -> dict[str, list[dict] | str]:
    directory = tmp_path_factory.mktemp("jsroot-our-streamer")
    path = str(directory / "streamer_ours.root")
    write_streamer(path)
    fields = ["hit", "hits", "der"]
    return dict(zip(fields, jsroot_dumps([(path, "Events", [f]) for f in fields], str(directory)), strict=True))


@pytest.mark.parametrize(("field", "typename"), [("hit", "WHit"), ("der", "WDerived")], ids=["class", "base"])
def test_jsroot_reads_our_streamer_fields(our_streamer_dumps, field, typename):
    """Our streamer fields of a class (``WHit``: fundamentals, a vector, a string) and of a derived class
    with a class member and a vector of classes (``WDerived``): JSROOT finds the classes in the file's
    streamer-info record, where the writer lists them as ROOT does, and reads the values written."""
    got = our_streamer_dumps[field]
    assert not isinstance(got, str), got
    want = [_bytewise_strings(_as_jsroot(r[field])) for r in streamer_rows()]
    assert [e[field]["_typename"] for e in got] == [typename] * len(want)
    assert same(want, [_without_typename(e[field]) for e in got])


@pytest.mark.parametrize(("field", "typename"), [("hit", "WHit"), ("der", "WDerived")], ids=["class", "base"])
def test_jsroot_reads_the_streamer_fields_of_a_recovered_file(tmp_path, field, typename):
    """A killed writer's file recovered by ``rntuple.recover`` (``test_streamer_write.recovered``,
    three clusters of the rows written, one cluster group): its streamer-info record lists the
    classes as the writer's close would have, and JSROOT reads the values written."""
    (got,) = jsroot_dumps([(recovered(tmp_path), "Events", [field])], str(tmp_path))
    assert not isinstance(got, str), got
    want = [_bytewise_strings(_as_jsroot(r[field])) for r in streamer_rows()] * 3
    assert [e[field]["_typename"] for e in got] == [typename] * len(want)
    assert same(want, [_without_typename(e[field]) for e in got])


def test_jsroot_fails_on_our_vector_streamer_field_as_on_roots(our_streamer_dumps):
    """Known limit, the same as for ROOT's file: JSROOT 7.11 looks up a streamer info of the
    collection type ``std::vector<WHit>`` itself."""
    got = our_streamer_dumps["hits"]
    assert isinstance(got, str) and "No streamer for type 'std::vector<WHit>'" in got, got


@pytest.fixture(scope="module")
def merged_streamer_dumps(tmp_path_factory) -> dict[str, list[dict] | str]:
    directory = tmp_path_factory.mktemp("jsroot-merged-streamer")
    out = str(directory / "merged.root")
    # One input: JSROOT reads the first cluster group only (test_write_jsroot.py), and merge keeps
    # each input's clusters as a group of their own.
    rntuple.merge(out, [STREAMER], name="Events")
    fields = ["hit", "der", "tob"]
    return dict(zip(fields, jsroot_dumps([(out, "Events", [f]) for f in fields], str(directory)), strict=True))


@pytest.mark.parametrize(
    ("field", "typename"), [("hit", "Hit"), ("der", "Derived26"), ("tob", "Tagged26")], ids=["Hit", "base", "TObject"]
)
def test_jsroot_reads_the_streamer_fields_of_a_merged_file(merged_streamer_dumps, field, typename):
    """ROOT's streamer file copied by ``rntuple.merge`` (as ``rntuple.update`` rewrites a file): the
    merged file's streamer-info record lists the classes of the footer's streamer infos, as ROOT
    does, and JSROOT reads the fields to what ROOT reads from the input."""
    _assert_roots_values(merged_streamer_dumps[field], field, typename)
