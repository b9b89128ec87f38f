//! [`RNTupleWriter`]: one RNTuple into a container, from Arrow record batches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::{Schema as ArrowSchema, SchemaBuilder};
use rntuple_container::write::{crash_point, CrashPoint};
use rntuple_format::compression::compress;
use rntuple_format::envelope::{write_header, write_page_list};
use rntuple_format::model::{
    ClusterGroupDescriptor, ClusterSummary, ColumnPageRange, EnvelopeLink, Footer, Header, Locator, PageList,
    SchemaDescription,
};
use rntuple_format::{Error, Result};

use super::budget::MemoryUse;
use super::fill::{check_type, check_values, unzipped_bytes, Bytes, Filler};
use super::layout::write_cluster_pages;
use super::names::check_name;
use super::options::{FieldOverride, Projection, WriteOptions};
use super::pages::{ClusterColumn, Columns};
use super::plan::Plan;
use super::shared::SharedFileWriter;
use super::BlobSink;
use crate::attributes::PendingSets;

mod commit;
mod extend;
mod stream;
#[cfg(test)]
pub(crate) use commit::footer_envelope;

/// Writer identifier stored in the header envelope.
fn writer_identifier() -> String {
    format!("rntuple (Rust) v{}", env!("CARGO_PKG_VERSION"))
}

/// Writes one RNTuple into a container file.
///
/// Entries are appended with [`RNTupleWriter::write_batch`]; clusters are committed when
/// their estimated compressed size reaches
/// [`WriteOptions::approx_zipped_cluster_size`] (or explicitly with
/// [`RNTupleWriter::commit_cluster`]); [`RNTupleWriter::close`] commits the
/// last cluster and writes the page lists, the footer and the anchor. A
/// writer dropped without `close` leaves no RNTuple in the file.
///
/// After a failed `write_batch` the writer refuses further work: part of the
/// batch may have been appended. [`RNTupleWriter::check_batch`] finds the
/// errors of a batch's values beforehand.
///
/// The schema is the Arrow schema given at creation; [`RNTupleWriter::add_fields`]
/// adds written and projected fields. The header envelope is written with
/// the first entry (or at `close`): fields added before then are in the
/// header; fields added later are in the footer's schema extension with
/// deferred columns (late model extension, as ROOT's `RNTupleModelUpdater`),
/// and the entries before them read as the types' zero values.
///
/// The writer borrows its file ([`RNTupleWriter::new`]) or owns a handle to
/// it ([`RNTupleWriter::new_shared`], `RNTupleWriter<'static>`).
pub struct RNTupleWriter<'f> {
    sink: Sink<'f>,
    name: String,
    options: WriteOptions,
    plan: Plan,
    arrow_schema: ArrowSchema,
    filler: Filler,
    /// Set once the header envelope is written.
    header: Option<WrittenHeader>,
    /// Entries committed in earlier clusters.
    first_entry: u64,
    cluster_entries: u64,
    cluster_unzipped: u64,
    /// ROOT's cluster size estimate (`RNTupleFillContext`).
    unzipped_estimate: u64,
    bytes_filled: u64,
    bytes_flushed: u64,
    /// Clusters committed since the last page list.
    pending: Vec<(ClusterSummary, Vec<ColumnPageRange>)>,
    groups: Vec<ClusterGroupDescriptor>,
    poisoned: bool,
    /// Attribute sets created on this RNTuple, written at `close`.
    attribute_sets: PendingSets,
    /// Whether committed clusters are journaled (not those of attribute
    /// sets, written at `close`: a crash then loses their RNTuple anyway).
    journal: bool,
    /// Top-level written fields of each schema the batches had: at creation
    /// and after each [`RNTupleWriter::add_fields`] that added some (a fill
    /// context accepts batches of each, see `extend`).
    schema_versions: Vec<usize>,
    /// The pages of the open cluster written so far, when pages are
    /// streamed ([`WriteOptions::group_pages_by_column`] off; never in a
    /// fill context, whose pages are written by its parallel writer).
    open: Option<stream::OpenCluster>,
}

/// The header envelope as written, and how much of the schema it holds (the
/// rest goes into the footer's schema extension).
#[derive(Debug, Clone, Copy)]
struct WrittenHeader {
    link: EnvelopeLink,
    checksum: u64,
    fields: usize,
    columns: usize,
    alias_columns: usize,
}

