// ROOT's RNTuple reader for the benchmark (bench/run.py), for any RNTuple.
//
//   rntuple_read --file F [--name Events] [--fields a,b] [--start A] [--stop B] [--threads N]
//
// Reads every column of the selected fields with ROOT's fastest documented
// access path; a selected field is a top-level name or the dotted path of a
// sub-field ("Muon.pt": member pt of the items of collection Muon), which
// reads that sub-field and the collections above it only: one RNTupleDirectAccessView per leaf field (values
// mapped straight from the page buffers; an RNTupleView where the type is not
// mappable) and one RNTupleCollectionView per collection, cluster by cluster
// (so every cluster is loaded once), with local (in-cluster) indices. Each
// value is folded into the checksum of bench/checksum.py, so nothing can be
// optimized away. With --threads > 1, ROOT's implicit multithreading
// (parallel page decompression) is enabled.
#include "bench_common.hxx"

#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <TROOT.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>

namespace {

struct Node {
   std::string fPath;
   virtual ~Node() = default;
   /// Reads the in-cluster indices [lo, hi) of this field of cluster `cid`.
   virtual void Read(ROOT::DescriptorId_t cid, std::uint64_t lo, std::uint64_t hi) = 0;
   virtual void Collect(std::vector<std::pair<std::string, const bench::Sum *>> &out) const = 0;
};

template <typename T>
struct DirectLeaf final : Node {
   ROOT::RNTupleDirectAccessView<T> fView;
   bench::Sum fSum;
   explicit DirectLeaf(ROOT::RNTupleDirectAccessView<T> v) : fView(std::move(v)) {}
   void Read(ROOT::DescriptorId_t cid, std::uint64_t lo, std::uint64_t hi) final
   {
      for (std::uint64_t i = lo; i < hi; ++i)
         fSum.Add(bench::Bits(fView(ROOT::RNTupleLocalIndex(cid, i))));
   }
   void Collect(std::vector<std::pair<std::string, const bench::Sum *>> &out) const final
   {
      out.emplace_back(fPath, &fSum);
   }
};

template <typename T>
struct ViewLeaf final : Node {
   ROOT::RNTupleView<T> fView;
   bench::Sum fSum;
   explicit ViewLeaf(ROOT::RNTupleView<T> v) : fView(std::move(v)) {}
   void Read(ROOT::DescriptorId_t cid, std::uint64_t lo, std::uint64_t hi) final
   {
      for (std::uint64_t i = lo; i < hi; ++i)
         fSum.Add(bench::Bits(fView(ROOT::RNTupleLocalIndex(cid, i))));
   }
   void Collect(std::vector<std::pair<std::string, const bench::Sum *>> &out) const final
   {
      out.emplace_back(fPath, &fSum);
   }
};

struct Record final : Node {
   std::vector<std::unique_ptr<Node>> fChildren;
   void Read(ROOT::DescriptorId_t cid, std::uint64_t lo, std::uint64_t hi) final
   {
      for (auto &c : fChildren)
         c->Read(cid, lo, hi);
   }
   void Collect(std::vector<std::pair<std::string, const bench::Sum *>> &out) const final
   {
      for (auto &c : fChildren)
         c->Collect(out);
   }
};

struct Collection final : Node {
   ROOT::RNTupleCollectionView fView;
   bench::Sum fSum;
   std::vector<std::unique_ptr<Node>> fChildren;
   explicit Collection(ROOT::RNTupleCollectionView v) : fView(std::move(v)) {}
   void Read(ROOT::DescriptorId_t cid, std::uint64_t lo, std::uint64_t hi) final
   {
      if (lo >= hi)
         return;
      std::uint64_t first = 0, last = 0;
      for (std::uint64_t i = lo; i < hi; ++i) {
         auto r = fView.GetCollectionRange(ROOT::RNTupleLocalIndex(cid, i));
         if (i == lo)
            first = (*r.begin()).GetIndexInCluster();
         last = (*r.begin()).GetIndexInCluster() + r.size();
         fSum.Add(r.size());
      }
      for (auto &c : fChildren)
         c->Read(cid, first, last);
   }
   void Collect(std::vector<std::pair<std::string, const bench::Sum *>> &out) const final
   {
      out.emplace_back(fPath, &fSum);
      for (auto &c : fChildren)
         c->Collect(out);
   }
};

template <typename T>
std::unique_ptr<Node> MakeLeaf(ROOT::RNTupleReader &reader, ROOT::DescriptorId_t id)
{
   try {
      return std::make_unique<DirectLeaf<T>>(reader.GetDirectAccessView<T>(id));
   } catch (const std::exception &) {
      return std::make_unique<ViewLeaf<T>>(reader.GetView<T>(id));
   }
}

/// The selected sub-fields below a field: member name -> its own selection; empty: the whole field.
struct Selection {
   std::map<std::string, Selection> fMembers;
   /// Adds the dotted path `path` ("pt", "p4.x"); a whole member already selected stays whole.
   void Add(const std::string &path)
   {
      const auto dot = path.find('.');
      const std::string head = path.substr(0, dot);
      const bool known = fMembers.count(head) > 0;
      Selection &member = fMembers[head];
      if (dot == std::string::npos)
         member.fMembers.clear(); // the whole member
      else if (!known || !member.fMembers.empty())
         member.Add(path.substr(dot + 1));
   }
   /// The selection of member `name`: itself when this is the whole field, nullptr when not selected.
   const Selection *Member(const std::string &name) const
   {
      if (fMembers.empty())
         return this;
      auto it = fMembers.find(name);
      return it == fMembers.end() ? nullptr : &it->second;
   }
};

std::unique_ptr<Node> Build(ROOT::RNTupleReader &reader, const ROOT::RNTupleDescriptor &desc, ROOT::DescriptorId_t id,
                            const std::string &path, const Selection &sel)
{
   const auto &f = desc.GetFieldDescriptor(id);
   std::unique_ptr<Node> node;
   switch (f.GetStructure()) {
   case ROOT::ENTupleStructure::kPlain: {
      const std::string &t = f.GetTypeName();
      if (t == "float")
         node = MakeLeaf<float>(reader, id);
      else if (t == "double")
         node = MakeLeaf<double>(reader, id);
      else if (t == "bool")
         node = MakeLeaf<bool>(reader, id);
      else if (t == "std::int8_t")
         node = MakeLeaf<std::int8_t>(reader, id);
      else if (t == "std::uint8_t")
         node = MakeLeaf<std::uint8_t>(reader, id);
      else if (t == "char")
         node = MakeLeaf<char>(reader, id);
      else if (t == "std::int16_t")
         node = MakeLeaf<std::int16_t>(reader, id);
      else if (t == "std::uint16_t")
         node = MakeLeaf<std::uint16_t>(reader, id);
      else if (t == "std::int32_t")
         node = MakeLeaf<std::int32_t>(reader, id);
      else if (t == "std::uint32_t")
         node = MakeLeaf<std::uint32_t>(reader, id);
      else if (t == "std::int64_t")
         node = MakeLeaf<std::int64_t>(reader, id);
      else if (t == "std::uint64_t")
         node = MakeLeaf<std::uint64_t>(reader, id);
      else
         throw std::runtime_error("unsupported leaf type " + t + " at " + path);
      break;
   }
   case ROOT::ENTupleStructure::kCollection: {
      auto c = std::make_unique<Collection>(reader.GetCollectionView(id));
      // the item field adds no name to a selection's path: the selection applies to it
      for (auto child : f.GetLinkIds())
         c->fChildren.push_back(Build(reader, desc, child, path + "[]", sel));
      node = std::move(c);
      break;
   }
   case ROOT::ENTupleStructure::kRecord: {
      auto r = std::make_unique<Record>();
      std::size_t found = 0;
      for (auto child : f.GetLinkIds()) {
         const auto &cd = desc.GetFieldDescriptor(child);
         const Selection *sub = sel.Member(cd.GetFieldName());
         if (sub == nullptr)
            continue;
         found += sub != &sel;
         r->fChildren.push_back(Build(reader, desc, child, path + "." + cd.GetFieldName(), *sub));
      }
      if (found != sel.fMembers.size())
         throw std::runtime_error("a selected member of " + path + " does not exist");
      node = std::move(r);
      break;
   }
   default: throw std::runtime_error("unsupported field structure at " + path);
   }
   if (!sel.fMembers.empty() && f.GetStructure() == ROOT::ENTupleStructure::kPlain)
      throw std::runtime_error("a sub-field was selected below the leaf " + path);
   node->fPath = path;
   return node;
}

} // namespace

