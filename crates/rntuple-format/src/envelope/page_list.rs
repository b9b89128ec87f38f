//! The page list envelope, type 0x03 (RNTuple binary format 1.0, sections
//! "Page List Envelope", "Cluster Summary Record Frame", "Page Locations",
//! "Suppressed Columns"):
//!
//! ```text
//! envelope preamble (type 0x03, length)
//! u64 header checksum (xxh3-64)
//! list frame of cluster summary record frames:
//!     u64 first entry number, u64 (flags << 56 | number of entries)
//! list frame, one item per cluster:
//!     list frame, one item per physical column:
//!         list frame, one item per page (no record frame per page):
//!             i32 number of elements (negative: xxh3 follows the page), locator
//!         i64 element offset (negative: column suppressed in this cluster)
//!         u32 compression settings (absent when suppressed)
//! xxh3-64 checksum
//! ```

use super::{begin, finish, open};
use crate::constants::*;
use crate::error::{Error, Result};
use crate::frame::Reader;
use crate::locator::{read_locator, write_locator, MIN_LOCATOR_SIZE};
use crate::model::{ClusterSummary, ColumnPageRange, PageDescriptor, PageList};

/// Parses a whole uncompressed page list envelope.
pub fn parse_page_list(bytes: &[u8], verify_checksum: bool) -> Result<PageList> {
    let mut r = open(bytes, ENVELOPE_TYPE_PAGE_LIST, verify_checksum)?;
    let header_checksum = r.u64("header checksum")?;

    let (n_summaries, mut list) = r.list_frame(RECORD_FRAME_PREAMBLE_SIZE, "cluster summary list frame")?;
    let mut clusters = Vec::with_capacity(n_summaries as usize);
    for i in 0..n_summaries {
        let summary = parse_cluster_summary(&mut list).map_err(|e| e.within(&format!("cluster summary {i}")))?;
        clusters.push(summary);
    }

    let start = r.clone();
    let (n_clusters, mut top) = r.list_frame(LIST_FRAME_PREAMBLE_SIZE, "page location list frame")?;
    if n_clusters != n_summaries {
        return Err(start.out_of_spec(
            "page location list frame",
            format!("{n_clusters} clusters of page locations but {n_summaries} cluster summaries"),
        ));
    }
    let mut page_locations = Vec::with_capacity(n_clusters as usize);
    for i in 0..n_clusters {
        let columns = parse_cluster_pages(&mut top).map_err(|e| e.within(&format!("page locations of cluster {i}")))?;
        page_locations.push(columns);
    }
    Ok(PageList { header_checksum, clusters, page_locations })
}

fn parse_cluster_summary(list: &mut Reader<'_>) -> Result<ClusterSummary> {
    let mut f = list.record_frame("cluster summary record frame")?;
    let first_entry = f.u64("first entry number")?;
    let start = f.clone();
    let word = f.u64("number of entries and flags")?;
    let flags = (word >> 56) as u8;
    if flags & CLUSTER_FLAG_SHARDED != 0 {
        return Err(start.unsupported("cluster summary flags", "sharded clusters (cluster flag 0x01)"));
    }
    Ok(ClusterSummary { first_entry, num_entries: word & CLUSTER_MAX_ENTRIES, flags })
}

fn parse_cluster_pages(top: &mut Reader<'_>) -> Result<Vec<ColumnPageRange>> {
    // An inner list frame with its element offset takes at least 12 + 8 bytes.
    let (n_columns, mut outer) = top.list_frame(LIST_FRAME_PREAMBLE_SIZE + 8, "column list frame")?;
    let mut columns = Vec::with_capacity(n_columns as usize);
    for j in 0..n_columns {
        let range = parse_column_pages(&mut outer).map_err(|e| e.within(&format!("column {j}")))?;
        columns.push(range);
    }
    Ok(columns)
}

fn parse_column_pages(outer: &mut Reader<'_>) -> Result<ColumnPageRange> {
    let (n_pages, mut inner) = outer.list_frame(4 + MIN_LOCATOR_SIZE, "page list frame")?;
    let mut pages = Vec::with_capacity(n_pages as usize);
    for k in 0..n_pages {
        let page = (|| {
            let raw = inner.i32("number of elements")?;
            let locator = read_locator(&mut inner, "page locator")?;
            Ok(PageDescriptor { num_elements: raw.unsigned_abs(), has_checksum: raw < 0, locator })
        })()
        .map_err(|e: Error| e.within(&format!("page {k}")))?;
        pages.push(page);
    }
    let start = inner.clone();
    let element_offset = inner.i64("element offset")?;
    let compression = if element_offset < 0 {
        if n_pages > 0 {
            return Err(start.out_of_spec("element offset", format!("suppressed column lists {n_pages} pages")));
        }
        None
    } else {
        Some(inner.u32("compression settings")?)
    };
    Ok(ColumnPageRange { element_offset, compression, pages })
}

/// Serializes a page list envelope; returns its bytes and its checksum.
/// Suppressed columns (negative element offset) are written with
/// [`SUPPRESSED_COLUMN_MARKER`], no pages and no compression settings.
pub fn write_page_list(p: &PageList) -> Result<(Vec<u8>, u64)> {
    if p.clusters.len() != p.page_locations.len() {
        return Err(Error::invalid(format!(
            "{} cluster summaries but page locations for {} clusters",
            p.clusters.len(),
            p.page_locations.len()
        )));
    }
    let mut w = begin(ENVELOPE_TYPE_PAGE_LIST);
    w.u64(p.header_checksum);
    w.record_list(&p.clusters, |w, c| {
        if c.num_entries > CLUSTER_MAX_ENTRIES {
            return Err(Error::invalid(format!("cluster of {} entries exceeds 2^56", c.num_entries)));
        }
        w.u64(c.first_entry);
        w.u64((u64::from(c.flags) << 56) | c.num_entries);
        Ok(())
    })?;
    let top = w.begin_list(p.page_locations.len())?;
    for cluster in &p.page_locations {
        let outer = w.begin_list(cluster.len())?;
        for col in cluster {
            if col.is_suppressed() {
                let inner = w.begin_list(0)?;
                w.i64(SUPPRESSED_COLUMN_MARKER);
                w.end_frame(inner);
                continue;
            }
            let inner = w.begin_list(col.pages.len())?;
            for page in &col.pages {
                let n = i32::try_from(page.num_elements)
                    .map_err(|_| Error::invalid(format!("page of {} elements exceeds 2^31 - 1", page.num_elements)))?;
                w.i32(if page.has_checksum { -n } else { n });
                write_locator(&mut w, &page.locator);
            }
            w.i64(col.element_offset);
            w.u32(col.compression.unwrap_or(0));
            w.end_frame(inner);
        }
        w.end_frame(outer);
    }
    w.end_frame(top);
    finish(w)
}
