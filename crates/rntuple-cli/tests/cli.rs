//! The `rntuple` binary (the Rust CLI without the Python package) as a user
//! runs it: exit statuses of `inspect`, `verify` and `merge`, the message of
//! the Python-only commands, and a merge interrupted by SIGINT (status 130,
//! no output, no temporary file).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tests").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

fn rntuple(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rntuple")).args(args).output().expect("run rntuple")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn python_only_commands_name_the_package() {
    for cmd in ["convert", "draw", "browse", "study"] {
        let o = rntuple(&[cmd, "in.root", "out.root", "--name", "x"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = text(&o.stderr);
        assert!(err.contains(&format!("'rntuple {cmd}' comes with the Python package")), "{err}");
    }
}

#[test]
fn exit_statuses() {
    let good = data("test_int_float_rntuple_v1-0-0-0.root");
    let good = good.to_str().expect("path");
    let bad = data("bad/page_checksum_mismatch.root");
    let bad = bad.to_str().expect("path");
    assert_eq!(rntuple(&["verify", good]).status.code(), Some(0));
    let o = rntuple(&["verify", good, bad]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains(&format!("{good}: OK")) && out.contains(&format!("{bad}: FAILED (1 problem)")), "{out}");
    assert_eq!(rntuple(&["verify", "/nonexistent.root"]).status.code(), Some(1));
    assert_eq!(rntuple(&["verify"]).status.code(), Some(2));
    let o = rntuple(&["inspect", good, "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["rntuples"][0]["num_entries"], 10);
    assert_eq!(rntuple(&["inspect", "/nonexistent.root"]).status.code(), Some(1));
    assert_eq!(rntuple(&["merge", "/tmp/x.root"]).status.code(), Some(2));
    assert_eq!(rntuple(&["merge", "/tmp/x.root", good, "--mode", "both"]).status.code(), Some(2));
}

/// An input large enough that recompressing it with lzma takes a while.
fn large_input(dir: &Path) -> PathBuf {
    let n = 400_000;
    let fields: Vec<Field> = (0..4).map(|j| Field::new(format!("x{j}"), DataType::Float64, false)).collect();
    let cols: Vec<ArrayRef> = (0..4u64)
        .map(|j| {
            let mut s = j.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let v = (0..n).map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64
            });
            Arc::new(Float64Array::from_iter_values(v)) as ArrayRef
        })
        .collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).expect("batch");
    let path = dir.join("large.root");
    let options = rntuple::WriteOptions { compression: 101, ..Default::default() };
    rntuple::write_batches(&path, "Events", [batch], &HashMap::new(), options).expect("write");
    path
}

#[test]
fn sigint_stops_a_merge_without_leaving_files() {
    let dir = scratch_dir("sigint");
    let input = large_input(&dir);
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).expect("dir");
    let out = out_dir.join("merged.root");
    let input = input.to_str().expect("path");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rntuple"))
        .args(["merge", out.to_str().expect("path"), input, input, "--compression", "lzma:9", "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    loop {
        let temps = std::fs::read_dir(&out_dir).expect("dir").count();
        if temps > 0 {
            break;
        }
        assert!(child.try_wait().expect("wait").is_none(), "the merge ended before it could be interrupted");
        assert!(start.elapsed() < Duration::from_secs(120), "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(kill.success());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("merge interrupted; nothing was written"), "{}", text(&o.stderr));
    let left: Vec<_> = std::fs::read_dir(&out_dir).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
}
