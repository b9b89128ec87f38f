//! Who owns what: the user id of this process, for the checks on token
//! files and cache directories.

use std::os::unix::fs::MetadataExt;

use rntuple_format::{Error, Result};

/// The user id of this process: the owner of `/proc/self` (Linux), without
/// `unsafe` calls into libc.
pub(crate) fn uid() -> Result<u32> {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .map_err(|e| Error::io("/proc/self (the user id of this process)".to_string(), e))
}
