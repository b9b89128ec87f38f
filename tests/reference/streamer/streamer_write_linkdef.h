#ifdef __CLING__
#pragma link C++ class WHit+;
#pragma link C++ class std::vector<WHit>+;
#pragma link C++ class WBase+;
#pragma link C++ class WDerived+;
#endif
