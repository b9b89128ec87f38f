//! Parking: the elements of open pages moved out of memory into an
//! anonymous scratch file, and read back when their page is sealed.
//!
//! ROOT lets a column's page grow to `max_unzipped_page_size` while the page
//! buffers of all columns stay within the page buffer budget (256 MiB by
//! default); that fixes where pages end, and so the bytes of the file. This
//! writer keeps the same page boundaries, but holds at most
//! `page_buffer_memory` bytes of page buffers in memory: when a buffer must
//! grow beyond that, the largest buffers' elements are appended to a scratch
//! file (raw, little-endian, a few KiB at a time) and their buffers start
//! small again. Sealing a page reads its parked elements back in front of
//! those still in memory. The pages, and so the file, are the same as if
//! everything had stayed in memory; the cost is one write and one read of
//! the parked elements through the page cache.
//!
//! The scratch file is created beside a local output (else in `$TMPDIR`)
//! with the first parked elements, and starts over whenever no parked
//! elements are left (at the latest when a cluster ends).

use std::path::PathBuf;

use rntuple_format::column::ColumnValues;
use rntuple_format::{Error, Result};

use super::super::scratch::Scratch;

/// Elements moved or read at once: the transient buffer is at most this
/// many elements of 12 bytes.
const PIECE: usize = 8192;

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
    buf: Vec<u8>,
    /// Elements written and read back, for tests and reports.
    pub parked_elements: u64,
}

impl Parking {
    /// Appends the elements of `values` to the scratch file.
    pub fn park(&mut self, values: &ColumnValues) -> Result<Chunk> {
        let scratch = match &mut self.scratch {
            Some(s) => s,
            none => none.insert(
                Scratch::create(self.dir.as_deref())
                    .map_err(|e| Error::io("creating the scratch file of the parked page buffers", e))?,
            ),
        };
        let at = scratch.len();
        let n = values.len();
        let mut start = 0;
        while start < n {
            let end = (start + PIECE).min(n);
            self.buf.clear();
            encode(values, start..end, &mut self.buf);
            scratch.append(&self.buf).map_err(|e| Error::io("parking page buffer elements in the scratch file", e))?;
            start = end;
        }
        self.live += 1;
        self.parked_elements += n as u64;
        Ok(Chunk { at, elements: n })
    }

    /// Appends the elements of `chunks` (parked from buffers like `into`) to
    /// `into`, in order; the scratch file starts over when none is left.
    pub fn unpark(&mut self, chunks: &[Chunk], into: &mut ColumnValues) -> Result<()> {
        // Parked elements take their in-memory size (bools a byte).
        let width = into.element_size() as u64;
        for chunk in chunks {
            let scratch =
                self.scratch.as_ref().ok_or_else(|| Error::internal("parked page elements without a scratch file"))?;
            let mut done = 0;
            while done < chunk.elements {
                let take = (chunk.elements - done).min(PIECE);
                self.buf.resize(take * width as usize, 0);
                scratch
                    .read_at(chunk.at + done as u64 * width, &mut self.buf)
                    .map_err(|e| Error::io("reading parked page buffer elements back from the scratch file", e))?;
                decode(&self.buf, into);
                done += take;
            }
            self.live -= 1;
        }
        if self.live == 0 {
            if let Some(s) = &mut self.scratch {
                s.reset();
            }
        }
        Ok(())
    }
}

fn put<T: Copy, const N: usize>(v: &[T], out: &mut Vec<u8>, bytes: impl Fn(T) -> [u8; N]) {
    let start = out.len();
    out.resize(start + v.len() * N, 0);
    for (dst, &x) in out[start..].chunks_exact_mut(N).zip(v) {
        dst.copy_from_slice(&bytes(x));
    }
}

fn take<T, const N: usize>(b: &[u8], v: &mut Vec<T>, from: impl Fn([u8; N]) -> T) {
    v.extend(b.chunks_exact(N).map(|c| from(c.try_into().expect("chunks of N bytes"))));
}

