//! One XRootD connection: TCP with timeouts, the handshake, `kXR_protocol`,
//! `kXR_login`, and one request at a time with its answer streamed to a sink
//! (protocol reference, "XRootD Protocol Version 5": "Initial Handshake",
//! "Response Format", `kXR_oksofar` parts, `kXR_waitresp` + `kXR_attn`
//! `kXR_asynresp`). Redirects, waits and retries are decided one level up,
//! in [`super::XrootdFile`].

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use rntuple_format::{Error, Location};

use super::protocol::{self as p, Redirect, ResponseHeader};

/// Largest body of a non-data answer (error text, redirect target, login
/// session, stat text): the reference sizes these buffers at 4096 bytes; we
/// allow some slack and never allocate more for them.
const MAX_SMALL_BODY: usize = 64 << 10;

/// Bytes read from the socket at a time into the reusable scratch buffer.
const SCRATCH: usize = 256 << 10;

/// What went wrong below the protocol: a transport failure worth retrying on
/// a new connection, or a fault that another attempt will not cure.
#[derive(Debug)]
pub(super) enum Fail {
    Io(io::Error),
    Fatal(Error),
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Self {
        Fail::Io(e)
    }
}

/// The final answer to one request, apart from the data handed to the sink.
#[derive(Debug)]
pub(super) enum Reply {
    Done,
    Redirect(Redirect),
    Wait(u32, String),
    Error(u32, String),
}

/// A logged-in connection to one server.
#[derive(Debug)]
pub(super) struct Conn {
    stream: TcpStream,
    next_stream: u16,
    url: String,
    scratch: Vec<u8>,
    /// The longest one request may take, all its parts and waits included.
    deadline: Duration,
}

/// The overall deadline of one request: `RNTUPLE_XROOTD_DEADLINE` seconds,
/// else ten times the socket timeout (10 minutes by default). The socket
/// timeout bounds each read; this bounds a server that keeps answering
/// without finishing (endless `kXR_waitresp`, empty `kXR_oksofar` parts).
pub(super) fn deadline_for(timeout: Duration) -> Duration {
    std::env::var("RNTUPLE_XROOTD_DEADLINE")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(timeout.saturating_mul(10), Duration::from_secs_f64)
}

/// The error of a request past its deadline `limit`.
pub(super) fn deadline_error(url: &str, limit: Duration) -> Error {
    Error::io(
        url.to_string(),
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no complete answer within the request deadline of {:.1} s (RNTUPLE_XROOTD_DEADLINE)",
                limit.as_secs_f64()
            ),
        ),
    )
}

