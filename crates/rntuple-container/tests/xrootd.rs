//! The XRootD backend against a real `xrootd` server (Debian's
//! `xrootd-server`, installed by `.ci/services`) started on 127.0.0.1 at a
//! free port, plus a fake redirector in this file that speaks real protocol
//! bytes over TCP (handshake, `kXR_protocol`, `kXR_login`, then `kXR_wait`
//! and `kXR_redirect` to the real server) for the redirect and wait paths.
//!
//! Everything shares one server, so it is one test that runs the sections
//! in order; the server is stopped when the guard drops, also on failure.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rntuple_container::storage::{open_storage, ReadAt, TransportStats, XrootdFile};
use rntuple_container::RootFile;
use rntuple_format::Error;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/");
const PHYSLITE: &str = "uproot-physlite-rntuple_v1-0-0-0.root";

struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false)
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Starts `xrootd` serving a world-readable temporary directory; fails (not
/// skips) when the binary is missing.
fn start_server() -> Server {
    let exe = ["/usr/bin/xrootd", "/usr/local/bin/xrootd"].into_iter().find(|p| Path::new(p).exists());
    let exe =
        exe.unwrap_or_else(|| panic!("the xrootd server is not installed: run .ci/services (Debian xrootd-server)"));
    let dir = std::env::temp_dir().join(format!("rntuple-xrootd-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    chmod(&dir, 0o777);
    chmod(&data, 0o755);
    let port = common::free_port();
    let cfg = dir.join("xrootd.cfg");
    std::fs::write(
        &cfg,
        format!(
            "all.adminpath {d}/admin\nall.pidpath {d}/run\nxrd.port {port}\noss.localroot {d}/data\nall.export /\n",
            d = dir.display()
        ),
    )
    .unwrap();
    chmod(&cfg, 0o644);
    let mut cmd = Command::new(exe);
    if is_root() {
        // The daemon refuses to run as root.
        cmd.args(["-R", "nobody"]);
    }
    let child = cmd
        .arg("-c")
        .arg(&cfg)
        .arg("-l")
        .arg(dir.join("xrootd.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "xrootd did not listen on port {port} within 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// Copies a test file into the served tree and returns its absolute path
/// there (the server's `oss.localroot` maps `/` to the data directory).
fn serve(server: &Server, name: &str, bytes: &[u8]) -> String {
    let path = server.dir.join("data").join(name);
    std::fs::write(&path, bytes).unwrap();
    chmod(&path, 0o644);
    format!("/{name}")
}

/// Deterministic pseudo-random ranges (a 64-bit LCG), each inside `size`.
fn ranges(n: usize, size: u64, max_len: u64, seed: u64) -> Vec<(u64, usize)> {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 11
    };
    (0..n)
        .map(|_| {
            let len = 1 + next() % max_len;
            let offset = next() % (size - len);
            (offset, len as usize)
        })
        .collect()
}

fn delta(after: TransportStats, before: TransportStats) -> (u64, u64, u64) {
    (
        after.single_requests - before.single_requests,
        after.vectored_requests - before.vectored_requests,
        after.sub_ranges - before.sub_ranges,
    )
}

#[test]
fn xrootd_backend_against_a_real_server() {
    let server = start_server();
    let local = std::fs::read(PathBuf::from(DATA).join(PHYSLITE)).unwrap();
    let path = serve(&server, PHYSLITE, &local);
    let url = format!("root://127.0.0.1:{}/{path}", server.port);

    // Size, identity and many single reads equal the local file.
    let f = open_storage(&url).unwrap();
    assert_eq!(f.size().unwrap(), local.len() as u64);
    let id = f.identity().unwrap();
    assert_eq!(id.size, local.len() as u64);
    assert!(id.version.is_some(), "the modification time is the version");
    let hints = f.hints();
    assert_eq!((hints.coalesce_gap, hints.max_request), (512 << 10, 128 << 20));
    let before = f.transport_stats().unwrap();
    for &(offset, len) in &ranges(50, local.len() as u64, 100_000, 1) {
        let mut buf = vec![0u8; len];
        f.read_exact_at(offset, &mut buf).unwrap();
        assert_eq!(buf, local[offset as usize..offset as usize + len], "range {offset}+{len}");
    }
    assert_eq!(delta(f.transport_stats().unwrap(), before), (50, 0, 0), "one kXR_read per single read");

    // 300 ranges fit one kXR_readv: exactly one vectored request.
    let rs = ranges(300, local.len() as u64, 5000, 2);
    let before = f.transport_stats().unwrap();
    let total: usize = rs.iter().map(|r| r.1).sum();
    let mut out = vec![0u8; total];
    f.read_ranges_into(&rs, &mut out).unwrap();
    assert_eq!(delta(f.transport_stats().unwrap(), before), (0, 1, 300));
    let expected: Vec<u8> = rs.iter().flat_map(|&(o, l)| local[o as usize..o as usize + l].to_vec()).collect();
    assert!(out == expected, "readv bytes differ from the local file");

    // 2500 ranges: more than the 1024 chunks one kXR_readv may carry, so
    // 1024 + 1024 + 452 in three requests.
    let rs = ranges(2500, local.len() as u64, 700, 3);
    let before = f.transport_stats().unwrap();
    let got = f.read_ranges(&rs).unwrap();
    assert_eq!(delta(f.transport_stats().unwrap(), before), (0, 3, 2500));
    for (i, &(o, l)) in rs.iter().enumerate() {
        assert_eq!(got[i], local[o as usize..o as usize + l], "range {i}");
    }

    // A range larger than one readv chunk (2 MiB - 16) is split and rejoined:
    // a 6 MiB file, ranges of 5 MB + 10 + 3 MB = 3 + 1 + 2 chunks in one request.
    let big: Vec<u8> = local.iter().chain(&local).chain(&local).copied().collect();
    let big_url = format!("xroot://127.0.0.1:{}/{}", server.port, serve(&server, "big.bin", &big));
    let g = XrootdFile::open(&big_url).unwrap();
    let rs = [(1000u64, 5_000_000usize), (7, 10), (big.len() as u64 - 3_000_000, 3_000_000)];
    let got = g.read_ranges(&rs).unwrap();
    let s = g.transport_stats().unwrap();
    assert_eq!((s.single_requests, s.vectored_requests, s.sub_ranges), (0, 1, 6));
    for (i, &(o, l)) in rs.iter().enumerate() {
        assert!(got[i] == big[o as usize..o as usize + l], "range {i}");
    }
    // One range of 5 MB is one kXR_read.
    let mut one = vec![0u8; 5_000_000];
    g.read_exact_at(123, &mut one).unwrap();
    assert!(one == big[123..5_000_123]);
    assert_eq!(g.transport_stats().unwrap().single_requests, 1);
    // Past the end: refused before anything is sent.
    assert!(matches!(g.read_exact_at(big.len() as u64 - 1, &mut [0u8; 2]), Err(Error::Truncated { .. })));

    // The container reads the ROOT file over the URL.
    let rf = RootFile::open(&url).unwrap();
    assert!(!rf.keys().unwrap().is_empty());

    // A missing file: NotFound naming the URL.
    let missing = format!("root://127.0.0.1:{}//no/such/file.root", server.port);
    match open_storage(&missing) {
        Err(err @ Error::Io { .. }) => {
            let Error::Io { source, .. } = &err else { unreachable!() };
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{err}");
            assert!(err.to_string().contains(&missing), "{err}");
        }
        other => panic!("{other:?}"),
    }

    // Nothing listening: a clear error naming the URL, after bounded retries.
    let down = format!("root://127.0.0.1:{}//f.root", common::free_port());
    let t = Instant::now();
    let err = open_storage(&down).unwrap_err();
    assert!(err.to_string().contains(&down) && err.to_string().contains("after 4 attempts"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10));

    redirect_and_wait(&server, &path, &local);
    redirect_loop();
    hostile_answers();
    parallel_readv();
}

/// A fake server (`common::fake_xrootd`) answering every request other than
/// handshake, protocol and login with the one frame `answer(own port,
/// connection, request code, header, body)` gives (a status and a body).
/// Returns its port and the connections seen.
fn fake_server(
    answer: impl Fn(u16, u32, u16, &[u8; 24], &[u8]) -> (u16, Vec<u8>) + Send + Sync + 'static,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicU32>) {
    let fake =
        common::fake_xrootd(move |port, n, code, h, body| (vec![answer(port, n, code, h, body)], Duration::ZERO));
    (fake.port, fake.connections)
}

/// A redirector: `kXR_open` is answered with `kXR_wait` 1 s on the first
/// connection and `kXR_redirect` to `target(own port)` on later ones.
fn fake_redirector(target: u16) -> (u16, std::sync::Arc<std::sync::atomic::AtomicU32>) {
    fake_server(move |_, n, code, _, _| match code {
        3010 if n == 0 => (4005, [&1u32.to_be_bytes()[..], b"busy"].concat()),
        3010 => (4004, [&u32::from(target).to_be_bytes()[..], b"127.0.0.1?from=fake"].concat()),
        _ => (4003, [&3013u32.to_be_bytes()[..], b"unsupported here\0"].concat()),
    })
}

fn redirect_and_wait(server: &Server, path: &str, local: &[u8]) {
    let (port, opens) = fake_redirector(server.port);
    let url = format!("root://127.0.0.1:{port}/{path}");
    let t = Instant::now();
    let f = open_storage(&url).unwrap();
    assert!(t.elapsed() >= Duration::from_secs(1), "kXR_wait of 1 s honoured");
    // First connection answered kXR_wait, the second kXR_redirect.
    assert_eq!(opens.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(f.size().unwrap(), local.len() as u64);
    let got = f.read_ranges(&[(0, 100), (10_000, 5000)]).unwrap();
    assert_eq!(got[0], local[..100]);
    assert_eq!(got[1], local[10_000..15_000]);
}

fn redirect_loop() {
    // A redirector that redirects to itself, forever.
    let (port, _) = fake_server(|own, _, _, _, _| (4004, [&u32::from(own).to_be_bytes()[..], b"127.0.0.1"].concat()));
    let url = format!("root://127.0.0.1:{port}//loop.root");
    let err = open_storage(&url).unwrap_err();
    assert!(err.to_string().contains(&url) && err.to_string().contains("more than 10 redirects"), "{err}");
}

/// A server that opens a 1000-byte file, then answers reads wrongly.
fn liar(mode: &'static str) -> String {
    let (port, _) = fake_server(move |_, _, code, h, body| {
        let rlen = u32::from_be_bytes([h[16], h[17], h[18], h[19]]) as usize;
        match (code, mode) {
            (3010, _) => (0, [&[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0][..], b"1 1000 16 5\0"].concat()),
            (3013, "long") => (0, vec![0u8; rlen + 10]),
            (3013, "short") => (0, vec![0u8; rlen - 1]),
            (3025, _) => {
                // Echo the first read_list element (shifted by one byte when
                // lying about the offset) with its data; drop the others.
                let mut item = body[..16].to_vec();
                if mode == "wrong" {
                    item[15] = item[15].wrapping_add(1);
                }
                let len = u32::from_be_bytes([item[4], item[5], item[6], item[7]]) as usize;
                (0, [item, vec![0u8; len]].concat())
            }
            _ => (4003, [&3013u32.to_be_bytes()[..], b"no\0"].concat()),
        }
    });
    format!("root://127.0.0.1:{port}//liar.root")
}

fn hostile_answers() {
    let url = liar("long");
    let f = open_storage(&url).unwrap();
    assert_eq!(f.size().unwrap(), 1000);
    match f.read_exact_at(0, &mut [0u8; 100]) {
        Err(err @ Error::WouldOverAllocate { requested: 110, limit: 100, .. }) => {
            assert!(err.to_string().contains(&url), "{err}")
        }
        other => panic!("{other:?}"),
    }
    let url = liar("short");
    let f = open_storage(&url).unwrap();
    match f.read_exact_at(100, &mut [0u8; 50]) {
        Err(err @ Error::Truncated { needed: 50, available: 49, .. }) => {
            let Error::Truncated { location, .. } = &err else { unreachable!() };
            assert_eq!(location.offset, Some(100));
            assert!(err.to_string().contains(&url), "{err}");
        }
        other => panic!("{other:?}"),
    }
    // readv: only the first of two chunks comes back.
    match f.read_ranges(&[(0, 10), (20, 10)]) {
        Err(err @ Error::Truncated { .. }) => assert!(err.to_string().contains(&url), "{err}"),
        other => panic!("{other:?}"),
    }
    let url = liar("wrong");
    let f = open_storage(&url).unwrap();
    match f.read_ranges(&[(0, 10), (20, 10)]) {
        Err(err @ Error::OutOfSpec { .. }) => {
            assert!(err.to_string().contains(&url) && err.to_string().contains("kXR_readv answer chunk 0"), "{err}")
        }
        other => panic!("{other:?}"),
    }
}

/// Four `kXR_readv` requests of one vectored read go out at once on four
/// connections: with a server that takes 0.5 s per answer, the read takes
/// about 0.5 s, not 2 s.
fn parallel_readv() {
    let (port, connections) = fake_server(|_, _, code, _, body| match code {
        3010 => (0, [&[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0][..], b"1 100000 16 5\0"].concat()),
        3025 => {
            std::thread::sleep(Duration::from_millis(500));
            let mut answer = Vec::new();
            for item in body.chunks(16) {
                let len = u32::from_be_bytes([item[4], item[5], item[6], item[7]]) as usize;
                answer.extend_from_slice(item);
                answer.extend(std::iter::repeat_n(item[15], len));
            }
            (0, answer)
        }
        _ => (4003, [&3013u32.to_be_bytes()[..], b"no\0"].concat()),
    });
    let f = open_storage(&format!("root://127.0.0.1:{port}//slow.root")).unwrap();
    let rs: Vec<(u64, usize)> = (0..4 * 1024).map(|i| (i * 20, 2)).collect();
    let t = Instant::now();
    let got = f.read_ranges(&rs).unwrap();
    let elapsed = t.elapsed();
    assert_eq!(f.transport_stats().unwrap().vectored_requests, 4);
    assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}: the 4 requests were not in flight together");
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 4);
    for (i, &(o, _)) in rs.iter().enumerate() {
        assert_eq!(got[i], [o as u8; 2], "range {i}");
    }
}
