"""Fixtures for the ROOT reference tests (test_root_reference.py).

Reference values come from ROOT itself through tests/reference/root_dump.py,
run with a Python that can ``import ROOT``:

* ``$RNTUPLE_ROOT_PYTHON`` if set, else
* ``${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}/venv/bin/python`` if it exists, else
* the Python running pytest.

Reference dumps are cached under ``${RNTUPLE_CACHE}/reference/`` keyed by the
content hash of the ROOT file, the RNTuple name, the entry ranges and the
dumper's own sources, so re-runs do not start ROOT at all.  All missing
references are produced by one ``root_dump.py --batch`` process.

The generated file matrix (tests/reference/generate.py) is produced on demand
by a session fixture; the > 4 GiB file only when ``RNTUPLE_BIG=1``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(TESTS, "data")
REFERENCE = os.path.join(TESTS, "reference")
ROOT_DUMP = os.path.join(REFERENCE, "root_dump.py")
GENERATE = os.path.join(REFERENCE, "generate.py")

sys.path.insert(0, REFERENCE)
import generate as _generate  # noqa: E402  (pure Python at import time; ROOT is imported lazily)

# Files in tests/data that ROOT itself cannot read completely; the dumper leaves
# the affected top-level fields out (it probes every field in a forked child)
# and reports them in "skipped_fields".  Kept here for the record:
#   test_emptystruct_invalidvar_rntuple_v1-0-0-0.root: field "variant"
#       (std::variant<std::int32_t,StructForVariant>): ROOT 6.40 crashes (SIGSEGV
#       in TClass::GetListOfDataMembers from RVariantField) when the alternative
#       is an emulated class without dictionary.
#   uproot-physlite-rntuple_v1-0-0-0.root, EventData: 78 top-level fields
#       (those containing ElementLink<...> and similar templated ATLAS classes)
#       make ROOT 6.40 abort with "Fatal: typeName == fieldDesc.GetTypeName()
#       violated" (RFieldBase.cxx) while emulating them.


def cache_dir() -> str:
    return _generate.cache_dir()


def big_enabled() -> bool:
    return os.environ.get("RNTUPLE_BIG", "") not in ("", "0")


def big_scratch_dir(tmp_path, need: int) -> str:
    """A directory with room for `need` bytes (plus 1 GiB of margin) for the > 4 GiB tests.

    `/dev/shm` (RAM-backed) comes first when the machine's available memory leaves 8 GiB beyond
    the file for the test's own processes: a CI machine's disk is shared with its build cache and
    other jobs, and a write that had room when the test started once ran out of it midway. Else
    `tmp_path` when its disk has the room. Fails, naming both places and their free space, when
    neither has it."""
    want = need + (1 << 30)
    tried = []
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        free = shutil.disk_usage(shm).free
        if free >= want and _mem_available() >= need + (8 << 30):
            return tempfile.mkdtemp(prefix="rntuple-big-", dir=shm)
        tried.append(f"{shm}: {free / 2**30:.1f} GiB free, {_mem_available() / 2**30:.1f} GiB of memory available")
    free = shutil.disk_usage(tmp_path).free
    if free >= want:
        return str(tmp_path)
    tried.append(f"{tmp_path}: {free / 2**30:.1f} GiB free")
    raise AssertionError(f"no room for a {need / 2**30:.1f} GiB test file ({'; '.join(tried)})")


def _mem_available() -> int:
    """MemAvailable of /proc/meminfo in bytes (0 where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def root_python() -> str:
    env = os.environ.get("RNTUPLE_ROOT_PYTHON")
    if env:
        return env
    venv = os.path.join(cache_dir(), "venv", "bin", "python")
    if os.path.exists(venv):
        return venv
    return sys.executable


# ---------------------------------------------------------------------------
# what to compare
# ---------------------------------------------------------------------------


class Case:
    """One RNTuple in one file."""

    def __init__(self, origin, file, ntuple, entries=None, ranges=None, covers=""):
        self.origin = origin  # "data", "generated" or "big"
        self.file = file  # file name (relative to its directory)
        self.ntuple = ntuple
        self.entries = entries
        self.ranges = ranges  # None = all entries, else [[first, last), ...]
        self.covers = covers

    @property
    def id(self):
        return f"{self.origin}/{self.file}:{self.ntuple}"

    def __repr__(self):
        return self.id


def data_cases() -> list[Case]:
    with open(os.path.join(DATA, "ntuples.json"), encoding="utf-8") as fh:
        index = json.load(fh)["files"]
    cases = []
    for fname, info in sorted(index.items()):
        for ntuple, entries in info["ntuples"].items():
            ranges = (info.get("ranges") or {}).get(ntuple)
            cases.append(Case("data", fname, ntuple, entries, ranges))
    return cases


def generated_cases(big: bool = False) -> list[Case]:
    plan = _generate.big_plan() if big else _generate.file_plan()
    cases = []
    for fname, info in plan.items():
        for ntuple in info["ntuples"]:
            ranges = (info.get("ranges") or {}).get(ntuple)
            cases.append(Case("big" if big else "generated", fname, ntuple, None, ranges, info["covers"]))
    return cases


def all_cases() -> list[Case]:
    cases = data_cases() + generated_cases()
    if big_enabled():
        cases += generated_cases(big=True)
    return cases


# ---------------------------------------------------------------------------
# generated files
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def generated_dir() -> str:
    """Directory with the generated files (generated on demand, reused from the cache)."""
    out = _generate.output_dir()
    if _generate.is_complete(out, big_enabled()):
        return out
    cmd = [root_python(), GENERATE] + (["--big"] if big_enabled() else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"generate.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout.strip().splitlines()[-1]


def _manifest(gen_dir: str, big: bool) -> dict:
    with open(os.path.join(gen_dir, "big.json" if big else "manifest.json"), encoding="utf-8") as fh:
        return json.load(fh)


# ---------------------------------------------------------------------------
# reference dumps (ROOT), cached by content
# ---------------------------------------------------------------------------


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_DUMPER_HASH = None


def dumper_hash() -> str:
    global _DUMPER_HASH
    if _DUMPER_HASH is None:
        h = hashlib.sha256()
        for name in ("root_dump.py", "rntuple_dump_helper.cxx"):
            with open(os.path.join(REFERENCE, name), "rb") as fh:
                h.update(fh.read())
        _DUMPER_HASH = h.hexdigest()[:16]
    return _DUMPER_HASH


class ReferenceStore:
    """ROOT's dump of every case, produced lazily in one batch and cached on disk."""

    def __init__(self, gen_dir: str | None):
        self.gen_dir = gen_dir
        self.dir = os.path.join(cache_dir(), "reference")
        os.makedirs(self.dir, exist_ok=True)
        self._hashes: dict[str, str] = {}
        self._batched = False

    def path_of(self, case: Case) -> str:
        if case.origin == "data":
            return os.path.join(DATA, case.file)
        return os.path.join(self.gen_dir, case.file)

    def setup_of(self, case: Case) -> dict:
        if case.origin == "data":
            return {}
        return _manifest(self.gen_dir, case.origin == "big").get("dump_setup", {})

    def _key(self, case: Case) -> str:
        path = self.path_of(case)
        if path not in self._hashes:
            if case.origin == "big":
                # hashing 4 GiB on every run is slow: key the big file by size and mtime
                st = os.stat(path)
                self._hashes[path] = f"big-{st.st_size}-{int(st.st_mtime)}"
            else:
                self._hashes[path] = _sha256_file(path)
        raw = json.dumps([self._hashes[path], case.ntuple, case.ranges, dumper_hash()])
        return hashlib.sha256(raw.encode()).hexdigest()[:32]

    def _out(self, case: Case) -> str:
        return os.path.join(self.dir, self._key(case) + ".jsonl")

    def _batch(self, cases: list[Case]):
        jobs = []
        for c in cases:
            out = self._out(c)
            if os.path.exists(out + ".meta.json") or os.path.exists(out + ".error"):
                continue
            job = {"file": self.path_of(c), "ntuple": c.ntuple, "out": out, **self.setup_of(c)}
            if c.ranges:
                job["ranges"] = c.ranges
            jobs.append(job)
        if not jobs:
            return
        fd, jobs_path = tempfile.mkstemp(prefix="root_dump_jobs_", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(jobs, fh)
        try:
            subprocess.run([root_python(), ROOT_DUMP, "--batch", jobs_path], capture_output=True, text=True)
        finally:
            os.remove(jobs_path)

    def get(self, case: Case) -> tuple[list[dict], dict]:
        """(entries as parsed JSON objects, meta {"entries", "skipped_fields"})"""
        out = self._out(case)
        if not os.path.exists(out + ".meta.json") and not os.path.exists(out + ".error"):
            if not self._batched:
                self._batched = True
                wanted = [c for c in all_cases() if c.origin == "data" or self.gen_dir]
                try:
                    self._batch(wanted)
                except OSError:
                    pass
            self._batch([case])
        if os.path.exists(out + ".error"):
            with open(out + ".error", encoding="utf-8") as fh:
                raise RuntimeError(f"ROOT cannot dump {case.id}: {fh.read().strip()}")
        with open(out + ".meta.json", encoding="utf-8") as fh:
            meta = json.load(fh)
        with open(out, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh]
        return rows, meta


@pytest.fixture(scope="session")
def reference_store(request) -> ReferenceStore:
    needs_generated = any(
        getattr(item, "callspec", None) is not None
        and getattr(item.callspec.params.get("case"), "origin", "data") != "data"
        for item in request.session.items
    )
    gen_dir = request.getfixturevalue("generated_dir") if needs_generated else None
    return ReferenceStore(gen_dir)


# ---------------------------------------------------------------------------
# our dump
# ---------------------------------------------------------------------------


def our_dump_command() -> list[str] | None:
    """How to run our `rntuple dump`: the `rntuple` executable, else `python -m rntuple`."""
    env = os.environ.get("RNTUPLE_DUMP_CMD")
    if env:
        return env.split()
    exe = shutil.which("rntuple")
    if exe:
        return [exe]
    for py in (sys.executable,):
        probe = subprocess.run([py, "-c", "import rntuple.__main__"], capture_output=True)
        if probe.returncode == 0:
            return [py, "-m", "rntuple"]
    return None


@pytest.fixture(scope="session")
def our_dump():
    cmd = our_dump_command()
    if cmd is None:
        msg = "our `rntuple` CLI was not found (neither `rntuple` on PATH nor `python -m rntuple`)"
        if os.environ.get("RNTUPLE_SKIP_MISSING_CLI", "") not in ("", "0"):
            pytest.skip(msg)
        pytest.fail(msg)

    def run(path: str, ntuple: str, ranges=None) -> list[dict]:
        rows = []
        # one invocation per range (a single `--entries A:B` is the minimal interface)
        for rng in ranges or [None]:
            args = cmd + ["dump", f"{path}:{ntuple}"]
            if rng:
                args += ["--entries", f"{rng[0]}:{rng[1]}"]
            proc = subprocess.run(args, capture_output=True)
            if proc.returncode != 0:
                raise AssertionError(
                    f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')[-4000:]}"
                )
            rows += [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines() if line.strip()]
        return rows

    return run


# ---------------------------------------------------------------------------
# comparison of canonical (JSON-like) values, shared by the tests
# ---------------------------------------------------------------------------


def canon_diff(a, b, path="$", *, nan_equal=False):
    """None if the canonical values a and b are equal, else a description of the first difference.

    Floats compare exactly and with their sign (-0.0 differs from 0.0); NaN equals NaN only with
    ``nan_equal``; bool, int and float are never mixed; lists and dicts (with their key order) recursively.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return None if type(a) is type(b) and a == b else f"{path}: {a!r} != {b!r}"
    if isinstance(a, float) and isinstance(b, float):
        if nan_equal and math.isnan(a) and math.isnan(b):
            return None
        return None if a == b and math.copysign(1.0, a) == math.copysign(1.0, b) else f"{path}: {a!r} != {b!r}"
    if type(a) is not type(b):
        return f"{path}: {a!r} ({type(a).__name__}) != {b!r} ({type(b).__name__})"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}: {_short(a)} != {_short(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = canon_diff(x, y, f"{path}[{i}]", nan_equal=nan_equal)
            if d:
                return d
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            d = canon_diff(a[k], b[k], f"{path}.{k}", nan_equal=nan_equal)
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def _short(v, n=300):
    s = json.dumps(v, default=repr)
    return s if len(s) <= n else s[:n] + "..."


# The integer types the writers take, by short name (64-bit last: JSROOT reads them as doubles).
INT_DTYPES: list[tuple[str, type[np.integer]]] = [
    ("i8", np.int8),
    ("u8", np.uint8),
    ("i16", np.int16),
    ("u16", np.uint16),
    ("i32", np.int32),
    ("u32", np.uint32),
    ("i64", np.int64),
    ("u64", np.uint64),
]


def extreme_ints(rng: np.random.Generator, dtype: type[np.integer], n: int) -> np.ndarray:
    """``n`` random integers of ``dtype``, the first two its minimum and maximum."""
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    values[:2] = [info.min, info.max]
    return values


def write_in_clusters(path: str | os.PathLike[str], name: str, data: object, clusters: list[int]) -> str:
    """Writes ``data`` (anything ``ak.Array`` takes) as the RNTuple ``name`` of a new file, in
    clusters of ``clusters`` entries each; returns the path."""
    import awkward as ak
    import rntuple

    events = ak.Array(data)
    with rntuple.recreate(path) as f, f.mkrntuple(name, events[:0]) as w:
        at = 0
        for n in clusters:
            w.extend(events[at : at + n])
            w.commit_cluster()
            at += n
    return os.fspath(path)


def canon_float(v: object) -> object:
    """A non-finite float as the dump format spells it (``"nan"``, ``"inf"``, ``"-inf"``); any other
    value as it is."""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v
