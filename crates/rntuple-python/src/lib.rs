//! Python bindings: a thin layer over the `rntuple` crate. Arrays cross into
//! Python through the Arrow PyCapsule interface; the `rntuple` package turns
//! them into awkward / numpy / pandas objects. Writing (`write`): record
//! batches cross the other way and are written with the GIL released.

mod attrs;
mod nulls;
mod schema;
mod tools;
mod write;

use std::sync::Arc;

use pyo3::exceptions::{PyException, PyFileNotFoundError, PyIOError, PyKeyError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatch;
use rntuple::{ArrowShape, RNTupleFile, ReadOptions};
use rntuple_format::Error;

pyo3::create_exception!(_lib, RNTupleError, PyException, "Base class of errors raised by rntuple.");
pyo3::create_exception!(_lib, FormatError, RNTupleError, "The file contradicts the RNTuple or ROOT file format.");
pyo3::create_exception!(_lib, TruncatedError, FormatError, "The file ends before a structure is complete.");
pyo3::create_exception!(_lib, ChecksumError, FormatError, "A stored checksum does not match the data.");
pyo3::create_exception!(_lib, UnsupportedError, RNTupleError, "The file uses a feature rntuple does not support.");
pyo3::create_exception!(_lib, AllocationError, FormatError, "A size in the file is larger than the file can justify.");
pyo3::create_exception!(_lib, DecompressionError, FormatError, "A compressed block cannot be decompressed.");

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::OutOfSpec { .. } => FormatError::new_err(msg),
        Error::Truncated { .. } => TruncatedError::new_err(msg),
        Error::ChecksumMismatch { .. } => ChecksumError::new_err(msg),
        Error::Unsupported { .. } => UnsupportedError::new_err(msg),
        Error::WouldOverAllocate { .. } => AllocationError::new_err(msg),
        Error::Decompression { .. } => DecompressionError::new_err(msg),
        Error::NotFound { .. } => PyKeyError::new_err(msg),
        Error::InvalidArgument { .. } => PyValueError::new_err(msg),
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
            _ => PyIOError::new_err(msg),
        },
        _ => RNTupleError::new_err(msg),
    }
}

/// An open ROOT file.
#[pyclass(module = "rntuple._lib", frozen)]
struct File {
    inner: RNTupleFile,
    path: String,
}

#[pymethods]
impl File {
    #[new]
    #[pyo3(signature = (path, verify_checksums = true, threads = 0))]
    fn new(py: Python<'_>, path: String, verify_checksums: bool, threads: usize) -> PyResult<Self> {
        let options = ReadOptions { verify_checksums, threads, ..ReadOptions::DEFAULT };
        let inner = py.detach(|| RNTupleFile::open_with(&path, options)).map_err(to_py)?;
        Ok(File { inner, path })
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// List of (path, class name, cycle) of every key.
    fn keys(&self) -> PyResult<Vec<(String, String, i16)>> {
        let keys = self.inner.keys().map_err(to_py)?;
        Ok(keys.into_iter().map(|k| (k.path, k.class_name, k.cycle)).collect())
    }

    fn rntuple_names(&self) -> PyResult<Vec<String>> {
        self.inner.rntuple_names().map_err(to_py)
    }

    fn rntuple(&self, py: Python<'_>, name: &str) -> PyResult<RNTuple> {
        let nt = py.detach(|| self.inner.rntuple(name)).map_err(to_py)?;
        Ok(RNTuple { inner: Arc::new(nt) })
    }
}

/// One RNTuple.
#[pyclass(module = "rntuple._lib", frozen)]
struct RNTuple {
    inner: Arc<rntuple::RNTuple>,
}

#[pymethods]
impl RNTuple {
    #[getter]
    fn name(&self) -> &str {
        self.inner.path()
    }

    #[getter]
    fn num_entries(&self) -> u64 {
        self.inner.num_entries()
    }

    #[getter]
    fn description(&self) -> &str {
        &self.inner.descriptor().description
    }

