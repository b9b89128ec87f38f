//! Bounded XRootD requests against fake servers in this file that speak real
//! protocol bytes over TCP: a server that keeps a request alive forever with
//! `kXR_waitresp` or with empty `kXR_oksofar` parts meets the request's
//! overall deadline; `authz=` opaque data of the URL goes to the URL's host
//! but not to a redirect target on another host.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rntuple_container::storage::{ReadAt, XrootdFile};
use rntuple_format::Error;

/// What the fake answers to a request other than handshake, protocol and
/// login: frames `(status, body)` written one after the other, with a pause
/// between them.
type Answer = dyn Fn(u16, &[u8]) -> (Vec<(u16, Vec<u8>)>, Duration) + Send + Sync;

/// The requests a fake saw: code and body.
type Seen = Arc<Mutex<Vec<(u16, Vec<u8>)>>>;

/// A fake server on 127.0.0.1 (`common::fake_xrootd`); every request's code and body is recorded.
fn fake(answer: Arc<Answer>) -> (u16, Seen) {
    let fake = common::fake_xrootd(move |_, _, code, _, body| answer(code, body));
    (fake.port, fake.seen)
}

/// The `kXR_open` answer of a 1000-byte file.
fn opened() -> (Vec<(u16, Vec<u8>)>, Duration) {
    (vec![(0, [&[1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0][..], b"1 1000 16 5\0"].concat())], Duration::ZERO)
}

/// Reads from a server answering `kXR_read` with `frame` every 20 ms,
/// forever; the request must end at its deadline (`RNTUPLE_XROOTD_DEADLINE`
/// 2.5 s), though the socket (timeout 1 s) never times out.
fn endless(frame: (u16, Vec<u8>)) {
    let (port, _) = fake(Arc::new(move |code, _| match code {
        3010 => opened(),
        3013 => (vec![frame.clone(); 1_000_000], Duration::from_millis(20)),
        _ => (vec![(4003, [&3013u32.to_be_bytes()[..], b"no\0"].concat())], Duration::ZERO),
    }));
    let url = format!("root://127.0.0.1:{port}//endless.root");
    // Every test of this file that sets it sets the same value.
    std::env::set_var("RNTUPLE_XROOTD_DEADLINE", "2.5");
    let f = XrootdFile::open_with_timeout(&url, Duration::from_secs(1)).unwrap();
    let t = Instant::now();
    let err = f.read_exact_at(0, &mut [0u8; 100]).unwrap_err();
    let elapsed = t.elapsed();
    match &err {
        Error::Io { source, .. } => assert_eq!(source.kind(), std::io::ErrorKind::TimedOut, "{err}"),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(&url) && err.to_string().contains("deadline of 2.5 s"), "{err}");
    assert!(elapsed >= Duration::from_millis(2500) && elapsed < Duration::from_secs(6), "{elapsed:?}");
}

#[test]
fn endless_waitresp_answers_meet_the_deadline() {
    endless((4006, 1u32.to_be_bytes().to_vec()));
}

#[test]
fn endless_empty_oksofar_parts_meet_the_deadline() {
    endless((4000, Vec::new()));
}

/// The path (with opaque data) each `kXR_open` of `seen` asked for.
fn opens(seen: &Mutex<Vec<(u16, Vec<u8>)>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|(code, _)| *code == 3010)
        .map(|(_, body)| String::from_utf8_lossy(body).trim_end_matches('\0').to_string())
        .collect()
}

#[test]
fn authz_goes_to_the_urls_host_and_not_to_another_host_a_redirect_names() {
    let (target, target_seen) = fake(Arc::new(|code, _| match code {
        3010 => opened(),
        _ => (vec![(4003, [&3013u32.to_be_bytes()[..], b"no\0"].concat())], Duration::ZERO),
    }));
    // Redirects to the target under another name of this machine ("localhost"), with its own opaque data.
    let (redirector, redirector_seen) = fake(Arc::new(move |code, _| match code {
        3010 => (vec![(4004, [&u32::from(target).to_be_bytes()[..], b"localhost?tried=x"].concat())], Duration::ZERO),
        _ => (vec![(4003, [&3013u32.to_be_bytes()[..], b"no\0"].concat())], Duration::ZERO),
    }));
    std::env::remove_var("RNTUPLE_TOKEN_HOSTS");
    let url = format!("root://127.0.0.1:{redirector}//store/f.root?authz=SECRET-CAPABILITY&xrd.wantprot=unix");
    let f = XrootdFile::open_with_timeout(&url, Duration::from_secs(5)).unwrap();
    assert_eq!(f.size().unwrap(), 1000);
    let to_redirector = opens(&redirector_seen);
    assert_eq!(to_redirector.len(), 1);
    assert!(to_redirector[0].ends_with("/store/f.root?authz=SECRET-CAPABILITY&xrd.wantprot=unix"), "{to_redirector:?}");
    let to_target = opens(&target_seen);
    assert_eq!(to_target.len(), 1);
    assert!(to_target[0].ends_with("/store/f.root?xrd.wantprot=unix&tried=x"), "{to_target:?}");
    // An error names the URL without the credential.
    let err = f.read_exact_at(0, &mut [0u8; 10]).unwrap_err();
    assert!(err.to_string().contains("authz=REDACTED") && !err.to_string().contains("SECRET"), "{err}");
}
