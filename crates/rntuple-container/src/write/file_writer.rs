//! [`FileWriter`]: writes RNTuple payloads and anchors into a new ROOT file,
//! through a [`WriteSink`] (a local file, memory, later remote or crash-safe
//! sinks). The sink only stores bytes; the layout is decided here, so every
//! sink receives the same bytes.

use std::path::{Path, PathBuf};

use rntuple_format::{Error, Location, Result};

use super::close::{close, put_tnamed, Identity, BEGIN};
use super::crash::{crash_point, CrashPoint};
use super::journal::{JournalWriter, PLACEHOLDER_FILE_ID_AT};
use super::options::WriterOptions;
use super::payload::{Parts, PayloadSource};
use super::records::{key_len, put_directory, tstring_len, Key, DIRECTORY_RECORD_LEN};
use super::stamp::{datime_from_unix, derive_uuid, now_unix, random_seed, source_date_epoch};
use super::tree::Tree;
use crate::anchor::Anchor;
use crate::blob::ChunkLayout;
use crate::constants::{BLOB_CLASS_NAME, INCOMPLETE_FILE_MAGIC, RNTUPLE_CLASS_NAME};
use crate::directory::DirectoryRecord;
use crate::storage::url::{create_sink, StorageUrl};
use crate::storage::{LocalSink, WriteSink};

/// Largest piece of a [`PayloadSource`] appended at once.
pub const COPY_PIECE: usize = 1 << 20;

/// Longest file name stored in the `TFile` record; longer names are cut (ROOT
/// refuses files whose `fNbytesName` exceeds 1000 bytes, `TFile::Init`).
const MAX_FILE_NAME_LEN: usize = 200;

/// Writes a complete ROOT file (`TFile`) holding RNTuples: their pages and
/// envelopes as `RBlob` keys, their anchors as `ROOT::RNTuple` keys in the top
/// directory or in subdirectories. See the [module documentation](super) for
/// the layout.
///
/// The file is valid only after [`FileWriter::finish`]: until then, and for
/// ever if the writer is dropped or the process dies, it starts with a
/// placeholder ([`INCOMPLETE_FILE_MAGIC`]) instead of a ROOT file header, so
/// that ROOT, uproot and [`crate::RootFile`] refuse it.
#[derive(Debug)]
pub struct FileWriter {
    /// The path (or name) of the file, for the `TFile` record and messages.
    path: PathBuf,
    out: Box<dyn WriteSink>,
    /// Offset of the next byte to write.
    pos: u64,
    options: WriterOptions,
    /// Name of the `TFile` record: the file name without directories.
    file_name: String,
    datime: u32,
    uuid_seed: u64,
    /// `fNbytesName`: `TFile` key header plus its `TNamed`.
    nbytes_name: u32,
    /// Offset of the top directory record in the `TFile` record.
    top_record_at: u64,
    /// First byte after the `TFile` record: where payloads start.
    data_start: u64,
    tree: Tree,
    state: State,
    /// Random id in the placeholder header, repeated in the journal.
    file_id: u64,
    /// The commit journal of a local file ([`super::journal`]).
    journal: Option<JournalWriter>,
    /// The directory of a local file.
    local_dir: Option<PathBuf>,
    /// Streamer infos of the classes of streamer fields, for the file's
    /// streamer-info record ([`FileWriter::add_class_streamer_info`]).
    class_infos: Vec<Vec<u8>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Open,
    /// An I/O error left the file in an unknown state; every later call fails.
    Failed(String),
    Finished,
}

impl FileWriter {
    /// Creates (or truncates) the file at `path` (a local path or a URL, see
    /// [`crate::storage::url`]) and writes its placeholder header and `TFile`
    /// record.
    pub fn create(path: impl AsRef<Path>, options: WriterOptions) -> Result<Self> {
        options.validate()?;
        let path = path.as_ref();
        match path.to_str().map(StorageUrl::parse).transpose()? {
            // A file:// URL names its local (decoded) path.
            Some(StorageUrl::Local(local)) => Self::create_local(&local, options),
            Some(StorageUrl::Remote { .. }) => Self::with_sink(create_sink(&path.to_string_lossy())?, path, options),
            None => Self::create_local(path, options),
        }
    }

    fn create_local(path: &Path, options: WriterOptions) -> Result<Self> {
        let journal = options.journal;
        let mut writer = Self::with_sink(Box::new(LocalSink::create(path)?), path, options)?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        writer.local_dir = Some(dir.to_path_buf());
        if journal {
            let o = &writer.options;
            writer.journal = Some(JournalWriter::new(path, writer.file_id, o.max_key_size, o.compression, o.sync)?);
        }
        Ok(writer)
    }

