"""The child process of one measurement: ``python -m rntuple.study._child`` reads a task as JSON on
standard input and prints its result as one JSON line. Each task runs in a fresh process so
that its peak RSS is its own."""

from __future__ import annotations

import json
import os
import random
import sys
import time
from typing import Any

import numpy as np

from ._data import Products
from ._measure import current_rss, drop_cache, peak_rss, resident_pages

PIECES = 20  # each RNTuple is written in this many batches, as a framework streams events


def save_products(p: Products, path: str) -> None:
    arrays = {f"hit_{k}": v for k, v in p.hits.items()}
    for key in (
        "spill_of_event",
        "hits_per_event",
        "wires_per_event",
        "wire_channel",
        "wire_view",
        "rois_per_wire",
        "roi_offset",
        "samples_per_roi",
        "samples",
    ):
        arrays[key] = getattr(p, key)
    arrays["events"] = np.array(p.events)
    arrays["spills"] = np.array(p.spills)
    np.savez(path, **arrays)  # type: ignore[arg-type]  # (numpy's stub types **kwds as its bool options)


def load_products(path: str) -> Products:
    with np.load(path) as z:
        kw = {k: z[k] for k in z.files if not k.startswith("hit_") and k not in ("events", "spills")}
        hits = {k[4:]: z[k] for k in z.files if k.startswith("hit_")}
        return Products(events=int(z["events"]), spills=int(z["spills"]), hits=hits, **kw)


def _length(cols: dict[str, Any]) -> int:
    return len(next(iter(cols.values())))


