//! Shaping a vectored read for `kXR_readv` (3025) and taking its answer
//! apart (protocol reference, "kXR_readv"; limits in
//! [`super::protocol::READV_MAX_CHUNKS`] and
//! [`super::protocol::READV_MAX_CHUNK`]).
//!
//! The answer is a sequence of 16-byte `read_list` headers
//! (`fhandle[4] rlen:i32 offset:i64`), each followed by its `rlen` bytes,
//! spread over any number of `kXR_oksofar` parts and a final `kXR_ok`.

use rntuple_format::{Error, Location};

use super::client::Fail;
use super::protocol as p;

/// One chunk of a vectored read: where it is in the file and where it goes
/// in the output buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Piece {
    pub offset: u64,
    pub len: usize,
    pub at: usize,
}

/// Splits `ranges` (stored one after the other in the output) into chunks of
/// at most [`p::READV_MAX_CHUNK`] bytes; empty ranges take no chunk.
pub(super) fn plan(ranges: &[(u64, usize)]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut at = 0usize;
    for &(offset, len) in ranges {
        let mut start = 0usize;
        while start < len {
            let n = (len - start).min(p::READV_MAX_CHUNK);
            pieces.push(Piece { offset: offset + start as u64, len: n, at: at + start });
            start += n;
        }
        at += len;
    }
    pieces
}

/// Groups `pieces` into requests of at most [`p::READV_MAX_CHUNKS`] chunks,
/// each with the part of `out` it fills (pieces rebased onto it), so that
/// requests can be answered in parallel.
pub(super) fn batches<'o>(pieces: &[Piece], mut out: &'o mut [u8]) -> Vec<(Vec<Piece>, &'o mut [u8])> {
    let mut done = 0usize;
    let mut result = Vec::new();
    for batch in pieces.chunks(p::READV_MAX_CHUNKS) {
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else { continue };
        let end = last.at + last.len - done;
        let (head, tail) = std::mem::take(&mut out).split_at_mut(end);
        let region = &mut head[first.at - done..];
        let base = first.at;
        result.push((batch.iter().map(|c| Piece { at: c.at - base, ..*c }).collect(), region));
        out = tail;
        done += end;
    }
    result
}

/// Streams a `kXR_readv` answer into `out`, checking each header against
/// the chunk asked for.
pub(super) struct ReadvParser<'a> {
    batch: &'a [Piece],
    next: usize,
    head: Vec<u8>,
    left: usize,
    at: usize,
}

impl<'a> ReadvParser<'a> {
    pub(super) fn new(batch: &'a [Piece]) -> Self {
        ReadvParser { batch, next: 0, head: Vec::with_capacity(p::READV_ITEM_LEN), left: 0, at: 0 }
    }

    /// Takes the next bytes of the answer.
    pub(super) fn feed(&mut self, mut b: &[u8], out: &mut [u8], url: &str) -> Result<(), Fail> {
        while !b.is_empty() {
            if self.left == 0 {
                let take = (p::READV_ITEM_LEN - self.head.len()).min(b.len());
                self.head.extend_from_slice(&b[..take]);
                b = &b[take..];
                if self.head.len() < p::READV_ITEM_LEN {
                    return Ok(());
                }
                let h = &self.head;
                let rlen = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
                let offset = u64::from_be_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]);
                match self.batch.get(self.next) {
                    Some(c) if c.offset == offset && c.len == rlen => {
                        self.left = rlen;
                        self.at = c.at;
                    }
                    want => {
                        return Err(Fail::Fatal(Error::out_of_spec(
                            format!(
                                "kXR_readv answer chunk {} is {rlen} bytes at {offset}, asked for {}",
                                self.next,
                                want.map_or("nothing more".to_string(), |c| format!("{} bytes at {}", c.len, c.offset))
                            ),
                            Location::new(url.to_string(), Some(offset)),
                        )))
                    }
                }
                self.head.clear();
                self.next += 1;
                continue;
            }
            let n = self.left.min(b.len());
            out[self.at..self.at + n].copy_from_slice(&b[..n]);
            self.at += n;
            self.left -= n;
            b = &b[n..];
        }
        Ok(())
    }

    /// The chunk left incomplete when the answer ended early: its offset,
    /// length and the bytes received; `None` when the answer was complete.
    pub(super) fn missing(&self) -> Option<(u64, usize, usize)> {
        if self.next == self.batch.len() && self.left == 0 && self.head.is_empty() {
            return None;
        }
        let i = if self.left > 0 { self.next - 1 } else { self.next.min(self.batch.len() - 1) };
        let c = self.batch[i];
        Some((c.offset, c.len, if self.left > 0 { c.len - self.left } else { 0 }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_pieces_within_readv_limits() {
        let m = p::READV_MAX_CHUNK;
        let pieces = plan(&[(0, 10), (100, 2 * m + 5), (0, 0), (7, 1)]);
        let shape: Vec<(u64, usize, usize)> = pieces.iter().map(|c| (c.offset, c.len, c.at)).collect();
        assert_eq!(
            shape,
            vec![
                (0, 10, 0),
                (100, m, 10),
                (100 + m as u64, m, 10 + m),
                (100 + 2 * m as u64, 5, 10 + 2 * m),
                (7, 1, 15 + 2 * m)
            ]
        );
    }

    #[test]
    fn batches_split_the_output_and_parse_answers_in_parts() {
        let ranges: Vec<(u64, usize)> = (0..p::READV_MAX_CHUNKS as u64 + 2).map(|i| (i * 10, 3)).collect();
        let mut out = vec![0u8; ranges.len() * 3];
        let pieces = plan(&ranges);
        let mut b = batches(&pieces, &mut out);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].0.len(), b[0].1.len(), b[1].0.len(), b[1].1.len()), (1024, 3072, 2, 6));
        assert_eq!(b[1].0[1], Piece { offset: 10250, len: 3, at: 3 });
        // The answer for the second batch, fed one byte at a time.
        let (batch, region) = &mut b[1];
        let mut answer = Vec::new();
        for c in batch.iter() {
            answer.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 3]);
            answer.extend_from_slice(&c.offset.to_be_bytes());
            answer.extend_from_slice(&[c.offset as u8; 3]);
        }
        let mut parser = ReadvParser::new(batch);
        for byte in &answer[..answer.len() - 1] {
            parser.feed(std::slice::from_ref(byte), region, "u").unwrap();
        }
        assert_eq!(parser.missing(), Some((10250, 3, 2)));
        parser.feed(&answer[answer.len() - 1..], region, "u").unwrap();
        assert_eq!(parser.missing(), None);
        // Offsets 10240 and 10250 as bytes: 0 and 10.
        assert_eq!(**region, [0, 0, 0, 10, 10, 10]);
        // A header for something not asked for is refused.
        assert!(ReadvParser::new(batch).feed(&[0u8; 16], region, "u").is_err());
    }
}
