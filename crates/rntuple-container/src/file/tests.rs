//! Synthetic files: the large (64-bit) forms at offsets beyond 4 GiB on a
//! sparse in-memory storage, deep nesting and shared directories.

use super::*;
use crate::write::records::{file_header_bytes, put_directory};

/// A directory record as the writer serializes it (zero UUID).
fn write_directory(d: &DirectoryRecord) -> Vec<u8> {
    let mut out = Vec::new();
    put_directory(&mut out, d, &[0; 16]);
    out
}

/// The file header as the writer serializes it (zero UUID), padded to `begin`.
fn write_header(h: &FileHeader) -> Vec<u8> {
    file_header_bytes(h, &[0; 16])
}
use crate::key::tests::{header_len, write as write_key};
use crate::storage::MemoryStorage;

const GB: u64 = 1 << 30;

/// A storage of `size` bytes that are zero except for a few written regions.
#[derive(Debug, Default)]
struct Sparse {
    size: u64,
    regions: Vec<(u64, Vec<u8>)>,
}

impl ReadAt for Sparse {
    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.size, "read")?;
        buf.fill(0);
        let end = offset + buf.len() as u64;
        for (start, data) in &self.regions {
            let (r0, r1) = (*start, start + data.len() as u64);
            let (a, b) = (offset.max(r0), end.min(r1));
            if a < b {
                buf[(a - offset) as usize..(b - offset) as usize]
                    .copy_from_slice(&data[(a - r0) as usize..(b - r0) as usize]);
            }
        }
        Ok(())
    }
}

/// Writes ROOT records into a sparse or dense image.
#[derive(Debug)]
struct Builder {
    key_version: u16,
    dir_version: u16,
    store: Sparse,
}

impl Builder {
    fn new(large: bool, size: u64) -> Self {
        let (key_version, dir_version) = if large { (1004, 1005) } else { (4, 5) };
        Self { key_version, dir_version, store: Sparse { size, regions: Vec::new() } }
    }

    fn put(&mut self, at: u64, bytes: Vec<u8>) {
        self.store.regions.push((at, bytes));
    }

    fn key(&self, class: &str, name: &str, cycle: i16, seek_key: u64, payload_len: u32) -> KeyInfo {
        let key_len = header_len(self.key_version, class, name, "");
        KeyInfo {
            path: name.into(),
            name: name.into(),
            title: String::new(),
            class_name: class.into(),
            cycle,
            seek_key,
            nbytes: u32::from(key_len) + payload_len,
            obj_len: payload_len,
            key_len,
            datime: 0,
            version: self.key_version,
            seek_pdir: 100,
        }
    }

    /// Writes a key and its payload at the key's offset.
    fn object(&mut self, key: &KeyInfo, payload: Vec<u8>) {
        let mut bytes = write_key(key);
        bytes.extend_from_slice(&payload);
        self.put(key.seek_key, bytes);
    }

