//! The pages of the open cluster of a writer that streams its pages (every
//! writer but the fill contexts of a parallel writer and those with
//! [`WriteOptions::group_pages_by_column`](crate::write::WriteOptions)):
//! spilled to a scratch file as they are sealed, so that the writer holds
//! no cluster's worth of compressed pages, and copied into the output when
//! the cluster is committed, in ROOT's layout (`layout`: grouped by column,
//! coalesced into keys, same-page merging). The copy goes through the same
//! [`write_pages`] as pages held in memory, so the bytes are those of
//! `group_pages_by_column`; it moves the pages in pieces of a bounded
//! buffer, never a cluster or a blob at once.
//!
//! Same-page merging compares pages by checksum, then byte for byte (both
//! read back from the scratch file): equal hashes alone never merge pages.

use rntuple_container::write::PayloadSource;
use rntuple_format::model::PageDescriptor;
use rntuple_format::{Error, Result};

use super::scratch::Scratch;
use crate::write::layout::{write_pages, PageMeta, PageSource};
use crate::write::pages::Blob;
use crate::write::BlobSink;

/// Pages of the open cluster spilled so far.
#[derive(Debug)]
pub(super) struct OpenCluster {
    /// Created with the first page.
    scratch: Option<Scratch>,
    /// Where each page of each column is in `scratch`, in page order.
    pages: Vec<Vec<Spilled>>,
    /// At commit, the buffer the pages are copied through: `chunk` bytes
    /// (counted as held by `Columns::stream_pages`), freed after the commit.
    buf: Vec<u8>,
    chunk: usize,
}

/// A page in the scratch file.
#[derive(Debug, Clone, Copy)]
struct Spilled {
    at: u64,
    meta: PageMeta,
}

impl OpenCluster {
    /// Copies through a buffer of `chunk` bytes.
    pub fn new(chunk: usize) -> Self {
        OpenCluster { scratch: None, pages: Vec::new(), buf: Vec::new(), chunk: chunk.max(1) }
    }

    /// Spills the pages of `blob` to the scratch file (created in the
    /// sink's [`BlobSink::scratch_dir`] with the first page).
    pub fn spill(&mut self, sink: &dyn BlobSink, blob: Blob) -> Result<()> {
        let scratch = match &mut self.scratch {
            Some(s) => s,
            none => none.insert(
                Scratch::create(sink.scratch_dir().as_deref())
                    .map_err(|e| Error::io("creating the scratch file of the open cluster's pages", e))?,
            ),
        };
        for (col, page) in blob {
            let at = scratch.len();
            let len = page.bytes.len();
            scratch
                .append(&page.bytes)
                .map_err(|e| Error::io("writing the open cluster's pages to their scratch file", e))?;
            if self.pages.len() <= col {
                self.pages.resize_with(col + 1, Vec::new);
            }
            let meta = PageMeta {
                num_elements: page.num_elements,
                len: len as u64,
                data_size: page.data_size,
                packed_size: page.packed_size,
                checksum: page.checksum,
            };
            self.pages[col].push(Spilled { at, meta });
        }
        Ok(())
    }

    /// The cluster ends: writes its pages (of `columns` columns) into `sink`
    /// as `layout` lays them out; returns their descriptors and the bytes
    /// written. The scratch file is then reused for the next cluster.
    pub fn finish(
        &mut self,
        sink: &mut dyn BlobSink,
        columns: usize,
        merge: bool,
    ) -> Result<(Vec<Vec<PageDescriptor>>, u64)> {
        if self.pages.iter().skip(columns).any(|p| !p.is_empty()) {
            return Err(Error::internal(format!("pages of {} columns in a cluster of {columns}", self.pages.len())));
        }
        self.pages.resize_with(columns, Vec::new);
        let mut src =
            SpilledPages { scratch: self.scratch.as_ref(), pages: &self.pages, buf: &mut self.buf, chunk: self.chunk };
        let r = write_pages(sink, &mut src, merge);
        // Freed until the next commit: while entries are filled (when the
        // page buffers are largest) the writer holds no copy buffer.
        self.buf = Vec::new();
        self.pages.iter_mut().for_each(Vec::clear);
        if let Some(s) = &mut self.scratch {
            s.reset();
        }
        r
    }
}

/// The spilled pages of a cluster as a [`PageSource`].
struct SpilledPages<'a> {
    scratch: Option<&'a Scratch>,
    pages: &'a [Vec<Spilled>],
    buf: &'a mut Vec<u8>,
    chunk: usize,
}

fn need(scratch: Option<&Scratch>) -> Result<&Scratch> {
    scratch.ok_or_else(|| Error::internal("pages of a cluster without a scratch file"))
}

