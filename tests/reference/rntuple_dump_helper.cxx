// Reference dumper for RNTuple data, JIT-compiled by ROOT's interpreter (cling)
// from root_dump.py.  It reads every top-level field of an RNTuple with ROOT's
// own field machinery (RFieldBase / RValue / SplitValue) and prints one
// canonical JSON object per entry, as specified in docs/dump-format.md.
//
// Written for this project; it only uses ROOT's public (and a few
// ROOT::Internal) APIs of ROOT 6.40.

#pragma cling optimize(2)

#include <ROOT/RField.hxx>
#include <ROOT/RFieldBase.hxx>
#include <ROOT/RNTuple.hxx>
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RPageStorage.hxx>
#include <ROOT/RPageStorageFile.hxx>

#include <TBufferFile.h>
#include <TClass.h>
#include <TDirectory.h>
#include <TEnv.h>
#include <TFile.h>
#include <TKey.h>
#include <TObject.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rntuple_ref {

// ---------------------------------------------------------------------------
// Canonical scalar formatting
// ---------------------------------------------------------------------------

// Python repr(float) semantics: shortest round-trip digits; fixed notation when
// the decimal exponent lies in [-4, 16), scientific (at least two exponent
// digits) otherwise; fixed notation always carries a fractional part (".0").
inline void AppendDouble(std::string &out, double d)
{
   if (std::isnan(d)) {
      out += "\"nan\"";
      return;
   }
   if (std::isinf(d)) {
      out += d > 0 ? "\"inf\"" : "\"-inf\"";
      return;
   }
   char buf[64];
   auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
   std::string s(buf, res.ptr);
   bool neg = false;
   if (!s.empty() && s[0] == '-') {
      neg = true;
      s.erase(0, 1);
   }
   auto epos = s.find('e');
   std::string mant = s.substr(0, epos);
   int exp10 = std::stoi(s.substr(epos + 1));
   std::string digits;
   for (char c : mant)
      if (c != '.')
         digits += c;
   // value = 0.<digits> * 10^decpt
   int decpt = exp10 + 1;
   if (neg)
      out += '-';
   if (decpt > -4 && decpt <= 16) {
      const int nd = static_cast<int>(digits.size());
      if (decpt <= 0) {
         out += "0.";
         out.append(static_cast<size_t>(-decpt), '0');
         out += digits;
      } else if (decpt < nd) {
         out.append(digits, 0, decpt);
         out += '.';
         out.append(digits, decpt, std::string::npos);
      } else {
         out += digits;
         out.append(static_cast<size_t>(decpt - nd), '0');
         out += ".0";
      }
   } else {
      out += digits[0];
      if (digits.size() > 1) {
         out += '.';
         out.append(digits, 1, std::string::npos);
      }
      out += 'e';
      int e = decpt - 1;
      out += e < 0 ? '-' : '+';
      int ae = e < 0 ? -e : e;
      if (ae < 10)
         out += '0';
      out += std::to_string(ae);
   }
}

inline void AppendU16Escape(std::string &out, unsigned v)
{
   static const char *hex = "0123456789abcdef";
   out += "\\u";
   out += hex[(v >> 12) & 0xf];
   out += hex[(v >> 8) & 0xf];
   out += hex[(v >> 4) & 0xf];
   out += hex[v & 0xf];
}

