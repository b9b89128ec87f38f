//! A streamer field's [`Encoder`] with the columns it streamed last
//! ([`Streamed`]), for the writer.

use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::Array;
use arrow_data::ArrayData;

use super::buffer::Fail;
use super::encode::Encoder;

/// An [`Encoder`] and the columns it streamed last.
///
/// The writer looks at a batch's entries several times — checking the
/// batch, sizing the entries that fit in the cluster (a bisection), then
/// appending them — and a streamer field's entries have no size before they
/// are streamed. So a whole column is streamed once and the later looks take
/// their ranges from that: the column's [`ArrayData`] is held with its
/// bytes, which keeps its buffers alive, so the same buffer addresses mean
/// the same values (Arrow buffers are immutable). The last [`MEMO`] columns
/// are kept (parallel fill contexts share the encoder).
pub struct Streamed {
    pub encoder: Encoder,
    memo: Mutex<Vec<(ArrayData, Arc<Encoded>)>>,
}

/// Columns a [`Streamed`] keeps.
const MEMO: usize = 2;

impl std::ops::Deref for Streamed {
    type Target = Encoder;
    fn deref(&self) -> &Encoder {
        &self.encoder
    }
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed").field("encoder", &self.encoder).finish_non_exhaustive()
    }
}

/// A column streamed: its bytes, and the end of each entry in them.
#[derive(Debug)]
pub struct Encoded {
    bytes: Vec<u8>,
    ends: Vec<u64>,
}

/// The streamed entries `[a, b)` of a column.
#[derive(Debug)]
pub enum Entries {
    /// A range of a whole column streamed once.
    Of(Arc<Encoded>, usize, usize),
    /// The range streamed on its own (a column that fails as a whole).
    Own(Encoded),
}

impl Entries {
    fn parts(&self) -> (&Encoded, usize, usize) {
        match self {
            Entries::Of(e, a, b) => (e, *a, *b),
            Entries::Own(e) => (e, 0, e.ends.len()),
        }
    }
    fn start(&self) -> u64 {
        let (e, a, _) = self.parts();
        if a == 0 {
            0
        } else {
            e.ends[a - 1]
        }
    }
    /// The bytes of the entries.
    pub fn bytes(&self) -> &[u8] {
        let (e, a, b) = self.parts();
        let end = if b == a { self.start() } else { e.ends[b - 1] };
        &e.bytes[self.start() as usize..end as usize]
    }
    /// The end of entry `a + j` in [`Entries::bytes`].
    pub fn end(&self, j: usize) -> u64 {
        let (e, a, _) = self.parts();
        e.ends[a + j] - self.start()
    }
}

#[cfg(test)]
thread_local! {
    /// Entries streamed on this thread ([`Streamed::encode_range`]), for the tests.
    pub(crate) static STREAMED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Streamed {
    pub fn new(encoder: Encoder) -> Self {
        Streamed { encoder, memo: Mutex::default() }
    }

    /// The streamed bytes of entries `[a, b)` of `arr`, from one streaming
    /// of the whole column.
    pub fn entries(&self, arr: &dyn Array, a: usize, b: usize) -> Result<Entries, Fail> {
        let data = arr.to_data();
        // A panic elsewhere while holding the lock leaves a usable memo.
        let known = {
            let memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
            memo.iter().find(|(d, _)| d.ptr_eq(&data)).map(|(_, enc)| Arc::clone(enc))
        };
        let whole = match known {
            Some(enc) => Some(enc),
            None => self.encode_range(arr, 0, arr.len()).ok().map(|enc| {
                let enc = Arc::new(enc);
                let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
                memo.insert(0, (data, Arc::clone(&enc)));
                memo.truncate(MEMO);
                enc
            }),
        };
        match whole {
            Some(enc) if b <= enc.ends.len() && a <= b => Ok(Entries::Of(enc, a, b)),
            // Some entry of the column cannot be streamed: is it in [a, b)?
            _ => self.encode_range(arr, a, b).map(Entries::Own),
        }
    }

    fn encode_range(&self, arr: &dyn Array, a: usize, b: usize) -> Result<Encoded, Fail> {
        #[cfg(test)]
        STREAMED.with(|n| n.set(n.get() + b.saturating_sub(a)));
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(b.saturating_sub(a));
        self.encoder.encode(arr, a, b, &mut bytes, &mut ends)?;
        Ok(Encoded { bytes, ends })
    }
}
