//! The pages of a merge: copied as stored, resealed (decompressed, re-encoded
//! when the column type differs, compressed with the output setting), or made
//! of zeros (default values); and the blobs they are written in.
//!
//! Pages of an input cluster are read in file order, neighbouring pages in
//! one request of at most [`BLOCK`] bytes; copied pages go straight to an
//! output buffer, resealed ones through the worker threads. The buffer
//! becomes one `RBlob` key when it reaches [`FLUSH`] bytes and at the end of
//! every cluster, so memory stays bounded whatever the cluster size. Byte
//! ranges that several locators of one cluster share (ROOT's same-page
//! merging) are written once and stay shared.

use std::borrow::Cow;
use std::collections::HashMap;

use rntuple::descriptor::ClusterInfo;
use rntuple::format::checksum::xxh3_64;
use rntuple::format::column::{decode_page, encode_page, ColumnSpec, ColumnValues};
use rntuple::format::compression::{compress, Decompressor};
use rntuple::format::constants::MAX_ZERO_FILL_BYTES;
use rntuple::format::model::{ColumnPageRange, Locator, PageDescriptor};
use rntuple::format::{Error, Location, Result};
use rntuple::write::PageSink;
use rntuple::{check_page_checksum, unseal_page, Checks};

use super::plan::Plan;
use crate::load::Loaded;
use crate::progress::{check, Progress};

/// Most bytes read from an input in one request.
const BLOCK: u64 = 16 << 20;
/// Largest gap between two pages read in one request.
const GAP: u64 = 256 << 10;
/// Output buffer size that triggers a new key.
const FLUSH: u64 = 16 << 20;
/// Packed bytes of one page of zeros (ROOT's merger uses 256 KiB too).
const ZERO_PAGE_BYTES: u64 = 256 << 10;

/// Counts of what happened to pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageStats {
    /// Pages copied as stored.
    pub copied: u64,
    /// Pages decompressed and compressed again (and re-encoded when their
    /// column type differs from the output's).
    pub resealed: u64,
    /// Pages of zeros written for default values.
    pub zero: u64,
    /// Page references that share bytes written before.
    pub shared: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Copy { offset: u64, stored: u64 },
    Reseal { offset: u64, stored: u64, column_type: u16, bits: u16 },
    Zero { column_type: u16, bits: u16, n: u32 },
}

/// Where the output's pages go.
pub(crate) struct Sink<'a> {
    /// The output RNTuple's page sink; pages are placed in its destination.
    pub(crate) pages: PageSink<'a>,
    pub(crate) compression: u32,
    buf: Vec<u8>,
    buf_packed: u64,
    /// (range, page, offset in `buf`) of pages waiting for their key.
    fixups: Vec<(usize, usize, u64)>,
    /// Bytes already written, by source (cleared with every cluster but zeros).
    written: HashMap<Key, u64>,
    /// Bytes in `buf`, by source.
    pending: HashMap<Key, u64>,
    zeros: HashMap<Key, Vec<u8>>,
    /// Reused for the reads of input pages.
    read_buf: Vec<u8>,
    pub(crate) stats: PageStats,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(pages: PageSink<'a>, compression: u32) -> Self {
        Self {
            pages,
            compression,
            buf: Vec::new(),
            buf_packed: 0,
            fixups: Vec::new(),
            written: HashMap::new(),
            pending: HashMap::new(),
            zeros: HashMap::new(),
            read_buf: Vec::new(),
            stats: PageStats::default(),
        }
    }

    /// Points page `slot` at bytes already placed for `key`; false if none.
    fn share(&mut self, key: Key, slot: (usize, usize), ranges: &mut [ColumnPageRange]) -> bool {
        if let Some(&off) = self.written.get(&key) {
            ranges[slot.0].pages[slot.1].locator.offset = off;
        } else if let Some(&rel) = self.pending.get(&key) {
            self.fixups.push((slot.0, slot.1, rel));
        } else {
            return false;
        }
        self.stats.shared += 1;
        true
    }

    /// Places the stored bytes (page and checksum) of page `slot`.
    fn place(
        &mut self,
        key: Key,
        bytes: &[u8],
        packed: u64,
        slot: (usize, usize),
        ranges: &mut [ColumnPageRange],
    ) -> Result<()> {
        if self.share(key, slot, ranges) {
            return Ok(());
        }
        let len = bytes.len() as u64;
        if len > FLUSH.min(self.pages.dest().max_key_size()) {
            self.flush(ranges)?;
            let off = self.pages.dest().write_blob(&[bytes], packed)?;
            ranges[slot.0].pages[slot.1].locator.offset = off;
            self.written.insert(key, off);
            return Ok(());
        }
        if self.buf.len() as u64 + len > FLUSH.min(self.pages.dest().max_key_size()) {
            self.flush(ranges)?;
        }
        let rel = self.buf.len() as u64;
        self.buf.extend_from_slice(bytes);
        self.buf_packed += packed;
        self.fixups.push((slot.0, slot.1, rel));
        self.pending.insert(key, rel);
        Ok(())
    }

    /// Writes the buffered pages as one key and fixes their locators.
    pub(crate) fn flush(&mut self, ranges: &mut [ColumnPageRange]) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // At most the max key size: one key.
        let off = self.pages.dest().write_blob(&[&self.buf], self.buf_packed)?;
        for (r, p, rel) in self.fixups.drain(..) {
            ranges[r].pages[p].locator.offset = off + rel;
        }
        for (k, rel) in self.pending.drain() {
            self.written.insert(k, off + rel);
        }
        self.buf.clear();
        self.buf_packed = 0;
        Ok(())
    }

    /// Ends a cluster: flushes, forgets which input bytes were written
    /// (pages are shared within a cluster, as ROOT shares them).
    pub(crate) fn end_cluster(&mut self, ranges: &mut [ColumnPageRange]) -> Result<()> {
        self.flush(ranges)?;
        self.written.retain(|k, _| matches!(k, Key::Zero { .. }));
        Ok(())
    }

    /// The stored bytes of a page of `n` zero elements.
    fn zero_page(&mut self, key: Key, spec: &ColumnSpec, n: u64) -> Result<Vec<u8>> {
        if let Some(bytes) = self.zeros.get(&key) {
            return Ok(bytes.clone());
        }
        let data = vec![0u8; spec.packed_size(n) as usize];
        let mut out = compress(&data, self.compression)?;
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        self.zeros.insert(key, out.clone());
        Ok(out)
    }
}

