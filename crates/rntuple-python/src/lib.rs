//! Python bindings: a thin layer over the `rntuple` crate. Arrays cross into
//! Python through the Arrow PyCapsule interface; the `rntuple` package turns
//! them into awkward / numpy / pandas objects. Writing (`write`): record
//! batches cross the other way and are written with the GIL released.

mod attrs;
mod browse;
mod errors;
mod nulls;
mod parallel;
mod readat;
mod schema;
mod tools;
mod write;
mod writer_state;

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatch;
use rntuple::{ArrowShape, RNTupleFile, ReadOptions};

use crate::errors::to_py;

/// A streamer field a read left as bytes: (field path, class, reason).
type Undecoded = (String, String, String);

/// An open ROOT file.
#[pyclass(module = "rntuple._lib", frozen)]
struct File {
    inner: RNTupleFile,
    path: String,
}

#[pymethods]
impl File {
    /// `cache`: a directory keeping the bytes read from a remote file
    /// (`None`: `RNTUPLE_CACHE_DIR` if set); `coalesce_gap` and
    /// `max_request` override the storage's request shape (bytes).
    /// `max_memory`: the budget of each read in bytes (`None`: none);
    /// `max_page_size`: the largest decompressed page accepted;
    /// `max_envelope_size`: the largest envelope (header, footer, page list).
    #[new]
    #[pyo3(signature = (
        path, verify_checksums = true, threads = 0, cache = None, coalesce_gap = None, max_request = None,
        max_memory = None, max_page_size = None, max_envelope_size = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: String,
        verify_checksums: bool,
        threads: usize,
        cache: Option<String>,
        coalesce_gap: Option<u64>,
        max_request: Option<u64>,
        max_memory: Option<u64>,
        max_page_size: Option<u64>,
        max_envelope_size: Option<u64>,
    ) -> PyResult<Self> {
        let options = ReadOptions {
            verify_checksums,
            threads,
            coalesce_gap,
            max_request,
            max_memory,
            max_page_size: max_page_size.unwrap_or(rntuple::DEFAULT_MAX_PAGE_SIZE),
            max_envelope_size: max_envelope_size.unwrap_or(rntuple::DEFAULT_MAX_ENVELOPE_SIZE),
            ..ReadOptions::DEFAULT
        };
        let cache = cache.map(rntuple::container::CacheConfig::new);
        let inner = py.detach(|| RNTupleFile::open_cached(&path, options, cache)).map_err(to_py)?;
        Ok(File { inner, path })
    }

    /// Wire figures of the file's storage (requests, bytes, retries, cache
    /// hits), metadata included; `None` for a local file.
    fn transport_stats<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner.root_file().storage().transport_stats().map(|w| wire_dict(py, &w)).transpose()
    }

    /// Size of the file in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.root_file().size()
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// List of (path, class name, cycle) of every key.
    /// (I/O of a remote file may happen here: the GIL is released meanwhile.)
    fn keys(&self, py: Python<'_>) -> PyResult<Vec<(String, String, i16)>> {
        let keys = py.detach(|| self.inner.keys()).map_err(to_py)?;
        Ok(keys.into_iter().map(|k| (k.path, k.class_name, k.cycle)).collect())
    }

    fn rntuple_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        py.detach(|| self.inner.rntuple_names()).map_err(to_py)
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

    /// (top-level fields, fields in all, physical columns, alias columns): the counts `rntuple show`
    /// and `inspect` print, without building the field tree.
    #[getter]
    fn counts(&self) -> (usize, usize, usize, usize) {
        let d = self.inner.descriptor();
        (self.inner.schema().fields.len(), d.fields.len(), d.columns.len(), d.alias_columns.len())
    }

    /// The top-level fields as typed trees (`FieldInfo`), in schema order;
    /// with `names`, only the top-level fields of those names (a read of a
    /// few fields of a wide RNTuple builds only their trees).
    #[pyo3(signature = (names = None))]
    fn fields(&self, py: Python<'_>, names: Option<Vec<String>>) -> PyResult<Vec<Py<schema::FieldInfo>>> {
        let names: Option<std::collections::HashSet<String>> = names.map(|n| n.into_iter().collect());
        let wanted = |f: &&rntuple::FieldNode| names.as_ref().is_none_or(|n| n.contains(&f.name));
        self.inner.schema().fields.iter().filter(wanted).map(|f| schema::field_info(py, &self.inner, f)).collect()
    }

    /// The names of the top-level fields that have a field below the top
    /// level named one of `names` (the trees a name filter could also match
    /// besides those of the top-level fields of these names), in schema order.
    fn fields_with_subfields_named(&self, names: Vec<String>) -> Vec<String> {
        fn any_named(f: &rntuple::FieldNode, names: &std::collections::HashSet<String>) -> bool {
            f.children.iter().any(|c| names.contains(&c.name) || any_named(c, names))
        }
        let names: std::collections::HashSet<String> = names.into_iter().collect();
        self.inner.schema().fields.iter().filter(|f| any_named(f, &names)).map(|f| f.name.clone()).collect()
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

    /// Per cluster: (first entry, entries, in-memory bytes of the columns of
    /// the top-level `fields`, all when None), from the page lists already
    /// loaded (no I/O). A projected field counts the columns it projects.
    fn cluster_bytes(&self, fields: Option<Vec<String>>) -> Vec<(u64, u64, u64)> {
        let d = self.inner.descriptor();
        let top = |mut id: u32| -> Option<&str> {
            for _ in 0..d.fields.len() {
                let f = d.fields.get(id as usize)?;
                if f.parent_id == id {
                    return Some(f.name.as_str());
                }
                id = f.parent_id;
            }
            None // a parent cycle: count nothing
        };
        let wanted = |field_id: u32| match (&fields, top(field_id)) {
            (None, _) => true,
            (Some(names), Some(name)) => names.iter().any(|n| n == name),
            (Some(_), None) => false,
        };
        let physical: Vec<(usize, u64)> = {
            let mut ids: Vec<usize> =
                d.columns.iter().enumerate().filter(|(_, c)| wanted(c.field_id)).map(|(i, _)| i).collect();
            ids.extend(d.alias_columns.iter().filter(|a| wanted(a.field_id)).map(|a| a.physical_column_id as usize));
            ids.sort_unstable();
            ids.dedup();
            ids.into_iter()
                .filter_map(|i| d.columns.get(i).map(|c| (i, rntuple_tools::inspect::memory_size(c))))
                .collect()
        };
        d.clusters
            .iter()
            .map(|c| {
                let bytes = physical
                    .iter()
                    .filter_map(|&(i, size)| c.columns.get(i).map(|r| (r, size)))
                    .flat_map(|(r, size)| r.pages.iter().map(move |p| u64::from(p.num_elements).saturating_mul(size)))
                    .fold(0u64, u64::saturating_add);
                (c.first_entry, c.num_entries, bytes)
            })
            .collect()
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
    /// `max_memory` (bytes) sets this read's budget, overriding the file's.
    /// Returns the batch and the streamer fields left as bytes, as (path,
    /// class, reason) triples (`rntuple::UndecodedStreamer`), which Python
    /// turns into warnings. `streamer_bytes` reads streamer fields as their
    /// stored bytes instead (`rntuple::ReadOptions::streamer_bytes`).
    #[pyo3(signature = (
        fields = None, entry_start = 0, entry_stop = None, threads = None, uproot_dtypes = false, max_memory = None,
        streamer_bytes = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        py: Python<'_>,
        fields: Option<Vec<String>>,
        entry_start: u64,
        entry_stop: Option<u64>,
        threads: Option<usize>,
        uproot_dtypes: bool,
        max_memory: Option<u64>,
        streamer_bytes: bool,
    ) -> PyResult<(PyRecordBatch, Vec<Undecoded>)> {
        let nt = self.inner.clone();
        let (batch, undecoded) = py
            .detach(move || {
                let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
                let mut options = *nt.options();
                if let Some(t) = threads {
                    options.threads = t;
                }
                if uproot_dtypes {
                    options.shape = ArrowShape::ColumnTypes;
                }
                if max_memory.is_some() {
                    options.max_memory = max_memory;
                }
                options.streamer_bytes = streamer_bytes;
                nt.read_with_notes(names.as_deref(), entry_start, entry_stop.unwrap_or(u64::MAX), &options)
            })
            .map_err(to_py)?;
        let undecoded = undecoded.into_iter().map(|u| (u.path, u.type_name, u.reason)).collect();
        Ok((PyRecordBatch::new(batch), undecoded))
    }

    /// I/O figures of the reads so far: requests, vectored_calls, bytes_read,
    /// bytes_needed, pages, read_time (seconds), read_rate (bytes/s),
    /// file_size, and `wire`: the storage's figures (a dict, or `None` for a
    /// local file).
    fn io_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.inner.io_report();
        let s = r.io;
        let d = PyDict::new(py);
        d.set_item("requests", s.requests)?;
        d.set_item("vectored_calls", s.vectored_calls)?;
        d.set_item("bytes_read", s.bytes_read)?;
        d.set_item("bytes_needed", s.bytes_needed)?;
        d.set_item("pages", s.pages)?;
        d.set_item("read_time", r.wall_time().as_secs_f64())?;
        d.set_item("read_rate", r.read_rate())?;
        d.set_item("file_size", r.file_size)?;
        d.set_item("wire", r.wire.map(|w| wire_dict(py, &w)).transpose()?)?;
        Ok(d)
    }

    /// The I/O report's text (what `RNTUPLE_IO_REPORT=1` prints).
    fn io_report(&self) -> String {
        self.inner.io_report().to_string()
    }

    /// Prints the I/O report to stderr now when reports are on (once).
    fn print_io_report(&self) {
        self.inner.print_io_report()
    }

    fn reset_io_stats(&self) {
        self.inner.reset_io_stats()
    }

    /// The text of `rntuple show` (`max_fields` top-level fields, lines of at most `width` characters).
    #[pyo3(signature = (max_fields=None, width=None))]
    fn show(&self, py: Python<'_>, max_fields: Option<usize>, width: Option<usize>) -> PyResult<String> {
        let mut buf = Vec::new();
        let options = rntuple_tools::term::ShowOptions { max_fields, width };
        py.detach(|| rntuple_tools::term::show_with(&self.inner, options, &mut buf))
            .map_err(|e| errors::new_err(errors::Kind::Storage, e.to_string()))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
}

