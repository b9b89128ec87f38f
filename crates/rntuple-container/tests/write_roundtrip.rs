//! Files written by `FileWriter`, read back with `RootFile`: keys, directories,
//! cycles, anchors and payloads (single- and multi-key), the large-file forms,
//! reproducibility, and unfinished files.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rntuple_container::constants::INCOMPLETE_FILE_MAGIC;
use rntuple_container::{Anchor, FileWriter, MemoryStorage, RootFile, WriterOptions};
use rntuple_format::Error;

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rntuple-write-roundtrip-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `n` bytes that differ from blob to blob.
fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed).rotate_left(u32::from(seed % 7))).collect()
}

fn anchor(max_key_size: u64, header: (u64, &[u8]), footer: (u64, &[u8])) -> Anchor {
    Anchor {
        version_epoch: 1,
        version_major: 0,
        version_minor: 2,
        version_patch: 0,
        seek_header: header.0,
        nbytes_header: header.1.len() as u64,
        len_header: 2 * header.1.len() as u64,
        seek_footer: footer.0,
        nbytes_footer: footer.1.len() as u64,
        len_footer: 2 * footer.1.len() as u64,
        max_key_size,
    }
}

/// One anchor `write_sample` wrote, with its envelopes.
struct WrittenAnchor {
    path: String,
    cycle: i16,
    anchor: Anchor,
    header: Vec<u8>,
    footer: Vec<u8>,
}

/// What `write_sample` wrote.
struct Sample {
    anchors: Vec<WrittenAnchor>,
    /// Every blob: (offset, bytes).
    blobs: Vec<(u64, Vec<u8>)>,
}

/// A file with blobs around `max_key_size` (single keys, exact fits, several
/// multi-key splits, payloads in parts) and anchors at the top, in `dir`, in
/// `dir/sub`, with two cycles of `dir/Events`.
fn write_sample(path: &Path, options: WriterOptions) -> Sample {
    let max = options.max_key_size;
    let mut w = FileWriter::create(path, options).unwrap();
    assert_eq!(w.max_key_size(), max);
    let mut blobs = Vec::new();
    // Sizes around the max key size, unless that is too large to allocate here.
    let m = max.min(1 << 16) as usize;
    let sizes = [300, m, m + 1, 2 * m, 5 * m + 17, 1, 0];
    for (i, &n) in sizes.iter().enumerate() {
        let b = bytes(n, i as u8);
        let offset = if i % 2 == 0 {
            w.write_blob(&b).unwrap()
        } else {
            // In parts: a page and its checksum, say.
            let cut = n.saturating_sub(8);
            w.write_blob_parts(&[&b[..cut], &b[cut..]]).unwrap()
        };
        blobs.push((offset, b));
    }
    let mut anchors = Vec::new();
    let paths = [("Events", 1), ("dir/sub/Events", 1), ("dir/Events", 1), ("/dir/Events", 2), ("dir/Other", 1)];
    for (i, (path, cycle)) in paths.into_iter().enumerate() {
        let h = bytes(100 + 3 * m / 2 + i, 100 + i as u8);
        let f = bytes(64 + i, 200 + i as u8);
        let sh = w.write_blob(&h).unwrap();
        let sf = w.write_blob(&f).unwrap();
        let a = anchor(max, (sh, &h), (sf, &f));
        w.write_anchor(path, &a).unwrap();
        anchors.push(WrittenAnchor {
            path: path.trim_start_matches('/').to_string(),
            cycle,
            anchor: a,
            header: h,
            footer: f,
        });
    }
    w.finish().unwrap();
    Sample { anchors, blobs }
}

