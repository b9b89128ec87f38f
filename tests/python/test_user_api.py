"""Issue 27's trial as an uproot user: one batching rule for ``RNTuple.iterate`` and
``rntuple.iterate``, name suggestions (Python, ``cut=``, the command), messages free of Rust
internals, one vocabulary for the counts, ``show``/``inspect`` that fit a terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback

import numpy as np
import pytest
import rntuple
from conftest import write_in_clusters

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
NANO = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")
PHYSLITE = os.path.join(DATA, "uproot-physlite-rntuple_v1-0-0-0.root")
TRUNCATED = os.path.join(DATA, "bad", "page_cut_at_eof.root")


def _cli(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rntuple", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize(("clusters", "step", "want"), [([10], 3, [3, 3, 2, 2]), ([200], 150, [100, 100])])
def test_iterate_one_batching_rule(tmp_path, clusters, step, want):
    """``RNTuple.iterate`` and ``rntuple.iterate`` cut the same steps: a cluster larger than the
    step is cut into the fewest pieces that fit, of sizes differing by one at most."""
    n = sum(clusters)
    path = write_in_clusters(tmp_path / "c.root", "T", {"x": np.arange(n)}, clusters)
    nt = rntuple.open(path)["T"]
    assert [len(b) for b in nt.iterate(step_size=step)] == want
    assert [len(b) for b in rntuple.iterate({path: "T"}, step_size=step)] == want
    assert [len(b) for b in rntuple.chain([f"{path}:T"]).iterate(step_size=step)] == want


def test_unknown_field_suggestions_are_distinct_and_close():
    nt = rntuple.open(NANO)["Events"]
    for call in (lambda: nt.arrays(["Muon_ptt"]), lambda: nt["Muon_ptt"]):
        with pytest.raises(KeyError) as err:
            call()
        suggested = re.findall(r"'([^']+)'", str(err.value).split("did you mean", 1)[1])
        assert suggested[0] == "Muon_pt"
        assert len(suggested) == len(set(suggested)), str(err.value)


def test_a_bad_name_in_cut_suggests_the_close_field():
    nt = rntuple.open(NANO)["Events"]
    with pytest.raises(ValueError, match=r"no field 'nMuonn'; did you mean 'nMuon'") as err:
        nt.arrays(["nMuon"], cut="nMuonn > 0")
    assert "CaloMET_phi" not in str(err.value)  # not the first names alphabetically


def test_exception_classes_are_shown_as_the_package_names_them():
    with pytest.raises(rntuple.TruncatedError) as err:
        rntuple.open(TRUNCATED)[rntuple.open(TRUNCATED).rntuple_names()[0]].arrays()
    shown = "".join(traceback.format_exception_only(err.type, err.value))
    assert shown.startswith("rntuple.TruncatedError: "), shown
    for cls in (rntuple.RNTupleError, rntuple.NotFoundError, rntuple.MissingFileError, rntuple.DirectoryError):
        assert cls.__module__ == "rntuple" and getattr(rntuple, cls.__name__) is cls


def test_a_missing_file_says_so_without_internals(tmp_path):
    missing = str(tmp_path / "nope.root")
    with pytest.raises(FileNotFoundError) as err:
        rntuple.open(missing)
    text = str(err.value)
    assert missing in text and "No such file or directory" in text
    assert "reading opening" not in text and "os error" not in text
    assert err.value.errno == 2


def test_a_directory_is_an_is_a_directory_error(tmp_path):
    with pytest.raises(IsADirectoryError) as err:
        rntuple.open(str(tmp_path))
    assert isinstance(err.value, rntuple.RNTupleError) and err.value.errno == 21
    assert "os error" not in str(err.value)


def test_a_write_type_mismatch_names_the_cpp_type_only(tmp_path):
    with rntuple.recreate(tmp_path / "w.root") as f, f.mkrntuple("T", {"x": np.arange(3, dtype=np.int64)}) as w:
        with pytest.raises(ValueError) as err:
            w.extend({"x": np.array(["a", "b"])})
    assert "'std::int64_t'" in str(err.value)
    assert "Primitive" not in str(err.value) and "I64" not in str(err.value)


def test_counts_use_one_vocabulary():
    """Top-level fields, fields in all, columns: repr, ``keys``, ``show`` and ``inspect`` agree."""
    nt = rntuple.open(PHYSLITE)["EventData"]
    top = len(nt.fields)
    assert top == len(nt.keys(recursive=False))
    assert f"{top:,} top-level fields" in repr(nt)
    shown = _text_of_show(nt)
    m = re.search(r"(\d+) fields \((\d+) top-level\), (\d+) columns", shown)
    assert m is not None, shown[:400]
    inspected = _cli("inspect", f"{PHYSLITE}:EventData").stdout
    m2 = re.search(r"([\d,]+) fields \(([\d,]+) top-level\), ([\d,]+) columns", inspected)
    assert m2 is not None
    assert [int(g.replace(",", "")) for g in m2.groups()] == [int(g) for g in m.groups()]
    assert int(m.group(2)) == top and int(m.group(1)) == 2401  # ROOT's field records of EventData


def _text_of_show(nt: rntuple.RNTuple, **kwargs: object) -> str:
    import io

    out = io.StringIO()
    nt.show(out, **kwargs)  # type: ignore[arg-type]
    return out.getvalue()


def test_show_takes_a_limit():
    nt = rntuple.open(PHYSLITE)["EventData"]
    whole = _text_of_show(nt)
    few = _text_of_show(nt, max_fields=3)
    assert "first 3 of 854 top-level fields" in few
    assert len(few.splitlines()) < len(whole.splitlines()) // 10
    names = [f.name for f in nt.fields]
    assert f"    {names[0]} : " in few and f"\n    {names[3]} : " not in few
    cli = _cli("show", "--max-fields", "3", f"{PHYSLITE}:EventData")
    assert cli.returncode == 0 and "first 3 of" in cli.stdout
    with pytest.raises(ValueError):
        nt.show(max_fields=0)


@pytest.mark.parametrize(("command", "path"), [("inspect", NANO), ("show", PHYSLITE), ("inspect", PHYSLITE)])
def test_show_and_inspect_fit_100_columns_unless_wide(command, path):
    """The file's name as a user types it in its directory (a path is printed whole)."""
    narrow = _cli(command, os.path.basename(path), cwd=DATA)
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 100
    wide = _cli(command, "--wide", os.path.basename(path), cwd=DATA)
    assert wide.returncode == 0, wide.stderr
    assert max(len(line) for line in wide.stdout.splitlines()) > 100
    assert "--wide adds" not in wide.stdout
    assert len(wide.stdout.splitlines()) <= len(narrow.stdout.splitlines())


