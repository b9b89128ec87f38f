//! Hook of streamer fields into the writer ([`FieldOverride::streamer`]):
//! the field is first built as the split field of its class would be (so
//! that inference and overrides give every member its C++ type), then
//! turned into one streamer field (structural role 0x04, ROOT's
//! `RStreamerField`) with an index column and a byte column, whose entries
//! [`crate::streamer::Encoder`] streams; the classes' streamer infos go into
//! the footer's extra type information when the writer closes
//! ([`extra_type_info`]), as ROOT puts them there.
//!
//! [`FieldOverride::streamer`]: super::options::FieldOverride::streamer

use std::sync::Arc;

use arrow_array::Array;
use rntuple_format::model::ExtraTypeInfo;
use rntuple_format::{Error, Result};

use super::model::{node, PlanField};
use crate::schema::FieldKind;
use crate::streamer::{Class, Classes, Encoder, Entries, Member, Streamed, Ty};

/// `f` (built as a split field) as a streamer field of its class or
/// `std::vector` of a class.
pub(crate) fn convert(f: PlanField) -> Result<PlanField> {
    let err = |why: String| Error::invalid(format!("field '{}' as a streamer field: {why}", f.path));
    let mut classes = Classes::default();
    let top = ty(&f, &mut classes).map_err(err)?;
    let (type_version, checksum) = match &top {
        Ty::Class(c) => {
            let class = &classes.by_name[c];
            (if class.version < 0 { u32::MAX } else { class.version as u32 }, class.checksum)
        }
        Ty::Vector(item) if matches!(item.as_ref(), Ty::Class(_)) => {
            (crate::streamer::VECTOR_CLASS_VERSION, Classes::vector_checksum(item))
        }
        _ => {
            return Err(err(format!(
                "its type '{}' is not a class or a std::vector of a class (give the struct a class name in types)",
                f.type_name
            )))
        }
    };
    let first = match &top {
        Ty::Class(c) => c.clone(),
        Ty::Vector(item) => item.root_name(),
        _ => String::new(),
    };
    classes.bring_first(&first);
    let encoder = Encoder::new(top, classes).map_err(err)?;
    let mut out = node(&f.name, &f.path, FieldKind::Streamer, f.type_name.clone(), String::new(), Vec::new());
    out.type_version = type_version;
    out.type_checksum = Some(checksum);
    out.description = f.description.clone();
    out.split = f.split;
    out.index32 = f.index32;
    out.streamer = Some(Arc::new(Streamed::new(encoder)));
    Ok(out)
}

/// The type of plan field `f`, its classes added to `classes`.
fn ty(f: &PlanField, classes: &mut Classes) -> std::result::Result<Ty, String> {
    match &f.kind {
        FieldKind::Primitive(_) => Ty::basic(&f.type_name)
            .ok_or_else(|| format!("member '{}' of type '{}' is not written in a streamer field", f.path, f.type_name)),
        FieldKind::String => Ok(Ty::String),
        FieldKind::Collection { nullable: false } if f.type_name.starts_with("std::vector<") => {
            Ok(Ty::Vector(Box::new(ty(&f.children[0], classes)?)))
        }
        FieldKind::Record if !f.type_name.is_empty() && !f.type_name.starts_with("std::") => {
            let mut members = Vec::with_capacity(f.children.len());
            for c in &f.children {
                let base = c.name.starts_with(":_");
                let t = ty(c, classes)?;
                if base && !matches!(t, Ty::Class(_)) {
                    return Err(format!("base '{}' must be a class (a struct with a class name)", c.path));
                }
                let name = if base { c.type_name.clone() } else { c.name.clone() };
                members.push(Member { name, ty: t, base });
            }
            let version = if f.type_version == 0 { -1 } else { f.type_version as i32 };
            let class = Class { name: f.type_name.clone(), version, members, checksum: 0 };
            if let Some(old) = classes.by_name.get(&f.type_name) {
                if old.members != class.members || old.version != class.version {
                    return Err(format!("class {} is given two different layouts", f.type_name));
                }
            } else {
                classes.add(class, f.type_checksum);
            }
            Ok(Ty::Class(f.type_name.clone()))
        }
        _ => Err(format!(
            "member '{}' of type '{}' is not written in a streamer field (written: fundamentals, std::string, \
             std::vector and classes)",
            f.path,
            if f.type_name.is_empty() { "untyped record" } else { &f.type_name }
        )),
    }
}

/// Every class the streamer fields among `fields` reach, each once
/// ([`check_classes`] refused two layouts of one class when they were
/// planned).
pub(crate) fn classes_of(fields: &[PlanField]) -> Classes {
    let mut all = Classes::default();
    for e in fields.iter().filter_map(|f| f.streamer.as_ref()) {
        let _ = all.absorb(&e.classes);
    }
    all
}

/// The footer's extra type information for the streamer fields' classes
/// ([`classes_of`]): one record, content id 0 (streamer info), with the
/// `TList` of their `TStreamerInfo`; none without streamer fields.
pub(crate) fn extra_type_info(all: &Classes) -> Vec<ExtraTypeInfo> {
    if all.order.is_empty() {
        return Vec::new();
    }
    vec![ExtraTypeInfo { content_id: 0, type_version: 0, type_name: String::new(), content: all.streamer_info_list() }]
}

