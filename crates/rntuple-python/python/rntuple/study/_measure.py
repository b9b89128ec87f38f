"""Measurements: page-cache residency and dropping, child processes, the machine.

Every cell runs in a fresh child process (``python -m rntuple.study._child``)
so that its peak RSS (the high-water mark of the child's own memory,
reported by the child) belongs to that cell alone. A cold read first drops the file's pages
from the page cache (``fsync`` then ``posix_fadvise(POSIX_FADV_DONTNEED)``)
and checks with ``mincore(2)`` that none is resident any more.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import mmap
import os
import platform
import resource
import subprocess
import sys
from typing import Any

from .._errors import RNTupleError, StorageError

__all__ = ["drop_cache", "machine", "peak_rss", "resident_pages", "run_child"]

_PAGE = mmap.PAGESIZE
_libc: Any = None


class ChildError(RNTupleError, RuntimeError):
    """A measurement's child process failed (also a RuntimeError)."""


def _mincore() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
        _libc.mincore.restype = ctypes.c_int
    return _libc.mincore


def resident_pages(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(resident, total)`` pages of the file ``path`` in the page cache: ``mincore(2)`` over a
    private mapping of it (mapping faults nothing in; only the pages' presence is asked)."""
    size = os.path.getsize(path)
    total = (size + _PAGE - 1) // _PAGE
    if size == 0:
        return 0, 0
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_COPY) as mm:
        start = ctypes.c_char.from_buffer(mm)  # the mapping's first byte (ACCESS_COPY: a writable buffer)
        try:
            vec = (ctypes.c_ubyte * total)()
            if _mincore()(ctypes.addressof(start), size, vec) != 0:
                err = ctypes.get_errno()
                raise StorageError(err, f"mincore: {os.strerror(err)}", str(path))
            return sum(b & 1 for b in vec), total
        finally:
            del start


def drop_cache(path: str | os.PathLike[str]) -> int:
    """Writes back and drops the pages of ``path`` from the page cache; returns the pages still resident
    (0 unless another process holds them, e.g. mapped)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return resident_pages(path)[0]


def peak_rss() -> int:
    """Peak resident set size of this process, in bytes: ``VmHWM`` of ``/proc/self/status``.

    Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries that over ``fork`` and ``exec``, so a
    child would report at least the RSS its parent had when it started it."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * _PAGE


def run_child(task: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Runs ``task`` in a fresh Python process (``rntuple.study._child``) and returns its JSON answer;
    a failure raises ``ChildError`` (a ``RuntimeError``) with the child's error output."""
    proc = subprocess.run(
        [sys.executable, "-m", "rntuple.study._child"],
        input=json.dumps(task),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-8:]
        raise ChildError(f"{task.get('task')} failed (exit {proc.returncode}): " + "\n".join(tail))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ("rntuple", "numpy", "awkward", "pyarrow", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> dict[str, Any]:
    """What the run ran on: CPU, cores, memory, kernel, file system of the output, versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as fh:
            mem = int(next(ln.split()[1] for ln in fh if ln.startswith("MemTotal"))) * 1024
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_bytes": mem,
        "system": f"{platform.system()} {platform.release()}",
        "load_average": list(os.getloadavg()),
        "versions": _versions(),
    }
