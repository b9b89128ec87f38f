//! The HTTP(S) backend: `http://` and `https://` URLs read with range
//! requests (RFC 9110 §14).
//!
//! * Open: a `HEAD` gives the size (`Content-Length`) and the version
//!   (`ETag`, else `Last-Modified`), which every later answer must repeat
//!   (and which is sent as `If-Match` when it is a strong `ETag`).
//! * A vectored read asks for several ranges in one request
//!   (`multipart/byteranges`, at most [`MAX_PARTS`] ranges and
//!   [`MAX_MULTI_BYTES`] bytes each, those requests [`MAX_IN_FLIGHT`] at a
//!   time); every part's `Content-Range` is checked. A server that answers
//!   such a request with the whole file (`200`) or with one range is asked
//!   range by range from then on, [`MAX_IN_FLIGHT`] requests at a time.
//! * A bearer token found as WLCG tools find it ([`token`]) is sent as
//!   `Authorization: Bearer`, only over `https://` to the hosts the user
//!   named in `RNTUPLE_TOKEN_HOSTS`.
//! * Timeouts, retries, redirects and trusted certificates: [`client`].

pub(crate) mod client;
mod dav;
pub(crate) mod multipart;
#[macro_use]
pub(crate) mod ranged;
pub mod token;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use reqwest::blocking::{Client, RequestBuilder};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Method, StatusCode};

use super::url::Backend;
use super::{IoHints, ReadAt};
use client::{check_version, status_error, Transport};
use ranged::{range_header, Ranged, Requests};
use rntuple_format::Result;

pub use dav::DavSink;

/// Ranges asked for in one multi-range request (keeps the `Range` header
/// near 2 KiB, under every server's header limit).
pub const MAX_PARTS: usize = 64;
/// Payload bytes asked for in one multi-range request.
pub const MAX_MULTI_BYTES: u64 = 32 << 20;
/// Requests in flight at once.
pub const MAX_IN_FLIGHT: usize = 4;
/// Bytes allowed per part for its boundary and headers.
const PART_OVERHEAD: u64 = 1024;

/// How HTTP requests are made: the URL and the bearer token.
struct HttpRequests {
    url: String,
    token: Option<String>,
}

impl std::fmt::Debug for HttpRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.debug_struct("HttpRequests").field("url", &self.url).field("token", &self.token.is_some()).finish()
    }
}

impl Requests for HttpRequests {
    fn request(&self, client: &Client, method: Method, range: Option<&str>) -> Result<RequestBuilder> {
        let mut request = client.request(method, &self.url);
        if let Some(token) = &self.token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(range) = range {
            request = request.header(reqwest::header::RANGE, range);
        }
        Ok(request)
    }
}

/// A file read over HTTP(S).
#[derive(Debug)]
pub struct HttpFile {
    object: Ranged<HttpRequests>,
    /// False once the server has declined a multi-range request.
    multipart: AtomicBool,
}

impl HttpFile {
    /// Opens `url` (`http://` or `https://`).
    pub fn open(url: &str) -> Result<Self> {
        let requests = HttpRequests { url: url.to_string(), token: token::for_url(url)? };
        let object = Ranged::open(Transport::new(url)?, requests)?;
        Ok(HttpFile { object, multipart: AtomicBool::new(true) })
    }

