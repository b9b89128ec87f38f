//! The S3 backend: `s3://bucket/key` read with ranged GETs signed with AWS
//! Signature Version 4 ([`sigv4`]) over the shared HTTP transport.
//!
//! S3 has no multi-range GET: a vectored read becomes concurrent single
//! ranged GETs, [`MAX_IN_FLIGHT`] at a time. Where the requests go:
//!
//! * `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`: a custom endpoint
//!   (MinIO, Ceph, moto, ...), addressed path-style
//!   (`ENDPOINT/bucket/key`), as on-premise servers expect;
//! * else AWS: `https://bucket.s3.REGION.amazonaws.com/key`
//!   (virtual-hosted), or path-style `https://s3.REGION.amazonaws.com/bucket/key`
//!   when `RNTUPLE_S3_PATH_STYLE=1` or the bucket name has a dot.
//!
//! Credentials and region: [`credentials`].

mod credentials;
mod sigv4;
mod upload;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::blocking::{Client, RequestBuilder};
use reqwest::{Method, Url};

use super::http::client::Transport;
use super::http::ranged::{Ranged, Requests};
use super::url::Backend;
use super::{IoHints, ReadAt, WriteSink};
use credentials::Credentials;
use rntuple_format::{Error, Result};
pub use upload::S3Sink;

/// Ranged GETs in flight at once.
pub const MAX_IN_FLIGHT: usize = 8;

/// Where an object lives and how its requests are signed.
#[derive(Debug)]
struct S3Requests {
    /// The object's HTTP(S) URL.
    url: Url,
    /// The encoded path, as signed.
    path: String,
    /// `host[:port]` as sent.
    host: String,
    region: String,
    credentials: Option<Credentials>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Checks a bucket name before it becomes part of a host name or path
/// (where `#`, `/`, `@` or `:` would send the request, signed, elsewhere).
/// On AWS (`aws` true) the rules of "Bucket naming rules" (S3 User Guide):
/// 3 to 63 characters, lower-case letters, digits, `.` and `-`, a letter or
/// digit first and last, no `..`, not an IP address. A custom endpoint
/// (MinIO, Ceph, ...) may allow the older, laxer names: 1 to 255 of
/// letters, digits, `.`, `-` and `_`.
fn check_bucket(bucket: &str, aws: bool) -> std::result::Result<(), String> {
    if let Some(c) = bucket.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))) {
        return Err(format!("the character {c:?} cannot appear in a bucket name"));
    }
    if !aws {
        return match bucket.len() {
            1..=255 => Ok(()),
            n => Err(format!("{n} characters, more than 255")),
        };
    }
    if !(3..=63).contains(&bucket.len()) {
        return Err(format!("{} characters, not 3 to 63", bucket.len()));
    }
    if bucket.chars().any(|c| c.is_ascii_uppercase() || c == '_') {
        return Err("upper-case letters and '_' are not allowed on AWS".into());
    }
    let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !edge_ok(bucket.chars().next()) || !edge_ok(bucket.chars().last()) {
        return Err("it must begin and end with a letter or digit".into());
    }
    if bucket.contains("..") {
        return Err("two dots in a row".into());
    }
    if bucket.parse::<std::net::Ipv4Addr>().is_ok() {
        return Err("it is an IP address".into());
    }
    Ok(())
}

impl S3Requests {
    /// Resolves `s3://bucket/key` against the environment.
    fn new(url: &str) -> Result<Self> {
        let bad = |message: String| Error::invalid(format!("{}: {message}", crate::storage::redact::redact_url(url)));
        let rest = url.get(5..).filter(|_| url.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("s3://")));
        let (bucket, key) = rest.and_then(|r| r.split_once('/')).ok_or_else(|| bad("not s3://bucket/key".into()))?;
        if bucket.is_empty() || key.is_empty() {
            return Err(bad("an S3 URL needs a bucket and a key: s3://bucket/key".into()));
        }
        let endpoint = env("AWS_ENDPOINT_URL_S3").or_else(|| env("AWS_ENDPOINT_URL"));
        check_bucket(bucket, endpoint.is_none()).map_err(|why| bad(format!("bucket name {bucket:?}: {why}")))?;
        let (credentials, region) = credentials::load();
        let key = sigv4::encode_path(key);
        let path_style =
            endpoint.is_some() || env("RNTUPLE_S3_PATH_STYLE").is_some_and(|v| v != "0") || bucket.contains('.');
        let base = match endpoint {
            Some(e) => e.trim_end_matches('/').to_string(),
            None if path_style => format!("https://s3.{region}.amazonaws.com"),
            None => format!("https://{bucket}.s3.{region}.amazonaws.com"),
        };
        let full = if path_style { format!("{base}/{bucket}/{key}") } else { format!("{base}/{key}") };
        let parsed = Url::parse(&full).map_err(|e| bad(format!("endpoint URL {full}: {e}")))?;
        let host = match (parsed.host_str(), parsed.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, _) => return Err(bad(format!("endpoint URL {full} has no host"))),
        };
        Ok(S3Requests { path: parsed.path().to_string(), url: parsed, host, region, credentials })
    }
}

