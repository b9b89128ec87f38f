//! Attribute sets (ROOT 6.40's `RNTupleAttr*`, see `rntuple::attributes`):
//! `AttributeSet` read from an RNTuple, and the functions that create and
//! fill attribute sets of an RNTuple being written (by an `RNTupleWriter` or
//! a `ParallelWriter`). The `rntuple` package
//! wraps them (`rntuple._attributes`).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::{PyRecordBatch, PySchema};
use rntuple::AttributeRange;

use crate::errors::to_py;
use crate::parallel::PyParallelWriter;
use crate::write::{parse_overrides, PyRNTupleWriter};
use crate::RNTuple;

/// One attribute set of an RNTuple, read.
#[pyclass(module = "rntuple._lib", name = "AttributeSet", frozen)]
pub(crate) struct PyAttributeSet {
    inner: Arc<rntuple::AttributeSet>,
}

#[pymethods]
impl PyAttributeSet {
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// (major, minor) of the attribute schema.
    #[getter]
    fn schema_version(&self) -> (u16, u16) {
        let l = self.inner.link();
        (l.schema_version_major, l.schema_version_minor)
    }

    #[getter]
    fn num_entries(&self) -> u64 {
        self.inner.num_entries()
    }

    /// (starts, lengths) of the main entry range of each attribute entry.
    fn ranges(&self) -> (Vec<u64>, Vec<u64>) {
        self.inner.ranges().iter().map(|r| (r.start, r.length)).unzip()
    }

    /// The user's fields as an RNTuple with one entry per attribute entry.
    fn values(&self) -> RNTuple {
        RNTuple { inner: Arc::new(self.inner.values().clone()) }
    }

    /// All attribute entries ordered by range start (ROOT's `GetAttributes()`).
    fn entries(&self) -> Vec<u64> {
        self.inner.entries()
    }

    fn entries_containing(&self, entry: u64) -> Vec<u64> {
        self.inner.entries_containing(entry)
    }

    fn entries_containing_range(&self, start: u64, stop: u64) -> Vec<u64> {
        self.inner.entries_containing_range(start, stop)
    }

    fn entries_in_range(&self, start: u64, stop: u64) -> Vec<u64> {
        self.inner.entries_in_range(start, stop)
    }
}

/// Names of the attribute sets linked to `rntuple`, in footer order.
#[pyfunction]
fn attribute_set_names(rntuple: &Bound<'_, RNTuple>) -> Vec<String> {
    rntuple.get().inner.attribute_sets().iter().map(|l| l.name.clone()).collect()
}

/// Opens the attribute set `name` of `rntuple` (`KeyError` if it has none).
#[pyfunction]
fn open_attribute_set(py: Python<'_>, rntuple: &Bound<'_, RNTuple>, name: &str) -> PyResult<PyAttributeSet> {
    let nt = rntuple.get().inner.clone();
    let set = py.detach(|| nt.attribute_set(name)).map_err(to_py)?;
    Ok(PyAttributeSet { inner: Arc::new(set) })
}

/// `writer` when it is not an `RNTupleWriter`: a `ParallelWriter`.
fn parallel<'a, 'py>(writer: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyParallelWriter>> {
    Ok(writer.cast::<PyParallelWriter>()?)
}

/// Creates the attribute set `name` of the RNTuple being written by `writer`,
/// with the Arrow `schema` and `overrides` as for its fields.
#[pyfunction]
fn create_attribute_set(
    writer: &Bound<'_, PyAny>,
    name: String,
    schema: PySchema,
    overrides: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let overrides = parse_overrides(overrides)?;
    let schema = schema.into_inner();
    let py = writer.py();
    match writer.cast::<PyRNTupleWriter>() {
        Ok(w) => w.get().with_open(py, |w| w.create_attribute_set(&name, &schema, &overrides)),
        Err(_) => parallel(writer)?.get().with_open(py, |w| w.create_attribute_set(&name, &schema, &overrides)),
    }
}

/// Appends attribute entries: row i of `batch` for the main entries
/// `[starts[i], starts[i] + lengths[i])` (of a parallel writer: the committed entries).
#[pyfunction]
fn commit_attributes(
    writer: &Bound<'_, PyAny>,
    name: String,
    batch: PyRecordBatch,
    starts: Vec<u64>,
    lengths: Vec<u64>,
) -> PyResult<()> {
    let ranges = attribute_ranges(&starts, &lengths)?;
    let batch = batch.into_inner();
    let py = writer.py();
    match writer.cast::<PyRNTupleWriter>() {
        Ok(w) => w.get().with_open(py, |w| w.commit_attributes(&name, &batch, &ranges)),
        Err(_) => parallel(writer)?.get().with_open(py, |w| w.commit_attributes(&name, &batch, &ranges)),
    }
}

/// The main entries `[starts[i], starts[i] + lengths[i])` of attribute entry i.
pub(crate) fn attribute_ranges(starts: &[u64], lengths: &[u64]) -> PyResult<Vec<AttributeRange>> {
    if starts.len() != lengths.len() {
        return Err(to_py(rntuple_format::Error::invalid("starts and lengths differ in length")));
    }
    Ok(starts.iter().zip(lengths).map(|(&s, &l)| AttributeRange::new(s, l)).collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAttributeSet>()?;
    m.add_function(wrap_pyfunction!(attribute_set_names, m)?)?;
    m.add_function(wrap_pyfunction!(open_attribute_set, m)?)?;
    m.add_function(wrap_pyfunction!(create_attribute_set, m)?)?;
    m.add_function(wrap_pyfunction!(commit_attributes, m)?)?;
    Ok(())
}
