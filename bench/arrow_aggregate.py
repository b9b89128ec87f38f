"""An aggregate over an RNTuple through DuckDB and Polars, against the same data as Parquet.

    python bench/arrow_aggregate.py [--entries 2000000] [--dir /tmp/arrow_aggregate] [--repeat 3]

Writes a NanoAOD-like RNTuple of ``--entries`` entries (20 top-level fields: flat floats and
ints, and three collections), converts it to Parquet with ``rntuple convert FILE OUT.parquet``
(the command, as a user would), then times the same query on both:

    select count(*), avg(MET_pt), sum(nJet) from events where nMuon >= 1

* RNTuple: DuckDB on the RNTuple itself (``duckdb.sql(... from nt)``: the Arrow PyCapsule
  stream, one record batch per cluster, every column: DuckDB passes no requested schema) and on
  ``nt.arrow_dataset()`` (DuckDB pushes projection and filter into it: 3 of 20 columns read),
  Polars on ``rntuple.scan_polars`` (projection pushdown: 3 of 20 columns read), and
  ``arrays(library="pa")`` + pyarrow.compute;
* Parquet: pyarrow (``pq.read_table(columns=...)`` + pyarrow.compute), DuckDB
  (``read_parquet``), Polars (``scan_parquet``).

Each figure is the best of ``--repeat`` runs, from a warm page cache (the files were just
written); the bytes read by the RNTuple readers come from ``io_stats``. All results are checked
equal before anything is printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import rntuple

QUERY = "select count(*) as n, avg(MET_pt) as met, sum(nJet) as njet from {src} where nMuon >= 1"


def write(path: Path, entries: int, seed: int = 5) -> None:
    """20 top-level fields: 14 flat, nJet/nMuon counts and their collections' members."""
    rng = np.random.default_rng(seed)
    step = 250_000
    with rntuple.recreate(path) as f:
        writer = None
        for start in range(0, entries, step):
            n = min(step, entries - start)
            n_jet = rng.poisson(4, n).astype(np.uint32)
            n_mu = rng.poisson(0.8, n).astype(np.uint32)
            import awkward as ak

            batch: dict[str, Any] = {
                "run": np.full(n, 1, dtype=np.uint32),
                "event": np.arange(start, start + n, dtype=np.uint64),
                "MET_pt": rng.exponential(40, n).astype(np.float32),
                "MET_phi": rng.uniform(-3.14, 3.14, n).astype(np.float32),
                "nJet": n_jet,
                "nMuon": n_mu,
                "Jet_pt": ak.unflatten(rng.exponential(50, int(n_jet.sum())).astype(np.float32), n_jet),
                "Jet_eta": ak.unflatten(rng.normal(0, 1.5, int(n_jet.sum())).astype(np.float32), n_jet),
                "Muon_pt": ak.unflatten(rng.exponential(30, int(n_mu.sum())).astype(np.float32), n_mu),
            }
            for i in range(11):
                batch[f"flat_{i:02d}"] = rng.normal(i, 1, n).astype(np.float32)
            array = ak.Array(batch)
            if writer is None:
                writer = f.mkrntuple("Events", array)
            else:
                writer.extend(array)


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv: list[str] | None = None) -> None:
    import duckdb
    import polars as pl
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2_000_000)
    parser.add_argument("--dir", default="/tmp/arrow_aggregate")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    root, parquet = out / f"events_{args.entries}.root", out / f"events_{args.entries}.parquet"
    if not root.exists():
        write(root, args.entries)
    if not parquet.exists():
        subprocess.run([sys.executable, "-m", "rntuple", "convert", str(root), str(parquet)], check=True)
    print(f"{args.entries:,} entries; RNTuple {os.path.getsize(root) / 2**20:.1f} MiB, "
          f"Parquet {os.path.getsize(parquet) / 2**20:.1f} MiB; load {os.getloadavg()[0]:.1f}")  # fmt: skip

    def nt() -> Any:
        return rntuple.open(root)["Events"]

    def duck_rntuple() -> tuple:
        events = nt()  # noqa: F841 (DuckDB finds it by name)
        return duckdb.sql(QUERY.format(src="events")).fetchall()[0]

    def duck_dataset() -> tuple:
        events = nt().arrow_dataset()  # noqa: F841 (DuckDB finds it by name)
        return duckdb.sql(QUERY.format(src="events")).fetchall()[0]

    def polars_rntuple() -> tuple:
        lazy = rntuple.scan_polars(nt())
        q = lazy.filter(pl.col("nMuon") >= 1).select(
            pl.len().alias("n"), pl.col("MET_pt").mean(), pl.col("nJet").cast(pl.Int64).sum()
        )
        return tuple(q.collect().row(0))

    def pyarrow_rntuple() -> tuple:
        t = nt().arrays(["MET_pt", "nJet", "nMuon"], library="pa")
        return _pyarrow_aggregate(t, pc)

    def pyarrow_parquet() -> tuple:
        t = pq.read_table(parquet, columns=["MET_pt", "nJet", "nMuon"])
        return _pyarrow_aggregate(t, pc)

    def duck_parquet() -> tuple:
        return duckdb.sql(QUERY.format(src=f"read_parquet('{parquet}')")).fetchall()[0]

    def polars_parquet() -> tuple:
        q = (
            pl.scan_parquet(parquet)
            .filter(pl.col("nMuon") >= 1)
            .select(pl.len().alias("n"), pl.col("MET_pt").mean(), pl.col("nJet").cast(pl.Int64).sum())
        )
        return tuple(q.collect().row(0))

    ways = [
        ("DuckDB on the RNTuple (Arrow stream)", duck_rntuple),
        ("DuckDB on the RNTuple (arrow_dataset())", duck_dataset),
        ("Polars scan_polars on the RNTuple", polars_rntuple),
        ("pyarrow on the RNTuple (arrays(library='pa'))", pyarrow_rntuple),
        ("pyarrow on Parquet (read_table)", pyarrow_parquet),
        ("DuckDB on Parquet (read_parquet)", duck_parquet),
        ("Polars on Parquet (scan_parquet)", polars_parquet),
    ]
    results = []
    for label, fn in ways:
        wall, value = best(fn, args.repeat)
        results.append((label, wall, value))
    ref = results[0][2]
    for label, _, value in results:
        assert value[0] == ref[0] and value[2] == ref[2] and abs(value[1] - ref[1]) < 1e-3 * abs(ref[1]), (label, value)
    # what the RNTuple readers read: 3 of 20 columns
    for label in ("DuckDB", "DuckDB (arrow_dataset)", "Polars"):
        events = nt()
        if label == "DuckDB":
            duckdb.sql(QUERY.format(src="events")).fetchall()[0]
        elif label == "DuckDB (arrow_dataset)":
            dataset = events.arrow_dataset()  # noqa: F841 (DuckDB finds it by name)
            duckdb.sql(QUERY.format(src="dataset")).fetchall()[0]
        else:
            rntuple.scan_polars(events).filter(pl.col("nMuon") >= 1).select(pl.col("MET_pt").mean()).collect()
        whole = sum(c.num_entries for c in events.clusters)
        print(f"  {label} on the RNTuple read {events.io_stats()['bytes_read'] / 2**20:.1f} MiB "
              f"of {os.path.getsize(root) / 2**20:.1f} MiB ({whole:,} entries)")  # fmt: skip
    print(f"result: {ref}")
    print(f"| way | wall (best of {args.repeat}) |")
    print("|---|---:|")
    for label, wall, _ in results:
        print(f"| {label} | {wall:.3f} s |")


def _pyarrow_aggregate(t: Any, pc: Any) -> tuple:
    mask = pc.greater_equal(t["nMuon"], 1)
    sel = t.filter(mask)
    return (sel.num_rows, pc.mean(sel["MET_pt"]).as_py(), pc.sum(pc.cast(sel["nJet"], "int64")).as_py())


if __name__ == "__main__":
    main()
