"""Remote reading benchmark (issue 12): one NanoAOD-like file over real nginx (HTTP), xrootd and
moto (S3) servers, each behind a proxy that adds latency to every request, read by rntuple (cold,
then with its cache warm), by uproot 5.7 (HTTP; XRootD through fsspec-xrootd; S3 through s3fs) and
by ROOT 6.40 where its PyPI build can read the URL; requests, bytes over the wire ÷ bytes needed
and wall time (median of ``--repeat`` runs), side by side in one run.

    python bench/remote.py [--entries 2000000] [--latency 0.01] [--repeat 3] [--out FILE]

The servers and the proxy are the tests' own (tests/python/server_*.py, fault_proxy.py), started
on 127.0.0.1 and stopped at the end. The file is generated once into $RNTUPLE_CACHE/bench/remote.
uproot runs in a separate virtual environment that this script creates under
$RNTUPLE_CACHE/bench/uproot-venv (uproot, fsspec-xrootd, the ``xrootd`` bindings and s3fs from
PyPI), so that s3fs's aiobotocore pins never touch the moto / boto3 of the test environment. ROOT
runs in a subprocess of this interpreter (PyPI ``root``); its figures are RNTupleReader's metrics.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial

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


# --------------------------------------------------------------------------
# uproot, in its own virtual environment

SIDE_PACKAGES = ["uproot==5.7.7", "awkward", "fsspec-xrootd", "xrootd", "s3fs"]

UPROOT_READ = r"""
import json, sys, time
import uproot
url, columns, options = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
t = time.perf_counter()
with uproot.open(url, **options) as f:
    nt = f["Events"]
    nt.arrays(filter_name=columns) if columns else nt.arrays()
    src = f.file.source
    out = {"wall": time.perf_counter() - t, "source": type(src).__name__,
           "uproot_requests": src.num_requests, "chunks": src.num_requested_chunks,
           "bytes": src.num_requested_bytes}
print(json.dumps(out))
"""


def side_python(cache_root: str) -> str:
    """The interpreter of the uproot environment, created (python -m venv + pip) when missing."""
    venv = os.path.join(cache_root, "bench", "uproot-venv")
    python = os.path.join(venv, "bin", "python")
    done = os.path.join(venv, ".complete")
    if not os.path.exists(done):
        subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", *SIDE_PACKAGES], check=True)
        with open(done, "w", encoding="utf-8") as fh:
            fh.write(" ".join(SIDE_PACKAGES) + "\n")
    return python


def uproot_read(python: str, url: str, columns: list[str] | None, env: dict, options: dict) -> dict:
    cmd = [python, "-c", UPROOT_READ, url, json.dumps(columns), json.dumps(options)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(_last_error(r.stderr + r.stdout, r.returncode))
    return json.loads(r.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------
# ROOT 6.40 (PyPI), in a subprocess of this interpreter; its figures are RNTupleReader's metrics

ROOT_READ = r"""
import json, sys, time
import ROOT
url, columns = sys.argv[1], json.loads(sys.argv[2])  # columns: {name: C++ type} or null
if columns:  # views of the columns only: ROOT then loads only their pages
    views = "".join(f' auto v{i} = r->GetView<{ty}>("{c}");' for i, (c, ty) in enumerate(columns.items()))
    touch = "".join(f" (void)v{i}(e);" for i in range(len(columns)))
    body = views + " for (auto e : r->GetEntryRange()) {" + touch + " }"
else:  # the default entry: every field
    body = " for (auto e : r->GetEntryRange()) r->LoadEntry(e);"
