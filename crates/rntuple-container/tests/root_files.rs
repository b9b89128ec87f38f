//! Every ROOT-written test file against the golden listing made by uproot and ROOT.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::HashSet;

use common::*;
use rntuple_container::constants::CHUNK_OFFSET_LEN;
use rntuple_container::RootFile;

fn open(name: &str) -> RootFile {
    RootFile::open(data_file(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_root_written_file_is_in_the_golden_listing() {
    let golden = golden();
    let dir = root_written_dir();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".root") {
            assert!(golden.contains_key(&name), "{name} is missing from container.golden: rerun tests/data/make.py");
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} ROOT files in {}", dir.display());
}

#[test]
fn keys_match_uproot() {
    for (name, g) in golden() {
        let file = open(&name);
        let keys = file.keys().unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<GoldenKey> = keys
            .iter()
            .map(|k| GoldenKey {
                path: k.path.clone(),
                class_name: k.class_name.clone(),
                cycle: k.cycle,
                seek_key: k.seek_key,
                nbytes: k.nbytes,
                obj_len: k.obj_len,
                key_len: k.key_len,
            })
            .collect();
        assert_eq!(got, g.keys, "{name}");
        // Names are highest cycles, in key-list order, once each.
        let mut seen = HashSet::new();
        let expected: Vec<String> = g
            .keys
            .iter()
            .filter(|k| k.class_name == "ROOT::RNTuple" && seen.insert(k.path.clone()))
            .map(|k| k.path.clone())
            .collect();
        assert_eq!(file.rntuple_names().unwrap(), expected, "{name}");
    }
}

#[test]
fn anchors_match_uproot_and_checksums_pass() {
    for (name, g) in golden() {
        let file = open(&name);
        for (path, cycle, anchor) in &g.anchors {
            let got = file.anchor(&format!("{path};{cycle}")).unwrap_or_else(|e| panic!("{name} {path}: {e}"));
            assert_eq!(&got, anchor, "{name} {path};{cycle}");
            assert_eq!(got.version_epoch, 1);
            let highest = g.keys.iter().filter(|k| &k.path == path).map(|k| k.cycle).max().unwrap();
            if highest == *cycle {
                assert_eq!(&file.anchor(path).unwrap(), anchor, "{name} {path}");
                assert_eq!(&file.anchor(&format!("/{path}")).unwrap(), anchor, "{name} /{path}");
            }
        }
    }
}

#[test]
fn header_and_footer_envelopes_read_back() {
    for (name, g) in golden() {
        let file = open(&name);
        for (path, _, a) in &g.anchors {
            let what = format!("{name} {path}");
            for (seek, nbytes, len, ty) in
                [(a.seek_header, a.nbytes_header, a.len_header, 1), (a.seek_footer, a.nbytes_footer, a.len_footer, 2)]
            {
                let bytes = file.read_payload(seek, nbytes, a.max_key_size).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(bytes.len() as u64, nbytes, "{what}");
                let envelope = if nbytes == len {
                    bytes
                } else {
                    let loc = rntuple_format::Location::new(what.clone(), Some(seek));
                    rntuple_format::compression::decompress(&bytes, len as usize, &loc)
                        .unwrap_or_else(|e| panic!("{what}: {e}"))
                };
                check_envelope(&envelope, ty);
            }
        }
    }
}

#[test]
fn pages_read_back_with_valid_checksums() {
    let mut checked = 0;
    for (name, g) in golden() {
        let file = open(&name);
        for page in &g.pages {
            let anchor = &g.anchors.iter().find(|(p, _, _)| p == &page.ntuple).unwrap().2;
            // The locator's size excludes the page checksum that follows the data;
            // on disk (and in the multi-key split) the page is 8 bytes longer.
            let size = page.nbytes + if page.has_checksum { 8 } else { 0 };
            let bytes = file
                .read_payload(page.offset, size, anchor.max_key_size)
                .unwrap_or_else(|e| panic!("{name} {}: page at {}: {e}", page.ntuple, page.offset));
            assert_eq!(bytes.len() as u64, size);
            if page.has_checksum {
                check_page_checksum(&bytes);
                checked += 1;
            }
        }
        // The same pages, one vectored call per RNTuple.
        for (path, _, anchor) in &g.anchors {
            let ranges: Vec<(u64, u64)> = g
                .pages
                .iter()
                .filter(|p| &p.ntuple == path)
                .map(|p| (p.offset, p.nbytes + if p.has_checksum { 8 } else { 0 }))
                .collect();
            let all = file.read_payloads(&ranges, anchor.max_key_size).unwrap();
            assert_eq!(all.len(), ranges.len());
            for (&(offset, size), bytes) in ranges.iter().zip(&all) {
                assert_eq!(bytes, &file.read_payload(offset, size, anchor.max_key_size).unwrap(), "{name} {offset}");
            }
        }
    }
    assert!(checked > 50, "only {checked} page checksums checked");
}

#[test]
fn multi_key_payloads_are_chunked_over_rblob_keys() {
    // multikey.root: max key size 4096, uncompressed, a 10 kB header and 16 kB pages.
    let g = golden().remove("multikey.root").unwrap();
    let file = open("multikey.root");
    let (_, _, anchor) = &g.anchors[0];
    assert_eq!(anchor.max_key_size, 4096);
    assert!(anchor.nbytes_header > anchor.max_key_size);
    let mut payloads: Vec<(u64, u64)> = g.pages.iter().map(|p| (p.offset, p.nbytes + 8)).collect();
    payloads.push((anchor.seek_header, anchor.nbytes_header));
    let mut chunks_seen = 0;
    for (offset, nbytes) in payloads {
        assert!(nbytes > anchor.max_key_size, "payload at {offset} should be split");
        let loc = rntuple_format::Location::default();
        let layout = rntuple_container::ChunkLayout::compute(nbytes, anchor.max_key_size, &loc).unwrap().unwrap();
        // The first key holds max_key_size bytes ...
        let first = file.key_at(offset - 42).unwrap();
        assert_eq!(first.class_name, "RBlob");
        assert_eq!((first.payload_offset(), u64::from(first.stored_len())), (offset, anchor.max_key_size));
        // ... ending in little-endian offsets of the other chunks' RBlob payloads.
        let mut raw = vec![0u8; layout.offsets_len as usize];
        file.storage().read_exact_at(offset + layout.first_chunk_len, &mut raw).unwrap();
        let mut remaining = nbytes - layout.first_chunk_len;
        for chunk in raw.chunks(CHUNK_OFFSET_LEN as usize) {
            let chunk_offset = u64::from_le_bytes(chunk.try_into().unwrap());
            let key = file.key_at(chunk_offset - 42).unwrap();
            assert_eq!(key.class_name, "RBlob");
            assert_eq!(key.payload_offset(), chunk_offset);
            let len = remaining.min(anchor.max_key_size);
            assert_eq!(u64::from(key.stored_len()), len);
            remaining -= len;
            chunks_seen += 1;
        }
        assert_eq!(remaining, 0);
    }
    assert!(chunks_seen >= 20);
}

#[test]
fn compressed_anchor_is_decompressed() {
    // ROOT 6.38's stand-alone writer zstd-compresses the anchor when it shrinks.
    let file = open("ntpl001_staff_rntuple_v1-0-1-0.root");
    let key = file.find_key("Staff").unwrap();
    assert!(key.is_compressed(), "{key:?}");
    let anchor = file.anchor("Staff").unwrap();
    assert_eq!((anchor.version_epoch, anchor.version_major, anchor.version_minor), (1, 0, 1));
}

#[test]
fn streamer_info_record_is_readable() {
    for name in ["multikey.root", "subdir.root", "test_int_float_rntuple_v1-0-0-0.root"] {
        let file = open(name);
        let key = file.key_at(file.header().seek_info).unwrap();
        assert_eq!((key.class_name.as_str(), key.name.as_str()), ("TList", "StreamerInfo"), "{name}");
        let info = file.streamer_info().unwrap().unwrap();
        assert_eq!(info.len() as u64, u64::from(key.obj_len), "{name}");
    }
}
