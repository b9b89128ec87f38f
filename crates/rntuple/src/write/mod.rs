//! The write engine: Arrow record batches into RNTuples (RNTuple binary
//! format 1.0) inside ROOT files written by
//! [`rntuple_container::write::FileWriter`].
//!
//! ```no_run
//! use std::collections::HashMap;
//! use std::sync::Arc;
//! use arrow_array::{Float32Array, RecordBatch};
//! use arrow_schema::{DataType, Field, Schema};
//! use rntuple::write::{write_batches, WriteOptions};
//!
//! let schema = Arc::new(Schema::new(vec![Field::new("pt", DataType::Float32, false)]));
//! let batch = RecordBatch::try_new(schema, vec![Arc::new(Float32Array::from(vec![1.0, 2.5]))])?;
//! write_batches("out.root", "Events", [batch], &HashMap::new(), WriteOptions::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How the pieces fit (each module documents the ROOT behaviour it follows):
//!
//! * `plan`: Arrow schema + [`FieldOverride`]s → field tree, C++ type
//!   names, columns (the header envelope); it grows by late schema
//!   extension ([`RNTupleWriter::add_fields`], deferred columns). Split into
//!   `infer` (types from Arrow), `overrides` (types and encodings users
//!   give), `columns` (column rules); C++ names, the fundamental-type table
//!   and [`Projection`]s (projected fields with alias columns) live in the
//!   schema layer ([`crate::schema`]);
//! * `fill`: Arrow arrays → column elements, entry ranges at a time (ordered
//!   containers sorted, bitsets unpacked);
//! * `pages`: page buffers that grow, seal and stay within a budget;
//! * `pool`: the threads that compress sealed pages while filling goes on;
//! * `budget`: the memory budget ([`WriteOptions::memory_budget`]) shared
//!   out, and the count of the bytes held ([`RNTupleWriter::memory_use`]);
//! * `layout`: a cluster's pages grouped by column into `RBlob` keys, with
//!   same-page merging, from memory (`WriteOptions::group_pages_by_column`,
//!   fill contexts) or, by default, from the scratch file the pages were
//!   spilled to as they were sealed (`writer/stream.rs`);
//! * `writer` ([`RNTupleWriter`]): clusters, cluster groups (page lists), footer, anchor;
//! * `shared` ([`SharedFileWriter`]): a file shared by writers that own their handle;
//! * `parallel` ([`ParallelWriter`]): fill contexts on several threads filling clusters of one RNTuple.

mod budget;
mod columns;
mod fill;
mod infer;
pub mod journal;
mod layout;
mod measure;
mod names;
mod options;
mod overrides;
mod pages;
mod parallel;
mod plan;
mod pool;
mod shared;
mod writer;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;

use arrow_array::RecordBatch;
use rntuple_container::write::{FileWriter, PayloadSource, WriterOptions};
use rntuple_container::Anchor;
use rntuple_format::{Error, Result};

pub use budget::MemoryUse;
pub use options::{Compression, FieldOverride, Projection, RealEncoding, WriteOptions};
pub use parallel::{FillContext, ParallelWriter};
pub use shared::SharedFileWriter;
pub use writer::RNTupleWriter;

/// What the engine needs from the container: [`FileWriter`],
/// [`SharedFileWriter`], or an in-memory stand-in in the unit tests.
pub(crate) trait BlobSink: Send {
    /// Writes `parts` back to back as one payload (split over keys when it
    /// exceeds the maximum key size); returns the payload's offset.
    /// `uncompressed_len` is recorded as the key's object length, as ROOT does.
    fn write_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64>;
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()>;
    fn max_key_size(&self) -> u64;
    /// Writes the anchor of an attribute set's RNTuple where no directory
    /// lists it; returns the offset of its bytes (`anchor.to_bytes()`).
    fn write_hidden_anchor(&mut self, _name: &str, anchor: &Anchor) -> Result<u64> {
        let bytes = anchor.to_bytes();
        self.write_blob(&[&bytes], bytes.len() as u64)
    }
    /// [`BlobSink::write_blob`] for a payload read from `src` in pieces (the
    /// pages of a cluster spilled to a scratch file): the same keys. This
    /// default gathers the payload in memory; file sinks stream it.
    fn write_blob_from(&mut self, src: &mut dyn PayloadSource, uncompressed_len: u64) -> Result<u64> {
        let len = src.len();
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        while (bytes.len() as u64) < len {
            let left = usize::try_from(len - bytes.len() as u64).unwrap_or(usize::MAX);
            let piece = src.bytes_at(bytes.len() as u64, left).map_err(|e| Error::io("reading a payload", e))?;
            bytes.extend_from_slice(piece);
        }
        self.write_blob(&[&bytes], uncompressed_len)
    }
    /// Where a writer keeps scratch files (the directory of a local output
    /// file); `None`: `$TMPDIR`.
    fn scratch_dir(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// Makes the payloads written so far survive the process and journals
    /// `record` ([`FileWriter::commit`]); a sink without a journal ignores it.
    fn commit(&mut self, _record: &[u8]) -> Result<()> {
        Ok(())
    }
}

impl BlobSink for FileWriter {
    fn write_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64> {
        self.write_blob_parts_with_len(parts, uncompressed_len)
    }
    fn write_blob_from(&mut self, src: &mut dyn PayloadSource, uncompressed_len: u64) -> Result<u64> {
        FileWriter::write_blob_from(self, src, uncompressed_len)
    }
    fn scratch_dir(&self) -> Option<std::path::PathBuf> {
        self.local_dir().map(Path::to_path_buf)
    }
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        FileWriter::write_anchor(self, name, anchor)
    }
    fn max_key_size(&self) -> u64 {
        FileWriter::max_key_size(self)
    }
    fn write_hidden_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<u64> {
        FileWriter::write_hidden_anchor(self, name, anchor)
    }
    fn commit(&mut self, record: &[u8]) -> Result<()> {
        FileWriter::commit(self, record)
    }
}

/// Writes `batches` as the RNTuple `name` into a new ROOT file at `path`
/// (replacing an existing file). The schema is the first batch's; there must
/// be at least one batch (it may have no rows).
pub fn write_batches(
    path: impl AsRef<Path>,
    name: &str,
    batches: impl IntoIterator<Item = RecordBatch>,
    overrides: &HashMap<String, FieldOverride>,
    options: WriteOptions,
) -> Result<()> {
    let mut batches = batches.into_iter().peekable();
    let schema = match batches.peek() {
        Some(b) => b.schema(),
        None => return Err(Error::invalid(format!("no record batches for RNTuple '{name}': its schema is unknown"))),
    };
    // Refuse bad options and schemas before creating (and replacing) the file.
    options.validate()?;
    plan::Plan::new(&schema, overrides, &options)?;
    let mut file = FileWriter::create(path, WriterOptions { compression: options.compression, ..Default::default() })?;
    let mut writer = RNTupleWriter::new(&mut file, name, &schema, overrides, options)?;
    for b in batches {
        writer.write_batch(&b)?;
    }
    writer.close()?;
    file.finish()
}
