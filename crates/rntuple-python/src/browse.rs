//! What `rntuple browse` (python/rntuple/browse) asks of the core: the
//! regions of the container ([`layout_regions`]) and, per RNTuple, the
//! inspection report and the page records of a cluster ([`Inspected`]), for
//! local paths and URLs alike. The envelopes are loaded once per
//! [`Inspected`]; page records are produced on request, cluster by cluster.

use std::path::Path;
use std::sync::Arc;

use pyo3::prelude::*;
use rntuple::container::{OpenOptions, RootFile};
use rntuple_tools::inspect::{inspect_loaded, json, layout};
use rntuple_tools::load::{attribute_sets_of, load, resolve_name, Loaded};

use crate::errors::to_py;
use crate::tools::json_to_py;

fn open(path: &str, verify_checksums: bool) -> rntuple::format::Result<RootFile> {
    RootFile::open_with(Path::new(path), OpenOptions { verify_checksums, cache: None })
}

/// `layout_regions(path, verify_checksums=True) -> dict`: `file_size`,
/// `regions` (kind, offset, size, name, class, key_len; file order) and
/// `error` (the text of the error that stopped the listing, or `None`),
/// `walk_stopped` (why the key walk ended before `fEND`, or `None`).
/// The keys of a local file are also walked one by one (`RBlob` key headers,
/// free gaps); a remote file's are not (one request per key).
#[pyfunction]
#[pyo3(signature = (path, verify_checksums = true))]
fn layout_regions(py: Python<'_>, path: String, verify_checksums: bool) -> PyResult<Py<PyAny>> {
    let value = py
        .detach(|| {
            let root = open(&path, verify_checksums)?;
            let local = root.storage().transport_stats().is_none();
            let found = layout::file_regions(&root, local);
            Ok(serde_json::json!({
                "file_size": root.size(),
                "regions": layout::regions_json(&found.regions),
                "error": found.error,
                "walk_stopped": found.walk_stopped,
            }))
        })
        .map_err(to_py)?;
    json_to_py(py, &value)
}

/// One RNTuple with its envelopes loaded: `Inspected(path, name=None,
/// verify_checksums=True)`.
#[pyclass(module = "rntuple._lib", frozen)]
struct Inspected {
    loaded: Arc<Loaded>,
}

#[pymethods]
impl Inspected {
    #[new]
    #[pyo3(signature = (path, name = None, verify_checksums = true))]
    fn new(py: Python<'_>, path: String, name: Option<String>, verify_checksums: bool) -> PyResult<Self> {
        let loaded = py
            .detach(|| {
                let root = Arc::new(open(&path, verify_checksums)?);
                let name = resolve_name(&root, &path, name.as_deref())?;
                load(root, &path, &name, verify_checksums).map_err(|e| e.within(&format!("RNTuple '{name}'")))
            })
            .map_err(to_py)?;
        Ok(Inspected { loaded: Arc::new(loaded) })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.loaded.name
    }

    /// The RNTuple's entry of `rntuple inspect --json` (`rntuples[i]`).
    fn report(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let l = &self.loaded;
        let value = py
            .detach(|| {
                let mut r = inspect_loaded(l);
                r.attribute_sets = attribute_sets_of(l)?;
                Ok(json::rntuple(&r))
            })
            .map_err(to_py)?;
        json_to_py(py, &value)
    }

    /// Page records `[cluster, column, offset, size, checksum, elements]` of
    /// cluster `cluster` (all clusters when `None`).
    #[pyo3(signature = (cluster = None))]
    fn pages(&self, py: Python<'_>, cluster: Option<usize>) -> PyResult<Py<PyAny>> {
        json_to_py(py, &layout::pages_json(&layout::pages(&self.loaded, cluster)))
    }
}

/// Adds `layout_regions` and `Inspected` to the extension module.
/// `redact_url(url) -> str`: `url` without its credentials (userinfo, and the
/// values of token, signature and key parameters), as every page, message
/// and report shows URLs (`rntuple_container::storage::redact_url`).
#[pyfunction]
fn redact_url(url: &str) -> String {
    rntuple::container::storage::redact_url(url).into_owned()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(layout_regions, m)?)?;
    m.add_function(wrap_pyfunction!(redact_url, m)?)?;
    m.add_class::<Inspected>()?;
    Ok(())
}