    /// Writes a key list at `at`; returns its size.
    fn key_list(&mut self, at: u64, keys: &[KeyInfo]) -> u32 {
        let body: Vec<u8> = keys.iter().flat_map(write_key).collect();
        let mut list_key = self.key("", "file.root", 1, at, 4 + body.len() as u32);
        list_key.obj_len = list_key.nbytes - u32::from(list_key.key_len);
        let mut bytes = write_key(&list_key);
        bytes.extend_from_slice(&(keys.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&body);
        let n = bytes.len() as u32;
        self.put(at, bytes);
        n
    }

    fn directory(&self, seek_dir: u64, seek_keys: u64, nbytes_keys: u32) -> DirectoryRecord {
        DirectoryRecord {
            version: self.dir_version,
            datime_c: 0,
            datime_m: 0,
            nbytes_keys,
            nbytes_name: 0,
            seek_dir,
            seek_parent: 100,
            seek_keys,
        }
    }

    /// A subdirectory key at `seek_key` whose key list is at `seek_keys`.
    fn subdirectory(&mut self, name: &str, seek_key: u64, seek_keys: u64, nbytes_keys: u32) -> KeyInfo {
        let record = write_directory(&self.directory(seek_key, seek_keys, nbytes_keys));
        let key = self.key("TDirectory", name, 1, seek_key, record.len() as u32);
        self.object(&key, record);
        key
    }

    /// The file header and top directory record.
    fn top(&mut self, version: u32, seek_keys: u64, nbytes_keys: u32) {
        let header = FileHeader {
            version,
            begin: 100,
            end: self.store.size,
            seek_free: 0,
            nbytes_free: 0,
            nfree: 0,
            nbytes_name: 60,
            units: if version >= 1_000_000 { 8 } else { 4 },
            compress: 0,
            seek_info: 0,
            nbytes_info: 0,
        };
        self.put(0, write_header(&header));
        self.put(160, write_directory(&self.directory(100, seek_keys, nbytes_keys)));
    }

    fn open(self) -> RootFile {
        RootFile::from_storage(Arc::new(self.store)).unwrap()
    }
}

fn anchor(seek_header: u64, nbytes_header: u64, max_key_size: u64) -> Anchor {
    Anchor {
        version_epoch: 1,
        version_major: 0,
        version_minor: 2,
        version_patch: 0,
        seek_header,
        nbytes_header,
        len_header: nbytes_header,
        seek_footer: 0,
        nbytes_footer: 0,
        len_footer: 0,
        max_key_size,
    }
}

/// Writes `payload` as ROOT does when it exceeds `max`: chunks 2.. at
/// `chunk_at[i]`, the first key (data + little-endian offsets) at `first_at`.
fn write_multi_key(b: &mut Builder, payload: &[u8], max: u64, first_at: u64, chunk_at: &[u64]) {
    let layout = ChunkLayout::compute(payload.len() as u64, max, &Location::default()).unwrap().unwrap();
    assert_eq!(layout.n_chunks as usize, chunk_at.len() + 1);
    let mut first = payload[..layout.first_chunk_len as usize].to_vec();
    let mut pos = layout.first_chunk_len as usize;
    for &at in chunk_at {
        let len = (payload.len() - pos).min(max as usize);
        b.put(at, payload[pos..pos + len].to_vec());
        pos += len;
        first.extend_from_slice(&at.to_le_bytes());
    }
    b.put(first_at, first);
}

#[test]
fn large_file_beyond_4_gib() {
    let mut b = Builder::new(true, 7 * GB);
    let payload: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    // 3000 bytes in keys of 1024: three chunks, the first carrying 1008 bytes.
    let chunks = [4 * GB + 12345, 6 * GB + 100_000];
    write_multi_key(&mut b, &payload, 1024, 6 * GB + 500, &chunks);
    // Top: "Events" (RNTuple) and "dir" (directory) containing "Inner" (RNTuple).
    let events = b.key("ROOT::RNTuple", "Events", 1, 5 * GB + 1000, 78);
    b.object(&events, anchor(6 * GB + 500, 3000, 1024).to_bytes());
    let mut inner = b.key("ROOT::RNTuple", "Inner", 2, 4 * GB + 100_000, 78);
    b.object(&inner, anchor(6 * GB + 500, 1000, 1024).to_bytes());
    let inner_list = b.key_list(4 * GB + 200_000, std::slice::from_ref(&inner));
    let dir = b.subdirectory("dir", 4 * GB + 300_000, 4 * GB + 200_000, inner_list);
    let top_list = b.key_list(5 * GB + 2000, &[events.clone(), dir.clone()]);
    b.top(1_063_800, 5 * GB + 2000, top_list);
    let file = b.open();

    assert!(file.header().is_large());
    assert_eq!(file.header().end, 7 * GB);
    assert!(file.top_directory().is_large());
    assert_eq!(file.top_directory().seek_keys, 5 * GB + 2000);
    let keys = file.keys().unwrap();
    let paths: Vec<&str> = keys.iter().map(|k| k.path.as_str()).collect();
    assert_eq!(paths, ["Events", "dir", "dir/Inner"]);
    assert_eq!(keys[0], events);
    inner.path = "dir/Inner".into();
    assert_eq!(keys[2], inner);
    assert_eq!(file.rntuple_names().unwrap(), ["Events", "dir/Inner"]);

    let a = file.anchor("Events").unwrap();
    assert_eq!(a.seek_header, 6 * GB + 500);
    assert_eq!(file.read_payload(a.seek_header, a.nbytes_header, a.max_key_size).unwrap(), payload);
    assert_eq!(file.anchor("dir/Inner;2").unwrap().nbytes_header, 1000);
    assert!(matches!(file.anchor("dir/Inner;1"), Err(Error::NotFound { .. })));
    // Single-key read far out.
    let mut last = payload[2032..].to_vec();
    last.resize(1024, 0);
    assert_eq!(file.read_payload(chunks[1], 1024, 1024).unwrap(), last);
}

#[test]
fn small_forms_in_memory() {
    let mut b = Builder::new(false, 4000);
    let key = b.key("ROOT::RNTuple", "n", 1, 1000, 78);
    b.object(&key, anchor(2000, 100, 1 << 30).to_bytes());
    let n = b.key_list(3000, &[key]);
    b.top(63800, 3000, n);
    let mut image = vec![0u8; 4000];
    for (at, data) in &b.store.regions {
        image[*at as usize..*at as usize + data.len()].copy_from_slice(data);
    }
    let file = RootFile::from_storage(Arc::new(MemoryStorage::new(image))).unwrap();
    assert!(!file.header().is_large() && !file.top_directory().is_large());
    assert_eq!(file.anchor("n").unwrap().seek_header, 2000);
}

#[test]
fn nesting_deeper_than_the_bound_is_an_error() {
    let mut b = Builder::new(false, 1_000_000);
    // Directory i: key at 10000 * i, key list at 10000 * i + 5000 holding dir i+1.
    let depth = MAX_DIRECTORY_DEPTH as u64 + 5;
    let mut next: Option<(KeyInfo, u32)> = None;
    for i in (1..=depth).rev() {
        let list_at = 10_000 * i + 5000;
        let keys: Vec<KeyInfo> = next.iter().map(|(k, _)| k.clone()).collect();
        let n = b.key_list(list_at, &keys);
        let key = b.subdirectory(&format!("d{i}"), 10_000 * i, list_at, n);
        next = Some((key, n));
    }
    let (first, _) = next.unwrap();
    let n = b.key_list(500, &[first]);
    b.top(63800, 500, n);
    let file = b.open();
    let err = file.keys().unwrap_err();
    assert!(err.to_string().contains("deeper than"), "{err}");
    // An explicit path still resolves, each directory read once.
    let path: Vec<String> = (1..=3).map(|i| format!("d{i}")).collect();
    assert!(file.find_key(&path.join("/")).unwrap().is_directory());
}

#[test]
fn shared_key_lists_are_errors() {
    let mut b = Builder::new(false, 100_000);
    let leaf = b.key("TTree", "t", 1, 90_000, 10);
    let n = b.key_list(50_000, &[leaf]);
    let a = b.subdirectory("a", 10_000, 50_000, n);
    let c = b.subdirectory("c", 20_000, 50_000, n);
    let top = b.key_list(30_000, &[a, c]);
    b.top(63800, 30_000, top);
    let file = b.open();
    let err = file.keys().unwrap_err();
    assert!(err.to_string().contains("already listed"), "{err}");
}

#[test]
fn empty_directories_and_files() {
    let mut b = Builder::new(false, 10_000);
    let empty = b.subdirectory("empty", 1000, 0, 0);
    let n = b.key_list(3000, &[empty]);
    b.top(63800, 3000, n);
    let file = b.open();
    assert_eq!(file.keys().unwrap().len(), 1);
    assert!(matches!(file.anchor("empty/x"), Err(Error::NotFound { .. })));

    let mut b = Builder::new(false, 10_000);
    b.top(63800, 0, 0);
    let file = b.open();
    assert!(file.keys().unwrap().is_empty());
    assert!(file.rntuple_names().unwrap().is_empty());
    assert!(file.streamer_info().unwrap().is_none());
}
