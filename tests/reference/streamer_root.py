#!/usr/bin/env python3
"""Write ``tests/data/streamer_root640.root`` with ROOT 6.40's ``RStreamerField`` and
``tests/data/streamer_root640.json``, ROOT's ``RNTupleReader`` reading of it.

Run with the Python that has ROOT (PyPI ``root``)::

    ~/.cache/rntuple-ci/venv/bin/python tests/reference/streamer_root.py [OUT_DIR]

The classes (``streamer/streamer_classes.hxx``: ``Hit``, ``Base26``,
``Derived26``, no ``ClassDef``) get a compiled dictionary (rootcling + g++
against the pip ROOT), since ROOT streams members and bases of interpreted
classes only when they have one. Fields: ``hit`` (``Hit``), ``hits``
(``std::vector<Hit>``), ``der`` (``Derived26``: a base with a C array, a
``Hit`` member, a ``std::vector<Hit>`` member that ROOT writes member-wise,
a ``long long``) in the RNTuple ``Events``, and the same values as split
fields in the RNTuple ``Split`` (the shapes streamer fields must read as).
The JSON holds, per entry, the members ROOT's reader gives back (base
``Base26`` under ``:_0``, as ROOT names base subfields).

It also writes ``streamer_gaps_root640.root`` (and ``.json``): a streamer field
``gap`` of class ``Gap26`` (``std::map<int,float>``, ``std::set<int>``,
``std::map<std::string,Hit>``, ``std::set<std::string>``, ``TString`` — one of 300
bytes, the long form —, ``std::vector<std::string>``).
"""

from __future__ import annotations

import os
import sys
import tempfile

from root_dictionary import hit, import_root, load_dictionary, write_entries

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

