//! Writing bindings: `FileWriter` (one ROOT file being written) and
//! `RNTupleWriter` (one RNTuple in it). The `rntuple` package converts the
//! user's data to Arrow record batches (`rntuple._write`); they arrive here
//! through the Arrow PyCapsule interface and are written with the GIL
//! released.
//!
//! A file is complete only after `FileWriter.finish()`; `abandon()` (what the
//! package calls when an exception leaves a `with` block) leaves it marked
//! incomplete, so that no reader takes it for a valid file.

use std::collections::HashMap;
use std::path::PathBuf;

use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use pyo3_arrow::{PyRecordBatch, PySchema};
use rntuple::write::{
    Compression, FieldOverride, Projection, RNTupleWriter, RealEncoding, SharedFileWriter, WriteOptions,
};
use rntuple_container::write::WriterOptions;
use rntuple_format::Error;

use crate::errors::{new_err, to_py_write, Kind};
use crate::writer_state::{Guarded, State};

/// A ROOT file being written.
#[pyclass(module = "rntuple._lib", name = "FileWriter", frozen)]
pub(crate) struct PyFileWriter {
    pub(crate) inner: SharedFileWriter,
    pub(crate) compression: u32,
}

#[pymethods]
impl PyFileWriter {
    /// Creates (or truncates) the file.
    #[new]
    #[pyo3(signature = (path, compression = 505, max_key_size = None))]
    fn new(py: Python<'_>, path: PathBuf, compression: u32, max_key_size: Option<u64>) -> PyResult<Self> {
        let mut options = WriterOptions { compression, ..Default::default() };
        if let Some(m) = max_key_size {
            options.max_key_size = m;
        }
        let inner = py.detach(|| SharedFileWriter::create(&path, options)).map_err(to_py_write)?;
        Ok(PyFileWriter { inner, compression })
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.path().to_path_buf()
    }

    /// The file's compression setting (the default of its RNTuples).
    #[getter]
    fn compression(&self) -> u32 {
        self.compression
    }

    /// Whether the file is neither finished nor abandoned.
    #[getter]
    fn is_open(&self) -> bool {
        self.inner.is_open()
    }

    /// Starts the RNTuple `name` (`"dir/name"` for a subdirectory) with the
    /// Arrow `schema`. `overrides`: {field path: {"type": str, "split": bool,
    /// "index32": bool, "real": (kind, bits, min, max)}}; `options`: the
    /// `WriteOptions` fields by name; `projections`: [(name, source path,
    /// C++ type or None)], in the header.
    #[pyo3(signature = (name, schema, overrides, options, projections = Vec::new()))]
    fn rntuple(
        &self,
        py: Python<'_>,
        name: String,
        schema: PySchema,
        overrides: &Bound<'_, PyDict>,
        options: &Bound<'_, PyDict>,
        projections: Vec<(String, String, Option<String>)>,
    ) -> PyResult<PyRNTupleWriter> {
        let overrides = parse_overrides(overrides)?;
        let options = parse_options(options, self.compression)?;
        let projections = to_projections(projections);
        let schema: SchemaRef = schema.into_inner();
        let file = self.inner.clone();
        let writer = py
            .detach(|| {
                let mut w = RNTupleWriter::new_shared(&file, &name, &schema, &overrides, options)?;
                if !projections.is_empty() {
                    w.add_fields(&arrow_schema::Schema::empty(), &HashMap::new(), &projections)?;
                }
                Ok::<_, Error>(w)
            })
            .map_err(to_py_write)?;
        Ok(PyRNTupleWriter { inner: Guarded::new(Box::new(writer), "writer", name, schema) })
    }

    /// Completes the file with the RNTuples closed so far.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        let file = self.inner.clone();
        py.detach(move || file.finish()).map_err(to_py_write)
    }

    /// Gives the file up: it stays marked as not completed by its writer.
    fn abandon(&self, py: Python<'_>) {
        let file = self.inner.clone();
        py.detach(move || file.abandon());
    }
}