// JSON string with Python json.dumps(ensure_ascii=True) escaping.  Bytes that
// are not valid UTF-8 are mapped like Python's "surrogateescape" (byte b ->
// U+DC00+b), so the mapping is lossless.
inline void AppendJsonString(std::string &out, const char *p, size_t n)
{
   const auto *s = reinterpret_cast<const unsigned char *>(p);
   out += '"';
   size_t i = 0;
   while (i < n) {
      unsigned c = s[i];
      if (c < 0x80) {
         switch (c) {
         case '"': out += "\\\""; break;
         case '\\': out += "\\\\"; break;
         case '\n': out += "\\n"; break;
         case '\r': out += "\\r"; break;
         case '\t': out += "\\t"; break;
         case '\b': out += "\\b"; break;
         case '\f': out += "\\f"; break;
         default:
            if (c < 0x20 || c == 0x7f)
               AppendU16Escape(out, c);
            else
               out += static_cast<char>(c);
         }
         ++i;
         continue;
      }
      // strict UTF-8 decoding
      unsigned cp = 0;
      size_t len = 0;
      unsigned lo = 0x80, hi = 0xBF;
      if (c >= 0xC2 && c <= 0xDF) {
         len = 2;
         cp = c & 0x1f;
      } else if (c >= 0xE0 && c <= 0xEF) {
         len = 3;
         cp = c & 0x0f;
         if (c == 0xE0)
            lo = 0xA0;
         if (c == 0xED)
            hi = 0x9F;
      } else if (c >= 0xF0 && c <= 0xF4) {
         len = 4;
         cp = c & 0x07;
         if (c == 0xF0)
            lo = 0x90;
         if (c == 0xF4)
            hi = 0x8F;
      }
      bool ok = len > 0 && i + len <= n;
      if (ok) {
         for (size_t k = 1; k < len; ++k) {
            unsigned b = s[i + k];
            unsigned l = (k == 1) ? lo : 0x80;
            unsigned h = (k == 1) ? hi : 0xBF;
            if (b < l || b > h) {
               ok = false;
               break;
            }
            cp = (cp << 6) | (b & 0x3f);
         }
      }
      if (!ok) {
         AppendU16Escape(out, 0xDC00 + c);
         ++i;
         continue;
      }
      if (cp >= 0x10000) {
         unsigned v = cp - 0x10000;
         AppendU16Escape(out, 0xD800 + (v >> 10));
         AppendU16Escape(out, 0xDC00 + (v & 0x3ff));
      } else {
         AppendU16Escape(out, cp);
      }
      i += len;
   }
   out += '"';
}

inline void AppendJsonString(std::string &out, const std::string &s)
{
   AppendJsonString(out, s.data(), s.size());
}

// ---------------------------------------------------------------------------
// Value walker
// ---------------------------------------------------------------------------

enum class ELeafKind {
   kUnknown,
   kBool,
   kChar,
   kInt8,
   kUInt8,
   kInt16,
   kUInt16,
   kInt32,
   kUInt32,
   kInt64,
   kUInt64,
   kFloat,
   kDouble,
   kString
};

inline ELeafKind LeafKind(const std::string &t)
{
   if (t == "bool")
      return ELeafKind::kBool;
   if (t == "char")
      return ELeafKind::kChar;
   if (t == "std::int8_t")
      return ELeafKind::kInt8;
   if (t == "std::uint8_t" || t == "std::byte")
      return ELeafKind::kUInt8;
   if (t == "std::int16_t")
      return ELeafKind::kInt16;
   if (t == "std::uint16_t")
      return ELeafKind::kUInt16;
   if (t == "std::int32_t")
      return ELeafKind::kInt32;
   if (t == "std::uint32_t")
      return ELeafKind::kUInt32;
   if (t == "std::int64_t")
      return ELeafKind::kInt64;
   if (t == "std::uint64_t")
      return ELeafKind::kUInt64;
   if (t == "float")
      return ELeafKind::kFloat;
   if (t == "double")
      return ELeafKind::kDouble;
   if (t == "std::string")
      return ELeafKind::kString;
   return ELeafKind::kUnknown;
}

// RVariantField keeps the in-memory layout of std::variant (offset of the
// alternatives' storage and of the tag) private and offers no SplitValue().
// Read those two members through the explicit-instantiation access rule.
template <typename Tag, typename Tag::type M>
struct PrivateMemberRob {
   friend typename Tag::type GetMember(Tag) { return M; }
};
struct VariantTagOffsetTag {
   using type = std::size_t ROOT::RVariantField::*;
   friend type GetMember(VariantTagOffsetTag);
};
struct VariantOffsetTag {
   using type = std::size_t ROOT::RVariantField::*;
   friend type GetMember(VariantOffsetTag);
};
template struct PrivateMemberRob<VariantTagOffsetTag, &ROOT::RVariantField::fTagOffset>;
template struct PrivateMemberRob<VariantOffsetTag, &ROOT::RVariantField::fVariantOffset>;

