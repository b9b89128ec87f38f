//! The S3 backend against a real `moto_server` started here on 127.0.0.1
//! (an S3-compatible server from requirements-dev.txt, `moto[server]`):
//! size and ETag from HEAD, a vectored read as concurrent ranged GETs
//! (counted in the server's request log), missing keys and buckets. Without
//! `moto_server` these tests fail, they are never skipped.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rntuple_container::{open_storage, RootFile};
use rntuple_format::Error;

const FILE: &str = "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root";

/// `moto_server` of `$RNTUPLE_CACHE/venv`, else of `PATH`.
fn moto_server() -> PathBuf {
    let cached = std::env::var("RNTUPLE_CACHE").ok().map(|c| PathBuf::from(c).join("venv/bin/moto_server"));
    if let Some(p) = cached.filter(|p| p.exists()) {
        return p;
    }
    let on_path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&on_path).map(|d| d.join("moto_server")).find(|p| p.exists()).unwrap_or_else(|| {
        panic!("moto_server is not installed: install requirements-dev.txt (moto[server]) into $RNTUPLE_CACHE/venv")
    })
}

struct Moto {
    child: Child,
    log: PathBuf,
    port: u16,
}

impl Moto {
    fn start() -> Moto {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("moto");
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join(format!("moto-{port}.log"));
        let child = Command::new(moto_server())
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start moto_server");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "moto_server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        Moto { child, log, port }
    }

    /// The GET requests of the server's log, as `/path status` (the log
    /// may colour the request line).
    fn gets(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let (_, rest) = l.split_once("GET ")?;
                let (path, _) = rest.split_once(' ')?;
                let status = l.trim_end().trim_end_matches(" -").rsplit(' ').next()?;
                Some(format!("{path} {status}"))
            })
            .collect()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn s3_reads_ranges_concurrently_and_names_missing_objects() {
    let moto = Moto::start();
    let endpoint = format!("http://127.0.0.1:{}", moto.port);
    // Fill the bucket (moto accepts these unsigned).
    let client = reqwest::blocking::Client::new();
    let local = std::fs::read(common::data_file(FILE)).unwrap();
    assert!(client.put(format!("{endpoint}/bucket")).send().unwrap().status().is_success());
    let put = client.put(format!("{endpoint}/bucket/data/{FILE}")).body(local.clone()).send().unwrap();
    assert!(put.status().is_success(), "{put:?}");

    std::env::set_var("AWS_ENDPOINT_URL", &endpoint);
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    std::env::set_var("AWS_REGION", "us-east-1");
    let url = format!("s3://bucket/data/{FILE}");
    let file = open_storage(&url).expect("open over s3");
    assert_eq!(file.size().unwrap(), local.len() as u64);
    let identity = file.identity().unwrap();
    assert!(identity.version.is_some(), "the ETag names the version: {identity:?}");

    let gets_before = moto.gets().len();
    let ranges = [(0u64, 100usize), (5000, 200), (20000, 300)];
    let got = file.read_ranges(&ranges).unwrap();
    for (&(o, l), bytes) in ranges.iter().zip(&got) {
        assert_eq!(bytes, &local[o as usize..o as usize + l]);
    }
    // S3 has no multi-range GET: three ranged GETs, path-style on the custom endpoint.
    let gets = moto.gets();
    assert_eq!(gets.len() - gets_before, 3, "{gets:?}");
    assert!(gets.iter().all(|g| *g == format!("/bucket/data/{FILE} 206")), "{gets:?}");
    let stats = file.transport_stats().unwrap();
    assert_eq!((stats.single_requests, stats.vectored_requests, stats.bytes_transferred), (3, 0, 600));

    let remote = RootFile::open(&url).expect("RootFile over s3");
    assert_eq!(
        remote.rntuple_names().unwrap(),
        RootFile::open(common::data_file(FILE)).unwrap().rntuple_names().unwrap()
    );

    for missing in ["s3://bucket/nothing.root", "s3://no-such-bucket/x.root"] {
        let err = open_storage(missing).unwrap_err();
        match &err {
            Error::Io { source, .. } => assert_eq!(source.kind(), ErrorKind::NotFound, "{err}"),
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains(missing), "{err}");
    }
    assert!(matches!(open_storage("s3://bucket-only"), Err(Error::InvalidArgument { .. })));
}
