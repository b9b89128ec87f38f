//! [`RootFile`]: a ROOT file opened for reading RNTuples.
//!
//! Opening reads the first and the last bytes of the file in one vectored
//! request ([`speculative`]): the file header and the top directory record
//! are at the start, and the key list, the RNTuple anchor and usually the
//! footer at the end. Other reads (key lists, objects, payloads) are
//! answered from those bytes when they hold them, else read on demand (all
//! the bytes not held yet at once when they are few).
//! Every offset and size read from the file is checked against the file
//! size before it is used or allocated.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use rntuple_format::{Error, Location, Result};

use crate::anchor::Anchor;
use crate::blob::ChunkLayout;
use crate::bytes::Cursor;
use crate::compression;
use crate::constants::{CHUNK_OFFSET_LEN, MAX_DIRECTORY_DEPTH, MIN_KEY_HEADER_LEN};
use crate::directory::DirectoryRecord;
use crate::header::FileHeader;
use crate::key::{parse_key, KeyInfo};
use crate::storage::{check_range, open_storage_with, CacheConfig, LocalFile, ReadAt};

pub mod speculative;
use speculative::Speculative;

/// Options for opening a [`RootFile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOptions {
    /// Verify the anchor's xxh3 checksum (default: true).
    pub verify_checksums: bool,
    /// The cache a remote file is read through (default: `None`, the one of
    /// `RNTUPLE_CACHE_DIR` if set; local files are never cached).
    pub cache: Option<CacheConfig>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self { verify_checksums: true, cache: None }
    }
}

impl OpenOptions {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn verify_checksums(mut self, verify: bool) -> Self {
        self.verify_checksums = verify;
        self
    }

    /// These options with remote reads going through the cache `cache`.
    pub fn cache(mut self, cache: Option<CacheConfig>) -> Self {
        self.cache = cache;
        self
    }
}

/// A ROOT file (`TFile` container) on some storage.
#[derive(Debug, Clone)]
pub struct RootFile {
    storage: Arc<dyn ReadAt>,
    size: u64,
    header: FileHeader,
    top: DirectoryRecord,
    options: OpenOptions,
    /// Head and tail of the file, read on open.
    speculative: Arc<Speculative>,
}

