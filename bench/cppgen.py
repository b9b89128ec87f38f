"""C++ competitors of the benchmark: ROOT's RNTuple and TTree writers and the
TTree reader are generated per workload (the classes of its records with a
rootcling dictionary, the fill and checksum code of its fields); ROOT's
RNTuple reader (``cpp/rntuple_read.cxx``) reads any RNTuple. Everything is
compiled against ROOT from PyPI once and cached under
``$RNTUPLE_CACHE/bench/build/<hash of the sources>``.

A generated program loads the neutral input (raw arrays) before its timer
starts, then fills entry by entry, as ROOT's row-wise APIs require:

    root_<workload> write-rntuple --input DIR --output F [--compression 505] [--threads 1]
    root_<workload> write-ttree   --input DIR --output F [--compression 505] [--threads 1]
    root_<workload> read-ttree    --file F [--fields a,b] [--start A] [--stop B] [--threads 1]
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CPP = os.path.join(HERE, "cpp")

CPP_TYPES = {
    "b": "bool",
    "i1": "std::int8_t",
    "u1": "std::uint8_t",
    "i2": "std::int16_t",
    "u2": "std::uint16_t",
    "i4": "std::int32_t",
    "u4": "std::uint32_t",
    "i8": "std::int64_t",
    "u8": "std::uint64_t",
    "f4": "float",
    "f8": "double",
}
# the type of the raw input array (bools are bytes)
RAW_TYPES = {**CPP_TYPES, "b": "std::uint8_t"}


def root_paths() -> tuple[str, str, str]:
    """(include dir, lib dir, bin dir) of ROOT installed from PyPI, found from ``import ROOT``'s package
    directory without importing it (root-config may point at a mock prefix)."""
    import importlib.util

    spec = importlib.util.find_spec("ROOT")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("ROOT (PyPI package 'root') is not installed in this Python")
    base = list(spec.submodule_search_locations)[0]
    return os.path.join(base, "include"), os.path.join(base, "lib"), os.path.join(base, "bin")


def cpp_type(t: dict) -> str:
    if t["kind"] == "scalar":
        return CPP_TYPES[t["dtype"]]
    if t["kind"] == "vector":
        return f"std::vector<{cpp_type(t['item'])}>"
    return t["class"]


class _Gen:
    def __init__(self, manifest: dict) -> None:
        self.m = manifest
        self.arrays: list[str] = []  # declarations of the raw arrays
        self.loads: list[str] = []  # statements loading them
        self.classes: list[str] = []  # struct definitions in dependency order
        self.class_names: list[str] = []
        self.ids: dict[int, str] = {}
        self.paths: list[str] = []  # checksum paths, index = Sum slot

    # -- raw arrays ---------------------------------------------------------

    def _array(self, t: dict, count: str, key: str) -> str:
        name = f"a{len(self.arrays)}"
        if key == "offsets":
            ctype, file = "std::int64_t", t["offsets"]
        else:
            ctype, file = RAW_TYPES[t["dtype"]], t["file"]
        self.arrays.append(f"static std::vector<{ctype}> {name};")
        self.loads.append(f'{name} = bench::LoadArray<{ctype}>(dir + "/{file}", {count});')
        return name

    def _register(self, t: dict, count: str) -> None:
        """Assigns raw arrays to every node (pre-order); `count` is a C++ expression."""
        if t["kind"] == "scalar":
            t["_a"] = self._array(t, count, "values")
        elif t["kind"] == "vector":
            t["_o"] = self._array(t, f"({count}) + 1", "offsets")
            self._register(t["item"], f"static_cast<std::size_t>({t['_o']}.back())")
        else:
            for mem in t["members"]:
                self._register(mem["type"], count)
            if t["class"] not in self.class_names:
                body = "".join(f"   {cpp_type(mem['type'])} {mem['name']}{{}};\n" for mem in t["members"])
                self.classes.append(f"struct {t['class']} {{\n{body}}};\n")
                self.class_names.append(t["class"])

    # -- fill: raw arrays -> the value of one entry ---------------------------

    def _fill(self, target: str, t: dict, idx: str, depth: int) -> str:
        if t["kind"] == "scalar":
            conv = " != 0" if t["dtype"] == "b" else ""
            return f"{target} = {t['_a']}[{idx}]{conv};\n"
        if t["kind"] == "vector":
            o, d = t["_o"], depth
            item = t["item"]
            if item["kind"] == "scalar":
                a = item["_a"]
                return f"{target}.assign({a}.begin() + {o}[{idx}], {a}.begin() + {o}[{idx} + 1]);\n"
            inner = self._fill(f"v{d}[k{d} - b{d}]", item, f"k{d}", d + 1)
            return (
                f"{{ const std::int64_t b{d} = {o}[{idx}], e{d} = {o}[{idx} + 1]; auto &v{d} = {target};\n"
                f"  v{d}.resize(e{d} - b{d});\n"
                f"  for (std::int64_t k{d} = b{d}; k{d} < e{d}; ++k{d}) {{\n{inner}  }} }}\n"
            )
        return "".join(self._fill(f"{target}.{mem['name']}", mem["type"], idx, depth) for mem in t["members"])

    # -- checksum of one entry's value -------------------------------------

    def _slot(self, path: str) -> int:
        self.paths.append(path)
        return len(self.paths) - 1

    def _sum(self, expr: str, t: dict, path: str, depth: int) -> str:
        if t["kind"] == "scalar":
            return f"sums[{self._slot(path)}].Add(bench::Bits({expr}));\n"
        if t["kind"] == "vector":
            d = depth
            slot = self._slot(path)
            inner = self._sum(f"x{d}", t["item"], path + "[]", d + 1)
            return (
                f"{{ const auto &v{d} = {expr}; sums[{slot}].Add(v{d}.size());\n"
                f"  for (auto &&x{d} : v{d}) {{\n{inner}  }} }}\n"
            )
        return "".join(
            self._sum(f"{expr}.{mem['name']}", mem["type"], f"{path}.{mem['name']}", depth) for mem in t["members"]
        )

    # -- the program ---------------------------------------------------------

    def header(self) -> str:
        return (
            "// Generated by bench/cppgen.py: the record classes of one benchmark workload.\n"
            "#ifndef RNTUPLE_BENCH_TYPES_HXX\n#define RNTUPLE_BENCH_TYPES_HXX\n"
            "#include <cstdint>\n#include <vector>\n\n" + "\n".join(self.classes) + "#endif\n"
        )

    def linkdef(self) -> str:
        lines = [f"#pragma link C++ class {c}+;\n#pragma link C++ class std::vector<{c}>+;" for c in self.class_names]
        return "#ifdef __CLING__\n" + "\n".join(lines) + "\n#endif\n"

    def main(self) -> str:
        fields = self.m["fields"]
        n = "nEntries"
        for f in fields:
            self._register(f["type"], n)
        header = self.header()
        var_decls = "".join(f"   {cpp_type(f['type'])} f{i}{{}};\n" for i, f in enumerate(fields))
        # pointers for TTree's object branches
        ptr_decls = "".join(
            f"   {cpp_type(f['type'])} *p{i} = nullptr;\n"
            for i, f in enumerate(fields)
            if f["type"]["kind"] != "scalar"
        )
        # one function per field: the compiler's time grows faster than linearly with a function's size
        fill_fns = "".join(
            f"static void Fill{i}(std::size_t i)\n{{\n{self._fill(f'vars.f{i}', f['type'], 'i', 0)}}}\n"
            for i, f in enumerate(fields)
        )
        fill = "".join(f"   Fill{i}(i);\n" for i in range(len(fields)))
        sum_fns = []
        slot_ranges = []
        for i, f in enumerate(fields):
            first = len(self.paths)
            body = self._sum(f"vars.f{i}", f["type"], f["name"], 0)
            slot_ranges.append((first, len(self.paths) - first))
            sum_fns.append(f"static void Sum{i}() {{\n{body}}}\n")
        # fields created from type names and bound untyped: the typed templates of a wide schema take
        # minutes to compile, and neither way changes what is written
        make_fields = "".join(
            f'   model->AddField(ROOT::RFieldBase::Create("{f["name"]}", "{cpp_type(f["type"])}").Unwrap());\n'
            for f in fields
        )
        bind = "".join(
            f'   entry->BindRawPtr("{f["name"]}", static_cast<void *>(&vars.f{i}));\n' for i, f in enumerate(fields)
        )
        branches = []
        addresses = []
        for i, f in enumerate(fields):
            if f["type"]["kind"] == "scalar":
                branches.append(f'   tree.Branch("{f["name"]}", &vars.f{i});\n')
                addresses.append(f'      tree->SetBranchAddress("{f["name"]}", &vars.f{i});\n')
            else:
                # object branches end with '.' so that their sub-branches are "name.member"
                branches.append(f"   ptrs.p{i} = &vars.f{i};\n")
                address = f"static_cast<void *>(&ptrs.p{i})"
                branches.append(f'   tree.Branch("{f["name"]}.", "{cpp_type(f["type"])}", {address}, 32000, 99);\n')
                addresses.append(f"      ptrs.p{i} = &vars.f{i};\n")
                # (the top-level branch of a collection is named without the dot, that of a record with it)
                n = f["name"]
                addresses.append(
                    f'      tree->SetBranchAddress(tree->GetBranch("{n}.") ? "{n}." : "{n}", '
                    f"static_cast<void *>(&ptrs.p{i}));\n"
                )
        objects = ", ".join("false" if f["type"]["kind"] == "scalar" else "true" for f in fields)
        names = ", ".join(f'"{f["name"]}"' for f in fields)
        path_list = ", ".join(f'"{p}"' for p in self.paths)
        slots = ", ".join(f"{{{a}, {b}}}" for a, b in slot_ranges)
        sum_table = ", ".join(f"Sum{i}" for i in range(len(fields)))
        return _MAIN.format(
            header=header,
            arrays="\n".join(self.arrays),
            loads="\n   ".join(self.loads),
            var_decls=var_decls,
            ptr_decls=ptr_decls,
            fill=fill,
            fill_fns=fill_fns,
            sum_fns="".join(sum_fns),
            n_paths=max(1, len(self.paths)),
            make_fields=make_fields,
            bind=bind,
            branches="".join(branches),
            addresses="".join(addresses),
            objects=objects,
            names=names,
            path_list=path_list,
            slots=slots,
            sum_table=sum_table,
            n_fields=len(fields),
            ntuple=self.m["ntuple"],
        )


# The generated program; {{ }} are literal braces.
_MAIN = r"""// Generated by bench/cppgen.py from a workload manifest: ROOT's writers
// (RNTuple, TTree) and TTree reader for the benchmark. Do not edit.
#include "bench_common.hxx"
#include "types.hxx"

