// Writers for the generated RNTuple test matrix (see generate.py).  JIT-compiled
// by ROOT's interpreter; every file is written by ROOT's own RNTupleWriter.
// Written for this project against ROOT 6.40's public (and a few
// ROOT::Internal) APIs.

#pragma cling optimize(2)

// generated_classes.hxx and its compiled dictionary are loaded by generate.py first
#include "generated_classes.hxx"

#include <ROOT/RField.hxx>
#include <ROOT/RFieldBase.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleTypes.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <ROOT/RNTupleWriter.hxx>
#include <ROOT/RVec.hxx>

#include <TDirectory.h>
#include <TFile.h>
#include <TH1F.h>

#include <array>
#include <atomic>
#include <bitset>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace rntgen_writer {

using ROOT::ENTupleColumnType;
using ROOT::RFieldBase;

// ---------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------

struct Rng {
   std::uint64_t s;
   explicit Rng(std::uint64_t seed) : s(seed) {}
   std::uint64_t Next()
   {
      std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      return z ^ (z >> 31);
   }
   double Uniform() { return (Next() >> 11) * (1.0 / 9007199254740992.0); }
   double Range(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
   int Int(int lo, int hi) { return lo + static_cast<int>(Next() % static_cast<std::uint64_t>(hi - lo + 1)); }
};

template <typename T>
T IntValue(Rng &rng, std::uint64_t i)
{
   switch (i % 8) {
   case 0: return T(0);
   case 1: return std::numeric_limits<T>::min();
   case 2: return std::numeric_limits<T>::max();
   case 3: return static_cast<T>(i);
   case 4: return static_cast<T>(-static_cast<std::int64_t>(i % 100));
   default: return static_cast<T>(rng.Next());
   }
}

template <typename T>
T RealValue(Rng &rng, std::uint64_t i)
{
   switch (i % 16) {
   case 0: return T(0);
   case 1: return -T(0);
   case 2: return std::numeric_limits<T>::quiet_NaN();
   case 3: return std::numeric_limits<T>::infinity();
   case 4: return -std::numeric_limits<T>::infinity();
   case 5: return std::numeric_limits<T>::denorm_min() * T(3);
   case 6: return std::numeric_limits<T>::max();
   case 7: return std::numeric_limits<T>::lowest();
   case 8: return std::numeric_limits<T>::min();
   case 9: return static_cast<T>(i) / T(3);
   case 10: return static_cast<T>(rng.Range(-70000.0, 70000.0)); // beyond half precision
   case 11: return static_cast<T>(rng.Range(-1e-6, 1e-6));
   default: return static_cast<T>(rng.Range(-1000.0, 1000.0));
   }
}

inline std::string StringValue(Rng &rng, std::uint64_t i)
{
   switch (i % 12) {
   case 0: return "";
   case 1: return "a";
   case 2: return std::string("emb\0edded", 9);
   case 3: return "quote\" backslash\\ tab\t newline\n";
   case 4: return "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"; // UTF-8: été € 😀
   case 5: return "bad utf8 \xff\xfe \xc3";                         // not UTF-8
   case 6: return std::string(300, 'x');
   default: {
      std::string s;
      auto n = rng.Int(0, 20);
      for (int k = 0; k < n; ++k)
         s += static_cast<char>('a' + rng.Int(0, 25));
      return s;
   }
   }
}

inline ROOT::RNTupleWriteOptions SmallPages(int compression)
{
   ROOT::RNTupleWriteOptions o;
   o.SetCompression(compression);
   o.SetInitialUnzippedPageSize(64);
   o.SetMaxUnzippedPageSize(1024);
   o.SetApproxZippedClusterSize(64 * 1024);
   return o;
}

template <typename T>
std::shared_ptr<T> AddField(ROOT::RNTupleModel &model, std::unique_ptr<RFieldBase> f)
{
   std::string name = f->GetFieldName();
   model.AddField(std::move(f));
   return model.GetDefaultEntry().GetPtr<T>(name);
}

template <typename T>
std::shared_ptr<T> AddRep(ROOT::RNTupleModel &model, const std::string &name, std::vector<ENTupleColumnType> rep)
{
   auto f = std::make_unique<ROOT::RField<T>>(name);
   f->SetColumnRepresentatives({rep});
   return AddField<T>(model, std::move(f));
}

// ---------------------------------------------------------------------------
// 1. every column type, parametrized by compression
// ---------------------------------------------------------------------------

void WriteColumns(const std::string &path, int compression, int nEntries)
{
   using CT = ENTupleColumnType;
   auto model = ROOT::RNTupleModel::Create();
   auto pBit = model->MakeField<bool>("bit");
   auto pByte = model->MakeField<std::byte>("byte");
   auto pChar = model->MakeField<char>("char");
   auto pI8 = model->MakeField<std::int8_t>("int8");
   auto pU8 = model->MakeField<std::uint8_t>("uint8");
   auto pI16s = AddRep<std::int16_t>(*model, "int16_split", {CT::kSplitInt16});
   auto pI16 = AddRep<std::int16_t>(*model, "int16", {CT::kInt16});
   auto pU16s = AddRep<std::uint16_t>(*model, "uint16_split", {CT::kSplitUInt16});
   auto pU16 = AddRep<std::uint16_t>(*model, "uint16", {CT::kUInt16});
   auto pI32s = AddRep<std::int32_t>(*model, "int32_split", {CT::kSplitInt32});
   auto pI32 = AddRep<std::int32_t>(*model, "int32", {CT::kInt32});
   auto pU32s = AddRep<std::uint32_t>(*model, "uint32_split", {CT::kSplitUInt32});
   auto pU32 = AddRep<std::uint32_t>(*model, "uint32", {CT::kUInt32});
   auto pI64s = AddRep<std::int64_t>(*model, "int64_split", {CT::kSplitInt64});
   auto pI64 = AddRep<std::int64_t>(*model, "int64", {CT::kInt64});
   auto pU64s = AddRep<std::uint64_t>(*model, "uint64_split", {CT::kSplitUInt64});
   auto pU64 = AddRep<std::uint64_t>(*model, "uint64", {CT::kUInt64});

   auto pF32s = AddRep<float>(*model, "real32_split", {CT::kSplitReal32});
   auto pF32 = AddRep<float>(*model, "real32", {CT::kReal32});
   auto pF16 = AddRep<float>(*model, "real16", {CT::kReal16});
   std::vector<std::shared_ptr<float>> pTrunc;
   for (int bits : {10, 16, 31}) {
      auto f = std::make_unique<ROOT::RField<float>>("real32trunc_" + std::to_string(bits));
      f->SetTruncated(bits);
      pTrunc.push_back(AddField<float>(*model, std::move(f)));
   }
   std::vector<std::shared_ptr<float>> pQuant;
   for (int bits : {1, 8, 20, 32}) {
      auto f = std::make_unique<ROOT::RField<float>>("real32quant_" + std::to_string(bits));
      f->SetQuantized(bits, {-10.0f, 25.0f});
      pQuant.push_back(AddField<float>(*model, std::move(f)));
   }
   auto pD64s = AddRep<double>(*model, "real64_split", {CT::kSplitReal64});
   auto pD64 = AddRep<double>(*model, "real64", {CT::kReal64});
   std::shared_ptr<double> pD32;
   {
      auto f = std::make_unique<ROOT::RField<double>>("double32");
      f->SetDouble32();
      pD32 = AddField<double>(*model, std::move(f));
   }
   auto pD32u = AddRep<double>(*model, "double_as_real32", {CT::kReal32});
   auto pD16 = AddRep<double>(*model, "double_as_real16", {CT::kReal16});
   std::shared_ptr<double> pDTrunc, pDQuant;
   {
      auto f = std::make_unique<ROOT::RField<double>>("double_trunc12");
      f->SetTruncated(12);
      pDTrunc = AddField<double>(*model, std::move(f));
      auto g = std::make_unique<ROOT::RField<double>>("double_quant16");
      g->SetQuantized(16, {-1.0, 1.0});
      pDQuant = AddField<double>(*model, std::move(g));
   }

   const std::vector<std::pair<std::string, CT>> indexReps = {{"splitindex64", CT::kSplitIndex64},
                                                               {"index64", CT::kIndex64},
                                                               {"splitindex32", CT::kSplitIndex32},
                                                               {"index32", CT::kIndex32}};
   std::vector<std::shared_ptr<std::vector<float>>> pVec;
   std::vector<std::shared_ptr<std::string>> pStr;
   for (const auto &[suffix, ct] : indexReps) {
      pVec.push_back(AddRep<std::vector<float>>(*model, "vec_" + suffix, {ct}));
      pStr.push_back(AddRep<std::string>(*model, "str_" + suffix, {ct, CT::kChar}));
   }
   std::shared_ptr<std::vector<std::vector<std::int32_t>>> pVV;
   {
      auto f = std::make_unique<ROOT::RField<std::vector<std::vector<std::int32_t>>>>("vecvec_index32");
      f->SetColumnRepresentatives({{CT::kIndex32}});
      f->GetMutableSubfields()[0]->SetColumnRepresentatives({{CT::kSplitIndex32}});
      pVV = AddField<std::vector<std::vector<std::int32_t>>>(*model, std::move(f));
   }
   auto pVar = model->MakeField<std::variant<std::int32_t, std::string, double>>("variant");
   auto pVarVec = model->MakeField<std::vector<std::variant<float, std::vector<std::int16_t>>>>("vec_variant");

   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "columns", path, SmallPages(compression));
   Rng rng(12345 + compression);
   for (int i = 0; i < nEntries; ++i) {
      const std::uint64_t u = i;
      *pBit = (rng.Next() & 1) != 0;
      *pByte = static_cast<std::byte>(rng.Next() & 0xff);
      *pChar = static_cast<char>(IntValue<std::int8_t>(rng, u));
      *pI8 = IntValue<std::int8_t>(rng, u);
      *pU8 = IntValue<std::uint8_t>(rng, u);
      *pI16s = IntValue<std::int16_t>(rng, u);
      *pI16 = IntValue<std::int16_t>(rng, u + 1);
      *pU16s = IntValue<std::uint16_t>(rng, u);
      *pU16 = IntValue<std::uint16_t>(rng, u + 1);
      *pI32s = IntValue<std::int32_t>(rng, u);
      *pI32 = IntValue<std::int32_t>(rng, u + 1);
      *pU32s = IntValue<std::uint32_t>(rng, u);
      *pU32 = IntValue<std::uint32_t>(rng, u + 1);
      *pI64s = IntValue<std::int64_t>(rng, u);
      *pI64 = IntValue<std::int64_t>(rng, u + 1);
      *pU64s = IntValue<std::uint64_t>(rng, u);
      *pU64 = IntValue<std::uint64_t>(rng, u + 1);
      *pF32s = RealValue<float>(rng, u);
      *pF32 = RealValue<float>(rng, u + 3);
      *pF16 = RealValue<float>(rng, u + 5);
      for (auto &p : pTrunc)
         *p = RealValue<float>(rng, u + 7);
      for (auto &p : pQuant) {
         switch (i % 5) {
         case 0: *p = -10.0f; break;
         case 1: *p = 25.0f; break;
         default: *p = static_cast<float>(rng.Range(-10.0, 25.0));
         }
      }
      *pD64s = RealValue<double>(rng, u);
      *pD64 = RealValue<double>(rng, u + 3);
      *pD32 = RealValue<double>(rng, u + 5);
      *pD32u = RealValue<double>(rng, u + 7);
      *pD16 = RealValue<double>(rng, u + 9);
      *pDTrunc = RealValue<double>(rng, u + 11);
      *pDQuant = (i % 3 == 0) ? (i % 2 ? 1.0 : -1.0) : rng.Range(-1.0, 1.0);
      for (std::size_t k = 0; k < pVec.size(); ++k) {
         pVec[k]->clear();
         int n = (i % 17 == 0) ? 0 : rng.Int(0, 12 + 30 * static_cast<int>(k));
         for (int j = 0; j < n; ++j)
            pVec[k]->push_back(static_cast<float>(rng.Range(-5, 5)));
         *pStr[k] = StringValue(rng, u + k);
      }
      pVV->clear();
      for (int j = 0, n = rng.Int(0, 4); j < n; ++j) {
         std::vector<std::int32_t> inner;
         for (int m = 0, nn = rng.Int(0, 5); m < nn; ++m)
            inner.push_back(static_cast<std::int32_t>(rng.Next()));
         pVV->push_back(inner);
      }
      switch (i % 3) {
      case 0: *pVar = static_cast<std::int32_t>(i); break;
      case 1: *pVar = StringValue(rng, u); break;
      default: *pVar = rng.Range(-1, 1);
      }
      pVarVec->clear();
      for (int j = 0, n = rng.Int(0, 3); j < n; ++j) {
         if (rng.Next() & 1)
            pVarVec->emplace_back(static_cast<float>(j) + 0.5f);
         else
            pVarVec->emplace_back(std::vector<std::int16_t>(j, static_cast<std::int16_t>(i)));
      }
      writer->Fill();
      if (i % 700 == 699)
         writer->CommitCluster(i % 1400 == 1399 /* also commit the cluster group */);
   }
}

