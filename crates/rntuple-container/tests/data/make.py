#!/usr/bin/env python3
"""Generates the container test files and the golden listings the tests compare against.

Run with a Python that has ROOT (>= 6.34, PyPI package `root`) and uproot:

    python crates/rntuple-container/tests/data/make.py

Outputs, next to this script:

* multikey.root -- written by ROOT's stand-alone RNTuple writer
  (RNTupleWriter::Recreate), uncompressed, max key size 4096 bytes, with a
  10 kB field description so that the header envelope and every page are
  split over several RBlob keys.
* subdir.root -- a TFile written through TFile/TDirectory with RNTuples at
  "top", "dir/Events" and "dir/sub/Events" (zstd, max key size 8192, pages
  larger than that), and a TNamed "dir/note" with cycles 1 and 2.
* container.golden -- for these files and for every .root file in the
  repository's tests/data/ (or $ROOT_WRITTEN_DIR): every key (from uproot, in key-list order), every
  RNTuple anchor (from uproot) and page locators (from ROOT's descriptor).

Golden line formats (space separated):

    file <file name>
    key <path> <class> <cycle> <seek_key> <nbytes> <obj_len> <key_len>
    anchor <path> <epoch> <major> <minor> <patch> <seek_header> <nbytes_header> <len_header>
           <seek_footer> <nbytes_footer> <len_footer> <max_key_size>   (one line)
    page <path> <offset> <nbytes_on_storage> <has_checksum 0|1>
"""

import os
import sys

import ROOT
import uproot

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository's shared test files; override with ROOT_WRITTEN_DIR.
REPO_DATA = os.environ.get(
    "ROOT_WRITTEN_DIR", os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "tests", "data"))
)
MAX_PAGES_PER_NTUPLE = 16