    /// The top-level fields as typed trees (`FieldInfo`).
    fn fields(&self, py: Python<'_>) -> PyResult<Vec<Py<schema::FieldInfo>>> {
        self.inner.schema().fields.iter().map(|f| schema::field_info(py, &self.inner, f)).collect()
    }

    /// Physical columns: (id, type name, bits on storage, field id, representation index).
    fn columns(&self) -> Vec<(usize, &'static str, u16, u32, u16)> {
        self.inner
            .descriptor()
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.column_type.name(), c.bits_on_storage, c.field_id, c.representation_index))
            .collect()
    }

    /// Clusters: (first entry, number of entries, cluster group).
    fn clusters(&self) -> Vec<(u64, u64, usize)> {
        self.inner.descriptor().clusters.iter().map(|c| (c.first_entry, c.num_entries, c.group)).collect()
    }

    /// Names of the top-level fields read by default.
    fn readable_fields(&self) -> Vec<String> {
        self.inner.readable_fields().iter().map(|f| f.name.clone()).collect()
    }

    /// Reads fields over an entry range into an Arrow record batch (PyCapsule
    /// interface; the buffers are handed over, not copied). `threads`
    /// overrides the file's decoding threads for this read (0: one per core).
    /// `uproot_dtypes` reads the Arrow types uproot's forms are built on
    /// (`rntuple::ArrowShape::ColumnTypes`) instead of those of the C++ types.
    #[pyo3(signature = (fields = None, entry_start = 0, entry_stop = None, threads = None, uproot_dtypes = false))]
    fn read(
        &self,
        py: Python<'_>,
        fields: Option<Vec<String>>,
        entry_start: u64,
        entry_stop: Option<u64>,
        threads: Option<usize>,
        uproot_dtypes: bool,
    ) -> PyResult<PyRecordBatch> {
        let nt = self.inner.clone();
        let batch = py
            .detach(move || {
                let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
                let mut options = *nt.options();
                if let Some(t) = threads {
                    options.threads = t;
                }
                if uproot_dtypes {
                    options.shape = ArrowShape::ColumnTypes;
                }
                nt.read_with(names.as_deref(), entry_start, entry_stop.unwrap_or(u64::MAX), &options)
            })
            .map_err(to_py)?;
        Ok(PyRecordBatch::new(batch))
    }

    /// I/O figures of the reads so far: requests, vectored_calls, bytes_read,
    /// bytes_needed, pages.
    fn io_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.io_stats();
        let d = PyDict::new(py);
        d.set_item("requests", s.requests)?;
        d.set_item("vectored_calls", s.vectored_calls)?;
        d.set_item("bytes_read", s.bytes_read)?;
        d.set_item("bytes_needed", s.bytes_needed)?;
        d.set_item("pages", s.pages)?;
        Ok(d)
    }

    fn reset_io_stats(&self) {
        self.inner.reset_io_stats()
    }

    /// The text of `rntuple show`.
    fn show(&self) -> PyResult<String> {
        let mut buf = Vec::new();
        rntuple_tools::term::show(&self.inner, &mut buf).map_err(|e| PyIOError::new_err(e.to_string()))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

#[pymodule]
fn _lib(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<File>()?;
    m.add_class::<RNTuple>()?;
    m.add_class::<write::PyFileWriter>()?;
    m.add_class::<write::PyRNTupleWriter>()?;
    write::add_write_error(m)?;
    m.add_function(wrap_pyfunction!(write::compression_setting, m)?)?;
    m.add_function(wrap_pyfunction!(nulls::null_paths, m)?)?;
    m.add_function(wrap_pyfunction!(nulls::tighten_schema, m)?)?;
    tools::register(m)?;
    attrs::register(m)?;
    schema::register(m)?;
    m.add("RNTupleError", py.get_type::<RNTupleError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("TruncatedError", py.get_type::<TruncatedError>())?;
    m.add("ChecksumError", py.get_type::<ChecksumError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("AllocationError", py.get_type::<AllocationError>())?;
    m.add("DecompressionError", py.get_type::<DecompressionError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
