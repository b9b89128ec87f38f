#ifdef __CLING__
#pragma link C++ class InnerBase26+;
#pragma link C++ options=rntupleStreamerMode(true) class Inner26+;
#pragma link C++ class Outer26+;
#endif
