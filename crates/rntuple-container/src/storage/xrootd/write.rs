//! [`XrootdSink`]: a file written to `root://host//path` at offsets under a
//! temporary name beside it, renamed to its own name only when complete.
//!
//! ```text
//!  create:  kXR_open  /dir/.name.PID-RAND.rntuple-tmp  (kXR_delete | kXR_mkpath)
//!  append:  kXR_write at offset, 4 MiB at a time (the rest buffered)
//!  finish:  kXR_write of the head at 0, kXR_sync, kXR_close,
//!           kXR_mv /dir/.name...rntuple-tmp /dir/name
//!  drop:    kXR_close, kXR_rm of the temporary name
//! ```
//!
//! A writer killed before `finish` leaves only the temporary name, whose
//! first bytes are the placeholder every reader refuses. A broken
//! connection is reopened (`kXR_open_updt`) and the write sent again:
//! writes at offsets are idempotent. Redirects and waits are followed as the
//! reader follows them.

use std::io;
use std::time::Duration;

use rntuple_format::{Error, Result};

use super::client::{Conn, Fail, Reply};
use super::protocol as p;
use super::{parse_url, timeout_from_env, Op, MAX_REDIRECTS, MAX_RETRIES, MAX_WAITS, MAX_WAIT_SECONDS};
use crate::storage::WriteSink;

/// Bytes sent per `kXR_write`.
const WRITE_CHUNK: usize = 4 << 20;

/// A file being written to an XRootD server (see the [module documentation](self)).
#[derive(Debug)]
pub struct XrootdSink {
    url: String,
    host: String,
    port: u16,
    /// Where the server sends us (a redirect), else `host:port`.
    target: (String, u16),
    /// The final path, and the temporary one written until `finish`.
    path: String,
    temp: String,
    user: String,
    timeout: Duration,
    conn: Option<Conn>,
    fhandle: Option<[u8; 4]>,
    /// Whether the temporary file was created (later opens reopen it).
    created: bool,
    /// Appended bytes not sent yet, starting at file offset `sent`.
    buffer: Vec<u8>,
    sent: u64,
    finished: bool,
}

/// `/dir/.name.PID-RAND.rntuple-tmp` for `/dir/name`.
fn temp_path(path: &str) -> String {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{dir}/.{name}.{}-{nanos:08x}.rntuple-tmp", std::process::id())
}

