// Classes of the streamer fields the writer's interop test writes
// (tests/python/test_streamer_write.py): ROOT reads them back through a
// dictionary built from this header (streamer_write_root.py).
#pragma once
#include <string>
#include <vector>
struct WHit { float x, y; int id; std::vector<float> samples; std::string label; };
struct WBase { double w; std::vector<int> tags; };
struct WDerived : public WBase { WHit h; std::vector<WHit> more; long long big; std::string name; bool ok; };
