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
use std::sync::{Arc, Mutex};

use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};
use rntuple::write::{FillContext, ParallelWriter};

use crate::errors::to_py_write;
use crate::write::{parse_options, parse_overrides, writer_pymethods, PyFileWriter};
use crate::writer_state::{Guarded, State};
use rntuple_format::Error;

/// One RNTuple being written by several fill contexts.
#[pyclass(module = "rntuple._lib", name = "ParallelWriter", frozen)]
pub(crate) struct PyParallelWriter {
    inner: Guarded<ParallelWriter>,
    /// Fill contexts made and not yet closed or collected.
    open_contexts: Arc<AtomicUsize>,
}

impl PyParallelWriter {
    /// Runs `f` on the open writer with the GIL released.
    pub(crate) fn with_open<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&ParallelWriter) -> rntuple_format::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.inner.with_open(|w| f(w), |_| false)).map_err(to_py_write)
    }
}

writer_pymethods!(PyParallelWriter {
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
        let writer =
            py.detach(|| ParallelWriter::new(&shared, &name, &schema, &overrides, options)).map_err(to_py_write)?;
        Ok(PyParallelWriter {
            inner: Guarded::new(writer, "parallel writer", name, schema),
            open_contexts: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Fill contexts made and not yet closed (or collected).
    #[getter]
    fn open_contexts(&self) -> usize {
        self.open_contexts.load(Ordering::SeqCst)
    }

    /// Entries in the clusters committed so far (0 unless open).
    #[getter]
    fn num_entries(&self, py: Python<'_>) -> PyResult<u64> {
        py.detach(|| match &*self.inner.lock()? {
            State::Open(w) => w.num_entries(),
            _ => Ok(0),
        })
        .map_err(to_py_write)
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
        Ok(PyFillContext { inner: Mutex::new(ContextState::Open(open)), name: self.inner.name.clone() })
    }

    /// Writes the page lists, footer and anchor (no-op when closed). Refused,
    /// leaving the writer open, while fill contexts are open.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let still_open = || match self.open_contexts.load(Ordering::SeqCst) {
            0 => Ok(()),
            open => Err(Error::state(format!(
                "{open} fill context(s) of the parallel writer of RNTuple '{}' are still open; \
                 close them (ctx.close() or their `with` block) before closing the writer",
                self.inner.name
            ))),
        };
        py.detach(|| self.inner.close(still_open, |w| w.close())).map_err(to_py_write)
    }

    /// Drops the RNTuple: it will not be in the file (clusters that open
    /// contexts still commit stay as dead space). No-op once closed.
    fn abandon(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.abandon()).map_err(to_py_write)
    }
});

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
                ContextState::Open(OpenContext { ctx: Some(ctx), .. }) => f(ctx),
                _ => Err(Error::state(format!("the fill context of RNTuple '{}' is closed", self.name))),
            }
        })
        .map_err(to_py_write)
    }

    fn panicked(&self) -> Error {
        Error::state(format!("a fill context of RNTuple '{}' panicked", self.name))
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
        .map_err(to_py_write)
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
        .map_err(to_py_write)
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| Ok(matches!(&*self.inner.lock().map_err(|_| self.panicked())?, ContextState::Closed(_))))
            .map_err(to_py_write)
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
            r
        })
        .map_err(to_py_write)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParallelWriter>()?;
    m.add_class::<PyFillContext>()?;
    Ok(())
}
