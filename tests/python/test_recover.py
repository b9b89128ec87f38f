"""Crash-safe writing from Python and ``rntuple.recover`` (docs/recover.md).

A Python writer process is killed with SIGKILL (the ``RNTUPLE_CRASH_AT`` hook
of the Rust writer) at points in filling, compression, page writes, cluster
commits, journal records, the footer and the file header; each time the reader
refuses the file and ``rntuple.recover`` restores exactly the committed entries
with the values written, and ROOT 6.40 reads every recovered file. A full disk
(a 2 MiB tmpfs) gives a clear error and no file that looks valid.
The parallel writer (two threads, a fill context each) is killed the same way
and at random moments; its recovered entries are every entry whose commit
returned, each once, a prefix of each context's entries.
``bench/kill_points.py`` runs the same with many more points.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import rntuple
from conftest import root_python

# The writer: entries i = 0, 1, ... with x = i, y = i / 2, v = [i % 1000 + k for k < i % 5].
CHILD = r"""
import sys
import numpy as np
import pyarrow as pa
import rntuple

path, log, batches, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def batch(first, n):
    x = np.arange(first, first + n, dtype=np.int64)
    v = [[int(i % 1000) + k for k in range(int(i % 5))] for i in x]
    item = pa.list_(pa.field("item", pa.int32(), False))
    schema = pa.schema([("x", pa.int64(), False), ("y", pa.float64(), False), ("v", item, False)])
    return pa.table({"x": x, "y": x / 2, "v": pa.array(v, type=item)}, schema=schema)

with rntuple.recreate(path, compression=sys.argv[5]) as f:
    w = f.mkrntuple("Events", batch(0, 0).schema, approx_zipped_cluster_size=4000)
    for b in range(batches):
        w.extend(batch(b * size, size))
        w.commit_cluster()
        with open(log, "a") as out:
            out.write(f"{(b + 1) * size}\n")
    w.close()
"""

# The parallel writer: `threads` threads, each with its own fill context, thread k writing the blocks of
# `size` entries that start at (b * threads + k) * size; each commit logs the block's first entry.
CHILD_PARALLEL = (
    CHILD.split("with rntuple.recreate")[0]
    + r"""
import threading
threads = int(sys.argv[6])

