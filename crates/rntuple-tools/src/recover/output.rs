//! Writes the recovered file: the broken file's keys up to the last cluster
//! kept, then per RNTuple one page list envelope (one cluster group, spec
//! "Page List Envelope"), the footer (spec "Footer Envelope") and the anchor,
//! then the closing records ([`rntuple::container::FileWriter::finish`]).

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rntuple::container::storage::url::create_sink;
use rntuple::container::storage::{LocalSink, StorageUrl, WriteSink};
use rntuple::container::write::journal::Journal;
use rntuple::container::write::{FileWriter, WriterOptions};
use rntuple::container::KeyInfo;
use rntuple::format::{Error, Result};
use rntuple::write::{FooterParts, PageSink, SinkOptions};

use super::{read_at, RecoverOptions, Tuple};

/// What goes into the recovered file.
pub(super) struct Plan<'a> {
    pub(super) file: &'a File,
    /// The name in the broken file's `TFile` record.
    pub(super) tfile_name: &'a str,
    /// The first byte after the `TFile` record.
    pub(super) data_start: u64,
    /// The end of the last cluster kept.
    pub(super) cut: u64,
    pub(super) journal: &'a Journal,
    pub(super) tuples: &'a [Tuple],
}

/// Writes the recovered file to `out` through a temporary file beside it;
/// to a URL through its store's sink, which shows the file only once it is
/// complete (docs/remote.md, "Writing to a URL"), then reads it back there.
pub(super) fn write(p: &Plan<'_>, out: &Path, options: RecoverOptions) -> Result<()> {
    check_key_chain(p.file, p.data_start, p.cut)?;
    if let Some(url) = out.to_str().filter(|u| matches!(StorageUrl::parse(u), Ok(StorageUrl::Remote { .. }))) {
        write_to(p, create_sink(url)?, options)?;
        return read_back(out, p.tuples);
    }
    let tmp = temporary_beside(out);
    let r = LocalSink::create(&tmp).and_then(|sink| write_to(p, Box::new(sink), options)).and_then(|()| {
        read_back(&tmp, p.tuples)?;
        std::fs::rename(&tmp, out).map_err(|e| Error::io(format!("{} (renaming {})", out.display(), tmp.display()), e))
    });
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

fn write_to(p: &Plan<'_>, sink: Box<dyn WriteSink>, options: RecoverOptions) -> Result<()> {
    let (file, data_start, cut, journal) = (p.file, p.data_start, p.cut, p.journal);
    let wo = WriterOptions {
        max_key_size: journal.max_key_size,
        compression: journal.compression,
        sync: options.sync,
        journal: false,
        ..Default::default()
    };
    // Named as the broken file's TFile record, so that the payloads start at
    // the same offset and every copied locator stays valid.
    let mut w = FileWriter::with_sink(sink, Path::new(p.tfile_name), wo)?;
    if w.head_len() != data_start {
        return Err(Error::internal(format!(
            "the recovered file's payloads would start at {}, the broken file's at {data_start}",
            w.head_len()
        )));
    }
    let Some(copied) = cut.checked_sub(data_start) else {
        return Err(Error::invalid(format!(
            "the last committed byte {cut} is before the first payload at {data_start}"
        )));
    };
    let mut src = file.try_clone().map_err(|e| Error::io("the broken file", e))?;
    src.seek(SeekFrom::Start(data_start)).map_err(|e| Error::io("the broken file", e))?;
    w.append_copy(&mut std::io::Read::take(src, copied), copied)?;
    for t in p.tuples.iter().filter(|t| !t.clusters.is_empty()) {
        // The RNTuple ends as every writer of the project ends one: through
        // its page sink, here over the header the broken file holds.
        let options = SinkOptions { compression: t.compression, cluster_group_size: 0, journal: false };
        let mut sink = PageSink::new(&mut w, &t.name, options);
        sink.resume(t.header, t.header_checksum);
        for (summary, ranges) in &t.clusters {
            sink.record_cluster(summary.num_entries, ranges.clone(), None)?;
        }
        let footer = FooterParts {
            feature_flags: t.footer.feature_flags.clone(),
            schema_extension: t.footer.schema_extension.clone(),
            // Attribute sets are written at the close the broken file never reached.
            attribute_sets: Vec::new(),
        };
        let anchor = sink.finish(footer)?;
        sink.write_anchor(&anchor)?;
        // The classes of its streamer fields (journaled with each cluster),
        // listed in the file's streamer-info record as the writer would have.
        // A list that cannot be re-placed only costs JSROOT those fields.
        let _ = rntuple::write::list_streamer_classes(&t.footer.schema_extension.extra_type_info, sink.dest());
    }
    w.finish()
}

/// Checks that the bytes `[data_start, cut)` are whole keys, one after the
/// other, each naming its own offset: what is copied is a valid key chain.
fn check_key_chain(file: &File, data_start: u64, cut: u64) -> Result<()> {
    let mut at = data_start;
    let mut buf = vec![0u8; 600];
    while at < cut {
        let n = buf.len().min((cut - at) as usize);
        read_at(file, &mut buf[..n], at, "the broken file")?;
        let (key, _) = KeyInfo::parse(&buf[..n], at).map_err(|e| e.within("the keys of the broken file"))?;
        let next = at + u64::from(key.nbytes);
        if key.seek_key != at || key.nbytes == 0 || next > cut {
            return Err(Error::invalid(format!(
                "the broken file's key at offset {at} (fSeekKey {}, {} bytes) does not end at or before the \
                     last committed byte {cut}",
                key.seek_key, key.nbytes
            )));
        }
        at = next;
    }
    Ok(())
}

/// Opens the written file as a reader would and checks every RNTuple's entries.
fn read_back(tmp: &Path, tuples: &[Tuple]) -> Result<()> {
    let f = rntuple::RNTupleFile::open(tmp)?;
    for t in tuples.iter().filter(|t| !t.clusters.is_empty()) {
        let n = f.rntuple(&t.name)?.num_entries();
        let want: u64 = t.clusters.iter().map(|c| c.0.num_entries).sum();
        if n != want {
            return Err(Error::internal(format!("the recovered '{}' reads {n} entries, not {want}", t.name)));
        }
    }
    Ok(())
}

fn temporary_beside(out: &Path) -> PathBuf {
    let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    out.with_file_name(format!(".{name}.recover-{}.tmp", std::process::id()))
}
