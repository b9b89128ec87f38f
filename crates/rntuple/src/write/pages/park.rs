//! Parking: the elements of open pages moved out of memory into an
//! anonymous scratch file, and read back when their page is sealed.
//!
//! ROOT lets a column's page grow to `max_unzipped_page_size` while the page
//! buffers of all columns stay within the page buffer budget (256 MiB by
//! default); that fixes where pages end, and so the bytes of the file. This
//! writer keeps the same page boundaries, but holds at most
//! `page_buffer_memory` bytes of page buffers in memory: when a buffer must
//! grow beyond that, the largest buffers' elements are appended to a scratch
//! file (their bytes as they are in memory, written from the buffer
//! itself) and their buffers start small again. Sealing a page reads its parked elements back in front of
//! those still in memory. The pages, and so the file, are the same as if
//! everything had stayed in memory; the cost is one write and one read of
//! the parked elements through the page cache.
//!
//! The scratch file is created beside a local output (else in `$TMPDIR`)
//! with the first parked elements, and starts over whenever no parked
//! elements are left (at the latest when a cluster ends).

use std::path::PathBuf;

use rntuple_format::alloc;
use rntuple_format::column::ColumnValues;
use rntuple_format::{Error, Result};

use super::super::scratch::Scratch;

/// Parked elements of one page: where they are in the scratch file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk {
    at: u64,
    elements: usize,
}

/// The scratch file of the parked elements of one writer's open pages.
#[derive(Debug, Default)]
pub(crate) struct Parking {
    scratch: Option<Scratch>,
    /// Where to create the scratch file; `None`: `$TMPDIR`.
    pub dir: Option<PathBuf>,
    /// Chunks written and not yet read back.
    live: usize,
    /// Elements written and read back, for tests and reports.
    pub parked_elements: u64,
}

impl Parking {
    /// Appends the elements of `values` to the scratch file: their bytes as
    /// they are in memory (the file is read back by this process only), no
    /// copy; a switch column's indices, then its tags.
    pub fn park(&mut self, values: &ColumnValues) -> Result<Chunk> {
        let scratch = match &mut self.scratch {
            Some(s) => s,
            none => none.insert(
                Scratch::create(self.dir.as_deref())
                    .map_err(|e| Error::io("creating the scratch file of the parked page buffers", e))?,
            ),
        };
        let at = scratch.len();
        for part in parts(values) {
            scratch.append(part).map_err(|e| Error::io("parking page buffer elements in the scratch file", e))?;
        }
        self.live += 1;
        self.parked_elements += values.len() as u64;
        Ok(Chunk { at, elements: values.len() })
    }

    /// The elements of `chunks` (parked from buffers of `rest`'s column), in
    /// order, then those of `rest`: one buffer, read straight from the
    /// scratch file into its place. The scratch file starts over when no
    /// parked element is left.
    pub fn unpark(&mut self, chunks: &[Chunk], rest: &ColumnValues) -> Result<ColumnValues> {
        use ColumnValues as V;
        let parked: usize = chunks.iter().map(|c| c.elements).sum();
        let total = parked + rest.len();
        let what = || format!("a page of {total} elements read back from the scratch file");
        let whole = match rest {
            V::Bool(v) => {
                // A bool's bytes are 0 or 1: read as bytes, then checked.
                let mut bytes: Vec<u8> = alloc::try_zeroed(parked, what)?;
                self.read(chunks, &mut bytes, [1, 0])?;
                let mut out: Vec<bool> = alloc::try_with_capacity(total, what)?;
                out.extend(bytes.iter().map(|&b| b != 0));
                out.extend_from_slice(v);
                V::Bool(out)
            }
            V::I8(v) => V::I8(self.gather(chunks, v, what)?),
            V::U8(v) => V::U8(self.gather(chunks, v, what)?),
            V::I16(v) => V::I16(self.gather(chunks, v, what)?),
            V::U16(v) => V::U16(self.gather(chunks, v, what)?),
            V::I32(v) => V::I32(self.gather(chunks, v, what)?),
            V::U32(v) => V::U32(self.gather(chunks, v, what)?),
            V::I64(v) => V::I64(self.gather(chunks, v, what)?),
            V::U64(v) => V::U64(self.gather(chunks, v, what)?),
            V::F32(v) => V::F32(self.gather(chunks, v, what)?),
            V::F64(v) => V::F64(self.gather(chunks, v, what)?),
            V::Index(v) => V::Index(self.gather(chunks, v, what)?),
            V::Switch { index, tag } => {
                let mut i: Vec<u64> = alloc::try_zeroed(total, what)?;
                let mut t: Vec<u32> = alloc::try_zeroed(total, what)?;
                self.read(chunks, bytemuck::cast_slice_mut(&mut i[..parked]), [8, 0])?;
                self.read(chunks, bytemuck::cast_slice_mut(&mut t[..parked]), [4, 8])?;
                i[parked..].copy_from_slice(index);
                t[parked..].copy_from_slice(tag);
                V::Switch { index: i, tag: t }
            }
        };
        self.live -= chunks.len();
        if self.live == 0 {
            if let Some(s) = &mut self.scratch {
                s.reset();
            }
        }
        Ok(whole)
    }