with rntuple.recreate(path, compression=sys.argv[5]) as f:
    w = f.mkrntuple_parallel("Events", batch(0, 0).schema, approx_zipped_cluster_size=4000)

    def fill(k):
        with w.fill_context() as ctx:
            for b in range(batches):
                first = (b * threads + k) * size
                ctx.extend(batch(first, size))
                ctx.commit_cluster()
                with open(log, "a") as out:
                    out.write(f"{first}\n")

    workers = [threading.Thread(target=fill, args=(k,)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    w.close()
"""
)

KINDS = [("fill", 10), ("compress", 60), ("page", 24), ("commit", 12), ("journal", 12), ("footer", 1), ("finish", 1)]


def writer_args(path, log, batches=10, size=300, compression="zstd", threads=0):
    """The command of the single writer's child, or of the parallel one with ``threads``."""
    child = CHILD_PARALLEL if threads else CHILD
    args = [sys.executable, "-c", child, str(path), str(log), str(batches), str(size), compression]
    return args + [str(threads)] if threads else args


def run_writer(path, log, point, batches=10, size=300, compression="zstd", cwd=None, threads=0):
    env = dict(os.environ)
    if point:
        env["RNTUPLE_CRASH_AT"] = point
    args = writer_args(path, log, batches, size, compression, threads)
    return subprocess.run(args, env=env, capture_output=True, text=True, cwd=cwd)


def committed(log):
    try:
        with open(log) as f:
            lines = f.read().split()
    except FileNotFoundError:
        return 0
    return int(lines[-1]) if lines else 0


def check_values(path, at_least):
    """The entries of ``path`` are the input's first entries, at least ``at_least``."""
    with rntuple.open(path) as f:
        arrays = f["Events"].arrays()
    n = len(arrays)
    assert n >= at_least
    x = np.asarray(arrays["x"])
    assert np.array_equal(x, np.arange(n))
    assert np.array_equal(np.asarray(arrays["y"]), np.arange(n) / 2)
    assert [list(v) for v in arrays["v"].tolist()] == [[i % 1000 + k for k in range(i % 5)] for i in range(n)]
    return n


ROOT_READ = r"""
import json, sys
import ROOT
out = {}
for path in sys.argv[1:]:
    df = ROOT.RDataFrame("Events", path).Define("n", "v.size()")
    count, sx, sn = df.Count(), df.Sum["std::int64_t"]("x"), df.Sum["std::size_t"]("n")
    out[path] = [int(count.GetValue()), int(sx.GetValue()), int(sn.GetValue())]
print("RESULT " + json.dumps(out))
"""


def root_reads(paths):
    """ROOT 6.40's entries, sum of x and elements of v for each file."""
    proc = subprocess.run([root_python(), "-c", ROOT_READ, *map(str, paths)], capture_output=True, text=True)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not line:
        pytest.skip(f"ROOT could not be run: {proc.stderr[-2000:]}")
    return json.loads(line[0][len("RESULT ") :])


def expected_root(n):
    return [n, n * (n - 1) // 2, sum(i % 5 for i in range(n))]


def kill_and_recover(tmp_path, point, k):
    path, log, out = tmp_path / f"w{k}.root", tmp_path / f"w{k}.log", tmp_path / f"w{k}-recovered.root"
    proc = run_writer(path, log, point)
    n_committed = committed(log)
    check = functools.partial(check_values, at_least=n_committed)
    return judge_killed(path, out, proc.returncode, proc.stderr, point, check, n_committed > 0)


def judge_killed(path, out, code, stderr, point, check, anything_committed):
    """What a writer that ended with ``code`` left: ("completed" | "nothing" | "recovered", file, entries).
    ``check(file)`` checks the values of a file and returns its entries."""
    if code == 0:
        return "completed", path, check(path)
    assert code == -9, stderr[-2000:]
    try:
        rntuple.open(path).close()
    except rntuple.RNTupleError as e:
        assert "not completed" in str(e)
    else:  # killed after the file header was written
        return "completed", path, check(path)
    try:
        report = rntuple.recover(path, out)
    except ValueError as e:  # nothing committed: no journal, or no cluster in it
        assert not anything_committed, f"{point}: committed entries lost: {e}"
        assert not out.exists()
        return "nothing", None, 0
    assert report["state"] == "unfinished" and report["output"] == str(out)
    n = check(out)
    assert report["entries"] == n, report["text"]
    return "recovered", out, n


def test_killed_python_writer_is_recovered_and_root_reads_it(tmp_path):
    rng = random.Random(16)
    points = int(os.environ.get("RNTUPLE_KILL_POINTS_PY", "14"))
    results = []
    for k in range(points):
        kind, most = KINDS[k % len(KINDS)]
        results.append(kill_and_recover(tmp_path, f"{kind}:{rng.randint(1, most)}", k))
    recovered = [(p, n) for what, p, n in results if what == "recovered"]
    counts = {what: sum(1 for r in results if r[0] == what) for what in ("recovered", "nothing", "completed")}
    print(f"python kill points: {points}, {counts}, ROOT read {len(recovered)} recovered files")
    assert len(recovered) >= points // 2, results
    seen = root_reads([p for p, _ in recovered])
    for p, n in recovered:
        assert seen[str(p)] == expected_root(n), p


THREADS, BLOCKS, BLOCK = 2, 6, 300
KINDS_PARALLEL = [("fill", 12), ("compress", 40), ("page", 16), ("commit", 14), ("journal", 14), ("footer", 1)]


def logged_blocks(log):
    """First entries of the blocks whose commit returned (whole lines only: a kill can cut the last)."""
    try:
        with open(log) as f:
            text = f.read()
    except FileNotFoundError:
        return set()
    return {int(line) for line in text.split("\n")[:-1]}


def check_parallel_values(path, blocks):
    """Every entry of ``path`` once, with its input values; per context a prefix of what it filled, in
    order; every block in ``blocks`` (their commits returned) present. Returns the entries read."""
    with rntuple.open(path) as f:
        arrays = f["Events"].arrays()
    x = np.asarray(arrays["x"])
    assert len(np.unique(x)) == len(x), "an entry twice"
    assert np.array_equal(np.asarray(arrays["y"]), x / 2)
    assert [list(v) for v in arrays["v"].tolist()] == [[i % 1000 + k for k in range(i % 5)] for i in x.tolist()]
    for k in range(THREADS):
        mine = x[(x // BLOCK) % THREADS == k]
        filled = np.concatenate([np.arange(b * BLOCK, (b + 1) * BLOCK) for b in range(k, THREADS * BLOCKS, THREADS)])
        assert np.array_equal(mine, filled[: len(mine)]), f"context {k}: not a prefix of its entries in order"
    present = set(x.tolist())
    lost = sorted(b for b in blocks if not set(range(b, b + BLOCK)) <= present)
    assert not lost, f"committed blocks lost: {lost}"
    return len(x)


def kill_parallel_and_recover(tmp_path, point, k, rng):
    """The parallel writer killed at ``point`` (``RNTUPLE_CRASH_AT``) or, with ``point`` None, by a SIGKILL
    from here at a random moment; then recovered and checked."""
    path, log, out = tmp_path / f"p{k}.root", tmp_path / f"p{k}.log", tmp_path / f"p{k}-recovered.root"
    if point:
        proc = run_writer(path, log, point, BLOCKS, BLOCK, threads=THREADS)
        code, stderr = proc.returncode, proc.stderr
    else:
        child = subprocess.Popen(writer_args(path, log, BLOCKS, BLOCK, threads=THREADS), stderr=subprocess.PIPE)
        # Killed once a random number of commits returned, a random fraction of a millisecond later.
        wanted = rng.randint(1, THREADS * BLOCKS - 2)
        while child.poll() is None and len(logged_blocks(log)) < wanted:
            time.sleep(0.0005)
        time.sleep(rng.uniform(0.0, 0.001))
        child.kill()
        code, stderr = child.wait(), child.stderr.read().decode() if child.stderr else ""
    blocks = logged_blocks(log)
    check = functools.partial(check_parallel_values, blocks=blocks)
    return judge_killed(path, out, code, stderr, point, check, bool(blocks))


def test_killed_python_parallel_writer_is_recovered_and_root_reads_it(tmp_path):
    """Two threads with a fill context each, killed in fill, compression, page write, cluster commit,
    journal record and footer, and at random moments; the committed entries are recovered."""
    rng = random.Random(17)
    points = int(os.environ.get("RNTUPLE_KILL_POINTS_PY_PARALLEL", "12"))
    results = []
    for k in range(points):
        kind, most = KINDS_PARALLEL[k % len(KINDS_PARALLEL)] if k % 4 != 3 else ("random", 0)
        point = None if kind == "random" else f"{kind}:{rng.randint(1, most)}"
        results.append((point or "random", *kill_parallel_and_recover(tmp_path, point, k, rng)))
    recovered = [(p, n) for _, what, p, n in results if what == "recovered"]
    counts = {what: sum(1 for r in results if r[1] == what) for what in ("recovered", "nothing", "completed")}
    print(f"python parallel kill points: {points}, {counts}, ROOT read {len(recovered)} recovered files")
    assert len(recovered) >= points // 2, results
    seen = root_reads([p for p, _ in recovered])
    for p, _ in recovered:
        with rntuple.open(p) as f:
            x = np.asarray(f["Events"].arrays()["x"])
        assert seen[str(p)] == [len(x), int(x.sum()), int(sum(i % 5 for i in x.tolist()))], p


def test_recover_reports_without_output_and_via_the_command(tmp_path):
    path, log = tmp_path / "c.root", tmp_path / "c.log"
    proc = run_writer(path, log, "commit:4")
    assert proc.returncode == -9
    report = rntuple.recover(path)
    n = report["entries"]
    assert report["output"] is None and n >= committed(log) > 0
    assert "report only" in report["text"]
    assert not (tmp_path / "c-out.root").exists()
    cmd = [sys.executable, "-m", "rntuple", "recover", str(path), str(tmp_path / "c-out.root")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"'Events': {n} entries in {report['rntuples'][0]['clusters']} committed clusters kept" in done.stdout
    assert check_values(tmp_path / "c-out.root", n) == n
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 1 and "exists" in again.stderr
    # Nothing committed: killed in the first fill.
    proc = run_writer(tmp_path / "e.root", tmp_path / "e.log", "fill:1")
    assert proc.returncode == -9
    none = subprocess.run([sys.executable, "-m", "rntuple", "recover", str(tmp_path / "e.root")], capture_output=True)
    assert none.returncode == 1


@pytest.fixture
def small_disk():
    """A 2 MiB tmpfs (needs root and mount; skipped otherwise)."""
    mount = shutil.which("mount")
    where = tempfile.mkdtemp(prefix="rntuple-full-")
    if mount is None or subprocess.run([mount, "-t", "tmpfs", "-o", "size=2m", "tmpfs", where]).returncode != 0:
        os.rmdir(where)
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", where])
        os.rmdir(where)


def test_a_full_disk_gives_a_clear_error_and_no_valid_looking_file(small_disk, tmp_path):
    path, log = os.path.join(small_disk, "full.root"), tmp_path / "full.log"
    proc = run_writer(path, log, None, batches=200, size=2000, compression="none")
    assert proc.returncode != 0
    assert "No space left on device" in proc.stderr, proc.stderr[-2000:]
    with pytest.raises(rntuple.RNTupleError, match="not completed"):
        rntuple.open(path)
    n_committed = committed(log)
    assert n_committed > 0
    # What was committed before the disk filled is still there (recovered elsewhere).
    out = tmp_path / "full-recovered.root"
    report = rntuple.recover(path, out)
    assert check_values(out, n_committed) == report["entries"]