#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TFile.h>
#include <TROOT.h>
#include <TTree.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

namespace {{

static std::size_t nEntries = 0;
{arrays}

struct Vars {{
{var_decls}}};
struct Ptrs {{
{ptr_decls}}};
static Vars vars;
static Ptrs ptrs;
static bench::Sum sums[{n_paths}];

static void Load(const std::string &dir, std::size_t entries)
{{
   nEntries = entries;
   {loads}
}}

{fill_fns}
static void FillEntry(std::size_t i)
{{
{fill}}}

{sum_fns}
using SumFn = void (*)();
static const SumFn kSums[] = {{{sum_table}}};
static const char *kNames[] = {{{names}}};
static const bool kObjects[] = {{{objects}}};
static const char *kPaths[] = {{{path_list}}};
static const std::pair<int, int> kSlots[] = {{{slots}}};
constexpr int kNFields = {n_fields};

void WriteRNTuple(const std::string &out, int compression)
{{
   auto model = ROOT::RNTupleModel::Create();
{make_fields}   ROOT::RNTupleWriteOptions options;
   options.SetCompression(compression);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "{ntuple}", out, options);
   auto entry = writer->CreateEntry();
{bind}   for (std::size_t i = 0; i < nEntries; ++i) {{
      FillEntry(i);
      writer->Fill(*entry);
   }}
   writer.reset(); // commits the last cluster, the footer and the anchor
}}

void WriteTTree(const std::string &out, int compression)
{{
   TFile file(out.c_str(), "RECREATE", "", compression);
   TTree tree("{ntuple}", "{ntuple}");
{branches}   for (std::size_t i = 0; i < nEntries; ++i) {{
      FillEntry(i);
      tree.Fill();
   }}
   tree.Write();
   file.Close();
}}

}} // namespace

