"""The memory part of the report (issue 15): heap and RSS of the writers, measured the same way
for every writer (the heap counter ``bench/heapcount.c``), the CMS AOD-like case (``cmsaod``,
LZMA 4) and the memory targets of issue 15."""

from __future__ import annotations

from report import CODEC_NAMES, LABELS, ORDER, Targets, _div, _get, _mb, _mib, _ratio, _secs, _table, _timed

AOD = "cmsaod"
AOD_CONFIG = {"codec": 204, "threads": 1}


def _med(s, key: str) -> float | None:
    return s.med(key) if s is not None else None


def _above(s) -> float | None:
    return s.above_input() if s is not None else None


def _count(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.1f} k" if x >= 1e3 else f"{x:.0f}"


def _top_sizes(s, n: int = 3) -> str:
    """The request-size classes that requested the most bytes (first run), e.g. `32-64 MiB: 1.2 GiB in 40`."""
    hist = next((r.get("heap_hist") for r in s.runs if r.get("heap_hist")), None) if s is not None else None
    if not hist:
        return "–"
    top = sorted(hist, key=lambda h: -h[2])[:n]

    def size(b: int) -> str:
        v = 1 << b
        return f"{v >> 20} MiB" if v >= 1 << 20 else f"{v >> 10} KiB" if v >= 1 << 10 else f"{v} B"

    return "; ".join(f"{size(b)}–{size(b + 1)}: {_mib(by)} in {_count(c)}" for b, c, by in top)


def target_rows(bench, g: dict) -> list[list[str]]:
    """Rows of the memory targets of issue 15 that this run measured (``Targets`` rows)."""
    t = Targets()
    if AOD in bench.workloads:
        root = _get(g, "write", AOD, AOD_CONFIG, "root-rntuple")
        tree = _get(g, "write", AOD, AOD_CONFIG, "root-ttree")
        for comp in ("ours-rust", "ours-rust-budget"):
            ours = _get(g, "write", AOD, AOD_CONFIG, comp)
            if ours is None:
                continue
            label = "" if comp == "ours-rust" else " (memory_budget 64 MiB)"
            heap = _med(ours, "heap_above_input")
            t.at_most(
                f"peak heap above input vs ROOT RNTuple{label}", AOD, _div(heap, _med(root, "heap_above_input")), 0.2
            )
            t.at_most(f"peak heap above input vs TTree{label}", AOD, _div(heap, _med(tree, "heap_above_input")), 1.0)
            t.at_most(f"peak RSS above input vs TTree{label}", AOD, _div(_above(ours), _above(tree)), 0.5)
            size = _div(_med(ours, "file_size"), _med(root, "file_size"))
            t.at_most(f"file size vs ROOT RNTuple (lzma 4){label}", AOD, size, 1.0)
    c1 = {"codec": 505, "threads": 1}
    for wl in bench.workloads:
        root = _get(g, "write", wl, c1, "root-rntuple")
        if wl == AOD or root is None:
            continue
        for comp, rss_limit, size_limit, label in (
            ("ours-rust", 0.5, 1.005, "default writer"),
            ("ours-rust-budget", 0.25, 1.01, "memory_budget 64 MiB"),
        ):
            ours = _get(g, "write", wl, c1, comp)
            if ours is None:
                continue
            t.at_most(
                f"{label}: RSS above input vs ROOT RNTuple (zstd 5)", wl, _div(_above(ours), _above(root)), rss_limit
            )
            t.at_most(
                f"{label}: file size vs ROOT RNTuple (zstd 5)",
                wl,
                _div(_med(ours, "file_size"), _med(root, "file_size")),
                size_limit,
            )
    return t.rows


def section(bench, g: dict) -> str:
    """The CMS AOD-like table: every writer's time, size, RSS and heap, with ratios to ROOT RNTuple and TTree."""
    keys = sorted({k[2] for k in g if k[0] == "write" and k[1] == AOD})
    if not keys:
        return ""
    out = []
    for ck in keys:
        cfg = dict(ck)
        root = g.get(("write", AOD, ck, "root-rntuple"))
        tree = g.get(("write", AOD, ck, "root-ttree"))
        rows = []
        for comp in ORDER:
            s = g.get(("write", AOD, ck, comp))
            if s is None:
                continue
            heap = _med(s, "heap_above_input")
            rows.append(
                [
                    LABELS[comp],
                    _timed(s),
                    _secs(_med(s, "cpu")),
                    _mb(_med(s, "file_size")),
                    _mib(_above(s)),
                    _mib(heap),
                    _mib(_med(s, "heap_requested")),
                    _count(_med(s, "heap_calls")),
                    _ratio(_div(heap, _med(root, "heap_above_input"))),
                    _ratio(_div(heap, _med(tree, "heap_above_input"))),
                    _ratio(_div(_above(s), _above(tree))),
                    _ratio(_div(_med(s, "heap_requested"), _med(tree, "heap_requested"))),
                    _ratio(_div(_med(s, "file_size"), _med(root, "file_size")), 3),
                ]
            )
        run = next((r.get("run_meta") for s in (root, tree) if s for r in s.runs if r.get("run_meta")), None)
        if run:
            out.append(
                f"Measured by `{run['command']}` (started {run['started']}, {run['runs']} run(s), "
                f"load average {run['load_before'][0]:.1f} before / {run['load_after'][0]:.1f} after), "
                "merged into this report with `--render`.\n\n"
            )
        out.append(f"{CODEC_NAMES.get(cfg['codec'], cfg['codec'])}, {cfg['threads']} thread(s):\n\n")
        out.append(
            _table(
                [
                    "writer",
                    "wall",
                    "CPU",
                    "file",
                    "RSS above input",
                    "peak heap above input",
                    "heap requested",
                    "allocations",
                    "heap vs ROOT RNTuple",
                    "heap vs TTree",
                    "RSS vs TTree",
                    "requested vs TTree",
                    "size vs ROOT",
                ],
                rows,
            )
        )
        sizes = [[LABELS[c], _top_sizes(g.get(("write", AOD, ck, c)))] for c in ORDER if g.get(("write", AOD, ck, c))]
        out.append("\nWhere the requested bytes go (request-size classes with the most bytes, first run):\n\n")
        out.append(_table(["writer", "largest classes: bytes requested in how many calls"], sizes))
        out.append("\n")
    return "".join(out)


def heap_columns(s) -> list[str]:
    """The heap cells of a write row: peak heap above input, bytes requested."""
    return [_mib(_med(s, "heap_above_input")), _mib(_med(s, "heap_requested"))]
