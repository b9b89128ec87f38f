//! Writing attribute sets with an [`RNTupleWriter`]: entries are checked
//! when committed, held until the main RNTuple closes, then written as one
//! RNTuple per set whose anchor goes into an unlisted key (ROOT 6.40's
//! `RNTupleAttrSetWriter::Commit` and `RPageSink::CommitAttributeSet`).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StructArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use rntuple_format::model::{AttributeSetLink, Locator};
use rntuple_format::{Error, Result};

use super::{AttributeRange, RANGE_LEN, RANGE_START, RESERVED_PREFIX, SCHEMA_VERSION, USER_DATA};
use crate::write::context::Context;
use crate::write::{BlobSink, FieldOverride, RNTupleWriter, WriteOptions};

/// The attribute sets of one RNTuple being written.
#[derive(Debug, Default)]
pub(crate) struct PendingSets {
    sets: Vec<PendingSet>,
}

#[derive(Debug)]
struct PendingSet {
    name: String,
    /// The set's RNTuple schema: meta fields, the user's fields in `_userData`.
    schema: Arc<ArrowSchema>,
    overrides: HashMap<String, FieldOverride>,
    options: WriteOptions,
    /// Committed entries, as batches of the set's RNTuple schema.
    batches: Vec<RecordBatch>,
    /// A fill context that never fills, to check committed batches with.
    checker: Context,
    /// Attribute schema minor version written into the link
    /// ([`SCHEMA_VERSION`]'s; tests write later ones).
    schema_minor: u16,
}

impl PendingSets {
    pub(crate) fn create(
        &mut self,
        name: &str,
        user: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: &WriteOptions,
    ) -> Result<()> {
        let refuse = |why: &str| Err(Error::invalid(format!("attribute set {name:?}: {why}")));
        if name.is_empty() {
            return refuse("names must not be empty");
        }
        if name.starts_with(RESERVED_PREFIX) {
            return refuse(&format!("names starting with {RESERVED_PREFIX:?} are reserved"));
        }
        if name.contains('/') {
            return refuse("character '/' is not allowed");
        }
        if self.sets.iter().any(|s| s.name == name) {
            return refuse("this RNTuple has an attribute set of that name already");
        }
        let meta = ArrowSchema::new(vec![
            Field::new(RANGE_START, DataType::UInt64, false),
            Field::new(RANGE_LEN, DataType::UInt64, false),
            Field::new(USER_DATA, DataType::Struct(user.fields().clone()), false),
        ]);
        let overrides = overrides.iter().map(|(k, v)| (format!("{USER_DATA}.{k}"), v.clone())).collect();
        let options = WriteOptions { description: String::new(), ..options.clone() };
        let checker = Context::new(name, &meta, &overrides, options.clone(), false)
            .map_err(|e| e.within(&format!("attribute set {name:?}")))?;
        let schema = Arc::new(meta);
        self.sets.push(PendingSet {
            name: name.to_string(),
            schema,
            overrides,
            options,
            batches: Vec::new(),
            checker,
            schema_minor: SCHEMA_VERSION.1,
        });
        Ok(())
    }

    pub(crate) fn commit(
        &mut self,
        name: &str,
        batch: &RecordBatch,
        ranges: &[AttributeRange],
        written: u64,
    ) -> Result<()> {
        let Some(set) = self.sets.iter_mut().find(|s| s.name == name) else {
            let names: Vec<&str> = self.sets.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::NotFound { what: format!("attribute set {name:?} (created: {names:?})") });
        };
        if ranges.len() != batch.num_rows() {
            return Err(Error::invalid(format!(
                "attribute set {name:?}: {} ranges for {} attribute entries",
                ranges.len(),
                batch.num_rows()
            )));
        }
        if let Some((i, r)) =
            ranges.iter().enumerate().find(|(_, r)| r.start.checked_add(r.length).is_none_or(|e| e > written))
        {
            return Err(Error::invalid(format!(
                "attribute set {name:?}: range {i} [{}, {}+{}) reaches past the {written} entries written so far",
                r.start, r.start, r.length
            )));
        }
        let Some(DataType::Struct(user_fields)) = set.schema.fields().get(2).map(|f| f.data_type().clone()) else {
            return Err(Error::internal("attribute set schema without _userData"));
        };
        let names: Vec<&String> = batch.schema_ref().fields().iter().map(|f| f.name()).collect();
        let expected: Vec<&String> = user_fields.iter().map(|f| f.name()).collect();
        if names != expected {
            return Err(Error::invalid(format!(
                "attribute set {name:?}: batch columns {names:?}, expected {expected:?}"
            )));
        }
        let user = StructArray::try_new(user_fields, batch.columns().to_vec(), None)
            .map_err(|e| Error::invalid(format!("attribute set {name:?}: the batch does not fit its fields: {e}")))?;
        let starts: ArrayRef = Arc::new(UInt64Array::from_iter_values(ranges.iter().map(|r| r.start)));
        let lengths: ArrayRef = Arc::new(UInt64Array::from_iter_values(ranges.iter().map(|r| r.length)));
        let meta = RecordBatch::try_new(set.schema.clone(), vec![starts, lengths, Arc::new(user)])
            .map_err(|e| Error::invalid(format!("attribute set {name:?}: {e}")))?;
        set.checker.check_batch(&meta).map_err(|e| e.within(&format!("attribute set {name:?}")))?;
        set.batches.push(meta);
        Ok(())
    }

    /// Writes every set as an RNTuple into `sink`; returns the footer's links.
    pub(crate) fn write(self, sink: &mut dyn BlobSink) -> Result<Vec<AttributeSetLink>> {
        let mut links = Vec::with_capacity(self.sets.len());
        for set in self.sets {
            let within = |e: Error| e.within(&format!("attribute set {:?}", set.name));
            let anchor = {
                let mut w =
                    RNTupleWriter::with_sink(&mut *sink, &set.name, &set.schema, &set.overrides, set.options.clone())
                        .map_err(within)?
                        .without_journal();
                for b in &set.batches {
                    w.write_batch(b).map_err(within)?;
                }
                w.close_anchor().map_err(within)?
            };
            let size = anchor.to_bytes().len();
            let offset = sink.write_hidden_anchor(&set.name, &anchor)?;
            links.push(AttributeSetLink {
                schema_version_major: SCHEMA_VERSION.0,
                schema_version_minor: set.schema_minor,
                anchor_length: size as u32,
                anchor_locator: Locator { offset, size: size as u64 },
                name: set.name,
            });
        }
        Ok(links)
    }
}

