//! `verify`: reads every envelope and every page of RNTuple files and checks
//! every checksum and structural invariant, reporting each problem with its
//! location and going on to the next one where it can.
//!
//! The checks, in order (each is listed in `docs/tools.md`):
//!
//! 1. the ROOT file: header, top directory, key lists (the container's
//!    checks);
//! 2. per RNTuple: the anchor (its xxh3, version), the header and footer
//!    envelopes and every page list envelope (locators inside the file,
//!    decompression to the announced length, envelope type and length,
//!    xxh3 checksums, the header checksum quoted by footer and page lists,
//!    frames, feature flags); a checksum mismatch is reported and the
//!    envelope is then read without it, so that later problems still show;
//! 3. the descriptor: field and column references, parent cycles, cluster
//!    groups against their page lists, clusters partitioning the entries;
//! 4. every page: locator inside the file and not partially overlapping
//!    another page or an envelope, its xxh3 checksum, decompression to exactly
//!    the size its element count needs, decoding;
//! 5. per cluster and field: element counts of every column against the
//!    entries (and array sizes) or the parent collection's offsets, element
//!    offsets continuing from cluster to cluster, index columns monotone and
//!    ending at their child's element count, optional values of at most one
//!    element, variant tags and indices inside their alternatives, exactly
//!    one primary column representation per field and cluster;
//! 6. when nothing was found so far: every cluster read through the reader
//!    (`rntuple::RNTuple::read`), which assembles the values of every field.
//!
//! Nothing is allocated before it is checked against the file's size (the
//! format and container crates' readers refuse what the input cannot
//! justify), so hostile files are reported, not crashed on.

mod pages;
mod structure;

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rntuple::attributes::read_anchor;
use rntuple::container::{Anchor, KeyInfo, LocalFile, OpenOptions, RootFile};
use rntuple::format::model::{Footer, Header, PageList};
use rntuple::format::Error;
use rntuple::{load_envelopes, load_from_anchor, Checks, Found};

use crate::progress::Progress;

/// What to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Read every cluster through the reader when no problem was found
    /// before (step 6). Default true.
    pub read_values: bool,
    /// Most problems kept per file (later ones are only counted). Default 1000.
    pub max_problems: usize,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self { read_values: true, max_problems: 1000 }
    }
}

/// One problem found in a file, with where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// The RNTuple (its path in the file), if the problem is inside one.
    pub rntuple: Option<String>,
    /// Dotted path of the field concerned.
    pub field: Option<String>,
    /// Physical column id.
    pub column: Option<u32>,
    pub cluster: Option<usize>,
    /// Index of the page in its column's page list of the cluster.
    pub page: Option<usize>,
    /// Absolute byte offset in the file, when known.
    pub offset: Option<u64>,
    /// Kind of check that failed: `"file"`, `"anchor"`, `"envelope"`,
    /// `"checksum"`, `"schema"`, `"clusters"`, `"locator"`, `"overlap"`,
    /// `"page"`, `"decompression"`, `"elements"`, `"offsets"`, `"values"`, ...
    pub check: &'static str,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(n) = &self.rntuple {
            write!(f, ":{n}")?;
        }
        let mut parts = Vec::new();
        if let Some(c) = self.cluster {
            parts.push(format!("cluster {c}"));
        }
        match (&self.field, self.column) {
            (Some(field), Some(c)) => parts.push(format!("column {c} (field {field})")),
            (Some(field), None) => parts.push(format!("field {field}")),
            (None, Some(c)) => parts.push(format!("column {c}")),
            (None, None) => {}
        }
        if let Some(p) = self.page {
            parts.push(format!("page {p}"));
        }
        if let Some(o) = self.offset {
            if !self.message.contains(&format!("offset {o}")) {
                parts.push(format!("byte offset {o}"));
            }
        }
        if !parts.is_empty() {
            write!(f, ": {}", parts.join(", "))?;
        }
        write!(f, ": {}: {}", self.check, self.message)
    }
}

