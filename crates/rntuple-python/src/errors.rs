//! The exception hierarchy of the `rntuple` package and the one mapping of
//! [`rntuple_format::Error`] onto it.
//!
//! Every class derives from `RNTupleError`. Where a built-in exception says
//! the same thing, the class derives from it too, so that `except
//! ValueError` (or `KeyError`, `FileNotFoundError`, ...) keeps working:
//!
//! ```text
//! RNTupleError
//! ├── FormatError ── TruncatedError, ChecksumError, AllocationError, DecompressionError
//! ├── UnsupportedError
//! ├── InternalError                       a broken invariant of rntuple (a bug)
//! ├── InvalidArgumentError  (ValueError)  the caller's bad argument
//! │   └── WriteError                      data or options that cannot be written as asked
//! ├── WrongTypeError        (TypeError)   an argument of the wrong type
//! ├── NotFoundError         (KeyError)    no such RNTuple, field, key, attribute set
//! ├── StateError            (ValueError)  an object used in a state that does not allow it
//! ├── OutOfMemoryError      (MemoryError) a buffer the file needs could not be allocated
//! ├── MemoryLimitError      (MemoryError) a read over its max_memory budget or a size cap
//! └── StorageError          (OSError)     the storage failed
//!     ├── MissingFileError  (FileNotFoundError)
//!     ├── PermissionDeniedError (PermissionError)
//!     └── DirectoryError    (IsADirectoryError)
//! ```
//!
//! PyO3's `create_exception!` gives a class one base; the classes with a
//! built-in second base are made with `type(name, bases, namespace)` when the
//! module is initialized.

use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyIsADirectoryError, PyKeyError, PyMemoryError, PyOSError, PyPermissionError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use rntuple_format::Error;

pyo3::create_exception!(_lib, RNTupleError, PyException, "Base class of every error raised by rntuple.");
pyo3::create_exception!(_lib, FormatError, RNTupleError, "The file contradicts the RNTuple or ROOT file format.");
pyo3::create_exception!(_lib, TruncatedError, FormatError, "The file ends before a structure is complete.");
pyo3::create_exception!(_lib, ChecksumError, FormatError, "A stored checksum does not match the data.");
pyo3::create_exception!(_lib, UnsupportedError, RNTupleError, "The file uses a feature rntuple does not support.");
pyo3::create_exception!(_lib, AllocationError, FormatError, "A size in the file is larger than the file can justify.");
pyo3::create_exception!(_lib, DecompressionError, FormatError, "A compressed block cannot be decompressed.");
pyo3::create_exception!(_lib, InternalError, RNTupleError, "A broken invariant of rntuple (a bug: please report it).");

/// The classes with a built-in second base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    InvalidArgument,
    Write,
    WrongType,
    NotFound,
    State,
    OutOfMemory,
    MemoryLimit,
    Storage,
    MissingFile,
    PermissionDenied,
    Directory,
}

/// (kind, name, parent class in this table or None for `RNTupleError`, built-in base, doc), parents first.
type Spec = (Kind, &'static str, Option<Kind>, fn(Python<'_>) -> Bound<'_, PyType>, &'static str);
const SPECS: [Spec; 11] = [
    (
        Kind::InvalidArgument,
        "InvalidArgumentError",
        None,
        |py| py.get_type::<PyValueError>(),
        "An argument rntuple cannot use (also a ValueError).",
    ),
    (
        Kind::Write,
        "WriteError",
        Some(Kind::InvalidArgument),
        |py| py.get_type::<PyValueError>(),
        "Data, names, types or options that cannot be written as asked (also a ValueError).",
    ),
    (
        Kind::WrongType,
        "WrongTypeError",
        None,
        |py| py.get_type::<PyTypeError>(),
        "An argument of a type rntuple does not take (also a TypeError).",
    ),
    (
        Kind::NotFound,
        "NotFoundError",
        None,
        |py| py.get_type::<PyKeyError>(),
        "No such RNTuple, key, field or attribute set (also a KeyError).",
    ),
    (
        Kind::State,
        "StateError",
        None,
        |py| py.get_type::<PyValueError>(),
        "An object used in a state that does not allow it: closed, failed, abandoned (also a ValueError).",
    ),
    (
        Kind::OutOfMemory,
        "OutOfMemoryError",
        None,
        |py| py.get_type::<PyMemoryError>(),
        "A buffer the file asks for could not be allocated; the message names what was being read \
         (also a MemoryError).",
    ),
    (
        Kind::MemoryLimit,
        "MemoryLimitError",
        None,
        |py| py.get_type::<PyMemoryError>(),
        "A read would exceed its max_memory budget, or a size is over a cap; refused before allocating \
         (also a MemoryError).",
    ),
    (Kind::Storage, "StorageError", None, |py| py.get_type::<PyOSError>(), "The storage failed (also an OSError)."),
    (
        Kind::MissingFile,
        "MissingFileError",
        Some(Kind::Storage),
        |py| py.get_type::<PyFileNotFoundError>(),
        "No such file (also a FileNotFoundError).",
    ),
    (
        Kind::PermissionDenied,
        "PermissionDeniedError",
        Some(Kind::Storage),
        |py| py.get_type::<PyPermissionError>(),
        "Access to the file is not permitted (also a PermissionError).",
    ),
    (
        Kind::Directory,
        "DirectoryError",
        Some(Kind::Storage),
        |py| py.get_type::<PyIsADirectoryError>(),
        "A directory where a file is needed (also an IsADirectoryError).",
    ),
];

