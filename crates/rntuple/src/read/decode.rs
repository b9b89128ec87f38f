//! Decoding pages into column buffers: every page a read needs is located,
//! fetched (in merged requests, one batch ahead of decoding) and decoded
//! straight into its own window of a preallocated output buffer, pages in
//! parallel.
//!
//! One page goes through: checksum (xxh3-64 of the stored bytes, spec "Page
//! Locations"), decompression into a per-thread scratch buffer (skipped for
//! pages stored uncompressed), and decoding from there into the output
//! window (for a page cut by the entry range, only its elements in the
//! range). Only columns read into another in-memory type than their own
//! take a detour through a temporary buffer.

use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

use rntuple_format::column::{
    can_decode_into, decode_page, decode_page_range_into, ColumnSlice, ColumnSpec, ColumnValues,
};
use rntuple_format::compression::{guard_expansion, Decompressor};
use rntuple_format::constants::MAX_ZERO_FILL_BYTES;
use rntuple_format::model::PageDescriptor;
use rntuple_format::{Error, Location, Result};

use super::io::{fetch, plan_requests, Batch, Extent, Fetched, Placement};
use super::load::Checks;
use super::source::{PageInRange, PageSource};
use super::threads::Pool;
use super::unseal::{stored_size, unseal_page};
use crate::descriptor::ClusterInfo;

/// Elements `[a, b)` (cluster-relative) of physical column `column` in
/// `cluster`, to be written at `offset` of their buffer. `r` orders the
/// reads (pieces of lower `r` are fetched first); `pre` holds the values
/// when they were decoded already.
#[derive(Debug)]
pub(crate) struct Piece<'c> {
    pub r: usize,
    pub cluster: &'c ClusterInfo,
    pub column: u32,
    pub a: u64,
    pub b: u64,
    pub offset: u64,
    pub pre: Option<&'c ColumnValues>,
}

/// One output buffer of `len` elements of the variant of `proto`, and the
/// pieces that fill it (the rest stays zero). After [`fill`], `sink` holds
/// the values.
#[derive(Debug)]
pub(crate) struct Job<'c> {
    pub proto: ColumnValues,
    pub len: u64,
    pub pieces: Vec<Piece<'c>>,
    pub sink: ColumnValues,
}

impl<'c> Job<'c> {
    pub(crate) fn new(proto: &ColumnValues, len: u64, pieces: Vec<Piece<'c>>) -> Self {
        let mut empty = proto.clone();
        empty.truncate(0);
        Job { sink: empty.clone(), proto: empty, len, pieces }
    }
}

/// Decoding of one page into its window.
struct PageTask<'s> {
    cluster_id: usize,
    column: u32,
    page: usize,
    spec: ColumnSpec,
    /// Elements in the page, and the first one the window wants.
    count: usize,
    from: usize,
    extent: Extent,
    sealed: PageDescriptor,
    unpacked: u64,
    /// Whether the page decodes straight into the window's type.
    direct: bool,
    dest: ColumnSlice<'s>,
    at: Placement,
    /// Read order: the reading cluster, then the file offset.
    order: (usize, u64),
}

/// Per-thread scratch space, kept between pages, batches and reads (a
/// fresh buffer per page would be zeroed and mapped in every time).
#[derive(Default)]
struct Scratch {
    page: Vec<u8>,
    decompressor: Decompressor,
    /// Decoded pages on their way to a window (one buffer per variant).
    values: Vec<ColumnValues>,
}

/// An empty buffer of the variant of `proto` from `kept`, reusing its capacity.
fn values_like(kept: &mut Vec<ColumnValues>, proto: ColumnValues) -> &mut ColumnValues {
    let i = match kept.iter().position(|v| v.kind() == proto.kind()) {
        Some(i) => i,
        None => {
            kept.push(proto);
            kept.len() - 1
        }
    };
    let v = &mut kept[i];
    v.truncate(0);
    v
}