impl XrootdSink {
    /// Creates the temporary file of `url` (replacing one of the same name).
    pub fn create(url: &str) -> Result<Self> {
        let (host, port, path) = parse_url(url)?;
        if path.contains('?') {
            return Err(Error::invalid(format!(
                "{}: writing takes a path without '?' options",
                crate::storage::redact::redact_url(url)
            )));
        }
        let user = std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "rntuple".into());
        let mut sink = XrootdSink {
            url: crate::storage::redact::redact_url(url).into_owned(),
            target: (host.clone(), port),
            host,
            port,
            temp: temp_path(&path),
            path,
            user,
            timeout: timeout_from_env(),
            conn: None,
            fhandle: None,
            created: false,
            buffer: Vec::new(),
            sent: 0,
            finished: false,
        };
        sink.run("create", true, &mut |_, _| Ok(Reply::Done))?;
        Ok(sink)
    }

    /// Connects (and, with `open`, opens the temporary file) when needed.
    fn establish(&mut self, open: bool) -> std::result::Result<Option<Reply>, Fail> {
        if self.conn.is_none() {
            let (host, port) = self.target.clone();
            self.conn = Some(Conn::connect(&host, port, &self.user, self.timeout, &self.url)?);
            self.fhandle = None;
        }
        if !open || self.fhandle.is_some() {
            return Ok(None);
        }
        let options = if self.created { p::KXR_OPEN_UPDT } else { p::KXR_DELETE | p::KXR_MKPATH };
        let mut body = Vec::new();
        let Some(conn) = self.conn.as_mut() else { return Ok(None) };
        let reply = conn.call(|s| p::open_write(s, &self.temp, options), 64 << 10, &mut |b| {
            body.extend_from_slice(b);
            Ok(())
        })?;
        if !matches!(reply, Reply::Done) {
            return Ok(Some(reply));
        }
        let handle = body.get(..4).and_then(|h| <[u8; 4]>::try_from(h).ok());
        self.fhandle = Some(handle.ok_or_else(|| {
            Fail::Fatal(Error::io(self.url.clone(), io::Error::other("kXR_open answered without a file handle")))
        })?);
        self.created = true;
        Ok(None)
    }

    /// Runs `op` (given the connection and the open file's handle) until it
    /// succeeds: reconnects after a broken connection, follows redirects,
    /// honours waits; fails naming the URL and what it was doing.
    fn run(&mut self, what: &str, open: bool, op: &mut Op<'_>) -> Result<()> {
        let (mut redirects, mut waits, mut retries) = (0u32, 0u32, 0u32);
        loop {
            let outcome = match self.establish(open) {
                Ok(Some(reply)) => Ok(reply),
                Ok(None) => match self.conn.as_mut() {
                    Some(conn) => op(conn, self.fhandle.unwrap_or_default()),
                    None => Err(Fail::Io(io::Error::other("no connection"))),
                },
                Err(f) => Err(f),
            };
            let context = format!("{} ({what}; temporary file {})", self.url, self.temp);
            match outcome {
                Ok(Reply::Done) => return Ok(()),
                Ok(Reply::Redirect(r)) => {
                    redirects += 1;
                    if redirects > MAX_REDIRECTS {
                        return Err(Error::io(context.clone(), io::Error::other("too many redirects")));
                    }
                    self.conn = None;
                    self.target = (r.host, r.port);
                }
                Ok(Reply::Wait(secs, msg)) => {
                    waits += 1;
                    if waits > MAX_WAITS {
                        let e = io::Error::new(io::ErrorKind::TimedOut, format!("asked to wait too often ({msg})"));
                        return Err(Error::io(context.clone(), e));
                    }
                    std::thread::sleep(Duration::from_secs(u64::from(secs.min(MAX_WAIT_SECONDS))));
                }
                Ok(Reply::Error(code, msg)) => {
                    let kind = match code {
                        p::KXR_NOT_FOUND => io::ErrorKind::NotFound,
                        p::KXR_NOT_AUTHORIZED => io::ErrorKind::PermissionDenied,
                        _ => io::ErrorKind::Other,
                    };
                    let e =
                        io::Error::new(kind, format!("the server refused: {msg} ({}, {code})", p::error_name(code)));
                    return Err(Error::io(context.clone(), e));
                }
                Err(Fail::Fatal(e)) => return Err(e.within(&self.url)),
                Err(Fail::Io(e)) => {
                    self.conn = None;
                    self.fhandle = None;
                    let timed_out = matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock);
                    if timed_out || retries >= MAX_RETRIES {
                        let why = if timed_out {
                            io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!("no answer within {:.1} s ({e})", self.timeout.as_secs_f64()),
                            )
                        } else {
                            io::Error::new(e.kind(), format!("{e} (after {} attempts)", retries + 1))
                        };
                        return Err(Error::io(context.clone(), why));
                    }
                    retries += 1;
                    std::thread::sleep(Duration::from_millis(100 << retries));
                    self.target = (self.host.clone(), self.port);
                    redirects = 0;
                }
            }
        }
    }

    /// Sends the buffered bytes.
    fn send_buffer(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let buffer = std::mem::take(&mut self.buffer);
        let at = self.sent;
        let result = self.write_at_offset(at, &buffer);
        self.buffer = buffer;
        result?;
        self.sent += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }

    fn write_at_offset(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        let what = format!("writing {} bytes at offset {offset}", bytes.len());
        self.run(&what, true, &mut |conn, fh| conn.call(|s| p::write(s, fh, offset, bytes), 0, &mut |_| Ok(())))
    }

    fn finish_inner(&mut self) -> Result<()> {
        self.send_buffer()?;
        self.run("kXR_sync", true, &mut |conn, fh| conn.call(|s| p::sync(s, fh), 0, &mut |_| Ok(())))?;
        self.run("kXR_close", true, &mut |conn, fh| conn.call(|s| p::close(s, fh), 0, &mut |_| Ok(())))?;
        self.fhandle = None;
        let (temp, path) = (self.temp.clone(), self.path.clone());
        self.run("renaming the temporary file (kXR_mv)", false, &mut |conn, _| {
            conn.call(|s| p::mv(s, &temp, &path), 0, &mut |_| Ok(()))
        })
    }
}

fn to_io(e: Error) -> io::Error {
    match e {
        Error::Io { context, source } => io::Error::new(source.kind(), format!("{context}: {source}")),
        e => io::Error::other(e.to_string()),
    }
}

impl WriteSink for XrootdSink {
    fn append(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let n = bytes.len().min(WRITE_CHUNK - self.buffer.len());
            self.buffer.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.buffer.len() == WRITE_CHUNK {
                self.send_buffer().map_err(to_io)?;
            }
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        crate::storage::sink::check_rewrite(offset, bytes.len(), self.len())?;
        self.send_buffer().map_err(to_io)?;
        self.write_at_offset(offset, bytes).map_err(to_io)
    }

    fn len(&self) -> u64 {
        self.sent + self.buffer.len() as u64
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_buffer().map_err(to_io)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.send_buffer().map_err(to_io)?;
        self.run("kXR_sync", true, &mut |conn, fh| conn.call(|s| p::sync(s, fh), 0, &mut |_| Ok(()))).map_err(to_io)
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.finished {
            self.finish_inner().map_err(to_io)?;
            self.finished = true;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.url.clone()
    }
}

impl Drop for XrootdSink {
    /// An unfinished file is removed: only its temporary name ever existed.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let (Some(conn), Some(fh)) = (self.conn.as_mut(), self.fhandle) {
            let _ = conn.call(|s| p::close(s, fh), 0, &mut |_| Ok(()));
        }
        self.fhandle = None;
        let temp = self.temp.clone();
        let _ = self.run("removing the temporary file", false, &mut |conn, _| {
            conn.call(|s| p::rm(s, &temp), 0, &mut |_| Ok(()))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_sit_beside_the_file() {
        let t = temp_path("/data/run/out.root");
        assert!(t.starts_with("/data/run/.out.root.") && t.ends_with(".rntuple-tmp"), "{t}");
        assert!(temp_path("/out.root").starts_with("/.out.root."));
    }
}