int main(int argc, char **argv)
{{
   try {{
      if (argc < 2)
         throw std::runtime_error("usage: write-rntuple|write-ttree|read-ttree --option value ...");
      const std::string cmd = argv[1];
      bench::Args args(argc, argv, 2);
      const auto threads = args.GetU("threads", 1);
      if (threads > 1)
         ROOT::EnableImplicitMT(threads);
      if (cmd == "write-rntuple" || cmd == "write-ttree") {{
         const auto out = args.Get("output");
         const int compression = static_cast<int>(args.GetU("compression", 505));
         // Warm-up (untimed): ROOT's one-time initialization (interpreter, dictionaries, plugins) happens
         // on first use; an empty file written first keeps it out of the figures, as Python's imports are.
         const std::string warm = out + ".warmup.root";
         if (cmd == "write-rntuple")
            WriteRNTuple(warm, compression);
         else
            WriteTTree(warm, compression);
         std::remove(warm.c_str());
         Load(args.Get("input"), args.GetU("entries", 0));
         const auto rssAfterLoad = bench::RssBytes();
         bench::HeapMark(); // the heap counter's phase of the timed section starts (no-op without it)
         bench::Stopwatch sw;
         if (cmd == "write-rntuple")
            WriteRNTuple(out, compression);
         else
            WriteTTree(out, compression);
         const double wall = sw.Wall(), cpu = sw.Cpu();
         bench::HeapMark();
         std::cout << "{{\"wall\": " << wall << ", \"cpu\": " << cpu << ", \"rss_after_load\": " << rssAfterLoad
                   << ", \"peak_rss_self\": " << bench::PeakRssBytes()
                   << ", \"entries\": " << nEntries << ", \"threads\": " << threads << "}}" << std::endl;
         return 0;
      }}
      if (cmd != "read-ttree")
         throw std::runtime_error("unknown command " + cmd);
      auto wanted = args.GetList("fields");
      std::set<std::string> want(wanted.begin(), wanted.end());
      std::vector<int> selected;
      for (int k = 0; k < kNFields; ++k)
         if (want.empty() || want.count(kNames[k]))
            selected.push_back(k);
      if (selected.size() != (want.empty() ? kNFields : want.size()))
         throw std::runtime_error("some of the --fields are not fields of the workload");
      {{
         // warm-up (untimed): ROOT's one-time initialization, see above
         TFile warm(args.Get("file").c_str(), "READ");
         warm.Get<TTree>("{ntuple}");
      }}
      const auto rssAfterLoad = bench::RssBytes();
      bench::Stopwatch sw;
      TFile file(args.Get("file").c_str(), "READ");
      auto tree = file.Get<TTree>("{ntuple}");
      if (!tree)
         throw std::runtime_error("no TTree {ntuple} in " + args.Get("file"));
      if (!want.empty()) {{
         tree->SetBranchStatus("*", false);
         for (int k : selected) {{
            std::string b = kNames[k];
            tree->SetBranchStatus(b.c_str(), true);
            if (kObjects[k])
               tree->SetBranchStatus((b + ".*").c_str(), true);
         }}
      }}
{addresses}      const double openWall = sw.Wall(), openCpu = sw.Cpu();
      const std::uint64_t n = tree->GetEntries();
      const std::uint64_t start = std::min<std::uint64_t>(args.GetU("start", 0), n);
      const std::uint64_t stop = std::max(start, std::min<std::uint64_t>(args.GetU("stop", n), n));
      for (std::uint64_t i = start; i < stop; ++i) {{
         tree->GetEntry(i);
         for (int k : selected)
            kSums[k]();
      }}
      const double wall = sw.Wall(), cpu = sw.Cpu();
      std::vector<std::pair<std::string, const bench::Sum *>> out;
      for (int k : selected)
         for (int s = kSlots[k].first; s < kSlots[k].first + kSlots[k].second; ++s)
            out.emplace_back(kPaths[s], &sums[s]);
      std::cout << "{{\"wall\": " << wall << ", \"cpu\": " << cpu << ", \"open_wall\": " << openWall
                << ", \"open_cpu\": " << openCpu << ", \"rss_after_load\": " << rssAfterLoad
                   << ", \"peak_rss_self\": " << bench::PeakRssBytes()
                << ", \"entries\": " << (stop - start) << ", \"threads\": " << threads
                << ", \"checksum\": " << bench::ChecksumJson(out) << "}}" << std::endl;
      return 0;
   }} catch (const std::exception &e) {{
      std::cerr << argv[0] << ": " << e.what() << std::endl;
      return 1;
   }}
}}
"""


def generate_sources(manifest: dict) -> dict[str, str]:
    """File name -> text of the generated sources for ``manifest``'s schema."""
    import copy

    g = _Gen(copy.deepcopy(manifest))
    main = g.main()
    return {"types.hxx": g.header(), "linkdef.h": g.linkdef(), "main.cxx": main}