/// The outcome of verifying one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileReport {
    pub file: String,
    /// RNTuples found and checked.
    pub rntuples: Vec<String>,
    /// The first [`VerifyOptions::max_problems`] problems.
    pub problems: Vec<Problem>,
    /// All problems found, including those not kept.
    pub num_problems: usize,
    pub num_pages: u64,
    /// Page bytes read and checked (checksums included).
    pub page_bytes: u64,
    /// Stopped by the progress (e.g. Ctrl-C) before the end.
    pub interrupted: bool,
}

impl FileReport {
    /// Whether the file passed every check.
    pub fn is_ok(&self) -> bool {
        self.num_problems == 0 && !self.interrupted
    }
}

/// Collects the problems of one file.
pub(crate) struct Reporter<'a> {
    pub(crate) report: FileReport,
    pub(crate) rntuple: Option<String>,
    max: usize,
    pub(crate) progress: &'a dyn Progress,
}

impl Reporter<'_> {
    /// Records a problem; `rntuple` is filled in from the current one.
    pub(crate) fn add(&mut self, mut p: Problem) {
        if p.rntuple.is_none() {
            p.rntuple = self.rntuple.clone();
        }
        self.report.num_problems += 1;
        if self.report.problems.len() < self.max {
            self.report.problems.push(p);
        }
    }

    /// A problem from an error, with its check named after the error kind.
    pub(crate) fn error(&mut self, e: &Error, at: Where) {
        let check = match e {
            Error::ChecksumMismatch { .. } => "checksum",
            Error::Truncated { .. } => "truncated",
            Error::Decompression { .. } => "decompression",
            // a size over the expansion guard or over an absolute cap (envelope, page)
            Error::WouldOverAllocate { .. } | Error::OverBudget { .. } => "size",
            Error::Unsupported { .. } => "unsupported",
            Error::NotFound { .. } => "missing",
            Error::Io { .. } => "io",
            _ => at.check,
        };
        let offset = e.location().and_then(|l| l.offset).or(at.offset);
        self.structure(Where { check, offset, ..at }, e.to_string());
    }

    /// A problem of a structural check.
    pub(crate) fn structure(&mut self, at: Where, message: String) {
        self.add(Problem {
            file: self.report.file.clone(),
            rntuple: None,
            field: at.field,
            column: at.column,
            cluster: at.cluster,
            page: at.page,
            offset: at.offset,
            check: at.check,
            message,
        });
    }

    pub(crate) fn cancelled(&mut self) -> bool {
        if self.progress.cancelled() {
            self.report.interrupted = true;
        }
        self.report.interrupted
    }
}

/// Where a check looks (all optional) and its name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Where {
    pub(crate) check: &'static str,
    pub(crate) field: Option<String>,
    pub(crate) column: Option<u32>,
    pub(crate) cluster: Option<usize>,
    pub(crate) page: Option<usize>,
    pub(crate) offset: Option<u64>,
}

impl Where {
    pub(crate) fn check(check: &'static str) -> Self {
        Self { check, ..Default::default() }
    }
    pub(crate) fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }
    pub(crate) fn cluster(mut self, c: usize) -> Self {
        self.cluster = Some(c);
        self
    }
    pub(crate) fn column(mut self, c: u32) -> Self {
        self.column = Some(c);
        self
    }
    pub(crate) fn field(mut self, f: &str) -> Self {
        self.field = Some(f.to_string());
        self
    }
    pub(crate) fn page(mut self, p: usize) -> Self {
        self.page = Some(p);
        self
    }
}

/// Verifies several files, one after the other.
pub fn verify_files(paths: &[&Path], options: VerifyOptions, progress: &dyn Progress) -> Vec<FileReport> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        let r = verify_file(p, options, progress);
        let stop = r.interrupted;
        out.push(r);
        if stop {
            break;
        }
    }
    out
}