/// 1-based index of the active alternative, 0 for the valueless state
inline unsigned VariantTag(const ROOT::RVariantField &f, const void *ptr)
{
   const auto tagOffset = f.*GetMember(VariantTagOffsetTag{});
   const auto *base = static_cast<const unsigned char *>(ptr);
   // libstdc++ and libc++: the index is a trailing unsigned char (variant<char> has size 2) or unsigned int
   if (sizeof(std::variant<char>) == 2) {
      const std::uint8_t t = base[tagOffset];
      return t == 0xff ? 0 : t + 1u;
   }
   std::uint32_t t;
   std::memcpy(&t, base + tagOffset, 4);
   return t == 0xffffffffu ? 0 : t + 1u;
}

inline void *VariantStorage(const ROOT::RVariantField &f, const void *ptr)
{
   return const_cast<unsigned char *>(static_cast<const unsigned char *>(ptr)) + f.*GetMember(VariantOffsetTag{});
}

inline bool StartsWith(const std::string &s, const char *prefix)
{
   return s.rfind(prefix, 0) == 0;
}

inline bool IsUnorderedContainer(const std::string &typeName)
{
   return StartsWith(typeName, "std::unordered_");
}

/// Read-only field for a streamer field (structural role 4) that delivers the
/// stored bytes of each entry (std::vector<unsigned char>) instead of
/// deserializing them.  Used for top-level streamer fields.
class RawStreamerBytesField final : public ROOT::RFieldBase {
protected:
   std::unique_ptr<ROOT::RFieldBase> CloneImpl(std::string_view newName) const final
   {
      return std::make_unique<RawStreamerBytesField>(newName, GetTypeName());
   }
   const RColumnRepresentations &GetColumnRepresentations() const final
   {
      using CT = ROOT::ENTupleColumnType;
      static RColumnRepresentations reps({{CT::kSplitIndex64, CT::kByte},
                                          {CT::kIndex64, CT::kByte},
                                          {CT::kSplitIndex32, CT::kByte},
                                          {CT::kIndex32, CT::kByte}},
                                         {});
      return reps;
   }
   void GenerateColumns() final { throw std::runtime_error("RawStreamerBytesField is read-only"); }
   void GenerateColumns(const ROOT::RNTupleDescriptor &desc) final
   {
      GenerateColumnsImpl<ROOT::Internal::RColumnIndex, std::byte>(desc);
   }
   void ConstructValue(void *where) const final { new (where) std::vector<unsigned char>(); }
   std::unique_ptr<RDeleter> GetDeleter() const final
   {
      return std::make_unique<RTypedDeleter<std::vector<unsigned char>>>();
   }
   std::size_t AppendImpl(const void *) final { throw std::runtime_error("RawStreamerBytesField is read-only"); }
   void ReadGlobalImpl(ROOT::NTupleSize_t globalIndex, void *to) final
   {
      ROOT::RNTupleLocalIndex start;
      ROOT::NTupleSize_t n;
      fPrincipalColumn->GetCollectionInfo(globalIndex, &start, &n);
      auto bytes = static_cast<std::vector<unsigned char> *>(to);
      bytes->resize(n);
      if (n)
         fAuxiliaryColumn->ReadV(start, n, bytes->data());
   }
   // the stored class need not be known: accept the on-disk field as it is
   void ReconcileOnDiskField(const ROOT::RNTupleDescriptor &) final {}

public:
   RawStreamerBytesField(std::string_view name, std::string_view typeName)
      : RFieldBase(name, typeName, ROOT::ENTupleStructure::kStreamer, false /* isSimple */)
   {
   }
   size_t GetValueSize() const final { return sizeof(std::vector<unsigned char>); }
   size_t GetAlignment() const final { return alignof(std::vector<unsigned char>); }
};

inline void AppendHex(std::string &out, const unsigned char *b, std::size_t n)
{
   static const char *hex = "0123456789abcdef";
   out += '"';
   for (std::size_t i = 0; i < n; ++i) {
      out += hex[b[i] >> 4];
      out += hex[b[i] & 0xf];
   }
   out += '"';
}

class Walker {
public:
   void Emit(const ROOT::RFieldBase &field, const ROOT::RFieldBase::RValue &value, std::string &out);

private:
   void EmitLeaf(const ROOT::RFieldBase &field, const void *ptr, std::string &out);
   void EmitSequence(const ROOT::RFieldBase &field, const ROOT::RFieldBase::RValue &value, std::string &out);
};

