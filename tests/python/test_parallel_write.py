"""The parallel writer from Python (``WritableFile.mkrntuple_parallel``, ``rntuple._parallel``).

Python threads fill one RNTuple through their own fill contexts; every entry
is read back exactly once, by us, by ROOT 6.40's ``RNTupleReader`` and by
uproot; the GIL is released while a context fills and commits (observed, not
timed); attribute sets cover committed entries; misuse gives clear errors.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading

import awkward as ak
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import rntuple
from conftest import root_python
from test_attributes import our_reading, root_reads

ITEM = pa.list_(pa.field("item", pa.float64(), False))
SCHEMA = pa.schema([("id", pa.int64(), False), ("v", ITEM, False)])


def values(ids: np.ndarray) -> list[list[float]]:
    """The collection of entry ``id``: ``[id + 0.5] * (id % 4)``."""
    return [[i + 0.5] * (i % 4) for i in ids.tolist()]


def as_kind(ids: np.ndarray, kind: str):
    """Entries ``ids`` as one of the inputs the writers take."""
    if kind == "arrow":
        return pa.table({"id": ids, "v": pa.array(values(ids), type=ITEM)}, schema=SCHEMA)
    if kind == "awkward":
        return ak.Array({"id": ids, "v": values(ids)})
    if kind == "pandas":
        return pd.DataFrame({"id": ids, "v": values(ids)})
    return {"id": ids, "v": ak.Array(values(ids))}  # a dict of numpy / awkward


ROOT_READ = r"""
import json, sys
import ROOT
reader = ROOT.RNTupleReader.Open("Events", sys.argv[1])
ids = reader.GetView["std::int64_t"]("id")
v = reader.GetView["std::vector<double>"]("v")
out = [[int(ids(i)), [float(x) for x in v(i)]] for i in range(reader.GetNEntries())]
print("RESULT " + json.dumps(out))
"""


def root_entries(path) -> list:
    """(id, v) of every entry, in order, as ROOT 6.40's RNTupleReader reads them."""
    proc = subprocess.run([root_python(), "-c", ROOT_READ, str(path)], capture_output=True, text=True)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, f"ROOT failed:\n{proc.stderr[-3000:]}"
    return json.loads(line[0][len("RESULT ") :])