impl Conn {
    /// Connects to `host:port`, shakes hands and logs in as `user`.
    pub(super) fn connect(host: &str, port: u16, user: &str, timeout: Duration, url: &str) -> Result<Conn, Fail> {
        let addrs: Vec<_> = (host, port).to_socket_addrs()?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("host '{host}' has no address"));
        let mut stream = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = e,
            }
        }
        let stream = stream.ok_or(last)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        let deadline = deadline_for(timeout);
        let mut conn = Conn { stream, next_stream: 1, url: url.to_string(), scratch: Vec::new(), deadline };
        conn.handshake()?;
        conn.login(user)?;
        Ok(conn)
    }

    fn fatal(&self, message: String) -> Fail {
        Fail::Fatal(Error::out_of_spec(message, Location::new(self.url.clone(), None)))
    }

    /// Handshake plus `kXR_protocol`, sent together as a v5 client does.
    fn handshake(&mut self) -> Result<(), Fail> {
        let stream_id = self.stream_id();
        let mut first = p::handshake().to_vec();
        first.extend_from_slice(&p::protocol(stream_id));
        self.stream.write_all(&first)?;
        let mut h = [0u8; 8];
        self.stream.read_exact(&mut h)?;
        let hdr = ResponseHeader::parse(&h);
        if hdr.status != p::KXR_OK || hdr.dlen != 8 {
            return Err(self.fatal(format!(
                "not an XRootD server: handshake answered with status {} and {} bytes",
                hdr.status, hdr.dlen
            )));
        }
        let mut body = [0u8; 8];
        self.stream.read_exact(&mut body)?;
        let mut answer = Vec::new();
        match self.answer(stream_id, MAX_SMALL_BODY as u64, &mut |b| {
            answer.extend_from_slice(b);
            Ok(())
        })? {
            Reply::Done => {}
            other => return Err(self.fatal(format!("kXR_protocol answered with {other:?}"))),
        }
        let flags = answer.get(4..8).map_or(0, |f| u32::from_be_bytes([f[0], f[1], f[2], f[3]]));
        if flags & p::KXR_TLS_LOGIN != 0 {
            return Err(Fail::Fatal(Error::unsupported(
                "the server requires TLS before login (kXR_tlsLogin), which rntuple's XRootD client does not speak",
                Location::new(self.url.clone(), None),
            )));
        }
        Ok(())
    }

    /// `kXR_login`; a server that answers with security parameters (`&P=`)
    /// wants an authentication we cannot do.
    fn login(&mut self, user: &str) -> Result<(), Fail> {
        let mut body = Vec::new();
        let reply = self.call(|s| p::login(s, std::process::id(), user), MAX_SMALL_BODY as u64, &mut |b| {
            body.extend_from_slice(b);
            Ok(())
        })?;
        match reply {
            Reply::Done => {}
            Reply::Error(code, msg) => {
                return Err(Fail::Fatal(Error::io(
                    self.url.clone(),
                    io::Error::new(io::ErrorKind::PermissionDenied, format!("login refused: {msg} ({code})")),
                )))
            }
            other => return Err(self.fatal(format!("kXR_login answered with {other:?}"))),
        }
        let sec = p::text(body.get(16..).unwrap_or_default());
        if sec.contains("&P=") {
            return Err(Fail::Fatal(Error::unsupported(
                format!("the server asks for authentication ({sec}); rntuple's XRootD client logs in anonymously only"),
                Location::new(self.url.clone(), None),
            )));
        }
        Ok(())
    }

    fn stream_id(&mut self) -> [u8; 2] {
        self.next_stream = self.next_stream.wrapping_add(1).max(1);
        self.next_stream.to_be_bytes()
    }

    /// Sends the request `build` makes for a fresh stream id and reads its
    /// answer: the data of `kXR_oksofar`/`kXR_ok` parts goes to `sink` (at
    /// most `max` bytes in all, else the answer is refused as hostile).
    pub(super) fn call(
        &mut self,
        build: impl FnOnce([u8; 2]) -> Vec<u8>,
        max: u64,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), Fail>,
    ) -> Result<Reply, Fail> {
        let id = self.stream_id();
        self.stream.write_all(&build(id))?;
        self.answer(id, max, sink)
    }

    /// Reads answers for stream `id` until a final one.
    fn answer(
        &mut self,
        id: [u8; 2],
        max: u64,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), Fail>,
    ) -> Result<Reply, Fail> {
        let mut received = 0u64;
        let end = Instant::now() + self.deadline;
        loop {
            if Instant::now() > end {
                return Err(Fail::Fatal(deadline_error(&self.url, self.deadline)));
            }
            let mut h = [0u8; 8];
            self.stream.read_exact(&mut h)?;
            let mut hdr = ResponseHeader::parse(&h);
            if hdr.dlen < 0 {
                return Err(self.fatal(format!("answer with a negative length {}", hdr.dlen)));
            }
            if hdr.status == p::KXR_ATTN {
                // kXR_attn: actnum:i32 reserved[4], then for kXR_asynresp the
                // header and body of the answer announced by kXR_waitresp.
                let mut a = [0u8; 16];
                if hdr.dlen < 16 {
                    let small = self.read_small(hdr.dlen as usize)?;
                    return Err(self.fatal(format!("kXR_attn of {} bytes: {:?}", small.len(), p::text(&small))));
                }
                self.stream.read_exact(&mut a)?;
                let action = u32::from_be_bytes([a[0], a[1], a[2], a[3]]);
                if action != p::KXR_ASYNRESP {
                    return Err(self.fatal(format!("unsupported kXR_attn action {action}")));
                }
                let inner: [u8; 8] = [a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]];
                hdr = ResponseHeader::parse(&inner);
                if hdr.dlen < 0 || i64::from(hdr.dlen) > i64::from(h_dlen(&h)) - 16 {
                    return Err(self.fatal("kXR_asynresp whose inner answer overruns it".into()));
                }
            }
            if hdr.stream != id {
                return Err(self.fatal(format!("answer for stream {:?} while waiting for {id:?}", hdr.stream)));
            }
            let dlen = hdr.dlen as usize;
            match hdr.status {
                p::KXR_OK | p::KXR_OKSOFAR => {
                    received += dlen as u64;
                    if received > max {
                        return Err(Fail::Fatal(Error::WouldOverAllocate {
                            requested: received,
                            limit: max,
                            location: Location::new(format!("{}: answer longer than asked for", self.url), None),
                        }));
                    }
                    self.pump(dlen, end, sink)?;
                    if hdr.status == p::KXR_OK {
                        return Ok(Reply::Done);
                    }
                }
                p::KXR_ERROR => {
                    let (code, msg) = p::error_body(&self.read_small(dlen)?);
                    return Ok(Reply::Error(code, msg));
                }
                p::KXR_REDIRECT => {
                    let body = self.read_small(dlen)?;
                    return match p::redirect_body(&body) {
                        Some(r) => Ok(Reply::Redirect(r)),
                        None => Err(self.fatal(format!("unusable kXR_redirect target {:?}", p::text(&body)))),
                    };
                }
                p::KXR_WAIT => {
                    let (secs, msg) = p::wait_body(&self.read_small(dlen)?);
                    return Ok(Reply::Wait(secs, msg));
                }
                // The real answer follows as kXR_attn/kXR_asynresp: keep reading.
                p::KXR_WAITRESP => drop(self.read_small(dlen)?),
                p::KXR_AUTHMORE => {
                    return Err(self.fatal("the server asks for more authentication (kXR_authmore)".into()))
                }
                other => return Err(self.fatal(format!("unexpected answer status {other}"))),
            }
        }
    }

    /// Reads a small body (bounded by [`MAX_SMALL_BODY`]).
    fn read_small(&mut self, dlen: usize) -> Result<Vec<u8>, Fail> {
        if dlen > MAX_SMALL_BODY {
            return Err(self.fatal(format!("a {dlen}-byte body where at most {MAX_SMALL_BODY} are expected")));
        }
        let mut b = vec![0u8; dlen];
        self.stream.read_exact(&mut b)?;
        Ok(b)
    }

    /// Streams `dlen` bytes of data to `sink` through the scratch buffer.
    fn pump(
        &mut self,
        mut dlen: usize,
        end: Instant,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), Fail>,
    ) -> Result<(), Fail> {
        if self.scratch.len() < SCRATCH.min(dlen) {
            self.scratch.resize(SCRATCH.min(dlen), 0);
        }
        while dlen > 0 {
            if Instant::now() > end {
                return Err(Fail::Fatal(deadline_error(&self.url, self.deadline)));
            }
            let n = dlen.min(SCRATCH);
            self.stream.read_exact(&mut self.scratch[..n])?;
            sink(&self.scratch[..n])?;
            dlen -= n;
        }
        Ok(())
    }

    /// Best effort `kXR_close` on the way out; the answer is not awaited
    /// (the server closes the file with the connection anyway).
    pub(super) fn close(&mut self, fhandle: [u8; 4]) {
        let id = self.stream_id();
        let _ = self.stream.write_all(&p::close(id, fhandle));
    }
}

fn h_dlen(h: &[u8; 8]) -> i32 {
    i32::from_be_bytes([h[4], h[5], h[6], h[7]])
}