impl RootFile {
    /// Opens a local path or a URL with default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, OpenOptions::default())
    }

    /// Opens a local path or a URL: a path or `file://` URL is read locally,
    /// another scheme through its storage backend ([`crate::storage::url`]).
    pub fn open_with(path: impl AsRef<Path>, options: OpenOptions) -> Result<Self> {
        let path = path.as_ref();
        let storage: Arc<dyn ReadAt> = match path.to_str() {
            Some(location) => open_storage_with(location, options.cache.as_ref())?,
            // Not UTF-8: not a URL either.
            None => Arc::new(LocalFile::open(path)?),
        };
        Self::from_storage_with(storage, options)
    }

    /// Opens a file on any storage with default options.
    pub fn from_storage(storage: Arc<dyn ReadAt>) -> Result<Self> {
        Self::from_storage_with(storage, OpenOptions::default())
    }

    /// Opens a file on any storage: reads its head and tail in one request
    /// ([`speculative`]), then parses and checks the file header and the top
    /// directory record.
    pub fn from_storage_with(storage: Arc<dyn ReadAt>, options: OpenOptions) -> Result<Self> {
        let size = storage.size()?;
        let speculative = Speculative::read(storage.as_ref(), size)?;
        let head = speculative.get(0, size.min(FileHeader::LARGE_LEN as u64)).unwrap_or_default();
        let header = FileHeader::parse(&head)?;
        if header.end > size {
            return Err(Error::Truncated {
                needed: header.end,
                available: size,
                location: Location::new("file (fEND in the file header is past the end of the data)", Some(0)),
            });
        }
        let top_offset = header.top_directory_offset();
        if top_offset >= header.end {
            return Err(Error::out_of_spec(
                format!("top directory record at fBEGIN + fNbytesName = {top_offset} is past fEND {}", header.end),
                Location::new("ROOT file header", Some(0)),
            ));
        }
        let len = (size - top_offset).min(DirectoryRecord::LARGE_LEN as u64) as usize;
        let buf = match speculative.get(top_offset, len as u64) {
            Some(held) => held,
            None => {
                let mut buf = vec![0u8; len];
                storage.read_exact_at(top_offset, &mut buf)?;
                buf
            }
        };
        let top = DirectoryRecord::parse(&buf, top_offset).map_err(|e| e.within("top directory"))?;
        Ok(Self { storage, size, header, top, options, speculative })
    }

    /// The storage the file is read from.
    pub fn storage(&self) -> &Arc<dyn ReadAt> {
        &self.storage
    }

    /// The file header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The top directory record.
    pub fn top_directory(&self) -> &DirectoryRecord {
        &self.top
    }

    /// Size of the storage in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The options the file was opened with.
    pub fn options(&self) -> &OpenOptions {
        &self.options
    }

    /// Every key of the top directory and, recursively, of its subdirectories,
    /// all cycles, in key-list order; a subdirectory's keys follow its own key.
    /// Paths are `/`-separated from the top (`"dir/sub/name"`).
    pub fn keys(&self) -> Result<Vec<KeyInfo>> {
        let mut walk = Walk { visited: HashSet::from([self.top.seek_keys]), budget: self.size, out: Vec::new() };
        self.walk_directory(&self.top, "", 0, &mut walk)?;
        Ok(walk.out)
    }

    /// Paths of the RNTuples in the file (keys of class `ROOT::RNTuple`), one per
    /// path (its highest cycle), in key-list order.
    pub fn rntuple_names(&self) -> Result<Vec<String>> {
        let keys = self.keys()?;
        let mut seen = HashSet::new();
        Ok(keys.into_iter().filter(|k| k.is_rntuple() && seen.insert(k.path.clone())).map(|k| k.path).collect())
    }

    /// The key at `path` (`"name"`, `"dir/sub/name"`, optionally `";cycle"`;
    /// highest cycle when none is given). Only the directories on the path are
    /// read.
    pub fn find_key(&self, path: &str) -> Result<KeyInfo> {
        let trimmed = path.strip_prefix('/').unwrap_or(path);
        let (trimmed, cycle) = match trimmed.rsplit_once(';') {
            Some((p, c)) if !c.contains('/') => {
                let cycle =
                    c.parse::<i16>().map_err(|_| Error::invalid(format!("bad cycle '{c}' in object path '{path}'")))?;
                (p, Some(cycle))
            }
            _ => (trimmed, None),
        };
        let mut parts: Vec<&str> = trimmed.split('/').collect();
        let name = parts.pop().unwrap_or_default();
        if name.is_empty() || parts.iter().any(|p| p.is_empty()) {
            return Err(Error::invalid(format!("bad object path '{path}'")));
        }
        let mut dir = self.top.clone();
        let mut dir_path = String::new();
        let mut visited = HashSet::from([self.top.seek_keys]);
        for part in parts {
            let keys = self.read_key_list(&dir, &dir_path)?;
            let sub =
                highest_cycle(keys.into_iter().filter(|k| k.name == part && k.is_directory())).ok_or_else(|| {
                    Error::NotFound { what: format!("directory '{part}' in '{dir_path}' (looking for '{path}')") }
                })?;
            dir = self.read_directory(&sub)?;
            if !visited.insert(dir.seek_keys) {
                return Err(cycle_error(&sub, dir.seek_keys));
            }
            dir_path = sub.path;
        }
        let keys = self.read_key_list(&dir, &dir_path)?;
        let candidates = keys.into_iter().filter(|k| k.name == name && cycle.is_none_or(|c| k.cycle == c));
        highest_cycle(candidates).ok_or_else(|| Error::NotFound { what: format!("object '{path}'") })
    }

    /// The anchor of the RNTuple at `path` (see [`RootFile::find_key`]).
    /// [`Error::NotFound`] if there is no such key, [`Error::InvalidArgument`] if
    /// the key is not of class `ROOT::RNTuple`.
    pub fn anchor(&self, path: &str) -> Result<Anchor> {
        let key = self.find_key(path)?;
        self.anchor_of(&key)
    }

    /// The anchor stored in `key`.
    pub fn anchor_of(&self, key: &KeyInfo) -> Result<Anchor> {
        if !key.is_rntuple() {
            return Err(Error::invalid(format!("'{}' is a {}, not a ROOT::RNTuple", key.path, key.class_name)));
        }
        let bytes = self.read_object(key)?;
        let location = Location::new(format!("RNTuple anchor '{}'", key.path), Some(key.payload_offset()));
        Anchor::parse(&bytes, self.options.verify_checksums, &location)
    }

    /// The payload of `key`, decompressed when its object length exceeds its
    /// size on disk.
    pub fn read_object(&self, key: &KeyInfo) -> Result<Vec<u8>> {
        let offset = key.payload_offset();
        let stored = u64::from(key.stored_len());
        let what = format!("payload of key '{}'", key.path);
        if key.is_rntuple() && self.speculative.get(offset, stored).is_none() {
            // Footer and page lists usually lie just before the anchor.
            let from = offset.saturating_sub(speculative::SPECULATIVE_BEHIND);
            self.read_kept(from, (offset - from).saturating_add(stored), &what)?;
        }
        let raw = self.read(offset, stored, &what)?;
        if key.is_compressed() {
            compression::decompress(&raw, u64::from(key.obj_len), &Location::new(what, Some(offset)))
        } else {
            Ok(raw)
        }
    }

    /// Parses the key header stored at `seek_key` (e.g. an `RBlob` key or the
    /// streamer-info key at `header().seek_info`).
    pub fn key_at(&self, seek_key: u64) -> Result<KeyInfo> {
        // fKeyLen (bytes 14..16) bounds the header; read at least the fixed part
        // so that a lying fKeyLen still fails with a precise error.
        let fixed = self.read(seek_key, 16.min(self.size.saturating_sub(seek_key)), "key header")?;
        let key_len = fixed.get(14..16).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        let len = u64::from(key_len).max(64).min(self.size.saturating_sub(seek_key));
        let buf = self.read(seek_key, len, "key header")?;
        let (key, _) = KeyInfo::parse(&buf, seek_key)?;
        self.check_key_extent(&key)?;
        Ok(key)
    }

    /// The streamed `TList` of streamer infos (decompressed payload of the key
    /// at `fSeekInfo`), or `None` if the header has none.
    pub fn streamer_info(&self) -> Result<Option<Vec<u8>>> {
        if self.header.seek_info == 0 {
            return Ok(None);
        }
        let key = self.key_at(self.header.seek_info)?;
        self.read_object(&key).map(Some)
    }

    /// Reads an RNTuple payload (envelope or page) of `size` bytes on disk at
    /// `offset`, reassembling it when `size > max_key_size` (see [`crate::blob`]
    /// for the multi-key layout).
    ///
    /// `size` is what is stored: for a page with a checksum, the locator's size
    /// plus the 8 checksum bytes (the split is computed on that total).
    pub fn read_payload(&self, offset: u64, size: u64, max_key_size: u64) -> Result<Vec<u8>> {
        match self.payload_layout(offset, size, max_key_size)? {
            None => self.read(offset, size, "RNTuple payload"),
            Some(layout) => self.read_multi_key(offset, size, max_key_size, layout),
        }
    }

    /// Reads several payloads (as [`RootFile::read_payload`]), answered in order.
    /// All single-key payloads not held from the speculative read on open go
    /// to the storage as one vectored request ([`ReadAt::read_ranges`]),
    /// which a backend may coalesce (none when all are held).
    pub fn read_payloads(&self, payloads: &[(u64, u64)], max_key_size: u64) -> Result<Vec<Vec<u8>>> {
        let mut out = vec![Vec::new(); payloads.len()];
        let mut singles = Vec::new();
        let mut single_index = Vec::new();
        for (i, &(offset, size)) in payloads.iter().enumerate() {
            match self.payload_layout(offset, size, max_key_size)? {
                None => {
                    check_range(offset, size, self.size, "RNTuple payload")?;
                    match self.speculative.get(offset, size) {
                        Some(held) => out[i] = held,
                        None => {
                            singles.push((offset, size as usize));
                            single_index.push(i);
                        }
                    }
                }
                Some(layout) => out[i] = self.read_multi_key(offset, size, max_key_size, layout)?,
            }
        }
        if !singles.is_empty() {
            let bufs = match self.read_rest(&singles)? {
                Some(held) => held,
                None => self.storage.read_ranges(&singles)?,
            };
            for (i, buf) in single_index.into_iter().zip(bufs) {
                out[i] = buf;
            }
        }
        Ok(out)
    }

    /// Whether an RNTuple payload of `size` bytes on disk at `offset` is split
    /// over several keys (see [`crate::blob`]). A single-key payload is the
    /// plain byte range `offset..offset + size`, which a reader may fetch
    /// together with its neighbours in one request; a split one must be read
    /// with [`RootFile::read_payload`]. Errors like [`RootFile::read_payload`]
    /// for sizes the file cannot hold.
    pub fn payload_is_split(&self, offset: u64, size: u64, max_key_size: u64) -> Result<bool> {
        Ok(self.payload_layout(offset, size, max_key_size)?.is_some())
    }

    // --- internals ---------------------------------------------------------

    /// Checks a payload's size and returns its multi-key layout, if split.
    fn payload_layout(&self, offset: u64, size: u64, max_key_size: u64) -> Result<Option<ChunkLayout>> {
        let location = Location::new(format!("RNTuple payload of {size} bytes"), Some(offset));
        // A payload lives in the file, so it cannot be larger than the file.
        if size > self.size {
            return Err(Error::WouldOverAllocate { requested: size, limit: self.size, location });
        }
        ChunkLayout::compute(size, max_key_size, &location)
    }

    fn read_multi_key(&self, offset: u64, size: u64, max_key_size: u64, layout: ChunkLayout) -> Result<Vec<u8>> {
        let location = Location::new(format!("multi-key RNTuple payload of {size} bytes"), Some(offset));
        check_range(offset, max_key_size, self.size, "first key of a multi-key RNTuple payload")?;
        let mut out = zeroed_for(size, &location)?;
        // The first key: payload bytes, then the chunk offsets. It is read whole
        // into the front of `out`; the offsets are then copied out and overwritten
        // by chunk 2.
        let first = max_key_size as usize;
        self.storage.read_exact_at(offset, &mut out[..first])?;
        let mut offsets = Cursor::new(&out[layout.first_chunk_len as usize..first], 0, "chunk offsets");
        let chunk_offsets: Vec<u64> =
            (1..layout.n_chunks).map(|_| offsets.take(CHUNK_OFFSET_LEN as usize).map(le_u64)).collect::<Result<_>>()?;
        let mut pos = layout.first_chunk_len as usize;
        for (i, &chunk_offset) in chunk_offsets.iter().enumerate() {
            let len = (size as usize - pos).min(first);
            if len == 0 {
                // Cannot happen with ROOT's layout; guards against a future change of it.
                return Err(Error::out_of_spec(
                    format!("more chunk offsets ({}) than chunks", chunk_offsets.len()),
                    location,
                ));
            }
            let fits = chunk_offset.checked_add(len as u64).is_some_and(|end| end <= self.size);
            if !fits {
                return Err(Error::out_of_spec(
                    format!(
                        "chunk {} of {} (offset {chunk_offset}, {len} bytes) is past the end of the file ({} bytes)",
                        i + 2,
                        layout.n_chunks,
                        self.size
                    ),
                    location,
                ));
            }
            self.storage.read_exact_at(chunk_offset, &mut out[pos..pos + len])?;
            pos += len;
        }
        debug_assert_eq!(pos, out.len());
        Ok(out)
    }

    /// Reads `len` bytes at `offset` after checking them against the file size.
    fn read(&self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
        check_range(offset, len, self.size, what)?;
        if let Some(held) = self.speculative.get(offset, len) {
            return Ok(held);
        }
        if let Some(mut held) = self.read_rest(&[(offset, len as usize)])? {
            return Ok(held.pop().unwrap_or_default());
        }
        let mut buf = zeroed_for(len, &Location::new(what, Some(offset)))?;
        self.storage.read_exact_at(offset, &mut buf)?;
        Ok(buf)
    }

    /// For reads the held bytes cannot answer: when the bytes of the file
    /// not held yet add up to at most [`speculative::SPECULATIVE_REST`],
    /// reads all of them in one vectored request, keeps them, and answers
    /// `ranges` from them; `None` when the rest is larger (or, which cannot
    /// happen, still does not hold them), for the caller to read `ranges`.
    fn read_rest(&self, ranges: &[(u64, usize)]) -> Result<Option<Vec<Vec<u8>>>> {
        let missing = self.speculative.missing(self.size);
        let rest = missing.iter().map(|g| g.1).fold(0u64, u64::saturating_add);
        if missing.is_empty() || rest > speculative::SPECULATIVE_REST {
            return Ok(None);
        }
        let wide: Vec<(u64, usize)> = missing.iter().map(|&(offset, len)| (offset, len as usize)).collect();
        for (&(offset, _), buf) in wide.iter().zip(self.storage.read_ranges(&wide)?) {
            self.speculative.keep(offset, &buf);
        }
        Ok(ranges.iter().map(|&(offset, len)| self.speculative.get(offset, len as u64)).collect())
    }

    /// Reads as [`RootFile::read`] and keeps the bytes for later reads.
    fn read_kept(&self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
        if let Some(held) = self.speculative.get(offset, len) {
            return Ok(held);
        }
        let buf = self.read(offset, len, what)?;
        self.speculative.keep(offset, &buf);
        Ok(buf)
    }

    fn check_key_extent(&self, key: &KeyInfo) -> Result<()> {
        let fits = key.seek_key.checked_add(u64::from(key.nbytes)).is_some_and(|end| end <= self.size);
        if !fits {
            return Err(Error::out_of_spec(
                format!(
                    "key '{}' ({} bytes at offset {}) extends past the end of the file ({} bytes)",
                    key.path, key.nbytes, key.seek_key, self.size
                ),
                Location::new(format!("key '{}'", key.path), Some(key.seek_key)),
            ));
        }
        Ok(())
    }

    /// The keys listed in a directory's key list, with paths under `dir_path`.
    fn read_key_list(&self, dir: &DirectoryRecord, dir_path: &str) -> Result<Vec<KeyInfo>> {
        if dir.seek_keys == 0 {
            return Ok(Vec::new());
        }
        let what = if dir_path.is_empty() {
            "key list of the top directory".to_string()
        } else {
            format!("key list of directory '{dir_path}'")
        };
        // Listing names and then finding one key reads the list once.
        let buf = self.read_kept(dir.seek_keys, u64::from(dir.nbytes_keys), &what)?;
        let mut c = Cursor::new(&buf, dir.seek_keys, &what);
        // The list starts with a key header describing the list itself.
        parse_key(&mut c, dir_path)?;
        let count_at = c.offset();
        let count = c.i32()?;
        let fits = usize::try_from(count).ok().and_then(|n| n.checked_mul(MIN_KEY_HEADER_LEN));
        if fits.is_none_or(|need| need > c.remaining()) {
            return Err(Error::out_of_spec(
                format!("key count {count} does not fit in the {} bytes left in the key list", c.remaining()),
                Location::new(what, Some(count_at)),
            ));
        }
        let mut keys = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let key = parse_key(&mut c, dir_path)?;
            self.check_key_extent(&key)?;
            keys.push(key);
        }
        Ok(keys)
    }

    /// The directory record stored in a subdirectory key.
    fn read_directory(&self, key: &KeyInfo) -> Result<DirectoryRecord> {
        let what = format!("directory record of '{}'", key.path);
        let bytes = if key.is_compressed() {
            self.read_object(key)?
        } else {
            // Only the fixed part is needed.
            let len = u64::from(key.stored_len()).min(DirectoryRecord::LARGE_LEN as u64);
            self.read(key.payload_offset(), len, &what)?
        };
        DirectoryRecord::parse(&bytes, key.payload_offset()).map_err(|e| e.within(&what))
    }

    fn walk_directory(&self, dir: &DirectoryRecord, dir_path: &str, depth: usize, walk: &mut Walk) -> Result<()> {
        if dir.seek_keys == 0 {
            return Ok(());
        }
        // Key lists of distinct directories never overlap, so together they fit
        // in the file; more means lists are shared or pointing at each other.
        walk.budget = walk.budget.checked_sub(u64::from(dir.nbytes_keys)).ok_or_else(|| {
            Error::out_of_spec(
                "key lists add up to more than the file size (directories share or overlap their key lists)",
                Location::new(format!("key list of '{dir_path}'"), Some(dir.seek_keys)),
            )
        })?;
        for key in self.read_key_list(dir, dir_path)? {
            let sub_key = key.is_directory().then(|| key.clone());
            walk.out.push(key);
            let Some(key) = sub_key else { continue };
            if depth + 1 > MAX_DIRECTORY_DEPTH {
                return Err(Error::out_of_spec(
                    format!("directories nested deeper than {MAX_DIRECTORY_DEPTH} levels"),
                    Location::new(format!("directory '{}'", key.path), Some(key.seek_key)),
                ));
            }
            let sub = self.read_directory(&key)?;
            if sub.seek_keys != 0 && !walk.visited.insert(sub.seek_keys) {
                return Err(cycle_error(&key, sub.seek_keys));
            }
            self.walk_directory(&sub, &key.path, depth + 1, walk)?;
        }
        Ok(())
    }
}

