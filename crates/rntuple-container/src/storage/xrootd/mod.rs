//! XRootD read backend for `root://` and `xroot://` URLs: a client subset
//! written from the protocol reference ("XRootD Protocol Version 5":
//! handshake, `kXR_protocol`, `kXR_login`, `kXR_open`, `kXR_stat`,
//! `kXR_read`, `kXR_readv`, `kXR_close`; answers `kXR_ok`, `kXR_oksofar`,
//! `kXR_error`, `kXR_redirect`, `kXR_wait`, `kXR_waitresp`). Why not bind
//! libXrdCl, and the limits it keeps, are in `docs/remote.md` ("XRootD").
//!
//! * `root://host[:port]//abs/path[?opaque]` (port 1094 by default); one
//!   slash after the host means the same absolute path. The query goes to
//!   the server with `kXR_open` as opaque data.
//! * Up to [`MAX_IN_FLIGHT`] connections, opened as needed, one request at
//!   a time on each: concurrent callers, and the `kXR_readv` requests of one
//!   large vectored read, go out in parallel. A broken connection is opened
//!   again (from the URL's host, following redirects anew) up to
//!   [`MAX_RETRIES`] times with a doubling backoff; a timeout is not retried.
//! * Timeout on connect and on every read of the socket:
//!   `RNTUPLE_XROOTD_TIMEOUT` seconds, 60 by default.
//! * A vectored read becomes as few `kXR_readv` requests as the protocol
//!   allows (1024 chunks of at most 2 MiB - 16 bytes each); a single range
//!   is one `kXR_read`.

mod client;
mod protocol;
mod readv;
mod write;

pub use write::XrootdSink;

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rntuple_format::{Error, Location, Result};

use self::client::{Conn, Fail, Reply};
use self::protocol::{self as p, Stat};
use self::readv::{Piece, ReadvParser};
use super::{check_range, check_ranges_into, Backend, Identity, IoHints, ReadAt, TransportCounters, TransportStats};

/// Default port of `root://` URLs.
pub const DEFAULT_PORT: u16 = 1094;
/// Redirects followed for one request before giving up.
pub const MAX_REDIRECTS: u32 = 10;
/// `kXR_wait` answers honoured for one request before giving up.
pub const MAX_WAITS: u32 = 10;
/// Longest single `kXR_wait` honoured (seconds); longer ones are shortened.
pub const MAX_WAIT_SECONDS: u32 = 30;
/// New connections tried after a broken one, for one request.
pub const MAX_RETRIES: u32 = 3;
/// Largest `kXR_read` sent at once; longer reads are split. As large as
/// the largest request ([`XROOTD_HINTS`]), so a contiguous run of a
/// cluster's pages is one request (the protocol allows up to 2^31-1 bytes;
/// the server answers in `kXR_oksofar` parts).
const MAX_READ: usize = 128 << 20;
/// Connections (each with one request in flight) per open file.
pub const MAX_IN_FLIGHT: usize = 4;

/// Request shape for an XRootD server: reading through a gap of up to
/// 512 KiB costs a few milliseconds at WAN rates, less than the round trip a
/// second request costs. Requests (and the reader's batches) of up to
/// 128 MiB let the pages a read needs from one cluster of ROOT's default
/// size travel in one `kXR_readv` (up to 1024 chunks of 2 MiB), as ROOT
/// reads a cluster: the read engine holds at most two batches, so this bounds
/// its buffers at 256 MiB. [`MAX_IN_FLIGHT`] requests at once on as many
/// connections when a batch needs several.
pub const XROOTD_HINTS: IoHints =
    IoHints { coalesce_gap: 512 << 10, max_request: 128 << 20, max_in_flight: MAX_IN_FLIGHT };

/// One request on an open session (connection, file handle).
type Op<'a> = dyn FnMut(&mut Conn, [u8; 4]) -> std::result::Result<Reply, Fail> + 'a;

/// The built-in backend of `root://` and `xroot://`.
#[derive(Debug, Default)]
pub struct XrootdBackend;

impl Backend for XrootdBackend {
    fn open(&self, url: &str) -> Result<Arc<dyn ReadAt>> {
        Ok(Arc::new(XrootdFile::open(url)?))
    }

    fn create(&self, url: &str) -> Result<Box<dyn super::WriteSink>> {
        Ok(Box::new(XrootdSink::create(url)?))
    }
}

