//! The structure-aware mutator of the `structured` fuzz target
//! (`fuzz/src/rewrite.rs`), checked outside the fuzzer, and a small fixed
//! run of it in CI: files it writes have valid checksums everywhere, so a
//! reader with verification on gets past them to the structures behind
//! them; the reader never panics on them and either reads or refuses.

#[path = "../../../fuzz/src/rewrite.rs"]
#[allow(dead_code)]
mod rewrite;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use rewrite::{mutate, parse, Rng};
use rntuple::{Error, RNTupleFile, ReadOptions};
use rntuple_container::{MemoryStorage, OpenOptions, RootFile};

fn data(name: &str) -> Vec<u8> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data")).join(name);
    std::fs::read(&p).expect("a file of tests/data")
}

/// Opens and reads every RNTuple with checksums verified.
fn read(bytes: Vec<u8>) -> Result<(), Error> {
    let root = RootFile::from_storage_with(Arc::new(MemoryStorage::new(bytes)), OpenOptions::new())?;
    let file = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    for name in file.rntuple_names()? {
        file.rntuple(&name)?.read_all()?;
    }
    Ok(())
}

/// Every RNTuple of the file, read with checksums verified.
fn values(bytes: Vec<u8>) -> Vec<arrow_array::RecordBatch> {
    let root = RootFile::from_storage(Arc::new(MemoryStorage::new(bytes))).expect("open");
    let file = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    let names = file.rntuple_names().expect("names");
    names.iter().map(|n| file.rntuple(n).expect("rntuple").read_all().expect("read")).collect()
}

/// Re-serialising without a change moves the envelopes to the end of the
/// file, uncompressed, under recomputed checksums: the same values read back.
#[test]
fn rewrite_without_change_reads_back_the_same_values() {
    for file in ["test_stl_containers_rntuple_v1-0-0-0.root", "test_multiple_cluster_groups_rntuple_v1-0-0-0.root"] {
        let good = data(file);
        let p = parse(&good).expect("parses");
        let groups = p.page_lists.len();
        let moved = rewrite::serialise(p, None, true, &mut Rng::new(0)).expect("serialises");
        assert!(moved.len() > good.len(), "{file}: envelopes appended");
        let root = RootFile::from_storage(Arc::new(MemoryStorage::new(moved.clone()))).expect("open");
        let key = root.keys().expect("keys").into_iter().find(|k| k.is_rntuple()).expect("anchor key");
        let a = root.anchor_of(&key).expect("anchor checksum valid");
        assert!(a.seek_header >= good.len() as u64 && a.seek_footer > a.seek_header, "{file}");
        assert_eq!(a.nbytes_header, a.len_header, "{file}: stored uncompressed");
        assert_eq!(parse(&moved).expect("parses again").page_lists.len(), groups);
        assert_eq!(values(moved), values(good), "{file}");
    }
}

#[test]
fn mutations_pass_every_checksum_and_never_panic() {
    let mut reached_structure = 0;
    let mut read_fine = 0;
    let mut checksum_errors = 0;
    for file in ["test_stl_containers_rntuple_v1-0-0-0.root", "test_multiple_cluster_groups_rntuple_v1-0-0-0.root"] {
        let good = data(file);
        for seed in 0..300u64 {
            let mut rng = Rng::new(seed);
            let Some(bytes) = mutate(parse(&good).expect("the good file parses"), &mut rng) else {
                continue; // the change made the structures unserialisable
            };
            match catch_unwind(AssertUnwindSafe(|| read(bytes))) {
                Err(_) => panic!("{file}: seed {seed}: the reader panicked"),
                Ok(Ok(())) => read_fine += 1,
                Ok(Err(Error::ChecksumMismatch { .. })) => checksum_errors += 1,
                Ok(Err(_)) => reached_structure += 1,
            }
        }
    }
    eprintln!("read: {read_fine}, structural errors: {reached_structure}, checksum errors: {checksum_errors}");
    // Checksums are recomputed: a mismatch can only come from a locator
    // changed to point at other bytes (page checksums are read after the page).
    assert!(checksum_errors * 4 < reached_structure, "{checksum_errors} checksum errors");
    assert!(reached_structure >= 100, "{reached_structure} mutations reached the structural checks");
    assert!(read_fine >= 10, "{read_fine} mutations read fine");
}

/// Found by the long run of the `structured` target: a page locator near
/// the end of the address space (from an earlier mutation) overflowed the
/// mutator's bounds check (`attempt to add with overflow`).
#[test]
fn page_mutation_skips_a_page_past_the_address_space() {
    let good = data("test_stl_containers_rntuple_v1-0-0-0.root");
    let mut p = parse(&good).expect("parses");
    for cluster in &mut p.page_lists[0].page_locations {
        for col in cluster {
            for page in &mut col.pages {
                page.locator.offset = u64::MAX - 3;
                page.locator.size = 2;
                page.has_checksum = true;
            }
        }
    }
    let before = p.bytes.clone();
    rewrite::mutate_page(&mut p, &mut Rng::new(1));
    assert_eq!(p.bytes, before, "nothing changed");
}
