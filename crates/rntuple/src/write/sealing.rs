//! The compression pool: threads that encode, compress and checksum
//! batches of filled pages while the filling thread goes on appending
//! entries, and the filling thread's own share of that work.
//!
//! Batches wait in one queue, oldest first. The threads of the pool take
//! them as they become free; the filling thread takes the oldest waiting
//! batch itself when it must not fill on (the queue's share of the memory
//! budget is used up, or the cluster ends) instead of waiting for a thread
//! — so that all threads stay busy until the last batch, and none waits
//! while work is queued. Batches carry a sequence number; their results come
//! back in any order and the caller applies them in sequence order, so the
//! bytes written do not depend on the number of threads or on their
//! timing. The pool holds no limit of its own: the caller bounds the bytes
//! queued (`pages`).
//!
//! Each thread (the filling thread included) keeps two scratch buffers, for
//! the encoded page and for its compressed form, reused for every page: a
//! fresh buffer per page costs page faults comparable to the codec's work.
//! They grow to the largest page; each batch's result says how many bytes
//! they hold, which the memory budget counts.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use rntuple_format::checksum::xxh3_64;
use rntuple_format::column::{encode_page_into, ColumnSpec, ColumnValues};
use rntuple_format::compression::compress_into;
use rntuple_format::{Error, Result};

/// A page ready to be written.
#[derive(Debug, Clone)]
pub(crate) struct SealedPage {
    pub num_elements: u32,
    /// The compressed page, followed by its xxh3-64 (little-endian) when
    /// page checksums are on (spec "Page Locations").
    pub bytes: Vec<u8>,
    /// Size of the compressed page alone: what the locator records.
    pub data_size: u64,
    /// Size of the uncompressed page.
    pub packed_size: u64,
    pub checksum: Option<u64>,
}

/// A filled, not yet encoded page of column `col`: the column's page
/// buffer itself, handed over without a copy.
#[derive(Debug)]
pub(crate) struct Filled {
    pub col: usize,
    pub spec: ColumnSpec,
    pub values: ColumnValues,
}

impl Filled {
    /// Bytes the page buffer holds (its capacity).
    pub fn held_bytes(&self) -> u64 {
        fn b<T>(v: &Vec<T>) -> u64 {
            (v.capacity() * std::mem::size_of::<T>()) as u64
        }
        use ColumnValues as V;
        match &self.values {
            V::Bool(v) => b(v),
            V::I8(v) => b(v),
            V::U8(v) => b(v),
            V::I16(v) => b(v),
            V::U16(v) => b(v),
            V::I32(v) => b(v),
            V::U32(v) => b(v),
            V::I64(v) => b(v),
            V::U64(v) => b(v),
            V::F32(v) => b(v),
            V::F64(v) => b(v),
            V::Index(v) => b(v),
            V::Switch { index, tag } => b(index) + b(tag),
        }
    }
}

/// A batch of pages to seal.
struct Job {
    seq: u64,
    pages: Vec<Filled>,
}

/// A sealed batch: the pages in the order they were queued, each with its column.
#[derive(Debug)]
pub(crate) struct Done {
    pub seq: u64,
    pub pages: Vec<(usize, Result<SealedPage>)>,
    /// Which sealer sealed it (0: the filling thread, `i + 1`: thread `i`),
    /// and the bytes its scratch buffers hold afterwards.
    pub sealer: usize,
    pub scratch: u64,
}

/// At most how many bytes one sealer's scratch buffers hold when no page
/// holds more than `max_page` bytes: the encoded page (reserved exactly)
/// and its compressed form (the codec's worst case, at most twice over
/// after a buffer grows).
pub(crate) fn scratch_bound(max_page: u64) -> u64 {
    max_page + 2 * (max_page + max_page / 64 + 4096)
}

/// What one thread seals with: the compression setting, whether pages get
/// checksums, and the thread's scratch buffers.
#[derive(Debug, Default)]
pub(crate) struct Sealer {
    id: usize,
    compression: u32,
    checksums: bool,
    encoded: Vec<u8>,
    compressed: Vec<u8>,
}

impl Sealer {
    pub fn new(id: usize, compression: u32, checksums: bool) -> Self {
        Sealer { id, compression, checksums, ..Default::default() }
    }

    /// Encodes, compresses (ROOT `compression` setting) and checksums one page.
    pub fn seal_page(&mut self, page: Filled) -> Result<SealedPage> {
        let num_elements = page.values.len();
        let extra = if self.checksums { 8 } else { 0 };
        let mut bytes = if self.compression % 100 == 0 {
            // Uncompressed: the encoded page is the stored page.
            let size = page.spec.packed_size(num_elements as u64) as usize;
            let mut bytes = Vec::with_capacity(size + extra);
            encode_page_into(&page.spec, &page.values, 0..num_elements, &mut bytes)?;
            bytes
        } else {
            self.encoded.clear();
            // Exactly: the scratch buffer is counted in the memory budget.
            self.encoded.reserve_exact(page.spec.packed_size(num_elements as u64) as usize);
            encode_page_into(&page.spec, &page.values, 0..num_elements, &mut self.encoded)?;
            drop(page.values);
            let stored = if compress_into(&self.encoded, self.compression, &mut self.compressed)? {
                &self.compressed
            } else {
                &self.encoded
            };
            // Held until the cluster is written: no spare capacity but the checksum's.
            let mut bytes = Vec::with_capacity(stored.len() + extra);
            bytes.extend_from_slice(stored);
            bytes
        };
        let packed_size = page.spec.packed_size(num_elements as u64);
        let data_size = bytes.len() as u64;
        let checksum = self.checksums.then(|| xxh3_64(&bytes));
        if let Some(sum) = checksum {
            bytes.extend_from_slice(&sum.to_le_bytes());
        }
        let num_elements = u32::try_from(num_elements)
            .map_err(|_| Error::internal(format!("page of {num_elements} elements in column {}", page.col)))?;
        Ok(SealedPage { num_elements, bytes, data_size, packed_size, checksum })
    }

