//! Sealed pages on their way to the file before their cluster is committed.
//!
//! A writer that streams pages (every writer but the fill contexts of a
//! parallel writer) does not hold a cluster's compressed pages until the
//! cluster is committed: the pages are cut, in the order they are applied
//! (the order they were sealed, whatever the number of compression
//! threads), into blobs of at least `target` bytes, and a blob is handed
//! out to be written as soon as it is complete. The cuts depend on the
//! sequence of pages only, not on when the writer asks for them, so the
//! bytes written do not depend on the number of threads.
//!
//! The writer spills the blobs to a scratch file and copies the cluster's
//! pages into the output at its commit, grouped by column as ROOT's
//! buffered sink lays them out (`writer/stream.rs`, `layout`).

use super::{Columns, SealedPage};

/// The largest buffer copying spilled pages into the output: 1 MiB (a
/// cluster of 128 MiB is 128 pieces). It exists during a commit only (when
/// the page buffers are back at their initial sizes), but is counted as
/// held throughout, so that the budget covers it.
const SPILL_BUFFER: u64 = 1 << 20;

/// Pages applied and not yet handed out, cut into blobs.
#[derive(Debug)]
pub(crate) struct Ready {
    /// (column, page), in the order they were applied.
    pages: Vec<(usize, SealedPage)>,
    /// Page counts of the complete blobs at the front of `pages`.
    cuts: Vec<usize>,
    /// Pages and bytes after the last cut.
    open_pages: usize,
    open_bytes: u64,
    /// A blob is complete once it holds this many bytes.
    target: u64,
}

/// The pages of one blob, in order, with their columns.
pub(crate) type Blob = Vec<(usize, SealedPage)>;

impl Ready {
    pub fn new(target: u64) -> Self {
        Ready { pages: Vec::new(), cuts: Vec::new(), open_pages: 0, open_bytes: 0, target: target.max(1) }
    }

    pub fn push(&mut self, col: usize, page: SealedPage) {
        self.open_bytes += page.bytes.len() as u64;
        self.open_pages += 1;
        self.pages.push((col, page));
        if self.open_bytes >= self.target {
            self.cuts.push(self.open_pages);
            self.open_pages = 0;
            self.open_bytes = 0;
        }
    }

    /// Takes the complete blobs (`all`: and the pages after them as a last,
    /// shorter blob; at the end of a cluster); returns them with their bytes.
    pub fn take(&mut self, all: bool) -> (Vec<Blob>, u64) {
        if all && self.open_pages > 0 {
            self.cuts.push(self.open_pages);
            self.open_pages = 0;
            self.open_bytes = 0;
        }
        let n: usize = self.cuts.iter().sum();
        let rest = self.pages.split_off(n);
        let mut pages = std::mem::replace(&mut self.pages, rest).into_iter();
        let bytes = pages.as_slice().iter().map(|(_, p)| p.bytes.capacity() as u64).sum();
        let blobs = self.cuts.drain(..).map(|k| pages.by_ref().take(k).collect()).collect();
        (blobs, bytes)
    }
}

impl Columns {
    /// Streams the compressed pages: from now on they are handed out in
    /// blobs of at least the largest page's size as they are sealed
    /// ([`Columns::take_blobs`]) instead of with their cluster, to be
    /// spilled to a scratch file. Returns the size of the buffer that copies
    /// them into the file at a commit, counted as held from now on: the
    /// largest page, at least 64 KiB without a memory budget, at most
    /// [`SPILL_BUFFER`] (4 KiB to 1 MiB).
    pub fn stream_pages(&mut self) -> usize {
        self.ready = Some(Ready::new(self.shares.max_page));
        let floor = if self.shares.total == 0 { 64 << 10 } else { 4 << 10 };
        let chunk = self.shares.max_page.max(floor).min(SPILL_BUFFER);
        self.spill_buffer = chunk;
        self.note(0);
        chunk as usize
    }

    /// With streamed pages: the complete blobs, in order (`all`: and the
    /// rest, at the end of a cluster). They no longer count as held.
    pub fn take_blobs(&mut self, all: bool) -> Vec<Blob> {
        let Some(ready) = &mut self.ready else { return Vec::new() };
        let (blobs, bytes) = ready.take(all);
        self.sealed_bytes -= bytes;
        blobs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(len: usize) -> SealedPage {
        SealedPage {
            num_elements: 1,
            bytes: vec![0; len],
            data_size: len as u64,
            packed_size: len as u64,
            checksum: None,
        }
    }

    #[test]
    fn blobs_are_cut_by_the_page_sequence_not_by_when_they_are_taken() {
        let sizes = [400, 300, 500, 100, 900, 50, 50, 700];
        // Taken after every page, or only at the end: the same cuts.
        let cols = |blobs: Vec<Blob>| -> Vec<Vec<usize>> {
            blobs.iter().map(|b| b.iter().map(|(c, _)| *c).collect()).collect()
        };
        let mut early = Ready::new(1000);
        let mut blobs_early = Vec::new();
        for (i, &s) in sizes.iter().enumerate() {
            early.push(i, page(s));
            blobs_early.extend(cols(early.take(false).0));
        }
        let (last, bytes) = early.take(true);
        assert_eq!(bytes, 50 + 50 + 700);
        blobs_early.extend(cols(last));
        // 400+300+500 >= 1000, 100+900 >= 1000, then the short rest.
        assert_eq!(blobs_early, vec![vec![0, 1, 2], vec![3, 4], vec![5, 6, 7]]);

        let mut late = Ready::new(1000);
        for (i, &s) in sizes.iter().enumerate() {
            late.push(i, page(s));
        }
        let (first, bytes) = late.take(false);
        assert_eq!(bytes, 2200);
        assert_eq!(cols(first), vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(cols(late.take(true).0), vec![vec![5, 6, 7]]);
        assert!(late.take(true).0.is_empty());
    }
}
