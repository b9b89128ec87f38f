"""Writing to S3: ``rntuple.recreate("s3://bucket/key")`` and the command line against a real
``moto_server`` (server_s3.py), as a multipart upload that completes only when the file does.

Values are read back over the URL; ROOT 6.40 reads the object downloaded with boto3. A writer
that fails, is abandoned or is killed leaves no object; faults come through the tests' proxy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import awkward as ak
import botocore.exceptions
import numpy as np
import pytest
import rntuple
from fault_proxy import FaultProxy
from remote_write import assert_root_reads, big_events, small_events, start_endless_writer, wait_for_commits
from server_s3 import Moto

PART = 5 << 20  # S3's smallest part: a 12 MiB file is three parts


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = Moto(str(tmp_path_factory.mktemp("moto")))
    server.client().create_bucket(Bucket="out")
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def s3_environment(moto, monkeypatch):
    for name, value in moto.settings().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RNTUPLE_S3_PART_SIZE", str(PART))
    monkeypatch.setenv("RNTUPLE_HTTP_RETRIES", "2")


def exists(moto, key: str) -> bool:
    try:
        moto.client().head_object(Bucket="out", Key=key)
        return True
    except botocore.exceptions.ClientError as e:
        assert e.response["Error"]["Code"] in ("404", "NoSuchKey"), e
        return False


def uploads(moto, key: str) -> list[str]:
    """Upload ids of the unfinished multipart uploads of ``key``."""
    answer = moto.client().list_multipart_uploads(Bucket="out", Prefix=key)
    return [u["UploadId"] for u in answer.get("Uploads", [])]


def part_puts(moto, key: str) -> list[int]:
    """Part numbers of the UploadPart requests logged for ``key``, in the order they arrived."""
    with open(moto.log_path) as f:
        text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())
    return [int(n) for n in re.findall(rf'"PUT /out/{re.escape(key)}\?partNumber=(\d+)&uploadId=\S+ HTTP', text)]


def test_a_file_written_to_s3_reads_back_and_root_reads_the_object(moto, tmp_path):
    events = small_events()
    url = "s3://out/small/events.root"
    with rntuple.recreate(url) as f:
        f["Events"] = events
    assert rntuple.open(url)["Events"].arrays().to_list() == events.to_list()
    local = tmp_path / "events.root"
    moto.client().download_file("out", "small/events.root", str(local))
    assert_root_reads(str(local), events)
    assert uploads(moto, "small/") == []


def test_a_large_file_goes_up_in_parts_with_the_head_last(moto, tmp_path):
    events = big_events(12)
    url = "s3://out/big/events.root"
    with rntuple.recreate(url, compression=0) as f:
        w = f.mkrntuple("Events", rntuple.schema_of(events))
        for i in range(0, len(events), 1 << 17):  # 1 MiB clusters
            w.extend(events[i : i + (1 << 17)])
            w.commit_cluster()
        # Part 2 (5-10 MiB) went out while the file was being written; the head (part 1) did not,
        # nor did the short last part (3).
        deadline = time.monotonic() + 30
        while not part_puts(moto, "big/events.root") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert part_puts(moto, "big/events.root") == [2]
        assert not exists(moto, "big/events.root")
    puts = part_puts(moto, "big/events.root")
    assert sorted(puts) == [1, 2, 3] and puts[-1] == 1, puts
    assert np.array_equal(rntuple.open(url)["Events"].arrays().x, events.x)
    local = tmp_path / "big.root"
    moto.client().download_file("out", "big/events.root", str(local))
    assert_root_reads(str(local), events)
    assert uploads(moto, "big/") == []


def test_an_abandoned_writer_aborts_its_upload(moto):
    with pytest.raises(RuntimeError, match="boom"), rntuple.recreate("s3://out/abandoned.root", compression=0) as f:
        f["Events"] = big_events(12)
        raise RuntimeError("boom")
    assert not exists(moto, "abandoned.root")
    assert uploads(moto, "abandoned.root") == []


def test_a_killed_writer_leaves_no_object(moto):
    env = {**os.environ}
    proc = start_endless_writer("s3://out/killed.root", env)
    try:
        wait_for_commits(proc, 12)  # 12 MiB committed: part 2 is on its way
        deadline = time.monotonic() + 30
        while not part_puts(moto, "killed.root") and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert part_puts(moto, "killed.root"), "no part was uploaded before the kill"
    assert not exists(moto, "killed.root")
    with pytest.raises(FileNotFoundError, match=re.escape("s3://out/killed.root")):
        rntuple.open("s3://out/killed.root")
    # What is left is an unfinished upload no reader sees (a lifecycle rule reclaims it).
    assert len(uploads(moto, "killed.root")) == 1


def test_a_refused_write_names_the_url():
    url = "s3://no-such-bucket/out.root"
    with pytest.raises(OSError, match=re.escape(url)):
        rntuple.recreate(url)


def test_a_connection_reset_mid_part_is_retried(moto, monkeypatch):
    events = big_events(12, seed=2)
    # The first connection breaks 2 MiB into the first part sent on it; the retry goes through.
    with FaultProxy(moto.port, reset_up_after=2 << 20, faulty_connections=1) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{proxy.port}")
        with rntuple.recreate("s3://out/reset.root", compression=0) as f:
            f["Events"] = events
        assert proxy.connections >= 2
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto.endpoint)
    assert np.array_equal(rntuple.open("s3://out/reset.root")["Events"].arrays().x, events.x)
    assert sorted(set(part_puts(moto, "reset.root"))) == [1, 2, 3]


def test_a_stalled_server_times_out_and_leaves_no_object(moto, monkeypatch):
    monkeypatch.setenv("RNTUPLE_HTTP_TIMEOUT", "1")
    monkeypatch.setenv("RNTUPLE_HTTP_RETRIES", "0")
    with FaultProxy(moto.port) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{proxy.port}")
        start = time.monotonic()
        with pytest.raises(OSError, match=re.escape("s3://out/stalled.root")):  # noqa: PT012
            with rntuple.recreate("s3://out/stalled.root", compression=0) as f:
                proxy.stall_after = 0  # the upload started; from now on the server says nothing
                f["Events"] = big_events(12, seed=4)
        assert time.monotonic() - start < 30
    assert not exists(moto, "stalled.root")


def test_command_line_converts_and_merges_to_s3(moto, tmp_path):
    events = small_events()
    local = tmp_path / "in.root"
    with rntuple.recreate(local) as f:
        f["Events"] = events
    exe = shutil.which("rntuple")
    cmd = [exe] if exe else [sys.executable, "-m", "rntuple"]
    merge = [*cmd, "merge", "s3://out/cli/merged.root", str(local), str(local)]
    p = subprocess.run(merge, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    merged = rntuple.open("s3://out/cli/merged.root")["Events"].arrays()
    assert merged.to_list() == events.to_list() * 2
    parquet = tmp_path / "in.parquet"
    ak.to_parquet(events, parquet)
    p = subprocess.run([*cmd, "convert", str(parquet), "s3://out/cli/converted.root"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert rntuple.open("s3://out/cli/converted.root")["Events"].arrays().to_list() == events.to_list()
    p = subprocess.run([*cmd, "convert", str(local), "s3://out/cli/converted.parquet"], capture_output=True, text=True)
    assert p.returncode != 0 and "local file" in p.stderr, p.stderr


def test_recover_writes_a_killed_local_writers_clusters_to_s3(tmp_path):
    broken = str(tmp_path / "broken.root")
    proc = start_endless_writer(broken, {**os.environ})
    try:
        wait_for_commits(proc, 3)
    finally:
        proc.kill()
        proc.wait()
    exe = shutil.which("rntuple")
    cmd = [exe] if exe else [sys.executable, "-m", "rntuple"]
    p = subprocess.run([*cmd, "recover", broken, "s3://out/recovered.root"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    n = rntuple.open("s3://out/recovered.root")["Events"].num_entries
    assert n >= 3 << 17 and n % (1 << 17) == 0, n
