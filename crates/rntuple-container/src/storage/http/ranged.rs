//! An object read by ranged GETs, the part the HTTP(S) and S3 backends
//! share: size and version from a `HEAD` (or, where `HEAD` is refused, from
//! the `Content-Range` of a one-byte GET), checked single-range GETs with
//! retries, and several of them in flight at once.

use std::io::ErrorKind;

use reqwest::blocking::{Client, RequestBuilder};
use reqwest::header::{CONTENT_LENGTH, CONTENT_RANGE, IF_MATCH};
use reqwest::{Method, StatusCode};

use super::client::Transport;
use super::client::{check_single, check_version, fan_out, parse_content_range, status_error, url_error, version_of};
use crate::storage::{check_ranges_into, Identity};
use rntuple_format::Result;

/// The [`ReadAt`] methods a backend over a [`Ranged`] field `$field` shares:
/// size, single reads, identity, counters, and `read_ranges` through
/// `read_ranges_into` (so that the ranges go out together).
macro_rules! ranged_read_at {
    ($field:ident) => {
        fn size(&self) -> rntuple_format::Result<u64> {
            Ok(self.$field.size)
        }

        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple_format::Result<()> {
            $crate::storage::check_range(offset, buf.len() as u64, self.$field.size, self.$field.url())?;
            self.$field.read_single(offset, buf)
        }

        fn identity(&self) -> rntuple_format::Result<$crate::storage::Identity> {
            Ok(self.$field.identity())
        }

        fn transport_stats(&self) -> Option<$crate::storage::TransportStats> {
            Some(self.$field.transport.counters.snapshot())
        }

        fn read_ranges(&self, ranges: &[(u64, usize)]) -> rntuple_format::Result<Vec<Vec<u8>>> {
            $crate::storage::read_ranges_via_into(self, self.$field.size, ranges)
        }
    };
}

/// How a backend builds its requests (the URL, authentication headers).
pub(crate) trait Requests: Send + Sync + std::fmt::Debug {
    /// A request of `method` for the object, with `Range: <range>` when given.
    fn request(&self, client: &Client, method: Method, range: Option<&str>) -> Result<RequestBuilder>;
}

/// A remote object of known size and version.
#[derive(Debug)]
pub(crate) struct Ranged<R> {
    pub transport: Transport,
    pub requests: R,
    pub size: u64,
    /// `ETag` (else `Last-Modified`) at open.
    pub version: Option<String>,
}

/// A `Range` header value of `(offset, len)` ranges (`len > 0`).
pub(crate) fn range_header(ranges: &[(u64, usize)]) -> String {
    let spans: Vec<String> = ranges.iter().map(|&(o, l)| format!("{}-{}", o, o + l as u64 - 1)).collect();
    format!("bytes={}", spans.join(","))
}

impl<R: Requests> Ranged<R> {
    /// Opens the object: its size and version.
    pub fn open(transport: Transport, requests: R) -> Result<Self> {
        let url = transport.url.clone();
        let (size, version) = transport.with_retry("HEAD request", || {
            let head = transport.send(requests.request(&transport.client, Method::HEAD, None)?, "HEAD")?;
            match head.status() {
                StatusCode::OK => {
                    let length = head.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok());
                    if let Some(size) = length.and_then(|v| v.trim().parse::<u64>().ok()) {
                        return Ok((size, version_of(head.headers())));
                    }
                }
                s @ (StatusCode::NOT_FOUND | StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED | StatusCode::GONE) => {
                    return Err(status_error(&url, s, "HEAD").into());
                }
                _ => {}
            }
            // No usable HEAD: the total of a one-byte range answer.
            let get = transport.send(requests.request(&transport.client, Method::GET, Some("bytes=0-0"))?, "GET")?;
            let total = get
                .headers()
                .get(CONTENT_RANGE)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_content_range)
                .and_then(|(_, _, total)| total);
            match (get.status(), total) {
                (StatusCode::PARTIAL_CONTENT, Some(size)) => Ok((size, version_of(get.headers()))),
                (StatusCode::PARTIAL_CONTENT | StatusCode::OK, _) => Err(url_error(
                    &url,
                    ErrorKind::InvalidData,
                    "the server tells neither the size (HEAD) nor serves byte ranges",
                )
                .into()),
                (status, _) => Err(status_error(&url, status, "GET bytes=0-0").into()),
            }
        })?;
        Ok(Ranged { transport, requests, size, version })
    }

    pub fn url(&self) -> &str {
        &self.transport.url
    }

    pub fn identity(&self) -> Identity {
        Identity { size: self.size, version: self.version.clone() }
    }

    /// A GET of `range`, made conditional on the version seen at open where
    /// it is a strong `ETag` (RFC 9110 §13.1.1: `If-Match` compares strongly).
    pub fn get(&self, range: &str) -> Result<RequestBuilder> {
        let request = self.requests.request(&self.transport.client, Method::GET, Some(range))?;
        Ok(match self.version.as_deref() {
            Some(tag) if tag.starts_with('"') => request.header(IF_MATCH, tag),
            _ => request,
        })
    }

    /// Reads `out.len()` bytes at `offset` with one checked ranged GET.
    pub fn read_single(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let range = range_header(&[(offset, out.len())]);
        let url = self.url();
        self.transport.with_retry(&format!("GET {range}"), || {
            let response = self.transport.send(self.get(&range)?, &range)?;
            check_single(url, &response, offset, out.len() as u64, self.size)?;
            check_version(url, self.version.as_deref(), response.headers())?;
            self.transport.read_body(response, out, &range)
        })?;
        self.transport.counters.single(out.len() as u64);
        Ok(())
    }

    /// Reads every `(offset, buffer)` with single ranged GETs, at most
    /// `max_in_flight` at once.
    pub fn read_singles(&self, parts: Vec<(u64, &mut [u8])>, max_in_flight: usize) -> Result<()> {
        fan_out(parts, max_in_flight, |(offset, out)| self.read_single(offset, out))
    }

    /// Cuts `out` into the buffers of `ranges` (their lengths summing to
    /// its length), leaving out empty ones.
    /// The non-empty `ranges` of a vectored read, each with its part of
    /// `out` (which holds them one after the other), once checked against
    /// the object's size and the length of `out`.
    pub fn parts<'a>(&self, ranges: &[(u64, usize)], out: &'a mut [u8]) -> Result<Vec<(u64, &'a mut [u8])>> {
        check_ranges_into(ranges, self.size, out.len())?;
        let mut parts = Vec::with_capacity(ranges.len());
        let mut rest = out;
        for &(offset, len) in ranges {
            let (head, tail) = rest.split_at_mut(len);
            if len > 0 {
                parts.push((offset, head));
            }
            rest = tail;
        }
        Ok(parts)
    }
}