/// One RNTuple being written.
#[pyclass(module = "rntuple._lib", name = "RNTupleWriter", frozen)]
pub(crate) struct PyRNTupleWriter {
    inner: Guarded<Box<RNTupleWriter<'static>>>,
}

impl PyRNTupleWriter {
    /// Runs `f` on the open writer with the GIL released; an error marks the
    /// writer failed when `fail_on_error` or when it left the writer failed.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        fail_on_error: bool,
        f: impl FnOnce(&mut RNTupleWriter<'static>) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.inner.with_open(|w| f(w), |w| fail_on_error || w.has_failed())).map_err(to_py_write)
    }

    /// [`PyRNTupleWriter::run`] for calls that may refuse: an error marks the
    /// writer failed only when it left the writer failed.
    pub(crate) fn with_open<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut RNTupleWriter<'static>) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        self.run(py, false, f)
    }
}

/// The newest Arrow schema of an open writer, after fields were added.
pub(crate) trait NewestSchema {
    fn newest_schema(&self) -> Result<arrow_schema::SchemaRef, rntuple_format::Error>;
}

impl NewestSchema for rntuple::write::RNTupleWriter<'static> {
    fn newest_schema(&self) -> Result<arrow_schema::SchemaRef, rntuple_format::Error> {
        Ok(std::sync::Arc::new(self.schema().clone()))
    }
}

impl NewestSchema for rntuple::write::ParallelWriter {
    fn newest_schema(&self) -> Result<arrow_schema::SchemaRef, rntuple_format::Error> {
        self.schema().map(std::sync::Arc::new)
    }
}

/// The `#[pymethods]` of a writer class (`RNTupleWriter`, `ParallelWriter`):
/// the methods both have, written once, then `$rest`. The class has an
/// `inner: Guarded<_>` and a `with_open(py, f)` that runs `f` on the open
/// Rust writer.
macro_rules! writer_pymethods {
    ($class:ty { $($rest:tt)* }) => {
        #[pyo3::pymethods]
        impl $class {
            /// The RNTuple's name (a path within the file).
            #[getter]
            fn name(&self) -> &str {
                &self.inner.name
            }

            /// The Arrow schema of the batches: the declared fields and those added since.
            #[getter]
            fn schema(&self) -> pyo3::PyResult<pyo3_arrow::PySchema> {
                self.inner.schema().map_err($crate::errors::to_py_write)
            }

            /// Adds top-level fields (`schema`, written as `overrides` say) and
            /// projected fields ([(name, source, type or None)]): in the header
            /// before the first entry, else in the footer's schema extension
            /// (late model extension), while fill contexts of a parallel writer
            /// may be filling. A refused addition leaves the writer as it was;
            /// a failure after the schema changed fails it.
            #[pyo3(signature = (schema, overrides, projections = Vec::new()))]
            fn add_fields(
                &self,
                py: pyo3::Python<'_>,
                schema: pyo3_arrow::PySchema,
                overrides: &pyo3::Bound<'_, pyo3::types::PyDict>,
                projections: Vec<(String, String, Option<String>)>,
            ) -> pyo3::PyResult<()> {
                use $crate::write::NewestSchema;
                let (added, overrides, projections) = $crate::write::add_fields_args(schema, overrides, projections)?;
                let merged = self.with_open(py, |w| {
                    w.add_fields(&added, &overrides, &projections)?;
                    w.newest_schema()
                })?;
                self.inner.set_schema(merged).map_err($crate::errors::to_py_write)
            }

            /// "open", "closed", "abandoned" or "failed".
            #[getter]
            fn state(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<&'static str> {
                py.detach(|| self.inner.state_name()).map_err($crate::errors::to_py_write)
            }

            $($rest)*
        }
    };
}
pub(crate) use writer_pymethods;

