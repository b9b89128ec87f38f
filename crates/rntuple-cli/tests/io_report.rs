//! `--io-report`, `RNTUPLE_IO_REPORT=1` and `--cache` on the command line,
//! and `file://` URLs accepted by every reading command of the binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

fn rntuple(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rntuple"));
    c.args(args).env_remove("RNTUPLE_IO_REPORT").env_remove("RNTUPLE_CACHE_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run rntuple")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn url(name: &str) -> String {
    format!("file://{}", data(name).display())
}

#[test]
fn the_report_is_printed_when_asked_for_and_only_then() {
    let file = data("test_int_float_rntuple_v1-0-0-0.root");
    let file = file.to_str().expect("path");
    let plain = rntuple(&["dump", file], &[]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    assert!(!text(&plain.stderr).contains("I/O report"), "{}", text(&plain.stderr));
    for o in [rntuple(&["--io-report", "dump", file], &[]), rntuple(&["dump", file], &[("RNTUPLE_IO_REPORT", "1")])] {
        assert_eq!(o.status.code(), Some(0));
        // The same rows, and one report on stderr.
        assert_eq!(o.stdout, plain.stdout);
        let err = text(&o.stderr);
        assert_eq!(err.matches("rntuple I/O report: ").count(), 1, "{err}");
        for label in ["requests:", "bytes:", "avg request:", "file read:", "cache hits:", "wall time:"] {
            assert!(err.contains(label), "{label} missing in {err}");
        }
    }
}

#[test]
fn every_reading_command_takes_a_file_url() {
    let name = "test_int_float_rntuple_v1-0-0-0.root";
    let (path, u) = (data(name), url(name));
    let path = path.to_str().expect("path");
    let out = std::env::temp_dir().join(format!("rntuple-cli-url-merge-{}.root", std::process::id()));
    let out = out.to_str().expect("path");
    for args in [
        vec!["ls", "{}"],
        vec!["show", "{}"],
        vec!["dump", "{}"],
        vec!["inspect", "{}", "--json"],
        vec!["verify", "{}"],
        vec!["--cache", "/nonexistent-never-created", "dump", "{}"],
    ] {
        let with = |f: &str| args.iter().map(|a| if *a == "{}" { f.to_string() } else { a.to_string() }).collect();
        let by_path: Vec<String> = with(path);
        let by_url: Vec<String> = with(&u);
        let a = rntuple(&by_path.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        let b = rntuple(&by_url.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
        assert_eq!(a.status.code(), Some(0), "{args:?}: {}", text(&a.stderr));
        assert_eq!(b.status.code(), Some(0), "{args:?} by URL: {}", text(&b.stderr));
        // The same answer, up to the name of the file.
        assert_eq!(text(&a.stdout).replace(path, "F"), text(&b.stdout).replace(&u, "F"), "{args:?}");
    }
    let m = rntuple(&["merge", out, &u, &u], &[]);
    assert_eq!(m.status.code(), Some(0), "{}", text(&m.stderr));
    let d = rntuple(&["dump", out], &[]);
    assert_eq!(text(&d.stdout).lines().count(), 20);
    let _ = std::fs::remove_file(out);
    assert!(!std::path::Path::new("/nonexistent-never-created").exists(), "local files are never cached");
}