void Walker::EmitLeaf(const ROOT::RFieldBase &field, const void *ptr, std::string &out)
{
   if (auto bitset = dynamic_cast<const ROOT::RBitsetField *>(&field)) {
      const auto n = bitset->GetN();
      const auto *words = static_cast<const unsigned long *>(ptr);
      const size_t bitsPerWord = sizeof(unsigned long) * 8;
      out += '[';
      for (size_t i = 0; i < n; ++i) {
         if (i)
            out += ',';
         out += ((words[i / bitsPerWord] >> (i % bitsPerWord)) & 1UL) ? "true" : "false";
      }
      out += ']';
      return;
   }
   if (dynamic_cast<const ROOT::RCardinalityField *>(&field)) {
      // RNTupleCardinality<SizeT> holds one SizeT
      if (field.GetValueSize() == 4)
         out += std::to_string(*static_cast<const std::uint32_t *>(ptr));
      else
         out += std::to_string(*static_cast<const std::uint64_t *>(ptr));
      return;
   }
   switch (LeafKind(field.GetTypeName())) {
   case ELeafKind::kBool: out += *static_cast<const bool *>(ptr) ? "true" : "false"; return;
   case ELeafKind::kChar: out += std::to_string(static_cast<int>(*static_cast<const char *>(ptr))); return;
   case ELeafKind::kInt8: out += std::to_string(*static_cast<const std::int8_t *>(ptr)); return;
   case ELeafKind::kUInt8: out += std::to_string(*static_cast<const std::uint8_t *>(ptr)); return;
   case ELeafKind::kInt16: out += std::to_string(*static_cast<const std::int16_t *>(ptr)); return;
   case ELeafKind::kUInt16: out += std::to_string(*static_cast<const std::uint16_t *>(ptr)); return;
   case ELeafKind::kInt32: out += std::to_string(*static_cast<const std::int32_t *>(ptr)); return;
   case ELeafKind::kUInt32: out += std::to_string(*static_cast<const std::uint32_t *>(ptr)); return;
   case ELeafKind::kInt64: out += std::to_string(*static_cast<const std::int64_t *>(ptr)); return;
   case ELeafKind::kUInt64: out += std::to_string(*static_cast<const std::uint64_t *>(ptr)); return;
   case ELeafKind::kFloat: AppendDouble(out, static_cast<double>(*static_cast<const float *>(ptr))); return;
   case ELeafKind::kDouble: AppendDouble(out, *static_cast<const double *>(ptr)); return;
   case ELeafKind::kString: AppendJsonString(out, *static_cast<const std::string *>(ptr)); return;
   default: break;
   }
   throw std::runtime_error("rntuple_ref: unsupported leaf field '" + field.GetFieldName() + "' of type '" +
                            field.GetTypeName() + "'");
}

void Walker::EmitSequence(const ROOT::RFieldBase &field, const ROOT::RFieldBase::RValue &value, std::string &out)
{
   auto items = field.SplitValue(value);
   const ROOT::RFieldBase *itemField = field.GetConstSubfields().at(0);
   if (IsUnorderedContainer(field.GetTypeName())) {
      std::vector<std::string> parts;
      parts.reserve(items.size());
      for (auto &item : items) {
         std::string s;
         Emit(*itemField, item, s);
         parts.emplace_back(std::move(s));
      }
      std::sort(parts.begin(), parts.end());
      out += '[';
      for (size_t i = 0; i < parts.size(); ++i) {
         if (i)
            out += ',';
         out += parts[i];
      }
      out += ']';
      return;
   }
   out += '[';
   bool first = true;
   for (auto &item : items) {
      if (!first)
         out += ',';
      first = false;
      Emit(item.GetField(), item, out);
   }
   out += ']';
}