/// The wire figures of a storage as a dict.
fn wire_dict<'py>(py: Python<'py>, w: &rntuple::container::TransportStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("single_requests", w.single_requests)?;
    d.set_item("vectored_requests", w.vectored_requests)?;
    d.set_item("sub_ranges", w.sub_ranges)?;
    d.set_item("bytes_transferred", w.bytes_transferred)?;
    d.set_item("retries", w.retries)?;
    d.set_item("cache_hits", w.cache_hits)?;
    d.set_item("cache_bytes", w.cache_bytes)?;
    Ok(d)
}

/// A stand-in remote store for tests: `SCHEME://host/<absolute path>` reads
/// the local file at that path, counting requests and bytes as a remote
/// backend does (single and vectored requests, sub-ranges), with the file's
/// size and modification time as its identity.
#[derive(Debug)]
struct TestScheme(String);

#[derive(Debug)]
struct TestRemote {
    file: rntuple::container::LocalFile,
    identity: rntuple::container::Identity,
    wire: rntuple::container::TransportCounters,
}

impl rntuple::container::storage::Backend for TestScheme {
    fn open(&self, url: &str) -> rntuple::Result<Arc<dyn rntuple::container::ReadAt>> {
        use rntuple::container::ReadAt;
        let rest = url.get(self.0.len() + 3..).unwrap_or_default();
        let path = rest.find('/').map_or("", |i| &rest[i..]);
        let file = rntuple::container::LocalFile::open(path)?;
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let version = modified.map(|t| format!("{t:?}"));
        let identity = rntuple::container::Identity { size: file.size()?, version };
        Ok(Arc::new(TestRemote { file, identity, wire: Default::default() }))
    }
}