static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn index(kind: Kind) -> usize {
    SPECS.iter().position(|s| s.0 == kind).unwrap_or(0)
}

/// Creates the classes and adds every class of the hierarchy to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("RNTupleError", py.get_type::<RNTupleError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("TruncatedError", py.get_type::<TruncatedError>())?;
    m.add("ChecksumError", py.get_type::<ChecksumError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("AllocationError", py.get_type::<AllocationError>())?;
    m.add("DecompressionError", py.get_type::<DecompressionError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    let mut made: Vec<Py<PyType>> = Vec::with_capacity(SPECS.len());
    for (_, name, parent, builtin, doc) in SPECS {
        let first = match parent {
            Some(p) => made[index(p)].bind(py).clone(),
            None => py.get_type::<RNTupleError>(),
        };
        let bases = PyTuple::new(py, [first.into_any(), builtin(py).into_any()])?;
        let ns = PyDict::new(py);
        ns.set_item("__doc__", doc)?;
        ns.set_item("__module__", "rntuple._lib")?;
        let cls = py.get_type::<PyType>().call1((name, bases, ns))?.cast_into::<PyType>()?;
        m.add(name, &cls)?;
        made.push(cls.unbind());
    }
    let _ = CLASSES.set(py, made);
    Ok(())
}

/// An exception of class `kind` with `msg`.
pub(crate) fn new_err(kind: Kind, msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    Python::attach(|py| match CLASSES.get(py) {
        Some(classes) => PyErr::from_type(classes[index(kind)].bind(py).clone(), msg),
        None => RNTupleError::new_err(msg), // the module is not initialized: cannot happen
    })
}

/// The one mapping of the Rust error onto the hierarchy.
pub(crate) fn to_py(e: Error) -> PyErr {
    // No credential (userinfo, token, signature) of a URL reaches Python.
    let msg = rntuple::container::storage::redact_text(&e.to_string()).into_owned();
    match e {
        Error::OutOfSpec { .. } => FormatError::new_err(msg),
        Error::Truncated { .. } => TruncatedError::new_err(msg),
        Error::ChecksumMismatch { .. } => ChecksumError::new_err(msg),
        Error::Unsupported { .. } => UnsupportedError::new_err(msg),
        Error::WouldOverAllocate { .. } => AllocationError::new_err(msg),
        Error::Decompression { .. } => DecompressionError::new_err(msg),
        Error::OutOfMemory { .. } => new_err(Kind::OutOfMemory, msg),
        Error::OverBudget { .. } => new_err(Kind::MemoryLimit, msg),
        Error::NotFound { .. } => new_err(Kind::NotFound, msg),
        Error::InvalidArgument { .. } => new_err(Kind::InvalidArgument, msg),
        Error::State { .. } => new_err(Kind::State, msg),
        Error::Internal { .. } => InternalError::new_err(msg),
        Error::Io { source, .. } => {
            let kind = match source.kind() {
                std::io::ErrorKind::NotFound => Kind::MissingFile,
                std::io::ErrorKind::PermissionDenied => Kind::PermissionDenied,
                std::io::ErrorKind::IsADirectory => Kind::Directory,
                _ => Kind::Storage,
            };
            // Python names the errno as `.errno`; the text keeps Rust's "(os error 2)" out
            let text = match source.raw_os_error() {
                Some(n) => msg.replace(&format!(" (os error {n})"), ""),
                None => msg,
            };
            let err = new_err(kind, text);
            if let Some(n) = source.raw_os_error() {
                Python::attach(|py| {
                    let _ = err.value(py).setattr("errno", n);
                });
            }
            err
        }
        _ => RNTupleError::new_err(msg),
    }
}

/// [`to_py`] for the write path: the caller's invalid arguments are `WriteError`s there.
pub(crate) fn to_py_write(e: Error) -> PyErr {
    match e {
        Error::InvalidArgument { .. } => {
            new_err(Kind::Write, rntuple::container::storage::redact_text(&e.to_string()).into_owned())
        }
        other => to_py(other),
    }
}
