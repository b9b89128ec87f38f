//! C++ type names parsed into the shapes RNTuple knows (spec "Mapping of
//! C++ Types to Fields and Columns"): the writer parses the names users give
//! (`rntuple::write::FieldOverride::type_name`, projections), the reader's
//! classification the names it finds on disk. Template arguments are
//! re-spelled from the parsed form ([`CppType::normalized`]), so the names
//! written follow the spec's normalization ("Type Name Normalization")
//! whatever spacing or aliases (`int`, `ROOT::RVec`) the user wrote.

use rntuple_format::{Error, Result};

use super::typename::split_template;
use super::Primitive;

/// A parsed C++ type.
#[derive(Debug, Clone, PartialEq)]
pub enum CppType {
    /// A fundamental type; `double32` for ROOT's `Double32_t`.
    Prim {
        prim: Primitive,
        double32: bool,
    },
    String,
    /// A vector-like collection; `tmpl` is the normalized template name.
    Vector {
        tmpl: &'static str,
        item: Box<CppType>,
    },
    /// `std::optional` / `std::unique_ptr`.
    Optional {
        tmpl: &'static str,
        item: Box<CppType>,
    },
    Array {
        size: u64,
        item: Box<CppType>,
    },
    Variant(Vec<CppType>),
    /// `std::(unordered_)(multi)map<K,V>`: a collection of `std::pair<K,V>`;
    /// `tmpl` is the normalized template name.
    Map {
        tmpl: &'static str,
        key: Box<CppType>,
        value: Box<CppType>,
    },
    /// `std::pair` / `std::tuple`.
    Tuple {
        tmpl: &'static str,
        items: Vec<CppType>,
    },
    /// Any other name: a user class (typed record).
    Class(String),
    /// `ROOT::RNTupleCardinality<SizeT>` (`wide`: `SizeT` is `std::uint64_t`):
    /// the sizes of a collection, only as a projected field (spec
    /// "ROOT::RNTupleCardinality<SizeT>").
    Cardinality {
        wide: bool,
    },
    /// `std::bitset<N>`: a repetitive leaf with a `Bit` column (spec "std::bitset<N>").
    Bitset(u64),
    /// `std::atomic<T>`: a leaf without columns whose subfield `_0` is the
    /// `T` (spec "std::atomic<T>").
    Atomic(Box<CppType>),
}

/// `tmpl<a,b,…suffix>` from the `(type name, type alias)` of the template
/// arguments, and the alias spelled with the arguments' aliases when any has
/// one (spec "Type Name Normalization": the alias keeps `Double32_t`), else
/// empty.
pub fn template_spelling<'a>(
    tmpl: &str,
    args: impl Iterator<Item = (&'a str, &'a str)> + Clone,
    suffix: &str,
) -> (String, String) {
    let names: Vec<&str> = args.clone().map(|(t, _)| t).collect();
    let type_name = format!("{tmpl}<{}{suffix}>", names.join(","));
    let alias = if args.clone().any(|(_, a)| !a.is_empty()) {
        let names: Vec<&str> = args.map(|(t, a)| if a.is_empty() { t } else { a }).collect();
        format!("{tmpl}<{}{suffix}>", names.join(","))
    } else {
        String::new()
    };
    (type_name, alias)
}

fn invalid(name: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("cannot use C++ type '{name}': {why}"))
}

fn one_arg<'a>(name: &str, args: &[&'a str]) -> Result<&'a str> {
    match args {
        [a] => Ok(a),
        _ => Err(invalid(name, format!("expected one template argument, found {}", args.len()))),
    }
}

/// The size argument of `std::array` / `std::bitset` (1 to 2³¹ − 1).
fn parse_size(name: &str, size: &str) -> Result<u64> {
    let n: u64 = size
        .trim_end_matches(['u', 'U', 'l', 'L'])
        .parse()
        .map_err(|_| invalid(name, format!("size '{size}' is not a number")))?;
    if n == 0 || n > i32::MAX as u64 {
        return Err(invalid(name, format!("size {n} is out of range")));
    }
    Ok(n)
}

