//! [`RNTupleWriter`]: one fill context over one page sink.

use std::collections::HashMap;

use arrow_array::RecordBatch;
use arrow_schema::Schema as ArrowSchema;
use rntuple_format::model::{Header, PageDescriptor};
use rntuple_format::Result;

use super::budget::MemoryUse;
use super::context::{ClusterTarget, Context};
use super::layout::write_cluster_pages;
use super::options::{FieldOverride, Projection, WriteOptions};
use super::pages::ClusterColumn;
use super::shared::SharedFileWriter;
use super::sink::{BlobSink, FooterParts, PageSink, SinkOptions, WrittenHeader};
use crate::attributes::PendingSets;

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
///
/// Inside, it is one fill context (entries into pages, `context`) over one
/// page sink (where the bytes go, `sink`); a [`super::ParallelWriter`] is
/// several fill contexts over the sink of one such writer.
pub struct RNTupleWriter<'f> {
    pub(super) ctx: Context,
    pub(super) sink: PageSink<'f>,
    /// Attribute sets created on this RNTuple, written at `close`.
    attribute_sets: PendingSets,
}

impl std::fmt::Debug for RNTupleWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RNTupleWriter")
            .field("name", &self.sink.name())
            .field("entries", &self.num_entries())
            .field("clusters", &self.sink.num_clusters())
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
        Self::with_sink(file.clone(), name, schema, overrides, options)
    }
}

impl<'f> RNTupleWriter<'f> {
    /// Creates the writer. `name` may be a path (`"dir/sub/Events"`): the
    /// anchor goes into those subdirectories. `overrides` maps dotted field
    /// paths (`"jets._0.pt"`) to how the field is written.
    pub fn new(
        file: &'f mut rntuple_container::write::FileWriter,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        Self::with_sink(file, name, schema, overrides, options)
    }

    /// A writer into any destination.
    pub(crate) fn with_sink(
        dest: impl BlobSink + 'f,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        let stream = !options.group_pages_by_column;
        let sink_options = SinkOptions {
            compression: options.compression,
            cluster_group_size: options.cluster_group_size,
            journal: true,
        };
        let mut ctx = Context::new(name, schema, overrides, options, stream)?;
        ctx.set_scratch_dir(dest.scratch_dir());
        let sink = PageSink::new(dest, name, sink_options);
        Ok(RNTupleWriter { ctx, sink, attribute_sets: PendingSets::default() })
    }

    /// Journals no cluster ([`crate::write::journal`]): an attribute set's
    /// RNTuple, written at the main RNTuple's close.
    pub(crate) fn without_journal(mut self) -> Self {
        self.sink.set_journal(false);
        self
    }

    /// Writes the header envelope with the schema so far, once.
    pub(super) fn ensure_header(&mut self) -> Result<WrittenHeader> {
        if let Some(h) = self.sink.header() {
            return Ok(h);
        }
        let name = self.sink.name();
        let base = name.rsplit_once('/').map_or(name, |(_, b)| b);
        let header = Header {
            feature_flags: Vec::new(),
            name: base.to_string(),
            description: self.ctx.options.description.clone(),
            writer: writer_identifier(),
            schema: self.ctx.plan.schema.clone(),
        };
        let r = self.sink.write_header(&header);
        self.ctx.guard(r)
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
        let first_entry = self.num_entries();
        self.ctx.add_fields(schema, overrides, projections, first_entry)
    }

    /// Checks that `batch` can be appended: its schema (as
    /// [`RNTupleWriter::write_batch`] does) and its values (no nulls outside
    /// optionals and variants, UTF-8 strings, known union type ids, values
    /// inside `Real32Quant` ranges). Writes nothing; a batch that passes can
    /// still fail on I/O.
    pub fn check_batch(&self, batch: &RecordBatch) -> Result<()> {
        self.ctx.check_batch(batch)
    }

    /// The Arrow schema of the batches: the schema the writer was created
    /// with and the fields added since.
    pub fn schema(&self) -> &ArrowSchema {
        self.ctx.schema()
    }

    /// Whether an earlier failure stopped the writer (it refuses further work).
    pub fn has_failed(&self) -> bool {
        self.ctx.has_failed()
    }

    /// Entries written so far (committed or not).
    pub fn num_entries(&self) -> u64 {
        // The clusters recorded (for a parallel writer's, by its contexts)
        // and the open cluster.
        self.sink.num_entries() + self.ctx.cluster_entries
    }