/// Scratch buffers larger than this are released at the end of a read.
const MAX_KEPT_SCRATCH: usize = 16 << 20;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Runs `f` with this thread's scratch space.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        // Not reached (decoding does not nest); a private scratch keeps it correct anyway.
        Err(_) => f(&mut Scratch::default()),
    })
}

/// Reads of single column ranges: one job of one piece, on the calling thread.
impl PageSource {
    /// Elements `[a, b)` (cluster-relative) of physical column `col` in
    /// `cluster`, in the column's natural in-memory type
    /// ([`ColumnValues::for_column`]).
    pub fn read_column(&self, col: u32, cluster: &ClusterInfo, a: u64, b: u64) -> Result<ColumnValues> {
        self.read_column_into(col, cluster, a, b, None)
    }

    /// Like [`PageSource::read_column`], decoding into the variant of `out`
    /// (which must be empty) when given: floating-point columns read into
    /// `F64` give ROOT's values for `double` fields (e.g. Real32Quant is
    /// dequantised in double precision); other variants convert with `as`.
    pub fn read_column_into(
        &self,
        col: u32,
        cluster: &ClusterInfo,
        a: u64,
        b: u64,
        out: Option<ColumnValues>,
    ) -> Result<ColumnValues> {
        let cdesc = self.column(col)?;
        ColumnSpec::from_descriptor(cdesc)?;
        let proto = match out {
            Some(o) => o,
            None => ColumnValues::for_column(cdesc.column_type)?,
        };
        let n = b.saturating_sub(a);
        let mut jobs =
            vec![Job::new(&proto, n, vec![Piece { r: 0, cluster, column: col, a, b, offset: 0, pre: None }])];
        // A read of its own under the budget: a fresh count of the values held.
        let src = PageSource { spent: Arc::default(), ..self.clone() };
        decode_jobs(&src, &mut jobs, &Pool::Sequential, self.verify_checksums)?;
        Ok(jobs.pop().map(|j| j.sink).unwrap_or(proto))
    }
}