// ---------------------------------------------------------------------------
// 2. clusters and cluster groups
// ---------------------------------------------------------------------------

void WriteClusters(const std::string &path, int nEntries)
{
   auto model = ROOT::RNTupleModel::Create();
   auto pIdx = model->MakeField<std::uint64_t>("entry");
   auto pVec = model->MakeField<std::vector<std::int32_t>>("vec");
   auto pStr = model->MakeField<std::string>("str");
   auto pNested = model->MakeField<std::vector<std::vector<float>>>("nested");
   auto pEmptyVec = model->MakeField<std::vector<double>>("always_empty");
   auto opts = SmallPages(505);
   opts.SetApproxZippedClusterSize(16 * 1024);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "clusters", path, opts);
   Rng rng(77);
   for (int i = 0; i < nEntries; ++i) {
      *pIdx = i;
      pVec->assign(i % 7, i);
      *pStr = std::to_string(i * 1000003ULL);
      pNested->clear();
      for (int j = 0; j < i % 4; ++j)
         pNested->push_back(std::vector<float>(j, static_cast<float>(i)));
      writer->Fill();
      if (i % 97 == 96)
         writer->CommitCluster(/* commitClusterGroup = */ i % 485 == 484);
   }
}

// ---------------------------------------------------------------------------
// 3. late schema extension (deferred columns)
// ---------------------------------------------------------------------------

