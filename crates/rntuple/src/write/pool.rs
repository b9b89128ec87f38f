//! The compression pool: threads that compress and checksum batches of
//! encoded pages while the filling thread goes on appending entries.
//!
//! Batches carry a sequence number; their results come back in any order
//! and the caller applies them in sequence order, so the bytes written do
//! not depend on the number of threads or on their timing. The pool holds
//! no limit of its own: the caller bounds the bytes in flight (`pages`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rntuple_format::checksum::xxh3_64;
use rntuple_format::compression::compress;
use rntuple_format::{Error, Result};

use super::pages::SealedPage;

/// An encoded, not yet compressed page of column `col`.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub col: usize,
    pub num_elements: u32,
    pub page: Vec<u8>,
}

/// A batch of pages to seal.
struct Job {
    seq: u64,
    pages: Vec<Encoded>,
}

/// A sealed batch: the pages in the order they were queued, each with its column.
#[derive(Debug)]
pub(crate) struct Done {
    pub seq: u64,
    pub pages: Vec<(usize, Result<SealedPage>)>,
}

/// Compresses (ROOT `compression` setting) and checksums one page.
pub(crate) fn seal_page(e: Encoded, compression: u32, checksums: bool) -> Result<SealedPage> {
    let packed_size = e.page.len() as u64;
    // Uncompressed (level 0): the encoded page is the stored page; no copy.
    let mut bytes = if compression % 100 == 0 { e.page } else { compress(&e.page, compression)? };
    let data_size = bytes.len() as u64;
    let checksum = checksums.then(|| xxh3_64(&bytes));
    if let Some(sum) = checksum {
        bytes.reserve_exact(8);
        bytes.extend_from_slice(&sum.to_le_bytes());
    }
    // Held until the cluster is written: no spare capacity.
    bytes.shrink_to_fit();
    Ok(SealedPage { num_elements: e.num_elements, bytes, data_size, packed_size, checksum })
}

/// Seals a batch; a panic becomes an error of every page.
fn seal_batch(pages: Vec<Encoded>, compression: u32, checksums: bool) -> Vec<(usize, Result<SealedPage>)> {
    let cols: Vec<usize> = pages.iter().map(|e| e.col).collect();
    let sealed = catch_unwind(AssertUnwindSafe(|| {
        pages.into_iter().map(|e| (e.col, seal_page(e, compression, checksums))).collect::<Vec<_>>()
    }));
    sealed.unwrap_or_else(|_| {
        cols.into_iter()
            .map(|c| (c, Err(Error::InvalidArgument { message: "a compression thread panicked".into() })))
            .collect()
    })
}

/// Worker threads fed through one job queue.
pub(crate) struct Pool {
    jobs: Option<Sender<Job>>,
    results: Receiver<Done>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("threads", &self.workers.len()).finish()
    }
}

impl Pool {
    /// Starts `threads` (at least 1) workers.
    pub fn new(threads: usize, compression: u32, checksums: bool) -> Result<Self> {
        let (jobs, job_rx) = channel::<Job>();
        let (done_tx, results) = channel::<Done>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let mut workers = Vec::with_capacity(threads.max(1));
        for i in 0..threads.max(1) {
            let (job_rx, done_tx) = (Arc::clone(&job_rx), done_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("rntuple-compress-{i}"))
                .spawn(move || loop {
                    // The lock is held only while taking a job, never while
                    // sealing, so it cannot be poisoned by a panic there.
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(Job { seq, pages }) = job else { return };
                    if done_tx.send(Done { seq, pages: seal_batch(pages, compression, checksums) }).is_err() {
                        return;
                    }
                })
                .map_err(|e| Error::io("starting a compression thread", e))?;
            workers.push(handle);
        }
        Ok(Pool { jobs: Some(jobs), results, workers })
    }

    /// Hands `pages` (batch number `seq`) to a worker.
    pub fn submit(&self, seq: u64, pages: Vec<Encoded>) -> Result<()> {
        let gone = || Error::InvalidArgument { message: "the compression threads have stopped".into() };
        self.jobs.as_ref().ok_or_else(gone)?.send(Job { seq, pages }).map_err(|_| gone())
    }

    /// A sealed batch if one is ready (in completion order).
    pub fn try_next(&self) -> Option<Done> {
        self.results.try_recv().ok()
    }

    /// Waits for the next sealed batch (in completion order).
    pub fn next(&self) -> Result<Done> {
        self.results
            .recv()
            .map_err(|_| Error::InvalidArgument { message: "the compression threads have stopped".into() })
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the job queue ends the workers once they finish their job.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