/// Where the writer's payloads go.
enum Sink<'f> {
    Borrowed(&'f mut dyn BlobSink),
    Shared(SharedFileWriter),
    /// A fill context of a [`super::ParallelWriter`]: clusters are written
    /// and recorded by the parallel writer's own writer, under its lock.
    Context(Arc<Mutex<RNTupleWriter<'static>>>),
}

impl Sink<'_> {
    fn get(&mut self) -> Result<&mut dyn BlobSink> {
        match self {
            Sink::Borrowed(s) => Ok(&mut **s),
            Sink::Shared(s) => Ok(s),
            Sink::Context(_) => Err(Error::internal("a fill context writes through its parallel writer")),
        }
    }
}

/// Locks the writer of a [`super::ParallelWriter`].
pub(crate) fn lock_main<'a>(
    main: &'a Mutex<RNTupleWriter<'static>>,
) -> Result<std::sync::MutexGuard<'a, RNTupleWriter<'static>>> {
    main.lock()
        .map_err(|_| Error::state("a fill context panicked while committing a cluster; the RNTuple is incomplete"))
}

impl std::fmt::Debug for RNTupleWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RNTupleWriter")
            .field("name", &self.name)
            .field("entries", &(self.first_entry + self.cluster_entries))
            .field(
                "clusters",
                &(self.groups.iter().map(|g| g.num_clusters as usize).sum::<usize>() + self.pending.len()),
            )
            .finish_non_exhaustive()
    }
}

impl RNTupleWriter<'static> {
    /// [`RNTupleWriter::new`] for a writer that owns a handle to its file, so
    /// that it can live on its own (in a struct, on another thread). Several
    /// writers may share one file; the file is completed by
    /// [`SharedFileWriter::finish`] after their [`RNTupleWriter::close`].
    pub fn new_shared(
        file: &SharedFileWriter,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        Self::create(Sink::Shared(file.clone()), name, schema, overrides, options)
    }
}

impl RNTupleWriter<'static> {
    /// A fill context of `main` (the writer of a [`super::ParallelWriter`],
    /// its header written): the same schema and options, its own page buffers.
    pub(crate) fn fill_context(main: &Arc<Mutex<RNTupleWriter<'static>>>) -> Result<Self> {
        let m = lock_main(main)?;
        m.usable()?;
        let columns = Columns::new(&m.plan.columns, &m.options)?;
        let filler = Filler { columns, counts: vec![0; m.plan.schema.fields.len()] };
        Ok(RNTupleWriter {
            sink: Sink::Context(Arc::clone(main)),
            name: m.name.clone(),
            options: m.options.clone(),
            plan: m.plan.clone(),
            arrow_schema: m.arrow_schema.clone(),
            filler,
            header: m.header,
            first_entry: 0,
            cluster_entries: 0,
            cluster_unzipped: 0,
            unzipped_estimate: m.unzipped_estimate,
            bytes_filled: 0,
            bytes_flushed: 0,
            pending: Vec::new(),
            groups: Vec::new(),
            poisoned: false,
            attribute_sets: PendingSets::default(),
            journal: true,
            schema_versions: m.schema_versions.clone(),
            open: None,
        })
    }

    /// Marks the parallel writer of this fill context failed.
    pub(crate) fn poison_main(&self) {
        if let Sink::Context(main) = &self.sink {
            match main.lock() {
                Ok(mut m) => m.poisoned = true,
                Err(p) => p.into_inner().poisoned = true,
            }
        }
    }

    /// Writes the header envelope now (a parallel writer does before its
    /// fill contexts exist).
    pub(crate) fn write_header_now(&mut self) -> Result<()> {
        let r = self.ensure_header().map(|_| ());
        self.guard(r)
    }
}

impl<'f> RNTupleWriter<'f> {
    /// Creates the writer and writes the header envelope. `name` may be a
    /// path (`"dir/sub/Events"`): the anchor goes into those subdirectories.
    /// `overrides` maps dotted field paths (`"jets._0.pt"`) to how the field
    /// is written.
    pub fn new(
        file: &'f mut rntuple_container::write::FileWriter,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        Self::with_sink(file, name, schema, overrides, options)
    }

    pub(crate) fn with_sink(
        sink: &'f mut dyn BlobSink,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        Self::create(Sink::Borrowed(sink), name, schema, overrides, options)
    }