void WriteExtension(const std::string &path)
{
   auto model = ROOT::RNTupleModel::Create();
   auto pA = model->MakeField<std::int32_t>("a");
   std::vector<std::unique_ptr<RFieldBase>> items;
   items.emplace_back(std::make_unique<ROOT::RField<float>>("x"));
   model->AddField(std::make_unique<ROOT::RRecordField>("rec", std::move(items)));
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "extension", path, SmallPages(505));
   auto &entry = writer->GetModel().GetDefaultEntry();
   auto recPtr = entry.GetPtr<void>("rec");
   auto fill = [&](int n, int base) {
      for (int i = 0; i < n; ++i) {
         *pA = base + i;
         *static_cast<float *>(recPtr.get()) = 0.5f * (base + i);
         writer->Fill();
      }
   };
   fill(40, 0);
   writer->CommitCluster();
   fill(25, 40);

   // mid-cluster extension: these fields get deferred columns
   {
      auto updater = writer->CreateModelUpdater();
      updater->BeginUpdate();
      updater->AddField(std::make_unique<ROOT::RField<double>>("b"));
      updater->AddField(std::make_unique<ROOT::RField<std::vector<std::int16_t>>>("v"));
      updater->AddField(std::make_unique<ROOT::RField<std::string>>("s"));
      updater->AddField(std::make_unique<ROOT::RField<std::variant<std::int32_t, std::string>>>("var"));
      updater->AddField(std::make_unique<ROOT::RField<std::optional<float>>>("opt"));
      updater->AddField(std::make_unique<ROOT::RField<rntgen::Derived>>("derived"));
      updater->AddField(std::make_unique<ROOT::RField<std::array<std::int32_t, 3>>>("arr"));
      updater->CommitUpdate();
   }
   auto &entry2 = writer->GetModel().GetDefaultEntry();
   auto pB = entry2.GetPtr<double>("b");
   auto pV = entry2.GetPtr<std::vector<std::int16_t>>("v");
   auto pS = entry2.GetPtr<std::string>("s");
   auto pVar = entry2.GetPtr<std::variant<std::int32_t, std::string>>("var");
   auto pOpt = entry2.GetPtr<std::optional<float>>("opt");
   auto pD = entry2.GetPtr<rntgen::Derived>("derived");
   auto pArr = entry2.GetPtr<std::array<std::int32_t, 3>>("arr");
   auto fill2 = [&](int n, int base) {
      for (int i = 0; i < n; ++i) {
         const int k = base + i;
         *pA = k;
         *static_cast<float *>(entry2.GetPtr<void>("rec").get()) = 0.5f * k;
         *pB = k * 1.25;
         pV->assign(k % 5, static_cast<std::int16_t>(-k));
         *pS = "s" + std::to_string(k);
         if (k % 2)
            *pVar = k;
         else
            *pVar = std::to_string(k);
         if (k % 3)
            *pOpt = static_cast<float>(k);
         else
            pOpt->reset();
         pD->a = k;
         pD->b = -k;
         pD->v.assign(k % 3, k);
         pD->s = "d" + std::to_string(k);
         pD->d32 = k / 7.0;
         pD->carr[1][2] = static_cast<float>(k);
         pD->p.x = 1;
         pD->p.y = static_cast<float>(k);
         *pArr = {k, -k, 2 * k};
         writer->Fill();
      }
   };
   fill2(30, 65);
   writer->CommitCluster();
   fill2(20, 95);
   writer->CommitCluster();
   // extension at a cluster boundary, and a second one later
   {
      auto updater = writer->CreateModelUpdater();
      updater->BeginUpdate();
      updater->AddField(std::make_unique<ROOT::RField<std::uint64_t>>("late_u64"));
      updater->AddField(std::make_unique<ROOT::RField<std::vector<std::string>>>("late_vs"));
      updater->CommitUpdate();
   }
   auto &entry3 = writer->GetModel().GetDefaultEntry();
   auto pL = entry3.GetPtr<std::uint64_t>("late_u64");
   auto pLV = entry3.GetPtr<std::vector<std::string>>("late_vs");
   pB = entry3.GetPtr<double>("b");
   for (int i = 0; i < 35; ++i) {
      const int k = 115 + i;
      *entry3.GetPtr<std::int32_t>("a") = k;
      *pB = k * 1.25;
      *pL = 1ULL << (k % 64);
      pLV->assign(k % 3, std::to_string(k));
      writer->Fill();
   }
}

