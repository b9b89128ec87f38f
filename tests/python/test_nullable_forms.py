"""``std::unique_ptr`` and ``std::optional<std::variant<…>>`` read as ROOT 6.40 reads them.

ROOT writes an RNTuple with these fields and reads it back with its own
reader (values printed as JSON by the C++ below); rntuple's awkward arrays
must hold the same values: an empty ``unique_ptr`` / ``optional`` is None, a
filled one its value (uproot gives a ``unique_ptr`` as a list of 0 or 1
items and cannot build ``optional<variant>`` at all; docs/reading.md).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import awkward as ak
import pytest
import rntuple

_CXX = r"""
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

using VarIS = std::variant<std::int32_t, std::string>;
using VarFV = std::variant<float, std::vector<std::int16_t>>;

std::unique_ptr<ROOT::RNTupleModel> rntuple_test_model() {
   auto model = ROOT::RNTupleModel::Create();
   model->MakeField<std::unique_ptr<double>>("up_double");
   model->MakeField<std::unique_ptr<std::vector<std::int32_t>>>("up_vector");
   model->MakeField<std::optional<VarIS>>("opt_variant");
   model->MakeField<std::vector<std::optional<VarFV>>>("vec_opt_variant");
   return model;
}

void rntuple_test_write(const char *path) {
   auto model = rntuple_test_model();
   auto upd = model->GetDefaultEntry().GetPtr<std::unique_ptr<double>>("up_double");
   auto upv = model->GetDefaultEntry().GetPtr<std::unique_ptr<std::vector<std::int32_t>>>("up_vector");
   auto ov = model->GetDefaultEntry().GetPtr<std::optional<VarIS>>("opt_variant");
   auto vov = model->GetDefaultEntry().GetPtr<std::vector<std::optional<VarFV>>>("vec_opt_variant");
   auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "t", path);
   for (int i = 0; i < 11; ++i) {
      if (i % 3 == 1) upd->reset(); else *upd = std::make_unique<double>(0.5 * i);
      if (i % 2) upv->reset(); else *upv = std::make_unique<std::vector<std::int32_t>>(i % 5, i);
      if (i % 3 == 0) ov->reset();
      else if (i % 3 == 1) *ov = VarIS(std::int32_t(10 * i));
      else *ov = VarIS(std::string(i, 'a' + i));
      vov->clear();
      for (int k = 0; k < i % 4; ++k) {
         if ((i + k) % 3 == 0) vov->push_back(std::nullopt);
         else if ((i + k) % 3 == 1) vov->push_back(VarFV(float(i + 0.25f * k)));
         else vov->push_back(VarFV(std::vector<std::int16_t>(k, std::int16_t(i))));
      }
      w->Fill();
   }
}

// What ROOT's reader reads, one JSON object per entry.
void rntuple_test_dump(const char *path) {
   auto r = ROOT::RNTupleReader::Open(rntuple_test_model(), "t", path);
   auto &e = r->GetModel().GetDefaultEntry();
   auto upd = e.GetPtr<std::unique_ptr<double>>("up_double");
   auto upv = e.GetPtr<std::unique_ptr<std::vector<std::int32_t>>>("up_vector");
   auto ov = e.GetPtr<std::optional<VarIS>>("opt_variant");
   auto vov = e.GetPtr<std::vector<std::optional<VarFV>>>("vec_opt_variant");
   for (unsigned i = 0; i < r->GetNEntries(); ++i) {
      r->LoadEntry(i);
      std::string s = "{\"up_double\": ";
      s += *upd ? std::to_string(**upd) : "null";
      s += ", \"up_vector\": ";
      if (*upv) {
         s += "[";
         for (size_t k = 0; k < (*upv)->size(); ++k) s += (k ? ", " : "") + std::to_string((**upv)[k]);
         s += "]";
      } else s += "null";
      s += ", \"opt_variant\": ";
      if (!*ov) s += "null";
      else if ((*ov)->index() == 0) s += std::to_string(std::get<0>(**ov));
      else s += "\"" + std::get<1>(**ov) + "\"";
      s += ", \"vec_opt_variant\": [";
      for (size_t k = 0; k < vov->size(); ++k) {
         if (k) s += ", ";
         const auto &item = (*vov)[k];
         if (!item) { s += "null"; continue; }
         if (item->index() == 0) { s += std::to_string(std::get<0>(*item)); continue; }
         const auto &v = std::get<1>(*item);
         s += "[";
         for (size_t j = 0; j < v.size(); ++j) s += (j ? ", " : "") + std::to_string(v[j]);
         s += "]";
      }
      s += "]}";
      std::printf("%s\n", s.c_str());
   }
   std::fflush(stdout);
}
"""

_SCRIPT = f"""
import sys
import ROOT
ROOT.gInterpreter.Declare({_CXX!r})
ROOT.rntuple_test_write(sys.argv[1])
ROOT.rntuple_test_dump(sys.argv[1])
"""


@pytest.fixture(scope="module")
def nullables(tmp_path_factory) -> tuple[Path, list[dict]]:
    """The file ROOT wrote and the entries ROOT reads from it."""
    if importlib.util.find_spec("ROOT") is None:
        pytest.skip("ROOT is not installed")
    path = tmp_path_factory.mktemp("nullables") / "nullables.root"
    result = subprocess.run([sys.executable, "-c", _SCRIPT, str(path)], capture_output=True, text=True, timeout=600)
    if result.returncode != 0 or not path.is_file():
        pytest.fail(f"ROOT could not write or read the test file: {result.stderr[-2000:]}")
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 11
    return path, rows


def test_unique_ptr_is_an_optional_value_as_root_reads_it(nullables) -> None:
    path, rows = nullables
    arrays = rntuple.open(path)["t"].arrays(["up_double", "up_vector"])
    assert str(arrays.up_double.type) == "11 * ?float64"
    assert str(arrays.up_vector.type) == "11 * option[var * int32]"
    assert arrays.up_double.tolist() == [r["up_double"] for r in rows]
    assert arrays.up_vector.tolist() == [r["up_vector"] for r in rows]
    assert None in arrays.up_double.tolist() and None in arrays.up_vector.tolist()


def test_optional_variant_builds_a_valid_union_with_roots_values(nullables) -> None:
    path, rows = nullables
    arrays = rntuple.open(path)["t"].arrays(["opt_variant", "vec_opt_variant"])
    layout = arrays.opt_variant.layout
    assert isinstance(layout, ak.contents.UnionArray)
    assert all(c.is_option for c in layout.contents)
    assert ak.validity_error(arrays) == ""
    assert arrays.opt_variant.tolist() == [r["opt_variant"] for r in rows]
    assert arrays.vec_opt_variant.tolist() == [r["vec_opt_variant"] for r in rows]
    # An entry range that starts inside the data gives the same values.
    part = rntuple.open(path)["t"].arrays(["opt_variant", "vec_opt_variant"], entry_start=4, entry_stop=9)
    assert part.opt_variant.tolist() == [r["opt_variant"] for r in rows[4:9]]
    assert part.vec_opt_variant.tolist() == [r["vec_opt_variant"] for r in rows[4:9]]
