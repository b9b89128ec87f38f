//! The `rntuple` command: a thin binary over the command registry of
//! [`rntuple_tools::cli`], which the Python package's console script runs
//! too (there, `convert` and `draw` are implemented; here they answer with a
//! message naming the Python package).
//!
//! The registry lives below both so that no crate depends on this one.
//!
//! Exit status: 0 on success, 1 on failure (for `verify`: a problem found),
//! 2 for usage errors, 130 when interrupted (Ctrl-C).

pub use rntuple_tools::cli::{run, split_target};
