//! What the bindings of the two writers of one RNTuple share (`RNTupleWriter`
//! in `write.rs`, `ParallelWriter` in `parallel.rs`): the writer behind a
//! lock with its state (open, closed, abandoned, failed), its name, and the
//! newest Arrow schema of its batches. The methods here run without the GIL:
//! callers call them inside `py.detach` and turn the error into a Python
//! exception with `errors::to_py_write`.

use std::sync::{Mutex, MutexGuard};

use arrow_schema::SchemaRef;
use pyo3_arrow::PySchema;
use rntuple_format::{Error, Result};

pub(crate) enum State<W> {
    Open(W),
    Closed,
    Abandoned,
    /// Failed while writing, with the message.
    Failed(String),
}

impl<W> State<W> {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            State::Open(_) => "open",
            State::Closed => "closed",
            State::Abandoned => "abandoned",
            State::Failed(_) => "failed",
        }
    }
}

/// A writer `W` of the RNTuple `name`, its state and its newest schema.
pub(crate) struct Guarded<W> {
    state: Mutex<State<W>>,
    /// What it is, in messages: "writer", "parallel writer".
    what: &'static str,
    pub(crate) name: String,
    schema: Mutex<SchemaRef>,
}

impl<W> Guarded<W> {
    pub(crate) fn new(writer: W, what: &'static str, name: String, schema: SchemaRef) -> Self {
        Guarded { state: Mutex::new(State::Open(writer)), what, name, schema: Mutex::new(schema) }
    }

    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, State<W>>> {
        self.state.lock().map_err(|_| Error::state(format!("the {} of RNTuple '{}' panicked", self.what, self.name)))
    }

    /// The error of a call on a writer that is not open.
    pub(crate) fn not_open(&self, state: &State<W>) -> Error {
        Error::state(match state {
            State::Failed(msg) => {
                format!("the {} of RNTuple '{}' failed earlier and cannot continue: {msg}", self.what, self.name)
            }
            other => format!("the {} of RNTuple '{}' is {}", self.what, self.name, other.name()),
        })
    }

    /// "open", "closed", "abandoned" or "failed".
    pub(crate) fn state_name(&self) -> Result<&'static str> {
        Ok(self.lock()?.name())
    }

    /// Runs `f` on the open writer; an error marks the writer failed when
    /// `failed(writer)` says it left the writer failed.
    pub(crate) fn with_open<T>(
        &self,
        f: impl FnOnce(&mut W) -> Result<T>,
        failed: impl FnOnce(&W) -> bool,
    ) -> Result<T> {
        let mut state = self.lock()?;
        let State::Open(w) = &mut *state else { return Err(self.not_open(&state)) };
        let r = f(w);
        if let Err(e) = &r {
            if failed(w) {
                *state = State::Failed(e.to_string());
            }
        }
        r
    }

    /// `check` the open writer (an error leaves it open), then `close` it (an
    /// error marks it failed). No-op when closed.
    pub(crate) fn close(&self, check: impl FnOnce() -> Result<()>, close: impl FnOnce(W) -> Result<()>) -> Result<()> {
        let mut state = self.lock()?;
        if matches!(*state, State::Open(_)) {
            check()?;
        }
        match std::mem::replace(&mut *state, State::Closed) {
            State::Open(w) => close(w).inspect_err(|e| *state = State::Failed(e.to_string())),
            State::Closed => Ok(()),
            other => {
                let e = self.not_open(&other);
                *state = other;
                Err(e)
            }
        }
    }

    /// Drops the writer: its RNTuple will not be in the file. No-op once closed.
    pub(crate) fn abandon(&self) -> Result<()> {
        let mut state = self.lock()?;
        if !matches!(*state, State::Closed) {
            *state = State::Abandoned;
        }
        Ok(())
    }

    /// The newest schema of the batches.
    pub(crate) fn schema(&self) -> Result<PySchema> {
        Ok(PySchema::new(self.schema.lock().map_err(|_| self.poisoned())?.clone()))
    }

    /// Replaces the schema (after `add_fields`).
    pub(crate) fn set_schema(&self, schema: SchemaRef) -> Result<()> {
        *self.schema.lock().map_err(|_| self.poisoned())? = schema;
        Ok(())
    }

    fn poisoned(&self) -> Error {
        Error::internal(format!("the schema of the {} of RNTuple '{}' is poisoned", self.what, self.name))
    }
}
