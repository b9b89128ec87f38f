//! Where the pages of a cluster go in the file.
//!
//! As ROOT's buffered sink does (`RPageSinkBuf::CommitCluster`,
//! `RPagePersistentSink::CommitSealedPageV`, `RPageSinkFile::CommitSealedPageVImpl`):
//!
//! * pages are written grouped by column, in column order, each column's
//!   pages in order;
//! * with same-page merging, a page whose checksum and bytes equal those of
//!   an earlier page of the same cluster is not written again; its locator
//!   points at the earlier page (spec "Page Locations": locators may
//!   reference identical byte ranges);
//! * consecutive pages are coalesced into one blob (one `RBlob` key) as long
//!   as the blob stays within the maximum key size; a page larger than that
//!   is written alone (and split over several keys by the container).
//!
//! A page's blob bytes include its checksum; its locator size does not.
//!
//! The pages come from a [`PageSource`]: held in memory, or spilled to a
//! scratch file as they were sealed (the default writer, `writer/stream.rs`);
//! the layout, and so the bytes, are the same.

use std::collections::HashMap;

use rntuple_format::model::{Locator, PageDescriptor};
use rntuple_format::Result;

use super::pages::ClusterColumn;
use super::BlobSink;

/// What the layout needs to know of a sealed page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageMeta {
    pub num_elements: u32,
    /// Bytes written: the compressed page and its checksum.
    pub len: u64,
    /// Size of the compressed page alone: what the locator records.
    pub data_size: u64,
    /// Size of the uncompressed page.
    pub packed_size: u64,
    pub checksum: Option<u64>,
}

/// Where the sealed pages of a cluster are: held in memory
/// ([`HeldPages`]), or spilled to a scratch file (`writer/stream.rs`). One
/// layout ([`write_pages`]) for both, so that both write the same bytes.
pub(crate) trait PageSource {
    fn num_columns(&self) -> usize;
    fn num_pages(&self, col: usize) -> usize;
    fn meta(&self, col: usize, page: usize) -> PageMeta;
    /// Whether two pages have the same bytes (compared byte for byte).
    fn same_bytes(&mut self, a: (usize, usize), b: (usize, usize)) -> Result<bool>;
    /// Writes `pages` back to back as one payload; returns its offset.
    fn write_blob(&mut self, sink: &mut dyn BlobSink, pages: &[(usize, usize)], packed: u64) -> Result<u64>;
}

/// The pages of a cluster held in memory ([`super::WriteOptions::group_pages_by_column`],
/// fill contexts of a parallel writer).
pub(crate) struct HeldPages<'a>(pub &'a [ClusterColumn]);

impl PageSource for HeldPages<'_> {
    fn num_columns(&self) -> usize {
        self.0.len()
    }
    fn num_pages(&self, col: usize) -> usize {
        self.0[col].pages.len()
    }
    fn meta(&self, col: usize, page: usize) -> PageMeta {
        let p = &self.0[col].pages[page];
        PageMeta {
            num_elements: p.num_elements,
            len: p.bytes.len() as u64,
            data_size: p.data_size,
            packed_size: p.packed_size,
            checksum: p.checksum,
        }
    }
    fn same_bytes(&mut self, (ac, ap): (usize, usize), (bc, bp): (usize, usize)) -> Result<bool> {
        Ok(self.0[ac].pages[ap].bytes == self.0[bc].pages[bp].bytes)
    }
    fn write_blob(&mut self, sink: &mut dyn BlobSink, pages: &[(usize, usize)], packed: u64) -> Result<u64> {
        let parts: Vec<&[u8]> = pages.iter().map(|&(c, p)| self.0[c].pages[p].bytes.as_slice()).collect();
        sink.write_blob(&parts, packed)
    }
}

/// Writes the pages of one cluster held in memory; returns their
/// descriptors per column and the number of bytes written.
pub(crate) fn write_cluster_pages(
    sink: &mut dyn BlobSink,
    columns: &[ClusterColumn],
    merge: bool,
) -> Result<(Vec<Vec<PageDescriptor>>, u64)> {
    write_pages(sink, &mut HeldPages(columns), merge)
}

/// Writes the pages of one cluster from `src`; returns their descriptors
/// per column and the number of bytes written.
pub(crate) fn write_pages(
    sink: &mut dyn BlobSink,
    src: &mut dyn PageSource,
    merge: bool,
) -> Result<(Vec<Vec<PageDescriptor>>, u64)> {
    let max_key = sink.max_key_size().max(1);
    let mut out: Vec<Vec<PageDescriptor>> = (0..src.num_columns())
        .map(|c| {
            (0..src.num_pages(c))
                .map(|p| {
                    let m = src.meta(c, p);
                    PageDescriptor {
                        num_elements: m.num_elements,
                        has_checksum: m.checksum.is_some(),
                        locator: Locator { offset: 0, size: m.data_size },
                    }
                })
                .collect()
        })
        .collect();
    // (column, page) of the first page with a given checksum.
    let mut first_with: HashMap<u64, (usize, usize)> = HashMap::new();
    // Pages that alias an earlier one: (column, page) -> (column, page).
    let mut aliases: Vec<((usize, usize), (usize, usize))> = Vec::new();
    let mut batch: Vec<(usize, usize)> = Vec::new();
    let mut batch_size = 0u64;
    let mut written = 0u64;

    let flush = |sink: &mut dyn BlobSink,
                 src: &mut dyn PageSource,
                 batch: &mut Vec<(usize, usize)>,
                 out: &mut Vec<Vec<PageDescriptor>>| {
        if batch.is_empty() {
            return Ok::<(), rntuple_format::Error>(());
        }
        let packed = batch.iter().map(|&(c, p)| src.meta(c, p).packed_size).sum();
        let mut offset = src.write_blob(sink, batch, packed)?;
        for &(c, p) in batch.iter() {
            out[c][p].locator.offset = offset;
            offset += src.meta(c, p).len;
        }
        batch.clear();
        Ok(())
    };

    for c in 0..src.num_columns() {
        for p in 0..src.num_pages(c) {
            let page = src.meta(c, p);
            if merge {
                if let Some(sum) = page.checksum {
                    match first_with.get(&sum) {
                        // Equal checksums are a candidate only: the bytes decide.
                        Some(&(oc, op)) if src.meta(oc, op).len == page.len && src.same_bytes((oc, op), (c, p))? => {
                            aliases.push(((c, p), (oc, op)));
                            continue;
                        }
                        Some(_) => {}
                        None => {
                            first_with.insert(sum, (c, p));
                        }
                    }
                }
            }
            let size = page.len;
            if batch_size > 0 && batch_size + size > max_key {
                flush(sink, src, &mut batch, &mut out)?;
                batch_size = 0;
            }
            written += size;
            if size > max_key {
                let offset = src.write_blob(sink, &[(c, p)], page.packed_size)?;
                out[c][p].locator.offset = offset;
            } else {
                batch.push((c, p));
                batch_size += size;
            }
        }
    }
    flush(sink, src, &mut batch, &mut out)?;
    for ((c, p), (oc, op)) in aliases {
        out[c][p].locator = out[oc][op].locator;
    }
    Ok((out, written))
}
