//! The bytes of the XRootD protocol subset we speak: request encoding and
//! response decoding, no sockets.
//!
//! Reference: "XRootD Protocol Version 5" (the protocol reference, and its
//! constants as `src/XProtocol/XProtocol.hh` of xrootd/xrootd states them).
//! Every integer travels in network byte order (big-endian). A client request
//! is a 24-byte header
//!
//! ```text
//! +----------+-----------+---------------------+---------+----------------+
//! | streamid | requestid | parameters          | dlen    | dlen bytes of  |
//! | 2 bytes  | u16       | 16 bytes            | i32     | data           |
//! +----------+-----------+---------------------+---------+----------------+
//! ```
//!
//! and every server response an 8-byte header `streamid[2] status:u16
//! dlen:i32` followed by `dlen` bytes.

/// Protocol version we announce in `kXR_protocol` (5.2.0, `kXR_PROTOCOLVERSION`).
pub const PROTOCOL_VERSION: u32 = 0x0000_0520;

/// Request codes (`XRequestTypes`).
pub const KXR_CLOSE: u16 = 3003;
pub const KXR_PROTOCOL: u16 = 3006;
pub const KXR_LOGIN: u16 = 3007;
pub const KXR_MV: u16 = 3009;
pub const KXR_OPEN: u16 = 3010;
pub const KXR_READ: u16 = 3013;
pub const KXR_RM: u16 = 3014;
pub const KXR_SYNC: u16 = 3016;
pub const KXR_STAT: u16 = 3017;
pub const KXR_WRITE: u16 = 3019;
pub const KXR_READV: u16 = 3025;

/// Response status codes (`XResponseType`).
pub const KXR_OK: u16 = 0;
pub const KXR_OKSOFAR: u16 = 4000;
pub const KXR_ATTN: u16 = 4001;
pub const KXR_AUTHMORE: u16 = 4002;
pub const KXR_ERROR: u16 = 4003;
pub const KXR_REDIRECT: u16 = 4004;
pub const KXR_WAIT: u16 = 4005;
pub const KXR_WAITRESP: u16 = 4006;

/// `kXR_attn` action carrying the answer to an earlier `kXR_waitresp`.
pub const KXR_ASYNRESP: u32 = 5008;

/// Error codes (`XErrorCode`) we map to specific kinds.
pub const KXR_NOT_AUTHORIZED: u32 = 3010;
pub const KXR_NOT_FOUND: u32 = 3011;
pub const KXR_IS_DIRECTORY: u32 = 3016;

/// `kXR_open` options: read-only, and return the stat information.
const KXR_OPEN_READ: u16 = 0x0010;
const KXR_RETSTAT: u16 = 0x0400;

/// `kXR_open` options of a file written (`XOpenRequestOption`): create,
/// replacing any file of that name (`kXR_delete`), or reopen one for
/// writing (`kXR_open_updt`); create missing directories (`kXR_mkpath`).
pub const KXR_DELETE: u16 = 0x0002;
pub const KXR_OPEN_UPDT: u16 = 0x0020;
pub const KXR_MKPATH: u16 = 0x0100;

/// `kXR_open` mode of a file created (`XOpenRequestMode`): `rw-r--r--`
/// (`kXR_ur | kXR_uw | kXR_gr | kXR_or`).
const MODE_644: u16 = 0x100 | 0x080 | 0x020 | 0x004;

/// `kXR_protocol` expect value: a login follows (`kXR_ExpLogin`).
const KXR_EXP_LOGIN: u8 = 0x03;

/// `kXR_login` capability version: the 2019 (v5) client (`kXR_ver005`).
const KXR_VER005: u8 = 5;

/// `kXR_protocol` response flags saying the server wants TLS before login
/// (`kXR_tlsLogin`, `kXR_haveTLS` announces it can).
pub const KXR_TLS_LOGIN: u32 = 0x0400_0000;

/// `kXR_readv` limits (XProtocol.hh, namespace `XrdProto`): the read list of
/// one request holds at most `maxRvecln` = 16384 bytes of 16-byte elements,
/// so 1024 chunks (`maxRvecsz`), and one chunk carries at most
/// `maxRVdsz` = 2 MiB - 16 bytes (the server answers "Single readv transfer
/// is too large" above it).
pub const READV_ITEM_LEN: usize = 16;
pub const READV_MAX_CHUNKS: usize = 16384 / READV_ITEM_LEN;
pub const READV_MAX_CHUNK: usize = 2_097_152 - READV_ITEM_LEN;

