//! A `multipart/byteranges` answer (RFC 9110 §14.6): the parts of a
//! several-range request, each with its own `Content-Range`.
//!
//! ```text
//! --BOUNDARY CRLF
//! Content-Type: ... CRLF
//! Content-Range: bytes first-last/total CRLF
//! CRLF
//! <last - first + 1 bytes> CRLF
//! --BOUNDARY CRLF
//! ...
//! --BOUNDARY-- CRLF
//! ```
//!
//! Parts may come in any order, and a server may merge neighbouring or
//! overlapping ranges into one part; [`Parts::copy_range`] finds the bytes
//! of a requested range in whichever part holds them.

use super::client::parse_content_range;

/// The boundary of a `Content-Type: multipart/byteranges; boundary=...`.
pub(crate) fn boundary(content_type: &str) -> Option<&str> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/byteranges") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim().eq_ignore_ascii_case("boundary").then(|| value.trim().trim_matches('"'))
    })
}

/// The parts of a body: `(first byte offset in the file, bytes)`.
#[derive(Debug)]
pub(crate) struct Parts<'a> {
    parts: Vec<(u64, &'a [u8])>,
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

impl<'a> Parts<'a> {
    /// Splits `body` at `boundary`; an error names what is malformed.
    pub fn parse(body: &'a [u8], boundary: &str) -> Result<Self, String> {
        let delimiter = format!("--{boundary}");
        let delimiter = delimiter.as_bytes();
        let mut parts = Vec::new();
        let mut pos = find(body, delimiter, 0).ok_or("no boundary in the body")?;
        loop {
            pos += delimiter.len();
            if body.get(pos..pos + 2) == Some(b"--") {
                break; // the closing delimiter
            }
            let headers_end = find(body, b"\r\n\r\n", pos).ok_or(format!("part at byte {pos}: headers never end"))?;
            let headers = String::from_utf8_lossy(&body[pos..headers_end]);
            let range = headers
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.trim().eq_ignore_ascii_case("content-range").then(|| value.to_string())
                })
                .ok_or(format!("part at byte {pos} has no Content-Range"))?;
            let (first, last, _) = parse_content_range(&range)
                .ok_or(format!("part at byte {pos}: bad Content-Range '{}'", range.trim()))?;
            let start = headers_end + 4;
            // A range ending at u64::MAX has no end offset: refused, never wrapped.
            let len = (last - first)
                .checked_add(1)
                .filter(|_| last < u64::MAX)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or(format!("part at byte {pos}: absurd range {first}-{last}"))?;
            let data = start
                .checked_add(len)
                .and_then(|end| body.get(start..end))
                .ok_or(format!("part bytes {first}-{last} runs past the end of the body"))?;
            parts.push((first, data));
            pos = find(body, delimiter, start + len)
                .ok_or(format!("part bytes {first}-{last} is not followed by a boundary"))?;
        }
        Ok(Parts { parts })
    }

    /// Number of parts.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Copies the bytes at `offset..offset + out.len()` from the part that
    /// holds them; false when no part does.
    pub fn copy_range(&self, offset: u64, out: &mut [u8]) -> bool {
        let Some(want_end) = offset.checked_add(out.len() as u64) else { return false };
        for &(first, data) in &self.parts {
            // `parse` keeps `first + len` below u64::MAX.
            let end = first.saturating_add(data.len() as u64);
            if first <= offset && want_end <= end {
                let at = (offset - first) as usize;
                out.copy_from_slice(&data[at..at + out.len()]);
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_from_content_type() {
        assert_eq!(boundary("multipart/byteranges; boundary=00000000001"), Some("00000000001"));
        assert_eq!(boundary("Multipart/ByteRanges; charset=x; boundary=\"ab c\""), Some("ab c"));
        assert_eq!(boundary("text/plain; boundary=x"), None);
        assert_eq!(boundary("multipart/byteranges"), None);
    }

    #[test]
    fn parses_parts_in_any_order() {
        // As nginx writes it: a leading CRLF, parts, the closing delimiter.
        let body = b"\r\n--B1\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 10-13/100\r\n\r\n\
abcd\r\n--B1\r\nContent-Range: bytes 0-2/100\r\n\r\nxyz\r\n--B1--\r\n";
        let parts = Parts::parse(body, "B1").unwrap();
        assert_eq!(parts.len(), 2);
        let mut out = [0u8; 2];
        assert!(parts.copy_range(11, &mut out));
        assert_eq!(&out, b"bc");
        let mut out = [0u8; 3];
        assert!(parts.copy_range(0, &mut out));
        assert_eq!(&out, b"xyz");
        assert!(!parts.copy_range(12, &mut out), "13..15 is not in any part");
    }

    #[test]
    fn ranges_at_the_end_of_u64_are_refused_not_wrapped() {
        // Found by reading, before fuzz/regressions/http_multipart/u64_max_range.
        for range in ["bytes 0-18446744073709551615/*", "bytes 18446744073709551615-18446744073709551615/*"] {
            let body = format!("--B\r\nContent-Range: {range}\r\n\r\nx\r\n--B--\r\n");
            assert!(Parts::parse(body.as_bytes(), "B").is_err(), "{range}");
        }
        let body = b"--B\r\nContent-Range: bytes 18446744073709551614-18446744073709551614/*\r\n\r\nx\r\n--B--\r\n";
        let parts = Parts::parse(body, "B").unwrap();
        let mut out = [0u8; 2];
        assert!(!parts.copy_range(u64::MAX - 1, &mut out));
        assert!(parts.copy_range(u64::MAX - 1, &mut out[..1]));
    }

    #[test]
    fn malformed_bodies_are_refused() {
        let short = b"--B\r\nContent-Range: bytes 0-9/100\r\n\r\nabc\r\n--B--\r\n";
        assert!(Parts::parse(short, "B").unwrap_err().contains("0-9"));
        let no_range = b"--B\r\nContent-Type: x\r\n\r\nabc\r\n--B--\r\n";
        assert!(Parts::parse(no_range, "B").unwrap_err().contains("no Content-Range"));
        assert!(Parts::parse(b"hello", "B").is_err());
    }
}
