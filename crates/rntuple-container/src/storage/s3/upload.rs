//! [`S3Sink`]: a file written to `s3://bucket/key` as a multipart upload
//! (S3 API: `CreateMultipartUpload`, `UploadPart`,
//! `CompleteMultipartUpload`, `AbortMultipartUpload`), never visible before
//! it is complete.
//!
//! ```text
//!  file bytes:  | part 1 (head, held) | part 2 | part 3 | ... | part n (last, short) |
//!  uploaded:       at finish, last      as soon as full, <= in-flight at once   at finish
//! ```
//!
//! * Part 1 holds the file's head, which [`crate::FileWriter`] rewrites
//!   when it finishes ([`WriteSink::write_at`]): it stays in memory and is
//!   uploaded last. Every other part goes out as soon as it is full, on one
//!   of [`parts_in_flight`] upload threads; `append` waits when they are
//!   all busy, so memory is bounded by `(2 + in flight) × part size`.
//! * The object exists only after `CompleteMultipartUpload`, sent by
//!   [`WriteSink::finish`]. A sink dropped unfinished (an error, a writer
//!   abandoned) sends `AbortMultipartUpload`; a killed process leaves an
//!   incomplete upload that no reader sees (the bucket's lifecycle rule
//!   `AbortIncompleteMultipartUpload` reclaims its parts).
//! * The upload starts when the sink is created, so that a refused write
//!   (no such bucket, no permission) fails at once, naming the URL.
//! * Each request is retried on network failures and 5xx answers
//!   ([`Transport::with_retry`]), within the transport's timeout.
//!
//! Part size: `RNTUPLE_S3_PART_SIZE` (bytes, at least S3's 5 MiB, default
//! 8 MiB); parts in flight: `RNTUPLE_S3_PARTS_IN_FLIGHT` (default 4).

use std::io::{Cursor, ErrorKind};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use reqwest::blocking::{Body, Response};
use reqwest::Method;

use super::sigv4;
use super::S3Requests;
use crate::storage::http::client::{status_error, url_error, Attempt, Transport};
use crate::storage::WriteSink;
use rntuple_format::{Error, Result};

/// S3's smallest part (all but the last).
pub const MIN_PART_SIZE: usize = 5 << 20;
/// Default part size.
pub const DEFAULT_PART_SIZE: usize = 8 << 20;
/// Default number of parts uploading at once.
pub const DEFAULT_PARTS_IN_FLIGHT: usize = 4;
/// Largest answer to a control request (create, complete) read.
const MAX_ANSWER: u64 = 1 << 20;

fn env_usize(name: &str) -> Result<Option<usize>> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<usize>()
            .map(Some)
            .map_err(|_| Error::invalid(format!("{name}={v:?} is not a whole number"))),
        _ => Ok(None),
    }
}

/// The part size from `RNTUPLE_S3_PART_SIZE`.
fn part_size() -> Result<usize> {
    match env_usize("RNTUPLE_S3_PART_SIZE")? {
        Some(n) if n < MIN_PART_SIZE => Err(Error::invalid(format!(
            "RNTUPLE_S3_PART_SIZE={n} is below S3's smallest part of {MIN_PART_SIZE} bytes"
        ))),
        Some(n) => Ok(n),
        None => Ok(DEFAULT_PART_SIZE),
    }
}

/// The parts uploading at once, from `RNTUPLE_S3_PARTS_IN_FLIGHT`.
pub fn parts_in_flight() -> Result<usize> {
    Ok(env_usize("RNTUPLE_S3_PARTS_IN_FLIGHT")?.unwrap_or(DEFAULT_PARTS_IN_FLIGHT).clamp(1, 64))
}

/// A part's bytes, shared by the attempts of its upload without copying.
#[derive(Clone)]
struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// The object, its requests and transport, shared with the upload threads.
#[derive(Debug)]
struct Object {
    transport: Transport,
    requests: S3Requests,
}

