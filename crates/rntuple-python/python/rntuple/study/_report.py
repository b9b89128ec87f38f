"""The report of a study in its output directory: ``results.json`` (everything measured),
``report.md`` and ``report.html`` (the same tables), and PNG plots (matplotlib)."""

from __future__ import annotations

import html
import json
import os
from typing import Any

from ._knobs import METRICS

__all__ = ["write"]

MB = 1e6


def _mb(x: float) -> str:
    return f"{x / MB:.2f}"


def _s(x: float) -> str:
    return f"{x:.3f}"


def _machine_lines(m: dict[str, Any]) -> list[str]:
    v = ", ".join(f"{k} {val}" for k, val in m["versions"].items())
    load = ", ".join(f"{x:.1f}" for x in m["load_average"])
    return [
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_bytes'] / 2**30:.1f} GiB, {m['system']}; "
        f"load average at the start {load}.",
        f"Versions: {v}.",
    ]


def _layout_table(r: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = [
        "cell",
        "RNTuples",
        "file MB",
        "write ev/s",
        "write peak RSS MB",
        "of it above the input MB",
        "cold read s",
        "warm read s",
        "read peak RSS MB",
        "resident pages before cold read",
    ]
    rows = [
        [
            c["id"],
            "+".join(c["rntuples"]),
            _mb(c["file_size"]),
            f"{c['write_events_per_second']:.0f}",
            _mb(c["write_peak_rss"]),
            _mb(c["write_peak_rss"] - c["write_rss_before"]),
            _s(c["cold_read_seconds"]),
            _s(c["warm_read_seconds"]),
            _mb(c["read_peak_rss"]),
            str(max(c["resident_before_cold"])),
        ]
        for c in r["cells"]
    ]
    return head, rows


def _knobs_table(r: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = [
        "setting",
        "file MB",
        "write s",
        "write peak RSS MB",
        "of it above the input MB",
        "full read s (cold)",
        "warm read s",
        "sparse 1% s",
        "sparse MB read",
        "Pareto",
    ]
    front = set(r["pareto_front"])
    rows = [
        [
            c["label"],
            _mb(c["file_size"]),
            _s(c["write_seconds"]),
            _mb(c["write_peak_rss"]),
            _mb(c["write_peak_rss"] - c["write_rss_before"]),
            _s(c["read_seconds"]),
            _s(c["warm_read_seconds"]),
            _s(c["sparse_seconds"]),
            _mb(c["sparse_bytes_read"]),
            "yes" if c["label"] in front else "",
        ]
        for c in r["cells"]
    ]
    return head, rows


def _summary(r: dict[str, Any]) -> list[str]:
    if r["study"] == "knobs":
        out = [f"Recommended for --optimize {r['settings']['optimize']}: **{r['recommendation']}**."]
        out += [f"- for --optimize {goal}: {label}" for goal, label in r["recommendations"].items()]
        for key in METRICS.values():
            least = min(r["cells"], key=lambda c: c[key])
            out.append(f"- least {key}: {least['label']}")
        out.append(f"- Pareto front ({len(r['pareto_front'])} of {len(r['cells'])}): {', '.join(r['pareto_front'])}")
        return out
    c = r.get("conclusions") or {}
    out = [f"- best {k}: {v}" for k, v in c.get("best", {}).items()]
    for axis, measures in c.get("by_axis", {}).items():
        parts = []
        for key in ("file_size", "write_events_per_second", "cold_read_seconds"):
            vals = measures.get(key, {})
            parts.append(f"{key}: " + ", ".join(f"{k} {v:.4g}" for k, v in vals.items()))
        out.append(f"- mean by {axis}: " + "; ".join(parts))
    out += [f"- skipped {s['model']}-{s['rows']}-{s['split']}-{s['rois']}: {s['skip']}" for s in r["skipped"]]
    return out


def _markdown(r: dict[str, Any], head: list[str], rows: list[list[str]], plots: list[str]) -> str:
    lines = [
        f"# rntuple study {r['study']}",
        "",
        *_machine_lines(r["machine"]),
        "",
        "Settings: " + ", ".join(f"{k}={v}" for k, v in r["settings"].items()),
        "",
        "## Summary",
        "",
        *_summary(r),
        "",
        "## Cells",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    return "\n".join(lines) + "\n"


def _html(r: dict[str, Any], head: list[str], rows: list[list[str]], plots: list[str]) -> str:
    e = html.escape
    summary = "".join(f"<li>{e(s.lstrip('- ').replace('**', ''))}</li>" for s in _summary(r))
    table = "<tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"
    table += "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    imgs = "".join(f'<p><img src="{e(p)}" alt="{e(p)}"></p>' for p in plots)
    machine = "".join(f"<p>{e(s)}</p>" for s in _machine_lines(r["machine"]))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>rntuple study {e(r['study'])}</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #aaa;"
        "padding:2px 6px;text-align:right}</style></head><body>"
        f"<h1>rntuple study {e(r['study'])}</h1>{machine}<h2>Summary</h2><ul>{summary}</ul>"
        f"<h2>Cells</h2><table>{table}</table><h2>Plots</h2>{imgs}</body></html>\n"
    )


def _bars(plt: Any, path: str, labels: list[str], series: dict[str, list[float]], title: str) -> None:
    fig, axes = plt.subplots(1, len(series), figsize=(4 * len(series), 0.25 * len(labels) + 1.5), sharey=True)
    axes = axes if len(series) > 1 else [axes]
    for ax, (name, values) in zip(axes, series.items(), strict=True):
        ax.barh(range(len(values)), values)
        ax.set_title(name, fontsize=9)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.invert_yaxis()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _scatter(plt: Any, path: str, r: dict[str, Any], x: str, y: str) -> None:
    front = set(r["pareto_front"])
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for c in r["cells"]:
        on = c["label"] in front
        ax.scatter(c[x] / MB if x == "file_size" else c[x], c[y], marker="o" if on else "x", color="C1" if on else "C0")
        ax.annotate(c["label"], (c[x] / MB if x == "file_size" else c[x], c[y]), fontsize=6)
    ax.set_xlabel("file size (MB)" if x == "file_size" else x)
    ax.set_ylabel(y)
    ax.set_title(f"{y} against {x} (circles: Pareto front)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _plots(r: dict[str, Any], output: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = r["cells"]
    if not cells:
        return []
    if r["study"] == "layout":
        labels = [c["id"] for c in cells]
        _bars(
            plt,
            os.path.join(output, "layout.png"),
            labels,
            {
                "file size (MB)": [c["file_size"] / MB for c in cells],
                "write (events/s)": [c["write_events_per_second"] for c in cells],
                "cold read (s)": [c["cold_read_seconds"] for c in cells],
                "warm read (s)": [c["warm_read_seconds"] for c in cells],
                "write peak RSS (MB)": [c["write_peak_rss"] / MB for c in cells],
            },
            "rntuple study layout",
        )
        return ["layout.png"]
    names = []
    for y, fname in (
        ("read_seconds", "size_vs_read.png"),
        ("sparse_seconds", "size_vs_sparse.png"),
        ("sparse_bytes_read", "size_vs_sparse_bytes.png"),
        ("write_seconds", "size_vs_write.png"),
        ("write_peak_rss", "size_vs_memory.png"),
    ):
        _scatter(plt, os.path.join(output, fname), r, "file_size", y)
        names.append(fname)
    return names


def write(result: dict[str, Any], output: str) -> dict[str, str]:
    """Writes the report of ``result`` into ``output``; returns the paths written by kind."""
    os.makedirs(output, exist_ok=True)
    plots = _plots(result, output)
    head, rows = _layout_table(result) if result["study"] == "layout" else _knobs_table(result)
    paths = {"json": "results.json", "markdown": "report.md", "html": "report.html"}
    paths = {k: os.path.join(output, v) for k, v in paths.items()}
    with open(paths["json"], "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    with open(paths["markdown"], "w", encoding="utf-8") as fh:
        fh.write(_markdown(result, head, rows, plots))
    with open(paths["html"], "w", encoding="utf-8") as fh:
        fh.write(_html(result, head, rows, plots))
    for i, p in enumerate(plots):
        paths[f"plot{i}"] = os.path.join(output, p)
    return paths
