#!/usr/bin/env python3
"""Side-by-side benchmark: rntuple (Rust and Python APIs) against ROOT 6.40's
RNTuple and TTree (compiled C++) and uproot, on the same data in the same run.

    python bench/run.py [--quick] [--runs N] [--cases write,read,...] [--workloads nanoaod,aod,run2012,cmsaod]

Generates the inputs (cached under ``$RNTUPLE_CACHE/bench``), builds the
competitors (cached too), runs every case ``--runs`` times with the
competitors interleaved, checks that every reader reports the checksum of the
input and that files written by each writer are read back by the others, and
writes ``docs/benchmarks.md`` (``--output`` elsewhere). Exits non-zero if a
competitor failed or a checksum differs.

Cases: ``write`` (codecs × threads), ``read`` (all columns, 1 and 2 threads),
``read3`` (3 fields), ``read3rec`` (3 fields, 2 of them sub-fields of record collections:
``MET_pt``, ``Muon.pt``, ``Jet.pt`` of nanoaod's first 100,000 entries; no TTree reader),
``range`` (1 % of the entries), ``wide`` (open the
2,000-field RNTuple and read one column), ``startup`` (``bench/startup.py``: fresh Python processes
to the first awkward array of that file, beyond ``import awkward``), ``limit`` (codec alone),
``merge`` (``bench/merge_bench.py``, when it exists). The ``cmsaod`` workload (CMS's
memory case) has its own plan (``PLANS``): writes only, LZMA 4, 1 thread.

Every write runs under the heap counter (``bench/heapcount.c`` by LD_PRELOAD; ``--heap off``
to leave it out): peak live heap and bytes requested during the timed section, the same way
for every writer.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import checksum  # noqa: E402
import cppgen  # noqa: E402
import heapcount  # noqa: E402
import report  # noqa: E402
import startup  # noqa: E402
import workloads  # noqa: E402

COMPETITORS = {
    "root-rntuple": "ROOT RNTuple (C++)",
    "root-ttree": "ROOT TTree (C++)",
    "ours-rust": "rntuple (Rust)",
    "ours-rust-budget": "rntuple (Rust, memory_budget 64 MiB)",
    "ours-python": "rntuple (Python)",
    "uproot": "uproot (Python)",
}
# The writer's memory budget of the "ours-rust-budget" write runs (WriteOptions::memory_budget).
MEMORY_BUDGET = 64 * 1024 * 1024
# Readers: every competitor except the write-only budget variant.
READERS = [c for c in COMPETITORS if c != "ours-rust-budget"]
CASES = ("write", "read", "read3", "read3rec", "range", "wide", "startup", "limit", "merge")
# ROOT compression settings: zstd 5 (ROOT's default), lz4 4 (ROOT's "analysis" setting), none, lzma 1.
# lzma 7 (ROOT's "smallest") writes at a few MB/s: --codecs 505,404,0,207 measures it too.
CODECS = {505: "zstd 5", 404: "lz4 4", 0: "none", 201: "lzma 1", 204: "lzma 4", 207: "lzma 7"}
DEFAULT_CODECS = (505, 404, 0, 201)
SELECT3, WIDE_WORKLOAD, WIDE_FIELD = workloads.SELECT3, workloads.WIDE_WORKLOAD, workloads.WIDE_FIELD
SELECT3_RECORDS, RECORDS_ENTRIES = workloads.SELECT3_RECORDS, workloads.RECORDS_ENTRIES
CHILD_TIMEOUT = 1800
# Workloads with their own plan (ignoring --codecs/--threads): the cases they run, the (codec, threads)
# of their writes and the writers. cmsaod is CMS's memory case (issue 15): LZMA 4, CMS's AOD setting.
PLANS = {
    "cmsaod": {
        "cases": ("write",),
        "configs": [(204, 1)],
        "writers": ["root-rntuple", "root-ttree", "ours-rust", "ours-rust-budget", "ours-python"],
    },
}


# The compression each workload is written with when two builds of our writer are compared
# (bench/write_time.py, bench/layout_issue23.py): zstd 5; cmsaod LZMA 4, CMS's AOD setting.
WORKLOAD_CODEC = {"nanoaod": 505, "aod": 505, "run2012": 505, "cmsaod": 204}


def two_builds(doc: str | None, runs: int, workload_names: str, more=None) -> tuple[argparse.Namespace, Bench]:
    """The arguments of a comparison of two builds of ``rntuple-bench`` (``--base``, ``--new``,
    ``--runs``, ``--workloads``, ``--scratch``; ``more(parser)`` adds others) and a ``Bench`` that
    prepares the workloads' inputs."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True)
    p.add_argument("--new", required=True)
    p.add_argument("--runs", type=int, default=runs)
    p.add_argument("--workloads", default=workload_names)
    p.add_argument("--scratch", default="/tmp")
    if more is not None:
        more(p)
    args = p.parse_args()
    return args, Bench(parse_args(["--cases", "write", "--runs", "1", "--output", os.devnull]))


