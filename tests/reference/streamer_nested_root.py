#!/usr/bin/env python3
"""Write ``tests/data/streamer_nested_root640.root`` with ROOT 6.40: streamer fields below the top
level, and ``tests/data/streamer_nested_root640.json``, ROOT's ``RNTupleReader`` reading of it.

Run with the Python that has ROOT (PyPI ``root``)::

    ~/.cache/rntuple-ci/venv/bin/python tests/reference/streamer_nested_root.py [OUT_DIR]

The classes (``streamer/streamer_nested_classes.hxx``) get a compiled dictionary (see
``root_dictionary.py``). ``Inner26`` (base ``InnerBase26 {int tag;}``, members ``float a``,
``std::vector<int> v``, ``std::string s``) has ``rntupleStreamerMode(true)`` in the LinkDef, so
ROOT makes an ``RStreamerField`` of it wherever it appears: as the member ``in`` and the item of
the member ``ins`` (``std::vector<Inner26>``) of the split class ``Outer26 {int n; Inner26 in;
std::vector<Inner26> ins;}`` (top-level field ``outer``), and as the item of the top-level
``std::vector<Inner26>`` field ``inners``. The script checks with ROOT's descriptor that these
three streamer fields sit below the top level. 5 entries in the RNTuple ``Events``, uncompressed
(tests alter its streamed bytes). The JSON holds per entry what ROOT's reader gives back (base
``InnerBase26`` under ``:_0``, as ROOT names base subfields).
"""

from __future__ import annotations

import os
import sys
import tempfile

from root_dictionary import import_root, load_dictionary, write_entries

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CODE = r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include "streamer_nested_classes.hxx"
Inner26 nested26_inner(int tag, float a, int n, const char *s) {
   Inner26 i;
   i.tag = tag;
   i.a = a;
   for (int k = 0; k < n; ++k)
      i.v.push_back(tag * 10 + k);
   i.s = s;
   return i;
}
void nested26_write(const char *path) {
   // Fields made from type names (the typed MakeField refuses a class in streamer mode).
   auto model = ROOT::RNTupleModel::Create();
   model->AddField(ROOT::RFieldBase::Create("outer", "Outer26").Unwrap());
   model->AddField(ROOT::RFieldBase::Create("inners", "std::vector<Inner26>").Unwrap());
   // Uncompressed, so that tests can alter the streamed bytes (read without checksums).
   ROOT::RNTupleWriteOptions options;
   options.SetCompression(0);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "Events", path, options);
   auto entry = writer->GetModel().CreateBareEntry();
   auto outer = std::make_unique<Outer26>();
   auto inners = std::make_unique<std::vector<Inner26>>();
   entry->BindRawPtr("outer", outer.get());
   entry->BindRawPtr("inners", inners.get());
   for (int e = 0; e < 5; ++e) {
      outer->n = e;
      outer->in = nested26_inner(100 + e, e * 0.5f, e, std::string(e, 'x').c_str());
      outer->ins.clear();
      inners->clear();
      for (int k = 0; k < e; ++k) {
         outer->ins.push_back(nested26_inner(k, k + 0.25f, k % 3, ("s" + std::to_string(k)).c_str()));
         if (k % 2 == 0)
            inners->push_back(nested26_inner(-k, -1.5f * k, 2, "inner"));
      }
      writer->Fill(*entry);
   }
}
// Paths of the streamer fields below the top level, as ROOT's descriptor has them.
void nested26_streamer_paths(const ROOT::RNTupleDescriptor &desc, ROOT::DescriptorId_t parent,
                             const std::string &prefix, std::vector<std::string> &out) {
   for (const auto &f : desc.GetFieldIterable(parent)) {
      auto path = prefix.empty() ? f.GetFieldName() : prefix + "." + f.GetFieldName();
      if (f.GetStructure() == ROOT::ENTupleStructure::kStreamer && !prefix.empty())
         out.push_back(path + " " + f.GetTypeName());
      nested26_streamer_paths(desc, f.GetId(), path, out);
   }
}
void nested26_read(const char *path, std::vector<Outer26> &outer, std::vector<std::vector<Inner26>> &inners,
                   std::vector<std::string> &streamers) {
   auto reader = ROOT::RNTupleReader::Open("Events", path);
   const auto &desc = reader->GetDescriptor();
   nested26_streamer_paths(desc, desc.GetFieldZeroId(), "", streamers);
   auto entry = reader->CreateEntry();
   for (ROOT::NTupleSize_t i = 0; i < reader->GetNEntries(); ++i) {
      reader->LoadEntry(i, *entry);
      outer.push_back(*entry->GetPtr<Outer26>("outer"));
      inners.push_back(*entry->GetPtr<std::vector<Inner26>>("inners"));
   }
}
"""


def inner(i) -> dict:
    return {
        ":_0": {"tag": int(i.tag)},
        "a": float(i.a),
        "v": [int(x) for x in i.v],
        "s": str(i.s),
    }


def main() -> int:
    out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data"))
    path = os.path.join(out_dir, "streamer_nested_root640.root")
    ROOT = import_root()  # noqa: N806
    with tempfile.TemporaryDirectory() as d:
        headers = ["streamer_nested_classes.hxx", "streamer_nested_linkdef.h"]
        load_dictionary(ROOT, os.path.join(HERE, "streamer"), headers, d, ["Core", "RIO"])
        if not ROOT.gInterpreter.Declare(CODE):
            raise RuntimeError("cannot compile the writer")
        ROOT.nested26_write(path)
        outer, inners = ROOT.std.vector["Outer26"](), ROOT.std.vector["std::vector<Inner26>"]()
        streamers = ROOT.std.vector["std::string"]()
        ROOT.nested26_read(path, outer, inners, streamers)
        found = sorted(str(s) for s in streamers)
        want = ["inners._0 Inner26", "outer.in Inner26", "outer.ins._0 Inner26"]
        if found != want:
            raise RuntimeError(f"streamer fields below the top level: {found}, expected {want}")
        values = [
            {
                "outer": {"n": int(o.n), "in": inner(getattr(o, "in")), "ins": [inner(x) for x in o.ins]},
                "inners": [inner(x) for x in inners[e]],
            }
            for e, o in enumerate(outer)
        ]
    write_entries(os.path.join(out_dir, "streamer_nested_root640.json"), values)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
