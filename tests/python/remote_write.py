"""What the remote-writing tests share: the data they write, ROOT 6.40's reading of the bytes that
landed, and a writer process to SIGKILL mid-file."""

from __future__ import annotations

import json
import subprocess
import sys

import awkward as ak
import numpy as np
from conftest import root_python


def small_events(n: int = 3000) -> ak.Array:
    """A few clusters' worth of ``id`` (int64) and ``v`` (a collection of doubles)."""
    ids = np.arange(n, dtype=np.int64)
    return ak.Array({"id": ids, "v": [[i + 0.5] * (i % 4) for i in range(n)]})


def big_events(mib: int, seed: int = 1) -> ak.Array:
    """Incompressible doubles, ``mib`` MiB of them, so that uncompressed the file spans several
    multipart parts of 5 MiB."""
    n = mib * (1 << 20) // 8
    return ak.Array({"x": np.random.default_rng(seed).random(n)})


ROOT_SUMS = r"""
import json, sys
import ROOT
df = ROOT.RDataFrame("Events", sys.argv[1])
out = {"entries": df.Count()}
if sys.argv[2] == "x":
    out["x"] = df.Sum("x")
else:
    out["id"] = df.Sum("id")
    out["v"] = df.Define("vs", "ROOT::VecOps::Sum(v)").Sum("vs")
print("RESULT " + json.dumps({k: r.GetValue() for k, r in out.items()}))
"""


def root_sums(path: str, fields: str) -> dict:
    """Entry count and sums of ``fields`` (``"id"``: id and v; ``"x"``) as ROOT reads the file."""
    proc = subprocess.run([root_python(), "-c", ROOT_SUMS, path, fields], capture_output=True, text=True)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, f"ROOT failed:\n{proc.stderr[-3000:]}"
    return json.loads(line[0][len("RESULT ") :])


def expected_sums(events: ak.Array) -> dict:
    out: dict = {"entries": len(events)}
    if "x" in events.fields:
        out["x"] = float(np.sum(events.x))
    if "id" in events.fields:
        out["id"] = int(np.sum(events.id))
        out["v"] = float(ak.sum(events.v))
    return out


def assert_root_reads(path: str, events: ak.Array) -> None:
    fields = "x" if "x" in events.fields else "id"
    got, want = root_sums(path, fields), expected_sums(events)
    assert got["entries"] == want["entries"]
    for k in want:
        assert np.isclose(got[k], want[k], rtol=1e-12), (k, got, want)


# A writer that commits clusters to URL forever (until killed), printing "COMMITTED n" after each.
ENDLESS_WRITER = r"""
import sys
import numpy as np
import rntuple
url = sys.argv[1]
f = rntuple.recreate(url, compression=0)
w = f.mkrntuple("Events", rntuple.schema_of({"x": np.zeros(1)}))
rng = np.random.default_rng(3)
n = 0
while True:
    w.extend({"x": rng.random(1 << 17)})
    w.commit_cluster()
    n += 1
    print("COMMITTED", n, flush=True)
"""


def start_endless_writer(url: str, env: dict) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", ENDLESS_WRITER, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def wait_for_commits(proc: subprocess.Popen[str], n: int) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("COMMITTED") and int(line.split()[1]) >= n:
            return
    raise AssertionError(f"the writer ended early: {proc.stderr.read() if proc.stderr else ''}")
