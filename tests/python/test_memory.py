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


def _limited(script: str, path: Path, limit: int = 3 << 30, name: str = "zeros") -> subprocess.CompletedProcess:
    """Runs `script` in a Python whose address space is limited to `limit` bytes."""
    head = f"""
        import resource, sys
        sys.path.insert(0, {str(PACKAGE)!r})
        import rntuple
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        nt = rntuple.open({str(path)!r})[{name!r}]
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


NULLS = 192 * 1024 * 1024  # entries of an optional int64 that holds no value


@pytest.fixture(scope="module")
def empty_optionals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """192 Mi empty std::optional<std::int64_t>: an index column of zeros (pages stored once), no
    values. Read, the index buffer takes 1.5 GiB; the Arrow array built from it (a value slot per
    entry, 1.5 GiB more) is what does not fit in 3 GiB."""
    import pyarrow as pa

    path = tmp_path_factory.mktemp("memory") / "nulls.root"
    step = 16 * 1024 * 1024
    options = {"max_unzipped_page_size": "8 MiB", "max_unzipped_cluster_size": "8 GiB"}
    with rntuple.recreate(path, approx_zipped_cluster_size="1 GiB", **options) as f:
        w = f.mkrntuple("nulls", {"x": "?int64"})
        for _ in range(NULLS // step):
            w.extend({"x": pa.nulls(step, pa.int64())})
    assert path.stat().st_size < 10_000, "same-page merging should store the zero pages once per cluster"
    return path


def test_out_of_memory_while_assembling_arrays_is_a_memory_error(empty_optionals: Path) -> None:
    # The decoded buffers fit; the array assembled from them (assemble.rs) does not: an
    # OutOfMemoryError naming the field, where an infallible allocation aborted the process.
    proc = _limited(
        """
        try:
            nt.arrays()
        except MemoryError as e:
            print("raised", type(e).__name__, e)
        print("still here", nt.arrays(entry_stop=1000)["x"].tolist() == [None] * 1000)
        """,
        empty_optionals,
        name="nulls",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("raised OutOfMemoryError out of memory"), proc.stdout
    assert f'the Arrow values of field "x" ({NULLS} elements of 8 bytes)' in lines[0], proc.stdout
    assert lines[1:] == ["still here True"], proc.stdout


def test_the_budget_refuses_before_allocating(zeros_4gib: Path) -> None:
    # The pages share locators (2 kB on disk): the budget counts the values of every page record.
    proc = _limited(
        """
        try:
            nt.arrays(max_memory="1 GB")
        except rntuple.MemoryLimitError as e:
            print("refused", isinstance(e, MemoryError), e)
        # VmHWM: this process's own high-water mark (getrusage's ru_maxrss keeps the parent's
        # across fork and exec: pytest's, a GB late in the suite)
        hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
        print("maxrss_kib", hwm)
        """,
        zeros_4gib,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, second = proc.stdout.splitlines()
    assert first.startswith("refused True"), proc.stdout
    assert "iterate(step_size=" in first and "1000000000-byte max_memory budget" in first, first
    assert "4294967296 bytes of values" in first, first
    # refused before the 4 GiB were allocated: the process never held more than it had at start
    assert int(second.split()[1]) < 1_000_000, second


@pytest.fixture(scope="module")
def eight_mb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("memory") / "ints.root"
    with rntuple.recreate(path) as f:
        f["Events"] = {"x": np.arange(1_000_000, dtype=np.int64)}
    return path


def test_the_budget_per_read_per_file_and_in_steps(eight_mb: Path) -> None:
    nt = rntuple.open(eight_mb)["Events"]
    with pytest.raises(rntuple.MemoryLimitError, match=r"iterate\(step_size="):
        nt.arrays(max_memory="4 MB")
    assert len(nt.arrays(max_memory="100 MB")) == 1_000_000
    assert len(nt.arrays(max_memory=20 * 2**20)) == 1_000_000
    steps = list(nt.iterate(step_size=100_000, max_memory="4 MB"))
    assert sum(len(s) for s in steps) == 1_000_000 and np.array_equal(steps[3]["x"], np.arange(300_000, 400_000))
    # the file's budget, and a read's own overriding it
    limited = rntuple.open(eight_mb, max_memory="4 MiB")["Events"]
    with pytest.raises(MemoryError, match="4194304-byte max_memory budget"):
        limited.arrays()
    assert len(limited.arrays(max_memory="1 GB")) == 1_000_000
    assert len(limited.arrays(entry_stop=1000)) == 1000


@pytest.mark.parametrize("bad", ["a lot", 0, -5, "0 MB"])
def test_a_bad_budget_is_refused(eight_mb: Path, bad: object) -> None:
    nt = rntuple.open(eight_mb)["Events"]
    with pytest.raises(ValueError):
        nt.arrays(max_memory=bad)
    with pytest.raises(ValueError):
        rntuple.open(eight_mb, max_memory=bad)


def test_the_page_size_cap(zeros_4gib: Path) -> None:
    nt = rntuple.open(zeros_4gib, max_page_size="1 MiB")["zeros"]
    with pytest.raises(rntuple.MemoryLimitError, match="1048576-byte page size cap"):
        nt.arrays(entry_stop=10)
    assert rntuple.open(zeros_4gib)["zeros"].arrays(entry_stop=10)["x"].tolist() == [0] * 10


def test_the_envelope_size_cap() -> None:
    # The header envelope of this ROOT-written file holds a few hundred bytes: a 64-byte cap refuses
    # it before it is read, naming the envelope and the option; the default cap opens it.
    small = Path(__file__).parents[1] / "data" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    with pytest.raises(rntuple.MemoryLimitError, match=r"header envelope.*64-byte envelope cap \(max_envelope_size\)"):
        rntuple.open(small, max_envelope_size=64)["Events"]
    with pytest.raises(rntuple.InvalidArgumentError, match="max_envelope_size"):
        rntuple.open(small, max_envelope_size=0)
    assert rntuple.open(small, max_envelope_size="1 MB")["Events"].num_entries == 1000


def test_file_like_objects_have_the_budget_and_the_caps(eight_mb: Path, zeros_4gib: Path) -> None:
    # rntuple.open(io.BytesIO(...)) and open file objects honour max_memory, max_page_size and
    # max_envelope_size as paths do.
    import io

    data = eight_mb.read_bytes()
    nt = rntuple.open(io.BytesIO(data), max_memory="4 MB")["Events"]
    with pytest.raises(rntuple.MemoryLimitError, match=r"4000000-byte max_memory budget.*iterate\(step_size="):
        nt.arrays()
    assert len(nt.arrays(max_memory="100 MB")) == 1_000_000
    assert len(rntuple.open(io.BytesIO(data))["Events"].arrays()) == 1_000_000
    with open(zeros_4gib, "rb") as fh:
        capped = rntuple.open(fh, max_page_size="1 MiB")["zeros"]
        with pytest.raises(rntuple.MemoryLimitError, match="1048576-byte page size cap"):
            capped.arrays(entry_stop=10)
    small = Path(__file__).parents[1] / "data" / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
    with open(small, "rb") as fh:
        with pytest.raises(rntuple.MemoryLimitError, match=r"header envelope.*64-byte envelope cap"):
            rntuple.open(fh, max_envelope_size=64)["Events"]
    with pytest.raises(ValueError):
        rntuple.open(io.BytesIO(data), max_memory="a lot")


def test_dask_partitions_have_the_budget(eight_mb: Path) -> None:
    import dask_awkward  # noqa: F401  (rntuple.dask needs it; installed by requirements-dev.txt)

    with pytest.raises(MemoryError, match="max_memory budget"):
        rntuple.dask(str(eight_mb), max_memory="4 MB").compute()
    assert len(rntuple.dask(str(eight_mb), max_memory="100 MB").compute()) == 1_000_000


def test_chains_and_joins_have_the_budget(eight_mb: Path) -> None:
    chain = rntuple.chain([f"{eight_mb}:Events", f"{eight_mb}:Events"])
    with pytest.raises(rntuple.MemoryLimitError):
        chain.arrays(max_memory="4 MB")
    assert len(chain.arrays(max_memory="100 MB")) == 2_000_000
    assert sum(len(b) for b in chain.iterate(step_size=250_000, max_memory="4 MB")) == 2_000_000


def test_the_budget_is_the_whole_reads(tmp_path: Path) -> None:
    # A collection is read in two steps: its offsets (1M + 1 of 8 bytes), then its values (4 MB).
    # Each step alone fits in 10 MB; the read, which holds both, does not.
    import awkward as ak

    path = tmp_path / "lists.root"
    with rntuple.recreate(path) as f:
        w = f.mkrntuple("Events", {"v": "var * float32"})
        counts = np.ones(1_000_000, dtype=np.int64)
        w.extend({"v": ak.unflatten(np.ones(1_000_000, dtype=np.float32), counts)})
    nt = rntuple.open(path)["Events"]
    with pytest.raises(rntuple.MemoryLimitError, match="12000008 bytes of values"):
        nt.arrays(max_memory=10_000_000)
    assert len(nt.arrays(max_memory="20 MB")) == 1_000_000