    fn create(
        sink: Sink<'f>,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        options.validate()?;
        // "dir/sub/name": the anchor goes into subdirectories, the RNTuple is "name".
        let base = name.rsplit_once('/').map_or(name, |(_, b)| b);
        check_name(base, "RNTuple", name)?;
        let plan = Plan::new(schema, overrides, &options)?;
        let mut columns = Columns::new(&plan.columns, &options)?;
        let open = (!options.group_pages_by_column).then(|| stream::OpenCluster::new(columns.stream_pages()));
        let filler = Filler { columns, counts: vec![0; plan.schema.fields.len()] };
        let scale = if options.compressed() { 2 } else { 1 };
        let unzipped_estimate = options.approx_zipped_cluster_size.saturating_mul(scale);
        let schema_versions = vec![plan.fields.len()];
        Ok(RNTupleWriter {
            sink,
            name: name.to_string(),
            options,
            plan,
            arrow_schema: schema.clone(),
            filler,
            header: None,
            first_entry: 0,
            cluster_entries: 0,
            cluster_unzipped: 0,
            unzipped_estimate,
            bytes_filled: 0,
            bytes_flushed: 0,
            pending: Vec::new(),
            groups: Vec::new(),
            poisoned: false,
            attribute_sets: PendingSets::default(),
            journal: true,
            schema_versions,
            open,
        })
    }

    /// Writes the header envelope with the schema so far, once.
    fn ensure_header(&mut self) -> Result<WrittenHeader> {
        if let Some(h) = self.header {
            return Ok(h);
        }
        let base = self.name.rsplit_once('/').map_or(self.name.as_str(), |(_, b)| b);
        let header = Header {
            feature_flags: Vec::new(),
            name: base.to_string(),
            description: self.options.description.clone(),
            writer: writer_identifier(),
            schema: self.plan.schema.clone(),
        };
        let (bytes, checksum) = write_header(&header)?;
        let link = self.write_envelope(&bytes)?;
        let h = WrittenHeader {
            link,
            checksum,
            fields: self.plan.schema.fields.len(),
            columns: self.plan.schema.columns.len(),
            alias_columns: self.plan.schema.alias_columns.len(),
        };
        self.header = Some(h);
        Ok(h)
    }

    /// Adds top-level fields: the fields of `schema` (written from batches,
    /// as `overrides` say; paths are those of the new fields) and the
    /// `projections` (of any written field, old or new). From then on batches
    /// carry the new fields after the old ones ([`RNTupleWriter::schema`]).
    ///
    /// Before the first entry the fields go into the header. After it, they
    /// go into the footer's schema extension (spec "Schema Extension Record
    /// Frame"), their columns deferred to the entries written so far (spec
    /// "Column Description", flag 0x01): ROOT reads the earlier entries as
    /// zero values (0, empty collections and strings, empty optionals,
    /// variants in the invalid state: switch tag 0). All or nothing:
    /// a refused addition leaves the writer as it was.
    pub fn add_fields(
        &mut self,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        projections: &[Projection],
    ) -> Result<()> {
        self.usable()?;
        if matches!(self.sink, Sink::Context(_)) {
            return Err(Error::invalid(format!(
                "fields cannot be added to a fill context of a parallel writer ('{}')",
                self.name
            )));
        }
        let first_entry = self.num_entries();
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

    /// Checks that `batch` can be appended: its schema (as
    /// [`RNTupleWriter::write_batch`] does) and its values (no nulls outside
    /// optionals and variants, UTF-8 strings, known union type ids, values
    /// inside `Real32Quant` ranges). Writes nothing; a batch that passes can
    /// still fail on I/O.
    pub fn check_batch(&self, batch: &RecordBatch) -> Result<()> {
        self.check_schema(batch)?;
        self.check_leading_values(batch)
    }

    /// Checks the values of the batch columns that belong to the writer's
    /// first fields (all of them for a batch of the writer's schema).
    pub(crate) fn check_leading_values(&self, batch: &RecordBatch) -> Result<()> {
        for (f, arr) in self.plan.fields.iter().zip(batch.columns()) {
            check_values(f, &self.plan.columns, arr.as_ref(), 0, arr.len())?;
        }
        Ok(())
    }

    /// The Arrow schema of the batches: the schema the writer was created
    /// with and the fields added since.
    pub fn schema(&self) -> &ArrowSchema {
        &self.arrow_schema
    }

    /// Commits no journal records ([`crate::write::journal`]).
    pub(crate) fn without_journal(mut self) -> Self {
        self.journal = false;
        self
    }

    /// Whether an earlier failure stopped the writer (it refuses further work).
    pub fn has_failed(&self) -> bool {
        self.poisoned
    }

    /// Entries written so far (committed or not).
    pub fn num_entries(&self) -> u64 {
        self.first_entry + self.cluster_entries
    }

    fn write_envelope(&mut self, bytes: &[u8]) -> Result<EnvelopeLink> {
        let zipped = compress(bytes, self.options.compression)?;
        let offset = self.sink.get()?.write_blob(&[&zipped], bytes.len() as u64)?;
        Ok(EnvelopeLink { length: bytes.len() as u64, locator: Locator { offset, size: zipped.len() as u64 } })
    }

    fn usable(&self) -> Result<()> {
        if self.poisoned {
            return Err(Error::state(format!("RNTuple writer '{}' failed earlier and cannot continue", self.name)));
        }
        Ok(())
    }

    fn guard<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    /// Appends the entries of `batch`. Its columns must match the writer's
    /// schema by position, name and type (Utf8/LargeUtf8 and List/LargeList
    /// are interchangeable; nullability and list item names are not compared).
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        crash_point(CrashPoint::Fill);
        self.usable()?;
        let widened = self.context_batch(batch)?;
        let batch = widened.as_ref().unwrap_or(batch);
        self.check_schema(batch)?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let r = self.ensure_header().and_then(|_| self.append_batch(batch));
        self.guard(r)
    }

