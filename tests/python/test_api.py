"""The Python API around the reader: files, keys, errors, field metadata and the command line."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import rntuple

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "testdata" / "root-written"  # ../shared beside the checkout


def _data(name: str) -> Path:
    for folder in (REPO / "tests" / "data", SHARED):
        if (folder / name).is_file():
            return folder / name
    pytest.skip(f"test file {name} not available")


_WRITE_NESTED_CXX = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TFile.h>
#include <TH1D.h>
void rntuple_test_write_nested(const char *path) {
   auto file = std::unique_ptr<TFile>(TFile::Open(path, "RECREATE"));
   {
      auto model = ROOT::RNTupleModel::Create();
      auto y = model->MakeField<double>("y");
      auto w = ROOT::RNTupleWriter::Append(std::move(model), "top", *file);
      for (int i = 0; i < 3; ++i) { *y = i; w->Fill(); }
   }
   TH1D h("hist", "", 3, 0, 3);
   file->WriteObject(&h, "hist");
   auto sub = file->mkdir("dir")->mkdir("sub");
   {
      auto model = ROOT::RNTupleModel::Create();
      auto x = model->MakeField<std::int32_t>("x");
      auto v = model->MakeField<std::vector<double>>("v");
      auto w = ROOT::RNTupleWriter::Append(std::move(model), "nt", *sub);
      std::vector<std::vector<double>> vs{{1.0}, {}, {2.0, 3.0}, {}, {4.0}};
      for (int i = 0; i < 5; ++i) { *x = i; *v = vs[i]; w->Fill(); }
   }
}
"""

_WRITE_NESTED = f"""
import sys
import ROOT
ROOT.gInterpreter.Declare({_WRITE_NESTED_CXX!r})
ROOT.rntuple_test_write_nested(sys.argv[1])
"""


