//! [`ParallelWriter`]: several threads fill independent clusters of one
//! RNTuple, as ROOT's `RNTupleParallelWriter` (each thread with its own
//! `RNTupleFillContext`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;
use arrow_schema::Schema as ArrowSchema;
use rntuple_format::{Error, Result};

use super::budget::MemoryUse;
use super::context::{ClusterTarget, Context};
use super::options::{FieldOverride, Projection, WriteOptions};
use super::pages::Columns;
use super::shared::SharedFileWriter;
use super::writer::{record_cluster, RNTupleWriter};
use crate::attributes::AttributeRange;

/// One RNTuple filled by several [`FillContext`]s, e.g. one per thread.
///
/// Each context has its own page buffers (and compression threads) and
/// builds its own clusters; a cluster is written when its context commits
/// it, and the clusters are numbered in commit order: entries of one
/// context stay in their order, entries of different contexts interleave by
/// cluster. Committing a cluster (writing its pages and recording it) is
/// serialized by a lock; filling and compressing are not.
///
/// The header is written when the writer is created; [`ParallelWriter::close`]
/// writes the page lists, the footer and the anchor once every context is
/// closed or dropped. A context dropped without [`FillContext::close`]
/// commits its last cluster (ROOT's fill context does so in its destructor);
/// if that fails, the parallel writer fails at `close`. `memory_budget`
/// applies to each context.
///
/// Fields can be added while contexts fill ([`ParallelWriter::add_fields`],
/// late schema extension, which ROOT's `RNTupleParallelWriter` lacks): the
/// extension happens under the commit lock, at the cluster boundary of the
/// entries committed so far, to which the new columns are deferred; every
/// cluster committed afterwards carries them for all its entries. A context
/// created before takes batches of its schema until it adopts the newest:
/// when it is handed a batch with the new fields, or when it commits a
/// cluster after the extension. Its entries without the new fields then get
/// their zero values (0, empty strings and collections, empty optionals,
/// variants in the invalid state), the values ROOT reads for a deferred
/// column. A context also takes batches of any earlier schema, the fields
/// they lack filled with zero values.
///
/// Attribute sets are created and filled on the parallel writer itself
/// ([`ParallelWriter::create_attribute_set`]), over the entries committed.
///
/// ```no_run
/// # use std::collections::HashMap;
/// # use rntuple::write::{ParallelWriter, SharedFileWriter, WriteOptions};
/// # fn batches(_k: usize) -> Vec<arrow_array::RecordBatch> { unimplemented!() }
/// # let schema = arrow_schema::Schema::empty();
/// let file = SharedFileWriter::create("out.root", Default::default())?;
/// let writer = ParallelWriter::new(&file, "Events", &schema, &HashMap::new(), WriteOptions::default())?;
/// std::thread::scope(|s| {
///     for k in 0..4 {
///         let mut ctx = writer.create_fill_context()?;
///         s.spawn(move || -> rntuple_format::Result<()> {
///             for b in batches(k) {
///                 ctx.write_batch(&b)?;
///             }
///             ctx.close()
///         });
///     }
///     Ok::<_, rntuple_format::Error>(())
/// })?;
/// writer.close()?;
/// file.finish()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ParallelWriter {
    main: Arc<Mutex<RNTupleWriter<'static>>>,
}

impl std::fmt::Debug for ParallelWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParallelWriter").field("contexts_and_writer", &Arc::strong_count(&self.main)).finish()
    }
}

impl ParallelWriter {
    /// Creates the RNTuple `name` in `file` (as [`RNTupleWriter::new_shared`])
    /// and writes its header.
    pub fn new(
        file: &SharedFileWriter,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: WriteOptions,
    ) -> Result<Self> {
        let mut w = RNTupleWriter::new_shared(file, name, schema, overrides, options)?;
        w.ensure_header()?;
        Ok(ParallelWriter { main: Arc::new(Mutex::new(w)) })
    }

    /// Adds top-level fields (written ones from `schema`, as `overrides`
    /// say, and `projections`), as [`RNTupleWriter::add_fields`] does, while
    /// contexts may be filling on other threads. The header is written
    /// already, so the fields go into the footer's schema extension (spec
    /// "Schema Extension Record Frame"), their columns deferred to the
    /// entries committed so far (spec "Column Description" flag 0x01; not
    /// deferred when none are). Contexts created from now on take
    /// the newest schema ([`ParallelWriter::schema`]); older contexts adopt
    /// it as the type's docs say. All or nothing: a refused addition (a name
    /// taken, a type not writable, a memory budget too small for the new
    /// columns) changes nothing.
    pub fn add_fields(
        &self,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        projections: &[Projection],
    ) -> Result<()> {
        let mut main = lock_main(&self.main)?;
        main.ctx.usable()?;
        // A fresh fill context must be able to hold the new columns.
        let mut trial = main.ctx.plan.clone();
        trial.extend(schema, overrides, projections, &main.ctx.options, main.num_entries())?;
        Columns::new(&trial.columns, &main.ctx.options)?;
        main.add_fields(schema, overrides, projections)
    }

