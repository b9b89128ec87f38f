//! The storage seams: the same file written to memory and to disk is the same
//! bytes; files open by path, by `file://` URL, from memory and through a
//! registered backend; remote schemes answer that they have no backend yet.

use std::path::PathBuf;
use std::sync::Arc;

use rntuple_container::storage::url::{create_sink, register_backend, Backend};
use rntuple_container::{
    open_storage, Anchor, FileWriter, MemorySink, MemoryStorage, ReadAt, RootFile, WriteSink, WriterOptions,
};
use rntuple_format::{Error, Result};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("storage-tests");
    std::fs::create_dir_all(&d).expect("scratch dir");
    d.join(name)
}

/// Writes two RNTuple anchors, a payload split over several keys, a page
/// packed into one key and a zero blob: every path through the writer.
fn write_file(mut w: FileWriter) -> Anchor {
    let header: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
    let footer: Vec<u8> = (0..50u8).collect();
    let seek_header = w.write_blob(&header).expect("header");
    w.write_single_key_blob(&[b"page", &[1, 2, 3, 4, 5, 6, 7, 8]], 40).expect("page");
    w.write_zero_blob(64).expect("zeros");
    let seek_footer = w.write_blob_parts(&[&footer[..20], &footer[20..]]).expect("footer");
    let anchor = Anchor {
        version_epoch: 1,
        version_major: 0,
        version_minor: 2,
        version_patch: 0,
        seek_header,
        nbytes_header: header.len() as u64,
        len_header: header.len() as u64,
        seek_footer,
        nbytes_footer: footer.len() as u64,
        len_footer: footer.len() as u64,
        max_key_size: w.max_key_size(),
    };
    w.write_anchor("Events", &anchor).expect("anchor");
    w.write_anchor("dir/Other", &anchor).expect("anchor in a directory");
    w.finish().expect("finish");
    anchor
}

fn options() -> WriterOptions {
    // A fixed timestamp makes the bytes reproducible (and the UUIDs derived).
    WriterOptions { max_key_size: 128, ..WriterOptions::default() }.timestamp(1_700_000_000)
}

#[test]
fn memory_and_file_sinks_receive_the_same_bytes() {
    let path = scratch("same.root");
    let anchor = write_file(FileWriter::create(&path, options()).expect("create"));
    let on_disk = std::fs::read(&path).expect("read back");

    let sink = MemorySink::new();
    write_file(FileWriter::with_sink(Box::new(sink.clone()), "same.root", options()).expect("memory writer"));
    let in_memory = sink.bytes();
    assert_eq!(in_memory.len(), on_disk.len());
    assert!(in_memory == on_disk, "the memory sink's bytes differ from the file's");
    assert_eq!(&in_memory[..4], b"root");

    // The memory file reads back like the local one.
    let file = RootFile::from_storage(Arc::new(sink.to_storage())).expect("open from memory");
    assert_eq!(file.rntuple_names().expect("names"), ["Events", "dir/Other"]);
    assert_eq!(file.anchor("Events").expect("anchor"), anchor);
    let header = file.read_payload(anchor.seek_header, anchor.nbytes_header, anchor.max_key_size).expect("payload");
    assert_eq!(header, (0..300u32).map(|i| (i * 7) as u8).collect::<Vec<_>>());
}

#[test]
fn a_sink_must_start_empty_and_an_unfinished_memory_file_is_refused() {
    let mut sink = MemorySink::new();
    sink.append(b"junk").expect("append");
    match FileWriter::with_sink(Box::new(sink), "x.root", options()) {
        Err(Error::InvalidArgument { message }) => assert!(message.contains("already holds 4 bytes"), "{message}"),
        other => panic!("{other:?}"),
    }
    let sink = MemorySink::new();
    let mut w = FileWriter::with_sink(Box::new(sink.clone()), "x.root", options()).expect("writer");
    w.write_blob(b"payload").expect("blob");
    drop(w);
    let err = RootFile::from_storage(Arc::new(sink.to_storage())).expect_err("unfinished");
    assert!(err.to_string().contains("not completed"), "{err}");
}

#[test]
fn memory_sink_rewrites_only_what_was_written() {
    let mut sink = MemorySink::new();
    sink.append(b"abcdef").expect("append");
    sink.write_at(2, b"XY").expect("rewrite");
    sink.append_zeros(2).expect("zeros");
    assert_eq!(sink.bytes(), b"abXYef\0\0");
    assert_eq!(sink.write_at(7, b"12").expect_err("past the end").kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(sink.len(), 8);
}

#[test]
fn paths_and_file_urls_open_the_same_file() {
    let path = scratch("url target with space.root");
    write_file(FileWriter::create(&path, options()).expect("create"));
    let by_path = RootFile::open(&path).expect("by path");
    let url = format!("file://{}", path.display().to_string().replace(' ', "%20"));
    let by_url = RootFile::open(&url).expect("by file:// URL");
    assert_eq!(by_url.size(), by_path.size());
    assert_eq!(by_url.anchor("Events").expect("anchor"), by_path.anchor("Events").expect("anchor"));
    // Writing to a file:// URL writes the local file, named as by its path.
    let bytes = std::fs::read(&path).expect("read");
    std::fs::remove_file(&path).expect("remove");
    write_file(FileWriter::create(&url, options()).expect("create by URL"));
    assert!(std::fs::read(&path).expect("read") == bytes, "writing by URL gave other bytes");
    // A missing file keeps NotFound through the URL.
    match RootFile::open("file:///nonexistent/missing.root") {
        Err(Error::Io { source, .. }) => assert_eq!(source.kind(), std::io::ErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
}

#[test]
fn remote_backends_write_and_name_the_url_when_they_cannot() {
    // Writing goes to the store (tests/python/test_write_*.py against real
    // servers); a server that is not there fails the write with its URL: at
    // create for XRootD, at finish for WebDAV (which spools locally first).
    let url = "root://127.0.0.1:1//nowhere/f.root";
    let err = FileWriter::create(url, options()).expect_err(url);
    assert!(matches!(err, Error::Io { .. }) && err.to_string().contains(url), "{err}");
    let url = "http://127.0.0.1:1/nowhere/f.root";
    let writer = FileWriter::create(url, options()).expect("a WebDAV file spools locally");
    let err = writer.finish().expect_err(url);
    assert!(matches!(err, Error::Io { .. }) && err.to_string().contains(url), "{err}");
}

/// A backend serving one in-memory file under any `memtest://` URL.
#[derive(Debug)]
struct InMemory(MemoryStorage);

impl Backend for InMemory {
    fn open(&self, url: &str) -> Result<Arc<dyn ReadAt>> {
        assert!(url.starts_with("memtest://"), "{url}");
        Ok(Arc::new(self.0.clone()))
    }
}

#[test]
fn a_registered_backend_serves_its_scheme() {
    let sink = MemorySink::new();
    write_file(FileWriter::with_sink(Box::new(sink.clone()), "m.root", options()).expect("writer"));
    assert!(open_storage("memtest://anything/m.root").is_err());
    register_backend("MemTest", Arc::new(InMemory(sink.to_storage())));
    let file = RootFile::open("memtest://anything/m.root").expect("through the registered backend");
    assert_eq!(file.rntuple_names().expect("names"), ["Events", "dir/Other"]);
    // It reads only; writing through it is refused clearly.
    assert!(matches!(create_sink("memtest://anything/new.root"), Err(Error::Unsupported { .. })));
}
