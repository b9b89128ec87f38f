//! Corrupted copies of real files, patched in memory: every damage is an error
//! naming what and where, never a panic, a hang or a huge allocation.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use rntuple_container::{MemoryStorage, OpenOptions, ReadAt, RootFile};
use rntuple_format::Error;

fn bytes_of(name: &str) -> Vec<u8> {
    std::fs::read(data_file(name)).unwrap()
}

fn open_bytes(bytes: Vec<u8>) -> rntuple_format::Result<RootFile> {
    RootFile::from_storage(Arc::new(MemoryStorage::new(bytes)))
}

fn put_be32(bytes: &mut [u8], at: u64, v: u32) {
    bytes[at as usize..at as usize + 4].copy_from_slice(&v.to_be_bytes());
}

/// Everything a reader does with a file; returns the first error.
fn read_everything(bytes: Vec<u8>) -> rntuple_format::Result<()> {
    let file = open_bytes(bytes)?;
    file.keys()?;
    for name in file.rntuple_names()? {
        let a = file.anchor(&name)?;
        file.read_payload(a.seek_header, a.nbytes_header, a.max_key_size)?;
        file.read_payload(a.seek_footer, a.nbytes_footer, a.max_key_size)?;
    }
    file.streamer_info()?;
    Ok(())
}