/// The initial handshake (protocol reference, "Initial Handshake"): five
/// 32-bit integers 0, 0, 0, 4, 2012.
pub fn handshake() -> [u8; 20] {
    let mut b = [0u8; 20];
    b[12..16].copy_from_slice(&4u32.to_be_bytes());
    b[16..20].copy_from_slice(&2012u32.to_be_bytes());
    b
}

/// A request header with `params` (16 bytes) and `dlen` bytes of data to follow.
fn header(stream: [u8; 2], code: u16, params: [u8; 16], dlen: usize) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..2].copy_from_slice(&stream);
    h[2..4].copy_from_slice(&code.to_be_bytes());
    h[4..20].copy_from_slice(&params);
    h[20..24].copy_from_slice(&(dlen as u32).to_be_bytes());
    h
}

fn with_data(h: [u8; 24], data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(24 + data.len());
    v.extend_from_slice(&h);
    v.extend_from_slice(data);
    v
}

/// `kXR_protocol` (3006): `clientpv:i32 flags:u8 expect:u8 reserved[10]`.
/// No TLS, no security requirements asked for; a login follows.
pub fn protocol(stream: [u8; 2]) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..4].copy_from_slice(&PROTOCOL_VERSION.to_be_bytes());
    p[5] = KXR_EXP_LOGIN;
    header(stream, KXR_PROTOCOL, p, 0).to_vec()
}

/// `kXR_login` (3007): `pid:i32 username[8] ability2 ability capver
/// reserved`; no token.
pub fn login(stream: [u8; 2], pid: u32, user: &str) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..4].copy_from_slice(&pid.to_be_bytes());
    let name: Vec<u8> = user.bytes().filter(|b| b.is_ascii_graphic()).take(8).collect();
    p[4..4 + name.len()].copy_from_slice(&name);
    p[14] = KXR_VER005;
    header(stream, KXR_LOGIN, p, 0).to_vec()
}

/// `kXR_open` (3010): `mode:u16 options:u16 optiont:u16 reserved[6]
/// fhtemplt[4]`, then the path (with `?opaque`). Read-only, with stat.
pub fn open(stream: [u8; 2], path: &str) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[2..4].copy_from_slice(&(KXR_OPEN_READ | KXR_RETSTAT).to_be_bytes());
    with_data(header(stream, KXR_OPEN, p, path.len()), path.as_bytes())
}

/// `kXR_open` (3010) for writing with `options` ([`KXR_DELETE`],
/// [`KXR_OPEN_UPDT`], [`KXR_MKPATH`]), mode `rw-r--r--`.
pub fn open_write(stream: [u8; 2], path: &str, options: u16) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..2].copy_from_slice(&MODE_644.to_be_bytes());
    p[2..4].copy_from_slice(&options.to_be_bytes());
    with_data(header(stream, KXR_OPEN, p, path.len()), path.as_bytes())
}

/// `kXR_write` (3019): `fhandle[4] offset:i64 pathid reserved[3]`, then
/// the bytes.
pub fn write(stream: [u8; 2], fhandle: [u8; 4], offset: u64, data: &[u8]) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..4].copy_from_slice(&fhandle);
    p[4..12].copy_from_slice(&offset.to_be_bytes());
    with_data(header(stream, KXR_WRITE, p, data.len()), data)
}

/// `kXR_sync` (3016): `fhandle[4] reserved[12]`.
pub fn sync(stream: [u8; 2], fhandle: [u8; 4]) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..4].copy_from_slice(&fhandle);
    header(stream, KXR_SYNC, p, 0).to_vec()
}

/// `kXR_mv` (3009): `reserved[14] arg1len:u16`, then `from to` separated
/// by a space; `arg1len` is the length of `from` (protocol v5), so that
/// paths may hold spaces.
pub fn mv(stream: [u8; 2], from: &str, to: &str) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[14..16].copy_from_slice(&(from.len().min(u16::MAX as usize) as u16).to_be_bytes());
    let data = format!("{from} {to}");
    with_data(header(stream, KXR_MV, p, data.len()), data.as_bytes())
}

/// `kXR_rm` (3014): `reserved[16]`, then the path.
pub fn rm(stream: [u8; 2], path: &str) -> Vec<u8> {
    with_data(header(stream, KXR_RM, [0u8; 16], path.len()), path.as_bytes())
}

/// `kXR_stat` (3017) of an open file: `options reserved[7] wants:u32
/// fhandle[4]`, no path.
pub fn stat(stream: [u8; 2], fhandle: [u8; 4]) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[12..16].copy_from_slice(&fhandle);
    header(stream, KXR_STAT, p, 0).to_vec()
}

