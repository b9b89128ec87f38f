#!/usr/bin/env python3
"""Generate a matrix of RNTuple files with ROOT itself.

Run with the Python that has ROOT (PyPI ``root``), e.g.
``$HOME/.cache/rntuple-ci/venv/bin/python tests/reference/generate.py``.

Files go to ``${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}/generated/v<N>/``
(N = GENERATOR_VERSION; bump it whenever what is written changes).  A
directory whose ``manifest.json`` exists and whose recorded source hash matches
the generator sources is complete and is reused as is (CI keeps the cache
between runs).  ``--big`` additionally writes a > 4 GiB file (once per cache,
recorded in ``big.json``).

manifest.json:
    {"version": N, "source_hash": "...", "root_version": "6.40/00",
     "dump_setup": {"load": [dictionary library], "include": [dir]},
     "files": {"<file name>": {"ntuples": [names], "covers": "...",
                               "ranges": optional entry ranges to compare}}}

``dump_setup`` is what root_dump.py needs (``--load``/``--include``) to read
the generated user classes with the same compiled dictionaries that wrote
them.  The last line printed is the output directory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import warnings

GENERATOR_VERSION = 1

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["generate.py", "generate_helper.cxx", "generated_classes.hxx", "generated_linkdef.h"]

# compression settings (algorithm * 100 + level): none, zlib, lzma, lz4, zstd
COMPRESSIONS = {
    0: "none",
    101: "zlib level 1",
    109: "zlib level 9",
    207: "lzma level 7",
    404: "lz4 level 4",
    505: "zstd level 5 (ROOT's default)",
}

BIG_TARGET_BYTES = (4 << 30) + (96 << 20)  # a bit over 4 GiB of payload


def cache_dir() -> str:
    return os.environ.get("RNTUPLE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "rntuple-ci")


def output_dir() -> str:
    return os.path.join(cache_dir(), "generated", f"v{GENERATOR_VERSION}")


def source_hash() -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        with open(os.path.join(HERE, name), "rb") as fh:
            h.update(name.encode() + b"\0" + fh.read() + b"\0")
    return h.hexdigest()[:16]


def file_plan() -> dict[str, dict]:
    plan = {}
    for comp, desc in COMPRESSIONS.items():
        plan[f"columns_c{comp}.root"] = {
            "ntuples": ["columns"],
            "covers": (
                f"every writable column type, compression {comp} ({desc}): Bit, Byte, Char, Int8, UInt8, "
                "(Split)Int16/UInt16/Int32/UInt32/Int64/UInt64, Real16, (Split)Real32, (Split)Real64, "
                "Real32Trunc (10, 16, 31 bits; 12 bits from double), Real32Quant (1, 8, 20, 32 bits in "
                "[-10, 25]; 16 bits from double in [-1, 1]), Double32_t and double stored as Real32/Real16, "
                "(Split)Index32/(Split)Index64 for std::vector and std::string, nested Index32 collections, "
                "Switch (variants); extreme integers, NaN/inf/-0.0/denormals, odd strings; 1 KiB pages, "
                "~64 KiB clusters plus explicit cluster and cluster-group commits"
            ),
        }
    plan["clusters.root"] = {
        "ntuples": ["clusters"],
        "covers": "many clusters (explicit commits every 97 entries and by size) and several cluster groups; "
        "collections and strings across cluster boundaries; an always-empty collection",
    }
    plan["extension.root"] = {
        "ntuples": ["extension"],
        "covers": "late schema extension: fields added mid-cluster (deferred columns: double, vector, string, "
        "variant (invalid/valueless for the earlier entries), optional, user class, std::array) and at a "
        "cluster boundary; untyped record",
    }
    plan["multirep.root"] = {
        "ntuples": ["multirep"],
        "covers": "alternative column representations switching between clusters (float SplitReal32/Real16/"
        "Real32, double Real64/SplitReal32/SplitReal64, int64 SplitInt64/Int64, vector index SplitIndex64/"
        "Index32/Index64, string (SplitIndex64|Index32)+Char)",
    }
    plan["projections.root"] = {
        "ntuples": ["projections"],
        "covers": "projected fields: scalar alias, RNTupleCardinality<uint32_t> and <uint64_t>, "
        "std::vector<float> and RVec<float> projected out of a vector of user class",
    }
    plan["types.root"] = {
        "ntuples": ["types"],
        "covers": "broad type coverage: all fundamentals incl. std::byte, char and Double32_t; string, vector, "
        "vector<bool>, RVec, std::array, C arrays (1-d and 2-d), bitset<5>/<70>, pair, tuple, variant (incl. "
        "valueless-by-exception and user-class alternatives), optional, unique_ptr, set/unordered_set/"
        "multiset/unordered_multiset/map/unordered_map/multimap/unordered_multimap, atomic, enums (plain, "
        "int16, uint8), user classes with members, base classes and multiple inheritance, nested classes, "
        "empty class, TObject, untyped record, untyped collections, streamer field",
    }
    plan["multi.root"] = {
        "ntuples": ["first", "second", "no_entries", "dir/middle", "dir/sub/inner"],
        "covers": "several RNTuples in one file, RNTuples in subdirectories (dir, dir/sub), an RNTuple "
        "without entries, and a TH1F that is not an RNTuple",
    }
    return plan


BIG_FILE = "big_4gib.root"


def big_plan() -> dict[str, dict]:
    n = BIG_TARGET_BYTES // (1 << 20) + 1
    return {
        BIG_FILE: {
            "ntuples": ["big", "after_4gib"],
            "covers": "file larger than 4 GiB (uncompressed 1 MiB blobs): pages, clusters and a second "
            "RNTuple (anchor, header, footer) beyond 2^32; large TFile header/key format",
            "ranges": {"big": [[0, 3], [n // 2 - 1, n // 2 + 1], [n - 3, n]], "after_4gib": None},
        }
    }


# ---------------------------------------------------------------------------


def _import_root():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT  # noqa: N811
    ROOT.gROOT.SetBatch(True)
    ROOT.gErrorIgnoreLevel = ROOT.kWarning
    return ROOT


def build_dictionary(ROOT, out: str) -> str:
    """Compile dictionaries for generated_classes.hxx with rootcling + g++; returns the library."""
    ddir = os.path.join(out, "dict")
    lib = os.path.join(ddir, "librntgen_dict.so")
    os.makedirs(ddir, exist_ok=True)
    for name in ("generated_classes.hxx", "generated_linkdef.h"):
        shutil.copy(os.path.join(HERE, name), os.path.join(ddir, name))
    rootsys = os.path.dirname(ROOT.__file__)
    rootcling = os.path.join(rootsys, "bin", "rootcling")
    inc = os.path.join(rootsys, "include")
    libdir = os.path.join(rootsys, "lib")
    cxx = os.environ.get("CXX", "g++")
    subprocess.run(
        [rootcling, "-f", "rntgen_dict.cxx", "-I.", "generated_classes.hxx", "generated_linkdef.h"],
        cwd=ddir,
        check=True,
    )
    subprocess.run(
        [
            cxx,
            "-std=c++17",
            "-O1",
            "-fPIC",
            "-shared",
            f"-I{inc}",
            "-I.",
            "rntgen_dict.cxx",
            "-o",
            lib,
            f"-L{libdir}",
            "-lCore",
            "-lRIO",
            f"-Wl,-rpath,{libdir}",
        ],
        cwd=ddir,
        check=True,
    )
    return lib


def load_generator(ROOT, out: str, lib: str):
    ddir = os.path.join(out, "dict")
    ROOT.gInterpreter.AddIncludePath(ddir)
    if ROOT.gSystem.Load(lib) < 0:
        raise RuntimeError("cannot load " + lib)
    with open(os.path.join(HERE, "generate_helper.cxx"), encoding="utf-8") as fh:
        if not ROOT.gInterpreter.Declare(fh.read()):
            raise RuntimeError("failed to compile generate_helper.cxx")
    return ROOT.rntgen_writer


def write_file(W, name: str, path: str):
    if name.startswith("columns_c"):
        comp = int(name[len("columns_c") : -len(".root")])
        W.WriteColumns(path, comp, 2500)
    elif name == "clusters.root":
        W.WriteClusters(path, 2000)
    elif name == "extension.root":
        W.WriteExtension(path)
    elif name == "multirep.root":
        W.WriteMultiRep(path)
    elif name == "projections.root":
        W.WriteProjections(path)
    elif name == "types.root":
        W.WriteTypes(path, 400)
    elif name == "multi.root":
        W.WriteMulti(path)
    elif name == BIG_FILE:
        W.WriteBig(path, BIG_TARGET_BYTES)
    else:
        raise KeyError(name)


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)


def is_complete(out: str, big: bool = False) -> bool:
    man = _read_json(os.path.join(out, "manifest.json"))
    if not man or man.get("source_hash") != source_hash():
        return False
    if not all(os.path.exists(os.path.join(out, f)) for f in man["files"]):
        return False
    if big:
        bj = _read_json(os.path.join(out, "big.json"))
        if not bj or bj.get("source_hash") != source_hash() or not os.path.exists(os.path.join(out, BIG_FILE)):
            return False
    return True


def generate(out: str | None = None, big: bool = False, force: bool = False, log=print) -> str:
    out = out or output_dir()
    if not force and is_complete(out, big):
        return out
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    ROOT = _import_root()
    man = _read_json(os.path.join(out, "manifest.json"))
    lib = os.path.join(out, "dict", "librntgen_dict.so")
    fresh = force or not man or man.get("source_hash") != source_hash() or not os.path.exists(lib)
    if fresh:
        if os.path.exists(os.path.join(out, "manifest.json")):
            os.remove(os.path.join(out, "manifest.json"))
        lib = build_dictionary(ROOT, out)
        log(f"generate: dictionary built in {time.time() - t0:.1f} s")
    W = load_generator(ROOT, out, lib)
    setup = {"load": [lib], "include": [os.path.join(out, "dict")]}
    common = {
        "version": GENERATOR_VERSION,
        "source_hash": source_hash(),
        "root_version": str(ROOT.gROOT.GetVersion()),
        "dump_setup": setup,
    }

    if fresh:
        plan = file_plan()
        for name in plan:
            t = time.time()
            tmp = os.path.join(out, name + ".part")
            write_file(W, name, tmp)
            os.replace(tmp, os.path.join(out, name))
            log(f"generate: {name} in {time.time() - t:.1f} s")
        _write_json(os.path.join(out, "manifest.json"), {**common, "files": plan})

    if big:
        bj = _read_json(os.path.join(out, "big.json"))
        if force or not bj or bj.get("source_hash") != source_hash() or not os.path.exists(os.path.join(out, BIG_FILE)):
            t = time.time()
            tmp = os.path.join(out, BIG_FILE + ".part")
            write_file(W, BIG_FILE, tmp)
            os.replace(tmp, os.path.join(out, BIG_FILE))
            _write_json(os.path.join(out, "big.json"), {**common, "files": big_plan()})
            log(f"generate: {BIG_FILE} in {time.time() - t:.1f} s")
    log(f"generate: done in {time.time() - t0:.1f} s")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--big", action="store_true", help="also write the > 4 GiB file")
    p.add_argument("--force", action="store_true", help="regenerate even if the cache is complete")
    p.add_argument("--out", help="output directory (default: the versioned cache directory)")
    args = p.parse_args(argv)
    out = generate(args.out, big=args.big, force=args.force, log=lambda m: print(m, file=sys.stderr))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