/// Verifies one file: every RNTuple in it (every directory), every envelope,
/// every page.
pub fn verify_file(path: &Path, options: VerifyOptions, progress: &dyn Progress) -> FileReport {
    let file = path.display().to_string();
    let mut r = Reporter {
        report: FileReport { file: file.clone(), ..Default::default() },
        rntuple: None,
        max: options.max_problems.max(1),
        progress,
    };
    // A path or URL (`file://`, a remote scheme).
    let opened = match path.to_str() {
        Some(location) => rntuple::container::open_storage(location),
        None => LocalFile::open(path).map(|f| Arc::new(f) as Arc<dyn rntuple::container::ReadAt>),
    };
    let storage = match opened {
        Ok(s) => s,
        Err(e) => {
            r.error(&e, Where::check("file"));
            return r.report;
        }
    };
    let root = match RootFile::from_storage_with(storage, OpenOptions { verify_checksums: true, cache: None }) {
        Ok(root) => Arc::new(root),
        Err(e) => {
            r.error(&e, Where::check("file"));
            return r.report;
        }
    };
    let keys = match root.keys() {
        Ok(k) => k,
        Err(e) => {
            r.error(&e, Where::check("file"));
            return r.report;
        }
    };
    // One anchor per path: its highest cycle, as readers pick it.
    let mut anchors: Vec<KeyInfo> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for k in keys.into_iter().filter(|k| k.is_rntuple()) {
        match index.get(&k.path) {
            Some(&i) if anchors[i].cycle >= k.cycle => {}
            Some(&i) => anchors[i] = k,
            None => {
                index.insert(k.path.clone(), anchors.len());
                anchors.push(k);
            }
        }
    }
    for key in anchors {
        if r.cancelled() {
            break;
        }
        r.rntuple = Some(key.path.clone());
        r.report.rntuples.push(key.path.clone());
        verify_rntuple(&root, &key, options, &mut r);
        r.rntuple = None;
    }
    r.report
}

/// The envelopes of one RNTuple as far as they could be read.
pub(crate) struct Envelopes {
    pub(crate) anchor: Anchor,
    /// Bytes of the file holding the anchor object (its key's payload).
    pub(crate) anchor_extent: (u64, u64),
    /// For an attribute set: the main RNTuple's name and the set's name.
    pub(crate) attribute_set: Option<(String, String)>,
    pub(crate) header: Header,
    pub(crate) footer: Footer,
    /// `None` for a page list that could not be read.
    pub(crate) page_lists: Vec<Option<PageList>>,
}

