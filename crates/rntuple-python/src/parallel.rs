//! Parallel writing bindings: `ParallelWriter` (one RNTuple filled by
//! several fill contexts, `rntuple::write::ParallelWriter`, ROOT's
//! `RNTupleParallelWriter`) and `FillContext` (ROOT's `RNTupleFillContext`).
//! The `rntuple` package wraps them (`rntuple._parallel`).
//!
//! Every call that fills, compresses or writes runs with the GIL released,
//! so Python threads filling different contexts run in parallel. Rust locks
//! are only taken with the GIL released (no lock-order inversion with the
//! GIL).
//!
//! The binding counts the contexts not yet closed or collected: `close()`
//! refuses while some are open and leaves the writer usable (the Rust
//! `ParallelWriter::close` consumes the writer even when it refuses).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};
use rntuple::write::{FillContext, ParallelWriter};

use crate::attrs::attribute_ranges;
use crate::write::{add_fields_args, parse_options, parse_overrides, schema_of, to_py_write, Failure, PyFileWriter};

enum WriterState {
    Open(ParallelWriter),
    Closed,
    Abandoned,
    /// `close` failed, with the message.
    Failed(String),
}

impl WriterState {
    fn name(&self) -> &'static str {
        match self {
            WriterState::Open(_) => "open",
            WriterState::Closed => "closed",
            WriterState::Abandoned => "abandoned",
            WriterState::Failed(_) => "failed",
        }
    }
}

/// One RNTuple being written by several fill contexts.
#[pyclass(module = "rntuple._lib", name = "ParallelWriter", frozen)]
pub(crate) struct PyParallelWriter {
    inner: Mutex<WriterState>,
    name: String,
    /// The newest schema (grows with `add_fields`).
    schema: Mutex<SchemaRef>,
    /// Fill contexts made and not yet closed or collected.
    open_contexts: Arc<AtomicUsize>,
}

impl PyParallelWriter {
    fn lock(&self) -> Result<MutexGuard<'_, WriterState>, Failure> {
        self.inner
            .lock()
            .map_err(|_| Failure::State(format!("the parallel writer of RNTuple '{}' panicked", self.name)))
    }

    fn not_open(&self, state: &WriterState) -> Failure {
        Failure::State(match state {
            WriterState::Failed(msg) => format!("the parallel writer of RNTuple '{}' failed: {msg}", self.name),
            other => format!("the parallel writer of RNTuple '{}' is {}", self.name, other.name()),
        })
    }

    /// Runs `f` on the open writer with the GIL released.
    fn with_open<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&ParallelWriter) -> rntuple_format::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let state = self.lock()?;
            let WriterState::Open(w) = &*state else { return Err(self.not_open(&state)) };
            f(w).map_err(Failure::Rust)
        })
        .map_err(|e| e.into_py(py))
    }
}

