"""The Python competitors of the benchmark, one run per process (started by
``bench/run.py``)::

    python children.py ours-write   --input DIR --output F [--compression 505] [--threads 1]
    python children.py uproot-write --input DIR --output F [--compression 505]
    python children.py ours-read    --file F [--fields a,b] [--start A] [--stop B] [--threads 1]
    python children.py uproot-read  --file F [--fields a,b] [--start A] [--stop B] [--threads 1]

Imports and input loading happen before the timer starts (interpreter
start-up is not measured); the timed section is the call a user makes:
open + ``arrays()`` into awkward for reads, ``recreate`` + write + close for
writes. One JSON line on stdout: wall and CPU seconds of the timed section,
resident memory after loading, and for reads the value checksums of
``checksum.py`` (computed after the timer stopped).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checksum  # noqa: E402
import workloads  # noqa: E402


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _status_bytes(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def rss_bytes() -> int:
    return _status_bytes("VmRSS:")


def peak_rss_bytes() -> int:
    """This program's peak RSS (see ``run.run_child`` for why not the rusage of the child)."""
    return _status_bytes("VmHWM:")


def heap_mark() -> None:
    """Marks a phase boundary for the benchmark's heap counter (``heapcount.c``, loaded with
    LD_PRELOAD when HEAPCOUNT_OUT is set): it writes the figures of the phase that ends."""
    if os.environ.get("HEAPCOUNT_OUT"):
        import ctypes

        ctypes.CDLL(None).heapcount_mark()


class Timer:
    def __enter__(self) -> Timer:
        heap_mark()
        self.cpu0 = _cpu()
        self.wall0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = _cpu() - self.cpu0
        heap_mark()


# ---------------------------------------------------------------------------
# the neutral input in memory


def _raw(directory: str, t: dict, count: int, key: str) -> np.ndarray:
    if key == "offsets":
        dtype, name, n = np.int64, t["offsets"], count + 1
    else:
        dtype, name, n = workloads.DTYPES[t["dtype"]], t["file"], count
    arr = np.fromfile(os.path.join(directory, name), dtype=np.dtype(dtype).newbyteorder("<"))
    if len(arr) != n:
        raise ValueError(f"{name}: {len(arr)} values, the manifest needs {n}")
    return arr


def _arrow(directory: str, t: dict, count: int):
    import pyarrow as pa

    if t["kind"] == "scalar":
        arr = _raw(directory, t, count, "values")
        if t["dtype"] == "b":
            return pa.array(arr != 0)
        return pa.array(arr)
    if t["kind"] == "vector":
        offsets = _raw(directory, t, count, "offsets")
        values = _arrow(directory, t["item"], int(offsets[-1]))
        list_type = pa.large_list(pa.field("_0", values.type, nullable=False))
        return pa.LargeListArray.from_arrays(pa.array(offsets), values, type=list_type)
    children = [_arrow(directory, m["type"], count) for m in t["members"]]
    fields = [pa.field(m["name"], c.type, nullable=False) for m, c in zip(t["members"], children, strict=True)]
    return pa.StructArray.from_arrays(children, fields=fields)


def load_arrow(directory: str):
    """The input as a pyarrow Table with non-nullable fields (our Python writer's input)."""
    import pyarrow as pa

    m = workloads.load_manifest(directory)
    columns = [_arrow(directory, f["type"], m["entries"]) for f in m["fields"]]
    schema = pa.schema([pa.field(f["name"], c.type, nullable=False) for f, c in zip(m["fields"], columns, strict=True)])
    return m, pa.Table.from_arrays(columns, schema=schema)


def _awkward(directory: str, t: dict, count: int):
    import awkward as ak

    if t["kind"] == "scalar":
        arr = _raw(directory, t, count, "values")
        return ak.contents.NumpyArray(arr != 0 if t["dtype"] == "b" else arr)
    if t["kind"] == "vector":
        offsets = _raw(directory, t, count, "offsets")
        return ak.contents.ListOffsetArray(ak.index.Index64(offsets), _awkward(directory, t["item"], int(offsets[-1])))
    contents = [_awkward(directory, m["type"], count) for m in t["members"]]
    return ak.contents.RecordArray(contents, [m["name"] for m in t["members"]], length=count)