WRITE = r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TFile.h>
#include "streamer_classes.hxx"
void rntuple_streamer_write(const char *path) {
   auto model = ROOT::RNTupleModel::Create();
   model->AddField(std::make_unique<ROOT::RStreamerField>("hit", "Hit"));
   model->AddField(std::make_unique<ROOT::RStreamerField>("hits", "std::vector<Hit>"));
   model->AddField(std::make_unique<ROOT::RStreamerField>("der", "Derived26"));
   model->AddField(std::make_unique<ROOT::RStreamerField>("tob", "Tagged26"));
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path);
   auto entry = writer->GetModel().CreateBareEntry();
   Hit hit;
   std::vector<Hit> hits;
   Derived26 der;
   Tagged26 tob;
   entry->BindRawPtr("hit", &hit);
   entry->BindRawPtr("hits", &hits);
   entry->BindRawPtr("der", &der);
   entry->BindRawPtr("tob", &tob);
   for (int e = 0; e < 4; ++e) {
      hit.x = e + 0.5f;
      hit.y = -e;
      hit.id = 10 * e;
      hit.samples.assign(e, 1.5f * e);
      hit.label = std::string(e, 'a' + e);
      hits.clear();
      for (int k = 0; k < e; ++k) {
         Hit h = hit;
         h.id += k;
         h.samples.assign(k, 0.25f * k);
         hits.push_back(h);
      }
      der.w = e * 3.25;
      der.c[0] = e;
      der.c[1] = -e;
      der.c[2] = 7;
      der.h = hit;
      der.more = hits;
      der.big = 1LL << (30 + e);
      tob.SetUniqueID(100 + e);
      tob.n = -e;
      tob.v.assign(e, 0.125 * e);
      writer->Fill(*entry);
   }
}
void rntuple_split_write(const char *path) {
   // The same classes and values as split fields (a second RNTuple "Split").
   auto model = ROOT::RNTupleModel::Create();
   auto hit = model->MakeField<Hit>("hit");
   auto hits = model->MakeField<std::vector<Hit>>("hits");
   auto der = model->MakeField<Derived26>("der");
   auto tob = model->MakeField<Tagged26>("tob");
   auto options = ROOT::RNTupleWriteOptions();
   auto file = std::unique_ptr<TFile>(TFile::Open(path, "UPDATE"));
   auto writer = ROOT::RNTupleWriter::Append(std::move(model), "Split", *file, options);
   for (int e = 0; e < 4; ++e) {
      hit->x = e + 0.5f;
      hit->y = -e;
      hit->id = 10 * e;
      hit->samples.assign(e, 1.5f * e);
      hit->label = std::string(e, 'a' + e);
      hits->clear();
      for (int k = 0; k < e; ++k) {
         Hit h = *hit;
         h.id += k;
         h.samples.assign(k, 0.25f * k);
         hits->push_back(h);
      }
      der->w = e * 3.25;
      der->c[0] = e;
      der->c[1] = -e;
      der->c[2] = 7;
      der->h = *hit;
      der->more = *hits;
      der->big = 1LL << (30 + e);
      tob->SetUniqueID(100 + e);
      tob->n = -e;
      tob->v.assign(e, 0.125 * e);
      writer->Fill();
   }
}
void rntuple_gaps_write(const char *path) {
   auto model = ROOT::RNTupleModel::Create();
   model->AddField(std::make_unique<ROOT::RStreamerField>("gap", "Gap26"));
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path);
   auto entry = writer->GetModel().CreateBareEntry();
   Gap26 g;
   entry->BindRawPtr("gap", &g);
   for (int e = 0; e < 4; ++e) {
      g.m.clear();
      g.s.clear();
      g.mh.clear();
      g.ss.clear();
      g.vs.clear();
      for (int k = 0; k < e; ++k) {
         g.m[k * 2] = 0.5f * k;
         g.s.insert(7 - k);
         Hit h;
         h.x = 1.5f * k;
         h.y = -k;
         h.id = k;
         h.samples.assign(k, 0.75f);
         h.label = "h";
         g.mh[std::string(k + 1, 'k')] = h;
         g.ss.insert(std::string(k + 1, 's'));
         g.vs.push_back(std::string(k, 'v'));
      }
      g.t = TString::Format("t%d", e);
      if (e == 3)
         g.t = TString(std::string(300, 'T'));
      writer->Fill(*entry);
   }
}
#include <ROOT/RNTupleReader.hxx>
void rntuple_gaps_read(const char *path, std::vector<Gap26> &gap) {
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   auto entry = reader->CreateEntry();
   for (ROOT::NTupleSize_t i = 0; i < reader->GetNEntries(); ++i) {
      reader->LoadEntry(i, *entry);
      gap.push_back(*entry->GetPtr<Gap26>("gap"));
   }
}
void rntuple_streamer_read(const char *path, std::vector<Hit> &hit, std::vector<std::vector<Hit>> &hits,
                           std::vector<Derived26> &der, std::vector<Tagged26> &tob) {
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   auto entry = reader->CreateEntry();
   for (ROOT::NTupleSize_t i = 0; i < reader->GetNEntries(); ++i) {
      reader->LoadEntry(i, *entry);
      hit.push_back(*entry->GetPtr<Hit>("hit"));
      hits.push_back(*entry->GetPtr<std::vector<Hit>>("hits"));
      der.push_back(*entry->GetPtr<Derived26>("der"));
      tob.push_back(*entry->GetPtr<Tagged26>("tob"));
   }
}
"""


def read_back(ROOT, path: str) -> list[dict]:  # noqa: N803
    hits_, vhits, ders = ROOT.std.vector["Hit"](), ROOT.std.vector["std::vector<Hit>"](), ROOT.std.vector["Derived26"]()
    tobs = ROOT.std.vector["Tagged26"]()
    ROOT.rntuple_streamer_read(path, hits_, vhits, ders, tobs)
    out = []
    for i in range(hits_.size()):
        h = hits_[i]
        hs = vhits[i]
        d = ders[i]
        t = tobs[i]
        out.append(
            {
                "hit": hit(h),
                "hits": [hit(x) for x in hs],
                "der": {
                    ":_0": {"w": float(d.w), "c": [int(d.c[k]) for k in range(3)]},
                    "h": hit(d.h),
                    "more": [hit(x) for x in d.more],
                    "big": int(d.big),
                },
                "tob": {
                    ":_0": {"fUniqueID": int(t.GetUniqueID()), "fBits": int(t.TestBits(0x00FFFFFF))},
                    "n": int(t.n),
                    "v": [float(x) for x in t.v],
                },
            }
        )
    return out


def read_gaps(ROOT, path: str) -> list[dict]:  # noqa: N803
    """ROOT's reading of ``streamer_gaps_root640.root``: maps as lists of ``{_0, _1}`` (key, value)
    records in the container's order, as the split field of a map reads."""
    gaps = ROOT.std.vector["Gap26"]()
    ROOT.rntuple_gaps_read(path, gaps)
    out = []
    for g in gaps:
        out.append(
            {
                "gap": {
                    "m": [{"_0": int(kv.first), "_1": float(kv.second)} for kv in g.m],
                    "s": [int(x) for x in g.s],
                    "mh": [{"_0": str(kv.first), "_1": hit(kv.second)} for kv in g.mh],
                    "ss": [str(x) for x in g.ss],
                    "t": str(g.t.Data()),
                    "vs": [str(x) for x in g.vs],
                }
            }
        )
    return out


def main() -> int:
    out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data"))
    path = os.path.join(out_dir, "streamer_root640.root")
    ROOT = import_root()  # noqa: N806
    with tempfile.TemporaryDirectory() as d:
        load_dictionary(
            ROOT, os.path.join(HERE, "streamer"), ["streamer_classes.hxx", "streamer_linkdef.h"], d, ["Core", "RIO"]
        )
        if not ROOT.gInterpreter.Declare(WRITE):
            raise RuntimeError("cannot compile the writer")
        ROOT.rntuple_streamer_write(path)
        ROOT.rntuple_split_write(path)
        values = read_back(ROOT, path)
        gaps_path = os.path.join(out_dir, "streamer_gaps_root640.root")
        ROOT.rntuple_gaps_write(gaps_path)
        gaps = read_gaps(ROOT, gaps_path)
    write_entries(os.path.join(out_dir, "streamer_root640.json"), values)
    write_entries(os.path.join(out_dir, "streamer_gaps_root640.json"), gaps)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
