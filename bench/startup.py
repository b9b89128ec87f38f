"""Python start-up on a wide file (issue 15): the time from a fresh interpreter to the first awkward
array of a 2,000-field RNTuple, beyond the time of ``import awkward`` itself.

    python bench/startup.py [--entries 300] [--runs 11] [--field aux000] [--json]

Writes the ``aod`` workload of ``bench/workloads.py`` (420 scalars, 20 vectors, 100 collections of
records with vectors inside: 2,060 fields, 1,960 columns) once with our Python writer (cached
under ``$RNTUPLE_CACHE/bench/startup``), then runs, interleaved, ``--runs`` fresh processes of

* ``import awkward`` (the floor every awkward reader pays),
* ``import rntuple; rntuple.open(path)["Events"][field].array()``,
* ``import uproot; uproot.open(path)["Events"][field].array()`` (uproot's RNTuple reader),

each timed from the parent (interpreter start-up included in all three, so it cancels in the
differences), and the two readers also from inside, after their own ``import awkward`` (the
same figure without the noise of two interpreter start-ups). Byte code is compiled once before
the timed runs into a cache outside the tree (``PYTHONPYCACHEPREFIX``), as it is for an
installed package; the runs' other environment is the caller's. Prints the minimum and the
median of each and of the differences to ``import awkward``. The machine may be shared: the
minimum is the honest figure for a latency (load only ever adds time), the median says how noisy
the runs were.

``--importtime`` also prints the modules the rntuple run imports beyond those of ``import
awkward``, slowest first, with the time of each one's own import (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report_startup  # noqa: E402
import workloads  # noqa: E402

WORKLOAD = "aod"
# Each reader's process imports awkward first and prints the seconds of what follows (the second
# figure, without the noise of two interpreter start-ups).
_TIMED = "import time, awkward; t0 = time.perf_counter(); {}; print(time.perf_counter() - t0)"
CASES = {
    "awkward": "import awkward",
    "rntuple": _TIMED.format("import rntuple; a = rntuple.open({path!r})['Events'][{field!r}].array()"),
    "uproot": _TIMED.format("import uproot; a = uproot.open({path!r})['Events'][{field!r}].array()"),
}


def cache_root() -> str:
    return os.path.join(os.environ.get("RNTUPLE_CACHE", os.path.expanduser("~/.cache/rntuple-ci")), "bench")


def child_env(cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(cache, "startup", "pycache")
    return env


def wide_file(cache: str, entries: int) -> str:
    """The 2,000-field file, written once by our writer from the generated (deterministic) input."""
    directory = workloads.generate(cache, WORKLOAD, entries)
    path = os.path.join(cache, "startup", os.path.basename(directory) + ".root")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        children = os.path.join(HERE, "children.py")
        subprocess.run(
            [sys.executable, children, "ours-write", "--input", directory, "--output", tmp],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        os.replace(tmp, path)
    return path


def run_once(code: str, env: dict[str, str]) -> tuple[float, float | None]:
    """Wall seconds of the process, and the seconds it printed (None if it printed nothing)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    return wall, float(proc.stdout) if proc.stdout.strip() else None


def import_times(code: str, env: dict[str, str]) -> dict[str, int]:
    """Microseconds spent in each module's own import (``-X importtime``'s self column)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], check=True, env=env, capture_output=True, text=True
    )
    out = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, name = line[len("import time:") :].split("|")
        if own.strip().isdigit():
            out[name.strip()] = int(own)
    return out


def import_summary(path: str, field: str, env: dict[str, str]) -> dict:
    """The modules the rntuple run imports beyond ``import awkward``'s: the 15 slowest (own
    microseconds) and the total."""
    floor = import_times(CASES["awkward"], env)
    ours = import_times(CASES["rntuple"].format(path=path, field=field), env)
    extra = {k: v for k, v in ours.items() if k not in floor}
    return {
        "imports_beyond_awkward_us": dict(sorted(extra.items(), key=lambda kv: -kv[1])[:15]),
        "imports_beyond_awkward_total_us": sum(extra.values()),
    }


def measure(path: str, field: str, runs: int, env: dict[str, str]) -> dict:
    codes = {k: v.format(path=path, field=field) for k, v in CASES.items()}
    for code in codes.values():  # compile byte code, warm the page cache
        run_once(code, env)
    times: dict[str, list[float]] = {k: [] for k in codes}
    inside: dict[str, list[float]] = {k: [] for k in codes if k != "awkward"}
    for _ in range(runs):
        for name, code in codes.items():
            wall, own = run_once(code, env)
            times[name].append(wall)
            if own is not None:
                inside[name].append(own)
    seconds = report_startup.figures(times, inside)
    return {"runs": runs, "field": field, "file": path, "seconds": seconds, "raw": times, "raw_in_process": inside}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=workloads.SIZES[WORKLOAD]["quick"])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--field", default=workloads.WIDE_FIELD)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout instead of the table")
    ap.add_argument("--importtime", action="store_true", help="also the slowest imports beyond awkward's")
    ap.add_argument("--markdown", action="store_true", help="the report's section (docs/benchmarks.md) instead")
    args = ap.parse_args(argv)
    cache = cache_root()
    env = child_env(cache)
    path = wide_file(cache, args.entries)
    result = measure(path, args.field, args.runs, env)
    if args.importtime:
        result.update(import_summary(path, args.field, env))
    if args.json:
        print(json.dumps(result))
        return 0
    if args.markdown:
        what = f"The aod-like file written by our Python writer ({args.entries} entries, 2,060 fields, 1,960 columns)"
        print(report_startup.section(result, what), end="")
        return 0
    print(f"{path}: first array of {args.field!r}, {args.runs} fresh processes each")
    head = f"{'':8} {'process: min':>12} {'median':>7} | beyond awkward: min {'median':>7}"
    print(f"{head} | in process: min {'median':>7} (ms)")
    for name, f in result["seconds"].items():
        extra = (
            f" | {1e3 * f['beyond_awkward_min']:19.1f} {1e3 * f['beyond_awkward_median']:7.1f}"
            f" | {1e3 * f['in_process_min']:15.1f} {1e3 * f['in_process_median']:7.1f}"
            if "beyond_awkward_min" in f
            else ""
        )
        print(f"{name:8} {1e3 * f['min']:12.1f} {1e3 * f['median']:7.1f}{extra}")
    if "imports_beyond_awkward_us" in result:
        total = result["imports_beyond_awkward_total_us"] / 1e3
        print(f"imports beyond awkward's (-X importtime, own time of each module): {total:.1f} ms in all")
        for name, us in result["imports_beyond_awkward_us"].items():
            print(f"  {name:40} {us / 1e3:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