/// State of a recursive directory walk.
struct Walk {
    /// Key-list offsets already listed.
    visited: HashSet<u64>,
    /// Key-list bytes still allowed.
    budget: u64,
    out: Vec<KeyInfo>,
}

fn highest_cycle(keys: impl Iterator<Item = KeyInfo>) -> Option<KeyInfo> {
    keys.reduce(|best, k| if k.cycle > best.cycle { k } else { best })
}

fn cycle_error(key: &KeyInfo, seek_keys: u64) -> Error {
    Error::out_of_spec(
        format!(
            "directory '{}' points to the key list at offset {seek_keys}, which was already listed \
             (a directory cycle or a shared directory)",
            key.path
        ),
        Location::new(format!("directory '{}'", key.path), Some(key.payload_offset())),
    )
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(bytes);
    u64::from_le_bytes(a)
}

/// A buffer of `len` bytes for the read of `location`, allocated fallibly (the
/// size comes from the file or its server: a failure is
/// [`Error::OutOfMemory`], not an abort). Zeroed memory from the allocator,
/// which the read then overwrites.
fn zeroed_for(len: u64, location: &Location) -> Result<Vec<u8>> {
    let n = usize::try_from(len).map_err(|_| Error::OutOfMemory { requested: len, location: location.clone() })?;
    rntuple_format::alloc::try_zeroed(n, || location.to_string())
}

#[cfg(test)]
mod tests;
