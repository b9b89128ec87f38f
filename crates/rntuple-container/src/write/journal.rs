//! The commit journal of an unfinished file: a sidecar file beside it that
//! says, after every cluster commit, what a reader needs to find the
//! committed data again (`rntuple recover`, docs/recover.md).
//!
//! The journal lives outside the ROOT file so that the finished file is
//! byte for byte what it would be without it: [`super::FileWriter::finish`]
//! deletes it after the file header is written. Its records are opaque
//! here; the RNTuple write engine fills them (page lists, header locator).
//!
//! ```text
//! FILE.root.rntuple-journal                      (all integers little-endian)
//!  offset
//!       0  magic "RNTJRNL\x01"                                         8
//!       8  file id: the u64 at bytes 92..100 of the placeholder header 8
//!      16  max key size of the file's payloads                         8
//!      24  fCompress of the file                                       4
//!      28  xxh3-64 of bytes 0..28                                      8
//!      36  records, each:
//!            body length n                                       u32
//!            sequence number (0, 1, 2, ...)                      u64
//!            end: bytes of the ROOT file written before it       u64
//!            payload                                             n bytes
//!            xxh3-64 of the 20 + n bytes above                   u64
//! ```
//!
//! A record is appended only after the ROOT file's buffered bytes are handed
//! to the operating system, so every byte before `end` survives the death of
//! the process; with [`super::WriterOptions::sync`] both files are also
//! `fsync`ed at every commit. A record cut short by a crash fails its
//! checksum and is ignored with the records after it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use rntuple_format::checksum::xxh3_64;
use rntuple_format::{Error, Result};

use super::crash::{crash_point, CrashPoint};

/// Appended to the ROOT file's name to name its journal.
pub const JOURNAL_SUFFIX: &str = ".rntuple-journal";

/// First bytes of a journal.
pub const JOURNAL_MAGIC: [u8; 8] = *b"RNTJRNL\x01";

/// Where the file id sits in the placeholder header of an unfinished file
/// (after [`crate::constants::INCOMPLETE_FILE_MAGIC`] and its line of text).
pub const PLACEHOLDER_FILE_ID_AT: usize = 92;

const HEAD_LEN: usize = 36;
/// Body length, sequence number, end.
const RECORD_PREFIX: usize = 20;

/// The journal of the ROOT file at `file`.
pub fn journal_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(JOURNAL_SUFFIX);
    PathBuf::from(name)
}

/// The file id in the placeholder header of an unfinished file, if `head`
/// (its first 100 bytes) is one.
pub fn placeholder_file_id(head: &[u8]) -> Option<u64> {
    if !head.starts_with(&crate::constants::INCOMPLETE_FILE_MAGIC) {
        return None;
    }
    let id = head.get(PLACEHOLDER_FILE_ID_AT..PLACEHOLDER_FILE_ID_AT + 8)?;
    Some(u64::from_le_bytes(id.try_into().ok()?))
}

/// Writes the journal of one file; created at the first record.
#[derive(Debug)]
pub(crate) struct JournalWriter {
    path: PathBuf,
    file: Option<File>,
    head: [u8; HEAD_LEN],
    seq: u64,
    sync: bool,
}

impl JournalWriter {
    /// The journal of the file at `root_file`; a journal left there by an
    /// earlier writer is removed (it belongs to the file being replaced).
    pub(crate) fn new(root_file: &Path, file_id: u64, max_key_size: u64, compression: u32, sync: bool) -> Result<Self> {
        let path = journal_path(root_file);
        remove_if_present(&path)?;
        let mut head = [0u8; HEAD_LEN];
        head[..8].copy_from_slice(&JOURNAL_MAGIC);
        head[8..16].copy_from_slice(&file_id.to_le_bytes());
        head[16..24].copy_from_slice(&max_key_size.to_le_bytes());
        head[24..28].copy_from_slice(&compression.to_le_bytes());
        let sum = xxh3_64(&head[..28]);
        head[28..].copy_from_slice(&sum.to_le_bytes());
        Ok(Self { path, file: None, head, seq: 0, sync })
    }

    /// Appends a record saying that the first `end` bytes of the ROOT file
    /// are written and hold what `payload` describes.
    pub(crate) fn append(&mut self, end: u64, payload: &[u8]) -> std::io::Result<()> {
        let mut record = Vec::with_capacity(RECORD_PREFIX + payload.len() + 8);
        let len = u32::try_from(payload.len())
            .map_err(|_| std::io::Error::other(format!("journal record of {} bytes", payload.len())))?;
        record.extend_from_slice(&len.to_le_bytes());
        record.extend_from_slice(&self.seq.to_le_bytes());
        record.extend_from_slice(&end.to_le_bytes());
        record.extend_from_slice(payload);
        let sum = xxh3_64(&record);
        record.extend_from_slice(&sum.to_le_bytes());
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                let mut f = File::create(&self.path)?;
                f.write_all(&self.head)?;
                self.file.insert(f)
            }
        };
        let half = record.len() / 2;
        file.write_all(&record[..half])?;
        crash_point(CrashPoint::Journal);
        file.write_all(&record[half..])?;
        if self.sync {
            file.sync_data()?;
        }
        self.seq += 1;
        Ok(())
    }

    /// Deletes the journal: the file is complete.
    pub(crate) fn remove(self) -> std::io::Result<()> {
        drop(self.file);
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io(format!("{} (removing the journal of the file it replaces)", path.display()), e))
        }
        _ => Ok(()),
    }
}