ROOT.gInterpreter.Declare(
    "std::vector<double> rntuple_bench_read(const std::string &url) {"
    ' auto r = ROOT::RNTupleReader::Open("Events", url); r->EnableMetrics();' + body +
    " const auto &m = r->GetMetrics(); std::vector<double> out;"
    ' for (auto n : {"nReadV", "nRead", "szReadPayload", "szReadOverhead"}) {'
    '  auto *c = m.GetCounter(std::string("RNTupleReader.RPageSourceFile.") + n);'
    "  out.push_back(c ? double(c->GetValueAsInt()) : 0.0); }"
    " return out; }"
)
t = time.perf_counter()
readv, read, payload, overhead = ROOT.rntuple_bench_read(url)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "readv": int(readv), "read": int(read), "bytes": int(payload + overhead)}))
"""


def root_read(url: str, columns: dict[str, str] | None) -> dict:
    """ROOT reading ``columns`` ({name: C++ type}; None: every field) of ``Events`` at ``url``."""
    cmd = [sys.executable, "-c", ROOT_READ, url, json.dumps(columns)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(_last_error(r.stderr + r.stdout, r.returncode))
    return json.loads(r.stdout.strip().splitlines()[-1])


def _last_error(text: str, code: int) -> str:
    """The line of a failed run's output that says what failed."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "rror" in line or "annot" in line]
    return (errors or lines or [f"exit status {code}"])[-1]


# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--entries", type=int, default=2_000_000)
    p.add_argument("--latency", type=float, default=0.01, help="seconds added to every request")
    p.add_argument("--servers", default="http,xrootd,s3")
    p.add_argument("--readers", default="ours,uproot,root")
    p.add_argument("--repeat", type=int, default=3, help="runs of each read; times are medians")
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
    readers = args.readers.split(",")
    types = {f.name: f.type_name for f in rntuple.open(local)["Events"].fields}
    python = side_python(cache_root) if "uproot" in readers else ""

    rows: list[str] = []
    work = tempfile.mkdtemp(prefix="rntuple-remote-bench-")
    try:
        for server in args.servers.split(","):
            srv = _start(server, local, work, args.latency)
            try:
                for label, cols in (("all columns", None), ("3 columns", THREE)):
                    res: dict[str, dict] = {}
                    url = srv["url"]
                    if "ours" in readers:
                        res["ours"] = _runs(args.repeat, srv, lambda u=url, c=cols: ours(u, c, None))
                        cache = os.path.join(work, f"cache-{server}-{len(cols or [])}")
                        ours(url, cols, cache)  # fills the cache
                        res["warm"] = _runs(args.repeat, srv, lambda u=url, c=cols, d=cache: ours(u, c, d))
                    if "uproot" in readers:
                        read = partial(uproot_read, python, url, cols, srv["env"], srv["uproot_options"])
                        res["uproot"] = _runs(args.repeat, srv, read)
                    if "root" in readers:
                        typed = {c: types[c] for c in cols} if cols else None
                        res["root"] = _runs(args.repeat, srv, lambda u=url, c=typed: root_read(u, c))
                    rows.append(_row(server, label, res))
                    print(rows[-1], json.dumps(res, default=str), flush=True)
            finally:
                srv["stop"]()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = _table(rows, size, args)
    print(table)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(table + "\n")
    return 0


def _runs(repeat: int, srv: dict, fn) -> dict:
    """``repeat`` runs of ``fn``: the first run's figures with the requests the server logged and
    the bytes the proxy forwarded to the client (neither depends on the machine's load), and the
    median wall time; or the error of the first failing run."""
    runs = []
    for _ in range(repeat):
        before, down = srv["count"](), srv["proxy"].bytes_down
        try:
            r = fn()
        except Exception as err:  # a reader's failure is a result to report, not a crash
            return {"error": f"{type(err).__name__}: {str(err)[:200]}"}
        r["server_requests"] = srv["count"]() - before
        r["wire_bytes"] = srv["proxy"].bytes_down - down
        runs.append(r)
    first = dict(runs[0])
    first["wall"] = statistics.median(r["wall"] for r in runs)
    first["walls"] = [round(r["wall"], 2) for r in runs]
    return first