#[pymethods]
impl PyParallelWriter {
    /// Starts the RNTuple `name` in `file` with the Arrow `schema` and writes
    /// its header; `overrides` and `options` as `FileWriter.rntuple` takes.
    #[new]
    fn new(
        py: Python<'_>,
        file: &Bound<'_, PyFileWriter>,
        name: String,
        schema: PySchema,
        overrides: &Bound<'_, PyDict>,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let file = file.get();
        let overrides = parse_overrides(overrides)?;
        let options = parse_options(options, file.compression)?;
        let schema: SchemaRef = schema.into_inner();
        let shared = file.inner.clone();
        let writer = py
            .detach(|| ParallelWriter::new(&shared, &name, &schema, &overrides, options))
            .map_err(|e| to_py_write(py, e))?;
        Ok(PyParallelWriter {
            inner: Mutex::new(WriterState::Open(writer)),
            name,
            schema: Mutex::new(schema),
            open_contexts: Arc::new(AtomicUsize::new(0)),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The newest schema: as created, with the fields added since.
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<PySchema> {
        schema_of(&self.schema, py)
    }

    /// Adds top-level fields (`schema`, written as `overrides` say) and
    /// projected fields ([(name, source, type or None)]) while contexts may
    /// be filling: `rntuple::write::ParallelWriter::add_fields`. A refused
    /// addition leaves the writer as it was.
    #[pyo3(signature = (schema, overrides, projections = Vec::new()))]
    fn add_fields(
        &self,
        py: Python<'_>,
        schema: PySchema,
        overrides: &Bound<'_, PyDict>,
        projections: Vec<(String, String, Option<String>)>,
    ) -> PyResult<()> {
        let (added, overrides, projections) = add_fields_args(schema, overrides, projections)?;
        let merged = self.with_open(py, |w| {
            w.add_fields(&added, &overrides, &projections)?;
            w.schema()
        })?;
        *self.schema.lock().map_err(|_| Failure::State("poisoned".into()).into_py(py))? = Arc::new(merged);
        Ok(())
    }

    /// "open", "closed", "abandoned" or "failed".
    #[getter]
    fn state(&self, py: Python<'_>) -> PyResult<&'static str> {
        py.detach(|| self.lock().map(|s| s.name())).map_err(|e| e.into_py(py))
    }

    /// Fill contexts made and not yet closed (or collected).
    #[getter]
    fn open_contexts(&self) -> usize {
        self.open_contexts.load(Ordering::SeqCst)
    }

    /// Entries in the clusters committed so far (0 unless open).
    #[getter]
    fn num_entries(&self, py: Python<'_>) -> PyResult<u64> {
        py.detach(|| match &*self.lock()? {
            WriterState::Open(w) => w.num_entries().map_err(Failure::Rust),
            _ => Ok(0),
        })
        .map_err(|e| e.into_py(py))
    }

    /// A new fill context (usable from any thread).
    fn fill_context(&self, py: Python<'_>) -> PyResult<PyFillContext> {
        let ctx = self.with_open(py, |w| {
            let ctx = w.create_fill_context()?;
            // Counted while the writer's lock is held: `close` sees it.
            self.open_contexts.fetch_add(1, Ordering::SeqCst);
            Ok(ctx)
        })?;
        let open = OpenContext { ctx: Some(Box::new(ctx)), open_contexts: Arc::clone(&self.open_contexts) };
        Ok(PyFillContext { inner: Mutex::new(ContextState::Open(open)), name: self.name.clone() })
    }

    /// Creates the attribute set `name` (fields: the Arrow `schema`, written
    /// as `overrides` say); it is written at `close`.
    fn create_attribute_set(
        &self,
        py: Python<'_>,
        name: String,
        schema: PySchema,
        overrides: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let overrides = parse_overrides(overrides)?;
        let schema = schema.into_inner();
        self.with_open(py, move |w| w.create_attribute_set(&name, &schema, &overrides))
    }

    /// Appends attribute entries: row i of `batch` for the committed entries
    /// `[starts[i], starts[i] + lengths[i])`.
    fn commit_attributes(
        &self,
        py: Python<'_>,
        name: String,
        batch: PyRecordBatch,
        starts: Vec<u64>,
        lengths: Vec<u64>,
    ) -> PyResult<()> {
        let ranges = attribute_ranges(&starts, &lengths)?;
        let batch = batch.into_inner();
        self.with_open(py, move |w| w.commit_attributes(&name, &batch, &ranges))
    }

    /// Writes the page lists, footer and anchor (no-op when closed). Refused,
    /// leaving the writer open, while fill contexts are open.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut state = self.lock()?;
            let open = self.open_contexts.load(Ordering::SeqCst);
            if matches!(*state, WriterState::Open(_)) && open > 0 {
                return Err(Failure::State(format!(
                    "{open} fill context(s) of the parallel writer of RNTuple '{}' are still open; \
                     close them (ctx.close() or their `with` block) before closing the writer",
                    self.name
                )));
            }
            match std::mem::replace(&mut *state, WriterState::Closed) {
                WriterState::Open(w) => w.close().map_err(|e| {
                    *state = WriterState::Failed(e.to_string());
                    Failure::Rust(e)
                }),
                WriterState::Closed => Ok(()),
                other => {
                    let e = self.not_open(&other);
                    *state = other;
                    Err(e)
                }
            }
        })
        .map_err(|e| e.into_py(py))
    }

    /// Drops the RNTuple: it will not be in the file (clusters that open
    /// contexts still commit stay as dead space). No-op once closed.
    fn abandon(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut state = self.lock()?;
            if !matches!(*state, WriterState::Closed) {
                *state = WriterState::Abandoned;
            }
            Ok(())
        })
        .map_err(|e: Failure| e.into_py(py))
    }
}