writer_pymethods!(PyRNTupleWriter {
    /// Entries written so far (0 once closed).
    #[getter]
    fn num_entries(&self) -> PyResult<u64> {
        match &*self.inner.lock().map_err(to_py_write)? {
            State::Open(w) => Ok(w.num_entries()),
            _ => Ok(0),
        }
    }

    /// Bytes the writer's buffers hold now and the most they held at once
    /// (`WriteOptions::memory_budget`); `None` unless open.
    #[getter]
    fn memory_use(&self) -> PyResult<Option<(u64, u64)>> {
        match &*self.inner.lock().map_err(to_py_write)? {
            State::Open(w) => {
                let m = w.memory_use();
                Ok(Some((m.held, m.high_water)))
            }
            _ => Ok(None),
        }
    }

    /// Appends a record batch. A batch whose schema or values the writer
    /// cannot take is refused as a whole and the writer stays usable; a
    /// failure while writing marks it failed.
    fn extend(&self, py: Python<'_>, batch: PyRecordBatch) -> PyResult<()> {
        let batch = batch.into_inner();
        self.with_open(py, |w| w.check_batch(&batch))?;
        self.run(py, true, |w| w.write_batch(&batch))
    }

    /// Checks that `batch` can be appended (schema and values, as `extend`
    /// does first) without writing it: `RNTupleWriter.extend` checks every
    /// batch of a table before writing any, so that a refused table writes
    /// nothing.
    fn check(&self, py: Python<'_>, batch: PyRecordBatch) -> PyResult<()> {
        let batch = batch.into_inner();
        self.with_open(py, |w| w.check_batch(&batch))
    }

    /// Ends the current cluster (no-op without new entries).
    fn commit_cluster(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, true, |w| w.commit_cluster())
    }

    /// Commits the last cluster and writes the page lists, footer and anchor.
    /// No-op when already closed.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.close(|| Ok(()), |w| w.close())).map_err(to_py_write)
    }

    /// Drops the RNTuple: it will not be in the file. No-op once closed.
    fn abandon(&self) -> PyResult<()> {
        self.inner.abandon().map_err(to_py_write)
    }
});

/// ROOT's compression setting (`algorithm * 100 + level`) of `compression`:
/// a setting (`505`), a name with an optional level (`"zstd"`, `"zstd:9"`,
/// `"none"`; [`Compression::parse`]), `None` (no compression) or an object
/// with an integer `code` (uproot's `ZSTD(5)`); `level` replaces its level.
#[pyfunction]
#[pyo3(signature = (compression, level = None))]
pub(crate) fn compression_setting(compression: &Bound<'_, PyAny>, level: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
    let not_a_setting = || -> PyResult<PyErr> {
        Ok(new_err(
            Kind::WrongType,
            format!("compression must be a setting like 505 or a name like 'zstd', not {}", compression.repr()?),
        ))
    };
    let level = match level {
        Some(l) if !l.is_none() => match (l.is_instance_of::<PyBool>(), l.extract::<i64>()) {
            (false, Ok(v)) => Some(v),
            _ => {
                let msg = format!("compression_level must be an integer from 1 to 99, not {}", l.repr()?);
                return Err(new_err(Kind::Write, msg));
            }
        },
        _ => None,
    };
    let parsed = if compression.is_none() {
        Ok(Compression::NONE)
    } else if compression.is_instance_of::<PyBool>() {
        return Err(not_a_setting()?);
    } else if let Ok(text) = compression.extract::<String>() {
        Compression::parse(&text)
    } else if let Ok(n) = compression.extract::<i64>().or_else(|_| compression.getattr("code")?.extract::<i64>()) {
        match u32::try_from(n) {
            Ok(n) => Compression::from_setting(n),
            Err(_) => return Err(new_err(Kind::Write, format!("compression setting {n} is negative or too large"))),
        }
    } else {
        return Err(not_a_setting()?);
    };
    let parsed = match level {
        Some(l) => parsed.and_then(|c| c.with_level(l)),
        None => parsed,
    };
    parsed.map(Compression::setting).map_err(to_py_write)
}