// ---------------------------------------------------------------------------
// 4. alternative column representations switching between clusters
// ---------------------------------------------------------------------------

void SwitchRep(ROOT::RNTupleWriter &writer, const std::string &field, std::uint16_t idx)
{
   ROOT::Internal::RFieldRepresentationModifier::SetPrimaryColumnRepresentation(
      const_cast<RFieldBase &>(writer.GetModel().GetConstField(field)), idx);
}

void WriteMultiRep(const std::string &path)
{
   using CT = ENTupleColumnType;
   auto model = ROOT::RNTupleModel::Create();
   auto fF = std::make_unique<ROOT::RField<float>>("f");
   fF->SetColumnRepresentatives({{CT::kSplitReal32}, {CT::kReal16}, {CT::kReal32}});
   auto pF = AddField<float>(*model, std::move(fF));
   auto fD = std::make_unique<ROOT::RField<double>>("d");
   fD->SetColumnRepresentatives({{CT::kReal64}, {CT::kSplitReal32}, {CT::kSplitReal64}});
   auto pD = AddField<double>(*model, std::move(fD));
   auto fI = std::make_unique<ROOT::RField<std::int64_t>>("i");
   fI->SetColumnRepresentatives({{CT::kSplitInt64}, {CT::kInt64}});
   auto pI = AddField<std::int64_t>(*model, std::move(fI));
   auto fV = std::make_unique<ROOT::RField<std::vector<std::uint32_t>>>("v");
   fV->SetColumnRepresentatives({{CT::kSplitIndex64}, {CT::kIndex32}, {CT::kIndex64}});
   auto pV = AddField<std::vector<std::uint32_t>>(*model, std::move(fV));
   auto fS = std::make_unique<ROOT::RField<std::string>>("s");
   fS->SetColumnRepresentatives({{CT::kSplitIndex64, CT::kChar}, {CT::kIndex32, CT::kChar}});
   auto pS = AddField<std::string>(*model, std::move(fS));

   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "multirep", path, SmallPages(505));
   int k = 0;
   auto fill = [&](int n) {
      for (int i = 0; i < n; ++i, ++k) {
         *pF = k * 0.1f - 3.0f;
         *pD = k * 1e-3 - 0.25;
         *pI = (k % 2 ? -1 : 1) * (static_cast<std::int64_t>(k) << 33);
         pV->assign(k % 4, k);
         *pS = std::string(k % 6, static_cast<char>('a' + k % 26));
         writer->Fill();
      }
      writer->CommitCluster();
   };
   fill(30);
   SwitchRep(*writer, "f", 1);
   SwitchRep(*writer, "d", 1);
   SwitchRep(*writer, "i", 1);
   SwitchRep(*writer, "v", 1);
   SwitchRep(*writer, "s", 1);
   fill(30);
   SwitchRep(*writer, "f", 2);
   SwitchRep(*writer, "d", 2);
   SwitchRep(*writer, "v", 2);
   fill(30);
   SwitchRep(*writer, "f", 0);
   SwitchRep(*writer, "d", 0);
   SwitchRep(*writer, "i", 0);
   SwitchRep(*writer, "v", 0);
   SwitchRep(*writer, "s", 0);
   fill(30);
}

// ---------------------------------------------------------------------------
// 5. projected fields and RNTupleCardinality
// ---------------------------------------------------------------------------

