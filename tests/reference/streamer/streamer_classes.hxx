#include <TObject.h>
#include <TString.h>
#include <map>
#include <set>
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
// Members the reader learnt later (streamer_gaps_root640.root): maps and sets of
// fundamentals, strings and classes, a TString.
struct Gap26 {
   std::map<int, float> m;
   std::set<int> s;
   std::map<std::string, Hit> mh;
   std::set<std::string> ss;
   TString t;
   std::vector<std::string> vs;
};
