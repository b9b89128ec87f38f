"""Reading from S3: ``rntuple.open("s3://bucket/key")`` and the command line against a real
``moto_server`` (server_s3.py) filled with boto3; the endpoint and fake credentials come from the
standard AWS variables, as a user sets them for an on-premise S3 store."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
import rntuple
from server_http import events_file, same  # noqa: F401 (events_file: the `events` fixture)
from server_s3 import Moto

COLUMNS = ["nMuon", "Muon_pt", "Muon_charge"]


@pytest.fixture(scope="module")
def moto(events, tmp_path_factory):
    server = Moto(str(tmp_path_factory.mktemp("moto")))
    s3 = server.client()
    s3.create_bucket(Bucket="physics")
    s3.upload_file(events, "physics", "run1/events.root")
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def s3_environment(moto, monkeypatch):
    for name, value in moto.settings().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RNTUPLE_HTTP_RETRIES", "1")


def test_arrays_from_s3_equal_the_local_read(moto, events):
    local = rntuple.open(events)["Events"]
    before = len(moto.gets())
    with rntuple.open("s3://physics/run1/events.root") as f:
        remote = f["Events"]
        assert [c.num_entries for c in remote.clusters] == [250, 250, 250, 250]
        assert same(remote.arrays(), local.arrays())
        assert same(
            remote.arrays(COLUMNS, entry_start=300, entry_stop=800),
            local.arrays(COLUMNS, entry_start=300, entry_stop=800),
        )
    gets = moto.gets()[before:]
    # Path-style ranged GETs on the custom endpoint, each answered with 206.
    assert gets and all(g == "/physics/run1/events.root 206" for g in gets), gets


def test_missing_objects_name_the_url():
    for url in ("s3://physics/run1/missing.root", "s3://no-such-bucket/events.root"):
        with pytest.raises(FileNotFoundError, match=re.escape(url)):
            rntuple.open(url)
    with pytest.raises(ValueError, match="s3://bucket/key"):
        rntuple.open("s3://physics")


def test_command_line_reads_s3_urls(events):
    exe = shutil.which("rntuple")
    cmd = [exe] if exe else [sys.executable, "-m", "rntuple"]
    p = subprocess.run([*cmd, "ls", "s3://physics/run1/events.root"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Events" in p.stdout