void Walker::Emit(const ROOT::RFieldBase &field, const ROOT::RFieldBase::RValue &value, std::string &out)
{
   const void *ptr = value.GetPtr<void>().get();
   switch (field.GetStructure()) {
   case ROOT::ENTupleStructure::kVariant: {
      auto variant = dynamic_cast<const ROOT::RVariantField *>(&field);
      if (!variant)
         throw std::runtime_error("rntuple_ref: variant field without RVariantField: " + field.GetFieldName());
      const unsigned tag = VariantTag(*variant, ptr);
      auto subfields = field.GetConstSubfields();
      if (tag == 0) {
         out += "null";
         return;
      }
      if (tag > subfields.size())
         throw std::runtime_error("rntuple_ref: bad variant tag in " + field.GetFieldName());
      auto alt = const_cast<ROOT::RFieldBase *>(subfields[tag - 1]);
      auto altValue = alt->BindValue(std::shared_ptr<void>(value.GetPtr<void>(), VariantStorage(*variant, ptr)));
      Emit(*alt, altValue, out);
      return;
   }
   case ROOT::ENTupleStructure::kStreamer: {
      if (dynamic_cast<const RawStreamerBytesField *>(&field)) {
         const auto &bytes = *static_cast<const std::vector<unsigned char> *>(ptr);
         AppendHex(out, bytes.data(), bytes.size());
         return;
      }
      // A streamer field nested in a class: ROOT has deserialized it.  The
      // stored payload is exactly what TClass::Streamer() writes into a
      // TBufferFile, so re-serialize the object the same way.
      auto streamerField = dynamic_cast<const ROOT::RStreamerField *>(&field);
      if (!streamerField)
         throw std::runtime_error("rntuple_ref: streamer field without RStreamerField: " + field.GetFieldName());
      TBufferFile buffer(TBuffer::kWrite, std::max<Int_t>(64, static_cast<Int_t>(field.GetValueSize())));
      streamerField->GetClass()->Streamer(const_cast<void *>(ptr), buffer);
      AppendHex(out, reinterpret_cast<const unsigned char *>(buffer.Buffer()), buffer.Length());
      return;
   }
   case ROOT::ENTupleStructure::kRecord: {
      if (field.GetTypeName() == "TObject") {
         // ROOT sets kNotDeleted (and kIsOnHeap for heap objects) in memory when it reads a TObject;
         // neither is stored.  Report the bits as stored.
         const auto *obj = static_cast<const TObject *>(ptr);
         out += "{\"fUniqueID\":" + std::to_string(obj->GetUniqueID()) + ",\"fBits\":" +
                std::to_string(obj->TestBits(~0u) & ~(static_cast<UInt_t>(TObject::kIsOnHeap) |
                                                      static_cast<UInt_t>(TObject::kNotDeleted))) +
                "}";
         return;
      }
      auto items = field.SplitValue(value);
      auto subfields = field.GetConstSubfields();
      if (items.size() != subfields.size())
         throw std::runtime_error("rntuple_ref: record split size mismatch in " + field.GetFieldName());
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
         if (i)
            out += ',';
         AppendJsonString(out, subfields[i]->GetFieldName());
         out += ':';
         Emit(*subfields[i], items[i], out);
      }
      out += '}';
      return;
   }
   case ROOT::ENTupleStructure::kCollection: {
      if (dynamic_cast<const ROOT::RNullableField *>(&field)) {
         auto items = field.SplitValue(value);
         if (items.empty())
            out += "null";
         else
            Emit(items[0].GetField(), items[0], out);
         return;
      }
      EmitSequence(field, value, out);
      return;
   }
   case ROOT::ENTupleStructure::kPlain: {
      auto subfields = field.GetConstSubfields();
      if (subfields.empty() || dynamic_cast<const ROOT::RBitsetField *>(&field)) {
         EmitLeaf(field, ptr, out);
         return;
      }
      if (field.GetNRepetitions() > 0 || dynamic_cast<const ROOT::RArrayField *>(&field) ||
          dynamic_cast<const ROOT::RArrayAsRVecField *>(&field)) {
         EmitSequence(field, value, out);
         return;
      }
      // enum, std::atomic<T> and similar wrappers: the underlying value
      auto items = field.SplitValue(value);
      if (items.size() != 1)
         throw std::runtime_error("rntuple_ref: unexpected plain wrapper field " + field.GetFieldName() + " of type " +
                                  field.GetTypeName());
      Emit(items[0].GetField(), items[0], out);
      return;
   }
   default: break;
   }
   throw std::runtime_error("rntuple_ref: unsupported structural role for field '" + field.GetFieldName() +
                            "' of type '" + field.GetTypeName() + "'");
}

