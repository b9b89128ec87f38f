//! The bytes of the RNTuple binary format, version 1.0
//! (`tree/ntuple/doc/BinaryFormatSpecification.md` in root-project/root).
//!
//! This crate knows envelopes, frames, locators, column encodings,
//! compression blocks and checksums. It does no I/O, knows no Arrow and
//! starts no threads: every function takes bytes and returns values.
//!
//! * [`envelope`]: parse and write header, footer and page list envelopes.
//! * [`compression`]: ROOT compression blocks (zlib, LZMA, LZ4, zstd).
//! * [`column`]: decode and encode pages of every column type.
//! * [`checksum`]: the xxhash functions of the format.
//! * [`constants`]: every number that is written into files.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

pub mod alloc;
pub mod checksum;
pub mod column;
pub mod column_type;
pub mod compression;
pub mod constants;
pub mod envelope;
pub mod error;
pub mod frame;
pub mod locator;
pub mod model;

pub use column::{decode_page, encode_page, ColumnSpec, ColumnValues};
pub use error::{Error, Location, Result};
