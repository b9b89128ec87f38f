#!/usr/bin/env python3
"""Write tests/data/double_real32quant_rntuple_v1-0-2-0.root with ROOT (PyPI ``root``, 6.40).

A ``double`` field stored as Real32Quant keeps the quantised integer only;
ROOT dequantises it in double precision for a double field (spec
"Real32Quant"; ROOT ``Quantize::UnquantizeReals``), so 2.0 quantised with 32
bits in [-10, 25] reads back as 1.9999999965075403, not 2.0. The test
``double_fields_stored_as_real32quant_read_as_root_reads_them`` in
crates/rntuple/tests/read_engine.rs holds the values ROOT printed (this
script prints them again).

Run: ``python tests/reference/make_quant_double.py [output]``.
"""

from __future__ import annotations

import os
import sys

import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "data", "double_real32quant_rntuple_v1-0-2-0.root")

ROOT.gInterpreter.Declare(r"""
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleWriter.hxx>
void rntuple_test_write_quant_double(const char *path) {
   auto model = ROOT::RNTupleModel::Create();
   auto x = std::make_unique<ROOT::RField<double>>("x");
   x->SetQuantized(32, {-10.0, 25.0});
   model->AddField(std::move(x));
   auto y = std::make_unique<ROOT::RField<double>>("y");
   y->SetQuantized(20, {-1.0, 1.0});
   model->AddField(std::move(y));
   auto px = model->GetDefaultEntry().GetPtr<double>("x");
   auto py = model->GetDefaultEntry().GetPtr<double>("y");
   ROOT::RNTupleWriteOptions options;
   options.SetCompression(505);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "quant", path, options);
   const double xs[] = {2.0, -10.0, 25.0, 3.3, 0.1, 12.5, -9.999999, 24.99999999};
   const double ys[] = {0.5, -1.0, 1.0, 0.3, 0.1, -0.7, 0.0, 0.999};
   for (int i = 0; i < 8; ++i) {
      *px = xs[i];
      *py = ys[i];
      writer->Fill();
   }
}
""")


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT
    ROOT.rntuple_test_write_quant_double(out)
    reader = ROOT.RNTupleReader.Open("quant", out)
    x = reader.GetView["double"]("x")
    y = reader.GetView["double"]("y")
    for i in range(reader.GetNEntries()):
        print(repr(x(i)), repr(y(i)))
    # Views before their reader (ROOT crashes at exit otherwise).
    del x, y, reader


if __name__ == "__main__":
    main()
