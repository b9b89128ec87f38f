//! Classification of a field by structural role, flags and type name
//! (spec "Mapping of C++ Types to Fields and Columns").

use super::cpp::{parse, CppType};
use super::typename::template_name;
use super::Primitive;
use rntuple_format::model::{FieldDescriptor, StructuralRole, FIELD_FLAG_REPETITIVE};

/// How a field is read and written: the one classification of the reader's
/// field tree ([`super::FieldNode`]) and the writer's plan
/// (`crate::write::plan::PlanField`). The writer builds every kind but
/// `Cardinality` (projected fields only), `Streamer` and `Unsupported`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// A fundamental type: one column per representation.
    Primitive(Primitive),
    /// `std::string`: index column + char column.
    String,
    /// `ROOT::RNTupleCardinality<SizeT>`: an index column presented as sizes.
    Cardinality { wide: bool },
    /// A streamer field: index column + byte column, one byte string per entry.
    Streamer,
    /// Vector-like collection (vector, RVec, sets, maps, proxies, untyped);
    /// `nullable` for `std::optional` / `std::unique_ptr` (zero or one element).
    Collection { nullable: bool },
    /// `std::array<T,N>` / `T[N]`: repetitive field with one subfield.
    Array { size: u64 },
    /// `std::bitset<N>`: repetitive leaf with a Bit column.
    Bitset { size: u64 },
    /// Class, pair, tuple, untyped record.
    Record,
    /// `std::variant`: Switch column + alternatives.
    Variant,
    /// `std::atomic<T>`, enums: no columns, one subfield `_0` read in its place.
    Wrapper,
    /// A field this implementation cannot read (unknown role or type).
    Unsupported(String),
}

impl FieldKind {
    /// The structural role a field of this kind is written with (spec
    /// "Field Description"): the inverse of [`FieldKind::classify`];
    /// `None` for [`FieldKind::Unsupported`].
    pub fn role(&self) -> Option<StructuralRole> {
        Some(match self {
            FieldKind::Primitive(_)
            | FieldKind::String
            | FieldKind::Cardinality { .. }
            | FieldKind::Array { .. }
            | FieldKind::Bitset { .. }
            | FieldKind::Wrapper => StructuralRole::Leaf,
            FieldKind::Collection { .. } => StructuralRole::Collection,
            FieldKind::Record => StructuralRole::Record,
            FieldKind::Variant => StructuralRole::Variant,
            FieldKind::Streamer => StructuralRole::Streamer,
            FieldKind::Unsupported(_) => return None,
        })
    }

    /// The array size of a repetitive field (`std::array`, `std::bitset`;
    /// spec "Field Description").
    pub fn array_size(&self) -> Option<u64> {
        match self {
            FieldKind::Array { size } | FieldKind::Bitset { size } => Some(*size),
            _ => None,
        }
    }

