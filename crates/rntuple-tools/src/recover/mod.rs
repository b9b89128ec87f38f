//! `rntuple recover`: completes a file whose writer died, with every cluster
//! it had committed (docs/recover.md).
//!
//! The writer keeps a journal beside the file
//! ([`rntuple::container::write::journal`]): after each cluster commit, a
//! record with the cluster's page list, the header's locator and the schema
//! extension ([`rntuple::write::journal::ClusterRecord`]), and the length of
//! the file written by then. Recovery reads the records in order and keeps a
//! cluster only when the header envelope, its page list and every one of its
//! pages pass their checksums and lie in the bytes written before its record;
//! the first cluster of an RNTuple that fails ends that RNTuple (its entries
//! stay contiguous). The output is the broken file's keys up to the end of
//! the last cluster kept, copied as they are, followed by one page list per
//! RNTuple, its footer, its anchor and the closing records of a ROOT file
//! ([`rntuple::container::FileWriter::append_copy`]). It is written to a
//! temporary file, read back, and renamed to OUT only when it holds exactly
//! the entries kept.

mod output;
mod report;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rntuple::container::constants::FILE_MAGIC;
use rntuple::container::write::journal::{journal_path, placeholder_file_id, Journal};
use rntuple::container::KeyInfo;
use rntuple::format::checksum::xxh3_64;
use rntuple::format::envelope::{parse_footer, parse_header, parse_page_list};
use rntuple::format::model::{ClusterSummary, ColumnPageRange, EnvelopeLink, Footer};
use rntuple::format::{Error, Location, Result};
use rntuple::write::journal::ClusterRecord;

/// Options of [`recover`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RecoverOptions {
    /// `fsync` the output before it is renamed into place.
    pub sync: bool,
    /// Replace an existing output file.
    pub overwrite: bool,
}

/// What the broken file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// A complete ROOT file: nothing to recover, no output written.
    Complete,
    /// An unfinished file with committed clusters.
    Unfinished,
}

/// One RNTuple found in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredRNTuple {
    pub name: String,
    /// Entries in the clusters kept (entries `0..entries` of the RNTuple).
    pub entries: u64,
    pub clusters: usize,
    /// Committed clusters left out, with why (the first one ends the RNTuple).
    pub dropped: Vec<String>,
    /// Pages kept without a checksum to verify (written with page checksums off).
    pub unverified_pages: u64,
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    pub file: PathBuf,
    pub state: FileState,
    pub rntuples: Vec<RecoveredRNTuple>,
    /// Bytes of the broken file and of them the bytes kept (up to the end of
    /// the last cluster kept); the rest (entries not committed, records of a
    /// writer that died) is dropped.
    pub file_bytes: u64,
    pub kept_bytes: u64,
    /// Where the journal stopped before its end, and why (normally the record
    /// being written at the crash).
    pub torn_journal: Option<String>,
    /// The file written, if any.
    pub output: Option<PathBuf>,
}