#[test]
fn reads_back_keys_anchors_and_payloads() {
    let dir = scratch("readback");
    for max in [64u64, 100, 1000, 1 << 30] {
        let path = dir.join(format!("sample-{max}.root"));
        let sample = write_sample(&path, WriterOptions::new().max_key_size(max).timestamp(1_700_000_000));
        let file = RootFile::open(&path).unwrap();
        assert_eq!(file.size(), file.header().end, "fEND is the file size");
        assert!(!file.header().is_large());
        assert_eq!(file.header().root_version(), 64000);
        assert_eq!(file.header().compress, 505);

        let keys: Vec<String> = file.keys().unwrap().iter().map(|k| format!("{};{}", k.path, k.cycle)).collect();
        assert_eq!(
            keys,
            ["Events;1", "dir;1", "dir/sub;1", "dir/sub/Events;1", "dir/Events;2", "dir/Events;1", "dir/Other;1"],
            "max key size {max}"
        );
        assert_eq!(file.rntuple_names().unwrap(), ["Events", "dir/sub/Events", "dir/Events", "dir/Other"]);
        for k in file.keys().unwrap() {
            let class = if k.name == "dir" || k.name == "sub" { "TDirectory" } else { "ROOT::RNTuple" };
            assert_eq!(k.class_name, class, "{}", k.path);
            assert_eq!(k.version, 1004);
        }
        for w in &sample.anchors {
            let got = file.anchor(&format!("{};{}", w.path, w.cycle)).unwrap();
            assert_eq!(got, w.anchor, "{};{}", w.path, w.cycle);
            assert_eq!(file.read_payload(got.seek_header, got.nbytes_header, got.max_key_size).unwrap(), w.header);
            assert_eq!(file.read_payload(got.seek_footer, got.nbytes_footer, got.max_key_size).unwrap(), w.footer);
        }
        // Highest cycle by default.
        assert_eq!(file.anchor("dir/Events").unwrap(), sample.anchors[3].anchor);
        for (offset, b) in &sample.blobs {
            assert_eq!(&file.read_payload(*offset, b.len() as u64, max).unwrap(), b, "blob of {}", b.len());
        }
        let vectored: Vec<(u64, u64)> = sample.blobs.iter().map(|(o, b)| (*o, b.len() as u64)).collect();
        let got = file.read_payloads(&vectored, max).unwrap();
        assert!(got.iter().zip(&sample.blobs).all(|(g, (_, b))| g == b));

        // The streamer info is ROOT::RNTuple's, compressed with the file's setting.
        let info_key = file.key_at(file.header().seek_info).unwrap();
        assert_eq!(
            (info_key.class_name.as_str(), info_key.name.as_str(), info_key.title.as_str()),
            ("TList", "StreamerInfo", "Doubly linked list")
        );
        assert!(info_key.is_compressed());
        let info = file.streamer_info().unwrap().unwrap();
        assert_eq!(info.len(), info_key.obj_len as usize);
        assert!(info.windows(13).any(|w| w == b"ROOT::RNTuple"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Walks the records from fBEGIN to fEND as `TFile::Map` does: they must
/// follow each other without gaps, and be what the header and directories say.
#[test]
fn records_tile_the_file_like_tfile_map_expects() {
    let dir = scratch("tile");
    let path = dir.join("tile.root");
    let sample = write_sample(&path, WriterOptions::new().max_key_size(100));
    let file = RootFile::open(&path).unwrap();
    let h = file.header().clone();
    let mut at = h.begin;
    let mut classes = Vec::new();
    while at < h.end {
        let key = file.key_at(at).unwrap();
        assert_eq!(key.seek_key, at);
        classes.push(key.class_name.clone());
        at += u64::from(key.nbytes);
    }
    assert_eq!(at, h.end);
    assert_eq!(classes[0], "TFile");
    assert_eq!(classes.last().unwrap(), "TFile"); // the free-segments record
    let n_blobs = classes.iter().filter(|c| *c == "RBlob").count();
    // Each blob of n bytes takes ceil-ish(n / 100) keys; at least one per blob.
    assert!(n_blobs > sample.blobs.len() + 2 * sample.anchors.len());
    // The free-segments record: one TFree [fEND, 2e9].
    let free = file.key_at(h.seek_free).unwrap();
    assert_eq!((h.nfree, free.nbytes, free.obj_len), (1, h.nbytes_free, 10));
    let payload = file.read_object(&free).unwrap();
    assert_eq!(payload[..2], [0, 1]);
    assert_eq!(u32::from_be_bytes(payload[2..6].try_into().unwrap()) as u64, h.end);
    assert_eq!(u32::from_be_bytes(payload[6..10].try_into().unwrap()), 2_000_000_000);
    // The top directory record sits behind the TFile key and its TNamed.
    let top = file.top_directory();
    assert_eq!((top.seek_dir, top.seek_parent, top.nbytes_name), (100, 0, h.nbytes_name));
    assert_eq!(file.key_at(100).unwrap().name, "tile.root");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn multi_key_payloads_are_laid_out_as_root_does() {
    // 250 bytes in keys of 100: chunks 2 and 3 (100 and 66 bytes) come first,
    // then the first key: 84 payload bytes and two little-endian offsets.
    let dir = scratch("multikey");
    let path = dir.join("m.root");
    let mut w = FileWriter::create(&path, WriterOptions::new().max_key_size(100)).unwrap();
    let b = bytes(250, 9);
    let offset = w.write_blob(&b).unwrap();
    let len = w.len();
    w.finish().unwrap();
    let raw = std::fs::read(&path).unwrap();
    let file = RootFile::open(&path).unwrap();
    let chunk2 = file.key_at(offset - 42 - 100 - 42 - 66 - 42).unwrap();
    let chunk3 = file.key_at(chunk2.seek_key + u64::from(chunk2.nbytes)).unwrap();
    let first = file.key_at(chunk3.seek_key + u64::from(chunk3.nbytes)).unwrap();
    assert_eq!((chunk2.class_name.as_str(), chunk2.stored_len(), chunk3.stored_len()), ("RBlob", 100, 66));
    assert_eq!((first.payload_offset(), first.stored_len(), first.obj_len), (offset, 100, 100));
    assert_eq!(first.payload_offset() + 100, len);
    let o = offset as usize;
    assert_eq!(&raw[o..o + 84], &b[..84]);
    assert_eq!(u64::from_le_bytes(raw[o + 84..o + 92].try_into().unwrap()), chunk2.payload_offset());
    assert_eq!(u64::from_le_bytes(raw[o + 92..o + 100].try_into().unwrap()), chunk3.payload_offset());
    assert_eq!(file.read_payload(offset, 250, 100).unwrap(), b);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn object_length_of_a_blob_can_record_the_uncompressed_size() {
    let dir = scratch("objlen");
    let path = dir.join("o.root");
    let mut w = FileWriter::create(&path, WriterOptions::new().max_key_size(1000)).unwrap();
    let page = bytes(120, 1);
    let checksum = [7u8; 8];
    let offset = w.write_blob_parts_with_len(&[&page, &checksum], 4000).unwrap();
    // Split payloads record each chunk's own size.
    let big = w.write_blob_parts_with_len(&[&bytes(2500, 2)], 9000).unwrap();
    w.finish().unwrap();
    let file = RootFile::open(&path).unwrap();
    let key = file.key_at(offset - 42).unwrap();
    assert_eq!((key.stored_len(), key.obj_len), (128, 4000));
    let first = file.key_at(big - 42).unwrap();
    assert_eq!((first.stored_len(), first.obj_len), (1000, 1000));
    assert_eq!(file.read_payload(offset, 128, 1000).unwrap(), [page, checksum.to_vec()].concat());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fixed_timestamp_makes_files_reproducible() {
    let dir = scratch("repro");
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let options = WriterOptions::new().max_key_size(128).timestamp(1_234_567_890).compression(101);
    write_sample(&a.join("same.root"), options.clone());
    write_sample(&b.join("same.root"), options.clone());
    let (x, y) = (std::fs::read(a.join("same.root")).unwrap(), std::fs::read(b.join("same.root")).unwrap());
    assert_eq!(x, y);
    // Another time stamp changes the dates and the UUIDs, nothing else.
    write_sample(&b.join("same.root"), options.timestamp(1_234_567_891));
    let z = std::fs::read(b.join("same.root")).unwrap();
    assert_eq!(x.len(), z.len());
    assert_ne!(x, z);
    // Without a fixed time stamp, the UUIDs are random.
    write_sample(&a.join("r.root"), WriterOptions::new().max_key_size(128));
    write_sample(&b.join("r.root"), WriterOptions::new().max_key_size(128));
    let (r1, r2) = (std::fs::read(a.join("r.root")).unwrap(), std::fs::read(b.join("r.root")).unwrap());
    assert_ne!(r1[45..63], r2[45..63], "header UUIDs");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compression_settings_apply_to_the_streamer_info() {
    let dir = scratch("compression");
    for (setting, tag) in
        [(0u32, None), (101, Some(*b"ZL")), (207, Some(*b"XZ")), (404, Some(*b"L4")), (505, Some(*b"ZS"))]
    {
        let path = dir.join(format!("c{setting}.root"));
        FileWriter::create(&path, WriterOptions::new().compression(setting)).unwrap().finish().unwrap();
        let file = RootFile::open(&path).unwrap();
        assert_eq!(file.header().compress, setting);
        let key = file.key_at(file.header().seek_info).unwrap();
        let raw = std::fs::read(&path).unwrap();
        let start = key.payload_offset() as usize;
        match tag {
            None => assert!(!key.is_compressed()),
            Some(t) => assert_eq!(raw[start..start + 2], t, "setting {setting}"),
        }
        assert_eq!(file.streamer_info().unwrap().unwrap().len(), 1254);
        assert!(file.keys().unwrap().is_empty());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_refused() {
    let dir = scratch("bad");
    let path = dir.join("bad.root");
    for options in [WriterOptions::new().max_key_size(0), WriterOptions::new().compression(999)] {
        assert!(matches!(FileWriter::create(&path, options), Err(Error::InvalidArgument { .. })));
    }
    let mut w = FileWriter::create(&path, WriterOptions::new().max_key_size(100)).unwrap();
    let h = bytes(50, 1);
    let sh = w.write_blob(&h).unwrap();
    let good = anchor(100, (sh, &h), (sh, &h));
    w.write_anchor("ok", &good).unwrap();
    let bad_anchors = [
        ("a", Anchor { max_key_size: 200, ..good.clone() }),
        ("a", Anchor { seek_header: sh + 1000, ..good.clone() }),
        ("a", Anchor { seek_footer: 10, ..good.clone() }),
        ("a", Anchor { nbytes_footer: 51, ..good.clone() }),
        ("", good.clone()),
        ("a//b", good.clone()),
        ("a;1", good.clone()),
        ("ok/x", good.clone()),
    ];
    for (name, a) in &bad_anchors {
        let err = w.write_anchor(name, a).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{name}: {err}");
    }
    w.write_anchor("d/x", &good).unwrap();
    assert!(matches!(w.write_anchor("d", &good), Err(Error::InvalidArgument { .. })));
    // A single key holds at most the max key size, and a refused write writes nothing.
    let before = w.len();
    assert!(matches!(w.write_single_key_blob(&[&[0u8; 60], &[0u8; 41]], 101), Err(Error::InvalidArgument { .. })));
    assert_eq!(w.len(), before);
    let packed = w.write_single_key_blob(&[&[1u8; 60], &[2u8; 40]], 300).unwrap();
    assert_eq!(w.len(), packed + 100);
    // Payloads whose chunk offsets do not fit in one key.
    let err = w.write_blob(&vec![0u8; 100 * 100]).unwrap_err();
    assert!(err.to_string().contains("split"), "{err}");
    w.finish().unwrap();
    let file = RootFile::open(&path).unwrap();
    assert_eq!(file.rntuple_names().unwrap(), ["ok", "d/x"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Checks that `path` is refused by our reader with the "not completed" message.
fn assert_incomplete(path: &Path) {
    let raw = std::fs::read(path).unwrap();
    assert!(raw.starts_with(&INCOMPLETE_FILE_MAGIC), "{}", path.display());
    let err = RootFile::open(path).unwrap_err();
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("was not completed by its writer (the writer failed or was abandoned)"), "{msg}");
    let err = RootFile::from_storage(Arc::new(MemoryStorage::new(raw))).unwrap_err();
    assert!(err.to_string().contains("not completed"), "{err}");
}

#[test]
fn unfinished_files_are_refused_with_a_clear_message() {
    let dir = scratch("unfinished");
    // Dropped without finish, after blobs and anchors.
    let dropped = dir.join("dropped.root");
    {
        let mut w = FileWriter::create(&dropped, WriterOptions::new().max_key_size(100)).unwrap();
        let h = bytes(500, 3);
        let sh = w.write_blob(&h).unwrap();
        w.write_anchor("Events", &anchor(100, (sh, &h), (sh, &h))).unwrap();
    }
    assert!(std::fs::metadata(&dropped).unwrap().len() > 500, "the payloads were flushed");
    assert_incomplete(&dropped);

    // Simulated crash: the writer is never dropped (its buffer is lost, as when
    // the process is killed) while payloads are being written.
    let crashed = dir.join("crashed.root");
    let mut w = FileWriter::create(&crashed, WriterOptions::new()).unwrap();
    w.write_blob(&bytes(10_000, 4)).unwrap();
    std::mem::forget(w);
    assert_incomplete(&crashed);

    // Just created.
    let created = dir.join("created.root");
    std::mem::forget(FileWriter::create(&created, WriterOptions::new()).unwrap());
    assert_eq!(std::fs::metadata(&created).unwrap().len(), 100);
    assert_incomplete(&created);

    // Recreating a finished file makes it incomplete again until finished.
    let finished = dir.join("finished.root");
    FileWriter::create(&finished, WriterOptions::new()).unwrap().finish().unwrap();
    RootFile::open(&finished).unwrap();
    drop(FileWriter::create(&finished, WriterOptions::new()).unwrap());
    assert_incomplete(&finished);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn io_errors_are_reported() {
    // /dev/full accepts the open and fails every write with ENOSPC.
    if !Path::new("/dev/full").exists() {
        println!("skipped: no /dev/full");
        return;
    }
    let err = FileWriter::create("/dev/full", WriterOptions::new()).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

/// Files past 2 GB: the header, the directory records and the free segment
/// take their 64-bit forms. The payload bytes in the middle are holes (the
/// file is sparse), so nothing of that size is written or read.
#[test]
fn large_files_switch_to_64_bit_records() {
    let dir = scratch("large");
    let path = dir.join("large.root");
    let max = 1u64 << 20;
    let mut w = FileWriter::create(&path, WriterOptions::new().max_key_size(max).timestamp(1)).unwrap();
    let small = bytes(1000, 5);
    let early = w.write_blob(&small).unwrap();
    let mut holes = Vec::new();
    while w.len() < (1 << 32) + (1 << 28) {
        holes.push(w.write_zero_blob(max).unwrap());
    }
    assert!(w.write_zero_blob(max + 1).is_err());
    // A multi-key payload past 2^32: 64-bit chunk offsets.
    let big = bytes(3 * max as usize + 5, 6);
    let h = w.write_blob(&big).unwrap();
    let f = w.write_blob(&small).unwrap();
    assert!(h > 1 << 32);
    let a = anchor(max, (h, &big), (f, &small));
    w.write_anchor("deep/inside/Events", &a).unwrap();
    w.write_anchor("Events", &anchor(max, (early, &small), (f, &small))).unwrap();
    w.finish().unwrap();

    let file = RootFile::open(&path).unwrap();
    let hdr = file.header();
    assert!(hdr.is_large());
    assert_eq!((hdr.version, hdr.units), (1_064_000, 8));
    assert_eq!(hdr.end, file.size());
    assert!(file.top_directory().is_large());
    assert_eq!(file.anchor("deep/inside/Events").unwrap(), a);
    assert_eq!(file.read_payload(h, big.len() as u64, max).unwrap(), big);
    assert_eq!(file.read_payload(early, 1000, max).unwrap(), small);
    assert_eq!(file.read_payload(holes[1], 16, max).unwrap(), [0u8; 16]);
    let keys: Vec<String> = file.keys().unwrap().into_iter().map(|k| k.path).collect();
    assert_eq!(keys, ["deep", "deep/inside", "deep/inside/Events", "Events"]);
    let free = file.read_object(&file.key_at(hdr.seek_free).unwrap()).unwrap();
    assert_eq!(free.len(), 18);
    assert_eq!(free[..2], [0x03, 0xe9]);
    assert_eq!(u64::from_be_bytes(free[2..10].try_into().unwrap()), hdr.end);
    assert_eq!(u64::from_be_bytes(free[10..18].try_into().unwrap()), 5_000_000_000);
    // The file is sparse: far less is stored than its size.
    println!("large.root: {} bytes", file.size());
    std::fs::remove_dir_all(&dir).unwrap();
}
