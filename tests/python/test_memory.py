"""Memory: a read that needs more memory than there is raises MemoryError, and the process goes on
(docs/reliability.md, "Memory").

The file is a legitimate RNTuple of 4 GiB of zeros (512 Mi int64 entries) in about 2 kB: its pages
are all equal, and same-page merging stores each cluster's page once.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import rntuple

PACKAGE = Path(rntuple.__file__).resolve().parents[1]
ENTRIES = 512 * 1024 * 1024  # 4 GiB of int64


@pytest.fixture(scope="module")
def zeros_4gib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("memory") / "zeros.root"
    step = 16 * 1024 * 1024
    zeros = np.zeros(step, dtype=np.int64)
    options = {"max_unzipped_page_size": "8 MiB", "max_unzipped_cluster_size": "8 GiB"}
    with rntuple.recreate(path, approx_zipped_cluster_size="1 GiB", **options) as f:
        w = f.mkrntuple("zeros", {"x": np.int64})
        for _ in range(ENTRIES // step):
            w.extend({"x": zeros})
    assert path.stat().st_size < 10_000, "same-page merging should store the zero pages once per cluster"
    return path


def _limited(script: str, path: Path, limit: int = 3 << 30) -> subprocess.CompletedProcess:
    """Runs `script` in a Python whose address space is limited to `limit` bytes."""
    head = f"""
        import resource, sys
        sys.path.insert(0, {str(PACKAGE)!r})
        import rntuple
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        nt = rntuple.open({str(path)!r})["zeros"]
    """
    code = textwrap.dedent(head) + textwrap.dedent(script)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)


def test_out_of_memory_is_a_memory_error_and_the_process_goes_on(zeros_4gib: Path) -> None:
    proc = _limited(
        """
        try:
            nt.arrays()
        except MemoryError as e:
            print("raised", type(e).__name__, isinstance(e, rntuple.RNTupleError), e)
        print("still here")
        print("iterated", sum(len(b) for b in nt.iterate(step_size="100 MB")))
        """,
        zeros_4gib,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("raised OutOfMemoryError True out of memory"), proc.stdout
    assert "4294967296 bytes" in lines[0] and 'field "x"' in lines[0], proc.stdout
    assert lines[1:] == ["still here", f"iterated {ENTRIES}"], proc.stdout