def _start(server: str, local: str, work: str, latency: float) -> dict:
    """The server behind the latency proxy: ``stop``, ``url``, ``count`` (the data requests the
    server logged: GETs of nginx and moto, read/readv/pgread of xrootd's request trace),
    ``proxy``, and the ``env`` and fsspec ``uproot_options`` of the uproot run."""
    env = dict(os.environ)
    if server == "http":
        from server_http import Nginx

        srv = Nginx(os.path.join(work, "nginx"), [local], "token")
        proxy = FaultProxy(srv.port, latency=latency).start()
        url = f"http://127.0.0.1:{proxy.port}/{os.path.basename(local)}"

        def count() -> int:
            return sum(1 for line in srv.log() if line.startswith("GET "))

        return _server(srv, proxy, url, count, env, {})
    if server == "xrootd":
        from server_xrootd import XrootdServer

        srv = XrootdServer(extra_config="xrootd.trace request").start()
        path = srv.put(local)
        proxy = FaultProxy(srv.port, latency=latency).start()

        def reads() -> int:  # the data requests of the trace: read, readv, pgread
            with open(srv.log, errors="replace") as fh:
                return len(re.findall(r" req=(?:read|readv|pgread) ", fh.read()))

        return _server(srv, proxy, srv.url(path, port=proxy.port), reads, env, {})
    if server == "s3":
        from server_s3 import FAKE_CREDENTIALS, Moto

        os.makedirs(os.path.join(work, "moto"))
        srv = Moto(os.path.join(work, "moto"))
        s3 = srv.client()
        s3.create_bucket(Bucket="physics")
        s3.upload_file(local, "physics", "nanolike.root")
        proxy = FaultProxy(srv.port, latency=latency).start()
        endpoint = f"http://127.0.0.1:{proxy.port}"
        os.environ.update(FAKE_CREDENTIALS)
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        env.update(FAKE_CREDENTIALS, AWS_ENDPOINT_URL=endpoint)
        url = "s3://physics/nanolike.root"
        return _server(srv, proxy, url, lambda: len(srv.gets()), env, {"endpoint_url": endpoint})
    raise SystemExit(f"unknown server {server!r}")


def _server(srv, proxy: FaultProxy, url: str, count, env: dict, uproot_options: dict) -> dict:
    def stop() -> None:
        proxy.stop()
        srv.stop()

    return {"stop": stop, "url": url, "count": count, "proxy": proxy, "env": env, "uproot_options": uproot_options}


def _row(server: str, label: str, res: dict) -> str:
    cells = [server, label]
    cold, warm = res.get("ours"), res.get("warm")
    ok = cold is not None and "error" not in cold
    if ok:
        amp = cold["wire_bytes"] / cold["needed"] if cold["needed"] else float("nan")
        cells += [
            f"{cold['requests']} ({cold['sub_ranges']} sub-ranges; server: {cold['server_requests']})",
            f"{cold['wire_bytes'] / 1e6:.1f} MB ({amp:.3f})",
            f"{cold['wall']:.2f} s",
            f"{warm['wire_bytes']} B, {warm['wall']:.2f} s" if warm and "error" not in warm else "-",
        ]
    else:
        cells += [f"fails: {cold['error']}" if cold else "not run", "-", "-", "-"]
    for who in ("uproot", "root"):
        r = res.get(who)
        if r is None:
            cells.append("not run")
            continue
        if "error" in r:
            cells.append(f"fails: {r['error']}")
            continue
        if r["server_requests"]:
            requests, what = r["server_requests"], "reads" if server == "xrootd" else "GETs"
        elif who == "uproot":
            requests, what = r["chunks"], f"ranges ({r['source']})"
        else:
            requests, what = r["readv"] + r["read"], f"reads ({r['readv']} vectored)"
        ratio = f", {r['wall'] / cold['wall']:.1f}× ours" if ok else ""
        cells.append(f"{requests} {what}, {r['wire_bytes'] / 1e6:.1f} MB, {r['wall']:.2f} s{ratio}")
    return "| " + " | ".join(cells) + " |"


def _table(rows: list[str], size: int, args: argparse.Namespace) -> str:
    head = (
        f"\n### Remote reading, {size / 1e6:.0f} MB NanoAOD-like file, {args.latency * 1e3:.0f} ms per request\n\n"
        "| server | read | our requests, cold | over the wire (÷ needed) | our wall, cold | warm cache "
        "| uproot 5.7 | ROOT 6.40 |\n|---|---|---|---|---|---|---|---|"
    )
    return "\n".join([head, *rows])


if __name__ == "__main__":
    sys.exit(main())