/// An open fill context, counted by its writer until it is dropped.
struct OpenContext {
    ctx: Option<Box<FillContext>>,
    open_contexts: Arc<AtomicUsize>,
}

impl Drop for OpenContext {
    fn drop(&mut self) {
        // The Rust context commits its cluster when dropped unclosed; only
        // then does the writer stop counting it.
        drop(self.ctx.take());
        self.open_contexts.fetch_sub(1, Ordering::SeqCst);
    }
}

enum ContextState {
    Open(OpenContext),
    /// Closed, with the entries it had filled.
    Closed(u64),
}

/// One fill context of a `ParallelWriter`.
#[pyclass(module = "rntuple._lib", name = "FillContext", frozen)]
pub(crate) struct PyFillContext {
    inner: Mutex<ContextState>,
    name: String,
}

impl PyFillContext {
    /// Runs `f` on the open context with the GIL released.
    fn with_open<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut FillContext) -> rntuple_format::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut state = self.inner.lock().map_err(|_| self.panicked())?;
            match &mut *state {
                ContextState::Open(OpenContext { ctx: Some(ctx), .. }) => f(ctx).map_err(Failure::Rust),
                _ => Err(Failure::State(format!("the fill context of RNTuple '{}' is closed", self.name))),
            }
        })
        .map_err(|e| e.into_py(py))
    }

    fn panicked(&self) -> Failure {
        Failure::State(format!("a fill context of RNTuple '{}' panicked", self.name))
    }
}

#[pymethods]
impl PyFillContext {
    /// Appends a record batch (of any schema the writer had). A batch of
    /// another schema, or whose values do not fit, is refused and the
    /// context stays usable; a failure while writing fails the context and
    /// the writer.
    fn extend(&self, py: Python<'_>, batch: PyRecordBatch) -> PyResult<()> {
        let batch = batch.into_inner();
        self.with_open(py, |c| {
            c.check_batch(&batch)?;
            c.write_batch(&batch)
        })
    }

    /// Checks a record batch as `extend` does, without writing it.
    fn check(&self, py: Python<'_>, batch: PyRecordBatch) -> PyResult<()> {
        let batch = batch.into_inner();
        self.with_open(py, |c| c.check_batch(&batch))
    }

    /// Commits the entries appended since the last cluster as a cluster
    /// (no-op without new entries).
    fn commit_cluster(&self, py: Python<'_>) -> PyResult<()> {
        self.with_open(py, |c| c.flush_cluster())
    }

    /// Entries appended through this context (committed or not).
    #[getter]
    fn num_entries(&self, py: Python<'_>) -> PyResult<u64> {
        py.detach(|| match &*self.inner.lock().map_err(|_| self.panicked())? {
            ContextState::Open(OpenContext { ctx: Some(c), .. }) => Ok(c.num_entries()),
            ContextState::Open(_) => Ok(0),
            ContextState::Closed(n) => Ok(*n),
        })
        .map_err(|e: Failure| e.into_py(py))
    }

    /// (held, high water) bytes of the context's buffers; `None` once closed.
    #[getter]
    fn memory_use(&self, py: Python<'_>) -> PyResult<Option<(u64, u64)>> {
        py.detach(|| match &*self.inner.lock().map_err(|_| self.panicked())? {
            ContextState::Open(OpenContext { ctx: Some(c), .. }) => {
                let m = c.memory_use();
                Ok(Some((m.held, m.high_water)))
            }
            _ => Ok(None),
        })
        .map_err(|e: Failure| e.into_py(py))
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| Ok(matches!(&*self.inner.lock().map_err(|_| self.panicked())?, ContextState::Closed(_))))
            .map_err(|e: Failure| e.into_py(py))
    }

    /// Commits the open cluster and ends the context (no-op when closed).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut state = self.inner.lock().map_err(|_| self.panicked())?;
            let ContextState::Open(open) = &mut *state else { return Ok(()) };
            let Some(ctx) = open.ctx.take() else { return Ok(()) };
            let n = ctx.num_entries();
            let r = (*ctx).close();
            // Dropping the emptied `OpenContext` uncounts it.
            *state = ContextState::Closed(n);
            r.map_err(Failure::Rust)
        })
        .map_err(|e| e.into_py(py))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParallelWriter>()?;
    m.add_class::<PyFillContext>()?;
    Ok(())
}
