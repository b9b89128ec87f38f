// rootcling link definitions for generated_classes.hxx (see generate.py).
// Besides the user classes, this asks for compiled dictionaries (collection
// proxies) of the STL instantiations that ROOT 6.40 does not ship one for:
// without one ROOT falls back to an emulated proxy, which cannot write real
// C++ containers.
#ifdef __CLING__
#pragma link off all globals;
#pragma link off all classes;
#pragma link off all functions;
#pragma link C++ nestedclasses;

#pragma link C++ namespace rntgen;
#pragma link C++ enum rntgen::EColor;
#pragma link C++ enum rntgen::EShort;
#pragma link C++ enum rntgen::EByte;
#pragma link C++ class rntgen::Point + ;
#pragma link C++ class rntgen::Base + ;
#pragma link C++ class rntgen::Other + ;
#pragma link C++ class rntgen::Derived + ;
#pragma link C++ class rntgen::Multi + ;
#pragma link C++ class rntgen::Nested + ;
#pragma link C++ class rntgen::Empty + ;
#pragma link C++ class rntgen::Fragile + ;
#pragma link C++ class rntgen::Streamed + ;

#pragma link C++ class std::multimap<std::int32_t, std::string> + ;
#pragma link C++ class std::unordered_map<std::int32_t, std::vector<float>> + ;
#pragma link C++ class std::map<std::int32_t, rntgen::Point> + ;
#endif
