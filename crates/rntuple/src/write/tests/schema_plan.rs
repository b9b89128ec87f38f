//! The write schema: inference, overrides and columns.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use rntuple_format::model::{ColumnType, StructuralRole};
use rntuple_format::Result;

use crate::write::model::Plan;
use crate::write::options::{FieldOverride, RealEncoding, WriteOptions};

fn plan(fields: Vec<Field>, ov: &[(&str, FieldOverride)], options: WriteOptions) -> Result<Plan> {
    let ov: HashMap<String, FieldOverride> = ov.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Plan::new(&ArrowSchema::new(fields), &ov, &options)
}

fn names(p: &Plan) -> Vec<(String, String, u32)> {
    p.schema.fields.iter().map(|f| (f.name.clone(), f.type_name.clone(), f.parent_id)).collect()
}

#[test]
fn infers_root_types_in_preorder() {
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let p = plan(
        vec![
            Field::new("x", DataType::Int16, false),
            Field::new("v", DataType::LargeList(item.clone()), false),
            Field::new("o", DataType::Float64, true),
            Field::new("s", DataType::Utf8, false),
            Field::new("a", DataType::FixedSizeList(item, 3), false),
        ],
        &[],
        WriteOptions::default(),
    )
    .unwrap();
    let n = names(&p);
    assert_eq!(n[0], ("x".into(), "std::int16_t".into(), 0));
    assert_eq!(n[1], ("v".into(), "std::vector<float>".into(), 1));
    assert_eq!(n[2], ("_0".into(), "float".into(), 1));
    assert_eq!(n[3], ("o".into(), "std::optional<double>".into(), 3));
    assert_eq!(n[5], ("s".into(), "std::string".into(), 5));
    assert_eq!(n[6], ("a".into(), "std::array<float,3>".into(), 6));
    assert_eq!(p.schema.fields[6].array_size, Some(3));
    let types: Vec<ColumnType> = p.schema.columns.iter().map(|c| c.column_type).collect();
    use ColumnType as T;
    assert_eq!(
        types,
        [
            T::SplitInt16,
            T::SplitIndex64,
            T::SplitReal32,
            T::SplitIndex64,
            T::SplitReal64,
            T::SplitIndex64,
            T::Char,
            T::SplitReal32
        ]
    );
    let plain =
        plan(vec![Field::new("x", DataType::Int16, false)], &[], WriteOptions { compression: 0, ..Default::default() })
            .unwrap();
    assert_eq!(plain.schema.columns[0].column_type, T::Int16);
}

