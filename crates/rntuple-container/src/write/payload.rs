//! [`PayloadSource`]: the bytes of one payload (one `RBlob` key, or the
//! keys of a payload split over several) handed to [`super::FileWriter`] in
//! pieces, so that a payload need not be in memory as a whole: pages in
//! memory ([`Parts`]), or pages spilled to a scratch file by the RNTuple
//! writer and copied into the file in bounded chunks.

/// A payload of known length whose bytes are read in pieces, in any order
/// (a payload split over keys writes its first chunk last, `crate::blob`).
pub trait PayloadSource {
    /// Length of the payload in bytes.
    fn len(&self) -> u64;

    /// Whether the payload has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The payload's bytes from `from` (`< len()`): at least one, at most
    /// `max` (`> 0`). The slice is valid until the next call.
    fn bytes_at(&mut self, from: u64, max: usize) -> std::io::Result<&[u8]>;
}

/// A payload given as slices written back to back (e.g. a page and its
/// checksum; the pages of a cluster held in memory).
#[derive(Debug)]
pub struct Parts<'a> {
    parts: &'a [&'a [u8]],
    len: u64,
    /// The part of the last answer and its first byte in the payload, so
    /// that reading in order costs O(1) a call.
    at: usize,
    at_start: u64,
}

impl<'a> Parts<'a> {
    pub fn new(parts: &'a [&'a [u8]]) -> Self {
        let len = parts.iter().map(|p| p.len() as u64).sum();
        Parts { parts, len, at: 0, at_start: 0 }
    }
}

impl PayloadSource for Parts<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn bytes_at(&mut self, from: u64, max: usize) -> std::io::Result<&[u8]> {
        if from < self.at_start {
            (self.at, self.at_start) = (0, 0);
        }
        while self.at < self.parts.len() {
            let p = self.parts[self.at];
            let end = self.at_start + p.len() as u64;
            if from < end {
                let start = (from - self.at_start) as usize;
                let stop = p.len().min(start.saturating_add(max.max(1)));
                return Ok(&p[start..stop]);
            }
            self.at += 1;
            self.at_start = end;
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("byte {from} of a payload of {} bytes", self.len),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `[from, from + len)` of `src` in pieces of at most `max` bytes.
    fn read(src: &mut dyn PayloadSource, from: u64, len: u64, max: usize) -> Vec<u8> {
        let mut out = Vec::new();
        while (out.len() as u64) < len {
            let left = (len - out.len() as u64) as usize;
            let piece = src.bytes_at(from + out.len() as u64, max.min(left)).unwrap();
            assert!(!piece.is_empty() && piece.len() <= max.min(left));
            out.extend_from_slice(piece);
        }
        out
    }

    #[test]
    fn parts_are_read_across_their_boundaries_in_any_order() {
        let parts: [&[u8]; 4] = [b"abc", b"", b"defgh", b"i"];
        let mut p = Parts::new(&parts);
        assert_eq!(p.len(), 9);
        assert_eq!(read(&mut p, 0, 9, 100), b"abcdefghi");
        assert_eq!(read(&mut p, 2, 3, 2), b"cde");
        assert_eq!(read(&mut p, 5, 4, 1), b"fghi");
        assert_eq!(read(&mut p, 0, 2, 7), b"ab");
        assert!(p.bytes_at(9, 1).is_err());
    }
}
