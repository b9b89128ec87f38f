"""The targets of issue 15 in one table (``docs/benchmarks.md``, section *Targets*): each row the
figure this run measured, the requirement, met or missed, and for a miss why (``WHY``, written
from the profiles in ``docs/profiles/`` and the tables of the report).

The speed rows come from the cases of ``bench/run.py`` (ratios of medians measured in the same
run); the memory rows are ``report_memory``'s, the start-up row ``report_startup``'s."""

from __future__ import annotations

import report_memory
import report_startup
from report import Targets, _div, _get, _limit, _read_config, _table

# Why a target is missed, by the start of its label (the first match wins). Kept to the cause;
# the figures are in the row and in the tables below it.
WHY: dict[str, str] = {}


def _wall(g: dict, case: str, wl: str, config: dict, comp: str, key: str = "wall") -> float | None:
    s = _get(g, case, wl, config, comp)
    return s.med(key) if s else None


def _speed_rows(t: Targets, bench, g: dict, cores: int | None) -> None:
    all_cores = f"all {cores} cores" if cores else "all cores"
    c1, c2 = {"codec": 505, "threads": 1}, {"codec": 505, "threads": 2}
    for wl, w in bench.workloads.items():
        if wl == report_memory.AOD:
            continue
        writes = _get(g, "write", wl, c1, "ours-rust") is not None
        reads = _get(g, "read", wl, _read_config(w, "read", 1), "ours-rust") is not None
        if writes:
            root1 = _wall(g, "write", wl, c1, "root-rntuple")
            t.at_least(
                f"Python API at its defaults ({all_cores}) vs ROOT at its defaults (no implicit MT): write zstd 5",
                wl,
                _div(root1, _wall(g, "write", wl, c2, "ours-python")),
                1.8,
            )
        if reads:
            r1, r2 = _read_config(w, "read", 1), _read_config(w, "read", 2)
            t.at_least(
                f"Python API at its defaults ({all_cores}) vs ROOT at its defaults (no implicit MT): read all columns",
                wl,
                _div(_wall(g, "read", wl, r1, "root-rntuple"), _wall(g, "read", wl, r2, "ours-python")),
                3.0,
            )
        if writes:
            one = _wall(g, "write", wl, c1, "ours-rust")
            two = _wall(g, "write", wl, c2, "ours-rust")
            t.at_most(
                "write, 1 thread: time vs codec alone", wl, _div(one, _limit(g, wl, 505, 1, "compress_wall")), 1.05
            )
            t.at_least("write, 2 threads: speed-up over own 1 thread", wl, _div(one, two), 1.85)
            t.at_least(
                "write, 2 threads: vs ROOT RNTuple 2 threads",
                wl,
                _div(_wall(g, "write", wl, c2, "root-rntuple"), two),
                1.3,
            )
        if reads:
            one = _wall(g, "read", wl, r1, "ours-rust")
            # The reader's own time: the benchmark's checksum pass over the values (inside the
            # timed section, to compare with ROOT's loop over its views) is not the reader's work,
            # and decompression alone touches no value either.
            check = _wall(g, "read", wl, r1, "ours-rust", "checksum_wall")
            t.at_most(
                "read all columns, 1 thread: time vs decompression alone (without the benchmark's checksum pass)",
                wl,
                _div(None if one is None else one - (check or 0.0), _limit(g, wl, 505, 1, "decompress_wall")),
                1.15,
            )
            t.at_least(
                "read all columns, 2 threads: speed-up over own 1 thread",
                wl,
                _div(one, _wall(g, "read", wl, r2, "ours-rust")),
                1.8,
            )
        rec = _read_config(w, "read3rec", 1) if _has_case(g, "read3rec", wl) else None
        if rec is not None:
            t.at_least(
                "Python read of 3 fields of record collections, open included: vs ROOT's C++ views",
                wl,
                _div(_wall(g, "read3rec", wl, rec, "root-rntuple"), _wall(g, "read3rec", wl, rec, "ours-python")),
                1.0,
            )
        # Python vs Rust, the same work: one writer / reader call each side.
        pairs = []
        if writes:
            pairs.append(("write zstd 5, 1 thread", "write", c1))
        if reads:
            pairs.append(("read all columns, 1 thread", "read", r1))
        if _has_case(g, "read3", wl):
            pairs.append(("read 3 fields", "read3", _read_config(w, "read3", 1)))
        if rec is not None:
            pairs.append(("read 3 fields of record collections", "read3rec", rec))
        for what, case, cfg in pairs:
            t.at_most(
                f"Python vs the Rust API, same work: {what}",
                wl,
                _div(_wall(g, case, wl, cfg, "ours-python"), _wall(g, case, wl, cfg, "ours-rust")),
                1.05,
            )
        lz4 = {"codec": 404, "threads": 1}
        if _get(g, "write", wl, lz4, "ours-rust") is not None:
            t.at_most(
                "lz4 4: file size vs ROOT RNTuple",
                wl,
                _div(
                    _wall(g, "write", wl, lz4, "ours-rust", "file_size"),
                    _wall(g, "write", wl, lz4, "root-rntuple", "file_size"),
                ),
                1.0,
            )
            t.at_least(
                "lz4 4: write speed vs ROOT RNTuple (CPU time: the wall time of both includes waits on the disk)",
                wl,
                _div(_wall(g, "write", wl, lz4, "root-rntuple", "cpu"), _wall(g, "write", wl, lz4, "ours-rust", "cpu")),
                1.0,
            )


def _has_case(g: dict, case: str, wl: str) -> bool:
    return any(k[0] == case and k[1] == wl for k in g)


def _startup_row(t: Targets, g: dict) -> None:
    for (case, wl, _, _), stats in g.items():
        if case == "startup":
            seconds = stats.runs[-1]["measure"]["seconds"]["rntuple"]["beyond_awkward_min"]
            t.at_most(
                "Python start-up: open a 2,000-field RNTuple, first awkward array, beyond `import awkward`",
                wl,
                seconds * 1e3,
                report_startup.TARGET * 1e3,
                " ms",
            )


def targets(bench, g: dict, cores: int | None) -> str:
    """The table of issue 15's targets this run measured ('' when none), with a *why* for misses.
    ``cores``: the machine's, whose number of threads the Python API uses by default."""
    t = Targets()
    _speed_rows(t, bench, g, cores)
    _startup_row(t, g)
    t.rows += report_memory.target_rows(bench, g)
    if not t.rows:
        return ""
    rows = []
    for r in t.rows:
        why = ""
        if not r[4].startswith("**met**"):
            why = next((text for start, text in WHY.items() if r[0].startswith(start)), "")
        rows.append([*r, why])
    return _table(["target (issue 15)", "workload", "measured", "required", "status", "why (when missed)"], rows)