def write_layout(task: dict[str, Any]) -> dict[str, Any]:
    """Writes each RNTuple of the cell with a parallel writer: ``threads`` Python threads, each with its own
    fill context (which compresses its own pages), fill the batches round-robin (thread k: batches k,
    k + threads, ...), so that with several threads the RNTuple holds clusters of several contexts."""
    import rntuple

    from ._shapes import soa_options, tables

    built = tables(load_products(task["data"]), task["cell"])
    threads = task["threads"]
    before = current_rss()
    start = time.perf_counter()
    per_context: dict[str, list[int]] = {}
    with rntuple.recreate(task["path"], compression=task.get("compression", 505)) as f:
        for name, cols in built.items():
            n = _length(cols)
            step = max(1, -(-n // PIECES))
            pieces = [{k: v[lo : lo + step] for k, v in cols.items()} for lo in range(0, n, step)]
            schema = rntuple.schema_of({k: v[:1] for k, v in cols.items()})
            options = soa_options(task["cell"], list(cols))
            with f.mkrntuple_parallel(name, schema, compression_threads=1, **options) as writer:
                per_context[name] = fill_in_threads(writer, pieces, threads)
    return {**_written(start, before, task["path"]), "fill_contexts": threads, "entries_per_context": per_context}


def fill_in_threads(writer: Any, pieces: list[Any], threads: int) -> list[int]:
    """Fills ``pieces`` into ``writer`` (a ``ParallelWriter``) from ``threads`` threads, one fill context
    each, thread k taking pieces k, k + threads, ...; returns the entries each context filled."""
    import threading

    filled = [0] * threads
    errors: list[BaseException] = []

    def fill(k: int) -> None:
        try:
            with writer.fill_context() as ctx:
                for piece in pieces[k::threads]:
                    ctx.extend(piece)
                filled[k] = ctx.num_entries
        except BaseException as err:
            errors.append(err)

    workers = [threading.Thread(target=fill, args=(k,), name=f"fill-{k}") for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    if errors:
        raise errors[0]
    return filled


def _written(start: float, rss_before: int, path: str) -> dict[str, Any]:
    """What every writing task reports: its time since ``start``, peak RSS, RSS before writing, size."""
    return {
        "write_seconds": time.perf_counter() - start,
        "peak_rss": peak_rss(),
        "rss_before_write": rss_before,
        "file_size": os.path.getsize(path),
    }


def _timed_read(path: str, reads: dict[str, list[str]]) -> tuple[float, dict[str, int]]:
    import rntuple

    start = time.perf_counter()
    stats = {"bytes_read": 0, "requests": 0, "pages": 0}
    with rntuple.open(path) as f:
        for name, fields in reads.items():
            nt = f[name]
            if fields:
                nt.arrays(filter_name=fields)
            else:
                nt.arrays()
            io = nt.io_stats()
            for key in stats:
                stats[key] += int(io.get(key, 0))
    return time.perf_counter() - start, stats


def read(task: dict[str, Any]) -> dict[str, Any]:
    """Cold reads (pages dropped, residency checked first) then warm reads of the same fields."""
    path, reads, runs = task["path"], task["reads"], task["runs"]
    cold: list[float] = []
    resident_before: list[int] = []
    resident_after: list[int] = []
    io: dict[str, int] = {}
    for _ in range(runs):
        resident_before.append(drop_cache(path))
        seconds, io = _timed_read(path, reads)
        cold.append(seconds)
        resident_after.append(resident_pages(path)[0])
    _timed_read(path, reads)
    warm = [_timed_read(path, reads)[0] for _ in range(runs)]
    out = {
        "cold_seconds": cold,
        "warm_seconds": warm,
        "resident_before": resident_before,
        "resident_after": resident_after,
        "file_pages": resident_pages(path)[1],
        "io": io,
    }
    if task.get("sparse"):
        out.update(_sparse(task))
    out["peak_rss"] = peak_rss()
    return out


def _sparse(task: dict[str, Any]) -> dict[str, Any]:
    """ATLAS's sparse read: ``fraction`` of the entries, chosen at random (seeded), all fields, cold."""
    import rntuple

    path, name = task["path"], task["name"]
    drop_cache(path)
    start = time.perf_counter()
    with rntuple.open(path) as f:
        nt = f[name]
        n = nt.num_entries
        k = max(1, round(n * task["sparse"]))
        for i in sorted(random.Random(task["seed"]).sample(range(n), k)):
            nt.arrays(entry_start=i, entry_stop=i + 1)
        io = nt.io_stats()
    return {
        "sparse_seconds": time.perf_counter() - start,
        "sparse_entries": k,
        "sparse_bytes_read": int(io.get("bytes_read", 0)),
        "sparse_pages": int(io.get("pages", 0)),
    }


def write_knobs(task: dict[str, Any]) -> dict[str, Any]:
    import rntuple

    with rntuple.open(task["source"]) as f:
        nt = f[task["name"]]
        stop = min(nt.num_entries, task["entries"] or nt.num_entries)
        data = nt.arrays(entry_stop=stop, library="pa")
    before = current_rss()
    options = dict(task["options"])
    reps = {path: "unsplit" for path in task.get("unsplit", [])}
    types, streamer = streamer_types(data.schema) if task.get("streamer") else ({}, [])
    start = time.perf_counter()
    with rntuple.recreate(task["path"], compression=options.pop("compression")) as out:
        writer = out.mkrntuple(
            task["name"], data.schema, representations=reps or None, types=types or None, streamer=streamer, **options
        )
        step = max(1, -(-data.num_rows // PIECES))
        for lo in range(0, data.num_rows, step):
            writer.extend(data.slice(lo, step))
        writer.close()
    return {**_written(start, before, task["path"]), "entries": int(data.num_rows), "input_bytes": int(data.nbytes)}


def streamer_types(schema: Any) -> tuple[dict[str, str], list[str]]:
    """For the ``streamer`` knob: the top-level record fields (a struct, or a list of structs) that
    can be written as streamer fields (ROOT's ``RStreamerField``, the ATLAS study's "no split",
    members streamed whole per entry), with a class name for each struct (``Study_<path>``), as
    ``(types, streamer)`` for ``mkrntuple``. Fields with members the writer does not stream
    (maps, optionals, vectors of vectors, ...) stay split."""
    import pyarrow as pa

    def is_list(t: Any) -> bool:
        return bool(pa.types.is_list(t) or pa.types.is_large_list(t))

    def plain(t: Any) -> bool:
        return bool(
            pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_string(t)
        ) or pa.types.is_large_string(t)

    def flat(t: Any) -> bool:  # streamable inside a member-wise vector
        return plain(t) or (is_list(t) and plain(t.value_type))

    def ok(t: Any, member_wise: bool) -> bool:
        if flat(t):
            return True
        if pa.types.is_struct(t):
            return not member_wise and all(ok(t.field(i).type, False) for i in range(t.num_fields))
        if is_list(t) and pa.types.is_struct(t.value_type):
            s = t.value_type
            return all(flat(s.field(i).type) for i in range(s.num_fields))
        return False

    def name(t: Any, path: str, types: dict[str, str]) -> None:
        if pa.types.is_struct(t):
            types[path] = "Study_" + path.replace(".", "_").replace(":", "_")
            for i in range(t.num_fields):
                name(t.field(i).type, f"{path}.{t.field(i).name}", types)
        elif is_list(t) and pa.types.is_struct(t.value_type):
            name(t.value_type, path + "._0", types)
            types[path] = f"std::vector<{types.pop(path + '._0')}>"

    types: dict[str, str] = {}
    fields = []
    for f in schema:
        t = f.type
        top_list = is_list(t) and pa.types.is_struct(t.value_type)
        if (pa.types.is_struct(t) and ok(t, False)) or (top_list and ok(t.value_type, False)):
            name(t, f.name, types)
            fields.append(f.name)
    return types, fields


def generate_products(task: dict[str, Any]) -> dict[str, Any]:
    """Generates the layout study's products into ``task["path"]`` (here, so that the parent stays small)."""
    from ._data import generate

    p = generate(task["events"], seed=task["seed"])
    save_products(p, task["path"])
    return {"spills": p.spills, "checksums": p.checksums()}


TASKS = {"generate": generate_products, "write_layout": write_layout, "read": read, "write_knobs": write_knobs}


def main() -> None:
    task = json.loads(sys.stdin.read())
    result = TASKS[task["task"]](task)
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
