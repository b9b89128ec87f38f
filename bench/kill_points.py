"""Kills the writer at many points and recovers each file (docs/recover.md).

Runs the Rust kill test (single-threaded and parallel writer, killed at
RUST_POINTS points in fill, compression, page writes, commits, journal
records, footer and file header; release build) and the Python one
(PY_POINTS points, ROOT 6.40 reading every recovered file), and prints the
tallies that docs/recover.md quotes.

    python bench/kill_points.py [RUST_POINTS [PY_POINTS]]     # default 240 60
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
    print(f"Python writer, {py_points} kill points, ROOT 6.40 reading every recovered file:")
    out = run(
        [sys.executable, "-m", "pytest", "tests/python/test_recover.py", "-q", "-s", "-k", "killed"],
        {"RNTUPLE_KILL_POINTS_PY": str(py_points)},
    )
    print("  " + re.search(r"python kill points: .*", out).group(0))


if __name__ == "__main__":
    main()