    /// Appends the entries of `batch`. Its columns must match the writer's
    /// schema by position, name and type (Utf8/LargeUtf8 and List/LargeList
    /// are interchangeable; nullability and list item names are not compared).
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.ctx.usable()?;
        self.ctx.check_schema(batch)?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.ensure_header()?;
        self.ctx.write_batch(batch, &mut self.sink)
    }

    /// Commits the entries written since the last cluster as a cluster (no-op
    /// when there are none).
    pub fn commit_cluster(&mut self) -> Result<()> {
        self.ctx.commit(&mut self.sink)
    }

    /// Writes the page list of the clusters committed since the last one
    /// (no-op when there are none). Entries not yet in a cluster stay open.
    pub fn commit_cluster_group(&mut self) -> Result<()> {
        self.ctx.usable()?;
        let r = self.sink.commit_cluster_group();
        self.ctx.guard(r)
    }

    /// The bytes the writer's buffers hold now and the most they held at
    /// once ([`WriteOptions::memory_budget`]).
    pub fn memory_use(&self) -> MemoryUse {
        self.ctx.memory_use()
    }

    /// The attribute sets of this RNTuple, the entries written so far and
    /// the options, for [`crate::attributes`].
    pub(crate) fn attribute_sets_mut(&mut self) -> Result<(&mut PendingSets, u64, &WriteOptions)> {
        self.ctx.usable()?;
        let written = self.num_entries();
        Ok((&mut self.attribute_sets, written, &self.ctx.options))
    }

    /// Commits the last cluster, writes the page lists, the attribute sets,
    /// the footer and the anchor.
    pub fn close(mut self) -> Result<()> {
        let anchor = self.close_anchor()?;
        self.sink.write_anchor(&anchor)
    }

    /// [`RNTupleWriter::close`] but for the anchor, which is returned (an
    /// attribute set's RNTuple puts it where no directory lists it).
    pub(crate) fn close_anchor(&mut self) -> Result<rntuple_container::Anchor> {
        self.ctx.usable()?;
        let header = self.ensure_header()?;
        self.commit_cluster()?;
        let sets = std::mem::take(&mut self.attribute_sets);
        let r = sets.write(self.sink.dest()).and_then(|attribute_sets| {
            let mut schema_extension = header.extension_of(&self.ctx.plan.schema);
            let classes = super::streamer_field::classes_of(&self.ctx.plan.fields);
            schema_extension.extra_type_info = super::streamer_field::extra_type_info(&classes);
            // ROOT lists them in the file's streamer-info record too.
            for object in classes.streamer_info_objects() {
                self.sink.dest().add_class_streamer_info(&object);
            }
            self.sink.finish(FooterParts { feature_flags: Vec::new(), schema_extension, attribute_sets })
        });
        self.ctx.guard(r)
    }
}

/// Writes the sealed pages of a cluster of `entries` entries of a context
/// filled by `plan` (`streamed`: the descriptors of pages written already)
/// into `sink` and records the cluster; returns the bytes of pages written.
/// The header is written (the cluster's entries came after it).
pub(super) fn record_cluster(
    sink: &mut PageSink<'_>,
    ctx: &Context,
    columns: &[ClusterColumn],
    streamed: Option<(Vec<Vec<PageDescriptor>>, u64)>,
) -> Result<u64> {
    let plan = &ctx.plan;
    let known = sink.num_columns();
    if known < plan.columns.len() {
        sink.add_columns(plan.columns[known..].iter().map(|c| c.first_element));
    }
    let (pages, written) = match streamed {
        Some(s) => s,
        None => {
            let merge = ctx.options.same_page_merging && ctx.options.page_checksums;
            write_cluster_pages(sink.dest(), columns, merge)?
        }
    };
    if plan.fields.iter().any(|f| f.streamer.is_some()) {
        let classes = super::streamer_field::classes_of(&plan.fields);
        sink.set_extra_type_info(super::streamer_field::extra_type_info(&classes));
    }
    sink.commit_pages(ctx.cluster_entries, pages, &plan.schema)?;
    Ok(written)
}

/// A single writer's clusters go straight into its sink.
impl ClusterTarget for PageSink<'_> {
    fn commit(&mut self, ctx: &mut Context) -> Result<()> {
        let columns = ctx.seal_cluster()?;
        let streamed = ctx.finish_streamed(self.dest())?;
        let written = record_cluster(self, ctx, &columns, streamed)?;
        drop(columns);
        ctx.cluster_committed(written);
        Ok(())
    }
    fn stream(&mut self, ctx: &mut Context) -> Result<()> {
        ctx.write_streamed(&*self.dest(), false)
    }
}