impl RNTupleWriter<'_> {
    /// Creates the attribute set `name` of this RNTuple (ROOT 6.40's
    /// `RNTupleWriter::CreateAttributeSet`): its entries have the fields of
    /// `schema`, written as `overrides` say (paths relative to the set), and
    /// each refers to a range of this RNTuple's entries. Names are not empty,
    /// distinct, follow the RNTuple naming rules and do not start with `__`.
    /// A refusal leaves the writer as it was. See [`crate::attributes`].
    pub fn create_attribute_set(
        &mut self,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
    ) -> Result<()> {
        let (sets, _, options) = self.attribute_sets_mut()?;
        let options = options.clone();
        sets.create(name, schema, overrides, &options)
    }

    /// Appends entries to the attribute set `name`: row i of `batch` (the
    /// set's fields, in order) holds the values for this RNTuple's entries
    /// `ranges[i]`, which must lie within the entries written so far, as
    /// ROOT's `CommitRange` binds the entries filled since `BeginRange`.
    /// The batch is checked as [`RNTupleWriter::check_batch`] does; a refusal
    /// leaves the writer as it was.
    pub fn commit_attributes(&mut self, name: &str, batch: &RecordBatch, ranges: &[AttributeRange]) -> Result<()> {
        let (sets, written, _) = self.attribute_sets_mut()?;
        sets.commit(name, batch, ranges, written)
    }
}

#[cfg(test)]
mod tests {
    //! An attribute set of a later minor schema version with a top-level
    //! field besides the three meta fields (what a later ROOT may write):
    //! read with the extra field ignored; with minor version 0 refused.
    use super::*;
    use crate::RNTupleFile;
    use arrow_array::{Float64Array, Int32Array};
    use rntuple_container::write::{FileWriter, WriterOptions};

    fn write(path: &std::path::Path, minor: u16) {
        let mut file = FileWriter::create(path, WriterOptions::default()).expect("create");
        let none = HashMap::new();
        let main = ArrowSchema::new(vec![Field::new("px", DataType::Int32, false)]);
        let mut w = RNTupleWriter::new(&mut file, "Events", &main, &none, WriteOptions::default()).expect("writer");
        let user = ArrowSchema::new(vec![Field::new("run", DataType::Int32, false)]);
        w.create_attribute_set("runs", &user, &none).expect("set");
        let px: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        w.write_batch(&RecordBatch::try_new(Arc::new(main), vec![px]).expect("batch")).expect("fill");
        let run: ArrayRef = Arc::new(Int32Array::from(vec![7, 8]));
        let runs = RecordBatch::try_new(Arc::new(user), vec![run]).expect("runs");
        let ranges = [AttributeRange::new(0, 2), AttributeRange::new(2, 1)];
        w.commit_attributes("runs", &runs, &ranges).expect("commit");
        // What a later schema adds: a fourth top-level field, after the meta fields.
        let (sets, _, _) = w.attribute_sets_mut().expect("sets");
        let set = &mut sets.sets[0];
        set.schema_minor = minor;
        let mut fields: Vec<Field> = set.schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new("_later", DataType::Float64, false));
        set.schema = Arc::new(ArrowSchema::new(fields));
        let b = &set.batches[0];
        let mut columns = b.columns().to_vec();
        columns.push(Arc::new(Float64Array::from(vec![0.5, 1.5])));
        set.batches[0] = RecordBatch::try_new(set.schema.clone(), columns).expect("later batch");
        w.close().expect("close");
        file.finish().expect("finish");
    }

    #[test]
    fn extra_fields_of_a_later_minor_version_are_ignored() {
        let dir = std::env::temp_dir().join(format!("rntuple-attr-minor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("minor1.root");
        write(&path, 1);
        let nt = RNTupleFile::open(&path).expect("open").rntuple("Events").expect("Events");
        let set = nt.attribute_set("runs").expect("a 1.1 set with an extra field opens");
        assert_eq!(set.link().schema_version_minor, 1);
        let stored: Vec<&str> = set.rntuple().schema().fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(stored, ["_rangeStart", "_rangeLen", "_userData", "_later"]);
        let values = set.values().read_all().expect("values");
        assert_eq!(values.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["run"]);
        let runs = values.column(0).as_any().downcast_ref::<Int32Array>().expect("int32");
        assert_eq!(runs.values().to_vec(), [7, 8]);
        assert_eq!(set.ranges(), [AttributeRange::new(0, 2), AttributeRange::new(2, 1)]);

        let path = dir.join("minor0.root");
        write(&path, 0);
        let nt = RNTupleFile::open(&path).expect("open").rntuple("Events").expect("Events");
        let e = nt.attribute_set("runs").unwrap_err().to_string();
        assert!(e.contains("_later") && e.contains("attribute schema 1.0"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
