//! Bindings of the data-manager tools (`rntuple_tools`): `inspect`, `verify`,
//! `merge`. They run with the GIL released; Ctrl-C in Python stops `verify`
//! and `merge` (the pending `KeyboardInterrupt` is raised once they have
//! cleaned up: a merge then leaves no output). The `rntuple` package wraps
//! them in `rntuple._tools`.
//!
//! Also the terminal side of the package: `cli_main` runs the command
//! registry of `rntuple_tools::cli` (the Python console script's entry), and
//! `ProgressBar` is the one progress bar (`rntuple_tools::term::Bar`) for the
//! Python-implemented commands.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use rntuple_tools::cli::Dispatch;
use rntuple_tools::merge::{MergeMode, MergeOptions};
use rntuple_tools::term::{Bar, Finish, When};
use rntuple_tools::verify::{FileReport, VerifyOptions};
use rntuple_tools::{is_interrupted, Progress};

use crate::errors::to_py;

/// A Python dict of `key => value` pairs (each value converted as
/// `PyDict::set_item` converts it).
macro_rules! py_dict {
    ($py:expr, { $($key:literal => $value:expr),* $(,)? }) => {{
        let d = PyDict::new($py);
        $(d.set_item($key, $value)?;)*
        d
    }};
}

/// How often a running tool looks for a pending Python signal.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Forwards progress to a bar (when asked for, on a terminal) or to a Python
/// object (a notebook's bar: `start(what, total, unit)`, `update(n)`,
/// `finish()`), and turns a pending Python signal (Ctrl-C) into a
/// cancellation, keeping the error to raise afterwards.
struct PyProgress {
    bar: Bar,
    sink: Option<Py<PyAny>>,
    last_poll: Mutex<Instant>,
    raised: Mutex<Option<PyErr>>,
}

impl PyProgress {
    /// `progress`: `None`/`False` (no bar), `True` (the bar, on a terminal) or
    /// an object that draws it.
    fn new(progress: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let (show, sink) = match progress {
            None => (false, None),
            Some(p) if p.is_instance_of::<PyBool>() => (p.extract::<bool>()?, None),
            Some(p) => (false, Some(p.clone().unbind())),
        };
        let when = if show { When::Terminal } else { When::Never };
        Ok(Self { bar: Bar::new(when, None), sink, last_poll: Mutex::new(Instant::now()), raised: Mutex::new(None) })
    }

    fn take_error(&self) -> Option<PyErr> {
        self.raised.lock().ok().and_then(|mut e| e.take())
    }

    /// Calls the Python progress object (`f(py, object)`); an error there is
    /// dropped (a bar that fails to draw must not fail the work).
    fn notify(&self, f: impl FnOnce(Python<'_>, &Py<PyAny>) -> PyResult<Py<PyAny>>) {
        if let Some(sink) = &self.sink {
            Python::attach(|py| {
                let _ = f(py, sink);
            });
        }
    }
}

impl Progress for PyProgress {
    fn start(&self, what: &str, total: u64, unit: &str) {
        self.bar.start(what, total, unit);
        self.notify(|py, s| s.call_method1(py, "start", (what, total, unit)));
    }
    fn advance(&self, n: u64) {
        self.bar.advance(n);
        self.notify(|py, s| s.call_method1(py, "update", (n,)));
    }
    fn finish(&self) {
        self.bar.finish();
        self.notify(|py, s| s.call_method0(py, "finish"));
    }
    fn cancelled(&self) -> bool {
        if self.raised.lock().map(|e| e.is_some()).unwrap_or(false) {
            return true;
        }
        {
            let Ok(mut last) = self.last_poll.lock() else { return false };
            if last.elapsed() < SIGNAL_POLL {
                return false;
            }
            *last = Instant::now();
        }
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                if let Ok(mut slot) = self.raised.lock() {
                    *slot = Some(e);
                }
                true
            }
        }
    }
}

/// Converts a JSON value of the tools into Python objects.
pub(crate) fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| to_py(rntuple_format::Error::internal(e.to_string())))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// `recover(broken, out=None, overwrite=False, sync=False) -> dict`: the
/// JSON document of `rntuple recover --json` (docs/recover.md), with `text`.
#[pyfunction]
#[pyo3(signature = (broken, out = None, overwrite = false, sync = false))]
fn recover(py: Python<'_>, broken: PathBuf, out: Option<PathBuf>, overwrite: bool, sync: bool) -> PyResult<Py<PyAny>> {
    let options = rntuple_tools::RecoverOptions { sync, overwrite };
    let r = py.detach(|| rntuple_tools::recover(&broken, out.as_deref(), options)).map_err(to_py)?;
    let mut doc = r.to_json();
    doc["entries"] = r.entries().into();
    doc["text"] = r.to_string().into();
    json_to_py(py, &doc)
}

/// `inspect(path, name=None, verify_checksums=True) -> dict`: the JSON
/// document of `rntuple inspect --json` (schema in docs/tools.md).
#[pyfunction]
#[pyo3(signature = (path, name = None, verify_checksums = true))]
fn inspect(py: Python<'_>, path: PathBuf, name: Option<String>, verify_checksums: bool) -> PyResult<Py<PyAny>> {
    let i = py.detach(|| rntuple_tools::inspect_file(&path, name.as_deref(), verify_checksums)).map_err(to_py)?;
    json_to_py(py, &rntuple_tools::inspect::json::to_json(&i))
}

