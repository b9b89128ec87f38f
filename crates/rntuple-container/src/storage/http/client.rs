//! The HTTP transport shared by the HTTP(S) and S3 backends: one blocking
//! `reqwest` client (rustls, no OpenSSL), timeouts, bounded redirects,
//! bounded retries with backoff, ranged GETs whose answer is checked before a
//! byte is used (RFC 9110 §14: `206 Partial Content` with a `Content-Range`
//! equal to the range asked for), and a bounded fan-out of requests.

use std::io::{ErrorKind, Read};
use std::sync::Mutex;
use std::time::Duration;

use reqwest::blocking::{Client, RequestBuilder, Response};
use reqwest::header::{HeaderMap, CONTENT_RANGE, ETAG, LAST_MODIFIED};
use reqwest::StatusCode;

use crate::storage::redact::{redact_text, redact_url};
use crate::storage::TransportCounters;
use rntuple_format::{Error, Result};

/// Default timeout of one request (connect, and the whole answer), seconds.
const DEFAULT_TIMEOUT: f64 = 60.0;
/// Default number of retries after a transient failure.
const DEFAULT_RETRIES: u32 = 3;
/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 10;

/// Reads a positive number from the environment variable `name`.
fn env_number(name: &str) -> Result<Option<f64>> {
    match std::env::var(name) {
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(Error::invalid(format!("{name}={v:?} is not a non-negative number"))),
        },
        Err(_) => Ok(None),
    }
}

/// An I/O error about `url` with `kind`; credentials in the URL and in the
/// message are removed ([`redact_url`]).
pub(crate) fn url_error(url: &str, kind: ErrorKind, message: impl Into<String>) -> Error {
    let message = message.into();
    Error::io(redact_url(url).into_owned(), std::io::Error::new(kind, redact_text(&message).into_owned()))
}

/// The status of an answer mapped to a clear error naming `url`.
pub(crate) fn status_error(url: &str, status: StatusCode, what: &str) -> Error {
    let kind = match status {
        StatusCode::NOT_FOUND | StatusCode::GONE => ErrorKind::NotFound,
        StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED => ErrorKind::PermissionDenied,
        _ => ErrorKind::Other,
    };
    let hint = match status {
        StatusCode::NOT_FOUND => " (no such file)",
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => " (access denied: check the credentials; a bearer token goes only over https:// to the hosts in RNTUPLE_TOKEN_HOSTS)",
        StatusCode::PRECONDITION_FAILED => " (the remote file changed since it was opened)",
        _ => "",
    };
    url_error(url, kind, format!("server answered {status} to {what}{hint}"))
}

/// One failed attempt: worth another try, or final.
pub(crate) enum Attempt {
    Transient(String),
    Fatal(Error),
}

impl From<Error> for Attempt {
    fn from(e: Error) -> Self {
        Attempt::Fatal(e)
    }
}

/// A `reqwest` error as an attempt: network trouble is transient.
fn transport_attempt(e: reqwest::Error) -> Attempt {
    let mut message = redact_text(&e.to_string()).into_owned();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    Attempt::Transient(message)
}

/// The client and the policies of one remote object.
#[derive(Debug)]
pub(crate) struct Transport {
    pub client: Client,
    /// The URL as the user gave it without credentials, for messages.
    pub url: String,
    pub counters: TransportCounters,
    /// The timeout of one request (`RNTUPLE_HTTP_TIMEOUT`).
    pub timeout: Duration,
    retries: u32,
    backoff: Duration,
}

