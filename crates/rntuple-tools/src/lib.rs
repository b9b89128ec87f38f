//! The tools of a data manager over RNTuple files, as a library (the `rntuple`
//! command and the Python package call these):
//!
//! * [`inspect`]: where the bytes go — per field and per column the
//!   compressed and uncompressed sizes, encodings, pages and page-size
//!   distribution; clusters, cluster groups, envelopes (what ROOT's
//!   `RNTupleInspector` reports), as a report with a stable JSON form;
//! * [`verify`]: reads every envelope and every page of files, checks every
//!   checksum and structural invariant and reports each problem with its
//!   location, going on to the next one where it can;
//! * [`merge`]: concatenates the RNTuples of one name from several files into
//!   a new file, copying compressed pages as they are when the compression
//!   settings agree (as ROOT's `RNTupleMerger` fast path), with ROOT's schema
//!   modes (strict, union, filter); the output appears atomically;
//! * [`recover`]: completes a file whose writer died with every cluster it
//!   committed, from the writer's journal, checking every checksum.
//!
//! Long-running tools report to a [`Progress`] and stop early when it says
//! so ([`Progress::cancelled`]). [`term`] holds the terminal helpers (the
//! progress bar, the text of `rntuple show`) and, with the `cli` feature,
//! [`cli`] is the registry of the `rntuple` command's subcommands, shared by
//! the Rust binary and the Python package.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

#[cfg(feature = "cli")]
pub mod cli;
pub mod inspect;
pub mod load;
pub mod merge;
pub mod progress;
pub mod recover;
pub mod term;
pub mod units;
pub mod verify;

pub use inspect::{inspect_file, Inspection, RNTupleReport};
pub use merge::{merge, MergeMode, MergeOptions, MergeSummary};
pub use progress::{interrupted, is_interrupted, NoProgress, Progress};
pub use recover::{recover, RecoverOptions, RecoveryReport};
pub use verify::{verify_file, verify_files, FileReport, Problem, VerifyOptions};
