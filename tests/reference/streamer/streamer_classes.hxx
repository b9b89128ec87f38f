#include <string>
#include <vector>
struct Hit { float x, y; int id; std::vector<float> samples; std::string label; };
struct Base26 { double w; short c[3]; };
struct Derived26 : public Base26 { Hit h; std::vector<Hit> more; long long big; };