/// `kXR_read` (3013): `fhandle[4] offset:i64 rlen:i32`.
pub fn read(stream: [u8; 2], fhandle: [u8; 4], offset: u64, len: u32) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..4].copy_from_slice(&fhandle);
    p[4..12].copy_from_slice(&offset.to_be_bytes());
    p[12..16].copy_from_slice(&len.to_be_bytes());
    header(stream, KXR_READ, p, 0).to_vec()
}

/// `kXR_readv` (3025): `reserved[15] pathid`, then one 16-byte
/// `read_list` element per chunk: `fhandle[4] rlen:i32 offset:i64`.
/// Chunks must respect [`READV_MAX_CHUNKS`] and [`READV_MAX_CHUNK`].
pub fn readv(stream: [u8; 2], fhandle: [u8; 4], chunks: &[(u64, u32)]) -> Vec<u8> {
    let mut data = Vec::with_capacity(chunks.len() * READV_ITEM_LEN);
    for &(offset, len) in chunks {
        data.extend_from_slice(&fhandle);
        data.extend_from_slice(&len.to_be_bytes());
        data.extend_from_slice(&offset.to_be_bytes());
    }
    with_data(header(stream, KXR_READV, [0u8; 16], data.len()), &data)
}

/// `kXR_close` (3003): `fhandle[4] reserved[12]`.
pub fn close(stream: [u8; 2], fhandle: [u8; 4]) -> Vec<u8> {
    let mut p = [0u8; 16];
    p[0..4].copy_from_slice(&fhandle);
    header(stream, KXR_CLOSE, p, 0).to_vec()
}

/// A response header: `streamid[2] status:u16 dlen:i32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHeader {
    pub stream: [u8; 2],
    pub status: u16,
    pub dlen: i32,
}

impl ResponseHeader {
    pub fn parse(b: &[u8; 8]) -> Self {
        ResponseHeader {
            stream: [b[0], b[1]],
            status: u16::from_be_bytes([b[2], b[3]]),
            dlen: i32::from_be_bytes([b[4], b[5], b[6], b[7]]),
        }
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Text of a response body: up to the first NUL, lossy UTF-8, trimmed.
pub fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).trim().to_string()
}

/// `kXR_error` body: `errnum:i32 errmsg`.
pub fn error_body(b: &[u8]) -> (u32, String) {
    (be32(b, 0).unwrap_or(0), text(b.get(4..).unwrap_or_default()))
}

/// `kXR_wait` / `kXR_waitresp` body: `seconds:i32 [infomsg]`.
pub fn wait_body(b: &[u8]) -> (u32, String) {
    (be32(b, 0).unwrap_or(0), text(b.get(4..).unwrap_or_default()))
}

/// Where a `kXR_redirect` sends us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub host: String,
    pub port: u16,
    /// Opaque data (CGI) to append to the path on the new server.
    pub opaque: Option<String>,
}

/// `kXR_redirect` body: `port:i32 host[?opaque[?token]]`. A port of -1 or
/// less means the host field holds a whole URL (`root://host:port/...`);
/// we take its host and port. `None` when the body names no usable server.
pub fn redirect_body(b: &[u8]) -> Option<Redirect> {
    let port = be32(b, 0)? as i32;
    let target = text(b.get(4..)?);
    let (hostpart, opaque) = match target.split_once('?') {
        Some((h, o)) => (h.to_string(), Some(o.to_string()).filter(|o| !o.is_empty())),
        None => (target.clone(), None),
    };
    if port > 0 {
        let port = u16::try_from(port).ok()?;
        return (!hostpart.is_empty()).then_some(Redirect { host: hostpart, port, opaque });
    }
    // A URL: root://[user@]host[:port][/path]
    let rest = hostpart.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let (host, port) = super::split_host_port(authority)?;
    Some(Redirect { host, port, opaque })
}

/// `kXR_open` answer: `fhandle[4] cpsize:i32 cptype[4]` then, with
/// `kXR_retstat`, the stat text.
pub fn open_body(b: &[u8]) -> Option<([u8; 4], Option<Stat>)> {
    let fh = b.get(0..4)?;
    let stat = b.get(12..).and_then(stat_body);
    Some(([fh[0], fh[1], fh[2], fh[3]], stat))
}

/// What `kXR_stat` tells about a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    pub flags: u64,
    pub mtime: u64,
}

