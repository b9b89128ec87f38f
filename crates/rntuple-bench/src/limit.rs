//! The codec limit: how long compression and decompression alone take for
//! the pages of a file (the floor of any writer or reader of it).
//!
//! The pages are taken from a written file with the descriptor's page lists
//! and decompressed (untimed) to the bytes the writer handed to the codec
//! (spec "Page List Envelope"). Then every page is compressed with the
//! codec call the writer makes (`rntuple_format::compression::compress`,
//! ROOT's framing: a 9-byte header per block, zstd at ROOT's level mapping)
//! and decompressed again into preallocated buffers, on `threads` threads
//! that each take every `threads`-th page.

use rntuple::RNTupleFile;
use rntuple_format::compression::{compress, decompress, decompress_into};
use rntuple_format::{ColumnSpec, Location};

use crate::usage::Stopwatch;
use crate::BenchResult;

/// Uncompressed bytes of every page of RNTuple `name` in `path` (pages
/// shared by same-page merging count once per reference, as a reader
/// decompresses them once per reference).
pub fn collect_pages(path: &str, name: &str) -> BenchResult<Vec<Vec<u8>>> {
    let file = RNTupleFile::open(path)?;
    let ntuple = file.rntuple(name)?;
    let desc = ntuple.descriptor();
    let max_key = ntuple.anchor().max_key_size;
    let root = file.root_file();
    let mut pages = Vec::new();
    for cluster in &desc.clusters {
        for (col, range) in cluster.columns.iter().enumerate() {
            if range.is_suppressed() {
                continue;
            }
            let cdesc = desc.columns.get(col).ok_or_else(|| format!("column {col} missing from the descriptor"))?;
            let spec = ColumnSpec::from_descriptor(cdesc)?;
            for page in &range.pages {
                let loc = page.locator;
                let raw = root.read_payload(loc.offset, loc.size, max_key)?;
                let n = spec.packed_size(u64::from(page.num_elements));
                let bytes = if raw.len() as u64 == n {
                    raw
                } else {
                    decompress(&raw, usize::try_from(n)?, &Location::new("page", Some(loc.offset)))?
                };
                pages.push(bytes);
            }
        }
    }
    Ok(pages)
}

/// Compressed pages of one thread, with their indices.
type Compressed = Vec<(usize, Vec<u8>)>;

/// Figures of one limit measurement.
#[derive(Debug, Clone)]
pub struct Limit {
    pub pages: usize,
    pub uncompressed_bytes: u64,
    pub compressed_bytes: u64,
    pub compress_wall: f64,
    pub compress_cpu: f64,
    pub decompress_wall: f64,
    pub decompress_cpu: f64,
}

/// Compresses and decompresses `pages` with ROOT compression `setting` on
/// `threads` threads.
pub fn measure(pages: &[Vec<u8>], setting: u32, threads: usize) -> BenchResult<Limit> {
    let threads = threads.max(1);
    let sw = Stopwatch::start()?;
    let parts: Vec<BenchResult<Compressed>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> BenchResult<Compressed> {
                    let mut out = Vec::new();
                    for (i, p) in pages.iter().enumerate().skip(t).step_by(threads) {
                        out.push((i, compress(p, setting)?));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("compression thread died".into()))).collect()
    });
    let (compress_wall, compress_cpu) = sw.elapsed()?;
    let mut compressed: Vec<Vec<u8>> = vec![Vec::new(); pages.len()];
    for part in parts {
        for (i, c) in part? {
            compressed[i] = c;
        }
    }
    let compressed_bytes = compressed.iter().map(|c| c.len() as u64).sum();
    let mut outputs: Vec<Vec<u8>> = pages.iter().map(|p| vec![0u8; p.len()]).collect();
    let sw = Stopwatch::start()?;
    let results: Vec<BenchResult<()>> = std::thread::scope(|s| {
        let mut slots: Vec<Vec<(usize, &mut Vec<u8>)>> = (0..threads).map(|_| Vec::new()).collect();
        for (i, o) in outputs.iter_mut().enumerate() {
            slots[i % threads].push((i, o));
        }
        let compressed = &compressed;
        let handles: Vec<_> = slots
            .into_iter()
            .map(|slot| {
                s.spawn(move || -> BenchResult<()> {
                    for (i, out) in slot {
                        decompress_into(&compressed[i], out, &Location::new("limit page", None))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("decompression thread died".into()))).collect()
    });
    let (decompress_wall, decompress_cpu) = sw.elapsed()?;
    for r in results {
        r?;
    }
    if outputs.iter().zip(pages).any(|(o, p)| o != p) {
        return Err("limit: a page did not decompress to its original bytes".into());
    }
    Ok(Limit {
        pages: pages.len(),
        uncompressed_bytes: pages.iter().map(|p| p.len() as u64).sum(),
        compressed_bytes,
        compress_wall,
        compress_cpu,
        decompress_wall,
        decompress_cpu,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_pages_on_two_threads() {
        let pages: Vec<Vec<u8>> = (0..5u8).map(|i| (0..4000u32).map(|j| (j % 17) as u8 ^ i).collect()).collect();
        let l = measure(&pages, 505, 2).unwrap();
        assert_eq!(l.pages, 5);
        assert_eq!(l.uncompressed_bytes, 20_000);
        assert!(l.compressed_bytes < 20_000);
    }
}