impl Object {
    /// Sends a signed request with `body` and retries; `check` turns a
    /// non-5xx answer into a result (or a fatal error).
    fn call<T>(
        &self,
        what: &str,
        method: Method,
        query: &str,
        body: &Shared,
        check: impl Fn(Response) -> Result<T, Attempt>,
    ) -> Result<T> {
        let payload = sigv4::payload_sha256(body.as_ref());
        let len = body.0.len().to_string();
        self.transport.with_retry(what, || {
            let headers = [("content-length", len.as_str())];
            let request = self.requests.signed(&self.transport.client, method.clone(), query, &headers, &payload)?;
            let request = request.body(Body::sized(Cursor::new(body.clone()), body.0.len() as u64));
            self.transport.counters.single(body.0.len() as u64);
            let response = self.transport.send(request, what)?;
            check(response)
        })
    }

    /// Fails with the status of `response` unless it is a success.
    fn ok(&self, response: &Response, what: &str) -> Result<(), Attempt> {
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(status_error(&self.transport.url, status, what).into())
        }
    }

    /// The text of a control answer; an `<Error>` in a `200` answer (as
    /// `CompleteMultipartUpload` may send) is an error.
    fn text(&self, response: Response, what: &str) -> Result<String, Attempt> {
        self.ok(&response, what)?;
        let body = self.transport.read_bounded(response, MAX_ANSWER, what)?;
        let text = String::from_utf8_lossy(&body).into_owned();
        if text.contains("<Error>") {
            let code = xml_value(&text, "Code").unwrap_or_default();
            let message = xml_value(&text, "Message").unwrap_or_default();
            return Err(Attempt::Fatal(url_error(
                &self.transport.url,
                ErrorKind::Other,
                format!("{what} failed: {code} {message}"),
            )));
        }
        Ok(text)
    }

    fn create_upload(&self) -> Result<String> {
        let what = "CreateMultipartUpload";
        let text = self.call(what, Method::POST, "uploads=", &Shared(Arc::default()), |r| self.text(r, what))?;
        xml_value(&text, "UploadId").filter(|id| !id.is_empty()).ok_or_else(|| {
            url_error(&self.transport.url, ErrorKind::InvalidData, format!("{what}: no UploadId in the answer"))
        })
    }

    fn upload_part(&self, id: &str, number: u32, bytes: &Shared) -> Result<String> {
        let what = format!("UploadPart {number} ({} bytes)", bytes.0.len());
        let query = format!("partNumber={number}&uploadId={}", sigv4::encode_query_value(id));
        self.call(&what, Method::PUT, &query, bytes, |r| {
            self.ok(&r, &what)?;
            r.headers().get(reqwest::header::ETAG).and_then(|v| v.to_str().ok()).map(str::to_string).ok_or_else(|| {
                Attempt::Fatal(url_error(&self.transport.url, ErrorKind::InvalidData, format!("{what}: no ETag")))
            })
        })
    }

    fn complete(&self, id: &str, parts: &[(u32, String)]) -> Result<()> {
        let what = format!("CompleteMultipartUpload of {} parts", parts.len());
        let mut xml = String::from("<CompleteMultipartUpload>");
        for (number, etag) in parts {
            let etag = etag.replace('&', "&amp;").replace('"', "&quot;");
            xml.push_str(&format!("<Part><PartNumber>{number}</PartNumber><ETag>{etag}</ETag></Part>"));
        }
        xml.push_str("</CompleteMultipartUpload>");
        let query = format!("uploadId={}", sigv4::encode_query_value(id));
        self.call(&what, Method::POST, &query, &Shared(Arc::new(xml.into_bytes())), |r| self.text(r, &what).map(drop))
    }

    fn abort(&self, id: &str) -> Result<()> {
        let what = "AbortMultipartUpload";
        let query = format!("uploadId={}", sigv4::encode_query_value(id));
        self.call(what, Method::DELETE, &query, &Shared(Arc::default()), |r| match r.status().as_u16() {
            // Already gone (aborted, or never created) is what we want.
            404 => Ok(()),
            _ => self.ok(&r, what),
        })
    }
}

