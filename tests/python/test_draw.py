"""``rntuple draw`` run as a user runs it (the ``rntuple`` command in a subprocess, real files).

Every histogram is checked against ``numpy.histogram`` of values read
independently with uproot and computed with numpy/awkward here; the PNG is
checked to be a valid image. Expressions outside the whitelist are refused
(nothing is evaluated), bad arguments are usage errors (exit 2), failures exit
1 with a message and leave no PNG behind, and only the fields an expression
uses are read.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
import rntuple
import uproot
from conftest import DATA

MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
NANO = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")


def cli() -> list[str]:
    exe = shutil.which("rntuple", path=os.path.dirname(sys.executable)) or shutil.which("rntuple")
    return [exe] if exe else [sys.executable, "-m", "rntuple"]


def run(*args: str, check: int | None = 0, cwd: str | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*cli(), "draw", *args], capture_output=True, text=True, cwd=cwd)
    if check is not None:
        assert proc.returncode == check, f"rntuple draw {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def png_size(path) -> tuple[int, int]:
    """(width, height) of a PNG, checking its signature and header chunk."""
    with open(path, "rb") as fh:
        head = fh.read(33)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", head[:8]
    length, kind = struct.unpack(">I4s", head[8:16])
    assert (length, kind) == (13, b"IHDR")
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def muons():
    return uproot.open(MUONS)["Events"].arrays(["Muon_pt", "Muon_eta", "Muon_phi", "Muon_charge", "nMuon"])


@pytest.fixture(scope="module")
def nano():
    return uproot.open(NANO)["Events"].arrays(["MET_pt", "Jet_pt", "Jet_eta", "nJet"])


def flat(x) -> np.ndarray:
    return ak.to_numpy(ak.flatten(x, axis=None)).astype(np.float64)


# (file, expression, cut, bins, range, expected values from the uproot arrays)
CASES = {
    "field": (MUONS, "Muon_pt", None, 40, (0, 100), lambda m: flat(m.Muon_pt)),
    "expression, cut per entry": (
        MUONS,
        "sqrt(Muon_pt**2 + Muon_eta**2)",
        "nMuon >= 2",
        50,
        (0, 200),
        lambda m: flat(np.sqrt(m.Muon_pt[m.nMuon >= 2] ** 2 + m.Muon_eta[m.nMuon >= 2] ** 2)),
    ),
    "cut per element": (MUONS, "Muon_pt", "Muon_charge > 0", 30, (0, 60), lambda m: flat(m.Muon_pt[m.Muon_charge > 0])),
    "index": (
        MUONS,
        "Muon_pt[1]",
        None,
        25,
        (0, 50),
        lambda m: flat(m.Muon_pt[ak.num(m.Muon_pt) > 1][:, 1]),
    ),
    "reductions and logic": (
        MUONS,
        "sum(Muon_pt)",
        "nMuon == 2 and sum(Muon_charge) == 0",
        20,
        (0, 200),
        lambda m: flat(ak.sum(m.Muon_pt, axis=1)[(m.nMuon == 2) & (ak.sum(m.Muon_charge, axis=1) == 0)]),
    ),
    "len, default range": (MUONS, "len(Muon_pt)", None, 10, None, lambda m: flat(ak.num(m.Muon_pt))),
    "functions, negation": (
        MUONS,
        "-abs(Muon_pt * cos(Muon_phi))",
        "not (Muon_charge < 0)",
        64,
        None,
        lambda m: flat(-np.abs((m.Muon_pt * np.cos(m.Muon_phi))[~(m.Muon_charge < 0)])),
    ),
    "broadcast a flat field over a collection": (
        NANO,
        "MET_pt / Jet_pt",
        "(Jet_eta > 0) & (MET_pt > 20)",
        16,
        (0, 8),
        lambda n: flat((n.MET_pt / n.Jet_pt)[(n.Jet_eta > 0) & (n.MET_pt > 20)]),
    ),
}


def expected_histogram(values: np.ndarray, bins: int, rng) -> dict:
    values = values[~np.isnan(values)]
    if rng is None:
        rng = (values.min(), values.max())
    counts, edges = np.histogram(values, bins=bins, range=rng)
    inside = values[(values >= rng[0]) & (values <= rng[1])]
    return {
        "counts": counts.tolist(),
        "edges": edges,
        "underflow": int((values < rng[0]).sum()),
        "overflow": int((values > rng[1]).sum()),
        "entries": int(values.size),
        "mean": float(inside.mean()),
    }


@pytest.mark.parametrize("case", list(CASES))
def test_histogram_counts_are_numpys(case, tmp_path, muons, nano):
    path, expression, cut, bins, rng, values_of = CASES[case]
    out = tmp_path / "h.png"
    args = [f"{path}:Events", expression, "-o", str(out), "--bins", str(bins), "--json"]
    if cut:
        args += ["--cut", cut]
    if rng:
        args += ["--range", str(rng[0]), str(rng[1])]
    got = json.loads(run(*args).stdout)
    expected = expected_histogram(values_of(muons if path == MUONS else nano), bins, rng)
    assert got["counts"] == expected["counts"]
    np.testing.assert_allclose(got["edges"], expected["edges"], rtol=0, atol=1e-12)
    assert (got["underflow"], got["overflow"], got["entries"]) == (
        expected["underflow"],
        expected["overflow"],
        expected["entries"],
    )
    assert math.isclose(got["mean"], expected["mean"], rel_tol=1e-9)
    assert sum(got["counts"]) > 0
    assert png_size(out) == (800, 600)


def test_png_and_summary_line(tmp_path):
    out = tmp_path / "muon_pt.png"
    proc = run(MUONS, "Muon_pt", "-o", str(out), "--logy", "--title", "muons")
    assert proc.stdout.startswith(f"wrote {out}: Muon_pt: 100 bins over [")
    assert png_size(out) == (800, 600)
    import matplotlib.image

    image = matplotlib.image.imread(out)
    assert image.shape[:2] == (600, 800) and image.std() > 0  # not a blank image
    assert sorted(os.listdir(tmp_path)) == ["muon_pt.png"]


def test_nan_values_and_python_api(tmp_path):
    values = np.array([1.0, np.nan, 2.0, 3.0, np.inf, -np.inf, 2.5, np.nan], dtype=np.float64)
    jagged = ak.Array([[0.5, np.nan], [], [1.5]] * 2 + [[2.5], [np.nan]])
    path = tmp_path / "nan.root"
    with rntuple.recreate(path) as f:
        f["T"] = {"x": values, "j": jagged}
    x = uproot.open(path)["T"].arrays(["x"]).x.to_numpy()
    h = rntuple.draw(f"{path}:T", "x", bins=4, range=(0, 4))
    assert isinstance(h, rntuple.Histogram) and h.output is None
    assert h.counts.tolist() == np.histogram(x[np.isfinite(x)], bins=4, range=(0, 4))[0].tolist()
    assert (h.nan, h.underflow, h.overflow, h.entries) == (2, 1, 1, 6)
    # default range: the finite values' smallest and largest
    h = rntuple.draw(str(path), "j", name="T", bins=3)
    finite = np.array([0.5, 1.5, 0.5, 1.5, 2.5])
    counts, edges = np.histogram(finite, bins=3)
    assert h.counts.tolist() == counts.tolist() == [2, 2, 1]
    assert h.edges.tolist() == edges.tolist() and h.nan == 3


def test_only_the_fields_used_are_read(monkeypatch):
    read = []
    original = rntuple.RNTuple._read_batch

    def spy(self, fields, *args, **kwargs):
        read.append(sorted(f.name for f in fields))
        return original(self, fields, *args, **kwargs)

    monkeypatch.setattr(rntuple.RNTuple, "_read_batch", spy)
    rntuple.draw(NANO + ":Events", "MET_pt * nJet", cut="Jet_pt[0] > 30", bins=5)
    assert read and all(names == ["Jet_pt", "MET_pt", "nJet"] for names in read)


@pytest.mark.parametrize(
    "expression, message",
    [
        ("__import__('os').system('touch pwned')", "unknown function \"__import__('os').system\""),
        ("__import__('os')", "unknown function '__import__'"),
        ("Muon_pt.__class__", "no member '__class__'"),
        ("(lambda: 1)()", "unknown function 'lambda: 1'"),
        ("lambda: 1", "Lambda is not allowed"),
        ("[x for x in Muon_pt]", "ListComp is not allowed"),
        ("Muon_pt if nMuon else 0", "IfExp is not allowed"),
        ("'text'", "only numbers can be constants"),
        ("Muon_ptt", "no field 'Muon_ptt'"),
        ("sqrt", "sqrt is a function: call it"),
        ("sqrt(Muon_pt, 2)", "sqrt() takes 1 argument(s), not 2"),
        ("sqrt(x=Muon_pt)", "takes positional arguments only"),
        ("Muon_pt[-1]", "an index must be a non-negative integer"),
        ("Muon_pt +", "syntax error"),
        ("nMuon.x", "no member 'x'"),
        ("1 + 2", "uses no field"),
        ("_collection0", "is a record"),
        ("len(nMuon)", "len() takes a collection"),
    ],
)
def test_expressions_outside_the_whitelist_are_refused(tmp_path, expression, message):
    out = tmp_path / "x.png"
    with pytest.raises(rntuple.DrawError) as err:
        rntuple.draw(f"{MUONS}:Events", expression, out)
    assert message in str(err.value)
    assert os.listdir(tmp_path) == []  # nothing evaluated, no PNG


def test_refused_expressions_on_the_command_line(tmp_path):
    for expression in ("__import__('os').system('touch pwned')", "Muon_pt.__class__", "Muon_pt +"):
        proc = run(MUONS, expression, "-o", str(tmp_path / "x.png"), check=1, cwd=str(tmp_path))
        assert proc.stderr.startswith(f"rntuple draw: error: expression {expression!r}"), proc.stderr
    assert os.listdir(tmp_path) == []


def test_failures(tmp_path):
    out = str(tmp_path / "x.png")
    cases = [
        ([str(tmp_path / "missing.root"), "x"], "missing.root: no such file"),
        ([f"{MUONS}:Nope", "Muon_pt"], "'Nope' not found"),
        ([os.path.join(DATA, "rntviewer-testfile-multiple-rntuples-v1-0-0-0.root"), "x"], "choose one with FILE:NAME"),
        ([NANO, "Jet_pt", "--cut", "Muon_pt > 3"], "their collections have different lengths"),
        ([NANO, "Jet_pt + Muon_pt"], "expression 'Jet_pt + Muon_pt'"),
    ]
    for args, message in cases:
        proc = run(*args, "-o", out, check=1)
        assert message in proc.stderr, (args, proc.stderr)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "args, message",
    [
        ([MUONS, "Muon_pt"], "the following arguments are required: --output/-o"),
        ([MUONS], "the following arguments are required: EXPR"),
        ([MUONS, "Muon_pt", "-o", "x.png", "--bins", "0"], "must be at least 1"),
        ([MUONS, "Muon_pt", "-o", "x.png", "--bins", "many"], "not an integer"),
        ([MUONS, "Muon_pt", "-o", "x.png", "--range", "5", "1"], "LO must be less than HI"),
        ([MUONS, "Muon_pt", "-o", "x.png", "--range", "1"], "expected 2 arguments"),
        ([MUONS, "Muon_pt", "-o", "x.png", "--entries", "7"], "expected A:B"),
    ],
)
def test_usage_errors(tmp_path, args, message):
    proc = run(*args, check=2, cwd=str(tmp_path))
    assert "usage: rntuple draw" in proc.stderr and message in proc.stderr, proc.stderr
    assert os.listdir(tmp_path) == []


def test_entry_range(tmp_path, muons):
    got = json.loads(run(MUONS, "Muon_pt", "-o", str(tmp_path / "e.png"), "--entries", "100:300", "--json").stdout)
    values = flat(muons.Muon_pt[100:300])
    assert got["counts"] == np.histogram(values, bins=100, range=(values.min(), values.max()))[0].tolist()


def test_missing_matplotlib_is_a_clear_error(tmp_path):
    code = "import sys; sys.modules['matplotlib'] = None; from rntuple.__main__ import main; main(sys.argv)"
    proc = subprocess.run(
        [sys.executable, "-c", code, "draw", MUONS, "Muon_pt", "-o", str(tmp_path / "x.png")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "writing a PNG needs matplotlib: pip install matplotlib" in proc.stderr
    assert os.listdir(tmp_path) == []
