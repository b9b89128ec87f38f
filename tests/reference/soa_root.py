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
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

from root_dictionary import load_dictionary

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


def main() -> int:
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data", "soa_root640.root"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import ROOT  # noqa: N811
    ROOT.gROOT.SetBatch(True)
    with tempfile.TemporaryDirectory() as d:
        load_dictionary(
            ROOT, os.path.join(HERE, "soa"), ["soa_classes.hxx", "soa_linkdef.h"], d, ["Core", "RIO", "ROOTVecOps"]
        )
        if not ROOT.gInterpreter.Declare(WRITE):
            raise RuntimeError("cannot compile the writer")
        ROOT.rntuple_soa_write(out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
