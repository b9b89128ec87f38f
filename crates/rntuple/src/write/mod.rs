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
//! Two layers, as ROOT has them (page sink / fill context) and parquet
//! (file writer / column writers):
//!
//! * the **page sink** (`sink`, [`PageSink`]) owns where the bytes go:
//!   header and footer envelopes, page blobs, page lists and cluster groups,
//!   the anchor, attribute-set links and the journal record of every
//!   committed cluster, into a [`BlobSink`] destination ([`FileWriter`],
//!   [`SharedFileWriter`]); `merge` and `recover` end their files through it
//!   too;
//! * the **fill contexts** (`context`) own turning entries into pages: the
//!   field model they fill by, page buffers that grow, seal and stay within
//!   a budget, the open cluster and ROOT's cluster-size estimate. A full
//!   cluster is handed to the sink.
//!
//! [`RNTupleWriter`] is one fill context over one page sink;
//! [`ParallelWriter`] is several fill contexts ([`FillContext`]) over the
//! sink of one such writer, shared under a lock.
//!
//! The modules (each documents the ROOT behaviour it follows):
//!
//! * `model`: Arrow schema + [`FieldOverride`]s → field tree, C++ type
//!   names, columns and their rules (the header envelope); it grows by late
//!   schema extension ([`RNTupleWriter::add_fields`], deferred columns).
//!   `infer` (types from Arrow) and `overrides` (types and encodings users
//!   give) build it; C++ names, the fundamental-type table and
//!   [`Projection`]s live in the schema layer ([`crate::schema`]);
//! * `access`: the parts of Arrow arrays a field reads; `shred`: Arrow
//!   arrays → column elements, entry ranges at a time (ordered containers
//!   sorted, bitsets unpacked); `measure`: what entries cost and the checks
//!   of their values;
//! * `pages`: page buffers that grow, seal and stay within a budget;
//!   `sealing`: the threads that encode and compress filled pages;
//!   `budget`: the memory budget ([`WriteOptions::memory_budget`]) shared
//!   out, and the count of the bytes held ([`RNTupleWriter::memory_use`]);
//! * `context`: the fill-context layer (`context/extend.rs`: late schema
//!   extension of a parallel writer's contexts);
//! * `sink`: the page-sink layer; `layout`: a cluster's pages grouped by
//!   column into `RBlob` keys, with same-page merging, from memory
//!   (`WriteOptions::group_pages_by_column`, fill contexts of a parallel
//!   writer) or, by default, from the scratch file the pages were spilled to
//!   as they were sealed (`stream`); `journal`: the journal records;
//! * `writer` ([`RNTupleWriter`]), `parallel` ([`ParallelWriter`]), `shared`
//!   ([`SharedFileWriter`]: a file shared by writers that own their handle).

mod access;
mod budget;
pub(crate) mod context;
mod infer;
pub mod journal;
mod layout;
mod measure;
mod model;
mod names;
mod options;
mod overrides;
mod pages;
mod parallel;
mod scratch;
mod sealing;
mod shared;
mod shred;
pub mod sink;
mod stream;
mod streamer_field;
mod writer;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;

use arrow_array::RecordBatch;
use rntuple_container::write::{FileWriter, WriterOptions};
use rntuple_format::{Error, Result};

pub use budget::MemoryUse;
pub use options::{Compression, FieldOverride, Projection, RealEncoding, WriteOptions};
pub use parallel::{FillContext, ParallelWriter};
pub use shared::SharedFileWriter;
pub use sink::{new_anchor, BlobSink, FooterParts, PageSink, SinkOptions, WrittenHeader};
pub use streamer_field::list_streamer_classes;
pub use writer::RNTupleWriter;

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
    model::Plan::new(&schema, overrides, &options)?;
    let mut file = FileWriter::create(path, WriterOptions { compression: options.compression, ..Default::default() })?;
    let mut writer = RNTupleWriter::new(&mut file, name, &schema, overrides, options)?;
    for b in batches {
        writer.write_batch(&b)?;
    }
    writer.close()?;
    file.finish()
}
