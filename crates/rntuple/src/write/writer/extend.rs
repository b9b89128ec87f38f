//! Late schema extension of a [`super::super::ParallelWriter`] while its fill
//! contexts fill (spec "Schema Extension Record Frame", "Column
//! Description" flag 0x01 for deferred columns).
//!
//! The main writer extends its plan under its lock, between two cluster
//! commits: the new columns are deferred to the entries committed so far,
//! and every cluster committed afterwards must carry them for all its
//! entries. A fill context created before keeps its copy of the older plan
//! and adopts the newest one ([`RNTupleWriter::adopt`]) when it is handed a
//! batch with more fields than it knows, or, at the latest, when it commits
//! a cluster after the extension (under the main writer's lock, so that no
//! further extension can slip in between). Either way, the entries it holds
//! in its open cluster get the new fields' zero values ([`zeros`]), the
//! values ROOT reads for a deferred column's entries before its first
//! element, so the cluster is complete. A context accepts batches of any
//! schema the writer had up to the one it takes now; the fields a batch
//! lacks get zero values. The price of adopting at a commit: the zero pages
//! of the new columns for the open cluster are filled and sealed under the
//! lock, once per context and extension.

use std::sync::Arc;

use arrow_array::{
    make_array, new_empty_array, new_null_array, ArrayRef, BooleanArray, FixedSizeListArray, RecordBatch, StructArray,
    UnionArray,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Schema as ArrowSchema, SchemaBuilder};

use super::*;
use crate::schema::FieldKind;
use crate::write::plan::PlanField;

/// Entries of zero values built at once when a context adopts a schema (the
/// arrays of one step stay small whatever the cluster size).
const ZERO_STEP: usize = 1 << 16;

impl RNTupleWriter<'static> {
    /// Adds fields to the writer of a parallel writer, whose contexts may be
    /// filling: [`RNTupleWriter::add_fields`] once a fresh fill context is
    /// known to be able to hold the new columns (a refused addition leaves
    /// the writer as it was).
    pub(crate) fn add_fields_parallel(
        &mut self,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        projections: &[Projection],
    ) -> Result<()> {
        self.usable()?;
        let mut trial = self.plan.clone();
        trial.extend(schema, overrides, projections, &self.options, self.num_entries())?;
        Columns::new(&trial.columns, &self.options)?;
        self.add_fields(schema, overrides, projections)
    }
}

impl RNTupleWriter<'_> {
    /// Takes the newest schema of `main` (the parallel writer's writer) if
    /// this fill context has an older one: the new fields' columns get page
    /// buffers and the entries of the open cluster get their zero values.
    /// Returns whether the schema changed.
    pub(super) fn adopt(&mut self, main: &RNTupleWriter<'static>) -> Result<bool> {
        if main.plan.schema.fields.len() == self.plan.schema.fields.len() {
            return Ok(false);
        }
        let (old_fields, old_columns) = (self.plan.fields.len(), self.plan.columns.len());
        // The plan only ever grows: the context's is a prefix of the newest.
        self.plan = main.plan.clone();
        self.arrow_schema = main.arrow_schema.clone();
        self.schema_versions = main.schema_versions.clone();
        self.filler.counts.resize(self.plan.schema.fields.len(), 0);
        self.filler.columns.add(&self.plan.columns[old_columns..], &self.options)?;
        let n = self.cluster_entries as usize;
        let new = self.plan.fields[old_fields..].iter().zip(&self.arrow_schema.fields()[old_fields..]);
        for (f, af) in new {
            let mut a = 0;
            while a < n {
                let b = (a + ZERO_STEP).min(n);
                let z = zeros(f, af.data_type(), b - a)?;
                self.cluster_unzipped += unzipped_bytes(f, &self.plan.columns, z.as_ref(), 0, b - a).packed;
                self.filler.append(f, z.as_ref(), 0, b - a)?;
                a = b;
            }
        }
        Ok(true)
    }

    /// For a fill context: `batch` as the context takes it, `None` when it
    /// has the context's schema. A batch with more fields makes the context
    /// adopt the newest schema first; a batch of an earlier schema of the
    /// writer is completed with the zero values of the fields it lacks.
    pub(super) fn context_batch(&mut self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        let Sink::Context(main) = &self.sink else { return Ok(None) };
        let k = batch.num_columns();
        if k > self.plan.fields.len() {
            let main = Arc::clone(main);
            let main = lock_main(&main)?;
            let r = self.adopt(&main);
            drop(main);
            self.guard(r)?;
        }
        let m = self.plan.fields.len();
        if k == m {
            return Ok(None);
        }
        if k > m || !self.schema_versions.contains(&k) {
            let versions: Vec<String> = self.schema_versions.iter().map(usize::to_string).collect();
            return Err(Error::invalid(format!(
                "batch has {k} columns, which matches no schema of RNTuple '{}': its schemas have {} top-level \
                     fields (this fill context takes {m}; see ParallelWriter::schema for the newest)",
                self.name,
                versions.join(", ")
            )));
        }
        // Its fields are checked with the widened batch (`write_batch`).
        self.widen(batch).map(Some)
    }

    /// `batch`, whose fields are the first of the schema, with the other
    /// fields' zero values (its own fields keep their Arrow types: Utf8 where
    /// the schema says LargeUtf8 is fine).
    fn widen(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let k = batch.num_columns();
        let mut fields = SchemaBuilder::from(batch.schema().fields());
        let mut columns = batch.columns().to_vec();
        for (f, af) in self.plan.fields.iter().zip(self.arrow_schema.fields()).skip(k) {
            fields.push(af.clone());
            columns.push(zeros(f, af.data_type(), batch.num_rows())?);
        }
        RecordBatch::try_new(Arc::new(fields.finish()), columns)
            .map_err(|e| Error::internal(format!("zero values of new fields: {e}")))
    }

    /// After a commit inside [`RNTupleWriter::write_batch`], where a fill
    /// context may have adopted a newer schema: the rest of `batch` needs the
    /// new fields too.
    pub(super) fn widen_after_commit(&self, batch: &mut std::borrow::Cow<'_, RecordBatch>) -> Result<()> {
        if batch.num_columns() < self.plan.fields.len() {
            *batch = std::borrow::Cow::Owned(self.widen(batch)?);
        }
        Ok(())
    }
}

