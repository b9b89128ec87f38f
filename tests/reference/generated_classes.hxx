// User classes used by generate.py to write RNTuples with ROOT.  They are
// declared to ROOT's interpreter (cling) at run time, which gives them an
// "interpreted" TClass: enough for ROOT's RNTuple class fields and streamer
// fields.  root_dump.py declares this same header (--declare) before dumping
// the generated files so that ROOT reads them with the very classes that wrote
// them (ROOT 6.40's emulation of unknown classes crashes inside std::variant).
#ifndef RNTUPLE_TESTS_GENERATED_CLASSES
#define RNTUPLE_TESTS_GENERATED_CLASSES

#include <Rtypes.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rntgen {

enum EColor { kRed = 0, kGreen = 7, kBlue = -3 };
enum class EShort : std::int16_t { kMin = -32768, kZero = 0, kMax = 32767 };
enum class EByte : std::uint8_t { kA = 1, kB = 200 };

struct Point {
   float x = 0;
   float y = 0;
};

struct Base {
   std::int32_t a = 0;
   double b = 0;
};

struct Other {
   std::string label;
};

struct Derived : public Base {
   std::vector<std::int32_t> v;
   std::string s;
   Double32_t d32 = 0;
   float carr[2][3] = {{0, 0, 0}, {0, 0, 0}};
   Point p;
};

struct Multi : public Base, public Other {
   std::uint16_t m = 0;
};

struct Nested {
   std::vector<Point> points;
   std::map<std::string, std::int32_t> tags;
   Derived d;
   EColor color = kRed;
};

struct Empty {};

/// Its constructor from an int throws for negative values: used to put a
/// std::variant into the valueless-by-exception state.  (The std::string
/// member makes it not trivially copyable, so that libstdc++'s
/// variant::emplace constructs in place and can become valueless.)
struct Fragile {
   std::int32_t value = 0;
   std::string tag;
   Fragile() = default;
   explicit Fragile(std::int32_t v) : value(v)
   {
      if (v < 0)
         throw std::runtime_error("Fragile");
   }
};

/// Stored as an RNTuple streamer field (structural role 4)
struct Streamed {
   std::int32_t id = 0;
   std::vector<double> values;
   std::string name;
};

} // namespace rntgen

#endif
