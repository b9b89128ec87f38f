//! The records written when a file is finished, after all payloads: the
//! subdirectory keys, the anchor keys, one key list per directory, the
//! streamer-info record and the free-segments record, then the top directory
//! record and the file header that point at them.
//!
//! ```text
//! end of payloads
//! +-------------------------------+
//! | TDirectory key + record  (60) |  one per subdirectory, parents first
//! | ROOT::RNTuple key + anchor    |  one per anchor, in key-list order
//! | key list                      |  one per directory: list key, i32 count,
//! |                               |  then a copy of each key header
//! | StreamerInfo key (TList)      |  compressed with the file's setting
//! | free-segments key             |  one TFree: [fEND, next 10^9 multiple]
//! +-------------------------------+ fEND
//! ```
//!
//! Offsets are computed first (every size is known), then the bytes are
//! serialized once. Sources as in [`super::records`]; the order of the records
//! follows ROOT's RNTuple writer (`RNTupleFileWriter::Commit`: anchor key, key
//! list, streamer info, free list), with `TDirectoryFile`'s subdirectory keys
//! in front.

use std::collections::HashMap;

use rntuple_format::{Error, Result};

use super::records::{
    directory_version, file_header_bytes, free_segment_last, free_segment_len, key_len, put_directory,
    put_free_segment, put_tstring, Key, DIRECTORY_RECORD_LEN, START_BIG_FILE,
};
use super::streamer_info::{RNTUPLE_STREAMER_INFO, STREAMER_INFO_KEY_LEN};
use super::tree::{Entry, Tree, TOP};
use crate::constants::{BIG_FILE_VERSION, RNTUPLE_CLASS_NAME};
use crate::directory::DirectoryRecord;
use crate::header::FileHeader;

/// `fBEGIN`: the first record (the `TFile` key) starts here.
pub(crate) const BEGIN: u64 = 100;

/// `fVersion` of the files written: ROOT 6.40/00, whose layout they follow.
pub(crate) const ROOT_VERSION: u32 = 6_40_00;

/// What identifies the file in its records.
pub(crate) struct Identity<'a> {
    /// Name of the `TFile` (its key's and top directory's name).
    pub(crate) file_name: &'a str,
    pub(crate) datime: u32,
    /// `fCompress`; also compresses the anchors and the streamer info.
    pub(crate) compression: u32,
    /// `fNbytesName` of the top directory: `TFile` key header plus `TNamed`.
    pub(crate) nbytes_name: u32,
    /// UUID of the directory with the given path (`""` for the top).
    pub(crate) uuid: &'a dyn Fn(&str) -> [u8; 16],
    /// Streamer infos of classes appended to `ROOT::RNTuple`'s in the
    /// streamer-info record ([`streamer_info_record`]).
    pub(crate) class_infos: &'a [Vec<u8>],
}

impl std::fmt::Debug for Identity<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("file_name", &self.file_name)
            .field("datime", &self.datime)
            .field("compression", &self.compression)
            .field("nbytes_name", &self.nbytes_name)
            .finish_non_exhaustive()
    }
}

/// The bytes that complete a file.
#[derive(Debug)]
pub(crate) struct Closing {
    /// Records to append at the end of the payloads.
    pub(crate) metadata: Vec<u8>,
    /// The top directory record, to overwrite the provisional one.
    pub(crate) top_record: Vec<u8>,
    /// The file header (`fBEGIN` bytes), to write at offset 0 last.
    pub(crate) header: Vec<u8>,
    /// `fEND`.
    pub(crate) end: u64,
}

/// The streamer-info record: the `TList` of [`RNTUPLE_STREAMER_INFO`] with
/// `class_infos` appended (each a `TStreamerInfo` as `WriteObjectAny`
/// streams it, followed by the list's option string for it), as ROOT lists
/// the classes of an RNTuple's streamer fields there besides the footer.
/// Readers that resolve classes through the file (JSROOT's
/// `getStreamer`) find them. The appended objects must not refer back to
/// class tags (they carry each class name in full), so their bytes do not
/// depend on where they land.
pub(crate) fn streamer_info_record(class_infos: &[Vec<u8>]) -> Result<Vec<u8>> {
    // TList: byte count, version (2), TObject (10), fName "" (1), object count.
    const COUNT_AT: usize = 4 + 2 + 10 + 1;
    let mut record = RNTUPLE_STREAMER_INFO.to_vec();
    if class_infos.is_empty() {
        return Ok(record);
    }
    let count =
        i32::from_be_bytes([record[COUNT_AT], record[COUNT_AT + 1], record[COUNT_AT + 2], record[COUNT_AT + 3]]);
    let total = i32::try_from(class_infos.len())
        .ok()
        .and_then(|n| count.checked_add(n))
        .ok_or_else(|| internal("too many streamer infos"))?;
    record[COUNT_AT..COUNT_AT + 4].copy_from_slice(&total.to_be_bytes());
    for info in class_infos {
        record.extend_from_slice(info);
    }
    let byte_count = u32::try_from(record.len() - 4)
        .ok()
        .filter(|&n| n < 0x4000_0000)
        .ok_or_else(|| internal("the streamer-info record exceeds a byte count"))?;
    record[..4].copy_from_slice(&(byte_count | 0x4000_0000).to_be_bytes());
    Ok(record)
}

