//! Page buffers of the columns: filling, growing within a memory budget,
//! and sealing (encoding, compressing, checksumming) pages.
//!
//! Sizes follow ROOT 6.40 (`RColumn::HandleWritePageIfFull`,
//! `RWritePageMemoryManager` in `RPageStorage.cxx`): a page buffer starts at
//! `initial_unzipped_page_size` and doubles up to `max_unzipped_page_size`,
//! counted in ROOT's in-memory element sizes (8 bytes per offset, 16 per
//! switch element). A full page at the maximum size is sealed; a page that
//! cannot grow because the buffers of all columns would exceed the page
//! buffer budget first seals the largest other pages (largest first, ties by
//! higher column id), and seals itself when that does not free enough.
//! After sealing, a buffer restarts at the initial size.
//!
//! Full page buffers are queued as they are and sealed (encoded,
//! compressed, checksummed) in batches: with `compression_threads` N > 1,
//! N - 1 threads (`pool`) take batches while this thread goes on filling,
//! and this thread seals the oldest waiting batch itself when the next page
//! would exceed the queue's share of the budget (it waits for the threads
//! only when no batch waits); with N = 1 it seals every batch itself.
//! Results are applied in batch order, so the bytes written do not depend on
//! the number of threads.
//!
//! Compressed pages are streamed (`ready`): handed to the writer in blobs
//! as they are applied, to be spilled to a scratch file until their cluster
//! is committed; or, for fill contexts and with `group_pages_by_column`,
//! held per column until the cluster ends.
//!
//! Every byte the buffers hold is counted (see `budget`): the buffers at
//! their capacity, queued pages with room for their checksum, compressed
//! pages until they are handed out to be written or spilled, and the buffer
//! that spills them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use rntuple_format::column::{ColumnSpec, ColumnValues};
use rntuple_format::{Error, Result};

use super::budget::{MemoryUse, Shares};
use super::model::ColumnPlan;
use super::options::WriteOptions;
pub(crate) use super::sealing::SealedPage;
use super::sealing::{scratch_bound, Done, Filled, Pool};

mod element;
mod park;
mod ready;
pub(crate) use element::Element;
use park::{Chunk, Parking};
pub(crate) use ready::Blob;

/// The open page and the sealed pages of the current cluster of one column.
#[derive(Debug)]
pub(crate) struct ColumnBuf {
    pub spec: ColumnSpec,
    values: ColumnValues,
    empty: ColumnValues,
    mem_size: u64,
    initial: usize,
    max: usize,
    /// Current page capacity in elements (where the page ends).
    cap: usize,
    /// Elements `values` has room for in memory (at most `cap`).
    res_cap: usize,
    /// Elements of the open page parked in the scratch file, in order,
    /// before those in `values`.
    parked: Vec<Chunk>,
    n_parked: usize,
    pub sealed: Vec<SealedPage>,
    /// Elements appended in the current cluster.
    pub n_cluster: u64,
}

impl ColumnBuf {
    fn cap_bytes(&self) -> u64 {
        self.cap as u64 * self.mem_size
    }
    fn initial_bytes(&self) -> u64 {
        self.initial as u64 * self.mem_size
    }
    fn res_bytes(&self) -> u64 {
        self.res_cap as u64 * self.mem_size
    }
    /// Elements of the open page, parked or in memory.
    fn len(&self) -> usize {
        self.n_parked + self.values.len()
    }
}

/// What a finished cluster holds of one column.
#[derive(Debug)]
pub(crate) struct ClusterColumn {
    pub pages: Vec<SealedPage>,
}