ROOT.gInterpreter.Declare(
    r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TFile.h>
#include <TNamed.h>
#include <random>

namespace rntuple_container_testdata {

// Fills `n` entries of a vector<double> "v" (random values, i % 10 elements)
// and a float "x".
void Fill(ROOT::RNTupleWriter &w, int n, unsigned seed)
{
   std::mt19937 rng(seed);
   std::uniform_real_distribution<double> u;
   auto &entry = w.GetModel().GetDefaultEntry();
   auto v = entry.GetPtr<std::vector<double>>("v");
   auto x = entry.GetPtr<float>("x");
   for (int i = 0; i < n; ++i) {
      *x = i;
      v->resize(i % 10);
      for (auto &d : *v)
         d = u(rng);
      w.Fill();
   }
}

std::unique_ptr<ROOT::RNTupleModel> Model(std::size_t descriptionLen)
{
   auto model = ROOT::RNTupleModel::Create();
   auto f = std::make_unique<ROOT::RField<std::vector<double>>>("v");
   f->SetDescription(std::string(descriptionLen, 'd'));
   model->AddField(std::move(f));
   model->MakeField<float>("x");
   return model;
}

void MakeMultiKey(const char *path)
{
   ROOT::RNTupleWriteOptions opts;
   opts.SetCompression(0);
   ROOT::Internal::RNTupleWriteOptionsManip::SetMaxKeySize(opts, 4096);
   opts.SetInitialUnzippedPageSize(16384);
   opts.SetMaxUnzippedPageSize(16384);
   auto w = ROOT::RNTupleWriter::Recreate(Model(10000), "ntpl", path, opts);
   Fill(*w, 2000, 42);
}

void MakeSubdir(const char *path)
{
   auto file = std::unique_ptr<TFile>(TFile::Open(path, "RECREATE"));
   auto dir = file->mkdir("dir");
   auto sub = dir->mkdir("sub");
   ROOT::RNTupleWriteOptions opts;
   ROOT::Internal::RNTupleWriteOptionsManip::SetMaxKeySize(opts, 8192);
   opts.SetInitialUnzippedPageSize(20000);
   opts.SetMaxUnzippedPageSize(20000);
   {
      auto w = ROOT::RNTupleWriter::Append(Model(0), "top", *file, opts);
      Fill(*w, 100, 1);
   }
   {
      auto w = ROOT::RNTupleWriter::Append(Model(0), "Events", *dir, opts);
      Fill(*w, 300, 2);
   }
   {
      auto w = ROOT::RNTupleWriter::Append(Model(0), "Events", *sub, opts);
      Fill(*w, 1500, 3);
   }
   TNamed note("note", "first");
   dir->WriteObject(&note, "note");
   note.SetTitle("second");
   dir->WriteObject(&note, "note");
   file->Close();
}

} // namespace rntuple_container_testdata
"""
)


def walk_keys(directory, prefix=""):
    """Yields (path, key) for every key in key-list order, descending into subdirectories."""
    for key in directory._keys:
        path = prefix + key.fName
        yield path, key
        if key.fClassName in ("TDirectory", "TDirectoryFile"):
            yield from walk_keys(key.get(), path + "/")


def page_locators(path, ntuple_path):
    reader = ROOT.RNTupleReader.Open(ntuple_path, path)
    desc = reader.GetDescriptor()
    out = []
    for cluster in desc.GetClusterIterable():
        for column in desc.GetColumnIterable():
            cid = column.GetPhysicalId()
            if not cluster.ContainsColumn(cid):
                continue
            try:
                page_range = cluster.GetPageRange(cid)
            except Exception:
                continue  # suppressed column representation: no pages
            for info in page_range.GetPageInfos():
                loc = info.GetLocator()
                if loc.GetType() != ROOT.RNTupleLocator.kTypeFile:
                    continue  # e.g. the zero page of deferred columns
                out.append((loc.GetPosition["std::uint64_t"](), loc.GetNBytesOnStorage(), int(info.HasChecksum())))
    return sorted(set(out))


def golden(path, lines):
    lines.append(f"file {os.path.basename(path)}")
    with uproot.open(path) as f:
        ntuples = []
        for kpath, key in walk_keys(f):
            lines.append(
                f"key {kpath} {key.fClassName} {key.fCycle} {key.fSeekKey} {key.fNbytes} {key.fObjlen} {key.fKeylen}"
            )
            if key.fClassName == "ROOT::RNTuple":
                a = f[f"{kpath};{key.fCycle}"]
                m = [
                    a.member(n)
                    for n in (
                        "fVersionEpoch",
                        "fVersionMajor",
                        "fVersionMinor",
                        "fVersionPatch",
                        "fSeekHeader",
                        "fNBytesHeader",
                        "fLenHeader",
                        "fSeekFooter",
                        "fNBytesFooter",
                        "fLenFooter",
                        "fMaxKeySize",
                    )
                ]
                lines.append(f"anchor {kpath} " + " ".join(str(v) for v in m))
                ntuples.append(kpath)
    for kpath in ntuples:
        pages = page_locators(path, kpath)
        if os.path.basename(path) not in ("multikey.root", "subdir.root"):
            pages = pages[:MAX_PAGES_PER_NTUPLE]
        for offset, nbytes, ck in pages:
            lines.append(f"page {kpath} {offset} {nbytes} {ck}")


def main():
    ROOT.rntuple_container_testdata.MakeMultiKey(os.path.join(HERE, "multikey.root"))
    ROOT.rntuple_container_testdata.MakeSubdir(os.path.join(HERE, "subdir.root"))
    files = [os.path.join(HERE, "multikey.root"), os.path.join(HERE, "subdir.root")]
    if os.path.isdir(REPO_DATA):
        files += sorted(os.path.join(REPO_DATA, n) for n in os.listdir(REPO_DATA) if n.endswith(".root"))
    else:
        print(f"warning: {REPO_DATA} missing; golden covers the generated files only", file=sys.stderr)
    lines = []
    for path in files:
        golden(path, lines)
    with open(os.path.join(HERE, "container.golden"), "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
