#!/usr/bin/env python3
"""Write ``tests/data/soa_root640.root`` with ROOT 6.40's experimental ``RSoAField``.

Run with the Python that has ROOT (PyPI ``root``)::

    ~/.cache/rntuple-ci/venv/bin/python tests/reference/soa_root.py [OUT]

The SoA class needs a compiled dictionary carrying the ``rntupleSoARecord``
attribute (``soa/soa_linkdef.h``) and a ``ClassDef`` (ROOT refuses class
version -1), so this script runs rootcling and g++ in a temporary folder
against the pip ROOT, loads the library and fills five entries of
``hits`` (``HitSoA``: ``RVec`` members ``x``, ``y``, ``id`` of the record
``HitRecord``) and ``n``: entry ``e`` holds ``e % 4`` hits with
``x = e + 0.25 k``, ``y = -e - 0.5 k``, ``id = 100 e + k``.

``soa_root.py --read FILE...`` loads the same dictionary and prints, per file, one JSON line with
what ROOT 6.40 makes of the RNTuple ``Events``: its field descriptors (``IsSoACollection``, type
names, versions, checksums), the entries of ``hits`` read through a ``std::vector<HitRecord>`` view
and of ``n``, and ROOT's errors when it reads ``hits`` as the SoA field it is (``RNTupleReader::Show``,
an ``RNTupleView<HitSoA>``): ``RSoAField`` is write-only in 6.40.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from root_dictionary import import_root, load_dictionary

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

WRITE = r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include "soa_classes.hxx"
void rntuple_soa_write(const char *path) {
   auto model = ROOT::RNTupleModel::Create();
   model->AddField(std::make_unique<ROOT::Experimental::RSoAField>("hits", "HitSoA"));
   model->MakeField<int>("n");
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path);
   auto entry = writer->GetModel().CreateBareEntry();
   HitSoA soa;
   int n = 0;
   entry->BindRawPtr("hits", &soa);
   entry->BindRawPtr("n", &n);
   for (int e = 0; e < 5; ++e) {
      soa.x.clear();
      soa.y.clear();
      soa.id.clear();
      for (int k = 0; k < e % 4; ++k) {
         soa.x.push_back(e + 0.25f * k);
         soa.y.push_back(-e - 0.5f * k);
         soa.id.push_back(100 * e + k);
      }
      n = e;
      writer->Fill(*entry);
   }
}
"""


READ = r"""
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <sstream>
#include <string>
#include <vector>
#include "soa_classes.hxx"
// Field descriptors: one line per field, "name|type|version|checksum|soa|role|parent".
std::string rntuple_soa_fields(const char *path) {
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   const auto &desc = reader->GetDescriptor();
   std::ostringstream out;
   for (const auto &f : desc.GetFieldIterable(desc.GetFieldZeroId())) {
      std::vector<ROOT::DescriptorId_t> todo{f.GetId()};
      while (!todo.empty()) {
         const auto &d = desc.GetFieldDescriptor(todo.back());
         todo.pop_back();
         auto sum = d.GetTypeChecksum();
         out << d.GetFieldName() << "|" << d.GetTypeName() << "|" << d.GetTypeVersion() << "|"
             << (sum ? std::to_string(*sum) : std::string("-")) << "|" << d.IsSoACollection() << "|"
             << static_cast<int>(d.GetStructure()) << "|" << desc.GetFieldDescriptor(d.GetParentId()).GetFieldName()
             << "\n";
         auto links = d.GetLinkIds();
         for (auto it = links.rbegin(); it != links.rend(); ++it)
            todo.push_back(*it);
      }
   }
   return out.str();
}
// The entries as "n;x,y,id;x,y,id..." lines, hits read as a collection of the record.
std::string rntuple_soa_records(const char *path) {
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   auto hits = reader->GetView<std::vector<HitRecord>>("hits");
   auto n = reader->GetView<int>("n");
   std::ostringstream out;
   out.precision(9);
   for (auto i : reader->GetEntryRange()) {
      out << n(i);
      for (const auto &h : hits(i))
         out << ";" << h.x << "," << h.y << "," << h.id;
      out << "\n";
   }
   return out.str();
}
std::string rntuple_soa_show(const char *path) {
   try {
      auto reader = ROOT::RNTupleReader::Open("Events", path);
      std::ostringstream shown;
      reader->Show(0, shown);
      return "read: " + shown.str();
   } catch (const std::exception &e) {
      return e.what();
   }
}
std::string rntuple_soa_view(const char *path) {
   try {
      auto reader = ROOT::RNTupleReader::Open("Events", path);
      auto view = reader->GetView<HitSoA>("hits");
      return "read: " + std::to_string(view(0).x.size());
   } catch (const std::exception &e) {
      return e.what();
   }
}
"""


def _records(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        n, *hits = line.split(";")
        rows = [h.split(",") for h in hits]
        out.append({"hits": [{"x": float(x), "y": float(y), "id": int(i)} for x, y, i in rows], "n": int(n)})
    return out


def read(root, paths: list[str]) -> None:  # noqa: ANN001
    if not root.gInterpreter.Declare(READ):
        raise RuntimeError("cannot compile the reader")
    for path in paths:
        fields = []
        for line in str(root.rntuple_soa_fields(path)).splitlines():
            name, tname, version, checksum, soa, role, parent = line.split("|")
            fields.append(
                {
                    "name": name,
                    "type": tname,
                    "version": int(version),
                    "checksum": None if checksum == "-" else int(checksum),
                    "soa": soa == "1",
                    "role": int(role),
                    "parent": parent,
                }
            )
        report = {
            "file": path,
            "fields": fields,
            "entries": _records(str(root.rntuple_soa_records(path))),
            "show": str(root.rntuple_soa_show(path)),
            "soa_view": str(root.rntuple_soa_view(path)),
        }
        print(json.dumps(report), flush=True)


def main() -> int:
    reading = len(sys.argv) > 1 and sys.argv[1] == "--read"
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data", "soa_root640.root"))
    ROOT = import_root()  # noqa: N806
    with tempfile.TemporaryDirectory() as d:
        load_dictionary(
            ROOT, os.path.join(HERE, "soa"), ["soa_classes.hxx", "soa_linkdef.h"], d, ["Core", "RIO", "ROOTVecOps"]
        )
        if reading:
            read(ROOT, [os.path.abspath(p) for p in sys.argv[2:]])
            sys.stdout.flush()
            # ROOT 6.40 may crash tearing down after refusing an RSoAField read: the report is out.
            os._exit(0)
        if not ROOT.gInterpreter.Declare(WRITE):
            raise RuntimeError("cannot compile the writer")
        ROOT.rntuple_soa_write(out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
