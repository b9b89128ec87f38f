"""The Python start-up part of the report (issue 15): fresh processes that open a 2,000-field RNTuple
and get a first awkward array, against ``import awkward`` alone (``bench/startup.py`` measures
them, standalone or as the ``startup`` case of ``bench/run.py``)."""

from __future__ import annotations

import statistics

# issue 15: the first array within this many seconds of `import awkward`
TARGET = 0.050
LABELS = {"rntuple": "**rntuple (Python)**", "uproot": "uproot (Python)"}


def _ms(s: float) -> str:
    return f"{s * 1e3:.1f} ms"


def figures(raw: dict[str, list[float]], inside: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per reader, from the interleaved runs (``raw``: wall seconds of each process, ``"awkward"``
    the ``import awkward`` ones; ``inside``: the seconds each reader's process timed itself after
    its ``import awkward``): min and median of the process, of the time beyond ``import awkward``
    (min: the difference of the minima; median: that of the runs' differences) and in process."""
    floor = raw["awkward"]
    out = {"awkward": {"min": min(floor), "median": statistics.median(floor)}}
    for name in inside:
        values = raw[name]
        out[name] = {
            "min": min(values),
            "median": statistics.median(values),
            "beyond_awkward_min": min(values) - min(floor),
            "beyond_awkward_median": statistics.median([v - a for v, a in zip(values, floor, strict=True)]),
            "in_process_min": min(inside[name]),
            "in_process_median": statistics.median(inside[name]),
        }
    return out


def section(result: dict, what: str) -> str:
    """The markdown of the section: the target row and the figures of every reader. ``result``:
    ``bench/startup.py``'s (``measure``); ``what``: the file, in words."""
    f = result["seconds"]
    ours = f["rntuple"]["beyond_awkward_min"]
    status = "**met**" if ours <= TARGET else f"missed by {100 * (ours / TARGET - 1):.0f}%"
    lines = [
        "| target (issue 15) | measured | required | status |",
        "|---|---|---|---|",
        f"| Python start-up: open a 2,000-field RNTuple and get a first awkward array, beyond the time of "
        f"`import awkward` | {_ms(ours)} | ≤ {_ms(TARGET)} | {status} |",
        "",
        f'{what}; `rntuple.open(path)["Events"][{result["field"]!r}].array()` and uproot\'s same call, each in '
        f"{result['runs']} fresh processes interleaved with `import awkward` alone. *beyond awkward*: the "
        "process's time minus that of `import awkward` (min: difference of the minima; median: of the runs' "
        "differences); *in process*: what the process timed itself after its own `import awkward` (without "
        "the noise of two interpreter start-ups, without the process's exit). The machine is shared: the "
        "minimum is the honest figure for a latency, the median shows the noise.",
        "",
        "| process | min | median | beyond awkward: min | median | in process: min | median | vs uproot (min) |",
        "|---|---|---|---|---|---|---|---|",
        f"| `import awkward` | {_ms(f['awkward']['min'])} | {_ms(f['awkward']['median'])} | – | – | – | – | – |",
    ]
    for name, label in LABELS.items():
        r = f[name]
        ratio = f["uproot"]["beyond_awkward_min"] / r["beyond_awkward_min"] if r["beyond_awkward_min"] > 0 else None
        lines.append(
            f"| {label} | {_ms(r['min'])} | {_ms(r['median'])} | {_ms(r['beyond_awkward_min'])} | "
            f"{_ms(r['beyond_awkward_median'])} | {_ms(r['in_process_min'])} | {_ms(r['in_process_median'])} | "
            + ("–" if ratio is None else f"{ratio:.1f}×")
            + " |"
        )
    imports = result.get("imports_beyond_awkward_us")
    if imports:
        total = result["imports_beyond_awkward_total_us"] / 1e3
        top = ", ".join(f"`{k}` {v / 1e3:.1f} ms" for k, v in list(imports.items())[:5])
        lines += [
            "",
            f"Modules the rntuple process imports beyond `import awkward`'s (`python -X importtime`, own time "
            f"of each): {total:.1f} ms in all; {top}. No pandas, dask, uproot, matplotlib or pyarrow.dataset "
            "(`tests/python/test_startup.py` fails if one comes back).",
        ]
    return "\n".join(lines) + "\n"


def parts(bench, g: dict) -> list[str]:
    """The section of ``bench/run.py``'s report (its ``startup`` case), or nothing."""
    out = []
    for (case, wl, _, _), stats in g.items():
        if case != "startup":
            continue
        what = f"The {wl}-like file written by ROOT (2,060 fields, 1,960 columns)"
        out += [
            "## Python start-up: first array of a 2,000-field RNTuple\n\n",
            section(stats.runs[-1]["measure"], what),
        ]
        out.append("\n")
    return out
