#!/usr/bin/env python3
"""Dump RNTuple entries as canonical JSON lines, read by ROOT itself.

The values are obtained with ROOT's own RNTuple field machinery (every
top-level field, including projected ones; classes without a dictionary are
emulated from the on-disk schema) and printed in the canonical format of
docs/dump-format.md, one JSON object per entry and line.

Usage (run with the Python that has ROOT, e.g. $HOME/.cache/rntuple-ci/venv/bin/python):

    root_dump.py FILE NTUPLE [--entries A:B[,C:D...]]   # entries to stdout
    root_dump.py --list FILE                            # RNTuple names ("dir/name")
    root_dump.py --all FILE --out DIR [--entries ...]   # every RNTuple -> DIR
    root_dump.py --batch JOBS.json                      # many dumps, one process

--load LIB / --include DIR (repeatable) load extra dictionaries first, e.g.
the ones generate.py compiles for its user classes (its manifest's
"dump_setup").  Without them, classes are emulated from the on-disk schema.

--all writes DIR/<n>.jsonl per RNTuple and DIR/index.json mapping each
RNTuple name to {"file": "<n>.jsonl", "entries": <total entry count>,
"skipped_fields": {field name: reason}}.  Top-level fields that make ROOT
itself crash, abort or throw (found by probing every field in a forked child
first) are left out of the dump and listed in skipped_fields; in the plain
stdout mode they are reported on stderr.

--batch reads a JSON list of jobs {"file", "ntuple", "out", "ranges"?,
"load"?, "include"?} (ranges: list of [first, last) pairs, default: all
entries; load/include: as --load/--include, applied before that job) and writes an
"<out>.meta.json" with {"entries": N, "skipped_fields": {...}} beside each output; a job that fails
writes "<out>.error" with the message instead.  Exit status is 0 when all
jobs succeeded, 3 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(HERE, "rntuple_dump_helper.cxx")

_ROOT = None


def _root():
    """Import ROOT and JIT the helper once."""
    global _ROOT
    if _ROOT is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ROOT  # noqa: N811

        ROOT.gROOT.SetBatch(True)
        # keep ROOT's informational chatter off; errors still go to stderr
        ROOT.gErrorIgnoreLevel = ROOT.kWarning
        with open(HELPER, encoding="utf-8") as fh:
            code = fh.read()
        if not ROOT.gInterpreter.Declare(code):
            raise RuntimeError("failed to compile " + HELPER)
        _ROOT = ROOT
    return _ROOT


_LOADED: set[str] = set()


def setup(load=(), include=()):
    """Make extra dictionaries known to ROOT before reading (see generate.py's dump_setup)."""
    ROOT = _root()
    for d in include or ():
        ROOT.gInterpreter.AddIncludePath(d)
    for lib in load or ():
        if lib in _LOADED:
            continue
        if ROOT.gSystem.Load(lib) < 0:
            raise RuntimeError("cannot load " + lib)
        _LOADED.add(lib)


def parse_ranges(spec: str | None):
    if not spec:
        return None
    out = []
    for part in spec.split(","):
        a, _, b = part.partition(":")
        first = int(a) if a else 0
        last = int(b) if b else 2**63 - 1
        out.append((first, last))
    return out


def list_ntuples(path: str) -> list[str]:
    ROOT = _root()
    return [str(n) for n in ROOT.rntuple_ref.ListNTuples(path)]


def field_list(dumper) -> list[tuple[int, str, str]]:
    out = []
    for line in str(dumper.FieldList()).splitlines():
        fid, name, typ = line.split("\t", 2)
        out.append((int(fid), name, typ))
    return out


def probe(path: str, ntuple: str) -> dict[int, str]:
    """Top-level field IDs that ROOT cannot read (crash/abort/exception) -> reason."""
    ROOT = _root()
    fd, err_path = tempfile.mkstemp(prefix="root_dump_probe_", suffix=".log")
    os.close(fd)
    try:
        text = str(ROOT.rntuple_ref.ProbeFields(path, ntuple, err_path))
    finally:
        os.remove(err_path)
    bad = {}
    for line in text.splitlines():
        fid, _, reason = line.partition("\t")
        bad[int(fid)] = reason
    return bad


def dump(path: str, ntuple: str, out: str = "-", ranges=None) -> dict:
    """Dump `ntuple` of `path` to `out` ("-" = stdout).

    Returns {"entries": total entry count, "skipped_fields": {name: reason}}
    where skipped_fields lists the top-level fields ROOT itself cannot read
    (they are left out of every dumped entry)."""
    ROOT = _root()
    bad = probe(path, ntuple)
    skip = ROOT.std.vector["std::uint64_t"]()
    for fid in bad:
        skip.push_back(fid)
    d = ROOT.rntuple_ref.Dumper(path, ntuple, skip)
    names = {fid: name for fid, name, _ in field_list(d)}
    skipped = {names[fid]: reason for fid, reason in bad.items()}
    for name, reason in skipped.items():
        print(f"root_dump: {path}:{ntuple}: field '{name}' skipped: {reason}", file=sys.stderr)
    n = int(d.GetNEntries())
    if out != "-":
        open(out, "wb").close()
    if ranges is None:
        ranges = [(0, n)]
    for first, last in ranges:
        first = max(0, min(first, n))
        last = max(first, min(last, n))
        d.Dump(first, last, out, True)
    return {"entries": n, "skipped_fields": skipped}


def safe_name(i: int) -> str:
    return f"{i:03d}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", nargs="?")
    p.add_argument("ntuple", nargs="?")
    p.add_argument("--entries", help="entry ranges A:B[,C:D...] (half-open, either bound may be omitted)")
    p.add_argument("--list", metavar="FILE", help="print the RNTuple names in FILE")
    p.add_argument("--all", metavar="FILE", help="dump every RNTuple of FILE into --out DIR")
    p.add_argument("--out", metavar="DIR")
    p.add_argument("--batch", metavar="JOBS_JSON")
    p.add_argument(
        "--load", action="append", default=[], metavar="LIB", help="load this dictionary library first (repeatable)"
    )
    p.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="DIR",
        help="add an include path for the interpreter (repeatable)",
    )
    args = p.parse_args(argv)
    ranges = parse_ranges(args.entries)
    setup(args.load, args.include)

    if args.list:
        for name in list_ntuples(args.list):
            print(name)
        return 0

    if args.all:
        if not args.out:
            p.error("--all needs --out DIR")
        os.makedirs(args.out, exist_ok=True)
        index = {}
        for i, name in enumerate(list_ntuples(args.all)):
            fname = safe_name(i) + ".jsonl"
            meta = dump(args.all, name, os.path.join(args.out, fname), ranges)
            index[name] = {"file": fname, **meta}
        with open(os.path.join(args.out, "index.json"), "w", encoding="utf-8") as fh:
            json.dump(index, fh, indent=1)
        return 0

    if args.batch:
        with open(args.batch, encoding="utf-8") as fh:
            jobs = json.load(fh)
        status = 0
        for job in jobs:
            setup(job.get("load"), job.get("include"))
            out = job["out"]
            for stale in (out + ".error", out + ".meta.json"):
                if os.path.exists(stale):
                    os.remove(stale)
            try:
                rng = [tuple(r) for r in job["ranges"]] if job.get("ranges") else None
                meta = dump(job["file"], job["ntuple"], out + ".tmp", rng)
                os.replace(out + ".tmp", out)
                with open(out + ".meta.json", "w", encoding="utf-8") as fh:
                    json.dump(meta, fh)
            except Exception as exc:  # noqa: BLE001 - report every failure per job
                status = 3
                with open(out + ".error", "w", encoding="utf-8") as fh:
                    fh.write(f"{type(exc).__name__}: {exc}\n")
                print(f"root_dump: {job['file']}:{job['ntuple']}: {exc}", file=sys.stderr)
        return status

    if not args.file or not args.ntuple:
        p.error("FILE and NTUPLE are required")
    dump(args.file, args.ntuple, "-", ranges)
    return 0


if __name__ == "__main__":
    sys.exit(main())