fn read_error(e: std::io::Error) -> Error {
    Error::io("reading the open cluster's pages back from their scratch file", e)
}

impl PageSource for SpilledPages<'_> {
    fn num_columns(&self) -> usize {
        self.pages.len()
    }
    fn num_pages(&self, col: usize) -> usize {
        self.pages[col].len()
    }
    fn meta(&self, col: usize, page: usize) -> PageMeta {
        self.pages[col][page].meta
    }

    fn same_bytes(&mut self, (ac, ap): (usize, usize), (bc, bp): (usize, usize)) -> Result<bool> {
        let (a, b) = (self.pages[ac][ap], self.pages[bc][bp]);
        if a.meta.len != b.meta.len {
            return Ok(false);
        }
        let scratch = need(self.scratch)?;
        let half = (self.chunk / 2).max(1);
        self.buf.clear();
        self.buf.resize(2 * half, 0);
        let (x, y) = self.buf.split_at_mut(half);
        let mut done = 0u64;
        while done < a.meta.len {
            let n = (a.meta.len - done).min(half as u64) as usize;
            scratch.read_at(a.at + done, &mut x[..n]).map_err(read_error)?;
            scratch.read_at(b.at + done, &mut y[..n]).map_err(read_error)?;
            if x[..n] != y[..n] {
                return Ok(false);
            }
            done += n as u64;
        }
        Ok(true)
    }

    fn write_blob(&mut self, sink: &mut dyn BlobSink, pages: &[(usize, usize)], packed: u64) -> Result<u64> {
        // The pages' ranges in the scratch file, neighbours merged.
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for &(c, p) in pages {
            let s = self.pages[c][p];
            match ranges.last_mut() {
                Some((at, len)) if *at + *len == s.at => *len += s.meta.len,
                _ => ranges.push((s.at, s.meta.len)),
            }
        }
        let mut starts = Vec::with_capacity(ranges.len());
        let mut len = 0u64;
        for r in &ranges {
            starts.push(len);
            len += r.1;
        }
        let scratch = need(self.scratch)?;
        self.buf.clear();
        self.buf.resize(self.chunk, 0);
        let mut payload = ScratchPayload { scratch, ranges: &ranges, starts: &starts, len, buf: self.buf };
        sink.write_blob_from(&mut payload, packed)
    }
}

/// Pages in a scratch file as one payload, read through a bounded buffer.
struct ScratchPayload<'a> {
    scratch: &'a Scratch,
    /// (offset in the scratch file, length), in payload order.
    ranges: &'a [(u64, u64)],
    /// Offset of each range in the payload.
    starts: &'a [u64],
    len: u64,
    buf: &'a mut Vec<u8>,
}

