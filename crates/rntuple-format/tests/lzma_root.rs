//! ROOT 6.40 is the judge of our LZMA blocks: the same bytes compressed by
//! ROOT's `R__zipMultipleAlgorithm` (core/lzma: a dictionary of a quarter of
//! the input, 4 KiB to the preset's) and by `compression::compress` must be
//! identical, block header included.
//!
//! Needs the Python environment with ROOT that `.ci/run` sets up
//! (`$RNTUPLE_CACHE/venv`, default `~/.cache/rntuple-ci/venv`); without it
//! the test prints why and passes.

use std::path::PathBuf;
use std::process::Command;

use rntuple_format::compression::compress;

const ROOT_ZIP: &str = r#"
import sys
import ROOT
ROOT.gInterpreter.Declare('#include "RZip.h"')
import ctypes
level = int(sys.argv[1])
for path in sys.argv[2:]:
    src = open(path, "rb").read()
    room = len(src) + 4096
    tgt = ctypes.create_string_buffer(room)
    n, cap, irep = ctypes.c_int(len(src)), ctypes.c_int(room), ctypes.c_int(0)
    ROOT.R__zipMultipleAlgorithm(level, n, src, cap, tgt, irep, ROOT.RCompressionSetting.EAlgorithm.kLZMA)
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
fn inputs() -> Vec<Vec<u8>> {
    let floats: Vec<u8> = (0..40_000u32).flat_map(|i| ((i % 997) as f32 * 0.37).to_le_bytes()).collect();
    let ints: Vec<u8> = (0..3000u32).flat_map(|i| (i * i % 61).to_le_bytes()).collect();
    let offsets: Vec<u8> = (0..70_000u64).flat_map(|i| (i * 3 + i % 5).to_le_bytes()).collect();
    let bytes: Vec<u8> = (0..400).map(|i| (i % 7) as u8).collect();
    vec![floats, ints, offsets, bytes]
}

#[test]
fn our_lzma_blocks_are_roots() {
    let Some(py) = root_python() else {
        eprintln!("skipped: no Python with ROOT ($RNTUPLE_CACHE/venv)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("rntuple-lzma-root-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let script = dir.join("root_zip.py");
    std::fs::write(&script, ROOT_ZIP).expect("script");
    for level in [1u32, 4, 7] {
        let paths: Vec<PathBuf> = inputs()
            .iter()
            .enumerate()
            .map(|(i, data)| {
                let p = dir.join(format!("in-{level}-{i}.bin"));
                std::fs::write(&p, data).expect("input");
                p
            })
            .collect();
        let out = Command::new(&py).arg(&script).arg(level.to_string()).args(&paths).output().expect("run ROOT");
        assert!(out.status.success(), "ROOT failed: {}", String::from_utf8_lossy(&out.stderr));
        for (path, data) in paths.iter().zip(inputs()) {
            let theirs = std::fs::read(path.with_extension("bin.root")).expect("ROOT's output");
            let ours = compress(&data, 200 + level).expect("compress");
            assert!(theirs.len() > 9 && theirs.len() < data.len(), "ROOT compressed {} bytes", data.len());
            assert_eq!(ours, theirs, "level {level}, {} input bytes", data.len());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