void WriteProjections(const std::string &path)
{
   auto model = ROOT::RNTupleModel::Create();
   auto pMet = model->MakeField<float>("met");
   auto pPts = model->MakeField<std::vector<rntgen::Point>>("points");
   auto pJets = model->MakeField<std::vector<std::vector<float>>>("jets");

   auto check = [](ROOT::RResult<void> r) { r.ThrowOnError(); };
   check(model->AddProjectedField(std::make_unique<ROOT::RField<float>>("met_alias"),
                                  [](const std::string &) { return "met"; }));
   check(model->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RNTupleCardinality<std::uint32_t>>>("n_points"),
                                  [](const std::string &) { return "points"; }));
   check(model->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RNTupleCardinality<std::uint64_t>>>("n_jets64"),
                                  [](const std::string &) { return "jets"; }));
   check(model->AddProjectedField(std::make_unique<ROOT::RField<std::vector<float>>>("points_x"),
                                  [](const std::string &name) {
                                     if (name == "points_x")
                                        return std::string("points");
                                     return std::string("points._0.x");
                                  }));
   check(model->AddProjectedField(std::make_unique<ROOT::RField<ROOT::RVec<float>>>("points_y_rvec"),
                                  [](const std::string &name) {
                                     if (name == "points_y_rvec")
                                        return std::string("points");
                                     return std::string("points._0.y");
                                  }));

   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "projections", path, SmallPages(505));
   for (int i = 0; i < 200; ++i) {
      *pMet = i * 0.75f;
      pPts->clear();
      for (int j = 0; j < i % 5; ++j)
         pPts->push_back({static_cast<float>(i), static_cast<float>(-j)});
      pJets->assign(i % 3, std::vector<float>(i % 4, 1.5f));
      writer->Fill();
      if (i % 64 == 63)
         writer->CommitCluster();
   }
}

// ---------------------------------------------------------------------------
// 6. broad type coverage
// ---------------------------------------------------------------------------