    /// Starts a file in an empty `sink`. `name` stands for the file in
    /// messages, and its last component is the name ROOT records in the
    /// `TFile` key (so the same name gives the same bytes in any sink).
    pub fn with_sink(mut sink: Box<dyn WriteSink>, name: impl AsRef<Path>, options: WriterOptions) -> Result<Self> {
        options.validate()?;
        let path = name.as_ref().to_path_buf();
        if !sink.is_empty() {
            return Err(Error::invalid(format!(
                "the sink of {} already holds {} bytes; a file starts empty",
                path.display(),
                sink.len()
            )));
        }
        // The placeholder goes out at once: whatever happens next, the file
        // cannot be taken for a complete ROOT file.
        let file_id = random_seed();
        sink.append(&placeholder(file_id))
            .and_then(|()| sink.flush())
            .map_err(|e| Error::io(format!("{} (writing)", sink.describe()), e))?;

        let (timestamp, reproducible) = match options.timestamp.or_else(source_date_epoch) {
            Some(t) => (t, true),
            None => (now_unix(), false),
        };
        let file_name = file_name_of(&path);
        let tnamed_len = tstring_len(&file_name) + tstring_len("");
        let tfile_key = Key {
            class_name: "TFile".into(),
            name: file_name.clone(),
            title: String::new(),
            cycle: 1,
            seek_key: BEGIN,
            seek_pdir: 0,
            stored_len: (tnamed_len + DIRECTORY_RECORD_LEN) as u64,
            obj_len: (tnamed_len + DIRECTORY_RECORD_LEN) as u64,
        };
        let nbytes_name = (tfile_key.key_len() + tnamed_len) as u32;
        let mut writer = Self {
            out: sink,
            pos: BEGIN,
            options,
            datime: datime_from_unix(timestamp),
            uuid_seed: if reproducible { 0 } else { random_seed() },
            nbytes_name,
            top_record_at: BEGIN + u64::from(nbytes_name),
            data_start: BEGIN + tfile_key.nbytes(),
            tree: Tree::default(),
            state: State::Open,
            file_id,
            journal: None,
            local_dir: None,
            class_infos: Vec::new(),
            file_name,
            path,
        };
        // The TFile record, with a provisional top directory record (no keys
        // yet) that finish() overwrites.
        let mut record = Vec::with_capacity(tfile_key.nbytes() as usize);
        tfile_key.encode(writer.datime, &mut record)?;
        put_tnamed(&mut record, &writer.file_name, "");
        let provisional = DirectoryRecord {
            version: super::records::DIRECTORY_CLASS_VERSION,
            datime_c: writer.datime,
            datime_m: writer.datime,
            nbytes_keys: 0,
            nbytes_name,
            seek_dir: BEGIN,
            seek_parent: 0,
            seek_keys: 0,
        };
        put_directory(&mut record, &provisional, &writer.uuid(""));
        writer.write(&record)?;
        Ok(writer)
    }

    /// Appends an RNTuple payload (page, envelope) as one `RBlob` key, or as
    /// several when it is larger than [`FileWriter::max_key_size`] (the layout
    /// of [`crate::blob`]), and returns the offset of its first byte: what goes
    /// into a locator or the anchor. The bytes are written as given.
    pub fn write_blob(&mut self, payload: &[u8]) -> Result<u64> {
        self.write_blob_parts(&[payload])
    }

    /// [`FileWriter::write_blob`] for a payload given in pieces, written one
    /// after the other without copying them together (e.g. a page and its
    /// 8-byte checksum). The multi-key split applies to the whole.
    pub fn write_blob_parts(&mut self, parts: &[&[u8]]) -> Result<u64> {
        let total: u64 = parts.iter().map(|p| p.len() as u64).sum();
        self.write_blob_parts_with_len(parts, total)
    }