/// A journal as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    /// The id of the file it belongs to ([`placeholder_file_id`]).
    pub file_id: u64,
    pub max_key_size: u64,
    pub compression: u32,
    /// The intact records, in order.
    pub records: Vec<JournalRecord>,
    /// Where reading stopped before the end, and why: a record cut short or
    /// damaged (normally the one being written when the writer died).
    pub torn: Option<(u64, String)>,
}

/// One intact record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalRecord {
    /// Offset of the record in the journal.
    pub offset: u64,
    pub seq: u64,
    /// Bytes of the ROOT file written before the record.
    pub end: u64,
    pub payload: Vec<u8>,
}

impl Journal {
    /// Reads the journal in `bytes`; fails only when its head is not one.
    pub fn parse(bytes: &[u8], what: &str) -> Result<Self> {
        let bad = |why: String| Error::invalid(format!("{what}: not an rntuple journal: {why}"));
        if bytes.len() < HEAD_LEN || bytes[..8] != JOURNAL_MAGIC {
            return Err(bad(format!("it does not start with {:?}", String::from_utf8_lossy(&JOURNAL_MAGIC))));
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        if xxh3_64(&bytes[..28]) != u64_at(28) {
            return Err(bad("the checksum of its head does not match".into()));
        }
        let mut journal = Journal {
            file_id: u64_at(8),
            max_key_size: u64_at(16),
            compression: u32::from_le_bytes(bytes[24..28].try_into().unwrap_or([0; 4])),
            records: Vec::new(),
            torn: None,
        };
        let mut at = HEAD_LEN;
        while at < bytes.len() {
            let rest = &bytes[at..];
            let torn = |why: &str| Some((at as u64, why.to_string()));
            if rest.len() < RECORD_PREFIX + 8 {
                journal.torn = torn("a record cut short");
                break;
            }
            let n = u32::from_le_bytes(rest[..4].try_into().unwrap_or([0; 4])) as usize;
            let Some(total) = n.checked_add(RECORD_PREFIX + 8).filter(|&t| t <= rest.len()) else {
                journal.torn = torn("a record cut short");
                break;
            };
            let body = &rest[..RECORD_PREFIX + n];
            let sum = u64::from_le_bytes(rest[RECORD_PREFIX + n..total].try_into().unwrap_or([0; 8]));
            if xxh3_64(body) != sum {
                journal.torn = torn("a record whose checksum does not match");
                break;
            }
            let seq = u64::from_le_bytes(body[4..12].try_into().unwrap_or([0; 8]));
            if seq != journal.records.len() as u64 {
                journal.torn = torn("a record out of sequence");
                break;
            }
            journal.records.push(JournalRecord {
                offset: at as u64,
                seq,
                end: u64::from_le_bytes(body[12..20].try_into().unwrap_or([0; 8])),
                payload: body[RECORD_PREFIX..].to_vec(),
            });
            at += total;
        }
        Ok(journal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_torn_tail_is_reported() {
        let dir = std::env::temp_dir().join(format!("rntuple-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = dir.join("x.root");
        let mut w = JournalWriter::new(&root, 0xabcd, 1 << 30, 505, false).unwrap();
        w.append(1000, b"first").unwrap();
        w.append(2000, b"second record").unwrap();
        let path = journal_path(&root);
        assert_eq!(path, dir.join("x.root.rntuple-journal"));
        let bytes = std::fs::read(&path).unwrap();
        let j = Journal::parse(&bytes, "j").unwrap();
        assert_eq!((j.file_id, j.max_key_size, j.compression), (0xabcd, 1 << 30, 505));
        assert_eq!(j.records.len(), 2);
        assert_eq!((j.records[1].end, j.records[1].payload.as_slice()), (2000, &b"second record"[..]));
        assert_eq!(j.torn, None);
        // Cut inside the second record: the first survives, the second is torn.
        let cut = Journal::parse(&bytes[..bytes.len() - 3], "j").unwrap();
        assert_eq!(cut.records.len(), 1);
        assert_eq!(cut.torn.as_ref().map(|t| t.0), Some(HEAD_LEN as u64 + 20 + 5 + 8));
        // A flipped byte in the first record: nothing survives.
        let mut bad = bytes.clone();
        bad[HEAD_LEN + 22] ^= 1;
        let bad = Journal::parse(&bad, "j").unwrap();
        assert!(bad.records.is_empty() && bad.torn.is_some());
        assert!(Journal::parse(b"RNTJRNL\x02.................................", "j").is_err());
        w.remove().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn the_placeholder_carries_the_file_id() {
        let mut head = crate::constants::INCOMPLETE_FILE_MAGIC.to_vec();
        head.resize(100, 0);
        head[92..].copy_from_slice(&7u64.to_le_bytes());
        assert_eq!(placeholder_file_id(&head), Some(7));
        assert_eq!(placeholder_file_id(b"root"), None);
    }
}