/// Settings shared by all clusters of a merge.
pub(crate) struct Ctx<'a> {
    pub(crate) plan: &'a Plan,
    pub(crate) verify_checksums: bool,
    pub(crate) threads: usize,
    pub(crate) progress: &'a dyn Progress,
}

/// How an output column appears in one output cluster.
#[derive(Clone, Copy)]
enum Kind<'a> {
    /// From the input column `ic`'s range; `lead` zeros first (a deferred input column).
    Present {
        range: &'a ColumnPageRange,
        ic: u32,
        lead: u64,
    },
    /// `n` zero elements.
    Zero(u64),
    /// No elements (a column under a collection the input lacks).
    Empty,
    Suppressed,
}

/// What to do with one input page.
struct PageJob {
    slot: (usize, usize),
    page: PageDescriptor,
    reseal: Option<(ColumnSpec, ColumnSpec)>,
    ic: u32,
    index: usize,
}

impl PageJob {
    fn stored(&self) -> u64 {
        self.page.locator.size + if self.page.has_checksum { 8 } else { 0 }
    }
}

fn spec_of(c: &rntuple::format::model::ColumnDescriptor) -> Result<ColumnSpec> {
    ColumnSpec::from_descriptor(c)
}

/// Merges one input cluster into the output; returns its column ranges.
/// `next` holds the output's element count of every column so far.
pub(crate) fn merge_cluster(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    next: &mut [u64],
    k: usize,
    input: &Loaded,
    cluster: &ClusterInfo,
) -> Result<Vec<ColumnPageRange>> {
    let plan = ctx.plan;
    let map = &plan.inputs[k];
    let n_listed = if k == 0 { cluster.columns.len().min(plan.columns.len()) } else { map.num_columns };
    let entries = cluster.num_entries;
    let target = sink.compression;
    let where_ = |oc: usize| format!("column '{}' in cluster {} of {}", plan.out[oc].path, cluster.id, input.file);

    let mut kinds: Vec<Kind<'_>> = Vec::with_capacity(n_listed);
    for oc in 0..n_listed {
        let info = &plan.out[oc];
        let src = map.source[oc].and_then(|ic| cluster.columns.get(ic as usize).map(|r| (ic, r)));
        let kind = match src {
            Some((_, r)) if r.is_suppressed() => Kind::Suppressed,
            Some((ic, r)) => {
                let lead = match (k > 0, input.descriptor.columns[ic as usize].first_element_index, info.multiplier) {
                    (true, Some(first), Some(m)) if first > 0 => {
                        let before = cluster.first_entry.saturating_mul(m);
                        (first as u64).saturating_sub(before).min(entries.saturating_mul(m))
                    }
                    _ => 0,
                };
                Kind::Present { range: r, ic, lead }
            }
            None if info.rep > 0 => Kind::Suppressed,
            None => match info.multiplier {
                Some(m) => {
                    if info.streamer {
                        return Err(Error::invalid(format!(
                            "{}: streamer fields have no default value to write for entries that lack them",
                            where_(oc)
                        )));
                    }
                    Kind::Zero(entries.saturating_mul(m))
                }
                None => Kind::Empty,
            },
        };
        kinds.push(kind);
    }
    let count = |kind: &Kind<'_>| -> Option<u64> {
        match kind {
            Kind::Present { range, lead, .. } => {
                Some(range.pages.iter().fold(*lead, |a, p| a.saturating_add(u64::from(p.num_elements))))
            }
            Kind::Zero(n) => Some(*n),
            Kind::Empty => Some(0),
            Kind::Suppressed => None,
        }
    };

    // Column ranges with their page slots; jobs for the pages.
    let mut ranges: Vec<ColumnPageRange> = Vec::with_capacity(n_listed);
    let mut zero_jobs: Vec<(usize, usize, ColumnSpec, u64)> = Vec::new();
    let mut jobs: Vec<PageJob> = Vec::new();
    for oc in 0..n_listed {
        let info = &plan.out[oc];
        let n = match count(&kinds[oc]) {
            Some(n) => n,
            None => {
                // A suppressed column follows the primary representation's column at its position.
                let primary = plan.reps[info.field]
                    .iter()
                    .filter_map(|cols| cols.get(info.pos))
                    .filter(|&&c| (c as usize) < n_listed)
                    .find_map(|&c| count(&kinds[c as usize]));
                next[oc] = next[oc].saturating_add(primary.unwrap_or(0));
                ranges.push(ColumnPageRange { element_offset: i64::MIN, compression: None, pages: Vec::new() });
                continue;
            }
        };
        let element_offset = match (k, &kinds[oc]) {
            (0, Kind::Present { range, .. }) => range.element_offset as u64,
            _ => next[oc],
        };
        next[oc] = element_offset.saturating_add(n);
        let mut range = ColumnPageRange {
            element_offset: i64::try_from(element_offset)
                .map_err(|_| Error::invalid(format!("{}: element offset {element_offset} overflows", where_(oc))))?,
            compression: Some(target),
            pages: Vec::new(),
        };
        let dst = spec_of(&plan.columns[oc]).map_err(|e| e.within(&where_(oc)))?;
        let zeros = match kinds[oc] {
            Kind::Present { lead, .. } => lead,
            Kind::Zero(n) => n,
            _ => 0,
        };
        if zeros > 0 {
            if dst.packed_size(zeros) > MAX_ZERO_FILL_BYTES {
                return Err(Error::WouldOverAllocate {
                    requested: dst.packed_size(zeros),
                    limit: MAX_ZERO_FILL_BYTES,
                    location: Location::new(format!("default values of {}", where_(oc)), None),
                });
            }
            let per_page = (ZERO_PAGE_BYTES * 8 / u64::from(dst.bits_on_storage.max(1))).max(1);
            let mut left = zeros;
            while left > 0 {
                let n = left.min(per_page);
                zero_jobs.push((ranges.len(), range.pages.len(), dst, n));
                range.pages.push(PageDescriptor {
                    num_elements: n as u32,
                    has_checksum: true,
                    locator: Locator::default(),
                });
                left -= n;
            }
        }
        if let Kind::Present { range: src, ic, .. } = kinds[oc] {
            let sd = &input.descriptor.columns[ic as usize];
            let same = sd.column_type == dst.column_type && sd.bits_on_storage == dst.bits_on_storage;
            let reseal = if same && src.compression == Some(target) {
                None
            } else {
                Some((spec_of(sd).map_err(|e| e.within(&where_(oc)))?, dst))
            };
            for (index, p) in src.pages.iter().enumerate() {
                jobs.push(PageJob { slot: (ranges.len(), range.pages.len()), page: *p, reseal, ic, index });
                range.pages.push(*p);
            }
        }
        ranges.push(range);
    }

    for (r, p, spec, n) in zero_jobs {
        let key = Key::Zero { column_type: spec.column_type.id(), bits: spec.bits_on_storage, n: n as u32 };
        let bytes = sink.zero_page(key, &spec, n)?;
        ranges[r].pages[p].locator.size = bytes.len() as u64 - 8;
        sink.place(key, &bytes, spec.packed_size(n), (r, p), &mut ranges)?;
        sink.stats.zero += 1;
    }

    jobs.sort_by_key(|j| j.page.locator.offset);
    let root = &input.root;
    let mk = input.anchor.max_key_size;
    let mut i = 0;
    while i < jobs.len() {
        check(ctx.progress, "merge")?;
        let start = jobs[i].page.locator.offset;
        let multi = |j: &PageJob| mk != 0 && j.stored() > mk;
        if multi(&jobs[i]) {
            let data = root.read_payload(start, jobs[i].stored(), mk).map_err(|e| e.within(&input.file))?;
            process(ctx, sink, input, cluster, &jobs[i..i + 1], &data, start, &mut ranges)?;
            i += 1;
            continue;
        }
        let mut end = start.saturating_add(jobs[i].stored());
        let mut j = i + 1;
        while j < jobs.len() && !multi(&jobs[j]) {
            let o = jobs[j].page.locator.offset;
            let e = o.saturating_add(jobs[j].stored()).max(end);
            if o > end.saturating_add(GAP) || e - start > BLOCK {
                break;
            }
            end = e;
            j += 1;
        }
        let len = end - start;
        if len > root.size() {
            return Err(Error::WouldOverAllocate {
                requested: len,
                limit: root.size(),
                location: Location::new(format!("pages of cluster {} of {}", cluster.id, input.file), Some(start)),
            });
        }
        // One buffer for all reads: no fresh allocation (and page faults) per block.
        let mut buf = std::mem::take(&mut sink.read_buf);
        buf.resize(len as usize, 0);
        let read = root.storage().read_exact_at(start, &mut buf).map_err(|e| e.within(&input.file));
        let done = read.and_then(|()| process(ctx, sink, input, cluster, &jobs[i..j], &buf, start, &mut ranges));
        sink.read_buf = buf;
        done?;
        i = j;
    }
    sink.end_cluster(&mut ranges)?;
    Ok(ranges)
}