    /// [`FileWriter::write_blob_parts`], recording `uncompressed_len` as the
    /// key's object length (`fObjLen`) so that `TFile::Map` shows the payload's
    /// compression factor, as ROOT does. The bytes are still written as given;
    /// chunks of a multi-key payload record their own size.
    pub fn write_blob_parts_with_len(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64> {
        self.write_blob_from(&mut Parts::new(parts), uncompressed_len)
    }

    /// [`FileWriter::write_blob_parts_with_len`] for a payload read from
    /// `src` in pieces (at most [`COPY_PIECE`] bytes each), never held
    /// whole: the same keys, split over keys alike. A failure to read `src`
    /// fails the writer as a failure to write does (a key may be half
    /// written).
    pub fn write_blob_from(&mut self, src: &mut dyn PayloadSource, uncompressed_len: u64) -> Result<u64> {
        self.check_open()?;
        let total = src.len();
        let max = self.options.max_key_size;
        let location = Location::new(format!("RNTuple payload of {total} bytes"), Some(self.pos));
        let Some(layout) = ChunkLayout::compute(total, max, &location)
            .map_err(|e| Error::invalid(format!("cannot split the payload over keys: {e}")))?
        else {
            // ROOT records the payload size when the length does not fit fObjLen.
            let obj_len = if uncompressed_len > i32::MAX as u64 { total } else { uncompressed_len };
            return self.blob_key_from(src, 0, total, obj_len, &[]);
        };
        // As ROOT's RNTupleFileWriter::WriteBlob: chunks 2..k first, each in its
        // own key, then the first key, holding the first bytes and the
        // (little-endian) offsets of the other chunks' payloads.
        let mut offsets = Vec::with_capacity(layout.offsets_len as usize);
        let mut from = layout.first_chunk_len;
        while from < total {
            let len = (total - from).min(max);
            let offset = self.blob_key_from(src, from, len, len, &[])?;
            offsets.extend_from_slice(&offset.to_le_bytes());
            from += len;
        }
        if offsets.len() as u64 != layout.offsets_len {
            return Err(Error::invalid(format!(
                "internal error: {} chunk offsets for layout {layout:?}",
                offsets.len() / 8
            )));
        }
        self.blob_key_from(src, 0, layout.first_chunk_len, max, &offsets)
    }

    /// Writes `parts` into exactly one `RBlob` key and returns the offset of
    /// its first byte; fails (writing nothing) when they add up to more than
    /// [`FileWriter::max_key_size`]. Offsets inside the payload stay valid
    /// locators, so several pages can share one key: ROOT packs the pages of a
    /// cluster this way, up to the max key size, and writes a larger page alone
    /// with [`FileWriter::write_blob`] (`RPageSinkFile::CommitSealedPageVImpl`).
    /// `uncompressed_len` becomes the key's `fObjLen` (ROOT: the sum of the
    /// pages' packed sizes), as in [`FileWriter::write_blob_parts_with_len`].
    pub fn write_single_key_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64> {
        self.check_open()?;
        let total: u64 = parts.iter().map(|p| p.len() as u64).sum();
        if total > self.options.max_key_size {
            return Err(Error::invalid(format!(
                "{total} bytes do not fit in one key of at most {} bytes (the max key size)",
                self.options.max_key_size
            )));
        }
        let obj_len = if uncompressed_len > i32::MAX as u64 { total } else { uncompressed_len };
        self.blob_key(parts, total, obj_len)
    }

    /// Appends one `RBlob` key of `len` zero bytes (at most
    /// [`FileWriter::max_key_size`]) without writing them: the file position
    /// moves past them, so that the file system may keep a hole. For tests of
    /// large (> 2 GB) files; returns the payload offset like
    /// [`FileWriter::write_blob`].
    #[doc(hidden)]
    pub fn write_zero_blob(&mut self, len: u64) -> Result<u64> {
        self.check_open()?;
        if len > self.options.max_key_size {
            return Err(Error::invalid(format!(
                "zero blob of {len} bytes exceeds the max key size {}",
                self.options.max_key_size
            )));
        }
        let at = self.blob_key(&[], len, len)?;
        // A local sink leaves a hole; finish() always writes after it.
        self.out.append_zeros(len).map_err(|e| self.fail(e))?;
        self.pos = at + len;
        Ok(at)
    }

    /// Adds the `ROOT::RNTuple` anchor key `name`, which may be a path
    /// (`"dir/sub/name"`): the subdirectories are created as needed. Writing a
    /// name twice makes a new cycle, as ROOT does. The anchor's `max_key_size`
    /// must be this writer's, and its envelopes must have been written by it.
    /// The key itself is written by [`FileWriter::finish`].
    pub fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        self.check_open()?;
        if anchor.max_key_size != self.options.max_key_size {
            return Err(Error::invalid(format!(
                "anchor '{name}' has max key size {}, but the file's payloads are split at {}",
                anchor.max_key_size, self.options.max_key_size
            )));
        }
        for (what, seek, nbytes) in
            [("header", anchor.seek_header, anchor.nbytes_header), ("footer", anchor.seek_footer, anchor.nbytes_footer)]
        {
            let first_key = nbytes.min(self.options.max_key_size);
            let min_seek = self.data_start + key_len(BLOB_CLASS_NAME, "", "") as u64;
            if seek < min_seek || seek.checked_add(first_key).is_none_or(|end| end > self.pos) {
                return Err(Error::invalid(format!(
                    "anchor '{name}': the {what} envelope ({nbytes} bytes at offset {seek}) was not written \
                         to this file (its payloads span offsets {min_seek}..{})",
                    self.pos
                )));
            }
        }
        self.tree.add_anchor(name, anchor.clone())?;
        Ok(())
    }