/// Reads the broken file at `broken` and its journal; with `out`, writes the
/// recovered file there (atomically: a temporary file renamed when complete
/// and read back). Fails, writing nothing, when the file is neither complete
/// nor recoverable (no journal, no committed cluster, damaged bytes before
/// the last cluster kept).
pub fn recover(broken: &Path, out: Option<&Path>, options: RecoverOptions) -> Result<RecoveryReport> {
    let what = broken.display().to_string();
    if let Some(o) = out {
        check_output(broken, o, options.overwrite)?;
    }
    let file = File::open(broken).map_err(|e| Error::io(format!("{what} (opening it)"), e))?;
    let file_bytes = file.metadata().map_err(|e| Error::io(format!("{what} (reading its size)"), e))?.len();
    let mut head = vec![0u8; 100.min(file_bytes) as usize];
    read_at(&file, &mut head, 0, &what)?;
    let mut report = RecoveryReport {
        file: broken.to_path_buf(),
        state: FileState::Complete,
        rntuples: Vec::new(),
        file_bytes,
        kept_bytes: file_bytes,
        torn_journal: None,
        output: None,
    };
    if head.starts_with(&FILE_MAGIC) {
        // A finished file (its journal, if left by a crash after the
        // header was written, is stale). Refuse one the reader refuses.
        rntuple::RNTupleFile::open(broken).map_err(|e| e.within(&format!("{what}: a complete file")))?;
        return Ok(report);
    }
    let file_id = placeholder_file_id(&head).ok_or_else(|| {
        Error::invalid(format!("{what}: neither a ROOT file nor one an rntuple writer left unfinished"))
    })?;
    let jpath = journal_path(broken);
    let jbytes = match std::fs::read(&jpath) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::invalid(format!(
                "{what} is unfinished and has no journal {} (no cluster was committed, or it was written with \
                     the journal off): nothing can be recovered",
                jpath.display()
            )))
        }
        Err(e) => return Err(Error::io(format!("{} (reading the journal)", jpath.display()), e)),
    };
    let journal = Journal::parse(&jbytes, &jpath.display().to_string())?;
    if journal.file_id != file_id {
        return Err(Error::invalid(format!(
            "{}: the journal of another file (ids {:#x} and {file_id:#x})",
            jpath.display(),
            journal.file_id
        )));
    }
    report.state = FileState::Unfinished;
    report.torn_journal = journal.torn.as_ref().map(|(at, why)| format!("{why} at byte {at} of the journal"));
    let data_start = tfile_record_end(&file, file_bytes, &what)?.1;
    let mut scan = Scan { file: &file, file_bytes, data_start, what: &what, tuples: Vec::new() };
    for r in &journal.records {
        scan.record(r.seq, r.end, &r.payload);
    }
    report.kept_bytes = scan.tuples.iter().filter(|t| !t.clusters.is_empty()).map(|t| t.end).max().unwrap_or(0);
    report.rntuples = scan.tuples.iter().map(Tuple::summary).collect();
    if report.rntuples.iter().all(|t| t.clusters == 0) {
        let why = report.rntuples.iter().flat_map(|t| t.dropped.first()).next().cloned();
        return Err(Error::invalid(format!(
            "{what}: no committed cluster can be recovered{}",
            why.map(|w| format!(" ({w})")).unwrap_or_default()
        )));
    }
    if let Some(out) = out {
        let (tfile_name, _) = tfile_record_end(&file, file_bytes, &what)?;
        let plan = output::Plan {
            file: &file,
            tfile_name: &tfile_name,
            data_start,
            cut: report.kept_bytes,
            journal: &journal,
            tuples: &scan.tuples,
        };
        output::write(&plan, out, options)?;
        report.output = Some(out.to_path_buf());
    }
    Ok(report)
}

fn check_output(broken: &Path, out: &Path, overwrite: bool) -> Result<()> {
    let refuse = |why: String| Err(Error::invalid(format!("{}: {why}", out.display())));
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    if canonical(out).is_some() && canonical(out) == canonical(broken) {
        return refuse("the output must not be the broken file".into());
    }
    if out.exists() && !overwrite {
        return refuse("exists; give overwrite (--force) to replace it".into());
    }
    Ok(())
}

/// The name in the `TFile` key at `fBEGIN` and the first byte after it.
fn tfile_record_end(file: &File, file_bytes: u64, what: &str) -> Result<(String, u64)> {
    let mut buf = vec![0u8; 512.min(file_bytes.saturating_sub(100)) as usize];
    read_at(file, &mut buf, 100, what)?;
    let (key, _) = KeyInfo::parse(&buf, 100).map_err(|e| e.within(&format!("{what}: its TFile record")))?;
    Ok((key.name, 100 + u64::from(key.nbytes)))
}

