#![allow(clippy::unwrap_used, clippy::panic)]
use std::path::PathBuf;
use rntuple::{RNTupleFile, ReadOptions, Error};

fn read_everything(path: &std::path::Path, options: ReadOptions) -> Result<(), Error> {
    let file = RNTupleFile::open_with(path, options)?;
    for name in file.rntuple_names()? {
        file.rntuple(&name)?.read_all()?;
    }
    Ok(())
}

#[test]
fn probe() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "root")).collect();
    names.sort();
    for p in names {
        for v in [true, false] {
            let t = std::time::Instant::now();
            let r = std::panic::catch_unwind(|| read_everything(&p, ReadOptions { verify_checksums: v }));
            let s = match r { Ok(Ok(())) => "OK".to_string(), Ok(Err(e)) => format!("{e:?}\n        {e}"), Err(_) => "PANIC".into() };
            println!("{} verify={v} {:?}: {s}", p.file_name().unwrap().to_string_lossy(), t.elapsed());
        }
    }
}