    /// Writes the anchor of a linked attribute set's RNTuple now, as ROOT 6.40
    /// does (`RNTupleFileWriter::CloneAsHidden`): a `ROOT::RNTuple` key named
    /// `name`, uncompressed, that no directory lists. Returns the offset of
    /// its payload; the payload is `anchor.to_bytes()` (what the footer's
    /// attribute set record locates).
    pub fn write_hidden_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<u64> {
        self.check_open()?;
        let bytes = anchor.to_bytes();
        let key = Key {
            class_name: RNTUPLE_CLASS_NAME.into(),
            name: name.into(),
            title: String::new(),
            cycle: 1,
            seek_key: self.pos,
            seek_pdir: BEGIN,
            stored_len: bytes.len() as u64,
            obj_len: bytes.len() as u64,
        };
        let mut header = Vec::with_capacity(key.key_len() + bytes.len());
        key.encode(self.datime, &mut header)?;
        let payload_at = self.pos + header.len() as u64;
        header.extend_from_slice(&bytes);
        self.write(&header)?;
        Ok(payload_at)
    }

    /// Lists a class's `TStreamerInfo` in the file's streamer-info record
    /// besides `ROOT::RNTuple`'s, as ROOT does for the classes its streamer
    /// fields reach (readers such as JSROOT look classes up there rather than
    /// in the RNTuple's footer). `object` is the info as `WriteObjectAny`
    /// streams it, every class tag written in full (no reference to an
    /// earlier tag: the bytes must not depend on their position), followed by
    /// the list's option string (`0x00`). The same bytes are listed once.
    pub fn add_class_streamer_info(&mut self, object: &[u8]) {
        if !self.class_infos.iter().any(|o| o == object) {
            self.class_infos.push(object.to_vec());
        }
    }

    /// The largest payload of one key; the anchors must carry it.
    pub fn max_key_size(&self) -> u64 {
        self.options.max_key_size
    }

    /// The directory of the file when it is local (where a writer may keep
    /// scratch files: on the file's own storage, not in memory as a `tmpfs`
    /// `$TMPDIR` would be); `None` for other sinks.
    pub fn local_dir(&self) -> Option<&Path> {
        self.local_dir.as_deref()
    }

    /// The options the writer was created with.
    pub fn options(&self) -> &WriterOptions {
        &self.options
    }

    /// The path of the file (the name given to [`FileWriter::with_sink`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes at the start of the file that [`FileWriter::finish`] writes
    /// again (file header, `TFile` record with the top directory record);
    /// every later byte is written once, in order ([`WriteSink`]).
    pub fn head_len(&self) -> u64 {
        self.data_start
    }

    /// Bytes written so far (the offset of the next key).
    pub fn len(&self) -> u64 {
        self.pos
    }

    /// Always false: a file holds at least its header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Completes the file: writes the subdirectory and anchor keys, the key
    /// lists, the streamer-info record (`ROOT::RNTuple`'s `TStreamerInfo`), the
    /// free-segments record, the top directory record and, last, the file
    /// header. If this fails the file stays marked incomplete.
    pub fn finish(mut self) -> Result<()> {
        self.check_open()?;
        let uuid = |path: &str| self.uuid(path);
        let identity = Identity {
            file_name: &self.file_name,
            datime: self.datime,
            compression: self.options.compression,
            nbytes_name: self.nbytes_name,
            uuid: &uuid,
            class_infos: &self.class_infos,
        };
        let closing = close(&self.tree, self.pos, &identity)?;
        let result = self.write_closing(&closing.metadata, &closing.top_record, &closing.header);
        if result.is_err() {
            // Best effort: the header may be half written.
            let _ = self.out.write_at(0, &placeholder(self.file_id)).and_then(|()| self.out.flush());
        } else {
            debug_assert_eq!(self.pos, closing.end);
            self.state = State::Finished;
            if let Some(j) = self.journal.take() {
                j.remove().map_err(|e| Error::io("removing the journal of a finished file", e))?;
            }
        }
        result
    }