int main(int argc, char **argv)
{
   try {
      bench::Args args(argc, argv, 1);
      auto threads = args.GetU("threads", 1);
      if (threads > 1)
         ROOT::EnableImplicitMT(threads);
      Selection want; // top-level name -> the selected sub-fields
      for (const auto &w : args.GetList("fields"))
         want.Add(w);
      // Warm-up (untimed): ROOT's one-time initialization (interpreter, plugins, I/O classes) happens on
      // first use; opening the RNTuple once keeps it out of the figures, as Python's imports are.
      ROOT::RNTupleReader::Open(args.Get("name", "Events"), args.Get("file")).reset();
      const auto rssAfterLoad = bench::RssBytes();

      bench::Stopwatch sw;
      auto reader = ROOT::RNTupleReader::Open(args.Get("name", "Events"), args.Get("file"));
      const auto &desc = reader->GetDescriptor();
      const double openWall = sw.Wall(), openCpu = sw.Cpu();

      std::vector<std::unique_ptr<Node>> nodes;
      for (const auto &f : desc.GetTopLevelFields()) {
         if (f.IsProjectedField())
            continue;
         const Selection *sub = want.Member(f.GetFieldName());
         if (sub == nullptr)
            continue;
         nodes.push_back(Build(*reader, desc, f.GetId(), f.GetFieldName(), *sub));
      }
      if (!want.fMembers.empty() && nodes.size() != want.fMembers.size())
         throw std::runtime_error("some of the --fields are not fields of the RNTuple");

      const std::uint64_t nEntries = reader->GetNEntries();
      const std::uint64_t start = std::min<std::uint64_t>(args.GetU("start", 0), nEntries);
      const std::uint64_t stop = std::max(start, std::min<std::uint64_t>(args.GetU("stop", nEntries), nEntries));
      std::vector<std::pair<std::uint64_t, ROOT::DescriptorId_t>> clusters;
      for (const auto &c : desc.GetClusterIterable())
         clusters.emplace_back(c.GetFirstEntryIndex(), c.GetId());
      std::sort(clusters.begin(), clusters.end());
      for (auto [first, cid] : clusters) {
         const auto n = desc.GetClusterDescriptor(cid).GetNEntries();
         const std::uint64_t lo = std::max(start, first), hi = std::min(stop, first + n);
         if (lo >= hi)
            continue;
         for (auto &node : nodes)
            node->Read(cid, lo - first, hi - first);
      }
      const double wall = sw.Wall(), cpu = sw.Cpu();

      std::vector<std::pair<std::string, const bench::Sum *>> sums;
      for (auto &node : nodes)
         node->Collect(sums);
      std::cout << "{\"wall\": " << wall << ", \"cpu\": " << cpu << ", \"open_wall\": " << openWall
                << ", \"open_cpu\": " << openCpu << ", \"rss_after_load\": " << rssAfterLoad
                << ", \"peak_rss_self\": " << bench::PeakRssBytes()
                << ", \"entries\": " << (stop - start) << ", \"threads\": " << threads
                << ", \"checksum\": " << bench::ChecksumJson(sums) << "}" << std::endl;
      return 0;
   } catch (const std::exception &e) {
      std::cerr << "rntuple_read: " << e.what() << std::endl;
      return 1;
   }
}
