"""Issue 27: an RNTuple goes to the Arrow world through the Arrow PyCapsule stream
(``RNTuple.__arrow_c_stream__``): pyarrow, DuckDB and Polars read it without a table made
first, and their results equal ``arrays(library="pa")``."""

from __future__ import annotations

import os

import awkward as ak
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import rntuple
from conftest import write_in_clusters

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")


@pytest.fixture(scope="module")
def clustered(tmp_path_factory) -> str:
    """Three clusters (40, 25, 35 entries) of a scalar, a jagged and a record field."""
    n = 100
    data = {
        "event": list(range(n)),
        "pt": [[float(i), i + 0.5][: i % 3] for i in range(n)],
        "met": [{"pt": i * 1.5, "phi": -float(i)} for i in range(n)],
        "tag": [f"t{i % 7}" for i in range(n)],
    }
    path = tmp_path_factory.mktemp("stream") / "clusters.root"
    return write_in_clusters(path, "Events", data, [40, 25, 35])


def test_pyarrow_reads_the_stream_one_batch_per_cluster(clustered):
    nt = rntuple.open(clustered)["Events"]
    reader = pa.RecordBatchReader.from_stream(nt)
    batches = list(reader)
    assert [b.num_rows for b in batches] == [40, 25, 35]
    expected = nt.arrays(library="pa")
    got = pa.Table.from_batches(batches)
    assert got.schema == expected.schema
    assert got.equals(expected)
    assert pa.table(nt).equals(expected)  # pyarrow.table() takes any stream


def test_a_requested_schema_selects_and_orders_fields_and_reads_only_those(clustered):
    nt = rntuple.open(clustered)["Events"]
    full = nt.arrays(library="pa")
    wanted = pa.schema([full.schema.field("tag"), full.schema.field("event")])
    nt.reset_io_stats()
    got = pa.RecordBatchReader.from_stream(nt, schema=wanted).read_all()
    assert got.column_names == ["tag", "event"]
    assert got.equals(nt.arrays(["tag", "event"], library="pa"))
    read_some = nt.io_stats()["bytes_needed"]
    nt.reset_io_stats()
    pa.table(nt)
    assert 0 < read_some < nt.io_stats()["bytes_needed"]
    # a cast the consumer asks for: event as int64
    cast = pa.RecordBatchReader.from_stream(nt, schema=pa.schema([pa.field("event", pa.int64(), False)])).read_all()
    assert cast.schema.field("event").type == pa.int64()
    assert cast.column("event").to_pylist() == list(range(100))
    with pytest.raises(KeyError, match="did you mean 'event'"):
        pa.RecordBatchReader.from_stream(nt, schema=pa.schema([pa.field("evnt", pa.int64())]))


def test_duckdb_queries_an_rntuple_by_name(clustered):
    import duckdb

    nt = rntuple.open(clustered)["Events"]
    expected = nt.arrays(library="pa")
    got = duckdb.sql("select event, pt, met, tag from nt").to_arrow_table()
    assert got.to_pylist() == expected.to_pylist()
    # an aggregate over a jagged field, against pyarrow's on the table
    total = duckdb.sql("select sum(list_sum(pt)) as s, count(*) as n from nt where event >= 10").fetchall()[0]
    mask = pc.greater_equal(expected.column("event"), 10)
    selected = expected.filter(mask)
    assert total[1] == selected.num_rows
    assert total[0] == pytest.approx(pc.sum(pc.list_flatten(selected.column("pt"))).as_py())


def test_duckdb_on_nanoaod_equals_arrays_pa():
    import duckdb

    nt = rntuple.open(MUONS)["Events"]
    got = duckdb.sql("select nMuon, Muon_pt from nt where nMuon >= 2").to_arrow_table()
    table = nt.arrays(["nMuon", "Muon_pt"], library="pa")
    expected = table.filter(pc.greater_equal(table.column("nMuon"), 2))
    assert got.num_rows == expected.num_rows > 0
    assert got.to_pylist() == expected.to_pylist()


def test_polars_from_arrow_equals_arrays_pa(clustered):
    import polars as pl

    nt = rntuple.open(clustered)["Events"]
    expected = pl.from_arrow(nt.arrays(library="pa"))
    got = pl.DataFrame(nt)  # a DataFrame from the stream
    assert got.equals(expected)
    assert got.height == 100 and got.columns == ["event", "pt", "met", "tag"]
    # from_arrow takes a generic stream as one Series of records, as it does for any stream
    series = pl.from_arrow(nt)
    assert series.struct.unnest().equals(expected)
    assert got["pt"].list.sum().sum() == pytest.approx(ak.sum(nt.arrays(["pt"]).pt))


@pytest.fixture(scope="module")
def twenty(tmp_path_factory) -> str:
    """Twenty float64 columns of equal size (random: incompressible), in four clusters."""
    import numpy as np

    rng = np.random.default_rng(27)
    n = 40_000
    data = {f"c{i:02d}": rng.normal(size=n) for i in range(20)}
    path = tmp_path_factory.mktemp("polars") / "twenty.root"
    return write_in_clusters(path, "T", data, [10_000] * 4)