    /// The newest schema of the batches: the one new contexts take.
    pub fn schema(&self) -> Result<ArrowSchema> {
        Ok(lock_main(&self.main)?.schema().clone())
    }

    /// A new context to fill entries with (on any thread).
    pub fn create_fill_context(&self) -> Result<FillContext> {
        let ctx = Context::sibling(&lock_main(&self.main)?.ctx)?;
        Ok(FillContext { ctx: Some(ctx), main: Arc::clone(&self.main) })
    }

    /// Entries in the clusters committed so far.
    pub fn num_entries(&self) -> Result<u64> {
        Ok(lock_main(&self.main)?.num_entries())
    }

    /// Creates the attribute set `name` of this RNTuple, as
    /// [`RNTupleWriter::create_attribute_set`] does; it is written at
    /// [`ParallelWriter::close`].
    pub fn create_attribute_set(
        &self,
        name: &str,
        schema: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
    ) -> Result<()> {
        lock_main(&self.main)?.create_attribute_set(name, schema, overrides)
    }

    /// Appends entries to the attribute set `name`, as
    /// [`RNTupleWriter::commit_attributes`] does. The ranges refer to the
    /// entries of the clusters committed so far ([`ParallelWriter::num_entries`]),
    /// numbered in commit order.
    pub fn commit_attributes(&self, name: &str, batch: &RecordBatch, ranges: &[AttributeRange]) -> Result<()> {
        lock_main(&self.main)?.commit_attributes(name, batch, ranges)
    }

    /// Writes the page lists, the footer and the anchor. Fails while a
    /// context is still open, and when a context failed to commit a cluster.
    pub fn close(self) -> Result<()> {
        let main = Arc::try_unwrap(self.main).map_err(|m| {
            Error::invalid(format!(
                "{} fill context(s) of the parallel writer are still open; close or drop them first",
                Arc::strong_count(&m) - 1
            ))
        })?;
        let main = main.into_inner().map_err(|_| {
            Error::state("a fill context panicked while committing a cluster; the RNTuple is incomplete")
        })?;
        main.close()
    }
}

/// Locks the writer of a [`ParallelWriter`].
fn lock_main<'a>(main: &'a Mutex<RNTupleWriter<'static>>) -> Result<std::sync::MutexGuard<'a, RNTupleWriter<'static>>> {
    main.lock()
        .map_err(|_| Error::state("a fill context panicked while committing a cluster; the RNTuple is incomplete"))
}

/// Fills clusters of a [`ParallelWriter`]'s RNTuple: entries are appended
/// with [`FillContext::write_batch`] (as [`RNTupleWriter::write_batch`],
/// clusters committed at the same sizes) and the open cluster is committed
/// with [`FillContext::flush_cluster`] or [`FillContext::close`].
pub struct FillContext {
    /// `None` once closed.
    ctx: Option<Context>,
    main: Arc<Mutex<RNTupleWriter<'static>>>,
}

impl std::fmt::Debug for FillContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FillContext").field("context", &self.ctx).finish()
    }
}

/// A fill context's clusters go into the sink of its parallel writer's
/// writer, under its lock, numbered in commit order.
struct ViaMain<'a>(&'a Mutex<RNTupleWriter<'static>>);

impl ClusterTarget for ViaMain<'_> {
    fn commit(&mut self, ctx: &mut Context) -> Result<()> {
        let mut columns = ctx.seal_cluster()?;
        let mut main = lock_main(self.0)?;
        main.ctx.usable()?;
        // Fields added since this context last looked: its entries get their
        // zero values, so that the cluster carries every column of the schema
        // it is recorded under (`context/extend.rs`).
        if ctx.adopt(&main.ctx)? {
            let added = ctx.seal_cluster()?;
            let known = columns.len();
            columns.extend(added.into_iter().skip(known));
        }
        let main = &mut *main;
        let r = record_cluster(&mut main.sink, ctx, &columns, None);
        let written = main.ctx.guard(r)?;
        drop(columns);
        ctx.cluster_committed(written);
        Ok(())
    }

    fn stream(&mut self, _: &mut Context) -> Result<()> {
        Ok(())
    }
}

