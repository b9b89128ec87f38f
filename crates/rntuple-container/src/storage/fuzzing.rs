//! Entry points for the fuzz targets of `fuzz/` (`http_multipart`,
//! `xrootd_answers`): the parsers of what a remote server answers, called as
//! the backends call them, without a network. Not an API: hidden from the
//! documentation and free to change.

use super::http::client::parse_content_range;
use super::http::multipart;
use super::xrootd::fuzzing as xrootd;

/// An HTTP multi-range answer: the boundary from `content_type`, the body
/// parsed as `multipart/byteranges`, then each of `ranges` copied out (as
/// the HTTP backend does; a range no part holds is an error).
pub fn http_multipart(content_type: &str, body: &[u8], ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>, String> {
    let boundary = multipart::boundary(content_type).ok_or("no boundary")?;
    let parts = multipart::Parts::parse(body, boundary)?;
    let _ = parts.len();
    ranges
        .iter()
        .map(|&(offset, len)| {
            let mut out = vec![0u8; len];
            if parts.copy_range(offset, &mut out) {
                Ok(out)
            } else {
                Err(format!("no part holds {len} bytes at {offset}"))
            }
        })
        .collect()
}

/// A `Content-Range` header value, parsed.
pub fn http_content_range(value: &str) -> Option<(u64, u64, Option<u64>)> {
    parse_content_range(value)
}

/// A `kXR_readv` answer for `ranges` (planned and batched as the XRootD
/// backend does), fed to the parser in pieces of the sizes `splits` gives
/// (cycled); the bytes filled, or the error.
pub fn xrootd_readv(ranges: &[(u64, usize)], answer: &[u8], splits: &[usize]) -> Result<Vec<u8>, String> {
    xrootd::readv(ranges, answer, splits)
}

/// The small XRootD answer bodies (error, wait, redirect, open, stat) and a
/// response header, each parsed from `body`.
pub fn xrootd_bodies(body: &[u8]) {
    xrootd::bodies(body);
}
