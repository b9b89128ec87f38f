//! The writer's memory budget ([`WriteOptions::memory_budget`]): how it is
//! shared out, and the count of the bytes the writer holds.
//!
//! Bytes held are the page buffers (at their capacity, in ROOT's in-memory
//! element sizes), the encoded pages waiting for compression (plus room for
//! their checksums), the compression threads' scratch buffers, the
//! compressed pages of the open cluster until they are spilled to the
//! scratch file (all of them with `group_pages_by_column`), and the buffer
//! that spills them. A budget
//! `B` gives
//!
//! * the page buffers at most `B / 4` (or `page_buffer_budget` if smaller):
//!   a buffer that cannot grow within it first seals the largest other
//!   buffers (ROOT's `RWritePageMemoryManager`);
//! * pages at most `B / 64` (or `max_unzipped_page_size` if smaller);
//! * the compression queue at most `B / 32`;
//! * the rest to compressed pages: the writer appends entries only as far as
//!   they are certain to fit ([`Shares::reserve`] covers the transients of
//!   sealing and compressing), and commits the cluster early when the next
//!   entry would not.
//!
//! Not counted: the codecs' working memory (a few MiB per compression
//! thread), the schema, and the caller's input batches.

use super::options::WriteOptions;

/// How much of the budget each part of the writer may use, in bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shares {
    /// The memory budget; 0: none.
    pub total: u64,
    /// Limit of the sum of the page buffers: where pages end.
    pub page_buffers: u64,
    /// Limit of the page buffers held in memory; the rest is parked in a
    /// scratch file (`pages/park.rs`).
    pub page_buffer_memory: u64,
    /// Encoded pages are compressed once this many bytes are queued.
    pub queue_limit: u64,
    /// Largest page.
    pub max_page: u64,
}

impl Shares {
    pub fn new(options: &WriteOptions, threads: usize) -> Self {
        // Enough pages to keep every thread busy, few enough to stay a small
        // part of the memory the page buffers take.
        let queue_limit = (options.max_unzipped_page_size.saturating_mul(2 * threads as u64)).max(1 << 20);
        let b = options.memory_budget;
        if b == 0 {
            let page_buffers = options.effective_page_buffer_budget();
            return Shares {
                total: 0,
                page_buffers,
                page_buffer_memory: options.effective_page_buffer_memory().min(page_buffers),
                queue_limit,
                max_page: options.max_unzipped_page_size,
            };
        }
        let page_buffers = options.effective_page_buffer_budget().min(b / 4);
        Shares {
            total: b,
            page_buffers,
            // Within a memory budget the page buffers' share is theirs: they
            // are not parked, so pages end where the share makes them.
            page_buffer_memory: page_buffers,
            queue_limit: queue_limit.min(b / 32),
            max_page: options.max_unzipped_page_size.min(b / 64).max(1),
        }
    }

    /// The smallest budget for `columns` columns: 4 × (initial page + 8
    /// bytes) per column, and 64 bytes. Below it the initial pages alone
    /// would fill the page buffers' share.
    pub fn minimum(options: &WriteOptions, columns: usize) -> u64 {
        (columns as u64).saturating_mul(options.initial_unzipped_page_size.saturating_add(8)).saturating_add(16) * 4
    }
}

/// What a writer's buffers hold (see the module documentation of
/// [`crate::write`] and `docs/writing.md`, "Memory").
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUse {
    /// Bytes held now.
    pub held: u64,
    /// The most bytes held at once since the writer was created.
    pub high_water: u64,
}