impl Transport {
    /// A client configured from the environment: `RNTUPLE_HTTP_TIMEOUT`
    /// (seconds per request, default 60), `RNTUPLE_HTTP_RETRIES` (default 3),
    /// `RNTUPLE_CA_FILE` (extra trusted CA certificates, PEM; the system
    /// store and `SSL_CERT_FILE`/`SSL_CERT_DIR` are used as well).
    pub fn new(url: &str) -> Result<Self> {
        let timeout = Duration::from_secs_f64(env_number("RNTUPLE_HTTP_TIMEOUT")?.unwrap_or(DEFAULT_TIMEOUT));
        let retries = env_number("RNTUPLE_HTTP_RETRIES")?.map_or(DEFAULT_RETRIES, |r| r.min(100.0) as u32);
        let mut builder = Client::builder()
            .connect_timeout(timeout)
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            .user_agent(concat!("rntuple/", env!("CARGO_PKG_VERSION")));
        if let Ok(path) = std::env::var("RNTUPLE_CA_FILE") {
            let pem = std::fs::read(&path).map_err(|e| Error::io(format!("RNTUPLE_CA_FILE {path}"), e))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| Error::invalid(format!("RNTUPLE_CA_FILE {path}: not PEM certificates: {e}")))?;
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        let client = builder.build().map_err(|e| url_error(url, ErrorKind::Other, format!("HTTP client: {e}")))?;
        Ok(Transport {
            client,
            url: crate::storage::redact::redact_url(url).into_owned(),
            counters: TransportCounters::default(),
            timeout,
            retries,
            backoff: Duration::from_millis(200),
        })
    }

    /// Runs `attempt` until it succeeds, fails for good, or has failed
    /// transiently `1 + retries` times (backoff doubling from 200 ms).
    pub fn with_retry<T>(&self, what: &str, mut attempt: impl FnMut() -> Result<T, Attempt>) -> Result<T> {
        let mut wait = self.backoff;
        let mut tries = 0;
        loop {
            match attempt() {
                Ok(v) => return Ok(v),
                Err(Attempt::Fatal(e)) => return Err(e),
                Err(Attempt::Transient(message)) if tries >= self.retries => {
                    return Err(url_error(
                        &self.url,
                        ErrorKind::Other,
                        format!("{what} failed after {} attempts: {message}", tries + 1),
                    ));
                }
                Err(Attempt::Transient(_)) => {
                    self.counters.retry();
                    std::thread::sleep(wait);
                    wait = wait.saturating_mul(2);
                    tries += 1;
                }
            }
        }
    }

    /// Sends `request`; a 5xx answer or a network failure is transient.
    pub fn send(&self, request: RequestBuilder, what: &str) -> Result<Response, Attempt> {
        let response = request.send().map_err(transport_attempt)?;
        let status = response.status();
        if status.is_server_error() {
            return Err(Attempt::Transient(format!("server answered {status} to {what}")));
        }
        Ok(response)
    }

    /// Reads exactly `out.len()` body bytes of `response` and checks that
    /// nothing follows (a short or long body is an error, never used).
    pub fn read_body(&self, mut response: Response, out: &mut [u8], what: &str) -> Result<(), Attempt> {
        if let Err(e) = response.read_exact(out) {
            return Err(Attempt::Transient(format!("{what}: body ended early or broke: {e}")));
        }
        let mut extra = [0u8; 1];
        match response.read(&mut extra) {
            Ok(0) => Ok(()),
            Ok(_) => Err(Attempt::Fatal(url_error(
                &self.url,
                ErrorKind::InvalidData,
                format!("{what}: the server sent more bytes than the {} asked for", out.len()),
            ))),
            Err(e) => Err(Attempt::Transient(format!("{what}: body broke: {e}"))),
        }
    }

    /// Reads a whole body of at most `limit` bytes (never allocating more).
    pub fn read_bounded(&self, response: Response, limit: u64, what: &str) -> Result<Vec<u8>, Attempt> {
        let mut body = Vec::new();
        let mut take = response.take(limit.saturating_add(1));
        if let Err(e) = take.read_to_end(&mut body) {
            return Err(Attempt::Transient(format!("{what}: body broke: {e}")));
        }
        if body.len() as u64 > limit {
            return Err(Attempt::Fatal(url_error(
                &self.url,
                ErrorKind::InvalidData,
                format!("{what}: answer longer than the {limit} bytes it can need"),
            )));
        }
        Ok(body)
    }
}

/// The version tag of an answer: its `ETag`, else its `Last-Modified`.
pub(crate) fn version_of(headers: &HeaderMap) -> Option<String> {
    let get = |name| headers.get(name).and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok());
    get(ETAG).or_else(|| get(LAST_MODIFIED)).map(str::to_string)
}