def _schema_key(manifest: dict) -> str:
    """The schema without sizes and files: workloads of any size share their build."""

    def strip(t: dict) -> dict:
        if t["kind"] == "scalar":
            return {"kind": "scalar", "dtype": t["dtype"]}
        if t["kind"] == "vector":
            return {"kind": "vector", "item": strip(t["item"])}
        return {"kind": "record", "class": t["class"], "members": [[m["name"], strip(m["type"])] for m in t["members"]]}

    return repr([(f["name"], strip(f["type"])) for f in manifest["fields"]])


def _run(cmd: list[str], cwd: str, log) -> None:
    log(" ".join(cmd[:3]) + " ...")
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}) in {cwd}: {' '.join(cmd)}\n{proc.stderr[-6000:]}")


def _compiler() -> str:
    return os.environ.get("CXX", "g++")


def _flags() -> tuple[list[str], list[str]]:
    inc, lib, _ = root_paths()
    cflags = ["-std=c++17", "-O2", "-pthread", f"-I{inc}", f"-I{CPP}"]
    libs = [f"-L{lib}", "-lCore", "-lRIO", "-lTree", "-lROOTNTuple", "-lImt", "-lThread", "-ldl", f"-Wl,-rpath,{lib}"]
    return cflags, libs


def _common_hash() -> str:
    h = hashlib.sha256()
    for name in ("bench_common.hxx",):
        with open(os.path.join(CPP, name), "rb") as fh:
            h.update(fh.read())
    h.update(os.path.abspath(root_paths()[1]).encode())
    return h.hexdigest()


