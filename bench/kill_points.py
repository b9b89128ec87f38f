"""Kills the writer at many points and recovers each file (docs/recover.md).

Runs the Rust kill test (single-threaded and parallel writer, killed at
RUST_POINTS points in fill, compression, page writes, commits, journal
records, footer and file header; release build) and the Python ones (the
single writer at PY_POINTS points, the parallel writer with two threads at
PY_PARALLEL_POINTS points, a quarter of them random SIGKILLs; ROOT 6.40
reading every recovered file), and prints the tallies that docs/recover.md
and docs/reliability.md quote. RUST_POINTS 0 skips the Rust test.

    python bench/kill_points.py [RUST_POINTS [PY_POINTS [PY_PARALLEL_POINTS]]]     # default 240 60 60
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd: list[str], env: dict[str, str]) -> str:
    t = time.time()
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out[-4000:]}")
    print(f"  ({time.time() - t:.0f} s)")
    return out


def main() -> None:
    rust_points = int(sys.argv[1]) if len(sys.argv) > 1 else 240
    py_points = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    py_parallel = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    if rust_points:
        rust(rust_points)
    print(
        f"Python writer, {py_points} kill points, and Python parallel writer, {py_parallel} kill points; "
        "ROOT 6.40 reading every recovered file:"
    )
    out = run(
        [sys.executable, "-m", "pytest", "tests/python/test_recover.py", "-q", "-s", "-k", "killed"],
        {"RNTUPLE_KILL_POINTS_PY": str(py_points), "RNTUPLE_KILL_POINTS_PY_PARALLEL": str(py_parallel)},
    )
    print("  " + re.search(r"python kill points: .*", out).group(0))
    print("  " + re.search(r"python parallel kill points: .*", out).group(0))


def rust(rust_points: int) -> None:
    print(f"Rust writer, {rust_points} kill points (half single-threaded, half parallel):")
    out = run(
        [
            "cargo",
            "test",
            "--release",
            "-q",
            "-p",
            "rntuple-tools",
            "--test",
            "recover",
            "killed_writers",
            "--",
            "--nocapture",
        ],
        {"RNTUPLE_KILL_POINTS": str(rust_points)},
    )
    print("  " + re.search(r"kill points: .*", out).group(0))


if __name__ == "__main__":
    main()