/// All page buffers of one writer.
#[derive(Debug)]
pub(crate) struct Columns {
    pub cols: Vec<ColumnBuf>,
    compression: u32,
    checksums: bool,
    shares: Shares,
    /// Bytes of the page buffers (page capacities): what the page buffer
    /// budget limits, and so where pages end.
    allocated: u64,
    /// Columns by current page size, largest first, ties by higher id.
    order: BTreeSet<(Reverse<u64>, Reverse<usize>)>,
    /// Bytes of the page buffers in memory (at most `allocated`).
    resident: u64,
    /// Limit of `resident`: beyond it, the largest buffers are parked.
    resident_limit: u64,
    /// Columns by bytes in memory, largest first, ties by higher id.
    res_order: BTreeSet<(Reverse<u64>, Reverse<usize>)>,
    parking: Parking,
    /// Filled pages not yet handed to the pool, in sealing order.
    queue: Vec<Filled>,
    /// Bytes of `queue` (capacities) and their checksums.
    pending_bytes: u64,
    /// Bytes of the batches being compressed (inputs and checksums), by batch number.
    in_flight: BTreeMap<u64, u64>,
    /// Bytes of the queued and in-flight pages (capacities) and their checksums.
    queued_bytes: u64,
    /// Sealed batches received ahead of an earlier one, by batch number.
    arrived: BTreeMap<u64, Done>,
    /// Number of the next batch to hand out, and of the next to apply.
    next_batch: u64,
    next_apply: u64,
    /// The compression threads besides this one, started with the first
    /// batch (none with one thread or when pages are not compressed).
    pool: Option<Pool>,
    /// Bytes of the compressed pages of the open cluster not yet handed out.
    sealed_bytes: u64,
    /// Streaming: compressed pages go to the file in blobs as they come
    /// (`ready`); else they are held per column until the cluster ends.
    ready: Option<ready::Ready>,
    /// Bytes of the buffer that moves streamed pages to their scratch file
    /// and into the output (`ready`, `writer/stream.rs`); 0 when not streaming.
    spill_buffer: u64,
    /// Bytes of each sealer's scratch buffers (see `pool`), by sealer.
    scratch: BTreeMap<usize, u64>,
    high_water: u64,
    /// Largest page and largest initial page of any column, in bytes.
    max_page_bytes: u64,
    max_initial_bytes: u64,
    min_initial_bytes: u64,
    threads: usize,
}

