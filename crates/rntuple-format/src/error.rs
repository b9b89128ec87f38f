//! The one error type of the project's lower layers.
//!
//! Every variant carries *what* went wrong and *where* (a byte offset, a page,
//! an envelope), so that a user holding a corrupt file can find the problem.

use std::fmt;

/// Where in a file (or buffer) a problem was found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// What was being read, e.g. `"footer envelope"`, `"page 3 of column 7 in cluster 2"`.
    pub context: String,
    /// Absolute byte offset in the file when known, else the offset inside the
    /// buffer named by `context`.
    pub offset: Option<u64>,
}

impl Location {
    pub fn new(context: impl Into<String>, offset: Option<u64>) -> Self {
        Self { context: context.into(), offset }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} at byte offset {}", self.context, o),
            None => write!(f, "{}", self.context),
        }
    }
}

/// Errors of parsing, decoding and reading RNTuple data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes contradict the specification (bad magic, impossible size, ...).
    #[error("malformed data in {location}: {message}")]
    OutOfSpec { message: String, location: Location },

    /// The data ended before a structure was complete.
    #[error("truncated data in {location}: needed {needed} bytes, {available} available")]
    Truncated { needed: u64, available: u64, location: Location },

    /// A stored xxhash does not match the bytes it covers.
    #[error("checksum mismatch in {location}: stored {stored:#018x}, computed {computed:#018x}")]
    ChecksumMismatch { stored: u64, computed: u64, location: Location },

    /// The file uses a feature this implementation does not read.
    #[error("unsupported feature in {location}: {feature}")]
    Unsupported { feature: String, location: Location },

    /// A size or count in the file would need more memory than the file can justify.
    #[error(
        "refusing to allocate {requested} bytes for {location}: more than the {limit} bytes the input can justify"
    )]
    WouldOverAllocate { requested: u64, limit: u64, location: Location },

    /// The memory for a buffer whose size the input gives could not be
    /// allocated (the process goes on; see [`crate::alloc`]).
    #[error("out of memory: cannot allocate {requested} bytes for {location}")]
    OutOfMemory { requested: u64, location: Location },

    /// A read would need more memory than the budget its caller set
    /// (`max_memory`), or a size is above an absolute cap; refused before
    /// anything was allocated. `hint` says how to read with less memory.
    #[error("{location} needs {requested} bytes, more than the {limit}-byte {what}{hint}")]
    OverBudget { requested: u64, limit: u64, what: &'static str, hint: &'static str, location: Location },

    /// Decompression failed.
    #[error("cannot decompress {location}: {message}")]
    Decompression { message: String, location: Location },

    /// A requested object, field or column does not exist.
    #[error("not found: {what}")]
    NotFound { what: String },

    /// Wrong arguments from the caller. Build it with [`Error::invalid`].
    #[error("invalid argument: {message}")]
    InvalidArgument { message: String },

    /// An object used in a state that does not allow it: a writer that
    /// failed earlier, was closed, or a file already finished. Build it with
    /// [`Error::state`].
    #[error("wrong state: {message}")]
    State { message: String },

    /// A broken invariant of this implementation (a bug, not bad input):
    /// reported instead of a panic. Build it with [`Error::internal`].
    #[error("internal error (please report it): {message}")]
    Internal { message: String },

    /// An I/O error of the underlying storage.
    #[error("I/O error {context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// Result alias used throughout the crates.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The location of a located error, by reference or by mutable reference
/// (as `$error` is).
macro_rules! location_of {
    ($error:expr) => {
        match $error {
            Error::OutOfSpec { location, .. }
            | Error::Truncated { location, .. }
            | Error::ChecksumMismatch { location, .. }
            | Error::Unsupported { location, .. }
            | Error::WouldOverAllocate { location, .. }
            | Error::OutOfMemory { location, .. }
            | Error::OverBudget { location, .. }
            | Error::Decompression { location, .. } => Some(location),
            _ => None,
        }
    };
}

impl Error {
    /// Wrong arguments from the caller ([`Error::InvalidArgument`]).
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument { message: message.into() }
    }
    /// An object used in a state that does not allow it ([`Error::State`]).
    pub fn state(message: impl Into<String>) -> Self {
        Error::State { message: message.into() }
    }
    /// A broken invariant of this implementation ([`Error::Internal`]).
    pub fn internal(message: impl Into<String>) -> Self {
        Error::Internal { message: message.into() }
    }
    pub fn out_of_spec(message: impl Into<String>, location: Location) -> Self {
        Error::OutOfSpec { message: message.into(), location }
    }
    pub fn unsupported(feature: impl Into<String>, location: Location) -> Self {
        Error::Unsupported { feature: feature.into(), location }
    }
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }
    /// Adds context to the location of a located error (keeps the innermost
    /// offset). Context the location already names is not repeated.
    pub fn within(mut self, outer: &str) -> Self {
        if let Some(location) = self.location_mut() {
            if !location.context.contains(outer) {
                location.context = format!("{} ({})", location.context, outer);
            }
        }
        self
    }
    /// Where in the input the error was found, for the errors about the
    /// input (not the caller's arguments, I/O or internal ones).
    pub fn location(&self) -> Option<&Location> {
        location_of!(self)
    }
    fn location_mut(&mut self) -> Option<&mut Location> {
        location_of!(self)
    }
}
