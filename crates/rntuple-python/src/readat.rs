//! `PyReadAt`: a [`ReadAt`] over a Python file-like object (`read` + `seek`:
//! `io.BytesIO`, an open binary file, an fsspec file), so that
//! `rntuple.open(file_like)` reads through the same planner as a path.
//!
//! Memory stays bounded by what the reader asks for: every read is a
//! `seek(offset)` + `read(len)` on the object, made under one lock (the object
//! has a single cursor) with the GIL taken for that call only. The reader's
//! worker threads call in while the calling thread has released the GIL
//! (`Python::detach` around every read of the bindings).

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rntuple::{RNTupleFile, ReadOptions, RootFile};
use rntuple_container::storage::ReadAt;
use rntuple_container::OpenOptions;
use rntuple_format::{Error, Location, Result};

use crate::errors::to_py;
use crate::File;

/// Positional reads from a Python object with `seek` and `read`.
pub(crate) struct PyReadAt {
    object: Mutex<Py<PyAny>>,
    size: u64,
    what: String,
}

impl std::fmt::Debug for PyReadAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyReadAt").field("what", &self.what).field("size", &self.size).finish()
    }
}

fn py_error(what: &str, e: PyErr) -> Error {
    Error::io(format!("reading {what}"), std::io::Error::other(e.to_string()))
}

impl PyReadAt {
    /// Wraps `object`; its size is where `seek(0, 2)` lands.
    pub(crate) fn new(object: Bound<'_, PyAny>) -> PyResult<Self> {
        let what = object.repr().map(|r| r.to_string()).unwrap_or_else(|_| "a file-like object".into());
        for method in ["read", "seek"] {
            if !object.hasattr(method)? {
                return Err(crate::errors::new_err(
                    crate::errors::Kind::WrongType,
                    format!(
                    "{what} has no '{method}' method: rntuple.open() takes a path, a URL or a binary file-like object"
                ),
                ));
            }
        }
        let size: u64 = object.call_method1("seek", (0, 2))?.extract()?;
        Ok(Self { object: Mutex::new(object.unbind()), size, what })
    }
}

impl ReadAt for PyReadAt {
    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.checked_add(buf.len() as u64).filter(|&end| end <= self.size);
        if end.is_none() {
            return Err(Error::Truncated {
                needed: offset.saturating_add(buf.len() as u64),
                available: self.size,
                location: Location::new(format!("read from {}", self.what), Some(offset)),
            });
        }
        let object = self.object.lock().unwrap_or_else(PoisonError::into_inner);
        Python::attach(|py| {
            let object = object.bind(py);
            object.call_method1("seek", (offset,)).map_err(|e| py_error(&self.what, e))?;
            let data = object.call_method1("read", (buf.len(),)).map_err(|e| py_error(&self.what, e))?;
            let bytes = data.cast::<PyBytes>().map_err(|e| py_error(&self.what, e.into()))?.as_bytes();
            if bytes.len() != buf.len() {
                return Err(Error::Truncated {
                    needed: offset + buf.len() as u64,
                    available: offset + bytes.len() as u64,
                    location: Location::new(format!("{} (read returned fewer bytes)", self.what), Some(offset)),
                });
            }
            buf.copy_from_slice(bytes);
            Ok(())
        })
    }
}

/// `_lib.open_reader(object, verify_checksums, threads, max_memory,
/// max_page_size, max_envelope_size)`: a `File` read through `object`, with
/// the budget and caps a path or URL gets (`File::new`).
#[pyfunction]
#[pyo3(signature = (
    object, verify_checksums = true, threads = 0, max_memory = None, max_page_size = None, max_envelope_size = None
))]
pub(crate) fn open_reader(
    object: Bound<'_, PyAny>,
    verify_checksums: bool,
    threads: usize,
    max_memory: Option<u64>,
    max_page_size: Option<u64>,
    max_envelope_size: Option<u64>,
) -> PyResult<File> {
    let py = object.py();
    let reader = PyReadAt::new(object)?;
    let path = format!("<{}>", reader.what);
    let storage: Arc<dyn ReadAt> = Arc::new(reader);
    let root = py
        .detach(|| RootFile::from_storage_with(storage, OpenOptions { verify_checksums, ..Default::default() }))
        .map_err(to_py)?;
    let options = ReadOptions {
        verify_checksums,
        threads,
        max_memory,
        max_page_size: max_page_size.unwrap_or(rntuple::DEFAULT_MAX_PAGE_SIZE),
        max_envelope_size: max_envelope_size.unwrap_or(rntuple::DEFAULT_MAX_ENVELOPE_SIZE),
        ..ReadOptions::DEFAULT
    };
    Ok(File { inner: RNTupleFile::from_root_file(root, options), path })
}