impl FillContext {
    fn inner(&mut self) -> Result<&mut Context> {
        self.ctx.as_mut().ok_or_else(|| Error::state("the fill context is closed"))
    }

    /// Appends the entries of `batch`: of the schema the context takes
    /// ([`FillContext::schema`]), of an earlier one of the writer (the
    /// fields it lacks get zero values), or of a newer one, which the
    /// context then adopts ([`ParallelWriter`]).
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let main = Arc::clone(&self.main);
        let ctx = self.inner()?;
        ctx.usable()?;
        if batch.num_columns() > ctx.schema().fields().len() {
            let r = lock_main(&main).and_then(|m| ctx.adopt(&m.ctx));
            ctx.guard(r)?;
        }
        let widened = ctx.earlier_batch(batch)?;
        ctx.write_batch(widened.as_ref().unwrap_or(batch), &mut ViaMain(&main))
    }

    /// Checks the values of `batch` as [`RNTupleWriter::check_batch`] does,
    /// without writing: a batch refused here leaves the context usable,
    /// whereas [`FillContext::write_batch`] fails the context and the writer
    /// on such values. Checks the fields of the context's schema
    /// ([`FillContext::schema`]); the fields of a newer schema in the batch
    /// are checked when they are written.
    pub fn check_batch(&self, batch: &RecordBatch) -> Result<()> {
        match &self.ctx {
            Some(c) => c.check_leading_values(batch),
            None => Err(Error::state("the fill context is closed")),
        }
    }

    /// The schema the context takes now: the writer's when the context was
    /// created or last adopted the newest one. Empty once closed.
    pub fn schema(&self) -> ArrowSchema {
        self.ctx.as_ref().map_or_else(ArrowSchema::empty, |c| c.schema().clone())
    }

    /// Commits the entries appended since the last cluster as a cluster of
    /// the RNTuple (no-op when there are none).
    pub fn flush_cluster(&mut self) -> Result<()> {
        let main = Arc::clone(&self.main);
        self.inner()?.commit(&mut ViaMain(&main))
    }

    /// Entries appended through this context (committed or not).
    pub fn num_entries(&self) -> u64 {
        self.ctx.as_ref().map_or(0, |c| c.num_entries())
    }

    /// The bytes this context's buffers hold now and at most.
    pub fn memory_use(&self) -> MemoryUse {
        self.ctx.as_ref().map_or_else(MemoryUse::default, |c| c.memory_use())
    }

    /// Commits the open cluster and ends the context.
    pub fn close(mut self) -> Result<()> {
        let r = self.flush_cluster();
        self.finish(r)
    }

    /// Ends the context; a failure marks the parallel writer failed.
    fn finish(&mut self, r: Result<()>) -> Result<()> {
        if let Some(c) = self.ctx.take() {
            if r.is_err() || c.has_failed() {
                match self.main.lock() {
                    Ok(mut m) => m.ctx.poison(),
                    Err(p) => p.into_inner().ctx.poison(),
                }
            }
        }
        r
    }
}

impl Drop for FillContext {
    fn drop(&mut self) {
        let r = match self.ctx.as_ref() {
            Some(c) if !c.has_failed() => self.flush_cluster(),
            _ => Ok(()),
        };
        let _ = self.finish(r);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Float32Builder, ListBuilder};
    use arrow_array::{Array, Float32Array, Int64Array, LargeListArray};
    use arrow_schema::{DataType, Field, Schema};
    use rntuple_container::write::WriterOptions;

    use super::*;
    use crate::RNTupleFile;