void WriteTypes(const std::string &path, int nEntries)
{
   using CT = ENTupleColumnType;
   auto model = ROOT::RNTupleModel::Create();
   // fundamentals
   auto pBool = model->MakeField<bool>("f_bool");
   auto pChar = model->MakeField<char>("f_char");
   auto pI8 = model->MakeField<std::int8_t>("f_int8");
   auto pU8 = model->MakeField<std::uint8_t>("f_uint8");
   auto pI16 = model->MakeField<std::int16_t>("f_int16");
   auto pU16 = model->MakeField<std::uint16_t>("f_uint16");
   auto pI32 = model->MakeField<std::int32_t>("f_int32");
   auto pU32 = model->MakeField<std::uint32_t>("f_uint32");
   auto pI64 = model->MakeField<std::int64_t>("f_int64");
   auto pU64 = model->MakeField<std::uint64_t>("f_uint64");
   auto pFloat = model->MakeField<float>("f_float");
   auto pDouble = model->MakeField<double>("f_double");
   auto pByte = model->MakeField<std::byte>("f_byte");
   auto fD32 = RFieldBase::Create("f_double32", "Double32_t").Unwrap();
   auto pD32 = AddField<double>(*model, std::move(fD32));
   // strings and sequences
   auto pStr = model->MakeField<std::string>("string");
   auto pVecI = model->MakeField<std::vector<std::int32_t>>("vec_int32");
   auto pVecVecF = model->MakeField<std::vector<std::vector<float>>>("vec_vec_float");
   auto pVecBool = model->MakeField<std::vector<bool>>("vec_bool");
   auto pVecStr = model->MakeField<std::vector<std::string>>("vec_string");
   auto pRVec = model->MakeField<ROOT::RVec<float>>("rvec_float");
   auto pRVecRVec = model->MakeField<ROOT::RVec<ROOT::RVec<std::int64_t>>>("rvec_rvec_int64");
   auto pArr = model->MakeField<std::array<float, 3>>("array_float3");
   auto pArrStr = model->MakeField<std::array<std::string, 2>>("array_string2");
   auto pArr2D = model->MakeField<std::array<std::array<std::int16_t, 2>, 3>>("array_2d");
   auto fCArr = RFieldBase::Create("carray_int4", "std::int32_t[4]").Unwrap();
   auto pCArr = AddField<void>(*model, std::move(fCArr));
   auto fCArr2 = RFieldBase::Create("carray_2d", "float[2][3]").Unwrap();
   auto pCArr2 = AddField<void>(*model, std::move(fCArr2));
   auto pBits5 = model->MakeField<std::bitset<5>>("bitset5");
   auto pBits70 = model->MakeField<std::bitset<70>>("bitset70");
   // records
   auto pPair = model->MakeField<std::pair<std::int32_t, std::string>>("pair");
   auto pTuple = model->MakeField<std::tuple<std::int8_t, double, std::vector<std::int32_t>>>("tuple");
   auto pPairNested = model->MakeField<std::pair<std::pair<float, char>, std::tuple<std::uint64_t>>>("pair_nested");
   // variants
   auto pVar = model->MakeField<std::variant<std::int32_t, std::string, std::vector<float>>>("variant");
   auto pVarFragile = model->MakeField<std::variant<std::int64_t, rntgen::Fragile>>("variant_fragile");
   auto pVarStruct = model->MakeField<std::variant<rntgen::Point, double>>("variant_struct");
   // nullable
   auto pOptI = model->MakeField<std::optional<std::int32_t>>("optional_int32");
   auto pOptS = model->MakeField<std::optional<std::string>>("optional_string");
   auto pOptV = model->MakeField<std::optional<std::vector<float>>>("optional_vec");
   auto pOptP = model->MakeField<std::optional<rntgen::Point>>("optional_point");
   auto pUPD = model->MakeField<std::unique_ptr<double>>("unique_ptr_double");
   auto pUPB = model->MakeField<std::unique_ptr<rntgen::Base>>("unique_ptr_base");
   auto fOpt32 = std::make_unique<ROOT::RField<std::optional<std::uint16_t>>>("optional_index32");
   fOpt32->SetColumnRepresentatives({{CT::kIndex32}});
   auto pOpt32 = AddField<std::optional<std::uint16_t>>(*model, std::move(fOpt32));
   // associative containers
   auto pSet = model->MakeField<std::set<std::int32_t>>("set_int32");
   auto pUSet = model->MakeField<std::unordered_set<std::string>>("unordered_set_string");
   auto pMSet = model->MakeField<std::multiset<float>>("multiset_float");
   auto pUMSet = model->MakeField<std::unordered_multiset<std::int64_t>>("unordered_multiset_int64");
   auto pMap = model->MakeField<std::map<std::string, std::int32_t>>("map_string_int32");
   auto pUMap = model->MakeField<std::unordered_map<std::int32_t, std::vector<float>>>("unordered_map_int32_vec");
   auto pMMap = model->MakeField<std::multimap<std::int32_t, std::string>>("multimap_int32_string");
   auto pUMMap = model->MakeField<std::unordered_multimap<std::string, double>>("unordered_multimap_string_double");
   auto pMapStruct = model->MakeField<std::map<std::int32_t, rntgen::Point>>("map_int32_point");
   // wrappers
   auto pAtomic = model->MakeField<std::atomic<std::int32_t>>("atomic_int32");
   auto pAtomicD = model->MakeField<std::atomic<double>>("atomic_double");
   auto pColor = model->MakeField<rntgen::EColor>("enum_color");
   auto pEShort = model->MakeField<rntgen::EShort>("enum_class_int16");
   auto pEByte = model->MakeField<rntgen::EByte>("enum_class_uint8");
   // user classes
   auto pPoint = model->MakeField<rntgen::Point>("point");
   auto pDerived = model->MakeField<rntgen::Derived>("derived");
   auto pMulti = model->MakeField<rntgen::Multi>("multi");
   auto pNested = model->MakeField<rntgen::Nested>("nested");
   auto pEmpty = model->MakeField<rntgen::Empty>("empty");
   auto pVecPoint = model->MakeField<std::vector<rntgen::Point>>("vec_point");
   auto pArrDerived = model->MakeField<std::array<rntgen::Derived, 2>>("array_derived");
   auto pTObj = model->MakeField<TObject>("tobject");
   // untyped record and collections
   std::vector<std::unique_ptr<RFieldBase>> recItems;
   recItems.emplace_back(std::make_unique<ROOT::RField<std::int32_t>>("n"));
   recItems.emplace_back(std::make_unique<ROOT::RField<std::string>>("name"));
   recItems.emplace_back(std::make_unique<ROOT::RField<std::vector<double>>>("vals"));
   auto recField = std::make_unique<ROOT::RRecordField>("untyped_record", std::move(recItems));
   const auto recOffsets = recField->GetOffsets();
   model->AddField(std::move(recField));
   auto untypedColl = ROOT::RVectorField::CreateUntyped("untyped_collection",
                                                          std::make_unique<ROOT::RField<float>>("_0"));
   model->AddField(std::move(untypedColl));
   std::vector<std::unique_ptr<RFieldBase>> collItems;
   collItems.emplace_back(std::make_unique<ROOT::RField<float>>("pt"));
   collItems.emplace_back(std::make_unique<ROOT::RField<std::int16_t>>("charge"));
   auto collRec = std::make_unique<ROOT::RRecordField>("_0", std::move(collItems));
   const auto collOffsets = collRec->GetOffsets();
   const auto collItemSize = collRec->GetValueSize();
   model->AddField(ROOT::RVectorField::CreateUntyped("untyped_collection_record", std::move(collRec)));
   // streamer field
   model->AddField(std::make_unique<ROOT::RStreamerField>("streamed", "rntgen::Streamed"));

   auto &entry = model->GetDefaultEntry();
   auto pRec = entry.GetPtr<void>("untyped_record");
   // untyped collections keep their items in a std::vector of the item type (raw bytes for a record item)
   auto pUColl = std::static_pointer_cast<std::vector<float>>(entry.GetPtr<void>("untyped_collection"));
   auto pUCollRec = std::static_pointer_cast<std::vector<char>>(entry.GetPtr<void>("untyped_collection_record"));
   auto pStreamed = entry.GetPtr<rntgen::Streamed>("streamed");

   auto opts = SmallPages(505);
   opts.SetApproxZippedClusterSize(48 * 1024);
   auto writer = ROOT::RNTupleWriter::Recreate(std::move(model), "types", path, opts);
   Rng rng(4242);
   for (int i = 0; i < nEntries; ++i) {
      const std::uint64_t u = i;
      *pBool = i % 3 == 0;
      *pChar = static_cast<char>(IntValue<std::int8_t>(rng, u));
      *pI8 = IntValue<std::int8_t>(rng, u);
      *pU8 = IntValue<std::uint8_t>(rng, u);
      *pI16 = IntValue<std::int16_t>(rng, u);
      *pU16 = IntValue<std::uint16_t>(rng, u);
      *pI32 = IntValue<std::int32_t>(rng, u);
      *pU32 = IntValue<std::uint32_t>(rng, u);
      *pI64 = IntValue<std::int64_t>(rng, u);
      *pU64 = IntValue<std::uint64_t>(rng, u);
      *pFloat = RealValue<float>(rng, u);
      *pDouble = RealValue<double>(rng, u);
      *pByte = static_cast<std::byte>(i & 0xff);
      *pD32 = RealValue<double>(rng, u + 2);

      *pStr = StringValue(rng, u);
      pVecI->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pVecI->push_back(IntValue<std::int32_t>(rng, u + j));
      pVecVecF->assign(i % 3, std::vector<float>(i % 4, 0.25f * i));
      pVecBool->clear();
      for (int j = 0, n = rng.Int(0, 70); j < n; ++j)
         pVecBool->push_back(rng.Next() & 1);
      pVecStr->clear();
      for (int j = 0, n = rng.Int(0, 3); j < n; ++j)
         pVecStr->push_back(StringValue(rng, u + j));
      pRVec->clear();
      for (int j = 0, n = rng.Int(0, 5); j < n; ++j)
         pRVec->push_back(RealValue<float>(rng, u + j));
      pRVecRVec->clear();
      for (int j = 0, n = rng.Int(0, 3); j < n; ++j)
         pRVecRVec->push_back(ROOT::RVec<std::int64_t>(j, -static_cast<std::int64_t>(i)));
      *pArr = {static_cast<float>(i), -1.5f, RealValue<float>(rng, u)};
      *pArrStr = {StringValue(rng, u), std::to_string(i)};
      for (int a = 0; a < 3; ++a)
         for (int b = 0; b < 2; ++b)
            (*pArr2D)[a][b] = static_cast<std::int16_t>(i * 10 + a * 2 + b);
      auto carr = static_cast<std::int32_t *>(pCArr.get());
      for (int a = 0; a < 4; ++a)
         carr[a] = i * 4 + a;
      auto carr2 = static_cast<float *>(pCArr2.get());
      for (int a = 0; a < 6; ++a)
         carr2[a] = i + a * 0.5f;
      *pBits5 = std::bitset<5>(i);
      *pBits70 = std::bitset<70>(rng.Next());
      (*pBits70)[69] = (i % 2) != 0;
      (*pBits70)[64] = (i % 3) != 0;

      *pPair = {i, StringValue(rng, u)};
      *pTuple = {static_cast<std::int8_t>(i), i / 3.0, std::vector<std::int32_t>(i % 3, i)};
      *pPairNested = {{i * 0.5f, static_cast<char>('A' + i % 26)}, std::tuple<std::uint64_t>(u * u)};

      switch (i % 3) {
      case 0: *pVar = static_cast<std::int32_t>(-i); break;
      case 1: *pVar = StringValue(rng, u); break;
      default: *pVar = std::vector<float>(i % 4, 2.5f);
      }
      if (i % 4 == 3) {
         // put the variant into the valueless-by-exception state
         try {
            pVarFragile->emplace<rntgen::Fragile>(-1);
         } catch (const std::exception &) {
         }
      } else if (i % 2) {
         pVarFragile->emplace<rntgen::Fragile>(i);
      } else {
         *pVarFragile = static_cast<std::int64_t>(i) * -1000000007LL;
      }
      if (i % 2)
         *pVarStruct = rntgen::Point{static_cast<float>(i), 1.0f};
      else
         *pVarStruct = i * 0.125;

      if (i % 3)
         *pOptI = i;
      else
         pOptI->reset();
      if (i % 2)
         *pOptS = StringValue(rng, u);
      else
         pOptS->reset();
      if (i % 4)
         *pOptV = std::vector<float>(i % 4, -0.5f);
      else
         pOptV->reset();
      if (i % 5)
         *pOptP = rntgen::Point{1.0f * i, 2.0f * i};
      else
         pOptP->reset();
      if (i % 2)
         *pUPD = std::make_unique<double>(i * 1.5);
      else
         pUPD->reset();
      if (i % 3 == 1) {
         *pUPB = std::make_unique<rntgen::Base>();
         (*pUPB)->a = i;
         (*pUPB)->b = -i;
      } else {
         pUPB->reset();
      }
      if (i % 4)
         *pOpt32 = static_cast<std::uint16_t>(i);
      else
         pOpt32->reset();

      pSet->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pSet->insert(static_cast<std::int32_t>(rng.Next() % 100) - 50);
      pUSet->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pUSet->insert("k" + std::to_string(rng.Next() % 50));
      pMSet->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pMSet->insert(static_cast<float>(rng.Next() % 4) - 1.5f);
      pUMSet->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pUMSet->insert(static_cast<std::int64_t>(rng.Next() % 5) - 2);
      pMap->clear();
      for (int j = 0, n = rng.Int(0, 5); j < n; ++j)
         (*pMap)[StringValue(rng, u + j)] = j;
      pUMap->clear();
      for (int j = 0, n = rng.Int(0, 5); j < n; ++j)
         (*pUMap)[static_cast<std::int32_t>(rng.Next() % 20)] = std::vector<float>(j, 1.0f * j);
      pMMap->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pMMap->emplace(static_cast<std::int32_t>(rng.Next() % 3), "v" + std::to_string(j));
      pUMMap->clear();
      for (int j = 0, n = rng.Int(0, 6); j < n; ++j)
         pUMMap->emplace("k" + std::to_string(rng.Next() % 3), j * 0.5);
      pMapStruct->clear();
      for (int j = 0, n = rng.Int(0, 3); j < n; ++j)
         (*pMapStruct)[j * 7] = rntgen::Point{static_cast<float>(j), static_cast<float>(i)};

      pAtomic->store(-3 * i);
      pAtomicD->store(i / 9.0);
      *pColor = (i % 3 == 0) ? rntgen::kRed : (i % 3 == 1 ? rntgen::kGreen : rntgen::kBlue);
      *pEShort = (i % 2) ? rntgen::EShort::kMin : rntgen::EShort::kMax;
      *pEByte = (i % 2) ? rntgen::EByte::kA : rntgen::EByte::kB;

      *pPoint = rntgen::Point{RealValue<float>(rng, u), static_cast<float>(i)};
      pDerived->a = i;
      pDerived->b = RealValue<double>(rng, u);
      pDerived->v.assign(i % 4, -i);
      pDerived->s = StringValue(rng, u);
      pDerived->d32 = i / 3.0;
      for (int a = 0; a < 2; ++a)
         for (int b = 0; b < 3; ++b)
            pDerived->carr[a][b] = i + a * 10 + b;
      pDerived->p = rntgen::Point{0.5f, -0.5f * i};
      pMulti->a = -i;
      pMulti->b = i * 2.5;
      pMulti->label = "multi" + std::to_string(i);
      pMulti->m = static_cast<std::uint16_t>(i * 11);
      pNested->points.assign(i % 3, rntgen::Point{1.0f, static_cast<float>(i)});
      pNested->tags.clear();
      for (int j = 0; j < i % 3; ++j)
         pNested->tags["t" + std::to_string(j)] = i + j;
      pNested->d = *pDerived;
      pNested->color = (i % 2) ? rntgen::kBlue : rntgen::kGreen;
      pVecPoint->assign(i % 4, rntgen::Point{static_cast<float>(i), 3.0f});
      (*pArrDerived)[0] = *pDerived;
      (*pArrDerived)[1].a = i + 1;
      (*pArrDerived)[1].s = "second";
      pTObj->SetUniqueID(i);
      pTObj->SetBit(TObject::kCanDelete, i % 2);

      // untyped record: {int32 n; std::string name; std::vector<double> vals}
      auto recBase = static_cast<unsigned char *>(pRec.get());
      *reinterpret_cast<std::int32_t *>(recBase + recOffsets[0]) = i * 5;
      *reinterpret_cast<std::string *>(recBase + recOffsets[1]) = "rec" + std::to_string(i);
      reinterpret_cast<std::vector<double> *>(recBase + recOffsets[2])->assign(i % 3, i * 0.25);
      // untyped collection of float (memory layout: std::vector of the item type)
      pUColl->clear();
      for (int j = 0; j < i % 5; ++j)
         pUColl->push_back(j * 1.5f - i);
      // untyped collection of untyped records: raw item bytes in a std::vector<char>
      const int nItems = i % 4;
      pUCollRec->assign(nItems * collItemSize, 0);
      for (int j = 0; j < nItems; ++j) {
         auto item = reinterpret_cast<unsigned char *>(pUCollRec->data()) + j * collItemSize;
         *reinterpret_cast<float *>(item + collOffsets[0]) = j + 0.25f * i;
         *reinterpret_cast<std::int16_t *>(item + collOffsets[1]) = static_cast<std::int16_t>(j % 2 ? -1 : 1);
      }
      pStreamed->id = i;
      pStreamed->values.assign(i % 4, i * 0.5);
      pStreamed->name = "streamed_" + std::to_string(i);

      writer->Fill();
   }
}