@pytest.fixture(scope="module")
def nested_file(tmp_path_factory) -> Path:
    """Written by ROOT: RNTuples at the top and in ``dir/sub``, a histogram (two cycles), two directories."""
    if importlib.util.find_spec("ROOT") is None:
        pytest.skip("ROOT is not installed")
    path = tmp_path_factory.mktemp("files") / "nested.root"
    result = subprocess.run(
        [sys.executable, "-c", _WRITE_NESTED, str(path)], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0 or not path.is_file():
        pytest.skip(f"ROOT could not write the test file: {result.stderr[-500:]}")
    return path


def test_open_is_a_context_manager() -> None:
    path = _data("ntpl001_staff_rntuple_v1-0-0-0.root")
    with rntuple.open(path) as f:
        assert isinstance(f, rntuple.File)
        assert f.path == str(path)
        staff = f["Staff"]
    assert f.closed
    with pytest.raises(ValueError, match="closed"):
        f["Staff"]
    # an RNTuple outlives its file object
    assert staff.num_entries == 3354


def test_open_accepts_pathlike_and_str() -> None:
    path = _data("test_int_float_rntuple_v1-0-0-0.root")
    assert rntuple.open(str(path)).keys() == rntuple.open(path).keys()


def test_keys_and_classnames() -> None:
    f = rntuple.open(_data("rntviewer-testfile-multiple-rntuples-v1-0-0-0.root"))
    assert f.keys() == ["A;1", "B;1"]
    assert f.keys(cycle=False) == ["A", "B"]
    assert f.classnames() == {"A;1": "ROOT::RNTuple", "B;1": "ROOT::RNTuple"}
    assert f.rntuple_names() == ["A", "B"]
    assert "A" in f and "A;1" in f and "C" not in f and "A;2" not in f
    assert list(f) == ["A;1", "B;1"]
    assert len(f) == 2


def test_keys_like_uproot(nested_file: Path) -> None:
    uproot = pytest.importorskip("uproot")
    ours = rntuple.open(nested_file)
    theirs = uproot.open(nested_file)
    assert ours.keys() == theirs.keys()
    assert ours.keys(cycle=False) == theirs.keys(cycle=False)
    assert ours.keys(recursive=False) == theirs.keys(recursive=False)
    assert ours.classnames() == theirs.classnames()
    assert ours.keys(filter_classname="ROOT::RNTuple") == ["top;1", "dir/sub/nt;1"]
    assert ours.keys(filter_name="dir/*", cycle=False) == ["dir/sub", "dir/sub/nt"]
    assert ours.keys(filter_name="hist") == ["hist;2", "hist;1"]


def test_subdirectory_paths(nested_file: Path) -> None:
    f = rntuple.open(nested_file)
    for where in ["dir/sub/nt", "dir/sub/nt;1", "/dir/sub/nt", "dir;1/sub;1/nt;1"]:
        nt = f[where]
        assert nt.name == "dir/sub/nt"
        assert nt.num_entries == 5
    assert f["dir/sub/nt"].arrays().to_list() == [
        {"x": 0, "v": [1.0]},
        {"x": 1, "v": []},
        {"x": 2, "v": [2.0, 3.0]},
        {"x": 3, "v": []},
        {"x": 4, "v": [4.0]},
    ]
    assert f["top"].arrays(library="np")["y"].tolist() == [0.0, 1.0, 2.0]


def test_reads_rntuples_written_by_uproot(tmp_path: Path) -> None:
    uproot = pytest.importorskip("uproot")
    ak = pytest.importorskip("awkward")
    path = tmp_path / "by_uproot.root"
    data = {"x": np.arange(5, dtype=np.int32), "v": ak.Array([[1.0], [], [2.0, 3.0], [], [4.0]])}
    with uproot.recreate(path) as f:
        f.mkrntuple("dir/nt", data)
    got = rntuple.open(path)["dir/nt"].arrays()
    assert got.to_list() == uproot.open(path)["dir/nt"].arrays().to_list()


def test_non_rntuple_key_is_a_clear_error(nested_file: Path) -> None:
    f = rntuple.open(nested_file)
    with pytest.raises(TypeError, match="TH1D"):
        f["hist"]
    with pytest.raises(TypeError, match="TDirectory"):
        f["dir"]
    tree_file = _data("nanoAOD_2015_CMS_Open_Data_ttbar.root")
    with pytest.raises(TypeError, match="TTree"):
        rntuple.open(tree_file)["Events"]


def test_missing_key_is_key_error(nested_file: Path) -> None:
    f = rntuple.open(nested_file)
    for where in ["nope", "top;2", "dir/nope", "nope/nt", "dir/sub/nt;7"]:
        with pytest.raises(KeyError):
            f[where]
    assert f.get("nope") is None


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        rntuple.open(tmp_path / "does-not-exist.root")


def test_not_a_root_file_is_format_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.root"
    path.write_bytes(b"this is not a ROOT file" * 10)
    with pytest.raises(rntuple.FormatError):
        rntuple.open(path)


def test_truncated_file_is_format_error(tmp_path: Path) -> None:
    original = _data("test_int_float_rntuple_v1-0-0-0.root").read_bytes()
    path = tmp_path / "cut.root"
    path.write_bytes(original[: len(original) // 2])
    with pytest.raises(rntuple.FormatError):
        f = rntuple.open(path)
        f["ntuple"].arrays()


def test_exception_hierarchy() -> None:
    assert issubclass(rntuple.RNTupleError, Exception)
    for cls in (rntuple.TruncatedError, rntuple.ChecksumError, rntuple.AllocationError, rntuple.DecompressionError):
        assert issubclass(cls, rntuple.FormatError)
    assert issubclass(rntuple.FormatError, rntuple.RNTupleError)
    assert issubclass(rntuple.UnsupportedError, rntuple.RNTupleError)
    assert not issubclass(rntuple.UnsupportedError, rntuple.FormatError)
    assert rntuple.RNTupleError is rntuple._lib.RNTupleError


def test_unknown_field_is_key_error() -> None:
    nt = rntuple.open(_data("test_int_float_rntuple_v1-0-0-0.root"))["ntuple"]
    with pytest.raises(KeyError, match="no_such_field"):
        nt.arrays(["no_such_field"])
    with pytest.raises(KeyError):
        nt["no_such_field"]
    with pytest.raises(KeyError):
        nt._inner.read(["no_such_field"])


def test_rntuple_metadata() -> None:
    nt = rntuple.open(_data("test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root"))["ntuple"]
    assert nt.name == "ntuple"
    assert len(nt) == nt.num_entries == 5
    assert nt.keys(recursive=False) == ["one_integers", "two_v_floats", "three_LV", "four_v_LVs"]
    assert nt.keys(filter_name="*_v_*", recursive=False) == ["two_v_floats", "four_v_LVs"]
    assert "three_LV.pt" in nt.keys(recursive=True)
    assert "one_integers" in nt and "pt" not in nt
    assert isinstance(nt.typenames()["two_v_floats"], str)
    vec = nt["two_v_floats"]
    assert isinstance(vec, rntuple.Field)
    assert vec.kind == "collection"
    assert vec.children[0].kind == "primitive"
    assert vec.children[0].parent is vec
    assert nt["three_LV.pt"].type_name == "float"
    assert nt["three_LV/pt"] is nt["three_LV.pt"]
    tree = nt.field_tree()
    assert tree[0]["name"] == "one_integers" and set(tree[0]) >= {"id", "type_name", "kind", "columns", "children"}
    assert all(isinstance(c, rntuple.Column) for c in nt.columns)
    assert {c.field_id for c in nt.columns} >= {vec.id, vec.children[0].id}
    clusters = nt.clusters
    assert clusters[0].first_entry == 0
    assert sum(c.num_entries for c in clusters) == nt.num_entries
    assert repr(nt).startswith("<RNTuple 'ntuple' (5 entries, 4 top-level fields)")


def test_show_prints(capsys) -> None:
    nt = rntuple.open(_data("test_int_float_rntuple_v1-0-0-0.root"))["ntuple"]
    nt.show()
    printed = capsys.readouterr().out
    assert "one_integers" in printed
    buffer = io.StringIO()
    nt.show(stream=buffer)
    assert buffer.getvalue() == printed


def test_entry_bounds_like_python_slices() -> None:
    nt = rntuple.open(_data("test_int_5e4_rntuple_v1-0-0-0.root"))["ntuple"]
    everything = nt.arrays(library="np")["one_integers"]
    for start, stop in [(None, None), (10, 20), (-5, None), (None, -49990), (-60000, 3), (100, 50), (60000, None)]:
        got = nt.arrays(entry_start=start, entry_stop=stop, library="np")["one_integers"]
        np.testing.assert_array_equal(got, everything[start:stop])


def test_library_names() -> None:
    nt = rntuple.open(_data("test_int_float_rntuple_v1-0-0-0.root"))["ntuple"]
    assert isinstance(nt.arrays(library="np"), dict)
    assert isinstance(nt.arrays(library="numpy"), dict)
    with pytest.raises(ValueError, match="library"):
        nt.arrays(library="polars-maybe-one-day")


def test_filter_forms() -> None:
    nt = rntuple.open(_data("test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root"))["ntuple"]
    assert nt.arrays(filter_name="one_*").fields == ["one_integers"]
    assert nt.arrays(filter_name="/^T.*/i").fields == ["two_v_floats", "three_LV"]
    assert nt.arrays(filter_name=["one_integers", "four*"]).fields == ["one_integers", "four_v_LVs"]
    assert nt.arrays(filter_name=lambda name: name.startswith("t")).fields == ["two_v_floats", "three_LV"]
    assert nt.arrays(filter_name="nothing").fields == []
    assert len(nt.arrays(filter_name="nothing")) == 5
    with pytest.raises(TypeError):
        nt.arrays(filter_name=42)


def test_verify_checksums_flag() -> None:
    path = _data("test_int_float_rntuple_v1-0-0-0.root")
    a = rntuple.open(path, verify_checksums=False)["ntuple"].arrays()
    b = rntuple.open(path)["ntuple"].arrays()
    assert a.to_list() == b.to_list()


def test_version_and_typing_marker() -> None:
    assert isinstance(rntuple.__version__, str) and rntuple.__version__
    package = Path(rntuple.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_lib.pyi").is_file()


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "rntuple", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_cli_help() -> None:
    result = _run_cli("--help")
    assert result.returncode == 0, result.stderr
    assert "rntuple" in result.stdout.lower()
    assert "Usage" in result.stdout or "usage" in result.stdout


def test_cli_ls() -> None:
    path = _data("rntviewer-testfile-multiple-rntuples-v1-0-0-0.root")
    result = _run_cli("ls", str(path))
    assert result.returncode == 0, result.stderr
    assert "A" in result.stdout and "B" in result.stdout


def test_cli_error_status(tmp_path: Path) -> None:
    result = _run_cli("ls", str(tmp_path / "missing.root"))
    assert result.returncode != 0
    result = _run_cli("--no-such-option")
    assert result.returncode != 0


def test_console_script_entry_point() -> None:
    from importlib.metadata import entry_points

    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert scripts.get("rntuple") == "rntuple.__main__:main"


def test_filter_and_size_helpers() -> None:
    from rntuple._filters import make_filter, parse_memory_size

    assert make_filter(None)("anything")
    assert make_filter("Muon_*")("Muon_pt") and not make_filter("Muon_*")("nMuon")
    assert make_filter("/^muon_p[th]/i")("Muon_phi") and not make_filter("/^muon_p[th]/")("Muon_phi")
    assert make_filter("Muon_pt")("Muon_pt") and not make_filter("Muon_pt")("Muon_pt2")
    assert make_filter(["a", "b*"])("bc") and not make_filter(["a", "b*"])("c")
    assert parse_memory_size(123) == 123
    assert parse_memory_size("100 MB") == 100_000_000
    assert parse_memory_size("1.5kB") == 1500
    assert parse_memory_size("2 GiB") == 2 << 30
    assert parse_memory_size("10 B") == 10
    for bad in ["100 parsecs", "MB", True]:
        with pytest.raises((ValueError, TypeError)):
            parse_memory_size(bad)
