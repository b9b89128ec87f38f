#!/usr/bin/env python3
"""Single-byte corruption sweep over every byte of two real files, summarised
per region of the file into ``docs/reliability.md``.

Runs the Rust test ``crates/rntuple/tests/corruption_sweep.rs`` (release
build) with a stride of 1 for both files, reads the JSON counts it writes
(``RNTUPLE_SWEEP_REPORT``) and replaces the text between the
``corruption-sweep`` markers of ``docs/reliability.md`` with a table.

Usage: ``python bench/corruption_sweep.py [--no-run] [--report-dir DIR]``
(``--no-run`` only renders reports already written).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"
BEGIN = "<!-- corruption-sweep:begin (bench/corruption_sweep.py) -->"
END = "<!-- corruption-sweep:end -->"
CHECKSUMMED = {"anchor", "header envelope", "footer envelope", "page lists", "pages", "page checksums"}
ORDER = [
    "TFile header",
    "key headers",
    "directories and key lists",
    "streamer info",
    "free segments list",
    "anchor prefix (not checksummed)",
    "anchor",
    "header envelope",
    "footer envelope",
    "page lists",
    "pages",
    "page checksums",
    "other payloads",
    "gaps",
]


def run(report_dir: Path) -> None:
    env = dict(os.environ, RNTUPLE_SWEEP_REPORT=str(report_dir), RNTUPLE_SWEEP_STRIDE="1")
    cmd = ["cargo", "test", "--release", "-p", "rntuple", "--test", "corruption_sweep", "--", "--test-threads=2"]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def table(report: dict) -> str:
    rows = [
        "| region | bytes | changes | error | same values | of which the envelope decompressed the same | "
        "different values, no error | panic |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    regions = report["regions"]
    total = {k: 0 for k in ("bytes", "trials", "error", "same", "same_envelope", "silent", "panic")}
    for name in sorted(regions, key=lambda r: ORDER.index(r) if r in ORDER else len(ORDER)):
        c = regions[name]
        for k in total:
            total[k] += c[k]
        mark = " (checksummed)" if name in CHECKSUMMED else ""
        rows.append(
            f"| {name}{mark} | {c['bytes']} | {c['trials']} | {c['error']} | {c['same']} | "
            f"{c['same_envelope']} | {c['silent']} | {c['panic']} |"
        )
    t = total
    rows.append(
        f"| **all** | {t['bytes']} | {t['trials']} | {t['error']} | {t['same']} | {t['same_envelope']} | "
        f"{t['silent']} | {t['panic']} |"
    )
    return "\n".join(rows)


def render(report_dir: Path) -> str:
    parts = [BEGIN, ""]
    for path in sorted(report_dir.glob("*.json")):
        report = json.loads(path.read_text())
        stride = "every byte" if report["stride"] == 1 else f"every {report['stride']}th byte"
        parts.append(f"`tests/data/{report['file']}` ({report['size']} bytes, {stride}, xor 0xFF and one bit each):")
        parts.append("")
        parts.append(table(report))
        parts.append("")
        if report["bad"]:
            parts.append("Trials that went wrong:")
            parts.extend(f"* {b}" for b in report["bad"])
            parts.append("")
    parts.append(END)
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--report-dir", type=Path)
    args = ap.parse_args()
    report_dir = args.report_dir or Path(tempfile.mkdtemp(prefix="corruption-sweep-"))
    if not args.no_run:
        run(report_dir)
    text = render(report_dir)
    doc = DOC.read_text()
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{DOC}: markers {BEGIN!r} / {END!r} missing")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + text + tail)
    print(text)


if __name__ == "__main__":
    main()