impl PayloadSource for ScratchPayload<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn bytes_at(&mut self, from: u64, max: usize) -> std::io::Result<&[u8]> {
        let want = (max.min(self.buf.len()) as u64).min(self.len.saturating_sub(from)) as usize;
        if want == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("byte {from} of a payload of {} bytes", self.len),
            ));
        }
        let mut i = self.starts.partition_point(|&s| s <= from) - 1;
        let mut filled = 0usize;
        while filled < want {
            let (at, len) = self.ranges[i];
            let skip = from + filled as u64 - self.starts[i];
            let n = ((len - skip) as usize).min(want - filled);
            self.scratch.read_at(at + skip, &mut self.buf[filled..filled + n])?;
            filled += n;
            i += 1;
        }
        Ok(&self.buf[..filled])
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use rntuple_container::write::{FileWriter, WriterOptions};
    use rntuple_container::Anchor;

    use super::*;
    use crate::write::layout::HeldPages;
    use crate::write::pages::{ClusterColumn, SealedPage};
    use crate::write::{RNTupleWriter, WriteOptions};
    use crate::RNTupleFile;

    const COLUMNS: usize = 40;
    const ENTRIES: usize = 50_000;

    /// 40 columns of hardly compressible doubles: 16 MB of column data, one cluster.
    fn batch() -> RecordBatch {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        for c in 0..COLUMNS {
            let v: Vec<f64> = (0..ENTRIES)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    (x >> 11) as f64
                })
                .collect();
            fields.push(Field::new(format!("c{c}"), DataType::Float64, false));
            arrays.push(Arc::new(Float64Array::from(v)));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
    }

    /// Writes `b` with `options`; returns the file's bytes and the writer's high-water mark.
    fn write(name: &str, b: &RecordBatch, options: WriteOptions) -> (Vec<u8>, u64) {
        write_keys(name, b, options, WriterOptions::default())
    }

    /// Each file `out.root` in a directory of its own (`name`), at a fixed
    /// time: files of the same RNTuple bytes are the same bytes.
    fn write_keys(name: &str, b: &RecordBatch, options: WriteOptions, keys: WriterOptions) -> (Vec<u8>, u64) {
        let dir: PathBuf = std::env::temp_dir().join(format!("rntuple-stream-{}", std::process::id())).join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.root");
        let mut file = FileWriter::create(&path, keys.timestamp(1_700_000_000)).unwrap();
        let mut w = RNTupleWriter::new(&mut file, "t", &b.schema(), &HashMap::new(), options).unwrap();
        w.write_batch(b).unwrap();
        let high_water = w.memory_use().high_water;
        w.close().unwrap();
        file.finish().unwrap();
        let read = RNTupleFile::open(&path).unwrap().rntuple("t").unwrap().read_all().unwrap();
        assert_eq!(&read, b, "{name} reads back");
        let bytes = std::fs::read(&path).unwrap();
        // Only the output is left: the scratch file is gone.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "{name}: files beside the output");
        std::fs::remove_dir_all(&dir).unwrap();
        (bytes, high_water)
    }

    #[test]
    fn a_cluster_larger_than_the_page_buffers_is_written_within_them() {
        let b = batch();
        let budget = 512 * 1024;
        let max_page = 32 * 1024;
        let options = |threads, group| WriteOptions {
            page_buffer_budget: budget,
            max_unzipped_page_size: max_page,
            compression_threads: threads,
            group_pages_by_column: group,
            ..Default::default()
        };
        let (one, streamed) = write("streamed-1", &b, options(1, false));
        // One cluster of 14 MB of compressed pages (random doubles hardly compress)...
        assert!(one.len() > 12_000_000, "{}", one.len());
        // ...while the writer held at most its page buffers, the compression
        // queue (at least 1 MiB, twice: before and after compression), a
        // blob of pages on their way to the scratch file and the 64 KiB
        // buffer that moves them, not the cluster's pages.
        let bound = budget + 2 * (1 << 20) + 4 * max_page + (64 << 10);
        assert!(streamed <= bound, "held {streamed} bytes, bound {bound}");
        // With compression threads too (the bytes are the same for any
        // number of threads: `bytes_do_not_depend_on_the_number_of_threads`).
        let (three_bytes, three) = write("streamed-3", &b, options(3, false));
        let bound3 = budget + 2 * 6 * max_page.max(1 << 19) + 4 * max_page + (64 << 10);
        assert!(three <= bound3, "held {three} bytes with 3 threads, bound {bound3}");
        // Grouped by column in memory, as ROOT's buffered sink: the cluster's
        // pages are held, and the bytes are the same.
        let (grouped, held) = write("grouped", &b, options(1, true));
        assert!(held > 12_000_000, "{held}");
        assert!(one == grouped, "the default writer's bytes differ from the grouped writer's");
        assert!(three_bytes == grouped, "3 threads: the bytes differ from the grouped writer's");
    }

    #[test]
    fn small_keys_give_the_grouped_bytes() {
        // Pages of 1 KiB (uncompressed), keys of at most 1500 bytes: the
        // pages of a column are coalesced into keys within it.
        let v: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| (i as f64).sin()).collect::<Vec<_>>()));
        let w: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| (i % 7) as f64).collect::<Vec<_>>()));
        let schema =
            Schema::new(vec![Field::new("v", DataType::Float64, false), Field::new("w", DataType::Float64, false)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![v, w]).unwrap();
        for compression in [0, 505] {
            let options = |group| WriteOptions {
                compression,
                max_unzipped_page_size: 1024,
                group_pages_by_column: group,
                ..Default::default()
            };
            let keys = WriterOptions { max_key_size: 1500, ..Default::default() };
            let (streamed, _) = write_keys(&format!("small-keys-{compression}"), &b, options(false), keys.clone());
            let (grouped, _) = write_keys(&format!("small-keys-{compression}-g"), &b, options(true), keys);
            assert!(streamed == grouped, "compression {compression}: the bytes differ");
        }
    }

    #[test]
    fn identical_pages_are_written_once_when_spilled() {
        let same: ArrayRef = Arc::new(Float64Array::from((0..20_000).map(|i| (i % 91) as f64).collect::<Vec<_>>()));
        let schema =
            Schema::new(vec![Field::new("a", DataType::Float64, false), Field::new("b", DataType::Float64, false)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![same.clone(), same]).unwrap();
        let options =
            |merge| WriteOptions { max_unzipped_page_size: 16 * 1024, same_page_merging: merge, ..Default::default() };
        let (merged, _) = write("merged", &b, options(true));
        let (unmerged, _) = write("unmerged", &b, options(false));
        let (grouped, _) = write("merged-grouped", &b, WriteOptions { group_pages_by_column: true, ..options(true) });
        // Column b's pages are column a's: merging saves about half the pages' bytes.
        assert!((merged.len() as f64) < 0.7 * unmerged.len() as f64, "{} vs {}", merged.len(), unmerged.len());
        assert!(merged == grouped, "merged pages: the bytes differ from the grouped writer's");
    }

    #[test]
    fn pages_larger_than_a_key_are_split_and_read_back() {
        // Pages of 4 KiB (uncompressed) and keys of at most 1000 bytes: every
        // page is split over keys, its first key written last (after the
        // other chunks), and the last page's first key ends the pages.
        let v: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| (i as f64).sin()).collect::<Vec<_>>()));
        let schema = Schema::new(vec![Field::new("v", DataType::Float64, false)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![v]).unwrap();
        for compression in [0, 505] {
            let mut files = Vec::new();
            for group in [false, true] {
                let options = WriteOptions {
                    compression,
                    max_unzipped_page_size: 4096,
                    group_pages_by_column: group,
                    ..Default::default()
                };
                let keys = WriterOptions { max_key_size: 1000, ..Default::default() };
                files.push(write_keys(&format!("big-pages-{group}-{compression}"), &b, options, keys).0);
            }
            assert!(files[0] == files[1], "compression {compression}: the bytes differ");
        }
    }

    /// A sink of payloads back to back in memory.
    struct Mem(Vec<u8>);

    impl BlobSink for Mem {
        fn write_blob(&mut self, parts: &[&[u8]], _: u64) -> Result<u64> {
            let at = self.0.len() as u64;
            parts.iter().for_each(|p| self.0.extend_from_slice(p));
            Ok(at)
        }
        fn write_anchor(&mut self, _: &str, _: &Anchor) -> Result<()> {
            Ok(())
        }
        fn max_key_size(&self) -> u64 {
            1 << 30
        }
    }

    fn page(bytes: Vec<u8>, checksum: u64) -> SealedPage {
        let n = bytes.len() as u64;
        SealedPage { num_elements: 1, bytes, data_size: n - 8, packed_size: n, checksum: Some(checksum) }
    }

    #[test]
    fn equal_checksums_alone_do_not_merge_pages() {
        // Three pages of 20 bytes with the same checksum (as a hash
        // collision would give): a and c are equal, b differs from them in
        // its last byte only, past the first piece of the comparison (a
        // buffer of 8 bytes compares 4 at a time).
        let a: Vec<u8> = (0..20).collect();
        let mut b = a.clone();
        b[19] ^= 1;
        let cluster = || vec![(0, page(a.clone(), 7)), (1, page(b.clone(), 7)), (1, page(a.clone(), 7))];
        let check = |pages: &[Vec<PageDescriptor>], written: u64, sink: &Mem, what: &str| {
            let (pa, pb, pc) = (pages[0][0].locator, pages[1][0].locator, pages[1][1].locator);
            assert_ne!(pa.offset, pb.offset, "{what}: b merged with a on its checksum alone");
            assert_eq!(pa, pc, "{what}: c, equal to a, not merged");
            assert_eq!((written, sink.0.len()), (40, 40), "{what}");
            assert_eq!(&sink.0[pb.offset as usize..][..20], &b[..], "{what}");
        };
        // Spilled to a scratch file and compared there...
        let mut open = OpenCluster::new(8);
        let mut sink = Mem(Vec::new());
        open.spill(&sink, cluster()).unwrap();
        let (pages, written) = open.finish(&mut sink, 2, true).unwrap();
        check(&pages, written, &sink, "spilled");
        // ...or held in memory: the same.
        let mut columns = vec![ClusterColumn { pages: Vec::new() }, ClusterColumn { pages: Vec::new() }];
        for (c, p) in cluster() {
            columns[c].pages.push(p);
        }
        let mut held = Mem(Vec::new());
        let (pages_held, written) = write_pages(&mut held, &mut HeldPages(&columns), true).unwrap();
        check(&pages_held, written, &held, "held");
        assert_eq!((pages, &sink.0), (pages_held, &held.0));
        // The scratch file is reused by the next cluster.
        let mut next = Mem(Vec::new());
        open.spill(&next, vec![(0, page(b.clone(), 9))]).unwrap();
        let (pages, _) = open.finish(&mut next, 1, true).unwrap();
        assert_eq!((pages[0][0].locator.offset, &next.0[..]), (0, &b[..]));
    }
}
