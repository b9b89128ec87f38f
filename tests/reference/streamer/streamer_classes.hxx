#include <TObject.h>
#include <string>
#include <vector>
struct Hit { float x, y; int id; std::vector<float> samples; std::string label; };
struct Base26 { double w; short c[3]; };
struct Derived26 : public Base26 { Hit h; std::vector<Hit> more; long long big; };
class Tagged26 : public TObject {
public:
   int n = 0;
   std::vector<double> v;
   ClassDefOverride(Tagged26, 3);
};