fn read_at(file: &File, buf: &mut [u8], offset: u64, what: &str) -> Result<()> {
    file.read_exact_at(buf, offset)
        .map_err(|e| Error::io(format!("{what} ({} bytes at offset {offset})", buf.len()), e))
}

/// An RNTuple as the journal describes it, with the clusters kept so far.
pub(crate) struct Tuple {
    pub(crate) name: String,
    pub(crate) header: EnvelopeLink,
    pub(crate) header_checksum: u64,
    pub(crate) compression: u32,
    pub(crate) clusters: Vec<(ClusterSummary, Vec<ColumnPageRange>)>,
    /// The footer of the last cluster kept (its schema extension).
    pub(crate) footer: Footer,
    /// The end of the file at the last cluster kept.
    pub(crate) end: u64,
    entries: u64,
    stopped: bool,
    dropped: Vec<String>,
    unverified_pages: u64,
}

impl Tuple {
    fn summary(&self) -> RecoveredRNTuple {
        RecoveredRNTuple {
            name: self.name.clone(),
            entries: self.entries,
            clusters: self.clusters.len(),
            dropped: self.dropped.clone(),
            unverified_pages: self.unverified_pages,
        }
    }
}

struct Scan<'a> {
    file: &'a File,
    file_bytes: u64,
    data_start: u64,
    what: &'a str,
    tuples: Vec<Tuple>,
}

