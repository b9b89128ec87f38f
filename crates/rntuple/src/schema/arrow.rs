//! The one mapping between composite C++ types and Arrow types (spec
//! "Mapping of C++ Types to Fields and Columns"), owned here for the reader
//! ([`FieldNode::arrow_type`](super::FieldNode::arrow_type)) and the writer's
//! inference (`write::infer`). Fundamental types map through
//! [`Primitive`](super::Primitive); `std::string` is `LargeUtf8` (written
//! from `Utf8` too).
//!
//! ```text
//! C++ field                          read as                      written from
//! collection (std::vector, RVec, …)  LargeList<_0>                List, LargeList   -> std::vector<T>
//! std::map, std::unordered_map       LargeList<Struct{_0, _1}>    Map               -> std::map<K,V>
//! std::optional, std::unique_ptr     the value, nullable          a nullable value
//! std::array<T,N>                    FixedSizeList<_0>[N]         FixedSizeList[N]  -> std::array<T,N>
//! std::bitset<N>                     FixedSizeList<bool>[N]       (overrides only)
//! record (class, pair, tuple)        Struct                       Struct            -> untyped record
//! std::variant<A, B, …>              dense Union, ids 0..n        Union             -> std::variant<…>
//! ```

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, UnionFields, UnionMode};

/// A composite Arrow type as the C++ composite it is written as.
#[derive(Debug, Clone, Copy)]
pub enum Composite<'a> {
    /// `List` / `LargeList`: a collection of its item.
    Collection { item: &'a FieldRef },
    /// `Map`: a collection of `std::pair`s of the entries' members.
    Map { entries: &'a Fields },
    /// `FixedSizeList`: `std::array` of `size` items (`size` as Arrow stores it).
    Array { item: &'a FieldRef, size: i32 },
    /// `Struct`: a record of its members.
    Record { members: &'a Fields },
    /// `Union`: a `std::variant` of its members, by type id.
    Variant { alternatives: &'a UnionFields },
}

impl<'a> Composite<'a> {
    /// The composite `dt` is written as; `None` for other types (and a map
    /// whose entries are not a struct).
    pub fn of_arrow(dt: &'a DataType) -> Option<Self> {
        Some(match dt {
            DataType::List(item) | DataType::LargeList(item) => Composite::Collection { item },
            DataType::Map(entries, _) => match entries.data_type() {
                DataType::Struct(entries) => Composite::Map { entries },
                _ => return None,
            },
            DataType::FixedSizeList(item, size) => Composite::Array { item, size: *size },
            DataType::Struct(members) => Composite::Record { members },
            DataType::Union(alternatives, _) => Composite::Variant { alternatives },
            _ => return None,
        })
    }

    /// The C++ template written for it (`""` for an untyped record).
    pub fn template(&self) -> &'static str {
        match self {
            Composite::Collection { .. } => "std::vector",
            Composite::Map { .. } => "std::map",
            Composite::Array { .. } => "std::array",
            Composite::Record { .. } => "",
            Composite::Variant { .. } => "std::variant",
        }
    }
}

/// Arrow type a collection of `item` is read as.
pub fn collection_type(item: Field) -> DataType {
    DataType::LargeList(Arc::new(item))
}

/// Arrow type a `std::array<T,N>` (or `std::bitset<N>` of booleans) is read as.
pub fn array_type(item: Field, size: u64) -> DataType {
    DataType::FixedSizeList(Arc::new(item), i32::try_from(size).unwrap_or(i32::MAX))
}

/// Arrow type a `std::bitset<N>` is read as.
pub fn bitset_type(size: u64) -> DataType {
    array_type(Field::new("_0", DataType::Boolean, false), size)
}

/// Arrow type a record of `members` is read as.
pub fn record_type(members: impl IntoIterator<Item = Field>) -> DataType {
    DataType::Struct(members.into_iter().map(Arc::new).collect())
}

/// Arrow type a `std::variant` of `alternatives` is read as: a dense union
/// with type ids `0..n` in alternative order, every member nullable; `Null`
/// when there are more alternatives than type ids.
pub fn variant_type(alternatives: impl IntoIterator<Item = Field>) -> DataType {
    let fields: Vec<Field> = alternatives.into_iter().map(|f| f.with_nullable(true)).collect();
    let Ok(n) = i8::try_from(fields.len()) else { return DataType::Null };
    match UnionFields::try_new(0..n, fields) {
        Ok(u) => DataType::Union(u, UnionMode::Dense),
        Err(_) => DataType::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_composites_read_back_as_the_reader_types() {
        let item = Field::new("_0", DataType::Float32, false);
        let list = DataType::List(Arc::new(item.clone()));
        let Some(c @ Composite::Collection { item: got }) = Composite::of_arrow(&list) else { panic!("{list}") };
        assert_eq!(
            (c.template(), collection_type(got.as_ref().clone())),
            ("std::vector", DataType::LargeList(Arc::new(item.clone())))
        );
        let fixed = DataType::FixedSizeList(Arc::new(item.clone()), 3);
        assert!(matches!(Composite::of_arrow(&fixed), Some(Composite::Array { size: 3, .. })));
        assert_eq!(array_type(item.clone(), 3), fixed);
        assert_eq!(bitset_type(2), DataType::FixedSizeList(Arc::new(Field::new("_0", DataType::Boolean, false)), 2));
        let v = variant_type([item.clone(), Field::new("_1", DataType::Int32, false)]);
        let DataType::Union(u, UnionMode::Dense) = &v else { panic!("{v}") };
        assert_eq!(u.iter().map(|(id, f)| (id, f.is_nullable())).collect::<Vec<_>>(), vec![(0, true), (1, true)]);
        assert_eq!(variant_type((0..200).map(|i| Field::new(format!("_{i}"), DataType::Int8, false))), DataType::Null);
        let map = DataType::Map(Arc::new(Field::new("entries", DataType::Int32, false)), false);
        assert!(Composite::of_arrow(&map).is_none());
        assert!(Composite::of_arrow(&DataType::Int32).is_none());
    }
}
