"""Remote writing benchmark (issue 24): a NanoAOD-like file (bench/remote.py's ``generate``) written
straight to each store (moto S3, xrootd, nginx WebDAV) behind a proxy that adds latency to every
request, against writing it locally and copying it with the store's own client (boto3's transfer
manager, as ``aws s3 cp``; ``xrdcp``; ``curl -T`` for WebDAV). Wall time, requests the server logged
and the writer's peak RSS, each case in a fresh process.

    python bench/remote_write.py [--entries 2000000] [--latency 0.01] [--out FILE]

The servers and the proxy are the tests' own (tests/python/server_*.py, fault_proxy.py). The proxy
adds its latency to every chunk (64 KiB) the client sends, so uploads through it are throttled to
about 6 MiB/s for every case alike: the figures compare the ways of writing, not the link.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "python"))
sys.path.insert(0, HERE)

from fault_proxy import FaultProxy  # noqa: E402

WRITE = (
    "import sys; sys.path.insert(0, sys.argv[3]); from remote import generate; generate(sys.argv[1], int(sys.argv[2]))"
)


def run(cmd: list[str], env: dict) -> dict:
    """Wall time and peak RSS (MiB) of ``cmd`` in a child process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if status != 0:
        print(f"{cmd[:3]} failed ({status}):\n{err[-2000:]}", file=sys.stderr)
        return {"wall": float("nan"), "rss": float("nan"), "error": err[-300:]}
    return {"wall": wall, "rss": usage.ru_maxrss / 1024}


def write(url: str, entries: int, env: dict) -> dict:
    return run([sys.executable, "-c", WRITE, url, str(entries), HERE], env)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=2_000_000)
    ap.add_argument("--latency", type=float, default=0.01)
    ap.add_argument("--stores", default="s3,xrootd,dav")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="rntuple-bench-write-")
    env = dict(os.environ)
    local = os.path.join(work, "local.root")
    rows = []
    try:
        base = write(local, args.entries, env)
        size = os.path.getsize(local)
        rows.append(("local", "rntuple → local disk", base, "-"))
        for store in args.stores.split(","):
            rows += bench_store(store, local, work, args, env, base)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        f"{args.entries:,} entries, {size / 2**20:.0f} MiB, {args.latency * 1000:.0f} ms added per request",
        "",
        "| store | how | wall (s) | requests | peak RSS (MiB) |",
        "|---|---|---|---|---|",
    ]
    for store, how, res, requests in rows:
        lines.append(f"| {store} | {how} | {res['wall']:.1f} | {requests} | {res['rss']:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0


def bench_store(store: str, local: str, work: str, args, env: dict, base: dict) -> list:
    env = dict(env)
    rows = []
    if store == "s3":
        from server_s3 import FAKE_CREDENTIALS, Moto

        os.makedirs(os.path.join(work, "moto"))
        srv = Moto(os.path.join(work, "moto"))
        srv.client().create_bucket(Bucket="out")
        proxy = FaultProxy(srv.port, latency=args.latency).start()
        env.update(FAKE_CREDENTIALS, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}")

        def count() -> int:
            with open(srv.log_path) as f:
                return len(re.findall(r'"(?:PUT|POST) /out/', f.read()))

        n0 = count()
        rows.append(("S3", "rntuple → s3:// (multipart)", write("s3://out/direct.root", args.entries, env), None))
        n1 = count()
        copy = (
            "import sys, boto3; boto3.client('s3', endpoint_url=sys.argv[2])"
            ".upload_file(sys.argv[1], 'out', 'copied.root')"
        )
        cp = run([sys.executable, "-c", copy, local, env["AWS_ENDPOINT_URL"]], env)
        n2 = count()
        rows[-1] = (*rows[-1][:3], n1 - n0)
        rows.append(("S3", "local + boto3 upload_file (`aws s3 cp`)", combine(base, cp), n2 - n1))
    elif store == "xrootd":
        from server_xrootd import XrootdServer

        srv = XrootdServer(extra_config="xrootd.trace request").start()
        os.makedirs(os.path.join(srv.data, "out"))
        os.chmod(os.path.join(srv.data, "out"), 0o777)
        proxy = FaultProxy(srv.port, latency=args.latency).start()

        def count() -> int:
            with open(srv.log, errors="replace") as fh:
                return len(re.findall(r" req=(?:write|pgwrite|open|sync|close|mv) ", fh.read()))

        n0 = count()
        url = f"root://127.0.0.1:{proxy.port}//out/direct.root"
        rows.append(("XRootD", "rntuple → root:// (writes at offsets)", write(url, args.entries, env), None))
        n1 = count()
        rows[-1] = (*rows[-1][:3], n1 - n0)
        if shutil.which("xrdcp"):
            cp = run(["xrdcp", "-f", "-s", local, f"root://127.0.0.1:{proxy.port}//out/copied.root"], env)
            rows.append(("XRootD", "local + xrdcp", combine(base, cp), count() - n1))
    elif store == "dav":
        from server_http import Nginx

        srv = Nginx(os.path.join(work, "nginx"), [], "token")
        proxy = FaultProxy(srv.port, latency=args.latency).start()

        def count() -> int:
            return sum(1 for line in srv.log() if line.split()[0] in ("PUT", "MOVE"))

        n0 = count()
        url = f"http://127.0.0.1:{proxy.port}/dav/direct.root"
        rows.append(("WebDAV", "rntuple → http:// (spool, PUT, MOVE)", write(url, args.entries, env), None))
        n1 = count()
        rows[-1] = (*rows[-1][:3], n1 - n0)
        if shutil.which("curl"):
            cp = run(["curl", "-sf", "-T", local, f"http://127.0.0.1:{proxy.port}/dav/copied.root"], env)
            rows.append(("WebDAV", "local + curl -T", combine(base, cp), count() - n1))
    else:
        raise SystemExit(f"unknown store {store!r}")
    proxy.stop()
    srv.stop()
    return rows


def combine(write_local: dict, copy: dict) -> dict:
    """Writing locally then copying: the times add up, the peak is the larger one."""
    return {"wall": write_local["wall"] + copy["wall"], "rss": max(write_local["rss"], copy["rss"])}


if __name__ == "__main__":
    raise SystemExit(main())
