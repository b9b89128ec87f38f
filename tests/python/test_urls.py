"""A URL is accepted everywhere a path is (issue 12): ``file://`` URLs and a
registered test scheme (``_lib._register_test_scheme``: a local file served
as a remote store would be) in ``open``, reads, pickling, ``draw``,
``convert``, ``merge`` and every command of the ``rntuple`` CLI."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import urllib.parse

import numpy as np
import pyarrow.parquet as pq
import pytest
import rntuple
from rntuple import _lib

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")

_lib._register_test_scheme("pytestremote")


def file_url(path: str) -> str:
    return "file://" + urllib.parse.quote(os.path.abspath(path))


def registered_url(path: str) -> str:
    return "pytestremote://host" + os.path.abspath(path)


LOCATIONS = [pytest.param(file_url, id="file"), pytest.param(registered_url, id="registered")]


def as_lists(a) -> list:
    return a.to_list()


@pytest.mark.parametrize("to_url", LOCATIONS)
def test_open_read_iterate_and_pickle(to_url):
    url = to_url(MUONS)
    local = rntuple.open(MUONS)["Events"]
    with rntuple.open(url) as f:
        nt = f["Events"]
        assert as_lists(nt.arrays(["nMuon", "Muon_pt"])) == as_lists(local.arrays(["nMuon", "Muon_pt"]))
        parts = [as_lists(b["nMuon"]) for b in nt.iterate(["nMuon"], step_size=300)]
        assert sum(parts, []) == as_lists(local.arrays(["nMuon"])["nMuon"])
        again = pickle.loads(pickle.dumps(nt))
        assert as_lists(again.arrays(["Muon_eta"])) == as_lists(local.arrays(["Muon_eta"]))
        assert pickle.loads(pickle.dumps(f)).rntuple_names() == ["Events"]


@pytest.mark.parametrize("to_url", LOCATIONS)
def test_draw(to_url):
    by_path = rntuple.draw(f"{MUONS}:Events", "Muon_pt", bins=7, range=(0, 70))
    by_url = rntuple.draw(f"{to_url(MUONS)}:Events", "Muon_pt", bins=7, range=(0, 70))
    np.testing.assert_array_equal(by_url.counts, by_path.counts)
    assert (by_url.underflow, by_url.overflow) == (by_path.underflow, by_path.overflow)
    named = rntuple.draw(to_url(MUONS), "nMuon", name="Events", bins=3, range=(0, 3))
    assert named.counts.sum() + named.overflow + named.underflow == 1000


@pytest.mark.parametrize("to_url", LOCATIONS)
def test_convert(to_url, tmp_path):
    rntuple.convert(f"{MUONS}:Events", tmp_path / "path.parquet")
    rntuple.convert(f"{to_url(MUONS)}:Events", tmp_path / "url.parquet")
    assert pq.read_table(tmp_path / "url.parquet").equals(pq.read_table(tmp_path / "path.parquet"))


@pytest.mark.parametrize("to_url", LOCATIONS)
def test_merge(to_url, tmp_path):
    out = tmp_path / "merged.root"
    s = rntuple.merge(out, [to_url(MUONS), to_url(MUONS)])
    assert s.entries == 2000
    merged = rntuple.open(out)["Events"].arrays(["nMuon"])
    local = rntuple.open(MUONS)["Events"].arrays(["nMuon"])
    assert as_lists(merged["nMuon"]) == as_lists(local["nMuon"]) * 2


def cli(*args: str, cwd: str) -> subprocess.CompletedProcess:
    exe = shutil.which("rntuple")
    assert exe, "the rntuple command is not installed"
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.mark.parametrize(
    "args",
    [
        ["ls", "{}"],
        ["show", "{}:Events"],
        ["dump", "{}:Events", "--entries", "0:5"],
        ["inspect", "{}:Events", "--json"],
        ["verify", "{}"],
        ["draw", "{}:Events", "nMuon", "--bins", "4", "-o", "{out}.png"],
        ["convert", "{}:Events", "{out}.parquet"],
        ["merge", "{out}.root", "{}", "{}"],
    ],
    ids=lambda a: a[0],
)
def test_every_cli_command_takes_a_file_url(args, tmp_path):
    def run(location: str, tag: str) -> subprocess.CompletedProcess:
        filled = [a.replace("{}", location).replace("{out}", str(tmp_path / tag)) for a in args]
        return cli(*filled, cwd=str(tmp_path))

    by_path, by_url = run(MUONS, "path"), run(file_url(MUONS), "url")
    assert by_path.returncode == 0, by_path.stderr
    assert by_url.returncode == 0, by_url.stderr
    norm = [
        (p.stdout.replace(loc, "F").replace(str(tmp_path), "T").replace("url", "X").replace("path", "X"))
        for p, loc in ((by_path, MUONS), (by_url, file_url(MUONS)))
    ]
    assert norm[0] == norm[1]
