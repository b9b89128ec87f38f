//! The HTTP(S) backend against a real nginx started here on 127.0.0.1: bytes
//! equal to the local file, the requests nginx logged equal to the plan
//! (N ranges -> one multipart request; a server refusing multi-range -> N
//! single ranges), no bearer token over plain http, HTTPS with a CA made here, 404/403 and a
//! server that is down. nginx comes from `.ci/services` (Debian
//! `nginx-light`); without it these tests fail, they are never skipped.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rntuple_container::{open_storage, RootFile};
use rntuple_format::Error;

const FILE: &str = "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root";
const TOKEN: &str = "s3cr3t-token";

/// A running nginx serving `www/` of its own scratch directory.
struct Nginx {
    child: Child,
    dir: PathBuf,
    port: u16,
    scheme: &'static str,
}

impl Nginx {
    /// Starts nginx with a generated config; `tls` = (certificate, key).
    fn start(name: &str, tls: Option<(&Path, &Path)>) -> Nginx {
        let nginx =
            ["/usr/sbin/nginx", "/usr/bin/nginx"].into_iter().find(|p| Path::new(p).exists()).unwrap_or_else(|| {
                panic!("nginx is not installed: run .ci/services (Debian nginx-light) to run the HTTP tests")
            });
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nginx-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["www/private", "www/nomulti", "tmp"] {
            std::fs::create_dir_all(dir.join(sub)).expect("scratch dir");
        }
        let src = common::data_file(FILE);
        for sub in ["www", "www/private", "www/nomulti"] {
            std::fs::copy(&src, dir.join(sub).join(FILE)).expect("copy test file");
        }
        let port = common::free_port();
        let d = dir.display();
        let (listen, ssl) = match tls {
            Some((cert, key)) => (
                format!("{port} ssl"),
                format!("ssl_certificate {}; ssl_certificate_key {};", cert.display(), key.display()),
            ),
            None => (port.to_string(), String::new()),
        };
        let conf = include_str!("../../../tests/python/nginx.conf.in")
            .replace("@DIR@", &d.to_string())
            .replace("@LISTEN@", &listen)
            .replace("@SSL@", &ssl)
            .replace("@TOKEN@", TOKEN);
        std::fs::write(dir.join("nginx.conf"), conf).expect("nginx.conf");
        let child = Command::new(nginx)
            .args(["-p", &d.to_string(), "-c", &format!("{d}/nginx.conf"), "-e", &format!("{d}/error.log")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx did not start: {:?}",
                std::fs::read_to_string(dir.join("error.log"))
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx { child, dir, port, scheme: if tls.is_some() { "https" } else { "http" } }
    }

    fn url(&self, path: &str) -> String {
        format!("{}://127.0.0.1:{}/{path}", self.scheme, self.port)
    }

    /// The requests nginx logged: `METHOD URI "RANGE" STATUS`. nginx writes
    /// a line after the answer is sent, so the client may be faster: the log
    /// is read until it stays the same for 100 ms.
    fn log(&self) -> Vec<String> {
        let read = || -> Vec<String> {
            std::fs::read_to_string(self.dir.join("access.log"))
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect()
        };
        let mut last = read();
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(100));
            let now = read();
            if now == last {
                break;
            }
            last = now;
        }
        last
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn local_bytes() -> Vec<u8> {
    std::fs::read(common::data_file(FILE)).expect("test file")
}

const RANGES: [(u64, usize); 3] = [(0, 100), (5000, 200), (20000, 300)];

fn expected(local: &[u8]) -> Vec<Vec<u8>> {
    RANGES.iter().map(|&(o, l)| local[o as usize..o as usize + l].to_vec()).collect()
}

#[test]
fn several_ranges_go_in_one_multipart_request() {
    let nginx = Nginx::start("multipart", None);
    let local = local_bytes();
    let file = open_storage(&nginx.url(FILE)).expect("open over http");
    assert_eq!(file.size().unwrap(), local.len() as u64);
    let identity = file.identity().unwrap();
    assert!(identity.version.as_deref().is_some_and(|v| v.starts_with('"')), "{identity:?}");
    assert_eq!(nginx.log(), vec![format!("HEAD /{FILE} \"-\" 200")]);

    assert_eq!(file.read_ranges(&RANGES).unwrap(), expected(&local));
    let log = nginx.log();
    assert_eq!(log[1..], [format!("GET /{FILE} \"bytes=0-99,5000-5199,20000-20299\" 206")]);
    let stats = file.transport_stats().unwrap();
    assert_eq!((stats.vectored_requests, stats.sub_ranges, stats.single_requests), (1, 3, 0));

    let mut one = [0u8; 10];
    file.read_exact_at(7, &mut one).unwrap();
    assert_eq!(one, local[7..17]);
    assert_eq!(nginx.log()[2], format!("GET /{FILE} \"bytes=7-16\" 206"));
    // Past the end: refused before any request.
    assert!(matches!(file.read_exact_at(local.len() as u64 - 5, &mut one), Err(Error::Truncated { .. })));
    assert_eq!(nginx.log().len(), 3);

    // The container reads the same keys over HTTP as locally.
    let remote = RootFile::open(nginx.url(FILE)).expect("RootFile over http");
    let here = RootFile::open(common::data_file(FILE)).unwrap();
    assert_eq!(remote.rntuple_names().unwrap(), here.rntuple_names().unwrap());
}

#[test]
fn a_server_refusing_multi_range_gets_single_ranges_in_flight() {
    let nginx = Nginx::start("nomulti", None);
    let local = local_bytes();
    let file = open_storage(&nginx.url(&format!("nomulti/{FILE}"))).unwrap();
    let mut out = vec![0u8; 600];
    file.read_ranges_into(&RANGES, &mut out).unwrap();
    assert_eq!(out, expected(&local).concat());
    let mut log = nginx.log();
    // HEAD, the declined multi-range request (200: the whole file, dropped), three single ranges.
    assert_eq!(log[1], format!("GET /nomulti/{FILE} \"bytes=0-99,5000-5199,20000-20299\" 200"));
    let mut singles = log.split_off(2);
    singles.sort();
    let want: Vec<String> =
        ["0-99", "20000-20299", "5000-5199"].iter().map(|r| format!("GET /nomulti/{FILE} \"bytes={r}\" 206")).collect();
    assert_eq!(singles, want);
    // The server's answer is remembered: the next vectored read asks range by range at once.
    assert_eq!(file.read_ranges(&RANGES).unwrap(), expected(&local));
    assert_eq!(nginx.log().len(), 8);
    let stats = file.transport_stats().unwrap();
    assert_eq!((stats.vectored_requests, stats.single_requests), (0, 6));
}

fn io_kind(err: &Error) -> Option<ErrorKind> {
    match err {
        Error::Io { source, .. } => Some(source.kind()),
        _ => None,
    }
}

#[test]
fn no_bearer_token_over_plain_http_404_and_server_down() {
    let nginx = Nginx::start("token", None);
    let private = nginx.url(&format!("private/{FILE}"));
    // This test alone sets the token variables; tokens over https and to
    // opted-in hosts only: tests/credentials.rs.
    std::env::remove_var("BEARER_TOKEN");
    std::env::set_var("BEARER_TOKEN_FILE", "/nonexistent/token");
    let err = open_storage(&private).unwrap_err();
    assert_eq!(io_kind(&err), Some(ErrorKind::PermissionDenied), "{err}");
    assert!(err.to_string().contains(&private) && err.to_string().contains("403"), "{err}");

    // A token and the host opted in, but plain http: the token is not sent.
    std::env::set_var("BEARER_TOKEN", format!("  {TOKEN}\n"));
    std::env::set_var("RNTUPLE_TOKEN_HOSTS", "127.0.0.1");
    let err = open_storage(&private).unwrap_err();
    assert_eq!(io_kind(&err), Some(ErrorKind::PermissionDenied), "{err}");
    assert!(err.to_string().contains("RNTUPLE_TOKEN_HOSTS") && !err.to_string().contains(TOKEN), "{err}");
    std::env::remove_var("BEARER_TOKEN");
    std::env::remove_var("RNTUPLE_TOKEN_HOSTS");
    std::env::remove_var("BEARER_TOKEN_FILE");

    let missing = nginx.url("missing.root");
    let err = open_storage(&missing).unwrap_err();
    assert_eq!(io_kind(&err), Some(ErrorKind::NotFound), "{err}");
    assert!(err.to_string().contains(&missing) && err.to_string().contains("404"), "{err}");

    let down = format!("http://127.0.0.1:{}/{FILE}", common::free_port());
    let started = Instant::now();
    let err = open_storage(&down).unwrap_err();
    assert!(err.to_string().contains(&down), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn https_with_a_ca_made_here() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("https-ca");
    std::fs::create_dir_all(&dir).unwrap();
    common::make_certificates(&dir);
    let nginx = Nginx::start("https", Some((&dir.join("srv.pem"), &dir.join("srv.key"))));
    let url = nginx.url(FILE);
    // Not trusted without the CA: a clear error naming the URL.
    let err = open_storage(&url).unwrap_err();
    assert!(err.to_string().contains(&url), "{err}");
    std::env::set_var("RNTUPLE_CA_FILE", dir.join("ca.pem"));
    let file = open_storage(&url).expect("https with RNTUPLE_CA_FILE");
    std::env::remove_var("RNTUPLE_CA_FILE");
    assert_eq!(file.read_ranges(&RANGES).unwrap(), expected(&local_bytes()));
    assert_eq!(file.transport_stats().unwrap().vectored_requests, 1);
}
