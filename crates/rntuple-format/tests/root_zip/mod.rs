//! Runs ROOT 6.40's `R__zipMultipleAlgorithm` on byte buffers, for the tests
//! that hold our compression blocks against ROOT's.
//!
//! Needs the Python environment with ROOT that `.ci/run` sets up
//! (`$RNTUPLE_CACHE/venv`, default `~/.cache/rntuple-ci/venv`); without it
//! [`root_zip`] returns `None` and the tests print why and pass.

use std::path::PathBuf;
use std::process::Command;

const ROOT_ZIP: &str = r#"
import sys
import ROOT
ROOT.gInterpreter.Declare('#include "RZip.h"')
import ctypes
algorithm = getattr(ROOT.RCompressionSetting.EAlgorithm, sys.argv[1])
level = int(sys.argv[2])
for path in sys.argv[3:]:
    src = open(path, "rb").read()
    room = len(src) + 4096
    tgt = ctypes.create_string_buffer(room)
    n, cap, irep = ctypes.c_int(len(src)), ctypes.c_int(room), ctypes.c_int(0)
    ROOT.R__zipMultipleAlgorithm(level, n, src, cap, tgt, irep, algorithm)
    open(path + ".root", "wb").write(tgt.raw[: irep.value])
"#;

fn root_python() -> Option<PathBuf> {
    let cache = std::env::var_os("RNTUPLE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rntuple-ci")))?;
    let py = cache.join("venv/bin/python");
    py.exists().then_some(py)
}

/// Deterministic page-like inputs: float columns, small integers, offsets.
pub fn inputs() -> Vec<Vec<u8>> {
    let floats: Vec<u8> = (0..40_000u32).flat_map(|i| ((i % 997) as f32 * 0.37).to_le_bytes()).collect();
    let ints: Vec<u8> = (0..3000u32).flat_map(|i| (i * i % 61).to_le_bytes()).collect();
    let offsets: Vec<u8> = (0..70_000u64).flat_map(|i| (i * 3 + i % 5).to_le_bytes()).collect();
    let bytes: Vec<u8> = (0..400).map(|i| (i % 7) as u8).collect();
    vec![floats, ints, offsets, bytes]
}

/// ROOT's output for each of `data` compressed with `algorithm` (a name of
/// `ROOT::RCompressionSetting::EAlgorithm`, e.g. `kLZ4`) at `level`; `None`
/// without ROOT.
pub fn root_zip(algorithm: &str, level: u32, data: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    let Some(py) = root_python() else {
        eprintln!("skipped: no Python with ROOT ($RNTUPLE_CACHE/venv)");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("rntuple-root-zip-{algorithm}-{level}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let script = dir.join("root_zip.py");
    std::fs::write(&script, ROOT_ZIP).expect("script");
    let paths: Vec<PathBuf> = data
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let p = dir.join(format!("in-{i}.bin"));
            std::fs::write(&p, d).expect("input");
            p
        })
        .collect();
    let out =
        Command::new(&py).arg(&script).arg(algorithm).arg(level.to_string()).args(&paths).output().expect("run ROOT");
    assert!(out.status.success(), "ROOT failed: {}", String::from_utf8_lossy(&out.stderr));
    let theirs = paths.iter().map(|p| std::fs::read(p.with_extension("bin.root")).expect("ROOT's output")).collect();
    let _ = std::fs::remove_dir_all(&dir);
    Some(theirs)
}