    fn check_schema(&self, batch: &RecordBatch) -> Result<()> {
        let schema = batch.schema();
        if schema.fields().len() != self.plan.fields.len() {
            return Err(Error::invalid(format!(
                "batch has {} columns, RNTuple '{}' has {} top-level fields",
                schema.fields().len(),
                self.name,
                self.plan.fields.len()
            )));
        }
        self.check_fields(&schema)
    }

    /// Checks the batch columns of `schema` against the first fields of the
    /// writer's schema, by name and type.
    fn check_fields(&self, schema: &ArrowSchema) -> Result<()> {
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

    fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        // A fill context may adopt a newer schema when it commits below: the
        // rest of the batch then gets the new fields' zero values (`extend`).
        let mut batch = std::borrow::Cow::Borrowed(batch);
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
                            self.commit_cluster_inner()?;
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
            for (f, arr) in self.plan.fields.iter().zip(batch.columns()) {
                self.filler.append(f, arr.as_ref(), a, m)?;
                // Complete blobs of streamed pages go to the file now.
                if let Some(open) = &mut self.open {
                    write_blobs(&mut self.filler.columns, open, &mut self.sink, false)?;
                }
            }
            self.cluster_entries += (m - a) as u64;
            self.cluster_unzipped += bytes.packed;
            a = m;
            let c = &self.filler.columns;
            let cramped = c.memory_room().is_some_and(|r| r < c.memory_room_of_empty_cluster() / 8);
            if full || cramped {
                self.commit_cluster_inner()?;
                self.widen_after_commit(&mut batch)?;
            }
        }
        Ok(())
    }

    fn entry_over_budget(&self, entry: usize, mem: u64) -> Error {
        let c = &self.filler.columns;
        Error::invalid(format!(
            "entry {entry} of the batch (entry {} of RNTuple '{}') takes {mem} bytes in page buffers, more \
                 than the memory budget of {} bytes leaves for the pages of a cluster ({} bytes); raise \
                 memory_budget",
            self.num_entries(),
            self.name,
            self.options.memory_budget,
            c.memory_room_of_empty_cluster()
        ))
    }

    /// Writes the pages of the open cluster that are ready (`all`: every
    /// page, the cluster's pages are all sealed).
    pub(super) fn write_streamed(&mut self, all: bool) -> Result<()> {
        match &mut self.open {
            Some(open) => write_blobs(&mut self.filler.columns, open, &mut self.sink, all),
            None => Ok(()),
        }
    }

    /// The bytes the writer's buffers hold now and the most they held at
    /// once ([`WriteOptions::memory_budget`]).
    pub fn memory_use(&self) -> MemoryUse {
        self.filler.columns.memory_use()
    }
}

/// Spills the complete blobs of streamed pages (`all`: and the rest).
fn write_blobs(columns: &mut Columns, open: &mut stream::OpenCluster, sink: &mut Sink<'_>, all: bool) -> Result<()> {
    for blob in columns.take_blobs(all) {
        open.spill(sink.get()?, blob)?;
    }
    Ok(())
}