/// Copies or reseals the pages `jobs`, whose bytes lie in `buf` (file offset `base`).
#[allow(clippy::too_many_arguments)]
fn process(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    input: &Loaded,
    cluster: &ClusterInfo,
    jobs: &[PageJob],
    buf: &[u8],
    base: u64,
    ranges: &mut [ColumnPageRange],
) -> Result<()> {
    let target = sink.compression;
    let mut work: Vec<(&PageJob, &[u8], Key)> = Vec::new();
    for job in jobs {
        let stored = job.stored();
        let at = (job.page.locator.offset - base) as usize;
        let bytes = &buf[at..at + stored as usize];
        let location = || {
            Location::new(
                format!("page {} of column {} in cluster {} of {}", job.index, job.ic, cluster.id, input.file),
                Some(job.page.locator.offset),
            )
        };
        check_page_checksum(bytes, &job.page, &mut Checks::Stop { verify_checksums: ctx.verify_checksums }, &location)?;
        ctx.progress.advance(stored);
        match &job.reseal {
            None => {
                let key = Key::Copy { offset: job.page.locator.offset, stored };
                let packed = input.descriptor.columns[job.ic as usize].bits_on_storage;
                let packed = packed_size(u64::from(job.page.num_elements), packed);
                sink.place(key, bytes, packed, job.slot, ranges)?;
                sink.stats.copied += 1;
            }
            Some((_, dst)) => {
                let key = Key::Reseal {
                    offset: job.page.locator.offset,
                    stored,
                    column_type: dst.column_type.id(),
                    bits: dst.bits_on_storage,
                };
                if !sink.share(key, job.slot, ranges) {
                    work.push((job, bytes, key));
                }
            }
        }
    }
    if work.is_empty() {
        return Ok(());
    }
    let results = parallel(&work, ctx.threads, |(job, bytes, _)| {
        // Recompressing a page can take long (lzma): stop between pages.
        check(ctx.progress, "merge")?;
        let (src, dst) = job
            .reseal
            .as_ref()
            .map(|(s, d)| (*s, *d))
            .ok_or_else(|| Error::invalid("internal error: page without conversion"))?;
        reseal(bytes, &job.page, &src, &dst, target).map_err(|e| {
            e.within(&format!("page {} of column {} in cluster {} of {}", job.index, job.ic, cluster.id, input.file))
        })
    });
    for ((job, _, key), result) in work.iter().zip(results) {
        let (bytes, packed) = result?;
        // The page's own size: without the checksum it carries.
        let size = bytes.len() as u64 - if job.page.has_checksum { 8 } else { 0 };
        ranges[job.slot.0].pages[job.slot.1].locator.size = size;
        sink.place(*key, &bytes, packed, job.slot, ranges)?;
        sink.stats.resealed += 1;
    }
    Ok(())
}