fn report_dict<'py>(py: Python<'py>, r: &FileReport) -> PyResult<Bound<'py, PyDict>> {
    let d = py_dict!(py, {
        "file" => &r.file,
        "ok" => r.is_ok(),
        "rntuples" => &r.rntuples,
        "num_pages" => r.num_pages,
        "page_bytes" => r.page_bytes,
        "num_problems" => r.num_problems,
        "interrupted" => r.interrupted,
    });
    let mut problems = Vec::with_capacity(r.problems.len());
    for p in &r.problems {
        let q = py_dict!(py, {
            "file" => &p.file,
            "rntuple" => &p.rntuple,
            "field" => &p.field,
            "column" => p.column,
            "cluster" => p.cluster,
            "page" => p.page,
            "offset" => p.offset,
            "check" => p.check,
            "message" => &p.message,
            "text" => p.to_string(),
        });
        problems.push(q);
    }
    d.set_item("problems", problems)?;
    Ok(d)
}

/// `verify(paths, read_values=True, max_problems=1000, progress=False)`:
/// one report dict per file (stops early on Ctrl-C, then raises).
#[pyfunction]
#[pyo3(signature = (paths, read_values = true, max_problems = 1000, progress = None))]
fn verify<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    read_values: bool,
    max_problems: usize,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let options = VerifyOptions { read_values, max_problems };
    let observer = PyProgress::new(progress.as_ref())?;
    let reports = py.detach(|| {
        let refs: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
        rntuple_tools::verify_files(&refs, options, &observer)
    });
    if let Some(e) = observer.take_error() {
        return Err(e);
    }
    reports.iter().map(|r| report_dict(py, r)).collect()
}

/// `merge(out, inputs, name=None, mode="strict", compression=None,
/// overwrite=False, verify_checksums=True, threads=0, sync=False,
/// progress=None) -> dict`: the summary of the merge (`progress`: see
/// `PyProgress::new`).
#[pyfunction]
#[pyo3(signature = (
    out, inputs, name = None, mode = "strict", compression = None, overwrite = false,
    verify_checksums = true, threads = 0, sync = false, progress = None
))]
#[allow(clippy::too_many_arguments)]
fn merge<'py>(
    py: Python<'py>,
    out: PathBuf,
    inputs: Vec<PathBuf>,
    name: Option<String>,
    mode: &str,
    compression: Option<u32>,
    overwrite: bool,
    verify_checksums: bool,
    threads: usize,
    sync: bool,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mode: MergeMode = mode.parse().map_err(to_py)?;
    let options = MergeOptions { name, mode, compression, verify_checksums, overwrite, sync, threads };
    let observer = PyProgress::new(progress.as_ref())?;
    let result = py.detach(|| {
        let refs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
        rntuple_tools::merge(&out, &refs, &options, &observer)
    });
    let s = match result {
        Ok(s) => s,
        Err(e) if is_interrupted(&e) => {
            return Err(observer.take_error().unwrap_or_else(|| PyKeyboardInterrupt::new_err("merge interrupted")));
        }
        Err(e) => return Err(to_py(e)),
    };
    Ok(py_dict!(py, {
        "name" => &s.name,
        "inputs" => s.inputs,
        "entries" => s.entries,
        "clusters" => s.clusters,
        "cluster_groups" => s.cluster_groups,
        "compression" => s.compression,
        "pages_copied" => s.pages.copied,
        "pages_recompressed" => s.pages.resealed,
        "pages_default" => s.pages.zero,
        "pages_shared" => s.pages.shared,
        "fields_added" => &s.fields_added,
        "fields_dropped" => &s.fields_dropped,
        "attribute_sets_dropped" => &s.attribute_sets_dropped,
        "warnings" => &s.warnings,
        "bytes" => s.bytes,
    }))
}

/// `cli_main(argv) -> int | (name, args, usage)`: parses the `rntuple`
/// command line `argv` (program name first) with the command registry and
/// runs a Rust subcommand (returning its exit status), or returns a Python
/// subcommand's name, its arguments (a dict) and its usage line.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> PyResult<Py<PyAny>> {
    match py.detach(|| rntuple_tools::cli::dispatch(argv)) {
        Dispatch::Done(status) => Ok(status.into_pyobject(py)?.into_any().unbind()),
        Dispatch::Python(p) => {
            let args = json_to_py(py, &p.args)?;
            Ok((p.name, args, p.usage).into_pyobject(py)?.into_any().unbind())
        }
    }
}

/// `ProgressBar(total, label, enabled=None, unit="entries")`: the progress
/// bar of the `rntuple` command on standard error, for work done in Python.
/// `enabled=None` draws only when standard error is a terminal; the final
/// state stays on screen after `close()`.
#[pyclass(module = "rntuple._lib", frozen)]
struct ProgressBar {
    bar: Bar,
}

#[pymethods]
impl ProgressBar {
    #[new]
    #[pyo3(signature = (total, label, enabled = None, unit = "entries"))]
    fn new(total: u64, label: &str, enabled: Option<bool>, unit: &str) -> Self {
        let when = match enabled {
            None => When::Terminal,
            Some(true) => When::Always,
            Some(false) => When::Never,
        };
        let bar = Bar::new(when, None).with_finish(Finish::Keep);
        bar.start(label, total, unit);
        Self { bar }
    }

    /// `n` more units are done.
    fn update(&self, n: u64) {
        self.bar.advance(n);
    }

    /// Draws the final state (when shown) and ends the line.
    fn close(&self) {
        self.bar.finish();
    }

    /// Whether the bar draws.
    #[getter]
    fn enabled(&self) -> bool {
        self.bar.shows()
    }
}

/// Adds the functions to the extension module (`inspect`, `verify`, `merge`,
/// `cli_main`, `ProgressBar`).
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_class::<ProgressBar>()?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(recover, m)?)?;
    Ok(())
}
