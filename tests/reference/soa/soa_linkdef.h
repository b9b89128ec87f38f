#ifdef __CLING__
#pragma link C++ class HitRecord+;
#pragma link C++ options=rntupleSoARecord(HitRecord) class HitSoA+;
#endif