fn packed_size(n: u64, bits: u16) -> u64 {
    u64::try_from((u128::from(n) * u128::from(bits)).div_ceil(8)).unwrap_or(u64::MAX)
}

/// Decompresses a page (`stored` holds it and its checksum, if any), encodes
/// it as `dst` when the column type differs and compresses it with `target`.
/// Returns the new stored bytes (checksum appended when the page had one)
/// and the page's packed size.
fn reseal(
    stored: &[u8],
    p: &PageDescriptor,
    src: &ColumnSpec,
    dst: &ColumnSpec,
    target: u32,
) -> Result<(Vec<u8>, u64)> {
    let n = u64::from(p.num_elements);
    let location = || Location::new("page", Some(p.locator.offset));
    // The checksum was checked when the page was read.
    let mut checks = Checks::Stop { verify_checksums: false };
    let mut buf = Vec::new();
    let data = unseal_page(stored, p, src.packed_size(n), &mut checks, &location, &mut Decompressor::new(), &mut buf)?;
    let data: Cow<'_, [u8]> = Cow::Borrowed(data);
    let data: Cow<'_, [u8]> = if src.column_type != dst.column_type || src.bits_on_storage != dst.bits_on_storage {
        let mut values = ColumnValues::for_column(src.column_type)?;
        decode_page(src, &data, n as usize, &mut values)?;
        Cow::Owned(encode_page(dst, &values, 0..n as usize)?)
    } else {
        data
    };
    let mut out = compress(&data, target)?;
    if p.has_checksum {
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
    }
    Ok((out, dst.packed_size(n)))
}