// ---------------------------------------------------------------------------
// Listing RNTuples in a file
// ---------------------------------------------------------------------------

inline void CollectNTuples(TDirectory *dir, const std::string &prefix, std::vector<std::string> &names)
{
   std::vector<std::string> seen;
   for (auto keyObj : *dir->GetListOfKeys()) {
      auto key = static_cast<TKey *>(keyObj);
      std::string name = key->GetName();
      std::string cls = key->GetClassName();
      // keep only the highest cycle of every name
      if (std::find(seen.begin(), seen.end(), name + "\x01" + cls) != seen.end())
         continue;
      seen.push_back(name + "\x01" + cls);
      if (cls == "ROOT::RNTuple") {
         names.push_back(prefix + name);
      } else if (cls == "TDirectoryFile" || cls == "TDirectory") {
         auto sub = dir->GetDirectory(name.c_str());
         if (sub)
            CollectNTuples(sub, prefix + name + "/", names);
      }
   }
}

inline std::vector<std::string> ListNTuples(const std::string &path)
{
   std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
   if (!f || f->IsZombie())
      throw std::runtime_error("cannot open " + path);
   std::vector<std::string> names;
   CollectNTuples(f.get(), "", names);
   return names;
}

// ---------------------------------------------------------------------------
// Dumper
// ---------------------------------------------------------------------------

inline std::unique_ptr<ROOT::Internal::RPageSource> OpenSource(TFile &file, const std::string &ntupleName)
{
   auto anchor = file.Get<ROOT::RNTuple>(ntupleName.c_str());
   if (!anchor)
      throw std::runtime_error("no RNTuple '" + ntupleName + "' in " + file.GetName());
   auto source = ROOT::Internal::RPageSourceFile::CreateFromAnchor(*anchor, ROOT::RNTupleReadOptions());
   source->Attach();
   return source;
}

inline std::unique_ptr<TFile> OpenFile(const std::string &path)
{
   std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
   if (!f || f->IsZombie())
      throw std::runtime_error("cannot open " + path);
   return f;
}

/// Top-level field IDs in ascending order (the canonical key order)
inline std::vector<ROOT::DescriptorId_t> TopLevelFieldIds(ROOT::Internal::RPageSource &source)
{
   std::vector<ROOT::DescriptorId_t> ids;
   auto guard = source.GetSharedDescriptorGuard();
   for (const auto &fd : guard->GetTopLevelFields())
      ids.push_back(fd.GetId());
   std::sort(ids.begin(), ids.end());
   return ids;
}

inline std::unique_ptr<ROOT::RFieldBase> CreateTopLevelField(ROOT::Internal::RPageSource &source, ROOT::DescriptorId_t id)
{
   ROOT::RCreateFieldOptions opts;
   opts.SetEmulateUnknownTypes(true);
   auto guard = source.GetSharedDescriptorGuard();
   const auto &desc = guard.GetRef();
   const auto &fd = desc.GetFieldDescriptor(id);
   std::unique_ptr<ROOT::RFieldBase> field;
   if (fd.GetStructure() == ROOT::ENTupleStructure::kStreamer)
      field = std::make_unique<RawStreamerBytesField>(fd.GetFieldName(), fd.GetTypeName());
   else
      field = fd.CreateField(desc, opts);
   field->SetOnDiskId(id);
   return field;
}