/// Lays out and serializes the closing records of a file whose payloads end
/// at `start`.
pub(crate) fn close(tree: &Tree, start: u64, id: &Identity<'_>) -> Result<Closing> {
    let order = tree.preorder();
    let n = tree.dirs.len();
    let mut cursor = start;

    // Subdirectory keys, parents first (their offsets are the children's fSeekPdir).
    let mut seek_dir = vec![BEGIN; n];
    let mut dir_keys: Vec<Option<Key>> = vec![None; n];
    for &d in &order[1..] {
        let dir = &tree.dirs[d];
        let key = Key {
            class_name: "TDirectory".into(),
            name: dir.name.clone(),
            title: dir.name.clone(), // TDirectoryFile::mkdir: the title defaults to the name
            cycle: 1,
            seek_key: cursor,
            seek_pdir: seek_dir[dir.parent.unwrap_or(TOP)],
            stored_len: DIRECTORY_RECORD_LEN as u64,
            obj_len: DIRECTORY_RECORD_LEN as u64,
        };
        seek_dir[d] = cursor;
        cursor += key.nbytes();
        dir_keys[d] = Some(key);
    }

    // Anchor keys, each with its (possibly compressed) payload, in the order
    // the anchors were added.
    let mut anchors: Vec<(usize, usize, &str, i16, &crate::Anchor)> = Vec::new();
    for &d in &order {
        for entry in &tree.dirs[d].entries {
            if let Entry::Anchor { name, cycle, seq, anchor } = entry {
                anchors.push((*seq, d, name, *cycle, anchor));
            }
        }
    }
    anchors.sort_by_key(|a| a.0);
    let mut anchor_keys: HashMap<usize, (Key, Vec<u8>)> = HashMap::with_capacity(anchors.len());
    for &(seq, d, name, cycle, anchor) in &anchors {
        let object = anchor.to_bytes();
        let stored = rntuple_format::compression::compress(&object, id.compression)?;
        let key = Key {
            class_name: RNTUPLE_CLASS_NAME.into(),
            name: name.to_string(),
            title: String::new(),
            cycle,
            seek_key: cursor,
            seek_pdir: seek_dir[d],
            stored_len: stored.len() as u64,
            obj_len: object.len() as u64,
        };
        cursor += key.nbytes();
        anchor_keys.insert(seq, (key, stored));
    }

    // Key lists: the keys of each directory in list order.
    let mut lists: Vec<(Key, Vec<&Key>)> = Vec::with_capacity(n);
    for &d in &order {
        let dir = &tree.dirs[d];
        let mut keys = Vec::with_capacity(dir.entries.len());
        for entry in &dir.entries {
            let key = match entry {
                Entry::Dir(s) => dir_keys[*s].as_ref(),
                Entry::Anchor { seq, .. } => anchor_keys.get(seq).map(|(k, _)| k),
            };
            keys.push(key.ok_or_else(|| internal("directory entry without a key"))?);
        }
        let payload = 4 + keys.iter().map(|k| k.key_len() as u64).sum::<u64>();
        let (class_name, name, title) = if d == TOP {
            ("TFile", id.file_name.to_string(), String::new())
        } else {
            ("TDirectory", dir.name.clone(), dir.name.clone())
        };
        let list_key = Key {
            class_name: class_name.into(),
            name,
            title,
            cycle: 1,
            seek_key: cursor,
            seek_pdir: seek_dir[d],
            stored_len: payload,
            obj_len: payload,
        };
        cursor += list_key.nbytes();
        lists.push((list_key, keys));
    }
    let list_of = |d: usize| order.iter().position(|&o| o == d).map(|i| &lists[i].0);

    // Streamer info.
    let record = streamer_info_record(id.class_infos)?;
    let info = rntuple_format::compression::compress(&record, id.compression)?;
    let info_key = Key {
        class_name: "TList".into(),
        name: "StreamerInfo".into(),
        title: "Doubly linked list".into(),
        cycle: 1,
        seek_key: cursor,
        seek_pdir: BEGIN,
        stored_len: info.len() as u64,
        obj_len: record.len() as u64,
    };
    if info_key.key_len() != usize::from(STREAMER_INFO_KEY_LEN) {
        return Err(internal("the streamer-info key header does not have the length the record was streamed for"));
    }
    cursor += info_key.nbytes();

    // Free segments: the rest of the file, from fEND on.
    let seek_free = cursor;
    let free_key_len = key_len("TFile", id.file_name, "") as u64;
    let mut entry_len = free_segment_len(free_segment_last(seek_free + free_key_len + 10)) as u64;
    if entry_len != 10 {
        entry_len = free_segment_len(free_segment_last(seek_free + free_key_len + entry_len)) as u64;
    }
    let end = seek_free + free_key_len + entry_len;
    let free_last = free_segment_last(end);
    let free_key = Key {
        class_name: "TFile".into(),
        name: id.file_name.to_string(),
        title: String::new(),
        cycle: 1,
        seek_key: seek_free,
        seek_pdir: BEGIN,
        stored_len: entry_len,
        obj_len: entry_len,
    };

    // Serialize, in offset order.
    let mut out = Emitter { out: Vec::new(), base: start, datime: id.datime };
    let record = |d: usize, seek_parent: u64, nbytes_name: u32| -> Result<Vec<u8>> {
        let list = list_of(d).ok_or_else(|| internal("directory without a key list"))?;
        let rec = DirectoryRecord {
            version: directory_version(seek_dir[d], seek_parent, list.seek_key),
            datime_c: id.datime,
            datime_m: id.datime,
            nbytes_keys: fits_u32(list.nbytes(), "key list")?,
            nbytes_name,
            seek_dir: seek_dir[d],
            seek_parent,
            seek_keys: list.seek_key,
        };
        let mut bytes = Vec::with_capacity(DIRECTORY_RECORD_LEN);
        put_directory(&mut bytes, &rec, &(id.uuid)(&tree.dirs[d].path));
        Ok(bytes)
    };
    for &d in &order[1..] {
        let key = dir_keys[d].as_ref().ok_or_else(|| internal("subdirectory without a key"))?;
        let bytes = record(d, key.seek_pdir, key.key_len() as u32)?;
        out.key(key, &[&bytes])?;
    }
    for (seq, ..) in &anchors {
        let (key, stored) = anchor_keys.get(seq).ok_or_else(|| internal("anchor without a key"))?;
        out.key(key, &[stored])?;
    }
    for (list_key, keys) in &lists {
        let mut payload = Vec::with_capacity(list_key.stored_len as usize);
        payload.extend_from_slice(&(keys.len() as i32).to_be_bytes());
        for k in keys {
            k.encode(id.datime, &mut payload)?;
        }
        out.key(list_key, &[&payload])?;
    }
    out.key(&info_key, &[&info])?;
    let mut free = Vec::with_capacity(entry_len as usize);
    put_free_segment(&mut free, end, free_last);
    out.key(&free_key, &[&free])?;
    if out.base + out.out.len() as u64 != end {
        return Err(internal("closing records do not end at fEND"));
    }

    let top_record = record(TOP, 0, id.nbytes_name)?;
    let large = end > START_BIG_FILE;
    let header = FileHeader {
        version: ROOT_VERSION + if large { BIG_FILE_VERSION } else { 0 },
        begin: BEGIN,
        end,
        seek_free,
        nbytes_free: fits_u32(free_key.nbytes(), "free-segments record")?,
        nfree: 1,
        nbytes_name: id.nbytes_name,
        units: if large { 8 } else { 4 },
        compress: id.compression,
        seek_info: info_key.seek_key,
        nbytes_info: fits_u32(info_key.nbytes(), "streamer-info record")?,
    };
    let header = file_header_bytes(&header, &(id.uuid)(""));
    Ok(Closing { metadata: out.out, top_record, header, end })
}

/// Appends keys at consecutive offsets, checking each key's `fSeekKey`.
struct Emitter {
    out: Vec<u8>,
    base: u64,
    datime: u32,
}

impl Emitter {
    fn key(&mut self, key: &Key, payload: &[&[u8]]) -> Result<()> {
        if key.seek_key != self.base + self.out.len() as u64 {
            return Err(internal("closing record laid out at the wrong offset"));
        }
        key.encode(self.datime, &mut self.out)?;
        for p in payload {
            self.out.extend_from_slice(p);
        }
        Ok(())
    }
}

fn fits_u32(v: u64, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::invalid(format!("{what} of {v} bytes is too large")))
}

fn internal(what: &str) -> Error {
    Error::invalid(format!("internal error of the file writer: {what}"))
}

/// The `TNamed` part of the `TFile` record: name and title.
pub(crate) fn put_tnamed(out: &mut Vec<u8>, name: &str, title: &str) {
    put_tstring(out, name);
    put_tstring(out, title);
}
