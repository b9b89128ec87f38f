#pragma once
#include <string>
#include <vector>
// A class ROOT streams wherever it appears (rntupleStreamerMode(true) in the
// LinkDef), with a base class, used as a member and a vector item of a split
// class: streamer fields below the top level (streamer_nested_root640.root).
struct InnerBase26 { int tag; };
struct Inner26 : public InnerBase26 { float a; std::vector<int> v; std::string s; };
struct Outer26 { int n; Inner26 in; std::vector<Inner26> ins; };