/// Some fields make ROOT itself abort or crash while it builds or reads them
/// (e.g. emulated classes inside std::variant in ROOT 6.40).  Probe every
/// top-level field in a forked child: create it, connect it, read and print
/// its first and last entry.  Returns "<field id>\t<reason>\n" for every field
/// that crashed the child or threw.
inline std::string ProbeFields(const std::string &path, const std::string &ntupleName, const std::string &errPath)
{
   std::string result;
   std::size_t start = 0;
   std::vector<ROOT::DescriptorId_t> ids;
   {
      auto file = OpenFile(path);
      auto source = OpenSource(*file, ntupleName);
      ids = TopLevelFieldIds(*source);
   }
   while (start < ids.size()) {
      int fds[2];
      if (pipe(fds) != 0)
         throw std::runtime_error("pipe() failed");
      std::fflush(stdout);
      std::fflush(stderr);
      pid_t pid = fork();
      if (pid < 0)
         throw std::runtime_error("fork() failed");
      if (pid == 0) {
         close(fds[0]);
         // no stack traces (ROOT would run gdb for each) in the probe child
         gEnv->SetValue("Root.Stacktrace", "no");
         std::signal(SIGSEGV, SIG_DFL);
         std::signal(SIGABRT, SIG_DFL);
         std::signal(SIGBUS, SIG_DFL);
         std::signal(SIGILL, SIG_DFL);
         std::signal(SIGFPE, SIG_DFL);
         int errFd = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
         if (errFd >= 0) {
            dup2(errFd, 2);
            close(errFd);
         }
         auto say = [&](const std::string &msg) {
            auto n = write(fds[1], msg.data(), msg.size());
            (void)n;
         };
         try {
            auto file = OpenFile(path);
            auto source = OpenSource(*file, ntupleName);
            const auto nEntries = source->GetNEntries();
            Walker walker;
            for (std::size_t k = start; k < ids.size(); ++k) {
               say("S " + std::to_string(k) + "\n");
               try {
                  ROOT::RFieldZero zero;
                  ROOT::Internal::SetAllowFieldSubstitutions(zero, true);
                  zero.Attach(CreateTopLevelField(*source, ids[k]));
                  ROOT::Internal::CallConnectPageSourceOnField(zero, *source);
                  auto f = zero.GetMutableSubfields()[0];
                  auto v = f->CreateValue();
                  std::string out;
                  if (nEntries > 0) {
                     v.Read(0);
                     walker.Emit(*f, v, out);
                     v.Read(nEntries - 1);
                     walker.Emit(*f, v, out);
                  }
                  say("O " + std::to_string(k) + "\n");
               } catch (const std::exception &e) {
                  std::string msg = e.what();
                  for (auto &c : msg)
                     if (c == '\n' || c == '\t')
                        c = ' ';
                  say("E " + std::to_string(k) + " " + msg + "\n");
               }
            }
         } catch (...) {
         }
         std::fflush(stderr);
         _exit(0);
      }
      close(fds[1]);
      std::string data;
      char buf[4096];
      ssize_t n;
      while ((n = read(fds[0], buf, sizeof(buf))) > 0)
         data.append(buf, n);
      close(fds[0]);
      int status = 0;
      waitpid(pid, &status, 0);
      const bool crashed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      long lastStarted = -1;
      bool lastDone = true;
      std::size_t pos = 0;
      while (pos < data.size()) {
         auto eol = data.find('\n', pos);
         if (eol == std::string::npos)
            break;
         std::string line = data.substr(pos, eol - pos);
         pos = eol + 1;
         if (line.size() < 3)
            continue;
         char kind = line[0];
         auto sp = line.find(' ', 2);
         long k = std::stol(line.substr(2, sp == std::string::npos ? std::string::npos : sp - 2));
         if (kind == 'S') {
            lastStarted = k;
            lastDone = false;
         } else if (kind == 'O') {
            lastDone = true;
         } else if (kind == 'E') {
            lastDone = true;
            result += std::to_string(ids[k]) + "\tROOT exception: " + line.substr(sp + 1) + "\n";
         }
      }
      if (!crashed) {
         if (!lastDone && lastStarted >= 0) // child ended without finishing (should not happen)
            result += std::to_string(ids[lastStarted]) + "\tprobe ended unexpectedly\n";
         break;
      }
      if (lastStarted < 0 || lastDone) {
         // crashed outside of a field (e.g. opening the file): give up probing
         throw std::runtime_error("probe child crashed before reading any field of " + ntupleName);
      }
      // reason: the first few non-stack-trace lines the child wrote to stderr
      std::string reason;
      if (FILE *ef = std::fopen(errPath.c_str(), "r")) {
         char line[1024];
         while (std::fgets(line, sizeof(line), ef)) {
            std::string l(line);
            if (!l.empty() && l[0] != '#' && l[0] != ' ' &&
                (l.find("Fatal") != std::string::npos || l.find("Error") != std::string::npos ||
                 l.find("violated") != std::string::npos)) {
               while (!l.empty() && (l.back() == '\n' || l.back() == '\r'))
                  l.pop_back();
               if (!reason.empty())
                  reason += " | ";
               reason += l;
               if (reason.size() > 400)
                  break;
            }
         }
         std::fclose(ef);
      }
      if (WIFSIGNALED(status))
         reason = "ROOT crashed (signal " + std::to_string(WTERMSIG(status)) + ")" + (reason.empty() ? "" : ": " + reason);
      else
         reason = "ROOT aborted" + (reason.empty() ? std::string() : ": " + reason);
      for (auto &c : reason)
         if (c == '\t' || c == '\n')
            c = ' ';
      result += std::to_string(ids[lastStarted]) + "\t" + reason + "\n";
      start = static_cast<std::size_t>(lastStarted) + 1;
   }
   return result;
}