def test_threads_fill_their_contexts_and_every_entry_is_read_once(tmp_path):
    threads, n = 4, 6000
    path = tmp_path / "parallel.root"
    kinds = ["arrow", "awkward", "pandas", "dict"]
    with rntuple.recreate(path) as f:
        w = f.mkrntuple_parallel("Events", SCHEMA, compression="lz4", approx_zipped_cluster_size="4 KiB")
        assert isinstance(w, rntuple.ParallelWriter)
        errors: list[BaseException] = []

        def fill(k: int) -> None:
            try:
                with w.fill_context() as ctx:
                    assert isinstance(ctx, rntuple.FillContext)
                    ids = np.arange(k, n, threads, dtype=np.int64)
                    for i, lo in enumerate(range(0, len(ids), 250)):
                        ctx.extend(as_kind(ids[lo : lo + 250], kinds[k]))
                        if i % 2 == 1:
                            ctx.commit_cluster()
                    assert ctx.num_entries == len(ids)
                    assert ctx.memory_use is not None
            except BaseException as err:
                errors.append(err)

        workers = [threading.Thread(target=fill, args=(k,)) for k in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        assert not errors, errors
        assert w.num_entries == n and w.open_contexts == 0
        w.close()
        assert w.state == "closed"

    with rntuple.open(path) as f:
        events = f["Events"]
        assert events.num_entries == n
        got = events.arrays()
        clusters = events.clusters
    ids = np.asarray(got["id"])
    assert sorted(ids.tolist()) == list(range(n))  # every entry exactly once
    assert got["v"].tolist() == values(ids)  # each with its own collection
    # Each cluster comes from one context (one thread), its entries in order; contexts interleave by cluster.
    assert len(clusters) >= 2 * threads
    owners = []
    for c in clusters:
        part = ids[c.first_entry : c.first_entry + c.num_entries]
        assert len(set((part % threads).tolist())) == 1, f"cluster {c} mixes contexts"
        assert np.all(np.diff(part) > 0)
        owners.append(int(part[0] % threads))
    assert sorted(set(owners)) == list(range(threads))
    assert owners != sorted(owners), "the contexts' clusters did not interleave"

    assert root_entries(path) == [[i, v] for i, v in zip(ids.tolist(), values(ids), strict=True)]
    import uproot

    with uproot.open(path) as f:
        up = f["Events"].arrays()
    assert np.array_equal(np.asarray(up["id"]), ids) and up["v"].tolist() == values(ids)


class _Exported:
    """A batch already exported through the Arrow C interface: handing it to ``_lib`` runs no pyarrow code
    (which could release the GIL itself)."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self._capsules = batch.__arrow_c_array__()

    def __arrow_c_array__(self, requested_schema=None):
        return self._capsules


def test_the_gil_is_released_while_a_context_fills_and_commits(tmp_path):
    """With a switch interval of 60 s the interpreter never takes the GIL from a thread: the observer
    thread runs only when the main thread gives the GIL up. It sees the main thread's phase "extend" or
    "commit" only if the Rust call released the GIL (holding it, the main thread would set the next phase
    before the observer could look)."""
    ids = np.arange(1_500_000, dtype=np.int64)
    v = pa.ListArray.from_arrays(pa.array(np.arange(0, 3 * len(ids) + 1, 3, dtype=np.int32)), np.ones(3 * len(ids)))
    batch = pa.RecordBatch.from_arrays([pa.array(ids), v.cast(ITEM)], schema=SCHEMA)
    phase = ["start"]
    seen: set[str] = set()

    def observer() -> None:
        while phase[0] != "done":
            seen.add(phase[0])
            threading.Event().wait(0.0001)  # gives the GIL up, then waits for it

    old = sys.getswitchinterval()
    # Large pages, compressed by the filling thread: filling and committing take ~1 s each here.
    options = {"compression_threads": 1, "max_unzipped_page_size": "64 MiB"}
    with rntuple.recreate(tmp_path / "gil.root") as f, f.mkrntuple_parallel("Events", SCHEMA, **options) as w:
        ctx = w.fill_context()
        first, second = _Exported(batch), _Exported(batch)
        watcher = threading.Thread(target=observer)
        sys.setswitchinterval(60.0)
        try:
            watcher.start()
            phase[0] = "extend"
            ctx._inner.extend(first)
            phase[0] = "between"
            ctx._inner.extend(second)
            phase[0] = "commit"
            ctx._inner.commit_cluster()
            phase[0] = "done"
            watcher.join()
        finally:
            sys.setswitchinterval(old)
        ctx.close()
    assert {"extend", "commit"} <= seen, seen
    with rntuple.open(tmp_path / "gil.root") as f:
        assert f["Events"].num_entries == 2 * len(ids)


def test_attribute_sets_cover_committed_entries_and_root_reads_them(tmp_path):
    path = tmp_path / "attrs.root"
    with rntuple.recreate(path) as f, f.mkrntuple_parallel("Events", SCHEMA) as w:
        runs = w.create_attribute_set("runs", {"run": np.int32})
        a, b = w.fill_context(), w.fill_context()
        start = runs.begin_range()
        a.extend(as_kind(np.arange(0, 10), "arrow"))
        b.extend(as_kind(np.arange(100, 105), "arrow"))
        assert w.num_entries == 0  # nothing committed yet
        b.commit_cluster()
        a.commit_cluster()
        assert runs.commit_range(start, {"run": 1}) == range(0, 15)
        start = runs.begin_range()
        a.extend(as_kind(np.arange(10, 13), "arrow"))
        a.close()
        assert runs.commit_range(start, {"run": 2}) == range(15, 18)
        runs.extend({"run": np.array([7], dtype=np.int32)}, [range(5, 15)])
        b.close()
    with rntuple.open(path) as f:
        events = f["Events"]
        # Clusters in commit order: b's, then a's two.
        assert np.asarray(events.arrays()["id"]).tolist() == [*range(100, 105), *range(0, 10), 10, 11, 12]
        mine = our_reading(events)
        s = events.attribute_set("runs")
        assert s.entry_ranges == [range(0, 15), range(15, 18), range(5, 15)]
        assert s.arrays()["run"].tolist() == [1, 2, 7]
    diff = json.dumps(root_reads(str(path)), sort_keys=True) == json.dumps(mine, sort_keys=True)
    assert diff, (root_reads(str(path)), mine)


def test_misuse_gives_clear_errors_and_refusals_keep_things_usable(tmp_path):
    path = tmp_path / "errors.root"
    with rntuple.recreate(path) as f:
        w = f.mkrntuple_parallel("Events", as_kind(np.arange(0, 5), "awkward"))  # data: the first entries
        assert w.num_entries == 5 and w.open_contexts == 0
        ctx = w.fill_context()
        # A batch of other fields or types is refused; the context stays usable.
        with pytest.raises(rntuple.WriteError, match="missing"):
            ctx.extend({"id": np.arange(3)})
        with pytest.raises(rntuple.WriteError, match="'v._0' is written as 'double'"):
            ctx.extend({"id": np.arange(3), "v": ak.Array([["a"], [], []])})
        ctx.extend(as_kind(np.arange(5, 8), "arrow"))
        # Closing the writer while a context is open is refused; the writer stays open.
        with pytest.raises(ValueError, match="1 fill context.*still open"):
            w.close()
        assert w.state == "open" and w.open_contexts == 1
        ctx.close()
        ctx.close()  # no-op
        assert ctx.closed and ctx.num_entries == 3 and ctx.memory_use is None
        with pytest.raises(ValueError, match="fill context of RNTuple 'Events' is closed"):
            ctx.extend(as_kind(np.arange(8, 9), "arrow"))
        with pytest.raises(ValueError, match="is closed"):
            ctx.commit_cluster()
        # A context dropped without close commits its cluster (as ROOT's destructor does).
        dropped = w.fill_context()
        dropped.extend(as_kind(np.arange(8, 12), "dict"))
        del dropped
        gc.collect()
        assert w.open_contexts == 0 and w.num_entries == 12
        w.close()
        with pytest.raises(ValueError, match="is closed"):
            w.fill_context()
        # The file refuses to complete while a parallel writer has an open context: it is abandoned.
        other = f.mkrntuple_parallel("Other", SCHEMA)
        keep = other.fill_context()
        with pytest.raises(ValueError, match="still open"):
            f.close()
        assert f.closed
        keep.close()
    with pytest.raises(rntuple.RNTupleError, match="not completed"):
        rntuple.open(path)


def test_file_close_closes_the_parallel_writer_and_an_exception_abandons_it(tmp_path):
    path = tmp_path / "close.root"
    with rntuple.recreate(path) as f:
        w = f.mkrntuple_parallel("Events", SCHEMA)
        with w.fill_context() as ctx:
            ctx.extend(as_kind(np.arange(4), "pandas"))
        with pytest.raises(RuntimeError), f.mkrntuple_parallel("Dropped", SCHEMA) as gone:
            with gone.fill_context() as c:
                c.extend(as_kind(np.arange(2), "arrow"))
            raise RuntimeError("stop")
        assert gone.state == "abandoned"
    assert w.state == "closed"
    with rntuple.open(path) as f:
        assert [k.split(";")[0] for k in f.keys()] == ["Events"]
        assert np.asarray(f["Events"].arrays()["id"]).tolist() == [0, 1, 2, 3]


def test_values_that_do_not_fit_are_refused_and_the_context_stays_usable(tmp_path):
    """A null in a field that is not std::optional is refused before anything is written (as
    RNTupleWriter.extend refuses it); the context and the writer go on."""
    path = tmp_path / "refused.root"
    with rntuple.recreate(path) as f:
        w = f.mkrntuple_parallel("Events", pa.schema([("x", pa.int64(), False)]))
        with w.fill_context() as ctx:
            with pytest.raises(rntuple.WriteError, match="'x' of type 'std::int64_t' holds null values"):
                ctx.extend(pa.table({"x": pa.array([1, None], pa.int64())}))
            ctx.extend({"x": np.array([7, 8])})
        w.close()
        assert w.state == "closed"
    with rntuple.open(path) as f:
        assert np.asarray(f["Events"].arrays()["x"]).tolist() == [7, 8]


ROOT_READ_EXTENDED = r"""
import json, sys
import ROOT
reader = ROOT.RNTupleReader.Open("Events", sys.argv[1])
ids = reader.GetView["std::int64_t"]("id")
w = reader.GetView["float"]("w")
tags = reader.GetView["std::vector<std::int32_t>"]("tags")
out = [[int(ids(i)), float(w(i)), [int(t) for t in tags(i)]] for i in range(reader.GetNEntries())]
print("RESULT " + json.dumps(out))
"""


def test_fields_added_while_another_context_fills_read_as_zeros_before(tmp_path):
    """add_fields on a parallel writer while a context on another thread is mid-cluster: entries
    committed before, and the open context's entries without the fields, read as zeros (our reader and
    ROOT 6.40); entries given the new fields keep their values; every entry is there once."""
    path = tmp_path / "extended.root"
    base = pa.schema([("id", pa.int64(), False)])
    added = pa.schema([("w", pa.float32(), False), ("tags", pa.list_(pa.field("item", pa.int32(), False)), False)])
    started, extended = threading.Event(), threading.Event()

    def old_thread(ctx):
        ctx.extend({"id": np.arange(0, 10)})  # open cluster, before the extension
        started.set()
        extended.wait(60)
        ctx.extend({"id": np.arange(10, 20)})  # still the old schema after it
        ctx.close()

    with rntuple.recreate(path) as f, f.mkrntuple_parallel("Events", base) as w:
        first = w.fill_context()
        first.extend({"id": np.arange(100, 105)})
        first.close()  # 5 entries committed before the extension
        ctx = w.fill_context()
        t = threading.Thread(target=old_thread, args=(ctx,))
        t.start()
        assert started.wait(60)
        w.add_fields(added)
        extended.set()
        with w.fill_context() as new:
            full = pa.schema([*base, *added])
            new.extend(pa.table({"id": [200, 201, 202], "w": [1.5, 2.5, 3.5], "tags": [[1], [], [2, 3]]}, full))
        t.join(60)
        assert w.schema.names == ["id", "w", "tags"]
    want = {i: (0.0, []) for i in [*range(100, 105), *range(20)]}
    want.update({200: (1.5, [1]), 201: (2.5, []), 202: (3.5, [2, 3])})
    with rntuple.open(path) as f:
        got = f["Events"].arrays()
    columns = (got["id"].tolist(), got["w"].tolist(), got["tags"].tolist())
    ours = {i: (float(x), list(tg)) for i, x, tg in zip(*columns, strict=True)}
    assert len(got) == len(want) and ours == want
    proc = subprocess.run([root_python(), "-c", ROOT_READ_EXTENDED, str(path)], capture_output=True, text=True)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert line, proc.stdout + proc.stderr
    root = {i: (x, tg) for i, x, tg in json.loads(line[0][len("RESULT ") :])}
    assert root == want


def test_a_refused_table_writes_none_of_its_chunks_through_a_fill_context(tmp_path):
    """A table whose third chunk holds a null in a non-optional field is refused before its first
    chunks are written (as ``RNTupleWriter.extend`` refuses it)."""
    path = tmp_path / "chunks.root"
    column = pa.chunked_array([[1], [2], [None, 3]], pa.int16())
    with rntuple.recreate(path) as f, f.mkrntuple_parallel("Events", pa.schema([("x", pa.int16(), False)])) as w:
        with w.fill_context() as ctx:
            with pytest.raises(rntuple.WriteError, match="holds null values"):
                ctx.extend(pa.table({"x": column}))
            assert ctx.num_entries == 0
            ctx.extend(pa.table({"x": pa.chunked_array([[8], [9]], pa.int16())}))
    with rntuple.open(path) as f:
        assert f["Events"].arrays().x.tolist() == [8, 9]