/// Loads the envelopes through the engine's loader (`load`: from a key or
/// from an attribute set's anchor) in its report-and-go-on mode: every
/// problem is reported, a checksum mismatch does not stop the checks that
/// follow it.
fn read_envelopes(
    load: impl FnOnce(&mut Checks<'_>) -> std::result::Result<rntuple::Envelopes, Found>,
    anchor_extent: (u64, u64),
    attribute_set: Option<(String, String)>,
    r: &mut Reporter<'_>,
) -> Option<Envelopes> {
    let mut report = |f: Found| {
        let mut at = Where::check(f.check);
        at.offset = f.offset;
        r.error(&f.error, at);
    };
    let loaded = load(&mut Checks::Report(&mut report)).ok()?;
    for (g, (cg, pl)) in loaded.footer.cluster_groups.iter().zip(&loaded.page_lists).enumerate() {
        if let Some(pl) = pl {
            check_group(cg, pl, g, cg.page_list.locator.offset, r);
        }
    }
    let rntuple::Envelopes { anchor, header, footer, page_lists, .. } = loaded;
    Some(Envelopes { anchor, anchor_extent, attribute_set, header, footer, page_lists })
}

/// A cluster group's summary against the clusters of its page list.
fn check_group(
    cg: &rntuple::format::model::ClusterGroupDescriptor,
    pl: &PageList,
    g: usize,
    offset: u64,
    r: &mut Reporter<'_>,
) {
    let at = || Where::check("clusters").at(offset);
    if u64::from(cg.num_clusters) != pl.clusters.len() as u64 {
        r.structure(
            at(),
            format!(
                "cluster group {g}: the footer says {} clusters, its page list has {}",
                cg.num_clusters,
                pl.clusters.len()
            ),
        );
    }
    if pl.clusters.is_empty() {
        return;
    }
    let min = pl.clusters.iter().map(|c| c.first_entry).min().unwrap_or(0);
    let span = pl.clusters.iter().fold(0u64, |s, c| s.saturating_add(c.num_entries));
    if cg.min_entry != min {
        r.structure(
            at(),
            format!("cluster group {g}: the footer says it starts at entry {}, its clusters at {min}", cg.min_entry),
        );
    }
    if cg.entry_span != span {
        r.structure(
            at(),
            format!("cluster group {g}: the footer says it spans {} entries, its clusters hold {span}", cg.entry_span),
        );
    }
}

fn verify_rntuple(root: &Arc<RootFile>, key: &KeyInfo, options: VerifyOptions, r: &mut Reporter<'_>) {
    let problems_before = r.report.num_problems;
    let extent = (key.payload_offset(), key.payload_offset().saturating_add(u64::from(key.stored_len())));
    let Some(env) =
        read_envelopes(|checks| load_envelopes(root, key, checks, rntuple::DEFAULT_MAX_ENVELOPE_SIZE), extent, None, r)
    else {
        return;
    };
    pages::verify_data(root, &env, options, problems_before, r);
    verify_attribute_sets(root, &env, options, r);
}

/// Every linked attribute set (spec "Linked Attribute Set Record Frame") is
/// an RNTuple of its own: its anchor, envelopes and pages get the same
/// checks, reported under `MAIN/attribute set NAME`.
fn verify_attribute_sets(root: &Arc<RootFile>, main: &Envelopes, options: VerifyOptions, r: &mut Reporter<'_>) {
    let main_name = r.rntuple.clone().unwrap_or_default();
    for link in &main.footer.attribute_sets {
        if r.cancelled() {
            break;
        }
        let name = format!("{main_name}/attribute set {}", link.name);
        r.rntuple = Some(name.clone());
        let problems_before = r.report.num_problems;
        let loc = link.anchor_locator;
        let anchor = match read_anchor(root, link, main.anchor.max_key_size, true, &name) {
            Ok(a) => a,
            Err(e) => {
                r.error(&e, Where::check("anchor").at(loc.offset));
                continue;
            }
        };
        let extent = (loc.offset, loc.offset.saturating_add(loc.size));
        let set = Some((main_name.clone(), link.name.clone()));
        let Some(env) = read_envelopes(
            |checks| load_from_anchor(root, anchor, checks, rntuple::DEFAULT_MAX_ENVELOPE_SIZE),
            extent,
            set,
            r,
        ) else {
            continue;
        };
        pages::verify_data(root, &env, options, problems_before, r);
    }
    r.rntuple = Some(main_name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_their_place() {
        let p = Problem {
            file: "a.root".into(),
            rntuple: Some("Events".into()),
            field: Some("Muon.pt".into()),
            column: Some(7),
            cluster: Some(3),
            page: Some(2),
            offset: Some(1234),
            check: "checksum",
            message: "stored 0x1, computed 0x2".into(),
        };
        assert_eq!(
            p.to_string(),
            "a.root:Events: cluster 3, column 7 (field Muon.pt), page 2, byte offset 1234: checksum: stored 0x1, computed 0x2"
        );
        let q = Problem { rntuple: None, field: None, column: None, cluster: None, page: None, offset: None, ..p };
        assert_eq!(q.to_string(), "a.root: checksum: stored 0x1, computed 0x2");
    }
}