/// Splits `host[:port]` or `[v6addr][:port]`; `None` when malformed.
pub(crate) fn split_host_port(authority: &str) -> Option<(String, u16)> {
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((h, port)) => (h, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok().filter(|&p| p > 0)?,
        None => DEFAULT_PORT,
    };
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// Host, port and path (with `?opaque`) of a `root://` or `xroot://` URL.
fn parse_url(url: &str) -> Result<(String, u16, String)> {
    let bad = |why: &str| Error::invalid(format!("{}: {why}", crate::storage::redact::redact_url(url)));
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("not a URL"))?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "root" | "xroot") {
        return Err(bad("not a root:// or xroot:// URL"));
    }
    let (authority, path) = rest.split_once('/').ok_or_else(|| bad("the URL names no file"))?;
    let (host, port) = split_host_port(authority).ok_or_else(|| bad("malformed host or port"))?;
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let path = path.trim_start_matches('/');
    if path.is_empty() {
        return Err(bad("the URL names no file"));
    }
    let path = match query.filter(|q| !q.is_empty()) {
        Some(q) => format!("/{path}?{q}"),
        None => format!("/{path}"),
    };
    Ok((host, port, path))
}

/// The timeout of `RNTUPLE_XROOTD_TIMEOUT` (seconds), 60 s by default.
fn timeout_from_env() -> Duration {
    std::env::var("RNTUPLE_XROOTD_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(Duration::from_secs(60), Duration::from_secs_f64)
}

#[derive(Debug)]
struct Target {
    host: String,
    port: u16,
    opaque: Option<String>,
}

#[derive(Debug)]
struct Session {
    conn: Conn,
    fhandle: [u8; 4],
}

/// One connection slot: where it points and its open session, if any.
#[derive(Debug)]
struct State {
    target: Target,
    session: Option<Session>,
}

/// A file on an XRootD server, open for reading.
#[derive(Debug)]
pub struct XrootdFile {
    url: String,
    host: String,
    port: u16,
    path: String,
    user: String,
    timeout: Duration,
    size: u64,
    mtime: u64,
    /// The stat of the first open; later opens must match it.
    stat: OnceLock<Stat>,
    slots: Vec<Mutex<State>>,
    next_slot: AtomicUsize,
    counters: TransportCounters,
}

impl XrootdFile {
    /// Opens `url` with the timeout of `RNTUPLE_XROOTD_TIMEOUT`.
    pub fn open(url: &str) -> Result<Self> {
        Self::open_with_timeout(url, timeout_from_env())
    }

    /// Opens `url`: connects, logs in, opens read-only and stats the file.
    pub fn open_with_timeout(url: &str, timeout: Duration) -> Result<Self> {
        let (host, port, path) = parse_url(url)?;
        let user = std::env::var("USER").ok().filter(|u| !u.is_empty()).unwrap_or_else(|| "rntuple".into());
        let slots = (0..MAX_IN_FLIGHT)
            .map(|_| Mutex::new(State { target: Target { host: host.clone(), port, opaque: None }, session: None }))
            .collect();
        let mut file = XrootdFile {
            url: crate::storage::redact::redact_url(url).into_owned(),
            host,
            port,
            path,
            user,
            timeout,
            size: 0,
            mtime: 0,
            stat: OnceLock::new(),
            slots,
            next_slot: AtomicUsize::new(0),
            counters: TransportCounters::default(),
        };
        file.run(&mut file.slot(0), "open", None, &mut |_, _| Ok(Reply::Done))?;
        let stat = file.stat.get().cloned();
        let stat = stat.ok_or_else(|| Error::out_of_spec("no stat information after open", file.loc(None)))?;
        file.size = stat.size;
        file.mtime = stat.mtime;
        Ok(file)
    }

    fn slot(&self, i: usize) -> MutexGuard<'_, State> {
        self.slots[i % self.slots.len()].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A free connection slot if there is one, else the next in turn.
    fn any_slot(&self) -> MutexGuard<'_, State> {
        for s in &self.slots {
            if let Ok(guard) = s.try_lock() {
                return guard;
            }
        }
        self.slot(self.next_slot.fetch_add(1, Ordering::Relaxed))
    }

    fn loc(&self, offset: Option<u64>) -> Location {
        Location::new(self.url.clone(), offset)
    }

    fn context(&self, what: &str, offset: Option<u64>) -> String {
        match offset {
            Some(o) => format!("{} ({what} at offset {o})", self.url),
            None => format!("{} ({what})", self.url),
        }
    }

    /// Connects to the current target, logs in and opens the file; `Err`
    /// of the inner result is a final answer other than success.
    fn establish(&self, st: &mut State) -> std::result::Result<std::result::Result<Session, Reply>, Fail> {
        let t = &st.target;
        let mut conn = Conn::connect(&t.host, t.port, &self.user, self.timeout, &self.url)?;
        // The URL's own opaque data may carry credentials (`authz=`): they
        // go to the URL's host and to hosts the user opted into, not to any
        // host a server redirects to.
        let own = if t.host.eq_ignore_ascii_case(&self.host) || crate::storage::http::token::host_opted_in(&t.host) {
            self.path.clone()
        } else {
            crate::storage::redact::without_credentials(&self.path)
        };
        let path = match &t.opaque {
            Some(o) if own.contains('?') => format!("{own}&{o}"),
            Some(o) => format!("{own}?{o}"),
            None => own,
        };
        let mut body = Vec::new();
        let reply = conn.call(|s| p::open(s, &path), 64 << 10, &mut |b| {
            body.extend_from_slice(b);
            Ok(())
        })?;
        if !matches!(reply, Reply::Done) {
            return Ok(Err(reply));
        }
        let loc = self.loc(None);
        let (fhandle, stat) = p::open_body(&body)
            .ok_or_else(|| Fail::Fatal(Error::out_of_spec("kXR_open answer too short", loc.clone())))?;
        let stat = match stat {
            Some(s) => s,
            None => {
                body.clear();
                match conn.call(|s| p::stat(s, fhandle), 64 << 10, &mut |b| {
                    body.extend_from_slice(b);
                    Ok(())
                })? {
                    Reply::Done => p::stat_body(&body)
                        .ok_or_else(|| Fail::Fatal(Error::out_of_spec("unreadable kXR_stat answer", loc.clone())))?,
                    other => return Ok(Err(other)),
                }
            }
        };
        if stat.flags & p::KXR_IS_DIR != 0 {
            return Err(Fail::Fatal(Error::invalid(format!("{}: is a directory", self.url))));
        }
        if let Some(old) = self.stat.get() {
            if (old.size, old.mtime) != (stat.size, stat.mtime) {
                return Err(Fail::Fatal(Error::io(
                    self.context("reopen", None),
                    io::Error::other(format!(
                        "the remote file changed while open (size {} -> {}, mtime {} -> {})",
                        old.size, stat.size, old.mtime, stat.mtime
                    )),
                )));
            }
        }
        let _ = self.stat.set(stat);
        Ok(Ok(Session { conn, fhandle }))
    }

    /// Runs `op` on an open session until it succeeds: opens the file when
    /// needed, follows redirects, honours waits, retries broken connections.
    fn run(&self, st: &mut State, what: &str, offset: Option<u64>, op: &mut Op<'_>) -> Result<()> {
        let (mut redirects, mut waits, mut retries) = (0u32, 0u32, 0u32);
        let deadline = client::deadline_for(self.timeout);
        let started = Instant::now();
        loop {
            if started.elapsed() > deadline {
                return Err(client::deadline_error(&self.context(what, offset), deadline));
            }
            let outcome = match st.session.as_mut() {
                Some(s) => op(&mut s.conn, s.fhandle),
                None => match self.establish(st) {
                    Ok(Ok(session)) => {
                        st.session = Some(session);
                        continue;
                    }
                    Ok(Err(reply)) => Ok(reply),
                    Err(f) => Err(f),
                },
            };
            match outcome {
                Ok(Reply::Done) => return Ok(()),
                Ok(Reply::Redirect(r)) => {
                    redirects += 1;
                    if redirects > MAX_REDIRECTS {
                        return Err(Error::io(
                            self.context(what, offset),
                            io::Error::other(format!(
                                "more than {MAX_REDIRECTS} redirects (last to {}:{})",
                                r.host, r.port
                            )),
                        ));
                    }
                    st.session = None;
                    st.target = Target { host: r.host, port: r.port, opaque: r.opaque };
                }
                Ok(Reply::Wait(secs, msg)) => {
                    waits += 1;
                    if waits > MAX_WAITS {
                        return Err(Error::io(
                            self.context(what, offset),
                            io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!("the server asked to wait {MAX_WAITS} times ({msg})"),
                            ),
                        ));
                    }
                    let wait = Duration::from_secs(u64::from(secs.min(MAX_WAIT_SECONDS)));
                    // Never sleep past the deadline: wake to report it.
                    std::thread::sleep(wait.min(deadline.saturating_sub(started.elapsed()) + Duration::from_millis(1)));
                }
                Ok(Reply::Error(code, msg)) => return Err(self.server_error(code, &msg, what, offset)),
                Err(Fail::Fatal(e)) => return Err(e),
                Err(Fail::Io(e)) => {
                    st.session = None;
                    let timed_out = matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock);
                    if timed_out || retries >= MAX_RETRIES {
                        let kind = if timed_out { io::ErrorKind::TimedOut } else { e.kind() };
                        let why = if timed_out {
                            format!("no answer within {:.1} s ({e})", self.timeout.as_secs_f64())
                        } else {
                            format!("{e} (after {} attempts)", retries + 1)
                        };
                        return Err(Error::io(self.context(what, offset), io::Error::new(kind, why)));
                    }
                    retries += 1;
                    self.counters.retry();
                    std::thread::sleep(Duration::from_millis(100 << retries));
                    // Start again where the URL points: the server we were
                    // redirected to may be the one that failed.
                    st.target = Target { host: self.host.clone(), port: self.port, opaque: None };
                    redirects = 0;
                }
            }
        }
    }

    fn server_error(&self, code: u32, msg: &str, what: &str, offset: Option<u64>) -> Error {
        let kind = match code {
            p::KXR_NOT_FOUND => io::ErrorKind::NotFound,
            p::KXR_NOT_AUTHORIZED => io::ErrorKind::PermissionDenied,
            p::KXR_IS_DIRECTORY => io::ErrorKind::InvalidInput,
            _ => io::ErrorKind::Other,
        };
        Error::io(self.context(what, offset), io::Error::new(kind, format!("{msg} ({}, {code})", p::error_name(code))))
    }

    /// Reads `ranges` one after the other into `out`: one `kXR_read` for a
    /// lone range, else `kXR_readv` requests of up to
    /// [`p::READV_MAX_CHUNKS`] chunks, in parallel on up to
    /// [`MAX_IN_FLIGHT`] connections.
    fn fetch(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        if let [(offset, _)] = ranges {
            let mut st = self.any_slot();
            for (i, dest) in out.chunks_mut(MAX_READ).enumerate() {
                self.read_one(&mut st, offset + (i * MAX_READ) as u64, dest)?;
            }
            return Ok(());
        }
        let pieces = readv::plan(ranges);
        let mut batches = readv::batches(&pieces, out);
        if batches.len() <= 1 {
            let mut st = self.any_slot();
            return batches.iter_mut().try_for_each(|(batch, region)| self.read_vector(&mut st, batch, region));
        }
        let workers = batches.len().min(self.slots.len());
        let mut groups: Vec<Vec<(Vec<Piece>, &mut [u8])>> = (0..workers).map(|_| Vec::new()).collect();
        for (i, b) in batches.into_iter().enumerate() {
            groups[i % workers].push(b);
        }
        let results: Vec<Result<()>> = std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .into_iter()
                .enumerate()
                .map(|(w, group)| {
                    scope.spawn(move || {
                        let mut st = self.slot(w);
                        group.into_iter().try_for_each(|(batch, region)| self.read_vector(&mut st, &batch, region))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::io(
                            self.context("vectored read", None),
                            io::Error::other("a reader thread panicked"),
                        ))
                    })
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// One `kXR_read` (3013) of `dest.len()` bytes at `offset`.
    fn read_one(&self, st: &mut State, offset: u64, dest: &mut [u8]) -> Result<()> {
        let len = dest.len();
        self.run(st, "read", Some(offset), &mut |conn, fh| {
            let mut got = 0usize;
            let reply = conn.call(|s| p::read(s, fh, offset, len as u32), len as u64, &mut |b| {
                dest[got..got + b.len()].copy_from_slice(b);
                got += b.len();
                Ok(())
            })?;
            if matches!(reply, Reply::Done) && got != len {
                return Err(Fail::Fatal(self.short(offset, len, got)));
            }
            Ok(reply)
        })?;
        self.counters.single(len as u64);
        Ok(())
    }

    /// One `kXR_readv` (3025) of `batch` into `region`.
    fn read_vector(&self, st: &mut State, batch: &[Piece], region: &mut [u8]) -> Result<()> {
        let wire: Vec<(u64, u32)> = batch.iter().map(|c| (c.offset, c.len as u32)).collect();
        let expected = (region.len() + batch.len() * p::READV_ITEM_LEN) as u64;
        let first = batch.first().map(|c| c.offset);
        self.run(st, "vectored read", first, &mut |conn, fh| {
            let mut parser = ReadvParser::new(batch);
            let reply = conn.call(|s| p::readv(s, fh, &wire), expected, &mut |b| parser.feed(b, region, &self.url))?;
            if let (Reply::Done, Some((offset, len, got))) = (&reply, parser.missing()) {
                return Err(Fail::Fatal(self.short(offset, len, got)));
            }
            Ok(reply)
        })?;
        self.counters.vectored(batch.len() as u64, region.len() as u64);
        Ok(())
    }

    fn short(&self, offset: u64, len: usize, got: usize) -> Error {
        Error::Truncated {
            needed: len as u64,
            available: got as u64,
            location: Location::new(format!("{}: short answer from the server", self.url), Some(offset)),
        }
    }
}

impl ReadAt for XrootdFile {
    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.size, "read")?;
        if buf.is_empty() {
            return Ok(());
        }
        self.fetch(&[(offset, buf.len())], buf)
    }

    fn identity(&self) -> Result<Identity> {
        Ok(Identity { size: self.size, version: Some(self.mtime.to_string()) })
    }

    fn hints(&self) -> IoHints {
        XROOTD_HINTS
    }

    fn transport_stats(&self) -> Option<TransportStats> {
        Some(self.counters.snapshot())
    }

    /// Reads into one buffer (see [`ReadAt::read_ranges_into`]), then hands
    /// out each range (buffers allocated fallibly).
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        crate::storage::read_ranges_via_into(self, self.size, ranges)
    }

    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        check_ranges_into(ranges, self.size, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        self.fetch(ranges, out)
    }
}