    /// Seals a batch; a panic becomes an error of every page.
    fn seal_batch(&mut self, seq: u64, pages: Vec<Filled>) -> Done {
        let cols: Vec<usize> = pages.iter().map(|e| e.col).collect();
        let sealed = catch_unwind(AssertUnwindSafe(|| {
            pages.into_iter().map(|e| (e.col, self.seal_page(e))).collect::<Vec<_>>()
        }));
        let pages = sealed.unwrap_or_else(|_| {
            cols.into_iter().map(|c| (c, Err(Error::state("a compression thread panicked")))).collect()
        });
        let scratch = (self.encoded.capacity() + self.compressed.capacity()) as u64;
        Done { seq, pages, sealer: self.id, scratch }
    }
}

/// The waiting batches, oldest first.
#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn stopped() -> Error {
        Error::invalid("the compression threads have stopped")
    }

    /// The oldest waiting batch, if any (without waiting).
    fn take(&self) -> Result<Option<Job>> {
        let mut q = self.queue.lock().map_err(|_| Self::stopped())?;
        Ok(q.jobs.pop_front())
    }

    /// Waits for a batch; `None` once the queue is closed.
    fn wait(&self) -> Option<Job> {
        let mut q = self.queue.lock().ok()?;
        loop {
            if let Some(job) = q.jobs.pop_front() {
                return Some(job);
            }
            if q.closed {
                return None;
            }
            q = self.ready.wait(q).ok()?;
        }
    }
}

/// Worker threads fed through one queue, and the filling thread's sealer.
pub(crate) struct Pool {
    shared: Arc<Shared>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
    /// The filling thread's share: batches it seals itself.
    here: Sealer,
    /// How many batches the filling thread sealed.
    #[cfg(test)]
    pub sealed_here: u64,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("threads", &self.workers.len()).finish()
    }
}

impl Pool {
    /// Starts `threads` workers (none: the filling thread seals every batch).
    pub fn new(threads: usize, compression: u32, checksums: bool) -> Result<Self> {
        let shared = Arc::new(Shared { queue: Mutex::new(Queue::default()), ready: Condvar::new() });
        let (done_tx, results) = channel::<Done>();
        let mut workers = Vec::with_capacity(threads);
        for i in 0..threads {
            let (shared, done_tx): (_, Sender<Done>) = (Arc::clone(&shared), done_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("rntuple-compress-{i}"))
                .spawn(move || {
                    let mut sealer = Sealer::new(i + 1, compression, checksums);
                    // The lock is held only while taking a batch, never
                    // while sealing, so it cannot be poisoned by a panic there.
                    while let Some(Job { seq, pages }) = shared.wait() {
                        if done_tx.send(sealer.seal_batch(seq, pages)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| Error::io("starting a compression thread", e))?;
            workers.push(handle);
        }
        Ok(Pool {
            shared,
            results,
            workers,
            here: Sealer::new(0, compression, checksums),
            #[cfg(test)]
            sealed_here: 0,
        })
    }

    /// Queues `pages` (batch number `seq`); without workers, seals them here
    /// and returns the result.
    pub fn submit(&mut self, seq: u64, pages: Vec<Filled>) -> Result<Option<Done>> {
        if self.workers.is_empty() {
            return Ok(Some(self.seal_here(seq, pages)));
        }
        self.shared.queue.lock().map_err(|_| Shared::stopped())?.jobs.push_back(Job { seq, pages });
        self.shared.ready.notify_one();
        Ok(None)
    }

    /// Seals the oldest waiting batch on this thread, if one waits.
    pub fn help(&mut self) -> Result<Option<Done>> {
        Ok(self.shared.take()?.map(|Job { seq, pages }| self.seal_here(seq, pages)))
    }

    fn seal_here(&mut self, seq: u64, pages: Vec<Filled>) -> Done {
        #[cfg(test)]
        {
            self.sealed_here += 1;
        }
        self.here.seal_batch(seq, pages)
    }

    /// A sealed batch if one is ready (in completion order).
    pub fn try_next(&self) -> Option<Done> {
        self.results.try_recv().ok()
    }

    /// Waits for the next sealed batch (in completion order).
    pub fn next(&self) -> Result<Done> {
        self.results.recv().map_err(|_| Shared::stopped())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the queue ends the workers once they finish their batch.
        if let Ok(mut q) = self.shared.queue.lock() {
            q.closed = true;
            q.jobs.clear();
        }
        self.shared.ready.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