/// Lists the classes of the streamer infos among `infos` (extra type
/// information records of content id 0, as a footer carries them) in the
/// streamer-info record of `sink`'s file, as ROOT does (JSROOT looks classes
/// up there): for the tools that copy an RNTuple (`merge`, `update`,
/// `recover`). A list that cannot be re-placed
/// ([`crate::streamer::StreamerInfos::record_objects`]) is left out; the
/// returned warnings say which and why (readers of the footer, ROOT and
/// this project, are not affected).
pub fn list_streamer_classes<'a>(
    infos: impl IntoIterator<Item = &'a ExtraTypeInfo>,
    sink: &mut dyn super::BlobSink,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let streamer_infos = infos
        .into_iter()
        .filter(|e| e.content_id == rntuple_format::constants::EXTRA_TYPE_INFO_STREAMER_INFO && !e.content.is_empty());
    for e in streamer_infos {
        match crate::streamer::StreamerInfos::record_objects(&e.content) {
            Ok(objects) => objects.iter().for_each(|o| sink.add_class_streamer_info(&o.bytes)),
            Err(why) => warnings.push(format!(
                "streamer infos not listed in the file's streamer-info record (readers that look classes up \
                 there, such as JSROOT, cannot decode the streamer fields): {why}"
            )),
        }
    }
    warnings
}

/// The streamed bytes of entries `[a, b)` of `arr` for streamer field `f`
/// (from one streaming of the whole column, see [`Streamed`]).
pub(crate) fn entries(f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<Entries> {
    let e = f.streamer.as_ref().ok_or_else(|| super::model::unwritable(f))?;
    e.entries(arr, a, b)
        .map_err(|why| Error::invalid(format!("streamer field '{}' of class {}: {why}", f.path, f.type_name)))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use arrow_array::{ArrayRef, Float32Array, Int32Array, RecordBatch, StructArray};
    use arrow_schema::{DataType, Field, Fields, Schema};

    use super::*;
    use crate::write::{write_batches, FieldOverride, WriteOptions};
    use crate::RNTupleFile;

    /// Checking, sizing (a bisection per cluster) and appending a batch's
    /// entries stream each entry once, while clusters are cut inside it.
    #[test]
    fn each_entry_is_streamed_once_per_batch() {
        let n = 3000;
        let fields =
            Fields::from(vec![Field::new("x", DataType::Float32, false), Field::new("id", DataType::Int32, false)]);
        let schema = Arc::new(Schema::new(vec![Field::new("hit", DataType::Struct(fields.clone()), false)]));
        // Two batches of their own buffers (a clone would share them, and be
        // streamed once for both).
        let batch = || {
            let hits = StructArray::new(
                fields.clone(),
                vec![
                    Arc::new(Float32Array::from_iter_values((0..n).map(|i| i as f32))) as ArrayRef,
                    Arc::new(Int32Array::from_iter_values(0..n as i32)),
                ],
                None,
            );
            RecordBatch::try_new(schema.clone(), vec![Arc::new(hits)]).expect("batch")
        };
        let overrides = HashMap::from([(
            "hit".to_string(),
            FieldOverride { type_name: Some("P".into()), streamer: true, ..Default::default() },
        )]);
        let options = WriteOptions {
            approx_zipped_cluster_size: 4000,
            max_unzipped_cluster_size: 8000,
            max_unzipped_page_size: 4000,
            ..Default::default()
        };
        let path = std::env::temp_dir().join(format!("rntuple-streamed-once-{}.root", std::process::id()));
        crate::streamer::STREAMED.with(|c| c.set(0));
        write_batches(&path, "T", [batch(), batch()], &overrides, options).expect("write");
        let streamed = crate::streamer::STREAMED.with(|c| c.get());
        let nt = RNTupleFile::open(&path).expect("open").rntuple("T").expect("T");
        let clusters = nt.descriptor().clusters.len();
        let entries = nt.num_entries();
        let _ = std::fs::remove_file(&path);
        assert!(clusters > 4, "{clusters} clusters: the batches were not cut");
        assert_eq!(entries, 2 * n as u64);
        assert_eq!(streamed, 2 * n, "entries streamed for 2 batches of {n}");
    }

    /// Two streamer fields giving one class name two layouts are refused,
    /// both layouts named: the file's streamer info holds one per class.
    #[test]
    fn one_class_name_with_two_layouts_is_refused() {
        let x = Field::new("x", DataType::Float32, false);
        let id = Field::new("id", DataType::Int32, false);
        let schema = Schema::new(vec![
            Field::new("a", DataType::Struct(Fields::from(vec![x.clone(), id])), false),
            Field::new("b", DataType::Struct(Fields::from(vec![x])), false),
        ]);
        let ov = FieldOverride { type_name: Some("P".into()), streamer: true, ..Default::default() };
        let overrides = HashMap::from([("a".to_string(), ov.clone()), ("b".to_string(), ov)]);
        let e = crate::write::model::Plan::new(&schema, &overrides, &WriteOptions::default()).unwrap_err().to_string();
        assert!(e.contains("streamer field 'b'") && e.contains("class P is declared twice"), "{e}");
        assert!(e.contains("members x, id against") && e.contains("members x)"), "{e}");
    }
}