def test_scan_polars_equals_the_eager_frame(clustered):
    import polars as pl

    lazy = rntuple.scan_polars(f"{clustered}:Events")
    assert lazy.collect().equals(pl.DataFrame(rntuple.open(clustered)["Events"]))
    got = lazy.filter(pl.col("event") % 7 == 3).select("tag", "event").collect()
    expected = pl.DataFrame(rntuple.open(clustered)["Events"]).filter(pl.col("event") % 7 == 3).select("tag", "event")
    assert got.equals(expected) and got.height == 14
    assert rntuple.scan_polars(clustered).head(3).collect()["event"].to_list() == [0, 1, 2]


def test_scan_polars_pushes_projection_and_slice_down(twenty):
    """One column of twenty reads at most 1.2/20 of the bytes all of them read (``io_stats``), and
    ``head`` reads the first cluster only."""
    import polars as pl

    nt = rntuple.open(twenty)["T"]
    nt.reset_io_stats()
    everything = rntuple.scan_polars(nt).collect()
    total = nt.io_stats()["bytes_read"]
    assert everything.width == 20 and everything.height == 40_000
    nt.reset_io_stats()
    one = rntuple.scan_polars(nt).select(pl.col("c07").sum()).collect()
    read = nt.io_stats()["bytes_read"]
    assert one.item() == pytest.approx(float(everything["c07"].sum()))
    assert 0 < read <= total * 1.2 / 20, (read, total)
    nt.reset_io_stats()
    first = rntuple.scan_polars(nt).select("c00").head(100).collect()
    assert first.height == 100
    assert 0 < nt.io_stats()["bytes_read"] <= read / 4 * 1.2


def test_a_chain_is_a_stream_too(clustered):
    import duckdb

    chain = rntuple.chain([f"{clustered}:Events", f"{clustered}:Events"])
    expected = chain.arrays(library="pa")
    got = pa.table(chain)
    assert got.num_rows == 200 and got.equals(expected)
    picked = pa.RecordBatchReader.from_stream(chain, schema=pa.schema([expected.schema.field("tag")])).read_all()
    assert picked.column_names == ["tag"] and picked.column("tag").equals(expected.column("tag"))
    assert duckdb.sql("select count(*) from chain where event < 10").fetchall() == [(20,)]


def test_duckdb_pushes_projection_and_filters_into_the_arrow_dataset(twenty):
    """``nt.arrow_dataset()``: DuckDB's projection and filter reach the reader, so a query of one
    column filtered on another reads about 2/20 of the bytes (``io_stats``); results equal pyarrow's
    on ``arrays(library="pa")``."""
    import duckdb

    nt = rntuple.open(twenty)["T"]
    table = nt.arrays(library="pa")
    nt.reset_io_stats()
    events = nt.arrow_dataset()  # noqa: F841 (DuckDB finds it by name)
    assert duckdb.sql("select count(*) from events").fetchall() == [(40_000,)]
    nt.reset_io_stats()
    assert duckdb.sql("select * from events").to_arrow_table().to_pydict() == table.to_pydict()
    total = nt.io_stats()["bytes_read"]
    nt.reset_io_stats()
    got = duckdb.sql("select sum(c07) from events where c13 > 0.5").fetchall()[0][0]
    read = nt.io_stats()["bytes_read"]
    expected = pc.sum(table.filter(pc.greater(table.column("c13"), 0.5)).column("c07")).as_py()
    assert got == pytest.approx(expected)
    assert 0 < read <= total * 2.4 / 20, (read, total)


def test_the_arrow_dataset_filters_on_fields_not_projected(clustered):
    """A filter on a record's member and on a field absent from the selection (pyarrow's own
    scanner API, as DuckDB calls it), against the same on the table."""
    nt = rntuple.open(clustered)["Events"]
    table = nt.arrays(library="pa")
    dataset = nt.arrow_dataset()
    expr = (pc.field("met", "pt") > 30.0) & (pc.field("tag") != "t3")
    got = dataset.to_table(columns=["event"], filter=expr)
    assert got.column_names == ["event"]
    assert got.column("event").to_pylist() == table.filter(expr).column("event").to_pylist()
    assert dataset.count_rows() == 100 and dataset.count_rows(filter=pc.field("event") < 7) == 7
    assert dataset.head(3, columns=["tag"]).column("tag").to_pylist() == ["t0", "t1", "t2"]
    with pytest.raises(KeyError, match="did you mean 'event'"):
        dataset.to_table(columns=["evnt"])
    with pytest.raises(rntuple.UnsupportedError, match="to_table"):
        dataset.join(dataset, "event")


def test_duckdb_on_a_chain_dataset(clustered):
    import duckdb

    chain = rntuple.chain([f"{clustered}:Events", f"{clustered}:Events"])
    events = chain.arrow_dataset()  # noqa: F841 (DuckDB finds it by name)
    assert duckdb.sql("select count(*), sum(event) from events where event < 10").fetchall() == [(20, 90)]