#[test]
fn intact_files_read_cleanly() {
    for name in ["test_int_float_rntuple_v1-0-0-0.root", "subdir.root", "multikey.root"] {
        read_everything(bytes_of(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn wrong_magic_is_not_a_root_file() {
    let mut bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    bytes[..4].copy_from_slice(b"rntu");
    let err = open_bytes(bytes).unwrap_err();
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert!(err.to_string().contains("not a ROOT file"), "{err}");
    assert!(matches!(open_bytes(Vec::new()), Err(Error::Truncated { .. })));
    assert!(matches!(open_bytes(b"root".to_vec()), Err(Error::Truncated { .. })));
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    for len in 0..bytes.len() {
        assert!(read_everything(bytes[..len].to_vec()).is_err(), "truncated to {len} bytes");
    }
    let err = open_bytes(bytes[..1000].to_vec()).unwrap_err();
    assert!(matches!(err, Error::Truncated { needed: 1561, available: 1000, .. }), "{err}");
}

#[test]
fn truncation_hidden_by_a_patched_end_is_still_an_error() {
    // Cut the file and rewrite fEND so that the header agrees: the key list
    // and the anchor now point past the end.
    let bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    for len in [400usize, 900, 1000, 1100, 1400] {
        let mut cut = bytes[..len].to_vec();
        put_be32(&mut cut, 12, len as u32);
        assert!(read_everything(cut).is_err(), "cut at {len}");
    }
}

#[test]
fn key_list_past_the_end() {
    let mut bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let top = file.header().top_directory_offset();
    // fSeekKeys of the small top directory record is at +26.
    put_be32(&mut bytes, top + 26, 1_000_000);
    let err = open_bytes(bytes).unwrap().keys().unwrap_err();
    assert!(matches!(&err, Error::Truncated { location, .. } if location.offset == Some(1_000_000)), "{err}");
}

#[test]
fn absurd_key_count_is_refused_before_allocating() {
    let mut bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let seek_keys = file.top_directory().seek_keys;
    let list_key = file.key_at(seek_keys).unwrap();
    let count_at = seek_keys + u64::from(list_key.key_len);
    for count in [i32::MAX as u32, 2, u32::MAX] {
        put_be32(&mut bytes, count_at, count);
        let err = open_bytes(bytes.clone()).unwrap().keys().unwrap_err();
        assert!(matches!(&err, Error::OutOfSpec { location, .. } if location.offset == Some(count_at)), "{err}");
        assert!(err.to_string().contains("key count"), "{err}");
    }
}

#[test]
fn key_pointing_past_the_end() {
    let mut bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let key = file.keys().unwrap().remove(0);
    // Locate the key's entry in the list (after the list's own key and count)
    // and move its fSeekKey (small key: at +18) past the end.
    let seek_keys = file.top_directory().seek_keys;
    let entry = seek_keys + u64::from(file.key_at(seek_keys).unwrap().key_len) + 4;
    assert_eq!(u64::from(u32::from_be_bytes(bytes[entry as usize + 18..][..4].try_into().unwrap())), key.seek_key);
    put_be32(&mut bytes, entry + 18, 1_500);
    let err = open_bytes(bytes).unwrap().keys().unwrap_err();
    assert!(err.to_string().contains("past the end"), "{err}");
}

#[test]
fn huge_object_length_is_refused() {
    // A 1.5 kB file whose anchor key claims 3.9 GB after decompression.
    let mut bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let seek_keys = file.top_directory().seek_keys;
    let entry = seek_keys + u64::from(file.key_at(seek_keys).unwrap().key_len) + 4;
    put_be32(&mut bytes, entry + 6, 0xf000_0000); // fObjLen
    let err = open_bytes(bytes).unwrap().anchor("ntuple").unwrap_err();
    assert!(matches!(err, Error::OutOfSpec { .. } | Error::WouldOverAllocate { .. }), "{err}");
}

#[test]
fn anchor_checksum_is_verified_unless_disabled() {
    let mut bytes = bytes_of("test_int_float_rntuple_v1-0-0-0.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let key = file.find_key("ntuple").unwrap();
    bytes[key.payload_offset() as usize + 20] ^= 0x01; // inside fSeekHeader
    let err = open_bytes(bytes.clone()).unwrap().anchor("ntuple").unwrap_err();
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    assert!(err.to_string().contains("ntuple"), "{err}");
    let lax =
        RootFile::from_storage_with(Arc::new(MemoryStorage::new(bytes)), OpenOptions::new().verify_checksums(false))
            .unwrap();
    let a = lax.anchor("ntuple").unwrap();
    assert_eq!(a.seek_header, 302 ^ 0x100);
}

#[test]
fn zero_max_key_size_means_one_key_per_payload() {
    // uproot 5.7 writes fMaxKeySize = 0 into its anchors.
    let file = open_bytes(bytes_of("test_int_float_rntuple_v1-0-0-0.root")).unwrap();
    assert_eq!(file.read_payload(302, 167, 0).unwrap(), file.read_payload(302, 167, 1 << 30).unwrap());
}

#[test]
fn payload_larger_than_the_file_is_refused() {
    let file = open_bytes(bytes_of("multikey.root")).unwrap();
    let err = file.read_payload(100, 1 << 40, 4096).unwrap_err();
    assert!(matches!(err, Error::WouldOverAllocate { .. }), "{err}");
    let err = file.read_payload(100, 1 << 40, 1 << 41).unwrap_err();
    assert!(matches!(err, Error::WouldOverAllocate { .. }), "{err}");
    let size = file.size();
    let err = file.read_payload(size - 10, 20, 4096).unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    // A multi-key payload whose first key would run past the end.
    let err = file.read_payload(size - 5000, 5000, 4096).unwrap_err();
    assert!(matches!(err, Error::OutOfSpec { .. } | Error::Truncated { .. }), "{err}");
}

#[test]
fn chunk_offset_past_the_end_names_the_chunk() {
    let mut bytes = bytes_of("multikey.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let a = file.anchor("ntpl").unwrap();
    let loc = rntuple_format::Location::default();
    let layout = rntuple_container::ChunkLayout::compute(a.nbytes_header, a.max_key_size, &loc).unwrap().unwrap();
    let offsets_at = (a.seek_header + layout.first_chunk_len) as usize;
    // Chunk 3's offset points far past the end.
    bytes[offsets_at + 8..offsets_at + 16].copy_from_slice(&(1u64 << 50).to_le_bytes());
    let err = open_bytes(bytes).unwrap().read_payload(a.seek_header, a.nbytes_header, a.max_key_size).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::OutOfSpec { .. }), "{msg}");
    assert!(msg.contains("chunk 3 of") && msg.contains(&(1u64 << 50).to_string()), "{msg}");
}

/// Offset of the `fSeekKeys` field in the directory record of `key`.
fn seek_keys_field(file: &RootFile, bytes: &[u8], path: &str) -> u64 {
    let key = file.find_key(path).unwrap();
    let record = key.payload_offset();
    let version = u16::from_be_bytes(bytes[record as usize..][..2].try_into().unwrap());
    assert!(version < 1000, "test expects the small directory record");
    record + 26
}

#[test]
fn directory_cycles_are_errors_not_infinite_recursion() {
    let bytes = bytes_of("subdir.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let field = seek_keys_field(&file, &bytes, "dir/sub");
    let dir_keys = {
        let at = seek_keys_field(&file, &bytes, "dir") as usize;
        u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap())
    };
    // dir/sub points back to its parent's key list, then to the top's.
    for target in [dir_keys, file.top_directory().seek_keys as u32] {
        let mut bad = bytes.clone();
        put_be32(&mut bad, field, target);
        let bad = open_bytes(bad).unwrap();
        let err = bad.keys().unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
        assert!(bad.find_key("dir/sub/sub/sub/sub/Events").is_err());
    }
    // The anchor lookup only reads the directories on its path.
    let mut bad = bytes.clone();
    put_be32(&mut bad, field, dir_keys);
    assert!(open_bytes(bad).unwrap().anchor("top").is_ok());
}

#[test]
fn negative_and_huge_directory_fields() {
    let bytes = bytes_of("subdir.root");
    let file = open_bytes(bytes.clone()).unwrap();
    let field = seek_keys_field(&file, &bytes, "dir/sub");
    for (delta, value) in [(-16i64, 0xffff_fff0u32), (-16, 0x7fff_ffff), (0, 0xffff_ffff), (-12, 0x8000_0000)] {
        let mut bad = bytes.clone();
        put_be32(&mut bad, (field as i64 + delta) as u64, value);
        assert!(open_bytes(bad).unwrap().keys().is_err(), "delta {delta} value {value:#x}");
    }
}

/// xorshift64*: deterministic bytes for the flip test.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Byte ranges holding ROOT records (header, directory records, key lists,
/// key headers, anchors) where a flipped byte matters most.
fn metadata_ranges(bytes: &[u8]) -> Vec<(u64, u64)> {
    let file = open_bytes(bytes.to_vec()).unwrap();
    let mut ranges = vec![(0, 100), (file.header().top_directory_offset(), 60)];
    let top = file.top_directory();
    ranges.push((top.seek_keys, u64::from(top.nbytes_keys)));
    for key in file.keys().unwrap() {
        ranges.push((key.seek_key, u64::from(key.nbytes).min(200)));
    }
    ranges
}

#[test]
fn flipped_bytes_never_panic() {
    for name in ["test_int_float_rntuple_v1-0-0-0.root", "subdir.root", "multikey.root"] {
        let bytes = bytes_of(name);
        let ranges = metadata_ranges(&bytes);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let mut bad = bytes.clone();
            for _ in 0..1 + rng.below(4) {
                let (start, len) = ranges[rng.below(ranges.len() as u64) as usize];
                let at = (start + rng.below(len.max(1))).min(bad.len() as u64 - 1) as usize;
                bad[at] = match rng.below(4) {
                    0 => 0,
                    1 => 0xff,
                    _ => bad[at] ^ (1 << rng.below(8)),
                };
            }
            let _ = read_everything(bad);
        }
    }
}

#[test]
fn storage_errors_carry_the_offset() {
    let m = MemoryStorage::new(vec![0; 10]);
    let mut buf = [0u8; 4];
    let err = m.read_exact_at(8, &mut buf).unwrap_err();
    assert!(err.to_string().contains("byte offset 8"), "{err}");
}

/// The repository's corrupt files (tests/data/bad, each tested in full at the
/// `rntuple` layer): the container layer never panics on any of them, and
/// rejects those whose defect is in the container.
#[test]
fn repository_bad_files() {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/bad/"));
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut n = 0;
    for entry in entries {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".root") {
            continue;
        }
        n += 1;
        let result = read_everything(std::fs::read(dir.join(&name)).unwrap());
        let container_defect =
            ["truncated_", "wrong_file_magic", "key_", "directory_", "anchor_"].iter().any(|p| name.starts_with(p))
                && name != "anchor_len_header_huge.root"
                || name == "header_envelope_cut_at_eof.root";
        if container_defect {
            assert!(result.is_err(), "{name} should fail in the container layer");
        }
    }
    assert!(n > 0);
}