def write_args(inputs: dict, name: str) -> list[str]:
    """``rntuple-bench write``'s arguments for workload ``name`` prepared in ``inputs``: one thread."""
    return ["--input", inputs["dir"], "--compression", str(WORKLOAD_CODEC[name]), "--threads", "1"]


def cache_root() -> str:
    return os.path.join(os.environ.get("RNTUPLE_CACHE", os.path.expanduser("~/.cache/rntuple-ci")), "bench")


class Failure(Exception):
    pass


def run_child(cmd: list[str], timeout: float = CHILD_TIMEOUT, heap: tuple[str, str] | None = None) -> dict:
    """Runs one competitor process; returns its JSON plus the rusage of the process (peak RSS, CPU).
    ``heap``: (counter library, output path): the process runs under the heap counter and the result
    gains its figures of the timed section (``heapcount.figures``)."""
    env = None
    if heap is not None:
        if os.path.exists(heap[1]):
            os.remove(heap[1])
        env = heapcount.environment(heap[0], heap[1])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        process_wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise Failure(f"exit {proc.returncode}: {' '.join(cmd)}\n{stderr[-3000:]}")
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise Failure(f"no JSON result from: {' '.join(cmd)}\n{stdout[-2000:]}\n{stderr[-2000:]}")
    result = json.loads(lines[-1])
    # Peak RSS: the program's own VmHWM. The child's rusage (ru_maxrss, kept for reference) also
    # counts the harness's peak: Python spawns with vfork and Linux keeps the pre-exec high-water mark.
    result["ru_maxrss"] = usage.ru_maxrss * 1024
    result["peak_rss"] = result.pop("peak_rss_self", None) or result["ru_maxrss"]
    result["process_wall"] = process_wall
    result["process_cpu"] = usage.ru_utime + usage.ru_stime
    if heap is not None:
        figures = heapcount.figures(heap[1], proc.pid)
        if not figures:
            raise Failure(f"the heap counter wrote no marks for: {' '.join(cmd)}")
        result.update(figures)
        os.remove(heap[1])
    return result


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cache = cache_root()
        os.makedirs(os.path.join(self.cache, "scratch"), exist_ok=True)
        # written files of this run (removed at the end; concurrent runs do not share it)
        self.scratch = tempfile.mkdtemp(prefix="run-", dir=os.path.join(self.cache, "scratch"))
        self.results: list[dict] = []
        self.checks: list[dict] = []
        self.failures: list[str] = []
        self.workloads: dict[str, dict] = {}
        self.t0 = time.perf_counter()
        self.python = sys.executable
        self.children = os.path.join(HERE, "children.py")
        self.merge_table: str | None = None
        self.merge_command = ""

    def log(self, msg: str) -> None:
        print(f"[{time.perf_counter() - self.t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    # -- builds --------------------------------------------------------------

    def build(self) -> None:
        self.log("building rntuple-bench (cargo, release)")
        env = dict(os.environ)
        env.setdefault("CARGO_TARGET_DIR", os.path.join(os.path.dirname(self.cache), "target"))
        cargo = ["cargo", "build", "--release", "--locked", "-q", "-p", "rntuple-bench"]
        if subprocess.run(cargo, cwd=REPO, env=env).returncode != 0:
            raise SystemExit(f"bench/run.py: `{' '.join(cargo)}` failed (see above)")
        self.rust = os.path.join(env["CARGO_TARGET_DIR"], "release", "rntuple-bench")
        self.log("building ROOT's RNTuple reader (C++)")
        self.root_reader = cppgen.build_reader(self.cache, self.log)
        self.heaplib = heapcount.build(self.cache, self.log) if self.args.heap != "off" else None

    def prepare(self, name: str, entries: int) -> dict:
        self.log(f"{name}: input ({entries} entries)")
        directory = workloads.generate(self.cache, name, entries)
        manifest = workloads.load_manifest(directory)
        self.log(f"{name}: ROOT writers and TTree reader (C++, generated)")
        exe = cppgen.build_workload(self.cache, manifest, self.log)
        files = os.path.join(
            self.cache, "files", os.path.basename(directory) + "-" + os.path.basename(os.path.dirname(exe))
        )
        os.makedirs(files, exist_ok=True)
        ref = {
            "rntuple": os.path.join(files, "root-rntuple-505.root"),
            "ttree": os.path.join(files, "root-ttree-505.root"),
        }
        wants_ref = set(self.cases_of(name)) & {"read", "read3", "read3rec", "range", "wide", "startup", "limit"}
        for kind, path in ref.items():
            if wants_ref and not os.path.exists(path):
                self.log(f"{name}: reference file written by ROOT ({kind}, zstd 5)")
                tmp = f"{path}.{os.getpid()}.tmp.root"
                run_child(self._write_cmd("root-" + kind, directory, manifest, exe, tmp, 505, 1))
                os.replace(tmp, path)
        w = {
            "name": name,
            "dir": directory,
            "manifest": manifest,
            "exe": exe,
            "ref": ref,
            "info": workloads.describe(manifest),
            "expected": {},
        }
        self.workloads[name] = w
        return w

    def cases_of(self, name: str) -> list[str]:
        plan = PLANS.get(name)
        return [c for c in self.args.cases if plan is None or c in plan["cases"]]

    def expected(self, w: dict, fields: list[str] | None, start: int, stop: int) -> dict:
        key = (tuple(fields) if fields else None, start, stop)
        if key not in w["expected"]:
            w["expected"][key] = checksum.input_checksums(w["dir"], w["manifest"], fields, start, stop)
        return w["expected"][key]

    # -- commands --------------------------------------------------------------

    def _write_cmd(self, comp: str, directory: str, manifest: dict, exe: str, out: str, codec: int, threads: int):
        common = ["--input", directory, "--output", out, "--compression", str(codec), "--threads", str(threads)]
        if comp == "root-rntuple":
            return [exe, "write-rntuple", *common, "--entries", str(manifest["entries"])]
        if comp == "root-ttree":
            return [exe, "write-ttree", *common, "--entries", str(manifest["entries"])]
        if comp == "ours-rust":
            return [self.rust, "write", *common]
        if comp == "ours-rust-budget":
            return [self.rust, "write", *common, "--memory-budget", str(MEMORY_BUDGET)]
        if comp == "ours-python":
            return [self.python, self.children, "ours-write", *common]
        if comp == "uproot":
            return [self.python, self.children, "uproot-write", *common]
        raise KeyError(comp)

    def _read_cmd(self, comp: str, w: dict, path: str | None, fields, start: int, stop: int, threads: int):
        opts = ["--start", str(start), "--stop", str(stop), "--threads", str(threads)]
        if fields:
            opts += ["--fields", ",".join(fields)]
        if comp == "root-rntuple":
            return [self.root_reader, "--file", path or w["ref"]["rntuple"], "--name", "Events", *opts]
        if comp == "root-ttree":
            return [w["exe"], "read-ttree", "--file", path or w["ref"]["ttree"], *opts]
        if comp == "ours-rust":
            return [self.rust, "read", "--file", path or w["ref"]["rntuple"], "--name", "Events", *opts]
        if comp == "ours-python":
            return [self.python, self.children, "ours-read", "--file", path or w["ref"]["rntuple"], *opts]
        if comp == "uproot":
            return [self.python, self.children, "uproot-read", "--file", path or w["ref"]["rntuple"], *opts]
        raise KeyError(comp)

    def record(self, case: str, w: dict, config: dict, comp: str, run: int, cmd: list[str], expect=None) -> dict | None:
        heap = None
        if case == "write" and self.heaplib:
            heap = (self.heaplib, os.path.join(self.scratch, f"heap-{comp}-{run}.jsonl"))
        try:
            r = run_child(cmd, heap=heap)
        except Failure as e:
            self.failures.append(f"{case} {w['name']} {config} {comp}: {e}")
            self.log(f"FAILED {case} {w['name']} {config} {comp}: {str(e).splitlines()[0]}")
            return None
        r.update({"case": case, "workload": w["name"], "config": config, "competitor": comp, "run": run})
        if expect is not None:
            got = r.pop("checksum", None)
            r["checksum_ok"] = got == expect
            if not r["checksum_ok"]:
                bad = sorted(k for k in set(expect) | set(got or {}) if (got or {}).get(k) != expect.get(k))
                self.failures.append(f"{case} {w['name']} {config} {comp}: checksum differs at {bad[:5]}")
        self.results.append(r)
        return r

    # -- cases -----------------------------------------------------------------

    def case_write(self, w: dict) -> None:
        # zstd 5 (the targets' setting) with every thread count and every writer; the other codecs with
        # 1 thread, ROOT RNTuple and rntuple (Rust) only (file sizes and speed per codec; keeps the run short)
        plan = PLANS.get(w["name"])
        configs = [(505, t) for t in self.args.threads]
        configs += [(c, 1) for c in self.args.codecs if c != 505]
        if plan:
            configs = plan["configs"]
        out_dir = os.path.join(self.scratch, w["name"])
        os.makedirs(out_dir, exist_ok=True)
        kept: dict[str, str] = {}
        for codec, threads in configs:
            if plan:
                comps = plan["writers"]
            elif codec == 505 and threads == 1:
                comps = ["root-rntuple", "root-ttree", "ours-rust", "ours-rust-budget", "ours-python", "uproot"]
            elif codec == 505:  # uproot writes with 1 thread; TTree (slow) only where a target needs it
                comps = ["root-rntuple", "ours-rust", "ours-rust-budget", "ours-python"]
            else:
                comps = ["root-rntuple", "ours-rust"]
            for run in range(self.args.runs):
                for comp in comps:
                    out = os.path.join(out_dir, f"{comp}-{codec}-{threads}-{run}.root")
                    config = {"codec": codec, "threads": threads}
                    self.log(f"write {w['name']} {CODECS[codec]} t{threads} run {run + 1}: {comp}")
                    cmd = self._write_cmd(comp, w["dir"], w["manifest"], w["exe"], out, codec, threads)
                    r = self.record("write", w, config, comp, run, cmd)
                    if r is not None and os.path.exists(out):
                        r["file_size"] = os.path.getsize(out)
                        if run == 0 and (codec, threads) == configs[0]:
                            kept[comp] = out
                            continue
                    if os.path.exists(out):
                        os.remove(out)
        self.cross_check(w, kept)
        for path in kept.values():
            os.remove(path)

    def cross_check(self, w: dict, files: dict[str, str]) -> None:
        """Files written by each writer (zstd 5, 1 thread) read back by the other readers."""
        expect = self.expected(w, None, 0, w["manifest"]["entries"])
        pairs = []
        for writer, path in files.items():
            if writer == "root-ttree":
                pairs.append((writer, "root-ttree", path))
                continue
            for reader in ("root-rntuple", "ours-rust"):
                pairs.append((writer, reader, path))
            if writer == "ours-rust":
                pairs.append((writer, "uproot", path))
        for writer, reader, path in pairs:
            self.log(f"cross-check {w['name']}: {reader} reads the file of {writer}")
            cmd = self._read_cmd(reader, w, path, None, 0, w["manifest"]["entries"], 1)
            try:
                r = run_child(cmd)
                ok = r.get("checksum") == expect
                msg = "" if ok else "checksum differs"
            except Failure as e:
                ok, msg = False, str(e).splitlines()[0]
            self.checks.append({"workload": w["name"], "writer": writer, "reader": reader, "ok": ok, "message": msg})
            if not ok:
                self.failures.append(f"cross-check {w['name']}: {reader} reading {writer}'s file: {msg}")

    def _reads(self, case: str, w: dict, fields, start: int, stop: int, threads_list, comps) -> None:
        expect = self.expected(w, fields, start, stop)
        for threads in threads_list:
            config = {"threads": threads, "fields": fields, "start": start, "stop": stop}
            run_comps = [c for c in comps if not (c == "uproot" and threads > 1)]
            for run in range(self.args.runs):
                for comp in run_comps:
                    self.log(f"{case} {w['name']} t{threads} run {run + 1}: {comp}")
                    cmd = self._read_cmd(comp, w, None, fields, start, stop, threads)
                    self.record(case, w, config, comp, run, cmd, expect)

    def case_read(self, w: dict) -> None:
        self._reads("read", w, None, 0, w["manifest"]["entries"], self.args.threads, READERS)

    def case_read3(self, w: dict) -> None:
        self._reads("read3", w, SELECT3[w["name"]], 0, w["manifest"]["entries"], [1], READERS)

    def case_read3rec(self, w: dict) -> None:
        """Sub-fields of record collections (``Muon.pt``): the first ``RECORDS_ENTRIES`` entries of the file."""
        if w["name"] not in SELECT3_RECORDS:
            return
        stop = min(RECORDS_ENTRIES, w["manifest"]["entries"])
        # (the generated TTree reader selects whole top-level branches only: not a competitor here)
        comps = [c for c in READERS if c != "root-ttree"]
        self._reads("read3rec", w, SELECT3_RECORDS[w["name"]], 0, stop, [1], comps)

    def case_range(self, w: dict) -> None:
        n = w["manifest"]["entries"]
        start = n // 2
        stop = start + max(1, n // 100)
        self._reads("range", w, None, start, stop, [1], READERS)

    def case_wide(self, w: dict) -> None:
        comps = ["root-rntuple", "ours-rust", "ours-python", "uproot"]
        self._reads("wide", w, [WIDE_FIELD], 0, w["manifest"]["entries"], [1], comps)

    def case_startup(self, w: dict) -> None:
        """Python start-up (issue 15), on the file ROOT wrote: one record holding ``startup.measure``'s
        result (the runs are interleaved inside it)."""
        self.log(f"startup {w['name']}: {self.args.runs} runs of import awkward, rntuple, uproot")
        env = startup.child_env(self.cache)
        try:
            result = startup.measure(w["ref"]["rntuple"], WIDE_FIELD, max(self.args.runs, 5), env)
            result.update(startup.import_summary(w["ref"]["rntuple"], WIDE_FIELD, env))
        except subprocess.CalledProcessError as e:
            self.failures.append(f"startup {w['name']}: {e}")
            return
        config = {"field": WIDE_FIELD}
        self.results.append(
            {"case": "startup", "workload": w["name"], "config": config, "competitor": "all", "measure": result}
        )

    def case_limit(self, w: dict) -> None:
        # as the write case: zstd 5 with every thread count, the other codecs with 1 thread; not lzma
        # (minutes, and no target refers to it)
        others = [c for c in self.args.codecs if c not in (0, 505) and c // 100 != 2]
        sets = [("505", ",".join(str(t) for t in self.args.threads))]
        if others:
            sets.append((",".join(str(c) for c in others), "1"))
        for run in range(self.args.runs):
            self.log(f"limit {w['name']} run {run + 1}")
            limits = []
            for codecs, threads in sets:
                cmd = [self.rust, "limit", "--file", w["ref"]["rntuple"], "--name", "Events"]
                cmd += ["--compression", codecs, "--threads", threads]
                try:
                    limits += run_child(cmd)["limits"]
                except Failure as e:
                    self.failures.append(f"limit {w['name']}: {e}")
            for lim in limits:
                self.results.append(
                    {
                        "case": "limit",
                        "workload": w["name"],
                        "config": {"codec": lim["compression"], "threads": lim["threads"]},
                        "competitor": "codec",
                        "run": run,
                        **lim,
                    }
                )

    def case_merge(self) -> None:
        """``bench/merge_bench.py`` (another helper's): its markdown table goes into the report."""
        script = os.path.join(HERE, "merge_bench.py")
        if not os.path.exists(script):
            self.log("merge: bench/merge_bench.py does not exist; skipped")
            return
        usage = subprocess.run([self.python, script, "--help"], capture_output=True, text=True).stdout
        cmd = [self.python, script, "--runs", str(self.args.runs)]
        if "--cases" in usage:
            cmd += ["--cases", "merge"]
        if self.args.scale != "full":
            if "--quick" in usage:
                cmd.append("--quick")
            elif "--entries" in usage:
                cmd += ["--entries", "20000"]
        self.log("merge: " + " ".join(cmd[1:]))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            self.failures.append(f"merge: {' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
            return
        self.merge_table = proc.stdout.strip()
        self.merge_command = "python bench/" + " ".join([os.path.basename(script), *cmd[2:]])

    # -- everything ------------------------------------------------------------

    def run(self) -> None:
        try:
            self.build()
            cases = self.args.cases
            for name in self.args.workloads:
                entries = self.args.entries.get(name) or workloads.SIZES[name][self.args.scale]
                w = self.prepare(name, entries)
                for case in ("write", "read", "read3", "read3rec", "range", "limit"):
                    if case in self.cases_of(name):
                        getattr(self, "case_" + case)(w)
                if "wide" in cases and name == WIDE_WORKLOAD:
                    self.case_wide(w)
                if "startup" in cases and name == WIDE_WORKLOAD:
                    self.case_startup(w)
            if "merge" in cases:
                self.case_merge()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _entries(values: list[str]) -> dict[str, int]:
    out = {}
    for v in values:
        name, _, n = v.partition("=")
        if name not in workloads.SIZES or not n.isdigit() or int(n) <= 0:
            raise argparse.ArgumentTypeError(f"--entries wants WORKLOAD=N with a workload of {workloads.WORKLOADS}")
        out[name] = int(n)
    return out


def _list(choices):
    def parse(text: str) -> list[str]:
        items = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in items if x not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"choose from {', '.join(choices)} (got {text!r})")
        return items

    return parse


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small inputs and 1 run: a smoke run of a few minutes")
    p.add_argument("--scale", choices=("full", "quick", "tiny"), help="input sizes (default: full; --quick: quick)")
    p.add_argument("--runs", type=int, help="runs of every case (default 3, with --quick 1); median and spread")
    p.add_argument("--cases", type=_list(CASES), default=list(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    p.add_argument("--workloads", type=_list(workloads.WORKLOADS), default=list(workloads.WORKLOADS))
    p.add_argument("--entries", nargs="*", default=[], metavar="WORKLOAD=N", help="override entries of a workload")
    p.add_argument("--codecs", type=_ints, default=list(DEFAULT_CODECS), help="ROOT compression settings to write")
    p.add_argument("--threads", type=_ints, default=[1, 2], help="thread counts (default 1,2)")
    p.add_argument(
        "--heap",
        choices=("write", "off"),
        default="write",
        help="write: every write run under the heap counter (bench/heapcount.c; peak heap and bytes requested)",
    )
    p.add_argument("--output", default=os.path.join(REPO, "docs", "benchmarks.md"), help="the report (markdown)")
    p.add_argument("--json", help="also write all raw results to this JSON file")
    p.add_argument(
        "--render",
        metavar="JSON[,JSON...]",
        help="only render the report from the raw results of earlier runs (several: the first one's machine and\n"
        "command head the report; a later run's results replace the earlier ones of the same workload)",
    )
    args = p.parse_args(argv)
    args.scale = args.scale or ("quick" if args.quick else "full")
    if args.runs is None:
        args.runs = 1 if args.quick else 3
    try:
        args.entries = _entries(args.entries)
    except argparse.ArgumentTypeError as e:
        p.error(str(e))
    if args.runs < 1:
        p.error("--runs must be at least 1")
    bad = [c for c in args.codecs if c not in CODECS]
    if bad:
        p.error(f"--codecs: {bad} not among {sorted(CODECS)}")
    if 505 not in args.codecs:
        p.error("--codecs must include 505 (zstd 5, the comparison point of the targets)")
    if not args.threads or any(t < 1 for t in args.threads):
        p.error("--threads: positive integers")
    return args


def _merge_saved(paths: list[str]) -> dict:
    """The raw results of several runs as one: workloads measured again replace the earlier figures;
    results of a later run carry its command and start (``run_meta``)."""
    merged: dict | None = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                saved = json.load(fh)
        except (OSError, ValueError) as e:
            raise SystemExit(f"bench/run.py --render: cannot read {path}: {e}") from None
        if merged is None:
            merged = saved
            continue
        again = set(saved["workloads"])
        run_meta = {k: saved["meta"][k] for k in ("command", "started", "elapsed", "runs", "load_before", "load_after")}
        for r in saved["results"]:
            r["run_meta"] = run_meta
        merged["workloads"].update(saved["workloads"])
        merged["results"] = [r for r in merged["results"] if r["workload"] not in again] + saved["results"]
        merged["checks"] = [c for c in merged["checks"] if c["workload"] not in again] + saved["checks"]
        merged["failures"] += saved["failures"]
    assert merged is not None
    return merged


def render_saved(path: str, output: str) -> int:
    """Writes the report of the raw results saved by ``--json`` (e.g. after editing bench/notes.md)."""
    import types

    saved = _merge_saved([p for p in path.split(",") if p])
    bench = types.SimpleNamespace(
        workloads={
            name: {"name": name, "manifest": {"entries": info["entries"]}, "info": info}
            for name, info in saved["workloads"].items()
        },
        results=saved["results"],
        checks=saved["checks"],
        failures=saved["failures"],
        merge_table=saved.get("merge_table"),
        merge_command=saved.get("merge_command", ""),
    )
    meta = saved["meta"]
    meta["load_before"], meta["load_after"] = tuple(meta["load_before"]), tuple(meta["load_after"])
    with open(output, "w", encoding="utf-8") as fh:
        fh.write(report.render(bench, meta))
    print(f"wrote {output}", file=sys.stderr)
    return 1 if bench.failures else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        return render_saved(args.render, args.output)
    bench = Bench(args)
    started = datetime.datetime.now(datetime.UTC)
    load_before = os.getloadavg()
    bench.run()
    elapsed = time.perf_counter() - bench.t0
    command = "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    meta = report.machine_info()
    meta.update(
        {
            "command": command.strip(),
            "started": started.strftime("%Y-%m-%d %H:%M UTC"),
            "elapsed": elapsed,
            "load_before": load_before,
            "load_after": os.getloadavg(),
            "runs": args.runs,
            "scale": args.scale
            + (
                " (entries set: " + ", ".join(f"{k} {v:,}" for k, v in args.entries.items()) + ")"
                if args.entries
                else ""
            ),
        }
    )
    text = report.render(bench, meta)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "meta": meta,
                    "workloads": {k: v["info"] for k, v in bench.workloads.items()},
                    "results": bench.results,
                    "checks": bench.checks,
                    "failures": bench.failures,
                    "merge_table": bench.merge_table,
                    "merge_command": bench.merge_command,
                },
                fh,
                indent=1,
                default=str,
            )
    bench.log(f"wrote {args.output} ({elapsed / 60:.1f} min)")
    for f in bench.failures:
        print("FAILURE: " + f, file=sys.stderr)
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(main())