// ---------------------------------------------------------------------------
// 7. several RNTuples, a subdirectory and a histogram in one file
// ---------------------------------------------------------------------------

void WriteMulti(const std::string &path)
{
   std::unique_ptr<TFile> file(TFile::Open(path.c_str(), "RECREATE"));
   auto h = new TH1F("hist", "a histogram", 10, 0, 10);
   for (int i = 0; i < 100; ++i)
      h->Fill(i % 10);
   h->Write();
   {
      auto model = ROOT::RNTupleModel::Create();
      auto p = model->MakeField<std::int32_t>("x");
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "first", *file);
      for (int i = 0; i < 10; ++i) {
         *p = i;
         writer->Fill();
      }
   }
   {
      auto model = ROOT::RNTupleModel::Create();
      auto p = model->MakeField<std::vector<std::string>>("words");
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "second", *file);
      for (int i = 0; i < 5; ++i) {
         p->assign(i, "w" + std::to_string(i));
         writer->Fill();
      }
   }
   {
      // an RNTuple without entries
      auto model = ROOT::RNTupleModel::Create();
      model->MakeField<std::vector<float>>("nothing");
      model->MakeField<std::string>("nobody");
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "no_entries", *file);
   }
   auto sub = file->mkdir("dir/sub", "", true);
   auto dir = file->GetDirectory("dir");
   {
      auto model = ROOT::RNTupleModel::Create();
      auto p = model->MakeField<double>("y");
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "inner", *sub);
      for (int i = 0; i < 7; ++i) {
         *p = i / 7.0;
         writer->Fill();
      }
   }
   {
      auto model = ROOT::RNTupleModel::Create();
      auto p = model->MakeField<std::uint8_t>("z");
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "middle", *dir);
      for (int i = 0; i < 3; ++i) {
         *p = static_cast<std::uint8_t>(250 + i);
         writer->Fill();
      }
   }
   file->Write();
   file->Close();
}