/// `n` entries of the zero value of field `f` (Arrow type `dt`): what ROOT
/// reads for the entries before a deferred column's first element (spec
/// "Column Description": the column's elements before its first element
/// index are zeros): 0 and `false`, empty strings and collections, empty
/// optionals, arrays and records of zeros, variants in the invalid
/// (valueless) state, switch tag 0, as ROOT 6.40 reads a deferred variant.
pub(crate) fn zeros(f: &PlanField, dt: &DataType, n: usize) -> Result<ArrayRef> {
    let internal = |e: arrow_schema::ArrowError| Error::internal(format!("zero values of field '{}': {e}", f.path));
    let child = |i: usize| {
        f.children
            .get(i)
            .ok_or_else(|| Error::internal(format!("field '{}' of kind {:?} without subfield {i}", f.path, f.kind)))
    };
    Ok(match (&f.kind, dt) {
        (FieldKind::Collection { nullable: true }, DataType::Union(..)) => union_zeros(child(0)?, dt, n)?,
        (FieldKind::Collection { nullable: true }, _) => new_null_array(dt, n),
        (FieldKind::Wrapper, _) => zeros(child(0)?, dt, n)?,
        (FieldKind::Variant, DataType::Union(..)) => union_zeros(f, dt, n)?,
        (FieldKind::Record, DataType::Struct(fields)) => {
            let mut arrays = Vec::with_capacity(fields.len());
            for (i, af) in fields.iter().enumerate() {
                arrays.push(zeros(child(i)?, af.data_type(), n)?);
            }
            Arc::new(StructArray::try_new_with_length(fields.clone(), arrays, None, n).map_err(internal)?)
        }
        (FieldKind::Array { .. } | FieldKind::Bitset { .. }, DataType::FixedSizeList(item, size)) => {
            let items = n * (*size).max(0) as usize;
            let values = match f.kind {
                FieldKind::Array { .. } => zeros(child(0)?, item.data_type(), items)?,
                _ => Arc::new(BooleanArray::from(vec![false; items])),
            };
            Arc::new(FixedSizeListArray::try_new(item.clone(), *size, values, None).map_err(internal)?)
        }
        // Fundamental types, bitsets as integers, strings, collections and
        // maps: Arrow's null array has zeroed values and offsets (empty
        // strings and collections); only its validity goes.
        _ => {
            let data = new_null_array(dt, n).to_data().into_builder().nulls(None).build().map_err(internal)?;
            make_array(data)
        }
    })
}

/// `n` variants (field `f`, a union `dt`) in the invalid state: a null value
/// in the first alternative (switch tag 0, see `fill::append_variant`; an
/// empty optional when the variant is an optional's value, see
/// `fill::value_nulls`).
fn union_zeros(f: &PlanField, dt: &DataType, n: usize) -> Result<ArrayRef> {
    let internal = |e: String| Error::internal(format!("zero values of '{}': {e}", f.path));
    let DataType::Union(fields, mode) = dt else { return Err(internal(format!("{dt} is not a union"))) };
    let Some(&first) = f.union_type_ids.first() else {
        return Err(internal("a variant without alternatives".into()));
    };
    let dense = matches!(mode, arrow_schema::UnionMode::Dense);
    let mut children = Vec::with_capacity(fields.len());
    for (tid, af) in fields.iter() {
        children.push(if tid != first && dense {
            new_empty_array(af.data_type())
        } else {
            new_null_array(af.data_type(), n)
        });
    }
    let type_ids = ScalarBuffer::from(vec![first; n]);
    let offsets = dense.then(|| ScalarBuffer::from((0..n as i32).collect::<Vec<i32>>()));
    let u = UnionArray::try_new(fields.clone(), type_ids, offsets, children).map_err(|e| internal(e.to_string()))?;
    Ok(Arc::new(u))
}
