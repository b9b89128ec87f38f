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

use std::collections::HashMap;

use rntuple_format::model::{Locator, PageDescriptor};
use rntuple_format::Result;

use super::pages::ClusterColumn;
use super::BlobSink;

/// Writes the pages of one cluster; returns their descriptors per column
/// and the number of bytes written.
pub(crate) fn write_cluster_pages(
    sink: &mut dyn BlobSink,
    columns: &[ClusterColumn],
    merge: bool,
) -> Result<(Vec<Vec<PageDescriptor>>, u64)> {
    let max_key = sink.max_key_size().max(1);
    let mut out: Vec<Vec<PageDescriptor>> = columns
        .iter()
        .map(|c| {
            c.pages
                .iter()
                .map(|p| PageDescriptor {
                    num_elements: p.num_elements,
                    has_checksum: p.checksum.is_some(),
                    locator: Locator { offset: 0, size: p.data_size },
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

    let flush = |sink: &mut dyn BlobSink, batch: &mut Vec<(usize, usize)>, out: &mut Vec<Vec<PageDescriptor>>| {
        if batch.is_empty() {
            return Ok::<(), rntuple_format::Error>(());
        }
        let parts: Vec<&[u8]> = batch.iter().map(|&(c, p)| columns[c].pages[p].bytes.as_slice()).collect();
        let packed = batch.iter().map(|&(c, p)| columns[c].pages[p].packed_size).sum();
        let mut offset = sink.write_blob(&parts, packed)?;
        for &(c, p) in batch.iter() {
            out[c][p].locator.offset = offset;
            offset += columns[c].pages[p].bytes.len() as u64;
        }
        batch.clear();
        Ok(())
    };

    for (c, col) in columns.iter().enumerate() {
        for (p, page) in col.pages.iter().enumerate() {
            if merge {
                if let Some(sum) = page.checksum {
                    match first_with.get(&sum) {
                        Some(&(oc, op)) if columns[oc].pages[op].bytes == page.bytes => {
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
            let size = page.bytes.len() as u64;
            if batch_size > 0 && batch_size + size > max_key {
                flush(sink, &mut batch, &mut out)?;
                batch_size = 0;
            }
            written += size;
            if size > max_key {
                let offset = sink.write_blob(&[&page.bytes], page.packed_size)?;
                out[c][p].locator.offset = offset;
            } else {
                batch.push((c, p));
                batch_size += size;
            }
        }
    }
    flush(sink, &mut batch, &mut out)?;
    for ((c, p), (oc, op)) in aliases {
        out[c][p].locator = out[oc][op].locator;
    }
    Ok((out, written))
}