impl S3Requests {
    /// A request of `method` on the object with the canonical query string
    /// `query` (may be empty), extra `headers` (lower-case names, signed)
    /// and a body whose SHA-256 is `payload` (hex; [`sigv4::EMPTY_SHA256`]
    /// without a body), signed when there are credentials.
    fn signed(
        &self,
        client: &Client,
        method: Method,
        query: &str,
        headers: &[(&str, &str)],
        payload: &str,
    ) -> Result<RequestBuilder> {
        let url = if query.is_empty() {
            self.url.clone()
        } else {
            let mut url = self.url.clone();
            url.set_query(Some(query));
            url
        };
        let mut request = client.request(method.clone(), url);
        let Some(c) = &self.credentials else {
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            return Ok(request);
        };
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let date = sigv4::amz_date(now);
        let mut all = vec![("host", self.host.as_str()), ("x-amz-content-sha256", payload)];
        all.push(("x-amz-date", &date));
        all.extend_from_slice(headers);
        if let Some(token) = &c.session_token {
            all.push(("x-amz-security-token", token));
        }
        let signer = sigv4::Signer {
            access_key: &c.access_key,
            secret_key: &c.secret_key,
            region: &self.region,
            amz_date: &date,
        };
        let authorization = signer.authorization(method.as_str(), &self.path, query, &all);
        for (name, value) in &all[1..] {
            request = request.header(*name, *value);
        }
        Ok(request.header(reqwest::header::AUTHORIZATION, authorization))
    }
}

impl Requests for S3Requests {
    fn request(&self, client: &Client, method: Method, range: Option<&str>) -> Result<RequestBuilder> {
        let range: Vec<(&str, &str)> = range.map(|r| ("range", r)).into_iter().collect();
        self.signed(client, method, "", &range, sigv4::EMPTY_SHA256)
    }
}

/// An object read from S3.
#[derive(Debug)]
pub struct S3File {
    object: Ranged<S3Requests>,
}

impl S3File {
    /// Opens `s3://bucket/key`.
    pub fn open(url: &str) -> Result<Self> {
        let requests = S3Requests::new(url)?;
        Ok(S3File { object: Ranged::open(Transport::new(url)?, requests)? })
    }
}

impl ReadAt for S3File {
    ranged_read_at!(object);

    /// Every range is a request of its own (tens of ms to the first byte on
    /// AWS, where ~1 MiB more flows in the same time), so gaps up to
    /// 256 KiB are read through; 16 MiB requests keep a retry cheap; S3
    /// serves many connections well, so 8 are kept in flight.
    fn hints(&self) -> IoHints {
        IoHints { coalesce_gap: 256 << 10, max_request: 16 << 20, max_in_flight: MAX_IN_FLIGHT }
    }

    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        self.object.read_singles(self.object.parts(ranges, out)?, MAX_IN_FLIGHT)
    }
}

/// The built-in backend of `s3://`.
#[derive(Debug)]
pub struct S3Backend;

impl Backend for S3Backend {
    fn open(&self, url: &str) -> Result<Arc<dyn ReadAt>> {
        Ok(Arc::new(S3File::open(url)?))
    }

    fn create(&self, url: &str) -> Result<Box<dyn WriteSink>> {
        Ok(Box::new(S3Sink::create(url)?))
    }
}

#[cfg(test)]
mod tests {
    use super::check_bucket;

    #[test]
    fn bucket_names() {
        for good in ["abc", "my-bucket.2024", "a1b"] {
            assert_eq!(check_bucket(good, true), Ok(()), "{good}");
        }
        for bad in
            ["evil.example#", "a/b", "user@b", "h:80", "ab", "Upper", "a_b", "-ab", "ab-", "a..b", "10.0.0.1", ""]
        {
            assert!(check_bucket(bad, true).is_err(), "{bad}");
        }
        assert_eq!(check_bucket("Legacy_Bucket", false), Ok(()));
        for bad in ["evil.example#", "a/b", "u@b", "h:1", ""] {
            assert!(check_bucket(bad, false).is_err(), "{bad}");
        }
    }
}
