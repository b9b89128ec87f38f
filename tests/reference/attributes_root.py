#!/usr/bin/env python3
"""Attribute sets written and read by ROOT 6.40 itself (RNTupleAttr*.hxx).

Run with the Python that has ROOT (PyPI ``root``), e.g.
``$RNTUPLE_CACHE/venv/bin/python tests/reference/attributes_root.py ...``:

    attributes_root.py write OUT.root
        writes the reference file tests/data/attributes_root640.root: the
        RNTuple "Events" (6 entries of ``float px``) with two attribute sets,
        "runs" (std::int32_t run, std::string tag, std::vector<float> weights)
        and "flags" (std::uint16_t flag, one empty range committed first);
        tests/data/attributes_root640.json is what ``dump`` prints for it.

    attributes_root.py dump FILE NTUPLE
        prints, as one JSON object, what ROOT reads of every attribute set of
        FILE:NTUPLE: {"sets": [{"name", "version": [major, minor],
        "entries": [{"range": [start, length], "values": {field: value}}]
        (in attribute entry order; values in the canonical form of
        docs/dump-format.md, through root_dump.py's helper), "order": the
        entries of GetAttributes(), "containing": {main entry:
        GetAttributes(entry)} for every main entry}]}.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

WRITER = r"""
#include <ROOT/RNTupleAttrWriting.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <TFile.h>

void rntuple_attrs_write(const char *path)
{
   auto file = std::unique_ptr<TFile>(TFile::Open(path, "RECREATE"));
   auto model = ROOT::RNTupleModel::Create();
   auto px = model->MakeField<float>("px");
   auto writer = ROOT::RNTupleWriter::Append(std::move(model), "Events", *file);

   auto runsModel = ROOT::RNTupleModel::Create();
   auto run = runsModel->MakeField<std::int32_t>("run");
   auto tag = runsModel->MakeField<std::string>("tag");
   auto weights = runsModel->MakeField<std::vector<float>>("weights");
   auto runs = writer->CreateAttributeSet(std::move(runsModel), "runs");
   auto flagsModel = ROOT::RNTupleModel::Create();
   auto flag = flagsModel->MakeField<std::uint16_t>("flag");
   auto flags = writer->CreateAttributeSet(std::move(flagsModel), "flags");

   auto fill = [&](int i) { *px = 0.5f * i; writer->Fill(); };
   auto run1 = runs->BeginRange();
   auto flagA = flags->BeginRange();
   for (int i = 0; i < 3; ++i)
      fill(i);
   *run = 1; *tag = "first"; *weights = {0.5f};
   runs->CommitRange(std::move(run1));
   auto run2 = runs->BeginRange();
   auto flagB = flags->BeginRange();
   *flag = 7;
   flags->CommitRange(std::move(flagB)); // an empty range, committed first
   fill(3);
   *flag = 9;
   flags->CommitRange(std::move(flagA));
   auto flagC = flags->BeginRange();
   fill(4);
   fill(5);
   *flag = 11;
   flags->CommitRange(std::move(flagC));
   *run = 2; *tag = "second"; *weights = {1.5f, 2.5f};
   runs->CommitRange(std::move(run2));
}
"""

DUMPER = r"""
#include <ROOT/RNTupleAttrReading.hxx>
#include <ROOT/RNTupleReader.hxx>

std::string rntuple_attrs_dump(const char *path, const char *ntuple)
{
   auto reader = ROOT::RNTupleReader::Open(ntuple, path);
   std::string out = "{\"sets\":[";
   bool firstSet = true;
   std::vector<std::pair<std::string, std::pair<int, int>>> sets;
   for (const auto &a : reader->GetDescriptor().GetAttrSetIterable())
      sets.push_back({a.GetName(), {a.GetSchemaVersionMajor(), a.GetSchemaVersionMinor()}});
   const auto nMain = reader->GetNEntries();
   for (const auto &[name, version] : sets) {
      auto set = reader->OpenAttributeSet(name);
      auto entry = set->CreateEntry();
      rntuple_ref::Walker walker;
      if (!firstSet)
         out += ',';
      firstSet = false;
      out += "{\"name\":";
      rntuple_ref::AppendJsonString(out, name);
      out += ",\"version\":[" + std::to_string(version.first) + "," + std::to_string(version.second) + "]";
      out += ",\"entries\":[";
      for (std::size_t i = 0; i < set->GetNEntries(); ++i) {
         auto range = set->LoadEntry(i, *entry);
         if (i)
            out += ',';
         out += "{\"range\":[" + std::to_string(range.GetStart()) + "," + std::to_string(range.GetLength()) + "]";
         out += ",\"values\":{";
         bool firstValue = true;
         for (const auto &value : *entry) {
            if (!firstValue)
               out += ',';
            firstValue = false;
            rntuple_ref::AppendJsonString(out, value.GetField().GetFieldName());
            out += ':';
            walker.Emit(value.GetField(), value, out);
         }
         out += "}}";
      }
      out += "],\"order\":[";
      bool first = true;
      for (auto idx : set->GetAttributes()) {
         out += (first ? "" : ",") + std::to_string(idx);
         first = false;
      }
      out += "],\"containing\":{";
      for (std::uint64_t e = 0; e < nMain; ++e) {
         out += (e ? ",\"" : "\"") + std::to_string(e) + "\":[";
         first = true;
         for (auto idx : set->GetAttributes(e)) {
            out += (first ? "" : ",") + std::to_string(idx);
            first = false;
         }
         out += ']';
      }
      out += "}}";
   }
   out += "]}";
   return out;
}
"""


def _root():
    sys.path.insert(0, HERE)
    import root_dump

    ROOT = root_dump._root()  # JITs the canonical value walker (rntuple_ref::Walker)
    if not ROOT.gInterpreter.Declare(WRITER + DUMPER):
        raise RuntimeError("failed to compile the attribute set helpers")
    return ROOT


def main(argv: list[str]) -> int:
    if argv[:1] == ["write"] and len(argv) == 2:
        _root().rntuple_attrs_write(argv[1])
    elif argv[:1] == ["dump"] and len(argv) == 3:
        print(str(_root().rntuple_attrs_dump(argv[1], argv[2])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