impl Drop for XrootdFile {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            let st = slot.get_mut().unwrap_or_else(PoisonError::into_inner);
            if let Some(s) = st.session.as_mut() {
                s.conn.close(s.fhandle);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let ok = |u: &str| parse_url(u).unwrap();
        assert_eq!(ok("root://h//abs/f.root"), ("h".into(), 1094, "/abs/f.root".into()));
        assert_eq!(ok("root://h/abs/f.root"), ("h".into(), 1094, "/abs/f.root".into()));
        assert_eq!(ok("XROOT://u@h.org:2000//f.root?a=1"), ("h.org".into(), 2000, "/f.root?a=1".into()));
        assert_eq!(ok("root://[::1]:3000//f"), ("::1".into(), 3000, "/f".into()));
        for bad in ["root://h", "root://h/", "root://h:x//f", "root://:1//f", "http://h//f", "root://h:0//f"] {
            assert!(matches!(parse_url(bad), Err(Error::InvalidArgument { .. })), "{bad}");
        }
    }
}

/// The parsers of this backend for `storage::fuzzing`.
pub(crate) mod fuzzing {
    use super::client::Fail;
    use super::protocol as p;
    use super::readv::{batches, plan, ReadvParser};

    pub(crate) fn readv(ranges: &[(u64, usize)], answer: &[u8], splits: &[usize]) -> Result<Vec<u8>, String> {
        let total = ranges.iter().try_fold(0usize, |a, r| a.checked_add(r.1)).ok_or("ranges too long")?;
        let mut out = vec![0u8; total];
        let pieces = plan(ranges);
        let mut rest = answer;
        for (batch, region) in batches(&pieces, &mut out) {
            let mut parser = ReadvParser::new(&batch);
            let mut i = 0usize;
            while !rest.is_empty() {
                let n = splits.get(i % splits.len().max(1)).copied().unwrap_or(rest.len()).clamp(1, rest.len());
                i += 1;
                parser.feed(&rest[..n], region, "fuzz").map_err(|f| match f {
                    Fail::Io(e) => e.to_string(),
                    Fail::Fatal(e) => e.to_string(),
                })?;
                rest = &rest[n..];
                if parser.missing().is_none() {
                    break;
                }
            }
            if let Some((offset, len, _)) = parser.missing() {
                return Err(format!("short answer: {len} bytes at {offset} missing"));
            }
        }
        Ok(out)
    }

    pub(crate) fn bodies(body: &[u8]) {
        let _ = p::error_body(body);
        let _ = p::wait_body(body);
        let _ = p::redirect_body(body);
        let _ = p::open_body(body);
        let _ = p::stat_body(body);
        let _ = p::text(body);
        if let Some(h) = body.get(..8).and_then(|h| <&[u8; 8]>::try_from(h).ok()) {
            let _ = p::ResponseHeader::parse(h);
        }
    }
}