impl Scan<'_> {
    /// Takes journal record `seq` in: its cluster is kept or dropped.
    fn record(&mut self, seq: u64, end: u64, payload: &[u8]) {
        let rec = match ClusterRecord::decode(payload, &format!("journal record {seq}")) {
            Ok(r) => r,
            // Written by this crate's writer with a valid checksum: only a
            // different version gets here; it names no RNTuple to drop from.
            Err(e) => {
                for t in &mut self.tuples {
                    t.stopped = true;
                }
                if let Some(t) = self.tuples.first_mut() {
                    t.dropped.push(e.to_string());
                }
                return;
            }
        };
        let i = match self.tuples.iter().position(|t| t.name == rec.name) {
            Some(i) => i,
            None => {
                self.tuples.push(Tuple {
                    name: rec.name.clone(),
                    header: rec.header,
                    header_checksum: rec.header_checksum,
                    compression: rec.compression,
                    clusters: Vec::new(),
                    footer: Footer::default(),
                    end: 0,
                    entries: 0,
                    stopped: false,
                    dropped: Vec::new(),
                    unverified_pages: 0,
                });
                self.tuples.len() - 1
            }
        };
        if self.tuples[i].stopped {
            self.tuples[i].dropped.push(format!("cluster of journal record {seq}: after a cluster dropped"));
            return;
        }
        let t = &self.tuples[i];
        if (t.header, t.header_checksum) != (rec.header, rec.header_checksum) {
            self.tuples[i].stopped = true;
            self.tuples[i].dropped.push(format!("cluster of journal record {seq}: another header envelope"));
            return;
        }
        let first = t.clusters.is_empty();
        match self.check(&rec, end, first, self.tuples[i].entries) {
            Ok((summary, ranges, footer, unverified)) => {
                let t = &mut self.tuples[i];
                let Some(entries) = t.entries.checked_add(summary.num_entries) else {
                    t.stopped = true;
                    t.dropped.push(format!(
                        "cluster of journal record {seq}: {} entries after {} overflow the entry count",
                        summary.num_entries, t.entries
                    ));
                    return;
                };
                t.entries = entries;
                t.clusters.push((summary, ranges));
                t.footer = footer;
                t.end = end;
                t.unverified_pages = t.unverified_pages.saturating_add(unverified);
            }
            Err(e) => {
                let t = &mut self.tuples[i];
                t.stopped = true;
                t.dropped.push(format!("cluster of journal record {seq}: {e}"));
            }
        }
    }

    /// Verifies one record's cluster; returns it, the footer, and the pages
    /// without a checksum.
    #[allow(clippy::type_complexity)]
    fn check(
        &self,
        rec: &ClusterRecord,
        end: u64,
        first: bool,
        next_entry: u64,
    ) -> Result<(ClusterSummary, Vec<ColumnPageRange>, Footer, u64)> {
        if end > self.file_bytes {
            return Err(Error::invalid(format!(
                "committed at {end} bytes but the file has {} (cut short later)",
                self.file_bytes
            )));
        }
        if first {
            self.check_header(rec, end)?;
        }
        let list = parse_page_list(&rec.page_list, true)?;
        let (Some(summary), Some(ranges), 1, 1) =
            (list.clusters.first(), list.page_locations.first(), list.clusters.len(), list.page_locations.len())
        else {
            return Err(Error::invalid("a page list not of exactly one cluster"));
        };
        if list.header_checksum != rec.header_checksum {
            return Err(Error::invalid("a page list of another header"));
        }
        if summary.first_entry != next_entry {
            return Err(Error::invalid(format!(
                "a cluster from entry {} where entry {next_entry} was next",
                summary.first_entry
            )));
        }
        let mut unverified = 0;
        for (c, range) in ranges.iter().enumerate() {
            for (p, page) in range.pages.iter().enumerate() {
                let loc = page.locator;
                let extra = if page.has_checksum { 8 } else { 0 };
                // Checked: the journal's sizes are input (a forged one must not overflow).
                let stop = loc
                    .size
                    .checked_add(extra)
                    .and_then(|n| loc.offset.checked_add(n))
                    .filter(|&s| loc.offset >= self.data_start && s <= end);
                if stop.is_none() {
                    return Err(Error::invalid(format!(
                        "page {p} of column {c} ({} bytes at {}) outside the bytes written before the commit",
                        loc.size, loc.offset
                    )));
                }
                if !page.has_checksum {
                    unverified += 1;
                    continue;
                }
                // Within the file (checked above), whose size bounds the buffer.
                let mut bytes = rntuple::format::alloc::try_zeroed((loc.size + 8) as usize, || {
                    format!("page {p} of column {c} ({} bytes at {})", loc.size, loc.offset)
                })?;
                read_at(self.file, &mut bytes, loc.offset, self.what)?;
                let (data, sum) = bytes.split_at(loc.size as usize);
                let stored = u64::from_le_bytes(sum.try_into().unwrap_or([0; 8]));
                let computed = xxh3_64(data);
                if stored != computed {
                    return Err(Error::ChecksumMismatch {
                        stored,
                        computed,
                        location: Location::new(format!("page {p} of column {c}"), Some(loc.offset)),
                    });
                }
            }
        }
        let footer = parse_footer(&rec.footer, true)?;
        Ok((*summary, ranges.clone(), footer, unverified))
    }

    fn check_header(&self, rec: &ClusterRecord, end: u64) -> Result<()> {
        let loc = rec.header.locator;
        if loc.offset < self.data_start || loc.offset.saturating_add(loc.size) > end {
            return Err(Error::invalid(format!(
                "the header envelope ({} bytes at {}) is not in the file",
                loc.size, loc.offset
            )));
        }
        let mut stored = rntuple::format::alloc::try_zeroed(loc.size as usize, || "header envelope".to_string())?;
        read_at(self.file, &mut stored, loc.offset, self.what)?;
        let location = Location::new("header envelope", Some(loc.offset));
        let bytes = if loc.size == rec.header.length {
            stored
        } else {
            let len = rntuple::format::compression::guard_expansion(loc.size, rec.header.length, &location)?;
            rntuple::format::compression::decompress(&stored, len, &location)?
        };
        parse_header(&bytes, true)?;
        let computed = rntuple::format::envelope::header_checksum(&bytes)?;
        if computed != rec.header_checksum {
            return Err(Error::ChecksumMismatch { stored: rec.header_checksum, computed, location });
        }
        Ok(())
    }
}
