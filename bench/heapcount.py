"""Heap figures of a benchmark child: builds ``heapcount.c`` (an LD_PRELOAD allocation
counter, described in its header comment) and reads what it wrote.

    lib = heapcount.build(cache)                 # cached under <cache>/build/heapcount-<hash>/
    env = heapcount.environment(lib, out_path)   # LD_PRELOAD + HEAPCOUNT_OUT for the child
    figures = heapcount.figures(out_path, pid)   # after the child exited

A child marks the start and the end of its timed section (``heapcount_mark()`` through
``dlsym``/``ctypes``, or SIGUSR1); the figures of the section are:

* ``heap_peak``: the highest live heap during the section (input included),
* ``heap_above_input``: that peak minus the live heap at the start of the section,
* ``heap_requested``: bytes requested by allocation calls during the section,
* ``heap_calls``: allocation calls during the section,
* ``heap_hist``: per power of two of the request size, [log2, calls, bytes] of the section.
"""

from __future__ import annotations

import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "heapcount.c")
ENV_OUT = "HEAPCOUNT_OUT"


def build(cache: str, log=lambda s: None) -> str:
    """Compiles the counter once per source version; returns the path of the shared library."""
    with open(SOURCE, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()[:16]
    out_dir = os.path.join(cache, "build", "heapcount-" + digest)
    lib = os.path.join(out_dir, "heapcount.so")
    if os.path.exists(lib):
        return lib
    import cppgen  # its cached-build helpers

    tmp = cppgen._scratch(out_dir)
    flags = ["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror"]
    cppgen._run([os.environ.get("CC", "cc"), *flags, "-o", os.path.join(tmp, "heapcount.so"), SOURCE, "-ldl"], tmp, log)
    cppgen._publish(tmp, out_dir)
    return lib


def environment(lib: str, out_path: str, base: dict | None = None) -> dict:
    """The environment of a child run under the counter (``base``: os.environ by default)."""
    env = dict(os.environ if base is None else base)
    env["LD_PRELOAD"] = lib + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env[ENV_OUT] = out_path
    return env


def lines(out_path: str, pid: int | None = None) -> list[dict]:
    """The JSON lines the counter wrote (of process ``pid`` only: children it starts inherit it)."""
    if not os.path.exists(out_path):
        return []
    with open(out_path, encoding="utf-8") as fh:
        rows = [json.loads(ln) for ln in fh if ln.strip()]
    return [r for r in rows if pid is None or r["pid"] == pid]


def figures(out_path: str, pid: int | None = None) -> dict:
    """Heap figures of the timed section between the child's first two marks (empty if it made none)."""
    rows = lines(out_path, pid)
    marks = [r for r in rows if r["event"] == "mark"]
    if len(marks) < 2:
        return {}
    start, end = marks[0], marks[1]
    return {
        "heap_peak": end["peak"],
        "heap_above_input": end["peak"] - start["live"],
        "heap_requested": end["total_bytes"] - start["total_bytes"],
        "heap_calls": end["calls"] - start["calls"],
        "heap_hist": end["hist"],
    }