    /// Reads `parts` (sorted or not, non-empty buffers) with one
    /// multi-range request; `Ok(false)` when the server declined it (then
    /// nothing was read).
    fn read_multi(&self, parts: &mut [(u64, &mut [u8])]) -> Result<bool> {
        let ranges: Vec<(u64, usize)> = parts.iter().map(|(o, b)| (*o, b.len())).collect();
        let range = range_header(&ranges);
        let payload: u64 = ranges.iter().map(|r| r.1 as u64).sum();
        let url = self.object.url();
        let what = format!("multi-range GET of {} ranges", ranges.len());
        let body = self.object.transport.with_retry(&what, || {
            let response = self.object.transport.send(self.object.get(&range)?, &what)?;
            match response.status() {
                StatusCode::PARTIAL_CONTENT => {}
                // The whole file or one range: the server does not do multi-range here.
                StatusCode::OK => return Ok(None),
                s => return Err(status_error(url, s, &what).into()),
            }
            check_version(url, self.object.version.as_deref(), response.headers())?;
            let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
            let Some(boundary) = multipart::boundary(content_type).map(str::to_string) else {
                return Ok(None);
            };
            let limit = payload + PART_OVERHEAD * (ranges.len() as u64 + 1);
            let body = self.object.transport.read_bounded(response, limit, &what)?;
            Ok(Some((boundary, body)))
        })?;
        let Some((boundary, body)) = body else { return Ok(false) };
        let answer = multipart::Parts::parse(&body, &boundary)
            .map_err(|m| client::url_error(url, std::io::ErrorKind::InvalidData, format!("{what}: {m}")))?;
        for (offset, out) in parts.iter_mut() {
            if !answer.copy_range(*offset, out) {
                return Err(client::url_error(
                    url,
                    std::io::ErrorKind::InvalidData,
                    format!("{what}: the answer lacks bytes {}-{}", offset, *offset + out.len() as u64 - 1),
                ));
            }
        }
        self.object.transport.counters.vectored(answer.len() as u64, body.len() as u64);
        Ok(true)
    }

    /// Groups `parts` into multi-range batches within the bounds.
    fn batches(parts: Vec<(u64, &mut [u8])>) -> Vec<Vec<(u64, &mut [u8])>> {
        let mut batches: Vec<Vec<(u64, &mut [u8])>> = Vec::new();
        let mut bytes = 0u64;
        for part in parts {
            let len = part.1.len() as u64;
            match batches.last_mut() {
                Some(b) if b.len() < MAX_PARTS && bytes + len <= MAX_MULTI_BYTES => {
                    bytes += len;
                    b.push(part);
                }
                _ => {
                    bytes = len;
                    batches.push(vec![part]);
                }
            }
        }
        batches
    }
}

impl ReadAt for HttpFile {
    ranged_read_at!(object);

    /// Multi-range requests carry many ranges at no extra round trip, so
    /// gaps are read through only where a part's own overhead (~100 bytes)
    /// and the server's per-part work matter less than the gap: 16 KiB.
    /// Requests up to 16 MiB keep a retry cheap; 4 in flight fill a
    /// high-latency link without overloading a shared server.
    fn hints(&self) -> IoHints {
        IoHints { coalesce_gap: 16 << 10, max_request: 16 << 20, max_in_flight: MAX_IN_FLIGHT }
    }

    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        let parts = self.object.parts(ranges, out)?;
        if parts.len() <= 1 || !self.multipart.load(Ordering::Relaxed) {
            return self.object.read_singles(parts, MAX_IN_FLIGHT);
        }
        client::fan_out(Self::batches(parts), MAX_IN_FLIGHT, |mut batch| {
            if batch.len() > 1 && self.multipart.load(Ordering::Relaxed) {
                if self.read_multi(&mut batch)? {
                    return Ok(());
                }
                self.multipart.store(false, Ordering::Relaxed);
            }
            self.object.read_singles(batch, MAX_IN_FLIGHT)
        })
    }
}

/// The built-in backend of `http://` and `https://`.
#[derive(Debug)]
pub struct HttpBackend;

impl Backend for HttpBackend {
    fn open(&self, url: &str) -> Result<Arc<dyn ReadAt>> {
        Ok(Arc::new(HttpFile::open(url)?))
    }

    /// Writing the WebDAV way ([`DavSink`]).
    fn create(&self, url: &str) -> Result<Box<dyn super::WriteSink>> {
        Ok(Box::new(DavSink::create(url)?))
    }
}
