//! The write schema: inference, overrides and columns.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use rntuple_format::model::{ColumnType, StructuralRole};
use rntuple_format::Result;

use crate::write::options::{FieldOverride, RealEncoding, WriteOptions};
use crate::write::plan::Plan;

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