def _scratch(out_dir: str) -> str:
    """An empty directory where a build of ``out_dir`` is made (then moved into place by ``_publish``)."""
    tmp = f"{out_dir}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    return tmp


def _publish(tmp: str, out_dir: str) -> None:
    """Moves a finished build into place (unless a concurrent run got there first)."""
    if os.path.exists(out_dir):
        shutil.rmtree(tmp)
    else:
        os.rename(tmp, out_dir)


def build_reader(cache: str, log=lambda s: None) -> str:
    """The compiled generic RNTuple reader (cached)."""
    h = hashlib.sha256(_common_hash().encode())
    src = os.path.join(CPP, "rntuple_read.cxx")
    with open(src, "rb") as fh:
        h.update(fh.read())
    out_dir = os.path.join(cache, "build", "rntuple_read-" + h.hexdigest()[:16])
    exe = os.path.join(out_dir, "rntuple_read")
    if os.path.exists(exe):
        return exe
    tmp = _scratch(out_dir)
    cflags, libs = _flags()
    _run([_compiler(), *cflags, src, "-o", os.path.join(tmp, "rntuple_read"), *libs], tmp, log)
    _publish(tmp, out_dir)
    return exe


def build_workload(cache: str, manifest: dict, log=lambda s: None) -> str:
    """The compiled writers and TTree reader of ``manifest``'s schema (cached)."""
    sources = generate_sources(manifest)
    h = hashlib.sha256((_common_hash() + _schema_key(manifest)).encode())
    for name in sorted(sources):
        h.update(sources[name].encode())
    out_dir = os.path.join(cache, "build", f"root_{manifest['workload']}-" + h.hexdigest()[:16])
    exe = os.path.join(out_dir, "root_bench")
    if os.path.exists(exe):
        return exe
    tmp = _scratch(out_dir)
    for name, text in sources.items():
        with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    _, _, root_bin = root_paths()
    cflags, libs = _flags()
    # the dictionary goes into a shared library next to its .pcm, where ROOT looks for it
    _run(
        [os.path.join(root_bin, "rootcling"), "-f", "dict.cxx", "-inlineInputHeader", "-I.", "types.hxx", "linkdef.h"],
        tmp,
        log,
    )
    _run([_compiler(), *cflags, "-fPIC", "-shared", "-I.", "dict.cxx", "-o", "libbenchdict.so", *libs], tmp, log)
    _run(
        [
            _compiler(),
            *cflags,
            "-I.",
            "main.cxx",
            "-o",
            "root_bench",
            "-L.",
            "-Wl,--no-as-needed",
            "-lbenchdict",
            "-Wl,--as-needed",
            "-Wl,-rpath,$ORIGIN",
            *libs,
        ],
        tmp,
        log,
    )
    # the rpath $ORIGIN keeps the directory relocatable (renamed from .tmp below)
    _publish(tmp, out_dir)
    return exe


if __name__ == "__main__":  # print the generated sources of a workload: cppgen.py INPUT_DIR
    import json

    with open(os.path.join(sys.argv[1], "manifest.json"), encoding="utf-8") as fh:
        for name, text in generate_sources(json.load(fh)).items():
            print(f"==> {name}\n{text}")