/// The text between `<tag>` and `</tag>` (the first one).
fn xml_value(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{tag}>"))? + start;
    Some(text[start..end].trim().to_string())
}

/// What the upload threads report.
#[derive(Debug, Default)]
struct Progress {
    /// `(part number, ETag)` of the parts uploaded.
    done: Vec<(u32, String)>,
    /// The first failure; later parts are not sent.
    error: Option<String>,
    error_kind: Option<ErrorKind>,
}

/// A multipart upload under way.
#[derive(Debug)]
struct Upload {
    id: String,
    parts: Option<SyncSender<(u32, Shared)>>,
    threads: Vec<JoinHandle<()>>,
    progress: Arc<Mutex<Progress>>,
}

impl Upload {
    fn start(object: &Arc<Object>, in_flight: usize) -> Result<Self> {
        let id = object.create_upload()?;
        // A rendezvous channel: a part is handed over only to an idle thread.
        let (send, receive) = sync_channel::<(u32, Shared)>(0);
        let receive = Arc::new(Mutex::new(receive));
        let progress = Arc::new(Mutex::new(Progress::default()));
        let threads = (0..in_flight)
            .map(|_| {
                let (object, receive, progress, id) = (object.clone(), receive.clone(), progress.clone(), id.clone());
                std::thread::spawn(move || loop {
                    let next = receive.lock().ok().and_then(|r| r.recv().ok());
                    let Some((number, bytes)) = next else { break };
                    if progress.lock().map_or(true, |p| p.error.is_some()) {
                        continue;
                    }
                    let result = object.upload_part(&id, number, &bytes);
                    drop(bytes);
                    if let Ok(mut p) = progress.lock() {
                        match result {
                            Ok(etag) => p.done.push((number, etag)),
                            Err(e) => {
                                if p.error.is_none() {
                                    p.error_kind = Some(io_kind(&e));
                                    p.error = Some(e.to_string());
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        Ok(Upload { id, parts: Some(send), threads, progress })
    }

    /// The first failure of an upload thread, as an I/O error.
    fn failure(&self) -> std::io::Result<()> {
        let p = self.progress.lock().map_err(|_| std::io::Error::other("an upload thread panicked"))?;
        match &p.error {
            Some(message) => Err(std::io::Error::new(p.error_kind.unwrap_or(ErrorKind::Other), message.clone())),
            None => Ok(()),
        }
    }

    fn send(&self, number: u32, bytes: Vec<u8>) -> std::io::Result<()> {
        self.failure()?;
        let sender = self.parts.as_ref().ok_or_else(|| std::io::Error::other("the upload is closed"))?;
        sender.send((number, Shared(Arc::new(bytes)))).map_err(|_| std::io::Error::other("the upload threads ended"))
    }

    /// Waits for every part handed over; returns the parts uploaded.
    fn drain(&mut self) -> std::io::Result<Vec<(u32, String)>> {
        self.parts = None;
        for t in self.threads.drain(..) {
            t.join().map_err(|_| std::io::Error::other("an upload thread panicked"))?;
        }
        self.failure()?;
        let mut done = std::mem::take(&mut self.progress.lock().map_err(|_| std::io::Error::other("poisoned"))?.done);
        done.sort();
        Ok(done)
    }
}

fn io_kind(e: &Error) -> ErrorKind {
    match e {
        Error::Io { source, .. } => source.kind(),
        _ => ErrorKind::Other,
    }
}

fn to_io(e: Error) -> std::io::Error {
    std::io::Error::new(io_kind(&e), e.to_string())
}

/// A file being written to S3 (see the [module documentation](self)).
#[derive(Debug)]
pub struct S3Sink {
    object: Arc<Object>,
    part_size: usize,
    /// Part 1: the first `part_size` bytes, uploaded last.
    head: Vec<u8>,
    /// The part being filled (number `next_part`).
    current: Vec<u8>,
    next_part: u32,
    len: u64,
    upload: Option<Upload>,
    finished: bool,
}

impl S3Sink {
    /// Starts the multipart upload of `s3://bucket/key`.
    pub fn create(url: &str) -> Result<Self> {
        let requests = S3Requests::new(url)?;
        let object = Arc::new(Object { transport: Transport::new(url)?, requests });
        let (part_size, in_flight) = (part_size()?, parts_in_flight()?);
        let upload = Some(Upload::start(&object, in_flight)?);
        Ok(S3Sink {
            object,
            part_size,
            head: Vec::new(),
            current: Vec::new(),
            next_part: 2,
            len: 0,
            upload,
            finished: false,
        })
    }

    /// Hands the full `current` part to an upload thread.
    fn ship(&mut self) -> std::io::Result<()> {
        let bytes = std::mem::replace(&mut self.current, Vec::with_capacity(self.part_size));
        let number = self.next_part;
        self.next_part += 1;
        match &self.upload {
            Some(upload) => upload.send(number, bytes),
            None => Err(std::io::Error::other("no upload")),
        }
    }
}

impl WriteSink for S3Sink {
    fn append(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        if self.finished {
            return Err(std::io::Error::other("the upload is finished"));
        }
        while !bytes.is_empty() {
            let target = if self.head.len() < self.part_size { &mut self.head } else { &mut self.current };
            if target.capacity() == 0 {
                target.reserve_exact(self.part_size);
            }
            let n = bytes.len().min(self.part_size - target.len());
            target.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            self.len += n as u64;
            if self.current.len() == self.part_size {
                self.ship()?;
            }
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        crate::storage::sink::check_rewrite(offset, bytes.len(), self.len)?;
        let end = offset as usize + bytes.len();
        if end > self.head.len() {
            return Err(std::io::Error::new(
                ErrorKind::Unsupported,
                format!("an S3 upload rewrites only its first {} bytes, not bytes {offset}..{end}", self.head.len()),
            ));
        }
        self.head[offset as usize..end].copy_from_slice(bytes);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// Nothing to do: bytes leave as whole parts, and nothing is visible
    /// before [`WriteSink::finish`]. Reports a failed part upload.
    fn flush(&mut self) -> std::io::Result<()> {
        self.upload.as_ref().map_or(Ok(()), Upload::failure)
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if self.finished {
            return Ok(());
        }
        if !self.current.is_empty() {
            self.ship()?;
        }
        let head = std::mem::take(&mut self.head);
        let Some(upload) = self.upload.as_mut() else { return Err(std::io::Error::other("no upload")) };
        upload.send(1, head)?;
        let parts = upload.drain()?;
        let expected = self.next_part - 1;
        if parts.len() != expected as usize {
            return Err(std::io::Error::other(format!("{} of {expected} parts uploaded", parts.len())));
        }
        let id = upload.id.clone();
        self.object.complete(&id, &parts).map_err(to_io)?;
        self.finished = true;
        self.upload = None;
        Ok(())
    }

    fn describe(&self) -> String {
        self.object.transport.url.clone()
    }
}

impl Drop for S3Sink {
    /// An unfinished upload is aborted: its parts are deleted and no object
    /// appears.
    fn drop(&mut self) {
        if let Some(mut upload) = self.upload.take() {
            if let Ok(mut p) = upload.progress.lock() {
                p.error.get_or_insert_with(|| "abandoned".to_string());
            }
            let _ = upload.drain();
            let _ = self.object.abort(&upload.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_values() {
        let text = "<?xml?><InitiateMultipartUploadResult><Bucket>b</Bucket>\
                    <UploadId> abc-1.x </UploadId></InitiateMultipartUploadResult>";
        assert_eq!(xml_value(text, "UploadId").as_deref(), Some("abc-1.x"));
        assert_eq!(xml_value(text, "Key"), None);
    }
}