impl Columns {
    pub fn new(plans: &[ColumnPlan], options: &WriteOptions) -> Result<Self> {
        let threads = match options.compression_threads {
            _ if !options.compressed() => 1,
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let mut me = Columns {
            cols: Vec::with_capacity(plans.len()),
            compression: options.compression,
            checksums: options.page_checksums,
            shares: Shares::new(options, threads),
            allocated: 0,
            order: BTreeSet::new(),
            resident: 0,
            resident_limit: 0,
            res_order: BTreeSet::new(),
            parking: Parking::default(),
            queue: Vec::new(),
            pending_bytes: 0,
            in_flight: BTreeMap::new(),
            queued_bytes: 0,
            arrived: BTreeMap::new(),
            next_batch: 0,
            next_apply: 0,
            pool: None,
            sealed_bytes: 0,
            ready: None,
            spill_buffer: 0,
            scratch: BTreeMap::new(),
            high_water: 0,
            max_page_bytes: 0,
            max_initial_bytes: 0,
            min_initial_bytes: u64::MAX,
            threads,
        };
        me.resident_limit = me.shares.page_buffer_memory;
        me.add(plans, options)?;
        Ok(me)
    }

    /// Adds buffers for new columns (late schema extension); a deferred
    /// column's elements are counted from its first element index.
    pub fn add(&mut self, plans: &[ColumnPlan], options: &WriteOptions) -> Result<()> {
        let n = self.cols.len() + plans.len();
        let minimum = Shares::minimum(options, n);
        if self.shares.total != 0 && self.shares.total < minimum {
            return Err(Error::invalid(format!(
                "memory_budget of {} bytes is too small for {n} columns: at least {minimum} bytes are needed \
                     (4 × (initial_unzipped_page_size + 8) bytes per column)",
                self.shares.total
            )));
        }
        for p in plans {
            let i = self.cols.len();
            let initial = options.initial_unzipped_page_size / p.mem_size;
            if initial < 1 {
                return Err(Error::invalid(format!(
                    "initial_unzipped_page_size ({}) is too small for one element of column {i} ({} bytes)",
                    options.initial_unzipped_page_size, p.mem_size
                )));
            }
            // At most 2^31 - 1 elements per page (the page list's 31-bit count).
            let max = (self.shares.max_page / p.mem_size).clamp(1, i32::MAX as u64) as usize;
            let initial = (initial as usize).min(max);
            let bytes = initial as u64 * p.mem_size;
            if !self.try_evict(bytes, 0)? {
                return Err(Error::invalid(format!(
                    "page buffer budget of {} bytes cannot hold the initial pages of {} columns",
                    self.shares.page_buffers,
                    i + 1
                )));
            }
            let mut values = p.empty.clone();
            values.reserve(initial);
            self.cols.push(ColumnBuf {
                spec: p.spec,
                values,
                empty: p.empty.clone(),
                mem_size: p.mem_size,
                initial,
                max,
                cap: initial,
                res_cap: initial,
                parked: Vec::new(),
                n_parked: 0,
                sealed: Vec::new(),
                n_cluster: 0,
            });
            self.allocated += bytes;
            self.resident += bytes;
            self.note(0);
            self.order.insert((Reverse(bytes), Reverse(i)));
            self.res_order.insert((Reverse(bytes), Reverse(i)));
            self.max_page_bytes = self.max_page_bytes.max(max as u64 * p.mem_size);
            self.max_initial_bytes = self.max_initial_bytes.max(bytes);
            self.min_initial_bytes = self.min_initial_bytes.min(bytes);
        }
        Ok(())
    }

    /// Records that `extra` bytes beyond those counted are held for a moment.
    fn note(&mut self, extra: u64) {
        self.high_water = self.high_water.max(self.held() + extra);
    }

    /// Where parked page buffer elements go: beside a local output file.
    pub fn set_scratch_dir(&mut self, dir: Option<std::path::PathBuf>) {
        self.parking.dir = dir;
    }

    /// Elements parked so far (see `park`).
    #[cfg(test)]
    pub fn parked_elements(&self) -> u64 {
        self.parking.parked_elements
    }

    fn held(&self) -> u64 {
        self.resident + self.queued_bytes + self.sealed_bytes + self.spill_buffer + self.scratch.values().sum::<u64>()
    }

    /// Bytes held now and at most.
    pub fn memory_use(&self) -> MemoryUse {
        MemoryUse { held: self.held(), high_water: self.high_water }
    }

    /// The bytes the buffers may need beyond those of compressed pages
    /// however entries are appended: the page buffers' share, the queue
    /// (a full queue and the page that overfills it, each with checksum,
    /// before and after compression), the sealers' scratch buffers (or,
    /// uncompressed, one page being encoded), and the initial pages reserved
    /// again when a cluster ends.
    fn reserve(&self) -> u64 {
        let queue = self.shares.queue_limit + self.max_page_bytes + 8;
        self.shares.page_buffers
            + 2 * queue
            + self.scratch_bound()
            + self.spill_buffer
            + self.cols.len() as u64 * (self.max_initial_bytes + 8)
    }

    /// With a memory budget: how many more bytes of compressed pages may be
    /// held, so that appending can go on within the budget; `None` without one.
    pub fn memory_room(&self) -> Option<u64> {
        (self.shares.total != 0).then(|| {
            self.shares.total.saturating_sub(self.reserve() + self.resident + self.queued_bytes + self.sealed_bytes)
        })
    }

    /// The room of [`Columns::memory_room`] when the cluster is empty.
    pub fn memory_room_of_empty_cluster(&self) -> u64 {
        self.shares.total.saturating_sub(self.reserve() + self.resident)
    }

    /// At most how many bytes of compressed pages (with checksums) entries
    /// with `mem` bytes of column elements end up as: a page's stored size
    /// is at most its packed size (which is at most its in-memory size) plus
    /// 8 bytes of checksum, and only the last pages of a cluster are smaller
    /// than the initial page size.
    pub fn sealed_bound(&self, mem: u64) -> u64 {
        mem + (mem / self.min_initial_bytes.max(1) + 1) * 8
    }

    /// The compressed pages handed out by [`Columns::finish_cluster`] have
    /// been written and dropped.
    pub fn cluster_written(&mut self) {
        self.sealed_bytes = 0;
    }

    /// Appends `s` to column `col`, sealing pages as they fill.
    pub fn push<T: Element>(&mut self, col: usize, s: &[T]) -> Result<()> {
        self.push_with(col, s.len(), |v, r| T::extend(v, &s[r]))
    }

    /// Appends switch elements (index into the alternative, 1-based tag).
    pub fn push_switch(&mut self, col: usize, index: &[u64], tag: &[u32]) -> Result<()> {
        self.push_with(col, index.len(), |v, r| match v {
            ColumnValues::Switch { index: i, tag: t } => {
                i.extend_from_slice(&index[r.clone()]);
                t.extend_from_slice(&tag[r]);
                true
            }
            _ => false,
        })
    }

    fn push_with(
        &mut self,
        col: usize,
        n: usize,
        mut extend: impl FnMut(&mut ColumnValues, std::ops::Range<usize>) -> bool,
    ) -> Result<()> {
        let mut done = 0;
        while done < n {
            if self.cols[col].len() >= self.cols[col].cap {
                self.handle_full(col)?;
            }
            if self.cols[col].values.len() >= self.cols[col].res_cap {
                self.make_room(col)?;
            }
            let c = &mut self.cols[col];
            let take = (c.cap - c.len()).min(c.res_cap - c.values.len()).min(n - done);
            if !extend(&mut c.values, done..done + take) {
                return Err(Error::internal(format!(
                    "values of the wrong kind for column {col} ({})",
                    c.values.kind()
                )));
            }
            c.n_cluster += take as u64;
            done += take;
        }
        Ok(())
    }

    /// The page of `col` is full: grow it if the maximum size and the budget
    /// allow, else seal it.
    fn handle_full(&mut self, col: usize) -> Result<()> {
        let c = &self.cols[col];
        let grown = c.cap.saturating_mul(2).min(c.max);
        if grown == c.cap {
            return self.flush(col);
        }
        if self.try_update(col, grown)? {
            self.cols[col].cap = grown;
            Ok(())
        } else {
            self.flush(col)
        }
    }

    /// Seals the open page of `col` and restarts it at the initial size.
    pub fn flush(&mut self, col: usize) -> Result<()> {
        self.seal(col)?;
        let initial = self.cols[col].initial;
        self.try_update(col, initial)?;
        self.cols[col].cap = initial;
        Ok(())
    }

    /// Records a new page capacity of `col`; growing may seal the largest
    /// other pages. Returns false when the budget cannot be met.
    fn try_update(&mut self, col: usize, new_elems: usize) -> Result<bool> {
        let cur = self.cols[col].cap_bytes();
        let new = new_elems as u64 * self.cols[col].mem_size;
        if new == cur {
            return Ok(true);
        }
        self.order.remove(&(Reverse(cur), Reverse(col)));
        if new < cur {
            self.allocated -= cur - new;
            self.order.insert((Reverse(new), Reverse(col)));
            return Ok(true);
        }
        let diff = new - cur;
        if !self.try_evict(diff, cur)? {
            self.order.insert((Reverse(cur), Reverse(col)));
            return Ok(false);
        }
        self.allocated += diff;
        self.note(0);
        self.order.insert((Reverse(new), Reverse(col)));
        Ok(true)
    }

    /// The buffer of `col` is full in memory but its page is not: doubles
    /// its room in memory, within what the page has left, after parking the
    /// largest buffers (maybe its own) if the page buffer memory would be
    /// exceeded.
    fn make_room(&mut self, col: usize) -> Result<()> {
        let c = &self.cols[col];
        let want = c.res_cap.saturating_mul(2).max(c.initial).min(c.cap - c.n_parked);
        let extra = (want - c.res_cap) as u64 * c.mem_size;
        while self.resident + extra > self.resident_limit {
            // Only buffers above their initial size free memory when parked.
            let Some(&(Reverse(size), Reverse(big))) = self.res_order.first() else { break };
            if size <= self.cols[big].initial_bytes() {
                break;
            }
            self.park(big)?;
            if big == col {
                // Room again for at least its initial elements.
                return Ok(());
            }
        }
        let c = &mut self.cols[col];
        let len = c.values.len();
        c.values.reserve(want - len);
        self.set_res_cap(col, want);
        self.note(0);
        Ok(())
    }

    /// Moves the elements of `col`'s buffer to the scratch file; the buffer
    /// starts again at the initial size.
    fn park(&mut self, col: usize) -> Result<()> {
        let c = &mut self.cols[col];
        if !c.values.is_empty() {
            let chunk = self.parking.park(&c.values)?;
            c.n_parked += c.values.len();
            c.parked.push(chunk);
        }
        let mut fresh = c.empty.clone();
        fresh.reserve(c.initial);
        c.values = fresh;
        let initial = c.initial;
        self.set_res_cap(col, initial);
        Ok(())
    }

    /// Records the room in memory of `col`'s buffer.
    fn set_res_cap(&mut self, col: usize, elements: usize) {
        let c = &mut self.cols[col];
        let old = c.res_bytes();
        c.res_cap = elements;
        let new = c.res_bytes();
        self.res_order.remove(&(Reverse(old), Reverse(col)));
        self.res_order.insert((Reverse(new), Reverse(col)));
        self.resident = self.resident - old + new;
    }

    /// Seals pages larger than `limit` bytes, largest first, until `target`
    /// bytes of the budget are free.
    fn try_evict(&mut self, target: u64, limit: u64) -> Result<bool> {
        if self.shares.page_buffers.saturating_sub(self.allocated) >= target {
            return Ok(true);
        }
        let candidates: Vec<(u64, usize)> =
            self.order.iter().map(|&(Reverse(s), Reverse(c))| (s, c)).take_while(|&(s, _)| s > limit).collect();
        for (size, c) in candidates {
            if size == self.cols[c].initial_bytes() {
                continue;
            }
            self.flush(c)?;
            if self.shares.page_buffers.saturating_sub(self.allocated) >= target {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Queues the open page of `col` for encoding and compression: its
    /// buffer is handed over as it is (no copy); the column gets a new one.
    fn seal(&mut self, col: usize) -> Result<()> {
        let c = &mut self.cols[col];
        if c.len() == 0 {
            return Ok(());
        }
        rntuple_container::write::crash_point(rntuple_container::write::CrashPoint::Compress);
        let mut fresh = c.empty.clone();
        fresh.reserve(c.initial);
        let mut values = std::mem::replace(&mut c.values, fresh);
        if !c.parked.is_empty() {
            // The parked elements first, then those in memory.
            values = self.parking.unpark(&c.parked, &values)?;
            c.parked.clear();
            c.n_parked = 0;
        }
        let initial = c.initial;
        let page = Filled { col, spec: c.spec, values };
        self.set_res_cap(col, initial);
        // The handed-over buffer is held until its page is sealed: count it
        // (and its checksum) before its column's buffer is counted smaller.
        let bytes = page.held_bytes() + self.checksum_len();
        self.queued_bytes += bytes;
        self.pending_bytes += bytes;
        self.note(0);
        self.queue.push(page);
        // Hand the batch out first: when every thread is busy this thread
        // seals the oldest batch rather than wait for one of them.
        if self.pending_bytes >= self.batch_target() || self.queued_bytes > self.shares.queue_limit {
            self.dispatch()?;
        }
        // While the queue's share is exceeded, seal the oldest waiting
        // batches here (or wait for the threads' when none waits).
        while self.queued_bytes > self.shares.queue_limit && !self.in_flight.is_empty() {
            self.receive_one()?;
        }
        Ok(())
    }

    /// Bytes of pages handed out at once: small enough that the threads
    /// (this one included) share the queue in many pieces and finish
    /// together at the end of a cluster, large enough that the small pages
    /// at the start of a cluster travel together.
    fn batch_target(&self) -> u64 {
        (self.shares.queue_limit / (4 * self.threads as u64)).clamp(1, 256 << 10)
    }

    /// Hands the queued pages to the pool as one batch (without compression
    /// threads, seals them here).
    fn dispatch(&mut self) -> Result<()> {
        if self.queue.is_empty() {
            return Ok(());
        }
        let pages = std::mem::take(&mut self.queue);
        let bytes = std::mem::take(&mut self.pending_bytes);
        let seq = self.next_batch;
        self.next_batch += 1;
        // The threads besides this one; with none (or no compression) this
        // thread seals every batch.
        let helpers = if self.compression % 100 == 0 { 0 } else { self.threads - 1 };
        let pool = match &mut self.pool {
            Some(pool) => pool,
            empty => empty.insert(Pool::new(helpers, self.compression, self.checksums)?),
        };
        self.in_flight.insert(seq, bytes);
        if let Some(done) = pool.submit(seq, pages)? {
            self.received(done)?;
        }
        self.poll()
    }

    /// Applies the batches the threads have finished, without waiting.
    fn poll(&mut self) -> Result<()> {
        while let Some(done) = self.pool.as_ref().and_then(|p| p.try_next()) {
            self.received(done)?;
        }
        Ok(())
    }

    /// Seals the oldest waiting batch here, or, when none waits, waits for
    /// one from the threads; applies what can be applied.
    fn receive_one(&mut self) -> Result<()> {
        let Some(pool) = self.pool.as_mut() else {
            return Err(Error::internal("no compression threads to wait for"));
        };
        let done = match pool.help()? {
            Some(done) => done,
            None => pool.next()?,
        };
        self.received(done)
    }

    /// Counts a sealed batch and applies the batches now in order: pages are
    /// appended to their columns in batch order, then queue order.
    fn received(&mut self, done: Done) -> Result<()> {
        let input = self.in_flight.remove(&done.seq).unwrap_or(0);
        self.scratch.insert(done.sealer, done.scratch);
        let out: u64 = done.pages.iter().map(|(_, p)| p.as_ref().map_or(0, |p| p.bytes.capacity() as u64)).sum();
        // Counted as if every input in flight was held until its output
        // exists, and the other batches' outputs were as large as their inputs.
        let others: u64 = self.in_flight.values().sum();
        self.note(out + others);
        self.queued_bytes -= input;
        self.sealed_bytes += out;
        self.arrived.insert(done.seq, done);
        while let Some(done) = self.arrived.remove(&self.next_apply) {
            self.next_apply += 1;
            for (col, page) in done.pages {
                match &mut self.ready {
                    Some(ready) => ready.push(col, page?),
                    None => self.cols[col].sealed.push(page?),
                }
            }
        }
        Ok(())
    }

    /// Hands out the queued pages and waits until every batch is applied.
    fn drain(&mut self) -> Result<()> {
        self.dispatch()?;
        while !self.in_flight.is_empty() {
            self.receive_one()?;
        }
        debug_assert!(self.arrived.is_empty() && self.queued_bytes == 0);
        Ok(())
    }

    /// At most how many bytes the sealers' scratch buffers hold (each
    /// thread has its own); uncompressed, one page being encoded.
    fn scratch_bound(&self) -> u64 {
        if self.compression % 100 == 0 {
            return self.max_page_bytes;
        }
        self.threads as u64 * scratch_bound(self.max_page_bytes)
    }

    fn checksum_len(&self) -> u64 {
        if self.checksums {
            8
        } else {
            0
        }
    }

    /// Seals every open page and hands out the cluster's pages per column.
    pub fn finish_cluster(&mut self) -> Result<Vec<ClusterColumn>> {
        for i in 0..self.cols.len() {
            self.flush(i)?;
        }
        self.drain()?;
        Ok(self
            .cols
            .iter_mut()
            .map(|c| {
                let out = ClusterColumn { pages: std::mem::take(&mut c.sealed) };
                c.n_cluster = 0;
                out
            })
            .collect())
    }

    /// Elements appended to `col` in the current cluster.
    pub fn n_cluster(&self, col: usize) -> u64 {
        self.cols[col].n_cluster
    }
}

#[cfg(test)]
mod tests;