/// `WriteOptions` from a dict of its fields; unknown keys are an error.
pub(crate) fn parse_options(d: &Bound<'_, PyDict>, compression: u32) -> PyResult<WriteOptions> {
    let mut o = WriteOptions { compression, ..Default::default() };
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        match key.as_str() {
            "compression" => o.compression = v.extract()?,
            "approx_zipped_cluster_size" => o.approx_zipped_cluster_size = v.extract()?,
            "max_unzipped_cluster_size" => o.max_unzipped_cluster_size = v.extract()?,
            "initial_unzipped_page_size" => o.initial_unzipped_page_size = v.extract()?,
            "max_unzipped_page_size" => o.max_unzipped_page_size = v.extract()?,
            "page_buffer_budget" => o.page_buffer_budget = v.extract()?,
            "page_buffer_memory" => o.page_buffer_memory = v.extract()?,
            "page_checksums" => o.page_checksums = v.extract()?,
            "same_page_merging" => o.same_page_merging = v.extract()?,
            "group_pages_by_column" => o.group_pages_by_column = v.extract()?,
            "cluster_group_size" => o.cluster_group_size = v.extract()?,
            "description" => o.description = v.extract()?,
            "index32" => o.index32 = v.extract()?,
            "compression_threads" => o.compression_threads = v.extract()?,
            "memory_budget" => o.memory_budget = v.extract()?,
            _ => return Err(new_err(Kind::WrongType, format!("unknown write option '{key}'"))),
        }
    }
    Ok(o)
}

/// The arguments of a writer's `add_fields`, parsed.
pub(crate) fn add_fields_args(
    schema: PySchema,
    overrides: &Bound<'_, PyDict>,
    projections: Vec<(String, String, Option<String>)>,
) -> PyResult<(SchemaRef, HashMap<String, FieldOverride>, Vec<Projection>)> {
    Ok((schema.into_inner(), parse_overrides(overrides)?, to_projections(projections)))
}

fn to_projections(list: Vec<(String, String, Option<String>)>) -> Vec<Projection> {
    list.into_iter().map(|(name, source, type_name)| Projection { name, source, type_name }).collect()
}

/// Field overrides from {path: {"type", "split", "index32", "real", "soa", ...}}.
pub(crate) fn parse_overrides(d: &Bound<'_, PyDict>) -> PyResult<HashMap<String, FieldOverride>> {
    let mut out = HashMap::new();
    for (k, v) in d.iter() {
        let path: String = k.extract()?;
        let spec = v.cast::<PyDict>()?;
        let mut o = FieldOverride::default();
        for (sk, sv) in spec.iter() {
            let key: String = sk.extract()?;
            match key.as_str() {
                "type" => o.type_name = sv.extract()?,
                "split" => o.split = sv.extract()?,
                "index32" => o.index32 = sv.extract()?,
                "type_version" => o.type_version = sv.extract()?,
                "type_checksum" => o.type_checksum = sv.extract()?,
                "description" => o.description = sv.extract()?,
                "streamer" => o.streamer = sv.extract()?,
                "soa" => o.soa = sv.extract()?,
                "real" => {
                    let (kind, bits, min, max): (String, u16, f64, f64) = sv.extract()?;
                    o.real = Some(match kind.as_str() {
                        "Real16" => RealEncoding::Real16,
                        "Real32" => RealEncoding::Real32,
                        "Real32Trunc" => RealEncoding::Real32Trunc { bits },
                        "Real32Quant" => RealEncoding::Real32Quant { bits, min, max },
                        "Double32_t" => RealEncoding::Double32,
                        _ => {
                            return Err(new_err(
                                Kind::InvalidArgument,
                                format!("field '{path}': unknown encoding '{kind}'"),
                            ))
                        }
                    });
                }
                _ => return Err(new_err(Kind::WrongType, format!("field '{path}': unknown override '{key}'"))),
            }
        }
        out.insert(path, o);
    }
    Ok(out)
}
