"""``rntuple.update(path)``: appending entries, and fields, to a finished file, as ``uproot.update``;
ROOT 6.40 and uproot read the result; a failed or killed update leaves the original as it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
import rntuple
import uproot
from conftest import DATA, root_python
from remote_write import assert_root_reads, small_events


def _sha(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _write(path: str, events: ak.Array) -> None:
    with rntuple.recreate(path) as f:
        f["Events"] = events


def _leftovers(directory: str) -> list[str]:
    return [n for n in os.listdir(directory) if "rntuple-update" in n]


def test_update_appends_clusters_read_by_rntuple_uproot_and_root(tmp_path):
    path = str(tmp_path / "events.root")
    first, more = small_events(3000), small_events(2000)
    _write(path, first)
    with rntuple.open(path) as f:
        clusters_before = len(f["Events"].clusters)

    f = rntuple.update(path)
    f["Events"].extend(more)
    f.close()

    both = ak.concatenate([first, more])
    with rntuple.open(path) as f:
        nt = f["Events"]
        assert nt.num_entries == 5000
        assert len(nt.clusters) > clusters_before
        assert ak.to_list(nt.arrays()) == ak.to_list(both)
    with uproot.open(path) as f:
        got = f["Events"].arrays()
        assert ak.to_list(got.id) == ak.to_list(both.id)
        assert ak.to_list(got.v) == ak.to_list(both.v)
    assert_root_reads(path, both)
    assert _leftovers(str(tmp_path)) == []


ROOT_NEW_FIELD = r"""
import json, sys
import ROOT
reader = ROOT.RNTupleReader.Open("Events", sys.argv[1])
w = reader.GetView["double"]("w")
ids = reader.GetView["std::int64_t"]("id")
n = reader.GetNEntries()
print("RESULT " + json.dumps({"entries": n, "w": [w(i) for i in range(n)], "id": [ids(i) for i in range(n)]}))
"""


def test_update_adds_a_field_through_schema_extension(tmp_path):
    path = str(tmp_path / "events.root")
    first = small_events(300)
    _write(path, first)
    more = small_events(200)
    w = np.arange(200, dtype=np.float64) + 0.25
    with rntuple.update(path) as f:
        f["Events"].extend(ak.with_field(more, w, "w"))
        assert "w" in f["Events"].schema.names

    # the original entries read the new field's zero value, ours and uproot's reading agree
    want_w = [0.0] * 300 + w.tolist()
    with rntuple.open(path) as f:
        got = f["Events"].arrays()
        assert got.fields == ["id", "v", "w"]
        assert ak.to_list(got.w) == want_w
        assert ak.to_list(got.id) == list(range(300)) + list(range(200))
    with uproot.open(path) as f:
        assert ak.to_list(f["Events"].arrays(["w"]).w) == want_w

    proc = subprocess.run([root_python(), "-c", ROOT_NEW_FIELD, path], capture_output=True, text=True)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, f"ROOT failed:\n{proc.stderr[-3000:]}"
    root = json.loads(line[0][len("RESULT ") :])
    assert root["entries"] == 500
    assert root["w"] == want_w
    assert root["id"] == list(range(300)) + list(range(200))


def test_update_of_a_root_written_file_keeps_its_types(tmp_path):
    # ROOT 6.40 wrote std::vector<float> and ROOT's own type names: the appended entries must keep
    # them (merge copies the original's pages as stored and refuses differing types).
    src = os.path.join(DATA, "test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root")
    path = str(tmp_path / "root_written.root")
    shutil.copy(src, path)
    with rntuple.open(path) as f:
        nt = f["ntuple"] if "ntuple" in f.rntuple_names() else f[f.rntuple_names()[0]]
        name = nt.name
        before = nt.arrays()
        types = {fd.name: fd.type_name for fd in nt.fields}
    with rntuple.update(path) as u:
        u[name].extend(before)
    with rntuple.open(path) as f:
        nt = f[name]
        assert {fd.name: fd.type_name for fd in nt.fields} == types
        assert ak.to_list(nt.arrays()) == ak.to_list(before) * 2
    with uproot.open(path) as f:
        assert f[name].num_entries == 2 * len(before)


def test_an_exception_in_the_with_block_leaves_the_original(tmp_path):
    path = str(tmp_path / "events.root")
    _write(path, small_events(100))
    sha = _sha(path)
    with pytest.raises(RuntimeError, match="boom"):
        with rntuple.update(path) as f:
            f["Events"].extend(small_events(50))
            raise RuntimeError("boom")
    assert _sha(path) == sha
    assert _leftovers(str(tmp_path)) == []


def test_a_failed_merge_leaves_the_original(tmp_path, monkeypatch):
    path = str(tmp_path / "events.root")
    _write(path, small_events(100))
    sha = _sha(path)
    from rntuple import _lib

    def failing_merge(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_lib, "merge", failing_merge)
    f = rntuple.update(path)
    f["Events"].extend(small_events(50))
    with pytest.raises(OSError, match="No space left"):
        f.close()
    assert _sha(path) == sha
    assert _leftovers(str(tmp_path)) == []


KILLED_UPDATE = r"""
import sys
import numpy as np
import rntuple
with rntuple.update(sys.argv[1]) as f:
    f["Events"].extend({"id": np.arange(5000, dtype=np.int64), "v": [[1.5]] * 5000})
"""


@pytest.mark.parametrize("crash", ["footer:1", "commit:1", "footer:2", "finish:2"])
def test_a_writer_killed_mid_update_leaves_every_original_entry(tmp_path, crash):
    # footer:1 / commit:1 die while the appended entries are written, footer:2 and finish:2 while
    # the merged file is completed (RNTUPLE_CRASH_AT: the process SIGKILLs itself there).
    path = str(tmp_path / "events.root")
    first = small_events(3000)
    _write(path, first)
    sha = _sha(path)
    env = {**os.environ, "RNTUPLE_CRASH_AT": crash}
    proc = subprocess.run([sys.executable, "-c", KILLED_UPDATE, path], env=env, capture_output=True, text=True)
    assert proc.returncode == -9, (proc.returncode, proc.stderr[-2000:])
    assert _sha(path) == sha
    with rntuple.open(path) as f:
        assert ak.to_list(f["Events"].arrays()) == ak.to_list(first)
    assert_root_reads(path, first)


def test_entries_without_the_rntuples_fields_are_refused(tmp_path):
    path = str(tmp_path / "events.root")
    _write(path, small_events(10))
    with rntuple.update(path) as f:
        with pytest.raises(rntuple.InvalidArgumentError, match="lack its field.*'v'"):
            f["Events"].extend({"id": np.arange(3, dtype=np.int64)})
        with pytest.raises(rntuple.UnsupportedError, match=r"f\['Events'\]\.extend"):
            f["Events"] = small_events(3)  # uproot writes a new object here, not an append
    with rntuple.open(path) as f:
        assert f["Events"].num_entries == 10


def test_a_file_with_other_objects_is_refused_unchanged(tmp_path):
    path = str(tmp_path / "two.root")
    with rntuple.recreate(path) as f:
        f["Events"] = small_events(10)
        f["Runs"] = {"run": np.arange(2, dtype=np.int32)}
    sha = _sha(path)
    f = rntuple.update(path)
    with pytest.raises(rntuple.UnsupportedError, match="also holds 'Runs'"):
        f["Events"]
    f.close()
    with pytest.raises(KeyError, match="no RNTuple 'Evnts'.*did you mean 'Events'"):
        f2 = rntuple.update(path)
        f2["Evnts"]
    assert _sha(path) == sha
