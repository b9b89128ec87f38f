"""Remote reading benchmark (issue 12): one NanoAOD-like file over real nginx (HTTP), xrootd and
moto (S3) servers, each behind a proxy that adds latency to every request, read by rntuple (cold,
then with its cache warm) and by uproot where it can read the URL; requests, bytes transferred
÷ bytes needed and wall time, side by side in one run.

    python bench/remote.py [--entries 2000000] [--latency 0.01] [--out docs/remote-bench.md]

The servers and the proxy are the tests' own (tests/python/server_*.py, fault_proxy.py), started
on 127.0.0.1 and stopped at the end. The file is generated once into $RNTUPLE_CACHE/bench/remote.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "python"))

import rntuple  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402

THREE = ["MET_pt", "Muon_pt", "Jet_pt"]
COLLECTIONS = {"Muon": 2.0, "Electron": 1.5, "Jet": 6.0}
MEMBERS = ["pt", "eta", "phi", "mass", "btag"]
SCALARS = [f"HLT_var{i}" for i in range(40)] + ["MET_pt", "MET_phi", "PV_npvs"]


def generate(path: str, entries: int, chunk: int = 200_000) -> None:
    """A deterministic NanoAOD-like file: float scalars and three jagged collections."""
    import awkward as ak

    rng = np.random.default_rng(20261124)
    with rntuple.recreate(path) as f:
        w = None
        for start in range(0, entries, chunk):
            n = min(chunk, entries - start)
            data: dict[str, object] = {}
            for name in SCALARS:
                data[name] = (rng.exponential(30.0, n) * (1 + rng.normal(0, 1e-3, n))).astype(np.float32)
            for coll, mean in COLLECTIONS.items():
                counts = rng.poisson(mean, n).astype(np.int64)
                total = int(counts.sum())
                for m in MEMBERS:
                    flat = rng.normal(0, 2.5, total).astype(np.float32) if m != "pt" else rng.exponential(25.0, total)
                    data[f"{coll}_{m}"] = ak.unflatten(np.asarray(flat, dtype=np.float32), counts)
            if w is None:
                w = f.mkrntuple("Events", rntuple.schema_of(data))
            w.extend(data)


def ours(url: str, columns: list[str] | None, cache: str | None) -> dict:
    t = time.perf_counter()
    with rntuple.open(url, cache=cache) as f:
        nt = f["Events"]
        nt.arrays(filter_name=columns) if columns else nt.arrays()
        s = f.io_stats()
    wall = time.perf_counter() - t
    wire = s["wire"] or {}
    return {
        "requests": wire.get("single_requests", 0) + wire.get("vectored_requests", 0),
        "sub_ranges": wire.get("sub_ranges", 0),
        "transferred": wire.get("bytes_transferred", 0),
        "needed": s["bytes_needed"],
        "cache_bytes": wire.get("cache_bytes", 0),
        "wall": wall,
    }


def uproot_read(url: str, columns: list[str] | None, count) -> dict:
    import uproot

    before = count()
    t = time.perf_counter()
    with uproot.open(url) as f:
        nt = f["Events"]
        nt.arrays(filter_name=columns) if columns else nt.arrays()
    return {"requests": count() - before, "wall": time.perf_counter() - t}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=2_000_000)
    p.add_argument("--latency", type=float, default=0.01, help="seconds added to every request")
    p.add_argument("--servers", default="http,xrootd,s3")
    p.add_argument("--out", default=None, help="append the Markdown table to this file")
    args = p.parse_args(argv)

    cache_root = os.environ.get("RNTUPLE_CACHE", os.path.expanduser("~/.cache/rntuple-ci"))
    store = os.path.join(cache_root, "bench", "remote")
    os.makedirs(store, exist_ok=True)
    local = os.path.join(store, f"nanolike-{args.entries}.root")
    if not os.path.exists(local):
        generate(local + ".tmp", args.entries)
        os.rename(local + ".tmp", local)
    size = os.path.getsize(local)
    print(f"file: {local} ({size / 1e6:.0f} MB, {args.entries:,} entries); latency {args.latency * 1e3:.0f} ms")

    rows: list[str] = []
    work = tempfile.mkdtemp(prefix="rntuple-remote-bench-")
    try:
        for server in args.servers.split(","):
            stop, url, count = _start(server, local, work, args.latency)
            try:
                for label, cols in (("all columns", None), ("3 columns", THREE)):
                    cache = os.path.join(work, f"cache-{server}-{len(cols or [])}")
                    cold = ours(url, cols, cache)
                    warm = ours(url, cols, cache)
                    up = _try(lambda u=url, c=cols, n=count: uproot_read(u, c, n)) if count else None
                    rows.append(_row(server, label, cold, warm, up))
                    print(rows[-1], flush=True)
            finally:
                stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = _table(rows, size, args)
    print(table)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(table + "\n")
    return 0


def _start(server: str, local: str, work: str, latency: float):
    """(stop, URL through the latency proxy, count of requests the server saw or None)."""
    if server == "http":
        from server_http import Nginx

        srv = Nginx(os.path.join(work, "nginx"), [local], "token")
        proxy = FaultProxy(srv.port, latency=latency).start()
        url = f"http://127.0.0.1:{proxy.port}/{os.path.basename(local)}"

        def count() -> int:
            return sum(1 for line in srv.log() if line.startswith("GET "))

        return (lambda: (proxy.stop(), srv.stop())), url, count
    if server == "xrootd":
        from server_xrootd import XrootdServer

        srv = XrootdServer().start()
        path = srv.put(local)
        proxy = FaultProxy(srv.port, latency=latency).start()
        return (lambda: (proxy.stop(), srv.stop())), srv.url(path, port=proxy.port), None
    if server == "s3":
        from server_s3 import FAKE_CREDENTIALS, Moto

        os.makedirs(os.path.join(work, "moto"))
        srv = Moto(os.path.join(work, "moto"))
        s3 = srv.client()
        s3.create_bucket(Bucket="physics")
        s3.upload_file(local, "physics", "nanolike.root")
        proxy = FaultProxy(srv.port, latency=latency).start()
        os.environ.update(FAKE_CREDENTIALS)
        os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{proxy.port}"
        return (lambda: (proxy.stop(), srv.stop())), "s3://physics/nanolike.root", None
    raise SystemExit(f"unknown server {server!r}")


def _try(fn):
    try:
        return fn()
    except Exception as err:  # uproot's failure is a result to report, not a crash of the benchmark
        return {"error": f"{type(err).__name__}: {str(err)[:80]}"}


def _row(server: str, label: str, cold: dict, warm: dict, up: dict | None) -> str:
    amp = cold["transferred"] / cold["needed"] if cold["needed"] else float("nan")
    if up is None:
        theirs = "not run (uproot needs fsspec-xrootd / s3fs for this scheme; not installed)"
    elif "error" in up:
        theirs = f"failed: {up['error']}"
    else:
        theirs = f"{up['requests']} requests, {up['wall']:.1f} s ({up['wall'] / cold['wall']:.1f}× our time)"
    return (
        f"| {server} | {label} | {cold['requests']} ({cold['sub_ranges']} sub-ranges) | {amp:.3f} | "
        f"{cold['wall']:.1f} s | {warm['transferred']} B remote, {warm['cache_bytes'] / 1e6:.0f} MB cached, "
        f"{warm['wall']:.1f} s | {theirs} |"
    )


def _table(rows: list[str], size: int, args: argparse.Namespace) -> str:
    head = (
        f"\n### Remote reading, {size / 1e6:.0f} MB NanoAOD-like file, {args.latency * 1e3:.0f} ms per request\n\n"
        "| server | read | our requests, cold | transferred ÷ needed | our wall, cold | warm cache | uproot 5.7 |\n"
        "|---|---|---|---|---|---|---|"
    )
    return "\n".join([head, *rows])


if __name__ == "__main__":
    sys.exit(main())