/// `kXR_stat` text: `"id size flags modtime"` (ASCII, blank-separated).
pub fn stat_body(b: &[u8]) -> Option<Stat> {
    let t = text(b);
    let mut parts = t.split_ascii_whitespace();
    let _id = parts.next()?;
    let size = parts.next()?.parse().ok()?;
    let flags = parts.next()?.parse().ok()?;
    let mtime = parts.next()?.parse().ok()?;
    Some(Stat { size, flags, mtime })
}

/// `kXR_stat` flag of a directory (`kXR_isDir`).
pub const KXR_IS_DIR: u64 = 2;

/// The name of an `XErrorCode`, for messages.
pub fn error_name(code: u32) -> &'static str {
    match code {
        3000 => "kXR_ArgInvalid",
        3001 => "kXR_ArgMissing",
        3002 => "kXR_ArgTooLong",
        3004 => "kXR_FileNotOpen",
        3005 => "kXR_FSError",
        3006 => "kXR_InvalidRequest",
        3007 => "kXR_IOError",
        3008 => "kXR_NoMemory",
        3010 => "kXR_NotAuthorized",
        3011 => "kXR_NotFound",
        3012 => "kXR_ServerError",
        3013 => "kXR_Unsupported",
        3014 => "kXR_noserver",
        3015 => "kXR_NotFile",
        3016 => "kXR_isDirectory",
        3024 => "kXR_Overloaded",
        3028 => "kXR_TLSRequired",
        3030 => "kXR_AuthFailed",
        _ => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_requests_as_the_reference_draws_them() {
        assert_eq!(handshake(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0x07, 0xdc]);
        let r = read([1, 2], [9, 8, 7, 6], 0x0102_0304_0506_0708, 4096);
        assert_eq!(r[..4], [1, 2, 0x0b, 0xc5]); // 3013
        assert_eq!(r[4..8], [9, 8, 7, 6]);
        assert_eq!(r[8..16], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(r[16..20], [0, 0, 0x10, 0]);
        assert_eq!(r[20..24], [0, 0, 0, 0]);
        let v = readv([0, 1], [5, 5, 5, 5], &[(10, 3), (1 << 32, 7)]);
        assert_eq!(v.len(), 24 + 32);
        assert_eq!(v[2..4], 3025u16.to_be_bytes());
        assert_eq!(v[20..24], [0, 0, 0, 32]);
        assert_eq!(v[24..40], [5, 5, 5, 5, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 10]);
        assert_eq!(v[40..56], [5, 5, 5, 5, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0]);
        let o = open([0, 3], "/a/b.root?x=1");
        assert_eq!(o[2..4], 3010u16.to_be_bytes());
        assert_eq!(o[6..8], 0x0410u16.to_be_bytes());
        assert_eq!(&o[24..], b"/a/b.root?x=1");
        let l = login([0, 1], 7, "averylongname");
        assert_eq!(&l[8..16], b"averylon");
        assert_eq!(l[18], 5);
        assert_eq!(READV_MAX_CHUNKS, 1024);
        assert_eq!(READV_MAX_CHUNK, 2_097_136);
    }

    #[test]
    fn decodes_answers() {
        let mut r = 1094u32.to_be_bytes().to_vec();
        r.extend_from_slice(b"data.example.org?tried=x\0");
        assert_eq!(
            redirect_body(&r),
            Some(Redirect { host: "data.example.org".into(), port: 1094, opaque: Some("tried=x".into()) })
        );
        let mut u = (-1i32).to_be_bytes().to_vec();
        u.extend_from_slice(b"root://[::1]:2000//f.root");
        assert_eq!(redirect_body(&u), Some(Redirect { host: "::1".into(), port: 2000, opaque: None }));
        assert_eq!(redirect_body(&[0, 0]), None);
        let mut s = vec![1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0];
        s.extend_from_slice(b"42859169409203712 1765 16 1795996994\0");
        let (fh, st) = open_body(&s).unwrap();
        assert_eq!(fh, [1, 2, 3, 4]);
        assert_eq!(st, Some(Stat { size: 1765, flags: 16, mtime: 1_795_996_994 }));
        let mut e = 3011u32.to_be_bytes().to_vec();
        e.extend_from_slice(b"no such file\0");
        assert_eq!(error_body(&e), (3011, "no such file".into()));
        assert_eq!(ResponseHeader::parse(&[0, 1, 0x0f, 0xa0, 0, 0, 1, 0]).status, KXR_OKSOFAR);
    }
}
