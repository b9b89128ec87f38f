//! The fill-context layer of the write engine: entries into pages.
//!
//! A [`Context`] owns one open cluster: the field plan it fills by, the
//! page buffers of its columns ([`Columns`]: pages grow, seal and are
//! compressed on the thread pool), the cluster's entry count and ROOT's
//! cluster size estimate (`RNTupleFillContext`). It knows nothing of the
//! file: when its cluster is full it hands it to a [`ClusterTarget`] — the
//! page sink of a single [`super::RNTupleWriter`], or the shared sink of a
//! [`super::ParallelWriter`], reached under its lock — which places the
//! pages and records the cluster ([`super::sink::PageSink`]).

use std::borrow::Cow;
use std::collections::HashMap;

use arrow_array::RecordBatch;
use arrow_schema::{Schema as ArrowSchema, SchemaBuilder};
use rntuple_container::write::{crash_point, CrashPoint};
use rntuple_format::model::PageDescriptor;
use rntuple_format::{Error, Result};

use super::access::check_type;
use super::budget::MemoryUse;
use super::measure::{check_values, unzipped_bytes, Bytes};
use super::model::Plan;
use super::names::check_name;
use super::options::{FieldOverride, Projection, WriteOptions};
use super::pages::{ClusterColumn, Columns};
use super::shred::Filler;
use super::sink::BlobSink;
use super::stream::OpenCluster;

mod extend;

/// Where the clusters of a [`Context`] go.
pub(crate) trait ClusterTarget {
    /// Commits the open cluster of `ctx` (it has entries): writes its pages,
    /// records it, and tells `ctx` ([`Context::cluster_committed`]).
    fn commit(&mut self, ctx: &mut Context) -> Result<()>;
    /// Writes the complete blobs of pages `ctx` streams (a no-op for a
    /// target that takes whole clusters).
    fn stream(&mut self, ctx: &mut Context) -> Result<()>;
}

/// One open cluster being filled from Arrow record batches.
pub(crate) struct Context {
    pub(super) name: String,
    pub(super) options: WriteOptions,
    pub(super) plan: Plan,
    pub(super) arrow_schema: ArrowSchema,
    /// Top-level written fields of each schema the batches had: at creation
    /// and after each addition of fields (a fill context of a parallel
    /// writer accepts batches of each, see `extend`).
    pub(super) schema_versions: Vec<usize>,
    filler: Filler,
    /// Entries in the clusters this context committed.
    committed: u64,
    pub(super) cluster_entries: u64,
    cluster_unzipped: u64,
    /// ROOT's cluster size estimate (`RNTupleFillContext`).
    unzipped_estimate: u64,
    bytes_filled: u64,
    bytes_flushed: u64,
    poisoned: bool,
    /// The pages of the open cluster written so far, when pages are
    /// streamed ([`WriteOptions::group_pages_by_column`] off; never in a
    /// fill context of a parallel writer, whose clusters go whole).
    open: Option<OpenCluster>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("entries", &self.num_entries())
            .field("failed", &self.poisoned)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A context for the RNTuple `name` (a path: `"dir/sub/Events"`) of
    /// `schema`, written as `overrides` say. `stream`: hand sealed pages out
    /// as they come ([`ClusterTarget::stream`]) rather than with the cluster.
    pub fn new(
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
        stream: bool,
    ) -> Result<Self> {
        options.validate()?;
        let base = name.rsplit_once('/').map_or(name, |(_, b)| b);
        check_name(base, "RNTuple", name)?;
        let plan = Plan::new(schema, overrides, &options)?;
        let scale = if options.compressed() { 2 } else { 1 };
        let unzipped_estimate = options.approx_zipped_cluster_size.saturating_mul(scale);
        let schema_versions = vec![plan.fields.len()];
        Self::with_plan(name, options, plan, schema.clone(), schema_versions, unzipped_estimate, stream)
    }

    /// Another context with the schema and options of `main` (a fill
    /// context of a parallel writer whose writer is `main`): its own page
    /// buffers, no entries.
    pub fn sibling(main: &Context) -> Result<Self> {
        main.usable()?;
        Self::with_plan(
            &main.name,
            main.options.clone(),
            main.plan.clone(),
            main.arrow_schema.clone(),
            main.schema_versions.clone(),
            main.unzipped_estimate,
            false,
        )
    }

    fn with_plan(
        name: &str,
        options: WriteOptions,
        plan: Plan,
        arrow_schema: ArrowSchema,
        schema_versions: Vec<usize>,
        unzipped_estimate: u64,
        stream: bool,
    ) -> Result<Self> {
        let mut columns = Columns::new(&plan.columns, &options)?;
        let open = stream.then(|| OpenCluster::new(columns.stream_pages()));
        let filler = Filler { columns, counts: vec![0; plan.schema.fields.len()] };
        Ok(Context {
            name: name.to_string(),
            options,
            plan,
            arrow_schema,
            schema_versions,
            filler,
            committed: 0,
            cluster_entries: 0,
            cluster_unzipped: 0,
            unzipped_estimate,
            bytes_filled: 0,
            bytes_flushed: 0,
            poisoned: false,
            open,
        })
    }