class Dumper {
   std::unique_ptr<TFile> fFile;
   std::unique_ptr<ROOT::Internal::RPageSource> fSource;
   ROOT::RFieldZero fFieldZero;
   std::vector<ROOT::RFieldBase *> fFields;
   std::vector<ROOT::RFieldBase::RValue> fValues;
   std::uint64_t fNEntries = 0;
   Walker fWalker;

public:
   /// `skipIds`: top-level field IDs to leave out (see ProbeFields)
   Dumper(const std::string &path, const std::string &ntupleName, const std::vector<std::uint64_t> &skipIds = {})
   {
      fFile = OpenFile(path);
      fSource = OpenSource(*fFile, ntupleName);
      fNEntries = fSource->GetNEntries();
      ROOT::Internal::SetAllowFieldSubstitutions(fFieldZero, true);
      for (auto id : TopLevelFieldIds(*fSource)) {
         if (std::find(skipIds.begin(), skipIds.end(), id) != skipIds.end())
            continue;
         fFieldZero.Attach(CreateTopLevelField(*fSource, id));
      }
      ROOT::Internal::CallConnectPageSourceOnField(fFieldZero, *fSource);
      for (auto f : fFieldZero.GetMutableSubfields()) {
         fFields.push_back(f);
         fValues.emplace_back(f->CreateValue());
      }
   }

   std::uint64_t GetNEntries() const { return fNEntries; }

   /// "<id>\t<name>\t<type>\n" for every top-level field, in ID order
   std::string FieldList() const
   {
      std::string s;
      auto ids = TopLevelFieldIds(*fSource);
      auto guard = fSource->GetSharedDescriptorGuard();
      for (auto id : ids) {
         const auto &fd = guard->GetFieldDescriptor(id);
         s += std::to_string(id) + "\t" + fd.GetFieldName() + "\t" + fd.GetTypeName() + "\n";
      }
      return s;
   }
   void EntryJson(std::uint64_t i, std::string &out)
   {
      out += '{';
      for (size_t k = 0; k < fFields.size(); ++k) {
         if (k)
            out += ',';
         AppendJsonString(out, fFields[k]->GetFieldName());
         out += ':';
         fValues[k].Read(i);
         fWalker.Emit(*fFields[k], fValues[k], out);
      }
      out += '}';
      out += '\n';
   }

   /// Dumps entries [first, last) to the file `outPath` ("-" for stdout), appending if `append`.
   void Dump(std::uint64_t first, std::uint64_t last, const std::string &outPath, bool append)
   {
      if (last > fNEntries)
         last = fNEntries;
      FILE *fp = stdout;
      if (outPath != "-") {
         fp = std::fopen(outPath.c_str(), append ? "ab" : "wb");
         if (!fp)
            throw std::runtime_error("cannot write " + outPath);
      }
      std::string buf;
      buf.reserve(1 << 20);
      for (std::uint64_t i = first; i < last; ++i) {
         EntryJson(i, buf);
         if (buf.size() > (1 << 20)) {
            std::fwrite(buf.data(), 1, buf.size(), fp);
            buf.clear();
         }
      }
      std::fwrite(buf.data(), 1, buf.size(), fp);
      std::fflush(fp);
      if (fp != stdout)
         std::fclose(fp);
   }
};

} // namespace rntuple_ref