    /// Makes what was written so far recoverable: hands the buffered bytes
    /// to the operating system (and `fsync`s them with
    /// [`WriterOptions::sync`]), then appends `payload`, which says how to
    /// find them, to the file's journal ([`super::journal`]). Once it
    /// returns, the bytes survive the death of the process. No-op when the
    /// file has no journal (not local, or [`WriterOptions::journal`] off).
    pub fn commit(&mut self, payload: &[u8]) -> Result<()> {
        self.check_open()?;
        crash_point(CrashPoint::Commit);
        if self.journal.is_none() {
            return Ok(());
        }
        let r = if self.options.sync { self.out.sync() } else { self.out.flush() };
        r.map_err(|e| self.fail(e))?;
        let Some(journal) = self.journal.as_mut() else { return Ok(()) };
        if let Err(e) = journal.append(self.pos, payload) {
            let err = Error::io(format!("{} (writing its journal)", self.path.display()), e);
            self.state = State::Failed(err.to_string());
            return Err(err);
        }
        Ok(())
    }

    /// Appends `len` bytes read from `src`: whole keys of an unfinished file
    /// whose payloads started where this file's do ([`FileWriter::head_len`];
    /// same file name), copied as they are, so that their offsets stay valid.
    /// `rntuple recover` completes such a file this way.
    pub fn append_copy(&mut self, src: &mut dyn std::io::Read, len: u64) -> Result<()> {
        self.check_open()?;
        let mut buf = vec![0u8; 1 << 20];
        let mut left = len;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            src.read_exact(&mut buf[..n]).map_err(|e| Error::io("reading the keys to copy", e))?;
            self.write(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }

    // --- internals ---------------------------------------------------------

    fn write_closing(&mut self, metadata: &[u8], top_record: &[u8], header: &[u8]) -> Result<()> {
        self.write(metadata)?;
        self.write_at(self.top_record_at, top_record)?;
        if self.options.sync {
            self.out.sync().map_err(|e| self.fail(e))?;
        }
        crash_point(CrashPoint::Finish);
        self.write_at(0, header)?;
        if self.options.sync {
            self.out.sync().map_err(|e| self.fail(e))?;
        }
        self.out.flush().map_err(|e| self.fail(e))?;
        self.out.finish().map_err(|e| self.fail(e))
    }

    /// Writes one `RBlob` key holding `parts` (`stored_len` bytes) and returns
    /// the offset of its payload.
    fn blob_key(&mut self, parts: &[&[u8]], stored_len: u64, obj_len: u64) -> Result<u64> {
        let mut src = Parts::new(parts);
        let len = src.len();
        debug_assert!(len == stored_len || len == 0, "{len} bytes for a key of {stored_len}");
        self.key_header(stored_len, obj_len)?;
        let payload_at = self.pos;
        self.copy_from(&mut src, 0, len)?;
        Ok(payload_at)
    }

    /// Writes one `RBlob` key holding bytes `[from, from + len)` of `src`
    /// followed by `tail` (the chunk offsets of a first key), and returns the
    /// offset of its payload.
    fn blob_key_from(
        &mut self,
        src: &mut dyn PayloadSource,
        from: u64,
        len: u64,
        obj_len: u64,
        tail: &[u8],
    ) -> Result<u64> {
        let stored_len = len + tail.len() as u64;
        self.key_header(stored_len, obj_len)?;
        let payload_at = self.pos;
        self.copy_from(src, from, len)?;
        self.write(tail)?;
        Ok(payload_at)
    }

    /// The key header of an `RBlob` key at the current position.
    fn key_header(&mut self, stored_len: u64, obj_len: u64) -> Result<()> {
        let key = Key {
            class_name: BLOB_CLASS_NAME.into(),
            name: String::new(),
            title: String::new(),
            cycle: 1,
            seek_key: self.pos,
            seek_pdir: BEGIN,
            stored_len,
            obj_len,
        };
        let mut header = Vec::with_capacity(key.key_len());
        key.encode(self.datime, &mut header)?;
        self.write(&header)?;
        crash_point(CrashPoint::Page);
        Ok(())
    }

    /// Appends bytes `[from, from + len)` of `src`, in pieces.
    fn copy_from(&mut self, src: &mut dyn PayloadSource, from: u64, len: u64) -> Result<()> {
        let mut done = 0u64;
        while done < len {
            let max = (len - done).min(COPY_PIECE as u64) as usize;
            let piece = match src.bytes_at(from + done, max) {
                Ok(p) if !p.is_empty() && p.len() <= max => p,
                Ok(p) => {
                    let e = std::io::Error::other(format!("{} bytes for a piece of at most {max}", p.len()));
                    return Err(self.fail_reading(e));
                }
                Err(e) => return Err(self.fail_reading(e)),
            };
            let n = piece.len() as u64;
            match self.out.append(piece) {
                Ok(()) => self.pos += n,
                Err(e) => return Err(self.fail(e)),
            }
            done += n;
        }
        Ok(())
    }

    fn uuid(&self, dir_path: &str) -> [u8; 16] {
        derive_uuid(self.uuid_seed, &[self.file_name.as_bytes(), &self.datime.to_be_bytes(), dir_path.as_bytes()])
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match self.out.append(bytes) {
            Ok(()) => {
                self.pos += bytes.len() as u64;
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<()> {
        self.out.write_at(offset, bytes).map_err(|e| self.fail(e))
    }

    fn fail(&mut self, e: std::io::Error) -> Error {
        let err = Error::io(format!("{} (writing)", self.out.describe()), e);
        if self.state == State::Open {
            self.state = State::Failed(err.to_string());
        }
        err
    }

    /// A payload source failed: a key may be half written, the file is lost.
    fn fail_reading(&mut self, e: std::io::Error) -> Error {
        let err = Error::io(format!("reading a payload to write into {}", self.out.describe()), e);
        if self.state == State::Open {
            self.state = State::Failed(err.to_string());
        }
        err
    }

    fn check_open(&self) -> Result<()> {
        match &self.state {
            State::Open => Ok(()),
            State::Failed(first) => Err(Error::invalid(format!(
                "the writer of {} failed earlier ({first}); the file is incomplete",
                self.path.display()
            ))),
            State::Finished => Err(Error::invalid(format!("the writer of {} has finished", self.path.display()))),
        }
    }
}

impl Drop for FileWriter {
    /// An unfinished file keeps its placeholder header: it stays invalid. The
    /// buffered payload bytes are flushed (they do not make it valid).
    fn drop(&mut self) {
        if self.state != State::Finished {
            let _ = self.out.flush();
        }
    }
}

/// The first `fBEGIN` bytes of an unfinished file: [`INCOMPLETE_FILE_MAGIC`],
/// a line of explanation for whoever looks at the bytes, and the file id its
/// journal repeats (little-endian, at [`PLACEHOLDER_FILE_ID_AT`]).
fn placeholder(file_id: u64) -> Vec<u8> {
    let mut out = INCOMPLETE_FILE_MAGIC.to_vec();
    out.extend_from_slice(b"ROOT file not completed by its writer (rntuple): it failed or was abandoned\n");
    debug_assert!(out.len() <= PLACEHOLDER_FILE_ID_AT);
    out.resize(PLACEHOLDER_FILE_ID_AT, 0);
    out.extend_from_slice(&file_id.to_le_bytes());
    debug_assert_eq!(out.len(), BEGIN as usize);
    out
}

/// The name of the `TFile` record: the file name without its directories (as
/// ROOT's RNTuple writer stores it), cut to [`MAX_FILE_NAME_LEN`] bytes.
fn file_name_of(path: &Path) -> String {
    let mut name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name.len() > MAX_FILE_NAME_LEN {
        let mut cut = MAX_FILE_NAME_LEN;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_is_not_a_root_or_bare_rntuple_header() {
        let p = placeholder(42);
        assert_eq!(super::super::journal::placeholder_file_id(&p), Some(42));
        assert_eq!(p.len(), 100);
        assert!(p.starts_with(&INCOMPLETE_FILE_MAGIC));
        assert!(!p.starts_with(b"root") && !p.starts_with(b"rntuple"));
    }

    #[test]
    fn file_names_are_cut_on_char_boundaries() {
        assert_eq!(file_name_of(Path::new("/a/b/out.root")), "out.root");
        let long = format!("/tmp/{}.root", "é".repeat(150));
        let name = file_name_of(Path::new(&long));
        assert!(name.len() <= MAX_FILE_NAME_LEN && name.len() >= MAX_FILE_NAME_LEN - 1);
    }
}
