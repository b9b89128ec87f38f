"""Deterministic benchmark workloads, written in the neutral input form.

Every writer of the benchmark loads the same input before its timer starts:
a directory holding ``manifest.json`` and one raw little-endian array per
column (the format is described in ``crates/rntuple-bench/src/input.rs`` and
``docs/benchmarks.md``)::

    {"ntuple": "Events", "entries": N, "raw_bytes": B, "fields": [{"name": ..., "type": T}, ...]}
    T = {"kind": "scalar", "dtype": "f4", "file": "c00001.bin"}        N values
      | {"kind": "vector", "offsets": "c00002.bin", "item": T}         N + 1 int64 offsets from 0
      | {"kind": "record", "class": "NanoJet", "members": [{"name": ..., "type": T}, ...]}

dtype: ``b`` (bool as one byte 0/1), ``i1 u1 i2 u2 i4 u4 i8 u8 f4 f8``.

Workloads (numpy's PCG64 with fixed seeds, so the same on every machine):

* ``nanoaod``: CMS NanoAOD-like, 100 scalar branches (floats with exponential
  / gaussian / uniform distributions and NanoAOD's reduced mantissas, small
  ints, rare-true trigger bits) and 10 collections (vectors of records of 6-10
  members) with Poisson multiplicities.
* ``aod``: wide and nested: 420 scalars, 20 vectors, 100 collections of
  records holding 10 scalars and 2 vectors of floats; 540 top-level fields,
  2,060 fields, 1,960 columns.
* ``cmsaod``: CMS AOD-like, 552 top-level fields (collections of reco-like records with
  vectors inside, value maps, associations, flat scalars; ``bench/cmsaod.py``), written with
  LZMA level 4: the memory case of issue 15.
* ``run2012``: the real CMS open-data dimuon file in ``tests/data``
  (``Run2012BC_DoubleMuParked_Muons_1000evts``), its 1,000 entries repeated.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil

import numpy as np

# Bump when a generator changes: cached inputs of older versions are not reused.
GENERATOR_VERSION = 1

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN2012_FILE = os.path.join(REPO, "tests", "data", "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")

DTYPES = {
    "b": np.uint8,
    "i1": np.int8,
    "u1": np.uint8,
    "i2": np.int16,
    "u2": np.uint16,
    "i4": np.int32,
    "u4": np.uint32,
    "i8": np.int64,
    "u8": np.uint64,
    "f4": np.float32,
    "f8": np.float64,
}

# entries per workload: full run, --quick, and the tiny smoke test
SIZES = {
    "nanoaod": {"full": 200_000, "quick": 4_000, "tiny": 500},
    "aod": {"full": 5_000, "quick": 300, "tiny": 40},
    "run2012": {"full": 1_000_000, "quick": 20_000, "tiny": 2_000},
    "cmsaod": {"full": 500, "quick": 40, "tiny": 4},
}
WORKLOADS = tuple(SIZES)

# three top-level fields per workload for the "read3" case (run2012 has two)
SELECT3 = {
    "nanoaod": ["MET_pt", "MET_phi", "PV_npvs"],
    "aod": ["aux000", "aux001", "aux002"],
    "run2012": ["nMuon", "Muon"],
    "cmsaod": ["muons", "ak4PFJets", "pfMet"],
}
# the "read3rec" case: sub-fields of record collections (issue 15: ``MET.pt``, ``Muon.pt``, ``Jet.pt``;
# MET is flat in the nanoaod workload), over the first RECORDS_ENTRIES entries
SELECT3_RECORDS = {"nanoaod": ["MET_pt", "Muon.pt", "Jet.pt"]}
RECORDS_ENTRIES = 100_000
# the "wide" case: open the RNTuple with > 2,000 fields and read this column
WIDE_WORKLOAD, WIDE_FIELD = "aod", "aux000"


class _Writer:
    """Writes the arrays of one input directory and builds its manifest."""

    def __init__(self, out: str, entries: int) -> None:
        self.out = out
        self.entries = entries
        self.count = 0
        self.raw_bytes = 0

    def _file(self, array: np.ndarray) -> str:
        self.count += 1
        name = f"c{self.count:05d}.bin"
        np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tofile(
            os.path.join(self.out, name)
        )
        self.raw_bytes += array.nbytes
        return name

    def scalar(self, dtype: str, values: np.ndarray) -> dict:
        arr = np.asarray(values).astype(DTYPES[dtype], copy=False)
        return {"kind": "scalar", "dtype": dtype, "file": self._file(arr)}

    def vector(self, counts: np.ndarray, item: dict) -> dict:
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return {"kind": "vector", "offsets": self._file(offsets), "item": item}

    @staticmethod
    def record(cls: str, members: list[tuple[str, dict]]) -> dict:
        return {"kind": "record", "class": cls, "members": [{"name": n, "type": t} for n, t in members]}


def _truncate(x: np.ndarray, bits: int) -> np.ndarray:
    """float32 values rounded to ``bits`` mantissa bits, as NanoAOD stores them."""
    x = np.asarray(x, dtype=np.float32)
    drop = 23 - bits
    if drop <= 0:
        return x
    u = x.view(np.uint32).astype(np.uint64)
    u = (u + (1 << (drop - 1))) & ~np.uint64((1 << drop) - 1)
    return (u & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


# ---------------------------------------------------------------------------
# nanoaod-like


def _float_kind(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "pt":
        return _truncate(rng.exponential(25.0, n) + 5.0, 10)
    if kind == "eta":
        return _truncate(np.clip(rng.normal(0.0, 1.4, n), -4.7, 4.7), 12)
    if kind == "phi":
        return _truncate(rng.uniform(-math.pi, math.pi, n), 12)
    if kind == "mass":
        return _truncate(rng.exponential(6.0, n), 10)
    if kind == "iso":
        return _truncate(rng.exponential(0.15, n), 8)
    if kind == "disp":
        return _truncate(rng.normal(0.0, 0.02, n), 10)
    if kind == "unit":
        return _truncate(rng.beta(0.5, 2.0, n), 10)
    if kind == "weight":
        return _truncate(rng.normal(1.0, 0.05, n), 12)
    if kind == "gauss":
        return rng.normal(20.0, 6.0, n).astype(np.float32)
    if kind == "full":
        return rng.exponential(300.0, n).astype(np.float32)
    raise KeyError(kind)


NANO_COLLECTIONS = [
    # name, Poisson mean, members (name, dtype, distribution)
    (
        "Muon",
        1.2,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("charge", "i4", "charge"),
            ("pdgId", "i4", "pdg13"),
            ("pfRelIso04_all", "f4", "iso"),
            ("tightId", "b", 0.7),
            ("dxy", "f4", "disp"),
        ],
    ),
    (
        "Electron",
        1.0,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("charge", "i4", "charge"),
            ("cutBased", "i4", 5),
            ("pfRelIso03_all", "f4", "iso"),
            ("mvaIso_WP90", "b", 0.6),
            ("deltaEtaSC", "f4", "disp"),
        ],
    ),
    (
        "Jet",
        5.5,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("btagDeepFlavB", "f4", "unit"),
            ("jetId", "i4", 7),
            ("puId", "i4", 8),
            ("nConstituents", "u1", 40),
            ("hadronFlavour", "i4", 6),
            ("area", "f4", "weight"),
        ],
    ),
    (
        "Photon",
        0.8,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("cutBased", "i4", 4),
            ("pfRelIso03_all", "f4", "iso"),
            ("electronVeto", "b", 0.9),
        ],
    ),
    (
        "Tau",
        0.7,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("charge", "i4", "charge"),
            ("decayMode", "i4", 12),
            ("idDeepTauVSjet", "u1", 256),
        ],
    ),
    (
        "GenPart",
        18.0,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("pdgId", "i4", "pdg"),
            ("status", "i4", 3),
            ("statusFlags", "i4", 1 << 15),
            ("genPartIdxMother", "i4", "mother"),
        ],
    ),
    (
        "FatJet",
        0.6,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("msoftdrop", "f4", "mass"),
            ("tau1", "f4", "unit"),
            ("tau2", "f4", "unit"),
            ("tau3", "f4", "unit"),
            ("jetId", "i4", 7),
        ],
    ),
    (
        "SV",
        1.8,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("mass", "f4", "mass"),
            ("dlen", "f4", "iso"),
            ("dlenSig", "f4", "mass"),
            ("chi2", "f4", "unit"),
        ],
    ),
    (
        "TrigObj",
        6.0,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("id", "i4", "trig"),
            ("filterBits", "i4", 1 << 12),
            ("l1pt", "f4", "pt"),
        ],
    ),
    (
        "IsoTrack",
        1.0,
        [
            ("pt", "f4", "pt"),
            ("eta", "f4", "eta"),
            ("phi", "f4", "phi"),
            ("dxy", "f4", "disp"),
            ("dz", "f4", "disp"),
            ("pdgId", "i4", "pdg"),
            ("isPFcand", "b", 0.8),
        ],
    ),
]


def _member(rng: np.random.Generator, dtype: str, dist, n: int, counts: np.ndarray) -> np.ndarray:
    if dtype == "b":
        return rng.random(n) < dist
    if dtype == "f4":
        return _float_kind(rng, dist, n)
    if dist == "charge":
        return np.where(rng.random(n) < 0.5, -1, 1)
    if dist == "pdg13":
        return np.where(rng.random(n) < 0.5, -13, 13)
    if dist == "pdg":
        return rng.choice(np.array([1, -1, 2, -2, 11, -11, 13, -13, 21, 22, 211, -211, 111, 130, 321]), n)
    if dist == "trig":
        return rng.choice(np.array([1, 2, 3, 6, 11, 13, 14, 15, 22]), n)
    if dist == "mother":
        # index of an earlier particle of the same event, -1 for the first ones
        pos = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
        return np.where(pos > 1, (rng.random(n) * np.maximum(pos, 1)).astype(np.int64), -1)
    return rng.integers(0, dist, n)


def _nanoaod(w: _Writer, rng: np.random.Generator) -> list[dict]:
    n = w.entries
    fields: list[dict] = []

    def add(name: str, t: dict) -> None:
        fields.append({"name": name, "type": t})

    add("run", w.scalar("u4", 1 + np.arange(n) // 150_000))
    add("luminosityBlock", w.scalar("u4", 1 + np.arange(n) // 400))
    add("event", w.scalar("u8", 1_000_000 + np.cumsum(rng.integers(1, 40, n))))
    float_scalars = [
        ("MET_pt", "pt"),
        ("MET_phi", "phi"),
        ("MET_sumEt", "full"),
        ("MET_significance", "mass"),
        ("PuppiMET_pt", "pt"),
        ("PuppiMET_phi", "phi"),
        ("RawMET_pt", "pt"),
        ("RawMET_phi", "phi"),
        ("CaloMET_pt", "pt"),
        ("CaloMET_phi", "phi"),
        ("TkMET_pt", "pt"),
        ("TkMET_phi", "phi"),
        ("ChsMET_pt", "pt"),
        ("ChsMET_phi", "phi"),
        ("GenMET_pt", "pt"),
        ("GenMET_phi", "phi"),
        ("fixedGridRhoFastjetAll", "gauss"),
        ("fixedGridRhoFastjetCentral", "gauss"),
        ("fixedGridRhoFastjetCentralCalo", "gauss"),
        ("PV_x", "disp"),
        ("PV_y", "disp"),
        ("PV_z", "eta"),
        ("PV_chi2", "unit"),
        ("PV_ndof", "full"),
        ("PV_score", "full"),
        ("Pileup_nTrueInt", "gauss"),
        ("genWeight", "weight"),
        ("LHE_HT", "full"),
        ("LHE_Vpt", "pt"),
        ("Generator_x1", "unit"),
        ("Generator_x2", "unit"),
        ("Generator_scalePDF", "pt"),
        ("btagWeight_DeepCSVB", "weight"),
        ("L1PreFiringWeight_Nom", "weight"),
        ("puWeight", "weight"),
    ]
    for name, dist in float_scalars:
        add(name, w.scalar("f4", _float_kind(rng, dist, n)))
    add("Generator_weight", w.scalar("f8", rng.normal(1.0, 0.3, n)))
    add("LHEWeight_originalXWGTUP", w.scalar("f8", rng.exponential(1.0, n)))
    add("PV_npvs", w.scalar("i4", rng.poisson(30, n)))
    add("PV_npvsGood", w.scalar("i4", rng.poisson(25, n)))
    add("Pileup_nPU", w.scalar("i4", rng.poisson(30, n)))
    add("Generator_id1", w.scalar("i4", rng.choice(np.array([1, -1, 2, -2, 21]), n)))
    add("Generator_id2", w.scalar("i4", rng.choice(np.array([1, -1, 2, -2, 21]), n)))
    add("LHE_Njets", w.scalar("u1", rng.poisson(1.2, n)))
    add("LHE_Nb", w.scalar("u1", rng.poisson(0.2, n)))
    add("SoftActivityJetNjets5", w.scalar("i2", rng.poisson(3, n)))
    add("bunchCrossing", w.scalar("u4", rng.integers(1, 3564, n)))
    add("orbitNumber", w.scalar("u8", 10**8 + np.arange(n) * 3))
    # trigger and filter bits: most rarely fire, filters mostly pass
    n_bools = 100 - len(fields)
    probs = np.exp(np.linspace(math.log(1e-4), math.log(0.4), n_bools))
    for i, p in enumerate(probs):
        if i % 5 == 4:
            add(f"Flag_filter{i:02d}", w.scalar("b", rng.random(n) > p))
        else:
            add(f"HLT_path{i:02d}", w.scalar("b", rng.random(n) < p))
    for cname, mean, members in NANO_COLLECTIONS:
        counts = rng.poisson(mean, n)
        total = int(counts.sum())
        mtypes = [(m, w.scalar(dt, _member(rng, dt, dist, total, counts))) for m, dt, dist in members]
        add(cname, w.vector(counts, w.record(f"Nano{cname}", mtypes)))
    return fields


# ---------------------------------------------------------------------------
# aod-like

_AOD_SCALAR_CYCLE = ["f4", "f4", "i4", "f4", "b", "f4", "u8", "f4", "i4", "b", "f8", "f4", "u4", "f4", "i2", "b"]
_AOD_COLLECTION_MEANS = [0.3, 0.7, 1.5, 3.0, 6.0]


def _aod_scalar(rng: np.random.Generator, dtype: str, i: int, n: int) -> np.ndarray:
    if dtype == "f4":
        return _float_kind(rng, ["pt", "eta", "phi", "mass", "iso", "unit", "weight", "gauss"][i % 8], n)
    if dtype == "f8":
        return rng.normal(0.0, 1.0 + i % 7, n)
    if dtype == "b":
        return rng.random(n) < 0.02 * (1 + i % 10)
    if dtype == "u8":
        return rng.integers(0, 1 << (8 + i % 40), n, dtype=np.uint64)
    return rng.integers(-(1 << (i % 12)), 1 << (i % 14 + 1), n)


def _aod(w: _Writer, rng: np.random.Generator) -> list[dict]:
    n = w.entries
    fields: list[dict] = []
    for i in range(420):
        dt = _AOD_SCALAR_CYCLE[i % len(_AOD_SCALAR_CYCLE)]
        fields.append({"name": f"aux{i:03d}", "type": w.scalar(dt, _aod_scalar(rng, dt, i, n))})
    for i in range(20):
        counts = rng.poisson(3.0, n)
        total = int(counts.sum())
        dt = "f4" if i % 2 == 0 else "i4"
        item = w.scalar(dt, _aod_scalar(rng, dt, i, total))
        fields.append({"name": f"vec{i:02d}", "type": w.vector(counts, item)})
    for c in range(100):
        counts = rng.poisson(_AOD_COLLECTION_MEANS[c % len(_AOD_COLLECTION_MEANS)], n)
        total = int(counts.sum())
        members = []
        for m in range(10):
            dt = _AOD_SCALAR_CYCLE[(c + m) % len(_AOD_SCALAR_CYCLE)]
            members.append((f"m{m}", w.scalar(dt, _aod_scalar(rng, dt, c + m, total))))
        for v in range(2):
            inner = rng.poisson(3.0, total)
            values = w.scalar("f4", _float_kind(rng, ["pt", "eta"][v], int(inner.sum())))
            members.append((f"hits{v}", w.vector(inner, values)))
        fields.append({"name": f"coll{c:03d}", "type": w.vector(counts, w.record(f"AodItem{c:03d}", members))})
    return fields


# ---------------------------------------------------------------------------
# run2012: the real file repeated


def _run2012(w: _Writer, rng: np.random.Generator) -> list[dict]:
    import rntuple  # our reader; the values are checked against ROOT by the reference tests

    with rntuple.open(RUN2012_FILE) as f:
        table = f["Events"].arrays(["nMuon", "_collection0"], library="pa")
    n_muon = table.column("nMuon").to_numpy()
    coll = table.column("_collection0").combine_chunks()
    offsets = coll.offsets.to_numpy().astype(np.int64)
    counts = np.diff(offsets)
    items = coll.values
    base = {m: items.field(f"Muon_{m}").to_numpy() for m in ("pt", "eta", "phi", "mass", "charge")}
    reps = -(-w.entries // len(n_muon))
    take = w.entries

    def tile(a: np.ndarray, stop: int) -> np.ndarray:
        return np.tile(a, reps)[:stop]

    all_counts = tile(counts, take)
    total = int(all_counts.sum())
    members = [
        (m, w.scalar("i4" if m == "charge" else "f4", tile(base[m][offsets[0] : offsets[-1]], total)))
        for m in ("pt", "eta", "phi", "mass", "charge")
    ]
    return [
        {"name": "nMuon", "type": w.scalar("u4", tile(n_muon, take))},
        {"name": "Muon", "type": w.vector(all_counts, w.record("Run2012Muon", members))},
    ]


def _cmsaod(w: _Writer, rng: np.random.Generator) -> list[dict]:
    import cmsaod

    return cmsaod.generate(w, rng, _float_kind)


_GENERATORS = {
    "nanoaod": (_nanoaod, 20240501),
    "aod": (_aod, 20240502),
    "run2012": (_run2012, 20240503),
    "cmsaod": (_cmsaod, 20240504),
}


def _source_hash() -> str:
    """Hash of the code and constants that make the inputs (other edits of this file keep the cache)."""
    import inspect

    h = hashlib.sha256()
    for obj in (_Writer, _truncate, _float_kind, _member, _nanoaod, _aod_scalar, _aod, _run2012):
        h.update(inspect.getsource(obj).encode())
    h.update(repr((NANO_COLLECTIONS, _AOD_SCALAR_CYCLE, _AOD_COLLECTION_MEANS, sorted(DTYPES))).encode())
    return h.hexdigest()[:12]


def input_dir(cache: str, workload: str, entries: int) -> str:
    digest = _source_hash()
    if workload == "cmsaod":  # its own module: its edits leave the other inputs' cache alone
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmsaod.py"), "rb") as fh:
            digest = hashlib.sha256(digest.encode() + fh.read()).hexdigest()[:12]
    return os.path.join(cache, "inputs", f"{workload}-{entries}-g{GENERATOR_VERSION}-{digest}")


def generate(cache: str, workload: str, entries: int) -> str:
    """The input directory of ``workload`` with ``entries`` entries (generated once, cached)."""
    out = input_dir(cache, workload, entries)
    if os.path.exists(os.path.join(out, "manifest.json")):
        return out
    tmp = f"{out}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    gen, seed = _GENERATORS[workload]
    w = _Writer(tmp, entries)
    fields = gen(w, np.random.default_rng(seed))
    manifest = {
        "format": 1,
        "workload": workload,
        "ntuple": "Events",
        "entries": entries,
        "raw_bytes": w.raw_bytes,
        "fields": fields,
    }
    with open(os.path.join(tmp, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
    if os.path.exists(os.path.join(out, "manifest.json")):  # made by a concurrent run meanwhile
        shutil.rmtree(tmp)
    else:
        shutil.rmtree(out, ignore_errors=True)
        os.rename(tmp, out)
    return out


def load_manifest(directory: str) -> dict:
    with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as fh:
        return json.load(fh)


def iter_types(t: dict, path: str):
    """(path, type) of every node below a field (checksum paths: ``a.b``, ``a[]``)."""
    yield path, t
    if t["kind"] == "vector":
        yield from iter_types(t["item"], path + "[]")
    elif t["kind"] == "record":
        for m in t["members"]:
            yield from iter_types(m["type"], f"{path}.{m['name']}")


def describe(manifest: dict) -> dict:
    """Counts of a workload: top-level fields, fields, columns, raw size."""
    n_fields = n_columns = 0
    for f in manifest["fields"]:
        for _, t in iter_types(f["type"], f["name"]):
            if t["kind"] == "scalar":
                n_fields += 1
                n_columns += 1
            elif t["kind"] == "vector":
                n_fields += 1
                n_columns += 1
            else:
                n_fields += 1
    return {
        "entries": manifest["entries"],
        "top_level_fields": len(manifest["fields"]),
        "fields": n_fields,
        "columns": n_columns,
        "raw_bytes": manifest["raw_bytes"],
    }
