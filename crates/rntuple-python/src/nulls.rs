//! Nullability inference, the writer's input policy for data whose Arrow
//! schema marks almost every field nullable (pyarrow tables, pandas,
//! Parquet): a field is written as `std::optional` only where its data
//! hold nulls. Paths are dotted on-disk names (`"jets._0.pt"`; `_0` for the
//! items of lists, `_0._0` / `_0._1` for the keys / values of maps).

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, OffsetSizeTrait};
use arrow_schema::{DataType, Field, Fields, Schema};
use pyo3::prelude::*;
use pyo3_arrow::{PyArray, PySchema};

/// Marks the children `[offsets[i], offsets[i + 1])` of every counted, valid entry `i`.
fn items<O: OffsetSizeTrait>(offsets: &[O], array: &dyn Array, counted: &[bool], len: usize) -> Vec<bool> {
    let mut out = vec![false; len];
    for (i, w) in offsets.windows(2).enumerate() {
        if counted[i] && array.is_valid(i) {
            let (a, b) = (w[0].as_usize().min(len), w[1].as_usize().min(len));
            out[a..b.max(a)].iter_mut().for_each(|x| *x = true);
        }
    }
    out
}

/// Adds `path` and the paths below it where a counted element (one under
/// valid parents) is null.
fn walk(array: &dyn Array, counted: &[bool], path: &str, out: &mut BTreeSet<String>) {
    if array.null_count() > 0 && (0..array.len()).any(|i| counted[i] && array.is_null(i)) {
        out.insert(path.to_string());
    }
    let item = format!("{path}._0");
    match array.data_type() {
        DataType::List(_) => {
            let l = array.as_list::<i32>();
            let c = items(l.value_offsets(), array, counted, l.values().len());
            walk(l.values().as_ref(), &c, &item, out);
        }
        DataType::LargeList(_) => {
            let l = array.as_list::<i64>();
            let c = items(l.value_offsets(), array, counted, l.values().len());
            walk(l.values().as_ref(), &c, &item, out);
        }
        DataType::FixedSizeList(_, size) => {
            let l = array.as_fixed_size_list();
            let size = usize::try_from(*size).unwrap_or_default();
            let offsets: Vec<i64> = (0..=array.len()).map(|i| (i * size) as i64).collect();
            let c = items(&offsets, array, counted, l.values().len());
            walk(l.values().as_ref(), &c, &item, out);
        }
        DataType::Map(_, _) => {
            let m = array.as_map();
            let c = items(m.value_offsets(), array, counted, m.keys().len());
            walk(m.keys().as_ref(), &c, &format!("{item}._0"), out);
            walk(m.values().as_ref(), &c, &format!("{item}._1"), out);
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            for (f, child) in fields.iter().zip(s.columns()) {
                walk(child.as_ref(), counted, &format!("{path}.{}", f.name()), out);
            }
        }
        _ => {}
    }
}

/// `field` nullable only where `nulls` lists its path, and so on down
/// (into the keys and values of maps only with `maps`).
fn tighten(field: &Field, path: &str, nulls: &BTreeSet<String>, maps: bool) -> Field {
    let item = format!("{path}._0");
    let down = |f: &Field, p: &str| tighten(f, p, nulls, maps);
    let dt = match field.data_type() {
        DataType::List(f) => DataType::List(Arc::new(down(f, &item))),
        DataType::LargeList(f) => DataType::LargeList(Arc::new(down(f, &item))),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(Arc::new(down(f, &item)), *n),
        DataType::Map(entries, sorted) if maps => {
            let tightened = match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => {
                    let kv: Fields = [down(&kv[0], &format!("{item}._0")), down(&kv[1], &format!("{item}._1"))]
                        .into_iter()
                        .collect();
                    entries.as_ref().clone().with_data_type(DataType::Struct(kv))
                }
                _ => entries.as_ref().clone(),
            };
            DataType::Map(Arc::new(tightened), *sorted)
        }
        DataType::Struct(members) => {
            DataType::Struct(members.iter().map(|m| down(m, &format!("{path}.{}", m.name()))).collect())
        }
        other => other.clone(),
    };
    field.clone().with_data_type(dt).with_nullable(field.is_nullable() && nulls.contains(path))
}

/// Paths of `array` (named `path`) and of its subfields whose values hold
/// nulls under valid parents.
#[pyfunction]
pub(crate) fn null_paths(array: PyArray, path: &str) -> BTreeSet<String> {
    let array = array.array();
    let mut out = BTreeSet::new();
    walk(array.as_ref(), &vec![true; array.len()], path, &mut out);
    out
}

/// `schema` with every field nullable only where `nulls` (from
/// [`null_paths`]) lists it; metadata kept. The writer leaves the keys and
/// values of maps as declared; a Parquet conversion (`maps`) tightens them
/// too, so that a map comes back with the types it went in with.
#[pyfunction]
#[pyo3(signature = (schema, nulls, maps = false))]
pub(crate) fn tighten_schema(schema: PySchema, nulls: BTreeSet<String>, maps: bool) -> PySchema {
    let schema = schema.into_inner();
    let fields: Vec<Field> = schema.fields().iter().map(|f| tighten(f, f.name(), &nulls, maps)).collect();
    PySchema::new(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}