/// Appends elements `r` of `values` to `out`, little-endian.
fn encode(values: &ColumnValues, r: std::ops::Range<usize>, out: &mut Vec<u8>) {
    use ColumnValues as V;
    match values {
        V::Bool(v) => out.extend(v[r].iter().map(|&b| b as u8)),
        V::I8(v) => put(&v[r], out, i8::to_le_bytes),
        V::U8(v) => out.extend_from_slice(&v[r]),
        V::I16(v) => put(&v[r], out, i16::to_le_bytes),
        V::U16(v) => put(&v[r], out, u16::to_le_bytes),
        V::I32(v) => put(&v[r], out, i32::to_le_bytes),
        V::U32(v) => put(&v[r], out, u32::to_le_bytes),
        V::I64(v) => put(&v[r], out, i64::to_le_bytes),
        V::U64(v) | V::Index(v) => put(&v[r], out, u64::to_le_bytes),
        V::F32(v) => put(&v[r], out, f32::to_le_bytes),
        V::F64(v) => put(&v[r], out, f64::to_le_bytes),
        V::Switch { index, tag } => {
            for (i, t) in index[r.clone()].iter().zip(&tag[r]) {
                out.extend_from_slice(&i.to_le_bytes());
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
    }
}

/// Appends the elements encoded in `b` to `into`.
fn decode(b: &[u8], into: &mut ColumnValues) {
    use ColumnValues as V;
    match into {
        V::Bool(v) => v.extend(b.iter().map(|&x| x != 0)),
        V::I8(v) => take(b, v, i8::from_le_bytes),
        V::U8(v) => v.extend_from_slice(b),
        V::I16(v) => take(b, v, i16::from_le_bytes),
        V::U16(v) => take(b, v, u16::from_le_bytes),
        V::I32(v) => take(b, v, i32::from_le_bytes),
        V::U32(v) => take(b, v, u32::from_le_bytes),
        V::I64(v) => take(b, v, i64::from_le_bytes),
        V::U64(v) | V::Index(v) => take(b, v, u64::from_le_bytes),
        V::F32(v) => take(b, v, f32::from_le_bytes),
        V::F64(v) => take(b, v, f64::from_le_bytes),
        V::Switch { index, tag } => {
            for c in b.chunks_exact(12) {
                index.push(u64::from_le_bytes(c[..8].try_into().expect("8 bytes")));
                tag.push(u32::from_le_bytes(c[8..].try_into().expect("4 bytes")));
            }
        }
    }
}

/// Appends the elements of `from` to `into` (buffers of the same column).
pub(crate) fn append(into: &mut ColumnValues, from: &ColumnValues) -> Result<()> {
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
            // Two chunks of the same page, with more than one piece each.
            let mut big = v.clone();
            for _ in 0..12 {
                let copy = big.clone();
                append(&mut big, &copy).unwrap();
            }
            let a = p.park(&big).unwrap();
            let b = p.park(v).unwrap();
            let mut back = match v {
                ColumnValues::Switch { .. } => ColumnValues::Switch { index: vec![], tag: vec![] },
                _ => ColumnValues::for_column(column_type_of(v)).unwrap(),
            };
            p.unpark(&[a, b], &mut back).unwrap();
            let mut expected = big.clone();
            append(&mut expected, v).unwrap();
            assert_eq!(back, expected, "{}", v.kind());
        }
        assert!(append(&mut ColumnValues::U8(vec![]), &ColumnValues::F32(vec![1.0])).is_err());
    }

    fn column_type_of(v: &ColumnValues) -> rntuple_format::model::ColumnType {
        use rntuple_format::model::ColumnType as T;
        match v {
            ColumnValues::Bool(_) => T::Bit,
            ColumnValues::I8(_) => T::Int8,
            ColumnValues::U8(_) => T::UInt8,
            ColumnValues::I16(_) => T::Int16,
            ColumnValues::U16(_) => T::UInt16,
            ColumnValues::I32(_) => T::Int32,
            ColumnValues::U32(_) => T::UInt32,
            ColumnValues::I64(_) => T::Int64,
            ColumnValues::U64(_) => T::UInt64,
            ColumnValues::F32(_) => T::Real32,
            ColumnValues::F64(_) => T::Real64,
            ColumnValues::Index(_) => T::Index64,
            ColumnValues::Switch { .. } => T::Switch,
        }
    }
}
