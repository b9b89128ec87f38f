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
//! * One connection, one request at a time (a mutex). A broken connection
//!   is opened again (from the URL's host, following redirects anew) up to
//!   [`MAX_RETRIES`] times with a doubling backoff; a timeout is not retried.
//! * Timeout on connect and on every read of the socket:
//!   `RNTUPLE_XROOTD_TIMEOUT` seconds, 60 by default.
//! * A vectored read becomes as few `kXR_readv` requests as the protocol
//!   allows (1024 chunks of at most 2 MiB - 16 bytes each); a single range
//!   is one `kXR_read`.

mod client;
mod protocol;

use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rntuple_format::{Error, Location, Result};

use self::client::{Conn, Fail, Reply};
use self::protocol::{self as p, Stat};
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
/// Largest `kXR_read` sent at once; longer reads are split.
const MAX_READ: usize = 64 << 20;

/// Request shape for an XRootD server: reading through a gap of up to
/// 512 KiB costs a few milliseconds at WAN rates, less than the round trip a
/// second request costs; 16 MiB per request keeps the bytes in flight
/// bounded while a `kXR_readv` of up to 1024 chunks amortizes the latency.
pub const XROOTD_HINTS: IoHints = IoHints { coalesce_gap: 512 << 10, max_request: 16 << 20, max_in_flight: 1 };

/// The built-in backend of `root://` and `xroot://`.
#[derive(Debug, Default)]
pub struct XrootdBackend;

