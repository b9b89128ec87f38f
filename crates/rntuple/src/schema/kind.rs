//! Classification of a field by structural role, flags and type name
//! (spec "Mapping of C++ Types to Fields and Columns").

use super::cpp::{parse, CppType};
use super::typename::template_name;
use super::Primitive;
use rntuple_format::model::{FieldDescriptor, StructuralRole, FIELD_FLAG_REPETITIVE};

/// How a field is read.
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
    /// Classifies a field. `num_children` is the number of direct subfields,
    /// `has_columns` whether any column is attached.
    pub fn classify(f: &FieldDescriptor, num_children: usize, has_columns: bool) -> FieldKind {
        let tname = f.type_name.trim();
        // The flag is derived from the array size when written (a plan has no flags yet).
        if f.flags & FIELD_FLAG_REPETITIVE != 0 || f.array_size.is_some() {
            let size = f.array_size.unwrap_or(0);
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