    /// Where the page buffers parked out of memory wait (`pages/park.rs`).
    pub fn set_scratch_dir(&mut self, dir: Option<std::path::PathBuf>) {
        self.filler.columns.set_scratch_dir(dir);
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> &ArrowSchema {
        &self.arrow_schema
    }

    /// Entries appended (committed or not).
    pub fn num_entries(&self) -> u64 {
        self.committed + self.cluster_entries
    }

    pub fn has_failed(&self) -> bool {
        self.poisoned
    }

    /// Marks the context failed: it refuses further work.
    pub fn poison(&mut self) {
        self.poisoned = true;
    }

    pub fn usable(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::state(format!("RNTuple writer '{}' failed earlier and cannot continue", self.name)));
        }
        Ok(())
    }

    /// `r`, failing the context when it is an error.
    pub fn guard<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    /// The bytes the page buffers hold now and the most they held at once.
    pub fn memory_use(&self) -> MemoryUse {
        self.filler.columns.memory_use()
    }

    /// Adds top-level fields, as [`super::RNTupleWriter::add_fields`]
    /// documents; `first_entry` is the entry the new columns start at (their
    /// elements before it are deferred). All or nothing.
    pub fn add_fields(
        &mut self,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        projections: &[Projection],
        first_entry: u64,
    ) -> Result<()> {
        self.usable()?;
        let old_columns = self.plan.columns.len();
        self.plan.extend(schema, overrides, projections, &self.options, first_entry)?;
        let mut merged = SchemaBuilder::from(self.arrow_schema.fields());
        for f in schema.fields() {
            merged.push(f.clone());
        }
        self.arrow_schema = merged.finish().with_metadata(self.arrow_schema.metadata().clone());
        if self.schema_versions.last() != Some(&self.plan.fields.len()) {
            self.schema_versions.push(self.plan.fields.len());
        }
        self.filler.counts.resize(self.plan.schema.fields.len(), 0);
        let r = self.filler.columns.add(&self.plan.columns[old_columns..], &self.options);
        self.guard(r)
    }

    /// Checks that `batch` can be appended: its schema and its values,
    /// without appending anything.
    pub fn check_batch(&self, batch: &RecordBatch) -> Result<()> {
        self.check_schema(batch)?;
        self.check_leading_values(batch)
    }

    /// Checks the values of the batch columns that belong to the first
    /// fields (all of them for a batch of the context's schema).
    pub fn check_leading_values(&self, batch: &RecordBatch) -> Result<()> {
        for (f, arr) in self.plan.fields.iter().zip(batch.columns()) {
            check_values(f, &self.plan.columns, arr.as_ref(), 0, arr.len())?;
        }
        Ok(())
    }

    pub fn check_schema(&self, batch: &RecordBatch) -> Result<()> {
        let schema = batch.schema();
        if schema.fields().len() != self.plan.fields.len() {
            return Err(Error::invalid(format!(
                "batch has {} columns, RNTuple '{}' has {} top-level fields",
                schema.fields().len(),
                self.name,
                self.plan.fields.len()
            )));
        }
        for (f, af) in self.plan.fields.iter().zip(schema.fields()) {
            if f.name != *af.name() {
                return Err(Error::invalid(format!(
                    "batch column '{}' where field '{}' was expected",
                    af.name(),
                    f.name
                )));
            }
            check_type(f, af.data_type())?;
        }
        Ok(())
    }

    fn batch_bytes(&self, batch: &RecordBatch, a: usize, b: usize) -> Bytes {
        self.plan
            .fields
            .iter()
            .zip(batch.columns())
            .map(|(f, arr)| unzipped_bytes(f, &self.plan.columns, arr.as_ref(), a, b))
            .sum()
    }

    /// Appends the entries of `batch` (of the context's schema, checked),
    /// committing clusters into `target` as they fill. A failure fails the
    /// context.
    pub fn write_batch(&mut self, batch: &RecordBatch, target: &mut dyn ClusterTarget) -> Result<()> {
        crash_point(CrashPoint::Fill);
        self.usable()?;
        self.check_schema(batch)?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let r = self.append_batch(batch, target);
        self.guard(r)
    }

    fn append_batch(&mut self, batch: &RecordBatch, target: &mut dyn ClusterTarget) -> Result<()> {
        // A fill context may adopt a newer schema when it commits below: the
        // rest of the batch then gets the new fields' zero values (`extend`).
        let mut batch = Cow::Borrowed(batch);
        let n = batch.num_rows();
        let mut a = 0;
        while a < n {
            // ROOT commits after the entry with which the unzipped size
            // reaches the maximum or the estimate (`RNTupleFillContext::Fill`).
            let threshold = self.options.max_unzipped_cluster_size.min(self.unzipped_estimate);
            let room = threshold.saturating_sub(self.cluster_unzipped);
            // With a memory budget, entries are appended only as far as their
            // pages are sure to fit (`budget`).
            let mem_room = self.filler.columns.memory_room();
            let columns = &self.filler.columns;
            let over = |b: Bytes| mem_room.is_some_and(|r| columns.sealed_bound(b.mem) > r);
            let stop = |b: Bytes| b.packed >= room || over(b);
            // The first m in (a, n] at which to stop, if any: gallop to an
            // end past it (so that the cost follows the cluster, not the
            // batch), then bisect.
            let (mut lo, mut hi) = (a, a + 1);
            let mut bytes_hi = self.batch_bytes(&batch, a, hi);
            while !stop(bytes_hi) && hi < n {
                lo = hi;
                hi = (a + 2 * (hi - a)).min(n);
                bytes_hi = self.batch_bytes(&batch, a, hi);
            }
            let (m, bytes, full) = if !stop(bytes_hi) {
                (n, bytes_hi, false)
            } else {
                let mut lo = lo + 1;
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if stop(self.batch_bytes(&batch, a, mid)) {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                let bytes = self.batch_bytes(&batch, a, lo);
                if over(bytes) {
                    // Entry lo - 1 would not fit: commit before it.
                    if lo - 1 == a {
                        if self.cluster_entries > 0 {
                            target.commit(self)?;
                            self.widen_after_commit(&mut batch)?;
                            continue;
                        }
                        return Err(self.entry_over_budget(a, bytes.mem));
                    }
                    // Appending goes on while the room left is worth it.
                    (lo - 1, self.batch_bytes(&batch, a, lo - 1), false)
                } else {
                    (lo, bytes, true)
                }
            };
            for (i, arr) in batch.columns().iter().enumerate() {
                self.filler.append(&self.plan.fields[i], arr.as_ref(), a, m)?;
                // Complete blobs of streamed pages go to the file now.
                if self.open.is_some() {
                    target.stream(self)?;
                }
            }
            self.cluster_entries += (m - a) as u64;
            self.cluster_unzipped += bytes.packed;
            a = m;
            let c = &self.filler.columns;
            let cramped = c.memory_room().is_some_and(|r| r < c.memory_room_of_empty_cluster() / 8);
            if full || cramped {
                target.commit(self)?;
                self.widen_after_commit(&mut batch)?;
            }
        }
        Ok(())
    }

    fn entry_over_budget(&self, entry: usize, mem: u64) -> Error {
        let c = &self.filler.columns;
        Error::invalid(format!(
            "entry {entry} of the batch (entry {} of RNTuple '{}') takes {mem} bytes in page buffers, more than the \
             memory budget of {} bytes leaves for the pages of a cluster ({} bytes); raise memory_budget",
            self.num_entries(),
            self.name,
            self.options.memory_budget,
            c.memory_room_of_empty_cluster()
        ))
    }

    /// Commits the open cluster into `target` (no-op when it has no entries).
    pub fn commit(&mut self, target: &mut dyn ClusterTarget) -> Result<()> {
        self.usable()?;
        if self.cluster_entries == 0 {
            return Ok(());
        }
        let r = target.commit(self);
        self.guard(r)
    }

    /// Seals every page of the open cluster; returns the pages per column.
    pub fn seal_cluster(&mut self) -> Result<Vec<ClusterColumn>> {
        self.filler.columns.finish_cluster()
    }

    /// Spills the complete blobs of streamed pages to the scratch file
    /// (created where `dest` keeps scratch files; `all`: every page, the
    /// cluster's pages are all sealed).
    pub fn write_streamed(&mut self, dest: &dyn BlobSink, all: bool) -> Result<()> {
        let Some(open) = &mut self.open else { return Ok(()) };
        for blob in self.filler.columns.take_blobs(all) {
            open.spill(dest, blob)?;
        }
        Ok(())
    }

    /// With streamed pages, once the cluster is sealed: writes the cluster's
    /// spilled pages into `dest` in ROOT's layout (`layout`) and returns
    /// their descriptors (per column) and the bytes written; `None` when
    /// pages are not streamed.
    pub fn finish_streamed(&mut self, dest: &mut dyn BlobSink) -> Result<Option<(Vec<Vec<PageDescriptor>>, u64)>> {
        self.write_streamed(dest, true)?;
        let columns = self.plan.columns.len();
        let merge = self.options.same_page_merging && self.options.page_checksums;
        match self.open.as_mut() {
            Some(o) => o.finish(dest, columns, merge).map(Some),
            None => Ok(None),
        }
    }

    /// The open cluster was recorded, `written` bytes of pages: the next
    /// cluster starts empty, with ROOT's estimate of its unzipped size (the
    /// target compressed size times the compression factor so far, in f32,
    /// capped at 1000).
    pub fn cluster_committed(&mut self, written: u64) {
        self.filler.columns.cluster_written();
        self.bytes_filled += self.cluster_unzipped;
        self.bytes_flushed += written;
        let factor = (self.bytes_filled as f32 / self.bytes_flushed as f32).min(1000.0);
        self.unzipped_estimate = (factor * self.options.approx_zipped_cluster_size as f32) as u64;
        self.committed += self.cluster_entries;
        self.cluster_entries = 0;
        self.cluster_unzipped = 0;
        self.filler.reset_counts();
    }
}