// ---------------------------------------------------------------------------
// 8. a file larger than 4 GiB
// ---------------------------------------------------------------------------

void WriteBig(const std::string &path, std::uint64_t targetBytes)
{
   std::unique_ptr<TFile> file(TFile::Open(path.c_str(), "RECREATE"));
   const std::size_t blobSize = 1 << 20;
   const std::uint64_t nEntries = targetBytes / blobSize + 1;
   {
      auto model = ROOT::RNTupleModel::Create();
      auto pIdx = model->MakeField<std::uint64_t>("entry");
      auto pBlob = model->MakeField<std::vector<std::uint8_t>>("blob");
      auto pSum = model->MakeField<std::uint64_t>("blob_sum");
      ROOT::RNTupleWriteOptions opts;
      opts.SetCompression(0);
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "big", *file, opts);
      pBlob->resize(blobSize);
      for (std::uint64_t i = 0; i < nEntries; ++i) {
         *pIdx = i;
         std::uint64_t sum = 0;
         auto data = pBlob->data();
         for (std::size_t j = 0; j < blobSize; ++j) {
            data[j] = static_cast<std::uint8_t>((i * 131 + j * 7 + (j >> 10)) & 0xff);
            sum += data[j];
         }
         *pSum = sum;
         writer->Fill();
      }
   }
   {
      // written after the 4 GiB mark: its anchor, header, footer and pages all have large offsets
      auto model = ROOT::RNTupleModel::Create();
      auto p = model->MakeField<std::int64_t>("tail");
      auto q = model->MakeField<std::string>("label");
      auto writer = ROOT::RNTupleWriter::Append(std::move(model), "after_4gib", *file);
      for (int i = 0; i < 1000; ++i) {
         *p = -static_cast<std::int64_t>(i) * 4294967311LL;
         *q = "tail" + std::to_string(i);
         writer->Fill();
      }
   }
   file->Write();
   file->Close();
}

} // namespace rntgen_writer