impl rntuple::container::ReadAt for TestRemote {
    fn size(&self) -> rntuple::Result<u64> {
        Ok(self.identity.size)
    }
    fn identity(&self) -> rntuple::Result<rntuple::container::Identity> {
        Ok(self.identity.clone())
    }
    fn transport_stats(&self) -> Option<rntuple::container::TransportStats> {
        Some(self.wire.snapshot())
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.wire.single(buf.len() as u64);
        self.file.read_exact_at(offset, buf)
    }
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> rntuple::Result<Vec<Vec<u8>>> {
        self.wire.vectored(ranges.len() as u64, ranges.iter().map(|r| r.1 as u64).sum());
        self.file.read_ranges(ranges)
    }
    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> rntuple::Result<()> {
        self.wire.vectored(ranges.len() as u64, out.len() as u64);
        self.file.read_ranges_into(ranges, out)
    }
}

/// Registers the test store for `scheme` (see `TestScheme`), for tests of
/// remote reading without a server.
#[pyfunction]
fn _register_test_scheme(scheme: &str) {
    rntuple::container::storage::register_backend(scheme, Arc::new(TestScheme(scheme.to_string())));
}

/// Whether the I/O report is on (`RNTUPLE_IO_REPORT=1` or `set_io_report`).
#[pyfunction]
fn io_report_enabled() -> bool {
    rntuple::io_report_enabled()
}

/// Turns the I/O report at the end of every RNTuple handle on or off.
#[pyfunction]
fn set_io_report(on: bool) {
    rntuple::set_io_report(on)
}

#[pymodule]
fn _lib(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<File>()?;
    m.add_class::<RNTuple>()?;
    m.add_class::<write::PyFileWriter>()?;
    m.add_class::<write::PyRNTupleWriter>()?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(write::compression_setting, m)?)?;
    m.add_function(wrap_pyfunction!(nulls::null_paths, m)?)?;
    m.add_function(wrap_pyfunction!(readat::open_reader, m)?)?;
    m.add_function(wrap_pyfunction!(nulls::tighten_schema, m)?)?;
    m.add_function(wrap_pyfunction!(io_report_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(set_io_report, m)?)?;
    m.add_function(wrap_pyfunction!(_register_test_scheme, m)?)?;
    tools::register(m)?;
    browse::register(m)?;
    attrs::register(m)?;
    parallel::register(m)?;
    schema::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
