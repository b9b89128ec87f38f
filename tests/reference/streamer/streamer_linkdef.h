#ifdef __CLING__
#pragma link C++ class Hit+;
#pragma link C++ class std::vector<Hit>+;
#pragma link C++ class Base26+;
#pragma link C++ class Derived26+;
#pragma link C++ class Tagged26+;
#pragma link C++ class Gap26+;
#endif