    /// Entries `ids`: `id` and `v` = `[id; id % 4]`.
    fn batch(ids: &[i64]) -> RecordBatch {
        let mut v = ListBuilder::new(Float32Builder::new());
        for &id in ids {
            for _ in 0..id % 4 {
                v.values().append_value(id as f32);
            }
            v.append(true);
        }
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("v", DataType::List(Arc::new(Field::new("item", DataType::Float32, true))), false),
        ]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Int64Array::from(ids.to_vec())), Arc::new(v.finish())])
            .unwrap()
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("rntuple-parallel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_batch_with_values_that_do_not_fit_is_refused_by_check_batch_and_the_context_stays_usable() {
        let path = scratch("checked.root");
        let file = SharedFileWriter::create(&path, WriterOptions::default()).unwrap();
        let schema = batch(&[0]).schema();
        let writer = ParallelWriter::new(&file, "t", &schema, &HashMap::new(), WriteOptions::default()).unwrap();
        let mut ctx = writer.create_fill_context().unwrap();
        // `id` is not optional: a null in it does not fit.
        let ids = Int64Array::from(vec![Some(1), None]);
        let bad = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), schema.field(1).clone()])),
            vec![Arc::new(ids), batch(&[1, 2]).column(1).clone()],
        )
        .unwrap();
        let err = ctx.check_batch(&bad).unwrap_err().to_string();
        assert!(err.contains("null"), "{err}");
        ctx.check_batch(&batch(&[3, 4])).unwrap();
        ctx.write_batch(&batch(&[3, 4])).unwrap();
        ctx.close().unwrap();
        writer.close().unwrap();
        file.finish().unwrap();
        let f = RNTupleFile::open(&path).unwrap();
        let read = f.rntuple("t").unwrap().read(None, 0, 2).unwrap();
        let id = read.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(id.values().to_vec(), vec![3, 4]);
    }

    #[test]
    fn threads_fill_disjoint_clusters_and_every_entry_is_read_once() {
        const THREADS: i64 = 4;
        const N: i64 = 40_000;
        let path = scratch("parallel.root");
        let file = SharedFileWriter::create(&path, WriterOptions::default()).unwrap();
        let options = WriteOptions { compression_threads: 1, approx_zipped_cluster_size: 20_000, ..Default::default() };
        let schema = batch(&[0]).schema();
        let writer = ParallelWriter::new(&file, "t", &schema, &HashMap::new(), options).unwrap();
        std::thread::scope(|s| {
            for k in 0..THREADS {
                let mut ctx = writer.create_fill_context().unwrap();
                s.spawn(move || {
                    let ids: Vec<i64> = (k..N).step_by(THREADS as usize).collect();
                    for (i, chunk) in ids.chunks(300).enumerate() {
                        ctx.write_batch(&batch(chunk)).unwrap();
                        if i % 3 == 2 {
                            ctx.flush_cluster().unwrap();
                        }
                    }
                    assert_eq!(ctx.num_entries(), (N / THREADS) as u64);
                    if k == 0 {
                        drop(ctx); // commits its last cluster
                    } else {
                        ctx.close().unwrap();
                    }
                });
            }
        });
        assert_eq!(writer.num_entries().unwrap(), N as u64);
        writer.close().unwrap();
        file.finish().unwrap();

        let f = RNTupleFile::open(&path).unwrap();
        let t = f.rntuple("t").unwrap();
        assert_eq!(t.num_entries(), N as u64);
        let read = t.read(None, 0, N as u64).unwrap();
        let id = read.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let v = read.column(1);
        let v = v.as_any().downcast_ref::<LargeListArray>().unwrap_or_else(|| panic!("{:?}", v.data_type()));
        // Every entry exactly once, its collection with it.
        let mut seen = vec![false; N as usize];
        for (row, &x) in id.values().iter().enumerate() {
            assert!(!std::mem::replace(&mut seen[x as usize], true), "entry {x} twice");
            let items = v.value(row);
            let items = items.as_any().downcast_ref::<Float32Array>().unwrap();
            assert_eq!(items.len() as i64, x % 4, "row {row}");
            assert!(items.values().iter().all(|&y| y == x as f32), "row {row}");
        }
        assert!(seen.iter().all(|&s| s));
        // Each cluster comes from one context, its entries in order.
        let clusters = &t.descriptor().clusters;
        assert!(clusters.len() >= 4 * 5, "{} clusters", clusters.len());
        for c in clusters {
            let ids = &id.values()[c.first_entry as usize..(c.first_entry + c.num_entries) as usize];
            assert!(ids.iter().all(|x| x % THREADS == ids[0] % THREADS), "cluster {} mixes contexts", c.id);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "cluster {}", c.id);
        }
    }

    #[test]
    fn close_waits_for_every_context() {
        let path = scratch("open-context.root");
        let file = SharedFileWriter::create(&path, WriterOptions::default()).unwrap();
        let b = batch(&[1, 2, 3]);
        let writer = ParallelWriter::new(&file, "t", &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap();
        let mut ctx = writer.create_fill_context().unwrap();
        ctx.write_batch(&b).unwrap();
        let mut other = writer.create_fill_context().unwrap();
        assert!(other.write_batch(&batch(&[4])).is_ok());
        other.close().unwrap();
        // `close` consumes the writer: try it on a clone of the handle.
        let e = ParallelWriter { main: Arc::clone(&writer.main) }.close().unwrap_err().to_string();
        assert!(e.contains("still open"), "{e}");
        drop(ctx);
        writer.close().unwrap();
        file.finish().unwrap();
        let f = RNTupleFile::open(&path).unwrap();
        let t = f.rntuple("t").unwrap();
        assert_eq!(t.num_entries(), 4);
        assert_eq!(t.descriptor().clusters.len(), 2);
    }
}