    /// The parked elements of `chunks`, then `rest`, in one vector.
    fn gather<T: bytemuck::Pod>(&self, chunks: &[Chunk], rest: &[T], what: impl Fn() -> String) -> Result<Vec<T>> {
        let parked: usize = chunks.iter().map(|c| c.elements).sum();
        let mut out: Vec<T> = alloc::try_zeroed(parked + rest.len(), what)?;
        self.read(chunks, bytemuck::cast_slice_mut(&mut out[..parked]), [std::mem::size_of::<T>() as u64, 0])?;
        out[parked..].copy_from_slice(rest);
        Ok(out)
    }

    /// Reads one part of each chunk into `out`, one after the other: `[width,
    /// skip]`: the part's bytes per element, and the bytes per element of
    /// the parts before it in the chunk.
    fn read(&self, chunks: &[Chunk], out: &mut [u8], [width, skip]: [u64; 2]) -> Result<()> {
        let scratch =
            self.scratch.as_ref().ok_or_else(|| Error::internal("parked page elements without a scratch file"))?;
        let mut pos = 0;
        for chunk in chunks {
            let n = (chunk.elements as u64 * width) as usize;
            scratch
                .read_at(chunk.at + chunk.elements as u64 * skip, &mut out[pos..pos + n])
                .map_err(|e| Error::io("reading parked page buffer elements back from the scratch file", e))?;
            pos += n;
        }
        Ok(())
    }
}

/// The bytes of `values` as they are in memory: one part, or a switch
/// column's indices and tags.
fn parts(values: &ColumnValues) -> Vec<&[u8]> {
    use bytemuck::cast_slice as b;
    use ColumnValues as V;
    match values {
        V::Bool(v) => vec![b(v)],
        V::I8(v) => vec![b(v)],
        V::U8(v) => vec![v],
        V::I16(v) => vec![b(v)],
        V::U16(v) => vec![b(v)],
        V::I32(v) => vec![b(v)],
        V::U32(v) => vec![b(v)],
        V::I64(v) => vec![b(v)],
        V::U64(v) | V::Index(v) => vec![b(v)],
        V::F32(v) => vec![b(v)],
        V::F64(v) => vec![b(v)],
        V::Switch { index, tag } => vec![b(index), b(tag)],
    }
}

/// Appends the elements of `from` to `into` (buffers of the same column):
/// what unparking must give, for the tests.
#[cfg(test)]
fn append(into: &mut ColumnValues, from: &ColumnValues) -> Result<()> {
    use ColumnValues as V;
    match (into, from) {
        (V::Bool(a), V::Bool(b)) => a.extend_from_slice(b),
        (V::I8(a), V::I8(b)) => a.extend_from_slice(b),
        (V::U8(a), V::U8(b)) => a.extend_from_slice(b),
        (V::I16(a), V::I16(b)) => a.extend_from_slice(b),
        (V::U16(a), V::U16(b)) => a.extend_from_slice(b),
        (V::I32(a), V::I32(b)) => a.extend_from_slice(b),
        (V::U32(a), V::U32(b)) => a.extend_from_slice(b),
        (V::I64(a), V::I64(b)) => a.extend_from_slice(b),
        (V::U64(a), V::U64(b)) | (V::Index(a), V::Index(b)) => a.extend_from_slice(b),
        (V::F32(a), V::F32(b)) => a.extend_from_slice(b),
        (V::F64(a), V::F64(b)) => a.extend_from_slice(b),
        (V::Switch { index: a, tag: t }, V::Switch { index: b, tag: u }) => {
            a.extend_from_slice(b);
            t.extend_from_slice(u);
        }
        (a, b) => {
            return Err(Error::internal(format!("appending {} elements to a {} page buffer", b.kind(), a.kind())))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parked_elements_come_back_in_order_for_every_kind() {
        let kinds = [
            ColumnValues::Bool(vec![true, false, true]),
            ColumnValues::I8(vec![-1, 2, -3]),
            ColumnValues::U8(vec![1, 2, 255]),
            ColumnValues::I16(vec![-300, 2, 3]),
            ColumnValues::U16(vec![60000, 2, 3]),
            ColumnValues::I32(vec![-70000, 2, 3]),
            ColumnValues::U32(vec![4_000_000_000, 2, 3]),
            ColumnValues::I64(vec![i64::MIN, 2, 3]),
            ColumnValues::U64(vec![u64::MAX, 2, 3]),
            ColumnValues::F32(vec![1.5, -0.0, f32::INFINITY]),
            ColumnValues::F64(vec![1e300, -2.5, 3.0]),
            ColumnValues::Index(vec![0, 10, 20]),
            ColumnValues::Switch { index: vec![0, 5, 1], tag: vec![1, 2, 1] },
        ];
        let mut p = Parking::default();
        for v in &kinds {
            // Three chunks of the same page, then the elements still in memory.
            let mut big = v.clone();
            for _ in 0..12 {
                let copy = big.clone();
                append(&mut big, &copy).unwrap();
            }
            let a = p.park(&big).unwrap();
            let b = p.park(v).unwrap();
            let c = p.park(v).unwrap();
            let back = p.unpark(&[a, b, c], v).unwrap();
            let mut expected = big.clone();
            append(&mut expected, v).unwrap();
            append(&mut expected, v).unwrap();
            append(&mut expected, v).unwrap();
            assert_eq!(back, expected, "{}", v.kind());
        }
    }
}
