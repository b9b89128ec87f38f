// Shared by the C++ competitors of the benchmark (bench/run.py): timing,
// resource figures, the value checksum (definition in bench/checksum.py) and
// the one-line JSON result every competitor prints.
#ifndef RNTUPLE_BENCH_COMMON_HXX
#define RNTUPLE_BENCH_COMMON_HXX

#include <dlfcn.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

inline double CpuSeconds()
{
   rusage u{};
   getrusage(RUSAGE_SELF, &u);
   return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// A `/proc/self/status` figure in bytes ("VmRSS:", "VmHWM:").
inline std::uint64_t StatusBytes(const std::string &key)
{
   std::ifstream in("/proc/self/status");
   std::string line;
   while (std::getline(in, line)) {
      if (line.rfind(key, 0) == 0)
         return std::stoull(line.substr(key.size())) * 1024;
   }
   return 0;
}

/// Current resident set size in bytes.
inline std::uint64_t RssBytes()
{
   return StatusBytes("VmRSS:");
}

/// Peak resident set size of this program in bytes. (The rusage of the child that the harness gets from
/// wait4 would include the harness's own peak: Linux carries the pre-exec memory's high-water mark over
/// exec, and Python spawns children with vfork.)
inline std::uint64_t PeakRssBytes()
{
   return StatusBytes("VmHWM:");
}

/// Marks a phase boundary for the benchmark's heap counter (bench/heapcount.c, loaded with LD_PRELOAD):
/// it writes the figures of the phase that ends. A no-op when the counter is not loaded.
inline void HeapMark()
{
   using Mark = void (*)();
   static const Mark mark = reinterpret_cast<Mark>(dlsym(RTLD_DEFAULT, "heapcount_mark"));
   if (mark)
      mark();
}

struct Stopwatch {
   std::chrono::steady_clock::time_point fWall = std::chrono::steady_clock::now();
   double fCpu = CpuSeconds();
   double Wall() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - fWall).count(); }
   double Cpu() const { return CpuSeconds() - fCpu; }
};

// Bit patterns zero-extended to 64 bits.
inline std::uint64_t Bits(bool v) { return v ? 1 : 0; }
inline std::uint64_t Bits(float v)
{
   std::uint32_t u;
   std::memcpy(&u, &v, 4);
   return u;
}
inline std::uint64_t Bits(double v)
{
   std::uint64_t u;
   std::memcpy(&u, &v, 8);
   return u;
}
inline std::uint64_t Bits(std::int8_t v) { return static_cast<std::uint8_t>(v); }
inline std::uint64_t Bits(std::uint8_t v) { return v; }
inline std::uint64_t Bits(char v) { return static_cast<std::uint8_t>(v); }
inline std::uint64_t Bits(std::int16_t v) { return static_cast<std::uint16_t>(v); }
inline std::uint64_t Bits(std::uint16_t v) { return v; }
inline std::uint64_t Bits(std::int32_t v) { return static_cast<std::uint32_t>(v); }
inline std::uint64_t Bits(std::uint32_t v) { return v; }
inline std::uint64_t Bits(long v) { return static_cast<std::uint64_t>(v); }
inline std::uint64_t Bits(unsigned long v) { return v; }
inline std::uint64_t Bits(long long v) { return static_cast<std::uint64_t>(v); }
inline std::uint64_t Bits(unsigned long long v) { return v; }

/// Running checksum of one path: sum of value * position (mod 2^64).
struct Sum {
   std::uint64_t fSum = 0;
   std::uint64_t fCount = 0;
   void Add(std::uint64_t v) { fSum += v * ++fCount; }
};

/// `{"path": "sum", ...}`
inline std::string ChecksumJson(const std::vector<std::pair<std::string, const Sum *>> &sums)
{
   std::map<std::string, std::uint64_t> sorted;
   for (auto &[p, s] : sums)
      sorted[p] = s->fSum;
   std::ostringstream o;
   o << "{";
   bool first = true;
   for (auto &[p, v] : sorted) {
      o << (first ? "" : ", ") << "\"" << p << "\": \"" << v << "\"";
      first = false;
   }
   o << "}";
   return o.str();
}

/// Loads `count` values of T from a raw little-endian file (the neutral input form).
template <typename T>
std::vector<T> LoadArray(const std::string &path, std::size_t count)
{
   std::vector<T> out(count);
   FILE *f = std::fopen(path.c_str(), "rb");
   if (!f)
      throw std::runtime_error("cannot open " + path);
   std::size_t got = count ? std::fread(out.data(), sizeof(T), count, f) : 0;
   std::fseek(f, 0, SEEK_END);
   long size = std::ftell(f);
   std::fclose(f);
   if (got != count || static_cast<std::size_t>(size) != count * sizeof(T))
      throw std::runtime_error(path + ": expected " + std::to_string(count) + " values of " +
                               std::to_string(sizeof(T)) + " bytes");
   return out;
}

/// Command-line options `--key value` after the sub-command.
struct Args {
   std::map<std::string, std::string> fKv;
   Args(int argc, char **argv, int first)
   {
      for (int i = first; i + 1 < argc; i += 2) {
         std::string k = argv[i];
         if (k.rfind("--", 0) != 0)
            throw std::runtime_error("expected --option, got " + k);
         fKv[k.substr(2)] = argv[i + 1];
      }
   }
   std::string Get(const std::string &k, const std::string &def = "") const
   {
      auto it = fKv.find(k);
      return it == fKv.end() ? def : it->second;
   }
   std::uint64_t GetU(const std::string &k, std::uint64_t def) const
   {
      auto it = fKv.find(k);
      return it == fKv.end() ? def : std::stoull(it->second);
   }
   std::vector<std::string> GetList(const std::string &k) const
   {
      std::vector<std::string> out;
      std::string s = Get(k), item;
      std::istringstream in(s);
      while (std::getline(in, item, ','))
         if (!item.empty())
            out.push_back(item);
      return out;
   }
};

} // namespace bench

#endif