/// Checks every piece of every job, allocates the buffers, then fetches and
/// decodes every page the pieces need (see the module documentation).
pub(crate) fn decode_jobs(src: &PageSource, jobs: &mut [Job<'_>], pool: &Pool, verify: bool) -> Result<()> {
    // 1. Check the pieces before allocating anything.
    let mut needs = Needs::default();
    for job in jobs.iter() {
        for p in &job.pieces {
            check_piece(src, &job.proto, p, &mut needs)?;
        }
        needs.values = needs.values.saturating_add(job.len.saturating_mul(job.proto.element_size() as u64));
    }
    check_budget(src, &needs)?;
    let lens = jobs
        .iter()
        .map(|job| {
            usize::try_from(job.len).map_err(|_| Error::WouldOverAllocate {
                requested: job.len,
                limit: usize::MAX as u64,
                location: Location::new("column buffer", None),
            })
        })
        .collect::<Result<Vec<usize>>>()?;
    // Zeroed on the decoding threads: the allocator clears reused memory
    // (and the first touch maps fresh pages), work that is serial otherwise.
    // Fallibly: the sizes come from the file, which may honestly describe more
    // than the machine has (a failure is Error::OutOfMemory, not an abort).
    let protos = jobs.iter().zip(lens).map(|(job, len)| (job.proto.clone(), len, job_what(src, job))).collect();
    let sinks = pool.map_init(
        protos,
        || (),
        |_, (proto, len, what): (ColumnValues, usize, String)| proto.try_zeros_like(len, || what.clone()),
    );
    for (job, sink) in jobs.iter_mut().zip(sinks) {
        job.sink = sink?;
    }
    // 2. Carve the buffers into page windows.
    let mut tasks = Vec::new();
    for job in jobs.iter_mut() {
        let direct_ok = |ct| can_decode_into(ct, &job.proto);
        let mut pieces: Vec<&Piece> = job.pieces.iter().collect();
        pieces.sort_by_key(|p| p.offset);
        let mut rest = job.sink.as_slice_mut();
        let mut at = 0u64;
        for p in pieces {
            let (_, tail) = rest.split_at((p.offset.saturating_sub(at)) as usize);
            let (mut window, tail) = tail.split_at((p.b - p.a) as usize);
            rest = tail;
            at = p.offset + (p.b - p.a);
            let what = || format!("column {} in cluster {}", p.column, p.cluster.id);
            if let Some(pre) = p.pre {
                window.convert_from(pre, 0).map_err(|m| Error::out_of_spec(m, Location::new(what(), None)))?;
                continue;
            }
            let ext = src.column_extent(p.column, p.cluster)?;
            if p.a < ext.zeros {
                // Leading zeros of a deferred column: already zero.
                let (_, tail) = window.split_at((ext.zeros.min(p.b) - p.a) as usize);
                window = tail;
            }
            if ext.zeros >= p.b {
                continue;
            }
            let cdesc = &src.desc.columns[p.column as usize];
            let spec = ColumnSpec::from_descriptor(cdesc).map_err(|e| e.within(&what()))?;
            let direct = direct_ok(spec.column_type);
            for PageInRange { index, page, count, from, to } in ext.pages_in(p.a, p.b) {
                let (dest, tail) = window.split_at((to - from) as usize);
                window = tail;
                let unpacked = spec.packed_size(count);
                let stored = stored_size(page);
                tasks.push(PageTask {
                    cluster_id: p.cluster.id,
                    column: p.column,
                    page: index,
                    spec,
                    count: count as usize,
                    from: from as usize,
                    extent: Extent { offset: page.locator.offset, len: stored },
                    sealed: *page,
                    unpacked,
                    direct,
                    dest,
                    at: Placement { batch: 0, request: 0, start: 0 },
                    order: (p.r, page.locator.offset),
                });
            }
        }
    }
    if tasks.is_empty() {
        return Ok(());
    }
    // 3. Plan the requests in read order, then sort the pages into batches.
    tasks.sort_by_key(|t| t.order);
    let (batches, placed) = plan_requests(&src.file, src.max_key_size, &src.hints, tasks.iter().map(|t| t.extent))?;
    let mut per_batch: Vec<Vec<PageTask>> = (0..batches.len()).map(|_| Vec::new()).collect();
    for mut t in tasks {
        t.at = placed[&t.extent];
        per_batch[t.at.batch].push(t);
    }
    src.io.add_pages(per_batch.iter().map(|b| b.len() as u64).sum());
    // 4. Fetch and decode, the next batch's fetch overlapping this one's decoding.
    run(src, &batches, per_batch, pool, verify)
}

/// What a read needs in memory, summed over its pages before anything is allocated.
#[derive(Debug, Default)]
struct Needs {
    /// The buffers of the values read (element counts: pages that share a
    /// locator count once per page record).
    values: u64,
    /// Stored bytes of the pages (each page record: an upper bound of the read buffers).
    stored: u64,
    /// The largest page decompressed (its claimed size, slack included).
    largest_page: u64,
}

/// Refuses a read whose [`Needs`] exceed the source's budget, before anything is allocated.
fn check_budget(src: &PageSource, needs: &Needs) -> Result<()> {
    let Some(budget) = src.max_memory else { return Ok(()) };
    // Two batch buffers at most (one fetched while the other is decoded).
    let batch_limit = super::io::BATCH_BYTES.max(src.hints.max_request);
    let read_buffers = needs.stored.min(batch_limit.saturating_mul(2));
    // The values of earlier steps of the same read (its index columns) are still held.
    let earlier = src.spent.load(std::sync::atomic::Ordering::Relaxed);
    let values = needs.values.saturating_add(earlier);
    let total = values.saturating_add(read_buffers).saturating_add(needs.largest_page);
    if total <= budget {
        src.spent.store(values, std::sync::atomic::Ordering::Relaxed);
    } else {
        return Err(over_budget(
            total,
            budget,
            format!(
                "{values} bytes of values, {read_buffers} of read buffers, a largest page of {}",
                needs.largest_page
            ),
        ));
    }
    Ok(())
}

/// A read over its `max_memory` budget: `total` bytes against `budget`,
/// `parts` saying of what.
pub(super) fn over_budget(total: u64, budget: u64, parts: String) -> Error {
    Error::OverBudget {
        requested: total,
        limit: budget,
        what: "max_memory budget",
        hint: "; read in steps with iterate(step_size=…) or fewer fields, or raise max_memory",
        location: Location::new(format!("this read ({parts})"), None),
    }
}

/// What a job's buffer holds, for an out-of-memory error: the column, its field and the element count.
fn job_what(src: &PageSource, job: &Job<'_>) -> String {
    let Some(p) = job.pieces.first() else { return format!("a column buffer of {} elements", job.len) };
    let field = src
        .desc
        .columns
        .get(p.column as usize)
        .and_then(|c| src.desc.fields.get(c.field_id as usize))
        .map(|f| format!(" of field {:?}", f.name))
        .unwrap_or_default();
    format!("the values of column {}{field} ({} elements of {} bytes)", p.column, job.len, job.proto.element_size())
}

/// Checks that a piece lies within its column's elements in the cluster,
/// that its synthetic zeros stay within [`MAX_ZERO_FILL_BYTES`] and that no
/// page it needs claims more bytes than its compressed size can justify.
fn check_piece(src: &PageSource, proto: &ColumnValues, p: &Piece, needs: &mut Needs) -> Result<()> {
    if p.b < p.a {
        return Err(Error::invalid(format!("element range {}..{} of column {}", p.a, p.b, p.column)));
    }
    if let Some(pre) = p.pre {
        if pre.len() as u64 != p.b - p.a {
            return Err(Error::invalid(format!(
                "{} decoded elements for range {}..{} of column {}",
                pre.len(),
                p.a,
                p.b,
                p.column
            )));
        }
        return Ok(());
    }
    let ext = src.column_extent(p.column, p.cluster)?;
    let where_ = || Location::new(format!("page list of cluster {}", p.cluster.id), None);
    if p.b > ext.zeros.saturating_add(ext.available) {
        return Err(Error::out_of_spec(
            format!(
                "column {} has {} elements in cluster {} but the field structure needs {}",
                p.column,
                ext.zeros.saturating_add(ext.available),
                p.cluster.id,
                p.b
            ),
            where_(),
        ));
    }
    let cdesc = &src.desc.columns[p.column as usize];
    let spec = ColumnSpec::from_descriptor(cdesc)?;
    if p.a < ext.zeros {
        let n_zeros = ext.zeros.min(p.b) - p.a;
        let bytes = n_zeros.saturating_mul(proto.element_size() as u64).max(spec.packed_size(n_zeros));
        if bytes > MAX_ZERO_FILL_BYTES {
            return Err(Error::WouldOverAllocate {
                requested: bytes,
                limit: MAX_ZERO_FILL_BYTES,
                location: Location::new(
                    format!(
                        "zero elements {}..{} of deferred column {} in cluster {}",
                        p.a,
                        ext.zeros.min(p.b),
                        p.column,
                        p.cluster.id
                    ),
                    None,
                ),
            });
        }
    }
    for PageInRange { index, page, count, .. } in ext.pages_in(p.a, p.b) {
        let what = || format!("page {index} of column {} in cluster {}", p.column, p.cluster.id);
        let stored = stored_size(page);
        let file_size = src.file.size();
        // A page split over keys (stored bytes over the anchor's maximum key
        // size) starts with a first key of max_key_size bytes; its other chunks
        // are where that key says, before it as often as not (ROOT writes the
        // first key last), and the chunk reader checks each of them.
        let split = src.file.payload_is_split(page.locator.offset, stored, src.max_key_size)?;
        let contiguous = if split { src.max_key_size } else { stored };
        if page.locator.offset.checked_add(contiguous).is_none_or(|end| end > file_size) {
            return Err(Error::Truncated {
                needed: page.locator.offset.saturating_add(contiguous),
                available: file_size,
                location: Location::new(
                    format!("{} ({stored} stored bytes past the end of the file)", what()),
                    Some(page.locator.offset),
                ),
            });
        }
        let unpacked = spec.packed_size(count);
        let location = || Location::new(what(), Some(page.locator.offset));
        if unpacked > src.max_page_size {
            return Err(Error::OverBudget {
                requested: unpacked,
                limit: src.max_page_size,
                what: "page size cap",
                hint: " (max_page_size)",
                location: location(),
            });
        }
        guard_expansion(page.locator.size, unpacked, &location())?;
        needs.stored = needs.stored.saturating_add(stored);
        needs.largest_page = needs.largest_page.max(unpacked);
    }
    Ok(())
}

/// Fetches the batches in order and decodes each batch's pages. With more
/// than one decoding thread and more than one batch, a background thread
/// fetches batch `i + 1` while batch `i` is decoded. Two batch buffers go
/// back and forth between the two, so at most two batches of compressed
/// bytes are held at a time and no buffer is allocated twice.
fn run(src: &PageSource, batches: &[Batch], per_batch: Vec<Vec<PageTask>>, pool: &Pool, verify: bool) -> Result<()> {
    let result = run_batches(src, batches, per_batch, pool, verify);
    // Big pages leave big scratch buffers behind: do not keep them.
    let trim = || {
        with_scratch(|s| {
            if s.page.len() > MAX_KEPT_SCRATCH {
                s.page = Vec::new();
            }
            s.values.retain(|v| v.len() * v.element_size() <= MAX_KEPT_SCRATCH);
        })
    };
    trim();
    if pool.is_parallel() {
        pool.broadcast(trim);
    }
    result
}

/// [`run`] without the clean-up.
fn run_batches(
    src: &PageSource,
    batches: &[Batch],
    per_batch: Vec<Vec<PageTask<'_>>>,
    pool: &Pool,
    verify: bool,
) -> Result<()> {
    // Batch buffers as large as the largest batch from the start: one that
    // grew would be allocated (and its pages mapped) twice.
    let largest = batches.iter().map(|b| b.range_bytes).max().unwrap_or(0);
    let buffer = || Fetched::with_capacity(largest);
    if !pool.is_parallel() || batches.len() < 2 {
        let mut fetched = buffer()?;
        for (batch, tasks) in batches.iter().zip(per_batch) {
            fetch(&src.file, src.max_key_size, batch, &src.io, &mut fetched)?;
            let decode = |_: &mut (), t| with_scratch(|s| decode_task(t, batch, &fetched, s, verify));
            pool.try_for_each_init(tasks, || (), decode)?;
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Result<Fetched>>(2);
        let (free_tx, free_rx) = std::sync::mpsc::sync_channel::<Fetched>(2);
        for _ in 0..2 {
            free_tx.send(buffer()?).map_err(|_| prefetch_stopped())?;
        }
        std::thread::Builder::new()
            .name("rntuple-prefetch".into())
            .spawn_scoped(scope, move || {
                for batch in batches {
                    // No free buffer any more: decoding stopped.
                    let Ok(mut fetched) = free_rx.recv() else { break };
                    let answer = fetch(&src.file, src.max_key_size, batch, &src.io, &mut fetched).map(|()| fetched);
                    let failed = answer.is_err();
                    if full_tx.send(answer).is_err() || failed {
                        break;
                    }
                }
            })
            .map_err(|e| Error::io("starting the prefetch thread", e))?;
        // The pages of a batch go to the pool as soon as it arrives, without
        // waiting for the previous batch's last pages (no thread idles at the
        // end of a batch). A batch's buffer goes back to the prefetch thread
        // when its last page is decoded. The error reported is the first in
        // read order, as when decoding on one thread.
        let first: Mutex<Option<((usize, usize), Error)>> = Mutex::new(None);
        let failed = |order: (usize, usize), e: Error| {
            let mut first = first.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if first.as_ref().is_none_or(|(o, _)| order < *o) {
                *first = Some((order, e));
            }
        };
        let mut unfetched = None;
        pool.in_place_scope(|scope| {
            for (b, (batch, tasks)) in batches.iter().zip(per_batch).enumerate() {
                let fetched = match full_rx.recv() {
                    Ok(Ok(fetched)) => Arc::new(fetched),
                    Ok(Err(e)) => {
                        unfetched = Some(e);
                        break;
                    }
                    Err(_) => {
                        unfetched = Some(prefetch_stopped());
                        break;
                    }
                };
                for (k, t) in tasks.into_iter().enumerate() {
                    let (fetched, free_tx, failed) = (fetched.clone(), free_tx.clone(), &failed);
                    scope.spawn(move |_| {
                        if let Err(e) = with_scratch(|s| decode_task(t, batch, &fetched, s, verify)) {
                            failed((b, k), e);
                        }
                        give_back(fetched, &free_tx);
                    });
                }
                give_back(fetched, &free_tx);
            }
        });
        // A page that failed comes before the batch that could not be fetched.
        let first = first.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        match (first, unfetched) {
            (Some((_, e)), _) | (None, Some(e)) => Err(e),
            (None, None) => Ok(()),
        }
    })
}

/// Hands a batch buffer back to the prefetch thread once nothing uses it
/// any more (the last of its pages decoded).
fn give_back(fetched: Arc<Fetched>, free: &SyncSender<Fetched>) {
    if let Some(fetched) = Arc::into_inner(fetched) {
        // The prefetch thread may have finished: then the buffer is not needed.
        let _ = free.send(fetched);
    }
}

fn prefetch_stopped() -> Error {
    Error::invalid("the prefetch thread stopped before fetching every batch")
}

/// Verifies, decompresses and decodes one page into its window.
fn decode_task(t: PageTask, batch: &Batch, fetched: &Fetched, s: &mut Scratch, verify: bool) -> Result<()> {
    let (cluster_id, column, page_no, offset) = (t.cluster_id, t.column, t.page, t.extent.offset);
    let what = move || format!("page {page_no} of column {column} in cluster {cluster_id}");
    let location = move || Location::new(what(), Some(offset));
    let stored = fetched.bytes(batch, t.at, t.extent.len).ok_or_else(|| Error::Truncated {
        needed: t.extent.len,
        available: 0,
        location: location(),
    })?;
    let mut checks = Checks::Stop { verify_checksums: verify };
    let page = unseal_page(stored, &t.sealed, t.unpacked, &mut checks, &location, &mut s.decompressor, &mut s.page)?;
    if t.direct {
        // The page's part in the window (all of it unless cut by the range).
        return decode_page_range_into(&t.spec, page, t.count, t.from, t.dest).map_err(|e| e.within(&what()));
    }
    // A conversion into another in-memory type: decode whole, then copy.
    let wide =
        matches!(t.dest, ColumnSlice::F64(_)) && can_decode_into(t.spec.column_type, &ColumnValues::F64(Vec::new()));
    let proto = if wide { ColumnValues::F64(Vec::new()) } else { ColumnValues::for_column(t.spec.column_type)? };
    let tmp = values_like(&mut s.values, proto);
    decode_page(&t.spec, page, t.count, tmp).map_err(|e| e.within(&what()))?;
    t.dest.convert_from(tmp, t.from).map_err(|m| Error::out_of_spec(m, Location::new(what(), None)))
}