/// `f` over `items` on up to `threads` threads; results in order.
fn parallel<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.max(1).min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items.chunks(chunk).map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>())).collect();
        let mut out = Vec::with_capacity(items.len());
        for h in handles {
            match h.join() {
                Ok(v) => out.extend(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rntuple::format::compression::decompress;
    use rntuple::format::model::ColumnType;

    #[test]
    fn reseal_re_encodes_and_recompresses() {
        let unsplit = ColumnSpec::new(ColumnType::Index32, 32, None).unwrap();
        let split = ColumnSpec::new(ColumnType::SplitIndex64, 64, None).unwrap();
        let values = ColumnValues::Index((0..1000u64).map(|i| i * 3).collect());
        let page = encode_page(&unsplit, &values, 0..1000).unwrap();
        let comp = compress(&page, 101).unwrap();
        let mut stored = comp.clone();
        stored.extend_from_slice(&xxh3_64(&comp).to_le_bytes());
        let p = PageDescriptor {
            num_elements: 1000,
            has_checksum: true,
            locator: Locator { offset: 0, size: comp.len() as u64 },
        };
        let (out, packed) = reseal(&stored, &p, &unsplit, &split, 505).unwrap();
        assert_eq!(packed, 8000);
        let body = &out[..out.len() - 8];
        assert_eq!(u64::from_le_bytes(out[out.len() - 8..].try_into().unwrap()), xxh3_64(body));
        assert_eq!(&body[..3], b"ZS\x01");
        let plain = decompress(body, 8000, &Location::default()).unwrap();
        let mut back = ColumnValues::Index(Vec::new());
        decode_page(&split, &plain, 1000, &mut back).unwrap();
        assert_eq!(back, values);
        // A 64-bit offset that does not fit an Index32 column is refused.
        let big = ColumnValues::Index(vec![1 << 40]);
        let page = encode_page(&split, &big, 0..1).unwrap();
        let p = PageDescriptor { num_elements: 1, has_checksum: false, locator: Locator { offset: 0, size: 8 } };
        assert!(reseal(&page, &p, &split, &unsplit, 0).is_err());
    }

    #[test]
    fn parallel_keeps_order() {
        let items: Vec<u64> = (0..100).collect();
        assert_eq!(parallel(&items, 7, |x| x * 2), (0..100).map(|x| x * 2).collect::<Vec<_>>());
        assert_eq!(parallel(&items[..1], 7, |x| x + 1), vec![1]);
    }
}