def test_the_command_suggests_names():
    for args in (("show", f"{PHYSLITE}:EventDat"), ("inspect", f"{PHYSLITE}:EventDat")):
        p = _cli(*args)
        assert p.returncode == 1 and "did you mean 'EventData'" in p.stderr, p.stderr
    p = _cli("dump", f"{NANO}:Events", "--fields", "nMuonn")
    assert p.returncode == 1 and "no field 'nMuonn'; did you mean 'nMuon'" in p.stderr, p.stderr


def test_setitem_then_extend_appends_as_in_uproot(tmp_path):
    """``f["Events"] = a; f["Events"].extend(b)``: uproot's way to append, while the file is open."""
    path = str(tmp_path / "append.root")
    with rntuple.recreate(path) as f:
        f["Events"] = {"x": np.arange(3)}
        f["Events"].extend({"x": np.arange(3, 5)})
        with pytest.raises(KeyError, match="did you mean 'Events'"):
            f["Evnts"]
        f["Events"].close()
        with pytest.raises(ValueError, match="is closed: it cannot be extended"):
            f["Events"].extend({"x": np.arange(2)})
    assert rntuple.open(path)["Events"].arrays().x.tolist() == [0, 1, 2, 3, 4]
    import uproot

    assert uproot.open(path)["Events"].arrays().x.tolist() == [0, 1, 2, 3, 4]