/// Parses a C++ type name.
pub fn parse(name: &str) -> Result<CppType> {
    let name = name.trim();
    let name = name.strip_prefix("::").unwrap_or(name);
    if name.is_empty() {
        return Err(invalid(name, "empty type name"));
    }
    if let Some((tmpl, args)) = split_template(name) {
        let tmpl = tmpl.strip_prefix("::").unwrap_or(tmpl);
        let vector = match tmpl {
            "std::vector" => Some("std::vector"),
            "ROOT::VecOps::RVec" | "ROOT::RVec" => Some("ROOT::VecOps::RVec"),
            "std::set" => Some("std::set"),
            "std::multiset" => Some("std::multiset"),
            "std::unordered_set" => Some("std::unordered_set"),
            "std::unordered_multiset" => Some("std::unordered_multiset"),
            _ => None,
        };
        if let Some(tmpl) = vector {
            let item = parse(one_arg(name, &args)?)?;
            return Ok(CppType::Vector { tmpl, item: Box::new(item) });
        }
        let map = match tmpl {
            "std::map" => Some("std::map"),
            "std::multimap" => Some("std::multimap"),
            "std::unordered_map" => Some("std::unordered_map"),
            "std::unordered_multimap" => Some("std::unordered_multimap"),
            _ => None,
        };
        if let Some(tmpl) = map {
            let [key, value] = args[..] else {
                return Err(invalid(name, format!("{tmpl} takes two template arguments")));
            };
            return Ok(CppType::Map { tmpl, key: Box::new(parse(key)?), value: Box::new(parse(value)?) });
        }
        return match tmpl {
            "ROOT::RNTupleCardinality" | "ROOT::Experimental::RNTupleCardinality" => {
                match Primitive::from_type_name(one_arg(name, &args)?) {
                    Some(Primitive::U32) => Ok(CppType::Cardinality { wide: false }),
                    Some(Primitive::U64) => Ok(CppType::Cardinality { wide: true }),
                    _ => Err(invalid(name, "the size type of a cardinality is std::uint32_t or std::uint64_t")),
                }
            }
            "std::bitset" => {
                let size = parse_size(name, one_arg(name, &args)?)?;
                Ok(CppType::Bitset(size))
            }
            "std::optional" | "std::unique_ptr" => {
                let tmpl = if tmpl == "std::optional" { "std::optional" } else { "std::unique_ptr" };
                let item = parse(one_arg(name, &args)?)?;
                if matches!(item, CppType::Optional { .. }) {
                    return Err(invalid(name, "an optional of an optional cannot be written from Arrow data"));
                }
                Ok(CppType::Optional { tmpl, item: Box::new(item) })
            }
            "std::atomic" => {
                let item = parse(one_arg(name, &args)?)?;
                if matches!(item, CppType::Atomic(_)) {
                    return Err(invalid(name, "an atomic of an atomic is not a C++ type"));
                }
                Ok(CppType::Atomic(Box::new(item)))
            }
            "std::array" => {
                let [item, size] = args[..] else {
                    return Err(invalid(name, "std::array takes two template arguments"));
                };
                let size = parse_size(name, size)?;
                Ok(CppType::Array { size, item: Box::new(parse(item)?) })
            }
            "std::variant" => {
                if args.is_empty() || args.len() > 125 {
                    return Err(invalid(name, "a variant has 1 to 125 alternatives (spec \"std::variant\")"));
                }
                Ok(CppType::Variant(args.iter().map(|a| parse(a)).collect::<Result<_>>()?))
            }
            "std::pair" | "std::tuple" => {
                if tmpl == "std::pair" && args.len() != 2 {
                    return Err(invalid(name, "std::pair takes two template arguments"));
                }
                let tmpl = if tmpl == "std::pair" { "std::pair" } else { "std::tuple" };
                Ok(CppType::Tuple { tmpl, items: args.iter().map(|a| parse(a)).collect::<Result<_>>()? })
            }
            t if t.starts_with("std::") => Err(invalid(name, format!("'{t}' cannot be written from Arrow data"))),
            _ => Ok(CppType::Class(name.to_string())),
        };
    }
    match name {
        "std::string" | "string" => return Ok(CppType::String),
        "Double32_t" => return Ok(CppType::Prim { prim: Primitive::F64, double32: true }),
        _ => {}
    }
    if let Some(prim) = Primitive::from_type_name(name) {
        return Ok(CppType::Prim { prim, double32: false });
    }
    if name.starts_with("std::") || name.contains(['<', '>', ',', '[', '*', '&']) {
        return Err(invalid(name, "not a type this writer can produce from Arrow data"));
    }
    if !name.split("::").all(|part| {
        let mut c = part.chars();
        c.next().is_some_and(|f| f.is_alphabetic() || f == '_') && c.all(|ch| ch.is_alphanumeric() || ch == '_')
    }) {
        return Err(invalid(name, "not a C++ class name"));
    }
    Ok(CppType::Class(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_writable_types() {
        assert_eq!(parse("int").unwrap(), CppType::Prim { prim: Primitive::I32, double32: false });
        assert_eq!(parse("Double32_t").unwrap(), CppType::Prim { prim: Primitive::F64, double32: true });
        let v = parse("ROOT::RVec< std::optional<float> >").unwrap();
        let CppType::Vector { tmpl, item } = v else { panic!("{v:?}") };
        assert_eq!(tmpl, "ROOT::VecOps::RVec");
        assert!(matches!(*item, CppType::Optional { tmpl: "std::optional", .. }));
        assert!(matches!(parse("std::array<char, 4>").unwrap(), CppType::Array { size: 4, .. }));
        assert!(matches!(parse("std::variant<int,std::string>").unwrap(), CppType::Variant(v) if v.len() == 2));
        assert_eq!(parse("ns::Muon").unwrap(), CppType::Class("ns::Muon".into()));
        let m = parse("std::unordered_map<std::string, float>").unwrap();
        assert!(matches!(m, CppType::Map { tmpl: "std::unordered_map", .. }), "{m:?}");
        assert_eq!(parse("ROOT::RNTupleCardinality<std::uint32_t>").unwrap(), CppType::Cardinality { wide: false });
        assert_eq!(parse("ROOT::RNTupleCardinality<unsigned long>").unwrap(), CppType::Cardinality { wide: true });
        assert_eq!(parse("std::bitset<12>").unwrap(), CppType::Bitset(12));
        let a = parse("std::atomic< int >").unwrap();
        assert_eq!(a, CppType::Atomic(Box::new(CppType::Prim { prim: Primitive::I32, double32: false })));
        assert!(matches!(parse("std::vector<std::atomic<float>>").unwrap(), CppType::Vector { .. }));
        for bad in [
            "",
            "std::map<int>",
            "ROOT::RNTupleCardinality<int>",
            "std::bitset<0>",
            "std::optional<std::optional<int>>",
            "float*",
            "std::array<int,x>",
            "std::atomic<std::atomic<int>>",
            "std::atomic<int,int>",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