impl Backend for XrootdBackend {
    fn open(&self, url: &str) -> Result<Arc<dyn ReadAt>> {
        Ok(Arc::new(XrootdFile::open(url)?))
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
    let bad = |why: &str| Error::InvalidArgument { message: format!("{url}: {why}") };
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

#[derive(Debug)]
struct State {
    target: Target,
    session: Option<Session>,
    stat: Option<Stat>,
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
    state: Mutex<State>,
    counters: TransportCounters,
}

/// One piece of a vectored read: where it is in the file and where it goes.
#[derive(Debug, Clone, Copy)]
struct Piece {
    offset: u64,
    len: usize,
    dest: usize,
    at: usize,
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
        let target = Target { host: host.clone(), port, opaque: None };
        let mut file = XrootdFile {
            url: url.to_string(),
            host,
            port,
            path,
            user,
            timeout,
            size: 0,
            mtime: 0,
            state: Mutex::new(State { target, session: None, stat: None }),
            counters: TransportCounters::default(),
        };
        let stat = {
            let mut st = file.state.lock().unwrap_or_else(PoisonError::into_inner);
            file.run(&mut st, "open", None, &mut |_, _| Ok(Reply::Done))?;
            st.stat.clone()
        };
        let stat = stat.ok_or_else(|| Error::out_of_spec("no stat information after open", file.loc(None)))?;
        file.size = stat.size;
        file.mtime = stat.mtime;
        Ok(file)
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
        let path = match &t.opaque {
            Some(o) if self.path.contains('?') => format!("{}&{o}", self.path),
            Some(o) => format!("{}?{o}", self.path),
            None => self.path.clone(),
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
        let (fhandle, stat) =
            p::open_body(&body).ok_or_else(|| Fail::Fatal(Error::out_of_spec("kXR_open answer too short", loc.clone())))?;
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
            return Err(Fail::Fatal(Error::InvalidArgument { message: format!("{}: is a directory", self.url) }));
        }
        if let Some(old) = &st.stat {
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
        st.stat = Some(stat);
        Ok(Ok(Session { conn, fhandle }))
    }

    /// Runs `op` on an open session until it succeeds: opens the file when
    /// needed, follows redirects, honours waits, retries broken connections.
    fn run(
        &self,
        st: &mut State,
        what: &str,
        offset: Option<u64>,
        op: &mut dyn FnMut(&mut Conn, [u8; 4]) -> std::result::Result<Reply, Fail>,
    ) -> Result<()> {
        let (mut redirects, mut waits, mut retries) = (0u32, 0u32, 0u32);
        loop {
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
                            io::Error::other(format!("more than {MAX_REDIRECTS} redirects (last to {}:{})", r.host, r.port)),
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
                    std::thread::sleep(Duration::from_secs(u64::from(secs.min(MAX_WAIT_SECONDS))));
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

    /// Reads `pieces` (each at most [`p::READV_MAX_CHUNK`] bytes when more
    /// than one) into `dests`: one `kXR_read` for a lone piece, else
    /// `kXR_readv` requests of up to [`p::READV_MAX_CHUNKS`] pieces.
    fn fetch(&self, pieces: &[Piece], dests: &mut [&mut [u8]]) -> Result<()> {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let [one] = pieces {
            for start in (0..one.len).step_by(MAX_READ) {
                let len = (one.len - start).min(MAX_READ);
                let offset = one.offset + start as u64;
                let dest = &mut dests[one.dest][one.at + start..one.at + start + len];
                self.run(&mut st, "read", Some(offset), &mut |conn, fh| {
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
            }
            return Ok(());
        }
        for batch in pieces.chunks(p::READV_MAX_CHUNKS) {
            let wire: Vec<(u64, u32)> = batch.iter().map(|c| (c.offset, c.len as u32)).collect();
            let payload: usize = batch.iter().map(|c| c.len).sum();
            let expected = (payload + batch.len() * p::READV_ITEM_LEN) as u64;
            let first = batch.first().map(|c| c.offset);
            self.run(&mut st, "vectored read", first, &mut |conn, fh| {
                let mut parser = ReadvParser { batch, next: 0, head: Vec::with_capacity(16), left: 0, at: 0 };
                let reply = conn.call(|s| p::readv(s, fh, &wire), expected, &mut |b| parser.feed(b, dests, self))?;
                if matches!(reply, Reply::Done) && (parser.next != batch.len() || parser.left != 0) {
                    let c = batch.get(parser.next.saturating_sub(1)).copied().unwrap_or(batch[0]);
                    return Err(Fail::Fatal(self.short(c.offset, c.len, c.len - parser.left)));
                }
                Ok(reply)
            })?;
            self.counters.vectored(batch.len() as u64, payload as u64);
        }
        Ok(())
    }

    fn short(&self, offset: u64, len: usize, got: usize) -> Error {
        Error::Truncated {
            needed: len as u64,
            available: got as u64,
            location: Location::new(format!("{}: short answer from the server", self.url), Some(offset)),
        }
    }

    /// Splits `ranges` into pieces the protocol accepts, each aimed at its
    /// destination buffer.
    fn plan(ranges: &[(u64, usize)], dests_share_one: bool) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut at_total = 0usize;
        for (i, &(offset, len)) in ranges.iter().enumerate() {
            let (dest, base) = if dests_share_one { (0, at_total) } else { (i, 0) };
            let mut start = 0usize;
            while start < len {
                let n = (len - start).min(p::READV_MAX_CHUNK);
                pieces.push(Piece { offset: offset + start as u64, len: n, dest, at: base + start });
                start += n;
            }
            at_total += len;
        }
        pieces
    }
}

/// Streams a `kXR_readv` answer (a sequence of `read_list` headers, each
/// followed by its data, across any number of `kXR_oksofar` parts) into the
/// destinations, checking each header against the piece asked for.
struct ReadvParser<'a> {
    batch: &'a [Piece],
    next: usize,
    head: Vec<u8>,
    left: usize,
    at: usize,
}

impl ReadvParser<'_> {
    fn feed(&mut self, mut b: &[u8], dests: &mut [&mut [u8]], file: &XrootdFile) -> std::result::Result<(), Fail> {
        while !b.is_empty() {
            if self.left == 0 {
                let take = (p::READV_ITEM_LEN - self.head.len()).min(b.len());
                self.head.extend_from_slice(&b[..take]);
                b = &b[take..];
                if self.head.len() < p::READV_ITEM_LEN {
                    return Ok(());
                }
                let h = &self.head;
                let rlen = u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as usize;
                let offset = u64::from_be_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]);
                let want = self.batch.get(self.next).copied();
                match want {
                    Some(c) if c.offset == offset && c.len == rlen => {
                        self.left = rlen;
                        self.at = c.at;
                    }
                    _ => {
                        return Err(Fail::Fatal(Error::out_of_spec(
                            format!("kXR_readv answer chunk {} is {rlen} bytes at {offset}, asked for {want:?}", self.next),
                            file.loc(Some(offset)),
                        )))
                    }
                }
                self.head.clear();
                self.next += 1;
                continue;
            }
            let c = self.batch[self.next - 1];
            let n = self.left.min(b.len());
            dests[c.dest][self.at..self.at + n].copy_from_slice(&b[..n]);
            self.at += n;
            self.left -= n;
            b = &b[n..];
        }
        Ok(())
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
        let piece = Piece { offset, len: buf.len(), dest: 0, at: 0 };
        self.fetch(&[piece], &mut [buf])
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

    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        for &(offset, len) in ranges {
            check_range(offset, len as u64, self.size, "vectored read")?;
        }
        let mut out: Vec<Vec<u8>> = ranges.iter().map(|&(_, len)| vec![0u8; len]).collect();
        let mut dests: Vec<&mut [u8]> = out.iter_mut().map(|v| v.as_mut_slice()).collect();
        let pieces = Self::plan(ranges, false);
        if !pieces.is_empty() {
            self.fetch(&pieces, &mut dests)?;
        }
        Ok(out)
    }

    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        check_ranges_into(ranges, self.size, out.len())?;
        let pieces = Self::plan(ranges, true);
        if pieces.is_empty() {
            return Ok(());
        }
        self.fetch(&pieces, &mut [out])
    }
}

impl Drop for XrootdFile {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = st.session.as_mut() {
            s.conn.close(s.fhandle);
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

    #[test]
    fn plans_pieces_within_readv_limits() {
        let big = p::READV_MAX_CHUNK * 2 + 5;
        let pieces = XrootdFile::plan(&[(0, 10), (100, big), (0, 0)], true);
        let shape: Vec<(u64, usize, usize)> = pieces.iter().map(|c| (c.offset, c.len, c.at)).collect();
        let m = p::READV_MAX_CHUNK;
        assert_eq!(
            shape,
            vec![(0, 10, 0), (100, m, 10), (100 + m as u64, m, 10 + m), (100 + 2 * m as u64, 5, 10 + 2 * m)]
        );
    }
}