#[test]
fn structs_are_untyped_where_the_spec_allows() {
    let s = DataType::Struct(vec![Field::new("pt", DataType::Float32, false)].into());
    let p = plan(
        vec![Field::new("jets", DataType::List(Arc::new(Field::new("item", s.clone(), true))), false)],
        &[],
        WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(names(&p)[0].1, "");
    assert_eq!(names(&p)[1].1, "");
    assert_eq!(names(&p)[2], ("pt".into(), "float".into(), 1));
    // Below std::array a struct needs a name.
    let e = plan(
        vec![Field::new("a", DataType::FixedSizeList(Arc::new(Field::new("i", s.clone(), false)), 2), false)],
        &[],
        WriteOptions::default(),
    );
    assert!(e.is_err());
    let ok = plan(
        vec![Field::new("a", DataType::FixedSizeList(Arc::new(Field::new("i", s.clone(), false)), 2), false)],
        &[("a._0", FieldOverride::type_name("Jet"))],
        WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(names(&ok)[0].1, "std::array<Jet,2>");
    // A nullable top-level struct stays untyped and not optional.
    let p = plan(vec![Field::new("s", s, true)], &[], WriteOptions::default()).unwrap();
    assert_eq!(p.schema.fields[0].role, StructuralRole::Record);
}

#[test]
fn overrides_shape_types_and_columns() {
    let item = Arc::new(Field::new("item", DataType::Float64, true));
    let p = plan(
        vec![
            Field::new("v", DataType::List(item), false),
            Field::new("o", DataType::Float32, true),
            Field::new("c", DataType::Int8, false),
        ],
        &[
            (
                "v",
                FieldOverride {
                    type_name: Some("ROOT::RVec<Double32_t>".into()),
                    index32: Some(true),
                    ..Default::default()
                },
            ),
            (
                "o",
                FieldOverride {
                    type_name: Some("float".into()),
                    real: Some(RealEncoding::Real16),
                    ..Default::default()
                },
            ),
            ("c", FieldOverride::type_name("char")),
        ],
        WriteOptions::default(),
    )
    .unwrap();
    let f = &p.schema.fields;
    assert_eq!(
        (f[0].type_name.as_str(), f[0].type_alias.as_str()),
        ("ROOT::VecOps::RVec<double>", "ROOT::VecOps::RVec<Double32_t>")
    );
    assert_eq!(f[1].type_alias, "Double32_t");
    assert_eq!(f[2].type_name, "float");
    assert_eq!(f[3].type_name, "char");
    let c: Vec<ColumnType> = p.schema.columns.iter().map(|c| c.column_type).collect();
    assert_eq!(c, [ColumnType::SplitIndex32, ColumnType::SplitReal32, ColumnType::Real16, ColumnType::Char]);
    assert!(plan(
        vec![Field::new("x", DataType::Int32, false)],
        &[("y", FieldOverride::type_name("int"))],
        WriteOptions::default()
    )
    .is_err());
    assert!(plan(
        vec![Field::new("x", DataType::Int32, false)],
        &[("x", FieldOverride::type_name("float"))],
        WriteOptions::default()
    )
    .is_err());
    assert!(plan(vec![Field::new("a.b", DataType::Int32, false)], &[], WriteOptions::default()).is_err());
}

/// (name, type name, role, parent, number of columns, type version, checksum) per field.
type FieldRow = (String, String, StructuralRole, u32, usize, u32, Option<u32>);

fn field_rows(p: &Plan) -> Vec<FieldRow> {
    p.schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ncols = p.schema.columns.iter().filter(|c| c.field_id == i as u32).count();
            (f.name.clone(), f.type_name.clone(), f.role, f.parent_id, ncols, f.type_version, f.type_checksum)
        })
        .collect()
}

#[test]
fn atomics_and_enums_are_leaves_without_columns_over_their_value() {
    use StructuralRole::{Collection, Leaf, Record};
    let item = Arc::new(Field::new("item", DataType::Float32, false));
    let p = plan(
        vec![
            Field::new("a", DataType::Int32, false),
            Field::new("va", DataType::List(item), false),
            Field::new("e8", DataType::Int8, false),
            Field::new("eu", DataType::UInt64, false),
            Field::new("k", DataType::Struct(vec![Field::new("x", DataType::Int32, false)].into()), false),
        ],
        &[
            ("a", FieldOverride::type_name("std::atomic<int>")),
            ("va", FieldOverride::type_name("std::vector<std::atomic<float>>")),
            ("e8", FieldOverride::type_name("ns::E8").type_version(2)),
            ("eu", FieldOverride::type_name("EU")),
            ("k", FieldOverride::type_name("Klass").type_version(3).type_checksum(0xcafe)),
        ],
        WriteOptions::default(),
    )
    .unwrap();
    let r = |n: &str, t: &str, role, parent, cols, tv, cs| (n.to_string(), t.to_string(), role, parent, cols, tv, cs);
    assert_eq!(
        field_rows(&p),
        vec![
            r("a", "std::atomic<std::int32_t>", Leaf, 0, 0, 0, None),
            r("_0", "std::int32_t", Leaf, 0, 1, 0, None),
            r("va", "std::vector<std::atomic<float>>", Collection, 2, 1, 0, None),
            r("_0", "std::atomic<float>", Leaf, 2, 0, 0, None),
            r("_0", "float", Leaf, 3, 1, 0, None),
            // ROOT spells the std::int8_t underlying an enum `char` (with a Char column).
            r("e8", "ns::E8", Leaf, 5, 0, 2, None),
            r("_0", "char", Leaf, 5, 1, 0, None),
            r("eu", "EU", Leaf, 7, 0, 0, None),
            r("_0", "std::uint64_t", Leaf, 7, 1, 0, None),
            r("k", "Klass", Record, 9, 0, 3, Some(0xcafe)),
            r("x", "std::int32_t", Leaf, 9, 1, 0, None),
        ]
    );
    let types: Vec<ColumnType> = p.schema.columns.iter().map(|c| c.column_type).collect();
    use ColumnType as T;
    assert_eq!(types, [T::SplitInt32, T::SplitIndex64, T::SplitReal32, T::Char, T::SplitUInt64, T::SplitInt32]);
    // The reader's model of the plan: atomics and enums are wrappers.
    let tree = p.tree().unwrap();
    assert_eq!(tree.field("a").unwrap().kind, crate::schema::FieldKind::Wrapper);
    assert_eq!(tree.field("k").unwrap().type_version, 3);
    assert_eq!(tree.field("k").unwrap().type_checksum, Some(0xcafe));
}

