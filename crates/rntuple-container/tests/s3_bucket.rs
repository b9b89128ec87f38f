//! A malformed S3 bucket name is refused before any request: a listening
//! socket standing in for the endpoint sees no connection (and sees one for
//! a well-formed name, so it would have seen the malformed one).

#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::TcpListener;
use std::time::{Duration, Instant};

use rntuple_container::open_storage;
use rntuple_container::storage::url::create_sink;
use rntuple_format::Error;

/// Whether a connection reached `listener` within `wait`.
fn connected(listener: &TcpListener, wait: Duration) -> bool {
    listener.set_nonblocking(true).unwrap();
    let start = Instant::now();
    loop {
        if listener.accept().is_ok() {
            return true;
        }
        if start.elapsed() > wait {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_malformed_bucket_never_opens_a_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::env::set_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"));
    std::env::set_var("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
    std::env::set_var("RNTUPLE_HTTP_TIMEOUT", "0.3");
    std::env::set_var("RNTUPLE_HTTP_RETRIES", "0");
    for bad in ["s3://evil.example#/x.root", "s3://user@host/x.root", "s3://host:80/x.root", "s3://b?x/x.root"] {
        match open_storage(bad) {
            Err(err @ Error::InvalidArgument { .. }) => {
                assert!(err.to_string().contains("bucket name"), "{err}");
                assert!(!err.to_string().contains("AKIDEXAMPLE"), "{err}");
            }
            other => panic!("{bad}: {other:?}"),
        }
        assert!(matches!(create_sink(bad), Err(Error::InvalidArgument { .. })), "{bad}");
        assert!(!connected(&listener, Duration::from_millis(100)), "{bad} opened a connection");
    }
    // The control: a well-formed name goes to the endpoint (which never answers).
    assert!(open_storage("s3://good-bucket/x.root").is_err());
    assert!(connected(&listener, Duration::from_secs(2)), "a well-formed bucket should reach the endpoint");
}
