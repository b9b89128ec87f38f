//! The pages of the open cluster written ahead of its commit (a writer
//! that streams its pages, see `pages/ready.rs`): where they went, so that
//! the commit records their locators (spec "Page Locations").
//!
//! Same-page merging as in `layout`: a page of the cluster identical to an
//! earlier page of the same cluster is not written again; its locator points
//! at the earlier page. The earlier page's bytes are gone by then, so pages
//! are taken as identical when their length and their xxh3-128 agree (besides
//! the xxh3-64 checksum stored with them): 24 bytes per page of the cluster
//! instead of the page.

use std::collections::HashMap;

use rntuple_format::model::{Locator, PageDescriptor};
use rntuple_format::Result;
use xxhash_rust::xxh3::xxh3_128;

use crate::write::pages::Blob;
use crate::write::BlobSink;

/// Pages of the open cluster written so far.
#[derive(Debug, Default)]
pub(super) struct OpenCluster {
    /// Descriptors per column, in page order.
    pages: Vec<Vec<PageDescriptor>>,
    /// Locator of the first page of the cluster with given (length, xxh3-128).
    seen: HashMap<(usize, u128), Locator>,
    /// Bytes written (pages and their checksums).
    written: u64,
}

/// Where a page of a blob is.
enum Place {
    /// At this offset in the blob.
    Here(u64),
    /// At the locator of an identical page.
    Earlier(Locator),
}

impl OpenCluster {
    /// Writes the pages of `blob`, but for those identical to an earlier
    /// page of the cluster (`merge`): as one payload, or, as `layout` does,
    /// in payloads within the maximum key size (a payload over it is split
    /// over keys, so only a page alone may exceed it).
    pub fn write(&mut self, sink: &mut dyn BlobSink, blob: Blob, merge: bool) -> Result<()> {
        let max_key = sink.max_key_size().max(1);
        let mut part = Vec::new();
        let mut size = 0u64;
        for (col, page) in blob {
            let len = page.bytes.len() as u64;
            if !part.is_empty() && size + len > max_key {
                self.write_one(sink, std::mem::take(&mut part), merge)?;
                size = 0;
            }
            size += len;
            part.push((col, page));
        }
        if !part.is_empty() {
            self.write_one(sink, part, merge)?;
        }
        Ok(())
    }

    /// Writes the pages of `blob` as one payload.
    fn write_one(&mut self, sink: &mut dyn BlobSink, blob: Blob, merge: bool) -> Result<()> {
        let mut parts: Vec<&[u8]> = Vec::with_capacity(blob.len());
        let mut places = Vec::with_capacity(blob.len());
        // Pages of this blob by (length, xxh3-128): offset in the blob, data size.
        let mut here: HashMap<(usize, u128), (u64, u64)> = HashMap::new();
        let (mut size, mut packed) = (0u64, 0u64);
        for (_, page) in &blob {
            let key = (merge && page.checksum.is_some()).then(|| (page.bytes.len(), xxh3_128(&page.bytes)));
            if let Some(key) = key {
                if let Some(&l) = self.seen.get(&key) {
                    places.push(Place::Earlier(l));
                    continue;
                }
                if let Some(&(at, _)) = here.get(&key) {
                    places.push(Place::Here(at));
                    continue;
                }
                here.insert(key, (size, page.data_size));
            }
            places.push(Place::Here(size));
            parts.push(&page.bytes);
            size += page.bytes.len() as u64;
            packed += page.packed_size;
        }
        let offset = if parts.is_empty() { 0 } else { sink.write_blob(&parts, packed)? };
        self.written += size;
        for ((col, page), place) in blob.iter().zip(places) {
            let locator = match place {
                Place::Here(at) => Locator { offset: offset + at, size: page.data_size },
                Place::Earlier(l) => l,
            };
            if self.pages.len() <= *col {
                self.pages.resize_with(col + 1, Vec::new);
            }
            self.pages[*col].push(PageDescriptor {
                num_elements: page.num_elements,
                has_checksum: page.checksum.is_some(),
                locator,
            });
        }
        for (key, (at, size)) in here {
            self.seen.insert(key, Locator { offset: offset + at, size });
        }
        Ok(())
    }

