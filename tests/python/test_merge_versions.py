"""``merge`` and inputs of a newer format version than its own (1.0.2.x): merged with a warning,
as ROOT's merger warns (a ``UserWarning`` in Python, ``MergeSummary.warnings``, a line of the
command's output)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import rntuple
import xxhash

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
SOURCE = os.path.join(DATA, "double_real32quant_rntuple_v1-0-2-0.root")


def with_format_version(src: str, dst: str, minor: int) -> None:
    """A copy of ``src`` whose anchor says format 1.0.``minor``.0, its checksum recomputed (the anchor's
    fields, big-endian: four u16 version words then seven u64, then the xxh3-64 of those 64 bytes)."""
    data = bytearray(open(src, "rb").read())
    found = []
    at = data.find(b"\x00\x01\x00\x00\x00\x02\x00\x00")
    while at >= 0:
        if xxhash.xxh3_64_intdigest(bytes(data[at : at + 64])) == int.from_bytes(data[at + 64 : at + 72], "big"):
            found.append(at)
        at = data.find(b"\x00\x01\x00\x00\x00\x02\x00\x00", at + 1)
    assert len(found) == 1, found
    at = found[0]
    data[at + 4 : at + 6] = minor.to_bytes(2, "big")
    data[at + 64 : at + 72] = xxhash.xxh3_64_intdigest(bytes(data[at : at + 64])).to_bytes(8, "big")
    open(dst, "wb").write(bytes(data))


def test_newer_inputs_merge_with_a_warning(tmp_path):
    newer = str(tmp_path / "newer.root")
    with_format_version(SOURCE, newer, 3)
    same = str(tmp_path / "same.root")
    shutil.copy(SOURCE, same)
    out = str(tmp_path / "out.root")
    with pytest.warns(
        UserWarning, match=r"newer\.root was written in format 1\.0\.3\.0, newer than this merger's 1\.0\.2\.x"
    ):
        s = rntuple.merge(out, [same, newer])
    assert len(s.warnings) == 1
    assert s.entries == 2 * rntuple.open(SOURCE)[s.name].num_entries
    s = rntuple.merge(out, [same, same], overwrite=True)
    assert s.warnings == []
    cli = [sys.executable, "-m", "rntuple", "merge", str(tmp_path / "cli.root"), same, newer]
    printed = subprocess.run(cli, capture_output=True, text=True, check=True)
    assert "warning: input " in printed.stdout + printed.stderr
