//! The read engine: entry ranges and field selections to Arrow record
//! batches (DESIGN.md "I/O is planned", "Parallel by default").
//!
//! A read goes through four steps:
//!
//! 1. **element ranges** ([`element_ranges`]): the element range of every
//!    selected field and column in every cluster the entry range touches,
//!    from the page lists (for clusters cut by the range, after reading the
//!    offsets of the cut collections);
//! 2. **fetch** ([`io`]): the pages those ranges need, merged into large
//!    requests, batch by batch, the next batch fetched while the current one
//!    is decoded;
//! 3. **decode** ([`decode`]): each page verified, decompressed and decoded
//!    straight into its window of one preallocated buffer per column that
//!    spans all clusters, pages in parallel on the read's threads
//!    ([`threads`]);
//! 4. **assemble** ([`assemble`]): the buffers become Arrow arrays without
//!    copying, fields in parallel.
//!
//! The arrays are the same for any number of threads.

mod assemble;
mod decode;
mod element_ranges;
mod io;
pub(crate) mod load;
pub(crate) mod report;
mod select;
mod source;
mod threads;
pub(crate) mod unseal;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::Schema as ArrowSchema;
use rntuple_format::{Error, Result};

use crate::ReadOptions;

pub(crate) use io::IoCounters;
pub use io::{IoStats, BATCH_BYTES, MAX_GAP, MAX_REQUEST};
pub use load::{load_envelopes, load_from_anchor, read_envelope, Checks, Envelopes, Found};
pub use report::{io_report_enabled, set_io_report, IoReport, IO_REPORT_ENV};
pub(crate) use select::{resolve as resolve_selection, Selected};
pub(crate) use source::column_multipliers;
pub use source::{field_multipliers, PageSource};
pub use unseal::{check_page_checksum, stored_size, unseal_page};

/// A streamer field (at any depth) that a read left as bytes: its objects
/// could not be decoded with the file's streamer infos (a class missing
/// from them, a member type not handled, bytes that disagree with them).
/// Python turns each into a `UserWarning`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndecodedStreamer {
    /// Dotted path of the field from its top-level field (`"outer.ins._0"`).
    pub path: String,
    /// The field's C++ type (the streamed class).
    pub type_name: String,
    /// Why, naming the class and member or entry and byte where it failed.
    pub reason: String,
}

/// Reads the selected fields (or parts of fields, see [`resolve_selection`]) for
/// entries `[start, stop)` with `options.threads` decoding threads (0: one per
/// core, 1: on the calling thread), in the Arrow types of `options.shape`;
/// with the streamer fields left as bytes (see [`UndecodedStreamer`]).
pub(crate) fn read_range(
    src: &PageSource,
    fields: &[Selected<'_>],
    start: u64,
    stop: u64,
    options: &ReadOptions,
) -> Result<(RecordBatch, Vec<UndecodedStreamer>)> {
    let verify = options.verify_checksums;
    // The budget and the page cap of this read (options may differ from the
    // open's), with its own count of the values it holds: the budget is the
    // whole read's, index columns (read first) and the others together.
    let budgeted;
    let src = if options.max_memory.is_some() || options.max_page_size != src.max_page_size {
        budgeted = PageSource {
            max_memory: options.max_memory,
            max_page_size: options.max_page_size,
            spent: Arc::default(),
            ..src.clone()
        };
        &budgeted
    } else {
        src
    };
    let pool = threads::Pool::new(options.threads)?;
    let mut plan = element_ranges::Plan::new(src, fields, start, stop, options.shape);
    plan.streamer_bytes = options.streamer_bytes;
    plan.resolve(&pool, verify)?;
    let sinks = {
        let mut jobs = plan.jobs();
        decode::decode_jobs(src, &mut jobs, &pool, verify)?;
        assemble::Sinks::new(jobs.into_iter().map(|j| j.sink))
    };
    let columns: Vec<ArrayRef> = pool
        .map_init(plan.roots.clone(), || (), |_, n| assemble::build(&plan, &sinks, n))
        .into_iter()
        .collect::<Result<_>>()?;
    let actual_fields: Vec<_> = fields
        .iter()
        .zip(&columns)
        .map(|(s, col)| Arc::new(s.field.arrow_field().with_data_type(col.data_type().clone())))
        .collect();
    let schema = Arc::new(ArrowSchema::new(actual_fields));
    let n = stop.saturating_sub(start) as usize;
    let batch = RecordBatch::try_new_with_options(schema, columns, &RecordBatchOptions::new().with_row_count(Some(n)))
        .map_err(|e| Error::invalid(format!("cannot assemble record batch: {e}")))?;
    Ok((batch, sinks.undecoded()))
}
