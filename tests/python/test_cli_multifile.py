"""``rntuple merge``, ``convert`` and ``draw`` over several files: lists, quoted globs and FILE:NAME."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import awkward as ak
import numpy as np
import pyarrow.parquet as pq
import pytest
import rntuple
import uproot


def cli() -> list[str]:
    exe = shutil.which("rntuple", path=os.path.dirname(sys.executable)) or shutil.which("rntuple")
    return [exe] if exe else [sys.executable, "-m", "rntuple"]


def run(*args: str, check: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([*cli(), *args], capture_output=True, text=True)
    assert proc.returncode == check, f"rntuple {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    d = tmp_path_factory.mktemp("multi")
    values = []
    for i, n in enumerate((30, 45, 25)):
        x = np.random.default_rng(i).normal(10, 3, n)
        values.append(x)
        with rntuple.recreate(str(d / f"part{i}.root")) as f:
            f["Events"] = {"x": x, "i": np.full(n, i, dtype=np.int32)}
    with rntuple.recreate(str(d / "other.root")) as f:
        f["Other"] = {"x": np.ones(3)}
    with rntuple.recreate(str(d / "wrong.root")) as f:
        f["Events"] = {"y": np.ones(3)}
    return {"dir": str(d), "x": np.concatenate(values)}


def test_merge_takes_a_quoted_glob_with_a_name(parts: dict, tmp_path: object) -> None:
    out = os.path.join(str(tmp_path), "merged.root")
    p = run("merge", out, os.path.join(parts["dir"], "part*.root:Events"))
    assert "merged 3 inputs" in p.stdout
    assert uproot.open(out)["Events"].arrays()["x"].to_list() == parts["x"].tolist()
    with rntuple.open(out) as f:
        assert f["Events"]["i"] is not None and f["Events"].arrays()["i"].to_list() == [0] * 30 + [1] * 45 + [2] * 25


def test_merge_input_names_must_agree(parts: dict, tmp_path: object) -> None:
    d = parts["dir"]
    out = os.path.join(str(tmp_path), "bad.root")
    p = run("merge", out, f"{d}/part0.root:Events", f"{d}/other.root:Other", check=2)
    assert "other.root:Other names another RNTuple than 'Events'" in p.stderr
    p = run("merge", out, f"{d}/nothing*.root", check=1)
    assert "nothing*.root: no file matches the pattern" in p.stderr
    assert not os.path.exists(out)


def test_convert_several_rntuples_to_parquet(parts: dict, tmp_path: object) -> None:
    out = os.path.join(str(tmp_path), "all.parquet")
    run("convert", os.path.join(parts["dir"], "part*.root:Events"), out, "-q")
    assert pq.read_table(out).column("x").to_pylist() == parts["x"].tolist()
    p = run("convert", f"{parts['dir']}/part0.root", f"{parts['dir']}/wrong.root", out, check=1)
    assert "field 'x' differs between chained files" in p.stderr and "wrong.root (missing)" in p.stderr


def test_draw_histograms_the_chain(parts: dict, tmp_path: object) -> None:
    d = parts["dir"]
    png = os.path.join(str(tmp_path), "x.png")
    p = run("draw", f"{d}/part[01].root:Events", "x", "-o", png, "--chain", f"{d}/part2.root", "--json")
    got = json.loads(p.stdout)
    counts, _ = np.histogram(parts["x"], bins=100, range=(parts["x"].min(), parts["x"].max()))
    assert got["counts"] == counts.tolist() and got["entries"] == 100
    assert os.path.getsize(png) > 0
    # The Python API: a list, a glob, an entry range over the chain.
    h = rntuple.draw(os.path.join(d, "part*.root"), "x", bins=10, range=(0, 20), entry_start=20, entry_stop=90)
    want, _ = np.histogram(parts["x"][20:90], bins=10, range=(0, 20))
    assert h.counts.tolist() == want.tolist()
    h = rntuple.draw([f"{d}/part0.root", f"{d}/part2.root"], "x * 2", cut="i == 2", bins=5, range=(0, 40))
    assert h.entries == 25


def test_concatenate_matches_uproot_on_the_same_glob(parts: dict) -> None:
    pattern = os.path.join(parts["dir"], "part*.root")
    ours = rntuple.concatenate(pattern, "x")
    # uproot's glob gives the directory's order; ours is sorted: compare with the sorted list.
    theirs = uproot.concatenate({p: "Events" for p in sorted(glob.glob(pattern))}, ["x"])
    assert ak.to_list(ours) == ak.to_list(theirs)