#[test]
fn type_versions_belong_to_classes_and_enums() {
    let f = || vec![Field::new("x", DataType::Int32, false)];
    for (t, ok) in [("Klass", true), ("std::int32_t", false), ("std::atomic<int>", false)] {
        let r = plan(f(), &[("x", FieldOverride::type_name(t).type_version(1))], WriteOptions::default());
        assert_eq!(r.is_ok(), ok, "{t}: {r:?}");
    }
    let untyped = plan(
        vec![Field::new("s", DataType::Struct(vec![Field::new("x", DataType::Int32, false)].into()), false)],
        &[("s", FieldOverride::default().type_checksum(1))],
        WriteOptions::default(),
    );
    assert!(untyped.unwrap_err().to_string().contains("untyped field"));
    // An enum needs integers: a class name over floats says what it wanted.
    let e = plan(
        vec![Field::new("x", DataType::Float32, false)],
        &[("x", FieldOverride::type_name("E"))],
        Default::default(),
    );
    assert!(e.unwrap_err().to_string().contains("enum E (integers)"));
}

/// One model for both engines: the tree of the writer's plan
/// ([`Plan::tree`]) is the tree the reader builds from the header written.
#[test]
fn the_plans_tree_is_what_the_reader_builds() {
    use crate::schema::{FieldKind, FieldNode, Schema};
    let b = super::root_model(10);
    let ov: HashMap<String, FieldOverride> = [
        ("i8".to_string(), FieldOverride::type_name("std::atomic<std::int8_t>")),
        ("u64".to_string(), FieldOverride::type_name("EBig").type_version(1)),
    ]
    .into();
    let p = Plan::new(&b.schema(), &ov, &WriteOptions::default()).unwrap();
    let mut sink = super::MemorySink::new(1 << 30);
    super::write(&mut sink, std::slice::from_ref(&b), &ov, WriteOptions::default());
    let (header, _, _) = sink.read("t");
    type Row = (String, String, FieldKind, u32, Option<u32>, Option<u64>, Vec<Vec<u32>>);
    let rows = |s: &Schema| -> Vec<Row> {
        let mut all: Vec<(String, &FieldNode)> = Vec::new();
        for f in &s.fields {
            f.walk("", &mut all);
        }
        all.into_iter()
            .map(|(path, f)| {
                let r = f.representations.clone();
                (path, f.type_name.clone(), f.kind.clone(), f.type_version, f.type_checksum, f.array_size, r)
            })
            .collect()
    };
    let planned = rows(&p.tree().unwrap());
    assert_eq!(planned, rows(&Schema::from_description(&header.schema).unwrap()));
    let kinds: Vec<(&str, &FieldKind)> = planned.iter().map(|r| (r.0.as_str(), &r.2)).collect();
    assert!(kinds.contains(&("i8", &FieldKind::Wrapper)) && kinds.contains(&("u64", &FieldKind::Wrapper)));
    assert!(kinds.contains(&("o", &FieldKind::Collection { nullable: true })));
    assert!(kinds.contains(&("a", &FieldKind::Array { size: 3 })));
}