/// Checks that an answer is of the object version seen at open.
pub(crate) fn check_version(url: &str, expected: Option<&str>, headers: &HeaderMap) -> Result<()> {
    if let (Some(expected), Some(now)) = (expected, version_of(headers)) {
        if expected != now {
            return Err(url_error(
                url,
                ErrorKind::Other,
                format!("the remote file changed since it was opened (version {expected}, now {now})"),
            ));
        }
    }
    Ok(())
}

/// A parsed `Content-Range: bytes first-last/total` (RFC 9110 §14.4);
/// `total` is `None` for `*`.
pub(crate) fn parse_content_range(value: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes ")?;
    let (span, total) = rest.split_once('/')?;
    let (first, last) = span.split_once('-')?;
    let (first, last) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    (first <= last).then_some((first, last, total))
}

/// Checks a single-range answer: `206` with `Content-Range` exactly
/// `offset..offset+len` of a `size`-byte object. A `200` (the whole object)
/// is accepted only when the range is the whole object; otherwise it is an
/// error, as is any other range, so wrong bytes are never used.
pub(crate) fn check_single(url: &str, response: &Response, offset: u64, len: u64, size: u64) -> Result<(), Attempt> {
    let what = format!("range request bytes={}-{}", offset, offset + len - 1);
    match response.status() {
        StatusCode::PARTIAL_CONTENT => {
            let header = response.headers().get(CONTENT_RANGE).and_then(|v| v.to_str().ok()).unwrap_or("");
            match parse_content_range(header) {
                Some((first, last, total))
                    if first == offset && last == offset + len - 1 && total.is_none_or(|t| t == size) =>
                {
                    Ok(())
                }
                _ => Err(url_error(
                    url,
                    ErrorKind::InvalidData,
                    format!("server answered {what} with Content-Range '{header}', not the range asked for"),
                )
                .into()),
            }
        }
        StatusCode::OK if offset == 0 && len == size => Ok(()),
        StatusCode::OK => Err(url_error(
            url,
            ErrorKind::InvalidData,
            format!("server answered 200 (the whole file) to {what}: it does not serve byte ranges"),
        )
        .into()),
        status => Err(status_error(url, status, &what).into()),
    }
}

/// Runs `work` on every task, at most `max_in_flight` at once; the first
/// error wins.
pub(crate) fn fan_out<T: Send>(
    tasks: Vec<T>,
    max_in_flight: usize,
    work: impl Fn(T) -> Result<()> + Sync,
) -> Result<()> {
    if tasks.len() <= 1 || max_in_flight <= 1 {
        return tasks.into_iter().try_for_each(work);
    }
    let workers = max_in_flight.min(tasks.len());
    let queue = Mutex::new(tasks);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let failed = failure.lock().map(|f| f.is_some()).unwrap_or(true);
                let next = if failed { None } else { queue.lock().ok().and_then(|mut q| q.pop()) };
                let Some(task) = next else { break };
                if let Err(e) = work(task) {
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                }
            });
        }
    });
    match failure.into_inner() {
        Ok(Some(e)) => Err(e),
        Ok(None) => Ok(()),
        Err(_) => Err(Error::state("a request thread panicked")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_parsing() {
        assert_eq!(parse_content_range("bytes 0-9/100"), Some((0, 9, Some(100))));
        assert_eq!(parse_content_range("bytes 5-5/*"), Some((5, 5, None)));
        for bad in ["bytes 9-0/100", "bytes */100", "items 0-1/2", "bytes 0-1", "bytes a-1/2"] {
            assert_eq!(parse_content_range(bad), None, "{bad}");
        }
    }

    #[test]
    fn fan_out_runs_everything_and_reports_an_error() {
        let seen = Mutex::new(Vec::new());
        fan_out((0..10).collect(), 3, |i| {
            seen.lock().unwrap().push(i);
            Ok(())
        })
        .unwrap();
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        let err = fan_out((0..10).collect(), 3, |i| if i == 4 { Err(Error::invalid("four")) } else { Ok(()) });
        assert!(matches!(err, Err(Error::InvalidArgument { message }) if message == "four"));
    }
}
