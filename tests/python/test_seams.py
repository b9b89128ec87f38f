"""The seams other work plugs into: locations dispatched by URL scheme, handles
that pickle as (path or URL, name, options) and work in other processes, the
place for integrations, one command registry and one progress bar.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import operator
import os
import pathlib
import pickle
import re
import shutil
import subprocess
import sys

import awkward as ak
import pytest
import rntuple
from conftest import DATA
from rntuple import _lib

MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
STL = os.path.join(DATA, "test_stl_containers_rntuple_v1-0-0-0.root")
REPO = os.path.dirname(os.path.dirname(DATA))


def same(a: ak.Array, b: ak.Array) -> bool:
    return a.type == b.type and ak.to_list(a) == ak.to_list(b)


# ---------------------------------------------------------------------------
# URL dispatch
# ---------------------------------------------------------------------------


def test_file_urls_open_local_files(tmp_path):
    copy = tmp_path / "a file with spaces.root"
    shutil.copy(MUONS, copy)
    url = copy.as_uri()
    assert url.startswith("file:///") and "%20" in url
    expected = rntuple.open(MUONS)["Events"].arrays()
    with rntuple.open(url) as f:
        assert f.path == url
        assert same(f["Events"].arrays(), expected)
    with rntuple.open(f"file://localhost{copy}") as f:
        assert f["Events"].num_entries == 1000
    with pytest.raises(FileNotFoundError):
        rntuple.open((tmp_path / "missing.root").as_uri())
    with pytest.raises(ValueError, match="not one on host 'elsewhere'"):
        rntuple.open("file://elsewhere/data.root")


def test_unknown_schemes_are_named():
    url = "gopher://host.example//store/data.root"
    with pytest.raises(rntuple.UnsupportedError, match="unknown URL scheme 'gopher'") as err:
        rntuple.open(url)
    assert url in str(err.value)


def test_the_command_line_takes_urls_too():
    url = pathlib.Path(MUONS).as_uri()
    p = subprocess.run(
        [sys.executable, "-m", "rntuple", "dump", f"{url}:Events", "--entries", "0:2"], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) == 2
    p = subprocess.run(
        [sys.executable, "-m", "rntuple", "ls", "gopher://h.example//d.root"], capture_output=True, text=True
    )
    assert p.returncode == 1 and "unknown URL scheme 'gopher'" in p.stderr


# ---------------------------------------------------------------------------
# pickling
# ---------------------------------------------------------------------------


def test_handles_pickle_as_location_name_and_options(tmp_path, monkeypatch):
    shutil.copy(STL, tmp_path / "stl.root")
    monkeypatch.chdir(tmp_path)
    f = rntuple.open("stl.root", verify_checksums=False, threads=1)  # relative: pickled absolute
    nt = f["ntuple"]
    reopen, args = nt.__reduce__()
    assert args == (str(tmp_path / "stl.root"), "ntuple;1", {"verify_checksums": False, "threads": 1})
    reopen, args = f.__reduce__()
    assert args == (str(tmp_path / "stl.root"), {"verify_checksums": False, "threads": 1})
    g = pickle.loads(pickle.dumps(f))
    assert isinstance(g, rntuple.File) and g.keys() == f.keys()
    again = pickle.loads(pickle.dumps(nt))
    assert isinstance(again, rntuple.RNTuple) and again.name == "ntuple"
    assert same(again.arrays(), nt.arrays())
    f.close()
    with pytest.raises(ValueError, match="closed"):
        pickle.dumps(f)
    # The RNTuple outlives its closed file, and still pickles (it reopens by location).
    assert pickle.loads(pickle.dumps(nt)).num_entries == nt.num_entries


def test_url_handles_pickle_as_urls():
    url = pathlib.Path(MUONS).as_uri()
    nt = rntuple.open(url)["Events"]
    assert nt.__reduce__()[1][0] == url
    assert pickle.loads(pickle.dumps(nt)).num_entries == 1000


def test_an_rntuple_not_from_a_file_does_not_pickle():
    inner = _lib.File(MUONS).rntuple("Events")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(rntuple.RNTuple(inner))


def test_worker_processes_read_the_same_arrays():
    f = rntuple.open(MUONS)
    nt = f["Events"]
    expected = nt.arrays()
    part = nt.arrays(entry_start=100, entry_stop=300)
    # spawn: a fresh interpreter that gets the handles by pickle only.
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        whole = pool.submit(operator.methodcaller("arrays"), nt)
        ranged = pool.submit(operator.methodcaller("arrays", entry_start=100, entry_stop=300), nt)
        from_file = pool.submit(operator.itemgetter("Events"), f)  # a File in, an RNTuple back
        assert same(whole.result(timeout=120), expected)
        assert same(ranged.result(timeout=120), part)
        back = from_file.result(timeout=120)
    assert isinstance(back, rntuple.RNTuple) and same(back.arrays(), expected)


# ---------------------------------------------------------------------------
# integrations, lazy import
# ---------------------------------------------------------------------------


def test_integrations_import_optional_dependencies_lazily():
    from rntuple.integrations import require

    assert require("json", feature="a test") is __import__("json")
    with pytest.raises(
        ImportError,
        match=re.escape("rntuple.dask needs no_such_module_xyz, which is not installed: pip install 'rntuple[dask]'"),
    ):
        require("no_such_module_xyz.sub", feature="rntuple.dask", extra="dask")
    with pytest.raises(ImportError, match="pip install no_such_module_xyz$"):
        require("no_such_module_xyz", feature="a store")


def test_import_rntuple_stays_light():
    code = (
        "import sys, rntuple; "
        "print(sorted(m for m in ('awkward', 'pyarrow', 'numpy', 'uproot', 'rntuple.integrations', 'rntuple._file') "
        "if m in sys.modules))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


# ---------------------------------------------------------------------------
# one command registry, one progress bar, no sideways dependency
# ---------------------------------------------------------------------------

COMMANDS = ["ls", "show", "dump", "inspect", "verify", "merge", "recover", "convert", "draw", "browse", "study", "help"]


def test_help_lists_every_command_once():
    p = subprocess.run([sys.executable, "-m", "rntuple", "--help"], capture_output=True, text=True)
    assert p.returncode == 0
    listed = re.findall(r"^  (\S+)  ", p.stdout.split("Commands:")[1].split("Options:")[0], re.M)
    assert listed == COMMANDS
    # The Python subcommands' help comes from the registry too, with their examples.
    p = subprocess.run([sys.executable, "-m", "rntuple", "draw", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "usage: rntuple draw" in p.stdout and "examples:" in p.stdout


def test_python_subcommands_are_parsed_by_the_registry():
    parsed = _lib.cli_main(["rntuple", "--no-verify", "draw", "f.root:E", "x", "-o", "x.png", "--entries", "-5:"])
    name, args, usage = parsed
    assert name == "draw" and usage.startswith("rntuple draw")
    assert args["entries"] == [-5, None] and args["bins"] == 100 and args["verify_checksums"] is False
    # Rust subcommands run and give their exit status.
    assert _lib.cli_main(["rntuple", "verify", "/nonexistent.root"]) == 1


def test_the_progress_bar_draws_only_when_asked_or_on_a_terminal():
    code = (
        "from rntuple import _lib\n"
        "for enabled in (True, None, False):\n"
        "    bar = _lib.ProgressBar(10, f'bar-{enabled}', enabled)\n"
        "    bar.update(4); bar.update(6); bar.close()\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)  # stderr is a pipe
    assert p.returncode == 0
    assert "bar-True [" in p.stderr and "100%  10/10 entries" in p.stderr and p.stderr.endswith("\n")
    assert "bar-None" not in p.stderr and "bar-False" not in p.stderr


def test_no_crate_depends_on_the_command_line_crate():
    crates = os.path.join(REPO, "crates")
    for name in os.listdir(crates):
        manifest = os.path.join(crates, name, "Cargo.toml")
        if name != "rntuple-cli" and os.path.exists(manifest):
            with open(manifest, encoding="utf-8") as fh:
                assert "rntuple-cli" not in fh.read().split("[dependencies]")[-1], name