    /// Classifies a field. `num_children` is the number of direct subfields,
    /// `has_columns` whether any column is attached.
    pub fn classify(f: &FieldDescriptor, num_children: usize, has_columns: bool) -> FieldKind {
        let tname = f.type_name.trim();
        // The flag is derived from the array size when written (a plan has no flags yet).
        if f.flags & FIELD_FLAG_REPETITIVE != 0 || f.array_size.is_some() {
            let size = f.array_size.unwrap_or(0);
            // The size a `std::array<T,N>` or `std::bitset<N>` type name states
            // must be the stored array size (spec "Field Description"): a
            // hostile size under a small type would make every entry huge.
            let stated = match parse(tname) {
                Ok(CppType::Array { size, .. }) | Ok(CppType::Bitset(size)) => Some(size),
                _ => None,
            };
            if let Some(n) = stated.filter(|&n| n != size) {
                return FieldKind::Unsupported(format!("array size {size} disagrees with type '{tname}' ({n})"));
            }
            return if num_children == 1 {
                FieldKind::Array { size }
            } else if num_children == 0 && has_columns {
                FieldKind::Bitset { size }
            } else {
                FieldKind::Unsupported(format!("repetitive field with {num_children} subfields"))
            };
        }
        match f.role {
            StructuralRole::Collection => {
                let t = template_name(tname);
                let nullable = matches!(t, "std::optional" | "std::unique_ptr");
                if num_children == 1 {
                    FieldKind::Collection { nullable }
                } else {
                    FieldKind::Unsupported(format!("collection with {num_children} subfields"))
                }
            }
            StructuralRole::Record => FieldKind::Record,
            StructuralRole::Variant => FieldKind::Variant,
            StructuralRole::Streamer => FieldKind::Streamer,
            StructuralRole::Leaf => {
                if !has_columns && num_children == 1 {
                    return FieldKind::Wrapper;
                }
                if tname == "std::string" {
                    return FieldKind::String;
                }
                if let Ok(CppType::Cardinality { wide }) = parse(tname) {
                    return FieldKind::Cardinality { wide };
                }
                match Primitive::from_type_name(tname) {
                    Some(p) => FieldKind::Primitive(p),
                    None => FieldKind::Unsupported(format!("leaf type '{tname}'")),
                }
            }
            StructuralRole::Unknown(r) => FieldKind::Unsupported(format!("structural role {r}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the writer declares for a kind (its role and array size) is
    /// classified back as that kind by the reader, for every kind the
    /// writer builds: one classification for both.
    #[test]
    fn written_kinds_classify_back() {
        let cases: [(FieldKind, &str, usize, bool); 11] = [
            (FieldKind::Primitive(Primitive::F64), "double", 0, true),
            (FieldKind::Primitive(Primitive::Char), "char", 0, true),
            (FieldKind::String, "std::string", 0, true),
            (FieldKind::Collection { nullable: false }, "std::vector<float>", 1, true),
            (FieldKind::Collection { nullable: false }, "", 1, true),
            (FieldKind::Collection { nullable: true }, "std::optional<float>", 1, true),
            (FieldKind::Collection { nullable: true }, "std::unique_ptr<float>", 1, true),
            (FieldKind::Array { size: 3 }, "std::array<float,3>", 1, false),
            (FieldKind::Bitset { size: 9 }, "std::bitset<9>", 0, true),
            (FieldKind::Record, "std::pair<int,float>", 2, false),
            (FieldKind::Variant, "std::variant<int,float>", 2, true),
        ];
        let more = [
            (FieldKind::Wrapper, "std::atomic<int>", 1, false),
            (FieldKind::Wrapper, "EnumInt8", 1, false),
            (FieldKind::Cardinality { wide: true }, "ROOT::RNTupleCardinality<std::uint64_t>", 0, true),
        ];
        for (kind, type_name, children, columns) in cases.into_iter().chain(more) {
            let Some(role) = kind.role() else { panic!("{kind:?} has no role") };
            let f = FieldDescriptor {
                field_version: 0,
                type_version: 0,
                parent_id: 0,
                role,
                flags: 0,
                name: "f".into(),
                type_name: type_name.into(),
                type_alias: String::new(),
                description: String::new(),
                array_size: kind.array_size(),
                source_field_id: None,
                type_checksum: None,
            };
            assert_eq!(FieldKind::classify(&f, children, columns), kind, "{type_name}");
        }
        assert_eq!(FieldKind::Unsupported("x".into()).role(), None);
    }

    /// A stored array size that disagrees with the size the type name states
    /// is refused (a fuzzed `std::bitset<42>` with a size of billions made a
    /// 3-entry dump write 9.6 GB); a `T[N]`-style name states none.
    #[test]
    fn array_size_must_agree_with_the_type_name() {
        let field = |type_name: &str, role, size| FieldDescriptor {
            field_version: 0,
            type_version: 0,
            parent_id: 0,
            role,
            flags: FIELD_FLAG_REPETITIVE,
            name: "f".into(),
            type_name: type_name.into(),
            type_alias: String::new(),
            description: String::new(),
            array_size: Some(size),
            source_field_id: None,
            type_checksum: None,
        };
        let bad = FieldKind::classify(&field("std::bitset<42>", StructuralRole::Leaf, 3_221_225_472), 0, true);
        assert!(matches!(&bad, FieldKind::Unsupported(m) if m.contains("disagrees")), "{bad:?}");
        let bad = FieldKind::classify(&field("std::array<float,3>", StructuralRole::Leaf, 4), 1, false);
        assert!(matches!(&bad, FieldKind::Unsupported(m) if m.contains("disagrees")), "{bad:?}");
        let ok = FieldKind::classify(&field("std::bitset<42>", StructuralRole::Leaf, 42), 0, true);
        assert_eq!(ok, FieldKind::Bitset { size: 42 });
        let ok = FieldKind::classify(&field("float[5]", StructuralRole::Leaf, 5), 1, false);
        assert_eq!(ok, FieldKind::Array { size: 5 });
    }
}