    /// The cluster ends: the descriptors of its `columns` columns and the
    /// bytes written.
    pub fn finish(&mut self, columns: usize) -> (Vec<Vec<PageDescriptor>>, u64) {
        let mut pages = std::mem::take(&mut self.pages);
        pages.resize_with(columns, Vec::new);
        self.seen.clear();
        (pages, std::mem::take(&mut self.written))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use rntuple_container::write::{FileWriter, WriterOptions};

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

    fn write_keys(name: &str, b: &RecordBatch, options: WriteOptions, keys: WriterOptions) -> (Vec<u8>, u64) {
        let dir = std::env::temp_dir().join(format!("rntuple-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let mut file = FileWriter::create(&path, keys).unwrap();
        let mut w = RNTupleWriter::new(&mut file, "t", &b.schema(), &HashMap::new(), options).unwrap();
        w.write_batch(b).unwrap();
        let high_water = w.memory_use().high_water;
        w.close().unwrap();
        file.finish().unwrap();
        let read = RNTupleFile::open(&path).unwrap().rntuple("t").unwrap().read_all().unwrap();
        assert_eq!(&read, b, "{name} reads back");
        (std::fs::read(&path).unwrap(), high_water)
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
        let (one, streamed) = write("streamed-1.root", &b, options(1, false));
        // One cluster of 14 MB of compressed pages (random doubles hardly compress)...
        assert!(one.len() > 12_000_000, "{}", one.len());
        // ...while the writer held at most its page buffers, the compression
        // queue (at least 1 MiB, twice: before and after compression) and a
        // blob of streamed pages, not the cluster's pages.
        let bound = budget + 2 * (1 << 20) + 4 * max_page;
        assert!(streamed <= bound, "held {streamed} bytes, bound {bound}");
        // With compression threads too (the bytes are the same for any
        // number of threads: `bytes_do_not_depend_on_the_number_of_threads`).
        let (_, three) = write("streamed-3.root", &b, options(3, false));
        let bound3 = budget + 2 * 6 * max_page.max(1 << 19) + 4 * max_page;
        assert!(three <= bound3, "held {three} bytes with 3 threads, bound {bound3}");
        // Grouped by column, as ROOT's buffered sink: the cluster's pages are held.
        let (grouped, held) = write("grouped.root", &b, options(1, true));
        assert!(held > 12_000_000, "{held}");
        // Key headers of the blobs cost a little: one per max_page bytes.
        let extra = one.len() as f64 / grouped.len() as f64 - 1.0;
        assert!(extra.abs() < 0.005, "{} vs {}", one.len(), grouped.len());
    }

    #[test]
    fn streamed_blobs_stay_within_the_maximum_key_size() {
        // Pages of 1 KiB (uncompressed), blobs of at least that, keys of at
        // most 1500 bytes: a blob over it is cut into payloads of one key
        // each (a payload split over keys would move the pages after the
        // first key's end).
        let v: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| (i as f64).sin()).collect::<Vec<_>>()));
        let w: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| (i % 7) as f64).collect::<Vec<_>>()));
        let schema =
            Schema::new(vec![Field::new("v", DataType::Float64, false), Field::new("w", DataType::Float64, false)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![v, w]).unwrap();
        for compression in [0, 505] {
            let options = WriteOptions { compression, max_unzipped_page_size: 1024, ..Default::default() };
            let keys = WriterOptions { max_key_size: 1500, ..Default::default() };
            write_keys(&format!("small-keys-{compression}.root"), &b, options, keys);
        }
    }

    #[test]
    fn identical_pages_are_written_once_when_streamed() {
        let same: ArrayRef = Arc::new(Float64Array::from((0..20_000).map(|i| (i % 91) as f64).collect::<Vec<_>>()));
        let schema =
            Schema::new(vec![Field::new("a", DataType::Float64, false), Field::new("b", DataType::Float64, false)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![same.clone(), same]).unwrap();
        let options =
            |merge| WriteOptions { max_unzipped_page_size: 16 * 1024, same_page_merging: merge, ..Default::default() };
        let (merged, _) = write("merged.root", &b, options(true));
        let (unmerged, _) = write("unmerged.root", &b, options(false));
        let (grouped, _) =
            write("merged-grouped.root", &b, WriteOptions { group_pages_by_column: true, ..options(true) });
        // Column b's pages are column a's: merging saves about half the pages' bytes.
        assert!((merged.len() as f64) < 0.7 * unmerged.len() as f64, "{} vs {}", merged.len(), unmerged.len());
        assert!((merged.len() as f64 - grouped.len() as f64).abs() < 0.05 * grouped.len() as f64);
    }

    #[test]
    fn pages_larger_than_a_key_are_split_and_read_back() {
        // Pages of 4 KiB (uncompressed) and keys of at most 1000 bytes: every
        // page is split over keys, its first key written last (after the
        // other chunks), and the last page's first key ends the pages.
        let v: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| (i as f64).sin()).collect::<Vec<_>>()));
        let schema = Schema::new(vec![Field::new("v", DataType::Float64, false)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![v]).unwrap();
        for group in [false, true] {
            for compression in [0, 505] {
                let options = WriteOptions {
                    compression,
                    max_unzipped_page_size: 4096,
                    group_pages_by_column: group,
                    ..Default::default()
                };
                let keys = WriterOptions { max_key_size: 1000, ..Default::default() };
                write_keys(&format!("big-pages-{group}-{compression}.root"), &b, options, keys);
            }
        }
    }
}