def load_awkward(directory: str):
    """The input as an awkward record array (uproot's writer input), built on the loaded numpy arrays."""
    import awkward as ak

    m = workloads.load_manifest(directory)
    contents = [_awkward(directory, f["type"], m["entries"]) for f in m["fields"]]
    return m, ak.Array(ak.contents.RecordArray(contents, [f["name"] for f in m["fields"]], length=m["entries"]))


# ---------------------------------------------------------------------------
# competitors


def _threads_kwarg(func, threads: int) -> dict:
    """``{"threads": n}`` if ``func`` takes a ``threads`` argument (the reader's option, when it exists)."""
    try:
        return {"threads": threads} if "threads" in inspect.signature(func).parameters else {}
    except (TypeError, ValueError):
        return {}


def ours_write(args) -> dict:
    import rntuple

    m, table = load_arrow(args.input)
    rss = rss_bytes()
    with Timer() as t:
        with rntuple.recreate(args.output, compression=args.compression) as f:
            with f.mkrntuple(m["ntuple"], table.schema, compression_threads=args.threads) as w:
                w.extend(table)
    return {"wall": t.wall, "cpu": t.cpu, "rss_after_load": rss, "entries": m["entries"], "threads": args.threads}


def uproot_write(args) -> dict:
    import uproot

    m, array = load_awkward(args.input)
    rss = rss_bytes()
    algorithm, level = divmod(args.compression, 100)
    codec = {0: None, 1: uproot.ZLIB, 2: uproot.LZMA, 4: uproot.LZ4, 5: uproot.ZSTD}[algorithm if level else 0]
    with Timer() as t:
        with uproot.recreate(args.output, compression=codec(level) if codec else None) as f:
            f[m["ntuple"]] = array
    return {"wall": t.wall, "cpu": t.cpu, "rss_after_load": rss, "entries": m["entries"], "threads": 1}


def _read_result(t: Timer, t_open: float, rss: int, array, threads: int) -> dict:
    peak = peak_rss_bytes()  # before the checksum's temporary arrays
    return {
        "peak_rss_self": peak,
        "wall": t.wall,
        "cpu": t.cpu,
        "open_wall": t_open,
        "rss_after_load": rss,
        "entries": len(array),
        "threads": threads,
        "checksum": checksum.awkward_checksums(array),
    }


def ours_read(args) -> dict:
    import rntuple

    fields = args.fields.split(",") if args.fields else None
    open_kw = _threads_kwarg(rntuple.open, args.threads)
    rss = rss_bytes()
    with Timer() as t:
        f = rntuple.open(args.file, **open_kw)
        ntuple = f[args.name]
        t_open = time.perf_counter() - t.wall0
        array = ntuple.arrays(fields, entry_start=args.start, entry_stop=args.stop)
    threads = args.threads if open_kw else 1
    return _read_result(t, t_open, rss, array, threads)


def uproot_read(args) -> dict:
    import uproot

    fields = args.fields.split(",") if args.fields else None
    kw = {}
    if args.threads > 1:
        # accepted but, in uproot 5.7, not used for RNTuples ("Not implemented yet")
        kw["decompression_executor"] = uproot.ThreadPoolExecutor(args.threads)
    rss = rss_bytes()
    with Timer() as t:
        f = uproot.open(args.file, **kw)
        ntuple = f[args.name]
        t_open = time.perf_counter() - t.wall0
        if fields is None:
            array = ntuple.arrays(entry_start=args.start, entry_stop=args.stop)
        else:
            array = ntuple.arrays(filter_name=fields, entry_start=args.start, entry_stop=args.stop)
    return _read_result(t, t_open, rss, array, args.threads)


COMMANDS = {"ours-write": ours_write, "uproot-write": uproot_write, "ours-read": ours_read, "uproot-read": uproot_read}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=sorted(COMMANDS))
    p.add_argument("--input")
    p.add_argument("--output")
    p.add_argument("--file")
    p.add_argument("--name", default="Events")
    p.add_argument("--fields")
    p.add_argument("--start", type=int, default=None)
    p.add_argument("--stop", type=int, default=None)
    p.add_argument("--compression", type=int, default=505)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    result = COMMANDS[args.command](args)
    result.setdefault("peak_rss_self", peak_rss_bytes())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
