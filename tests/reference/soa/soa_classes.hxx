#include <ROOT/RVec.hxx>
#include <Rtypes.h>
#include <cstdint>
struct HitRecord {
   float x = 0;
   float y = 0;
   std::int32_t id = 0;
   ClassDefNV(HitRecord, 2);
};
struct HitSoA {
   ROOT::RVec<float> x;
   ROOT::RVec<float> y;
   ROOT::RVec<std::int32_t> id;
   ClassDefNV(HitSoA, 2);
};
