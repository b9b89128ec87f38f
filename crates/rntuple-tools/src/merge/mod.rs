//! `merge`: concatenates the RNTuples of one name from several files into a
//! new file.
//!
//! The schema follows ROOT's `RNTupleMerger` modes (see [`plan`] and
//! `docs/tools.md`). Pages whose column range has the output's compression
//! setting and whose column type is the output's are copied as stored,
//! without being decompressed (ROOT's fast path); the others are resealed.
//! The output compression is the one asked for, else the first input's (the
//! setting of its first column range), i.e. `hadd -ff`.
//!
//! Each input cluster group becomes one output cluster group, each input
//! cluster one output cluster. The file is written to a temporary file next
//! to the output (`.NAME.PID.rntuple-merge.tmp`, starting with the
//! container's "not completed" placeholder until it is complete) and renamed
//! over the output only when complete: on an error or an interruption the
//! temporary file is removed and no output appears.
//!
//! Format versions: an input written in a newer format version than this
//! merger's ([`FORMAT_VERSION`], 1.0.2.x) is merged with a warning
//! ([`MergeSummary::warnings`]), as ROOT's merger warns; what the merger
//! could not copy faithfully is refused: envelope records holding bytes of a
//! later version (a field record with members appended) would lose them, so
//! such an input is refused naming the record (inputs with unknown feature
//! flags are refused when they are opened). The output never has an empty
//! cluster group (forbidden from format 1.0.2.2): a group is written only
//! when it received a cluster, so inputs without entries add none.
//!
//! Attribute sets (spec "Linked Attribute Set Record Frame") are left out of
//! the output, as ROOT 6.40's `RNTupleMerger` leaves them out (its merged
//! footer links none); [`MergeSummary::attribute_sets_dropped`] names each
//! one so that the command says so.

mod copy;
mod plan;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rntuple::container::storage::StorageUrl;
use rntuple::container::write::{FileWriter, WriterOptions};
use rntuple::format::constants::FORMAT_VERSION;
use rntuple::format::{Error, Location, Result};
use rntuple::write::{FooterParts, PageSink, SinkOptions};

pub use copy::PageStats;

use crate::load::{load, open_root, resolve_name, Loaded};
use crate::progress::{check, Progress};

/// How inputs with different schemas are merged (ROOT's `ENTupleMergingMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MergeMode {
    /// Every input has exactly the first input's top-level fields.
    #[default]
    Strict,
    /// Fields missing in an input are written as default values; fields that
    /// appear in later inputs are added (schema extension, deferred columns).
    Union,
    /// The first input's fields are kept; later inputs must have them, their
    /// other fields are left out (ROOT's and `hadd`'s default).
    Filter,
}

impl fmt::Display for MergeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MergeMode::Strict => "strict",
            MergeMode::Union => "union",
            MergeMode::Filter => "filter",
        })
    }
}

impl FromStr for MergeMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "strict" => Ok(MergeMode::Strict),
            "union" => Ok(MergeMode::Union),
            "filter" => Ok(MergeMode::Filter),
            _ => Err(Error::invalid(format!("unknown merge mode '{s}' (use strict, union or filter)"))),
        }
    }
}

/// Parses a compression setting: a number (`505`, `0`) or an algorithm name
/// with an optional level (`zstd`, `zstd:7`, `lz4`, `none`), by the one
/// parser every entry point uses ([`rntuple::write::Compression::parse`]).
pub fn parse_compression(s: &str) -> Result<u32> {
    Ok(rntuple::write::Compression::parse(s)?.setting())
}

/// Options of [`merge`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOptions {
    /// The RNTuple to merge (a path like `"Events"` or `"dir/Events"`);
    /// `None`: the only RNTuple of the first input.
    pub name: Option<String>,
    pub mode: MergeMode,
    /// Output compression setting; `None`: the first input's.
    pub compression: Option<u32>,
    /// Verify checksums of anchors, envelopes and copied pages (default true).
    pub verify_checksums: bool,
    /// Replace an existing output file (default false: refuse).
    pub overwrite: bool,
    /// `fsync` the output before it is renamed into place (default false).
    pub sync: bool,
    /// Threads that recompress pages; 0: one per core.
    pub threads: usize,
}

impl Default for MergeOptions {
    fn default() -> Self {
        Self {
            name: None,
            mode: MergeMode::Strict,
            compression: None,
            verify_checksums: true,
            overwrite: false,
            sync: false,
            threads: 0,
        }
    }
}

/// What [`merge`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSummary {
    /// The RNTuple merged.
    pub name: String,
    pub inputs: usize,
    pub entries: u64,
    pub clusters: usize,
    pub cluster_groups: usize,
    /// The output's compression setting.
    pub compression: u32,
    pub pages: PageStats,
    /// Top-level fields added by `union`, as `"name (from FILE, entry N)"`.
    pub fields_added: Vec<String>,
    /// Top-level fields left out by `filter`, as `"name (from FILE)"`.
    pub fields_dropped: Vec<String>,
    /// Attribute sets of the inputs, all left out (as ROOT 6.40's merger
    /// does), as `"name (from FILE)"`.
    pub attribute_sets_dropped: Vec<String>,
    /// Things the user should know that did not stop the merge (an input
    /// written in a newer format version than this merger's).
    pub warnings: Vec<String>,
    /// Size of the output file.
    pub bytes: u64,
}

/// A temporary output next to the final one, removed unless renamed.
struct TempOutput {
    path: PathBuf,
    done: bool,
}

impl TempOutput {
    fn new(out: &Path) -> Result<Self> {
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| Error::invalid(format!("output path '{}' has no file name", out.display())))?;
        let dir = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(Error::io(
                format!("output directory {}", dir.display()),
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such directory"),
            ));
        }
        let path = dir.join(format!(".{name}.{}.rntuple-merge.tmp", std::process::id()));
        Ok(Self { path, done: false })
    }

    fn commit(mut self, out: &Path) -> Result<()> {
        std::fs::rename(&self.path, out)
            .map_err(|e| Error::io(format!("renaming {} to {}", self.path.display(), out.display()), e))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The compression setting of the first column range of the first input
/// that has one.
fn first_compression(inputs: &[Loaded]) -> Option<u32> {
    inputs.iter().flat_map(|l| &l.descriptor.clusters).flat_map(|c| &c.columns).find_map(|r| r.compression)
}

/// Merges the RNTuple `options.name` of `inputs` into a new file `out`.
pub fn merge(out: &Path, inputs: &[&Path], options: &MergeOptions, progress: &dyn Progress) -> Result<MergeSummary> {
    if inputs.is_empty() {
        return Err(Error::invalid("no input files to merge"));
    }
    if let Some(p) = inputs.iter().find(|p| same_file(p, out)) {
        return Err(Error::invalid(format!("the output {} is also an input ({})", out.display(), p.display())));
    }
    // A URL is written by its store's sink, which never shows an
    // unfinished file ("Writing to a URL" in docs/remote.md): no local
    // checks, no temporary file, and a URL replaces what it names.
    let remote = is_remote(out);
    if !remote && out.exists() && !options.overwrite {
        return Err(Error::invalid(format!(
            "the output {} exists; overwrite it explicitly (--force / overwrite=True)",
            out.display()
        )));
    }
    if !remote && out.is_dir() {
        return Err(Error::invalid(format!("the output {} is a directory", out.display())));
    }
    if let Some(c) = options.compression {
        rntuple::write::Compression::from_setting(c)?;
    }
    let first = inputs[0].display().to_string();
    let root0 = open_root(inputs[0], options.verify_checksums).map_err(|e| e.within(&first))?;
    let name = resolve_name(&root0, &first, options.name.as_deref())?;
    let mut loaded = Vec::with_capacity(inputs.len());
    for (i, p) in inputs.iter().enumerate() {
        check(progress, "merge")?;
        let file = p.display().to_string();
        let root = if i == 0 { root0.clone() } else { open_root(p, options.verify_checksums)? };
        let l = load(root, &file, &name, options.verify_checksums).map_err(|e| match e {
            Error::NotFound { .. } => Error::NotFound { what: format!("RNTuple '{name}' in input {file}") },
            e => e.within(&format!("input {file}")),
        })?;
        loaded.push(l);
    }
    let mut warnings = Vec::new();
    for l in &loaded {
        check_format(l, &mut warnings)?;
    }
    let writer = format!("rntuple (Rust) v{} merge", env!("CARGO_PKG_VERSION"));
    let plan = plan::plan(&loaded, options.mode, writer)?;
    let target = options.compression.or_else(|| first_compression(&loaded)).unwrap_or(505);
    rntuple::write::Compression::from_setting(target)?;

    let temp = if remote { None } else { Some(TempOutput::new(out)?) };
    let mut file = FileWriter::create(
        temp.as_ref().map_or(out, |t| t.path.as_path()),
        WriterOptions { compression: target, sync: options.sync, ..Default::default() },
    )?;
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let sink_options = SinkOptions { compression: target, cluster_group_size: 0, journal: false };
    let mut sink = copy::Sink::new(PageSink::new(&mut file, &name, sink_options), target);
    sink.pages.write_header(&plan.header)?;

    let total: u64 = loaded
        .iter()
        .flat_map(|l| &l.descriptor.clusters)
        .flat_map(|c| &c.columns)
        .flat_map(|r| &r.pages)
        .map(|p| p.locator.size + if p.has_checksum { 8 } else { 0 })
        .fold(0u64, |a, b| a.saturating_add(b));
    progress.start("merging", total, "B");
    let ctx = copy::Ctx { plan: &plan, verify_checksums: options.verify_checksums, threads, progress };
    let mut next: Vec<u64> =
        plan.columns.iter().map(|c| c.first_element_index.filter(|&f| f > 0).map_or(0, |f| f as u64)).collect();
    let mut clusters = 0usize;
    for (k, l) in loaded.iter().enumerate() {
        let cs = &l.descriptor.clusters;
        for (i, c) in cs.iter().enumerate() {
            check(progress, "merge")?;
            let ranges = copy::merge_cluster(&ctx, &mut sink, &mut next, k, l, c)?;
            sink.pages.record_cluster(c.num_entries, ranges, None)?;
            clusters += 1;
            // The inputs' cluster groups stay groups.
            if cs.get(i + 1).is_none_or(|n| n.group != c.group) {
                sink.pages.commit_cluster_group()?;
            }
        }
    }
    progress.finish();

    let entries = sink.pages.num_entries();
    let cluster_groups = sink.pages.num_cluster_groups();
    let footer = FooterParts {
        feature_flags: loaded[0].footer.feature_flags.clone(),
        schema_extension: plan.extension.clone(),
        // Left out, as ROOT 6.40's merger does (see the module's documentation).
        attribute_sets: Vec::new(),
    };
    let anchor = sink.pages.finish(footer)?;
    // The classes of the streamer fields copied, in the output's streamer-info record too.
    let infos = plan.header.schema.extra_type_info.iter().chain(&plan.extension.extra_type_info);
    warnings.extend(rntuple::write::list_streamer_classes(infos, sink.pages.dest()));
    check(progress, "merge")?;
    sink.pages.write_anchor(&anchor)?;
    let stats = sink.stats;
    drop(sink);
    let mut bytes = file.len();
    file.finish()?;
    if let Some(temp) = temp {
        bytes = std::fs::metadata(&temp.path).map(|m| m.len()).unwrap_or(bytes);
        temp.commit(out)?;
    }
    Ok(MergeSummary {
        name,
        inputs: inputs.len(),
        entries,
        clusters,
        cluster_groups,
        compression: target,
        pages: stats,
        fields_added: plan.added,
        fields_dropped: plan.dropped,
        attribute_sets_dropped: loaded
            .iter()
            .flat_map(|l| l.footer.attribute_sets.iter().map(move |a| format!("{} (from {})", a.name, l.file)))
            .collect(),
        warnings,
        bytes,
    })
}

/// Warns about an input of a newer format version than [`FORMAT_VERSION`]
/// (ROOT's merger warns likewise) and refuses one whose envelope records
/// carry bytes of a later version, which the merged output would lose.
fn check_format(l: &Loaded, warnings: &mut Vec<String>) -> Result<()> {
    let a = &l.anchor;
    let version = (a.version_epoch, a.version_major, a.version_minor);
    let ours = (FORMAT_VERSION.0, FORMAT_VERSION.1, FORMAT_VERSION.2);
    if version > ours {
        warnings.push(format!(
            "input {} was written in format {}.{}.{}.{}, newer than this merger's {}.{}.{}.x; \
             features of the newer format that do not need a feature flag may be lost",
            l.file, a.version_epoch, a.version_major, a.version_minor, a.version_patch, ours.0, ours.1, ours.2
        ));
    }
    let records = l
        .header
        .schema
        .unknown_trailing_bytes
        .iter()
        .map(|(r, n)| (r, n, "header"))
        .chain(l.footer.schema_extension.unknown_trailing_bytes.iter().map(|(r, n)| (r, n, "footer schema extension")))
        .next();
    if let Some((record, n, envelope)) = records {
        return Err(Error::unsupported(
            format!(
                "merging a {envelope} whose {record} record carries {n} bytes of a later format version \
                 (the merged file would lose them)"
            ),
            Location::new(format!("input {}", l.file), None),
        ));
    }
    Ok(())
}

/// Whether `out` is a URL of a remote store (not a local path or `file://`).
fn is_remote(out: &Path) -> bool {
    matches!(out.to_str().map(StorageUrl::parse), Some(Ok(StorageUrl::Remote { .. })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_settings() {
        assert_eq!(parse_compression("505").unwrap(), 505);
        assert_eq!(parse_compression("zstd").unwrap(), 505);
        assert_eq!(parse_compression("ZSTD:7").unwrap(), 507);
        assert_eq!(parse_compression("lz4").unwrap(), 404);
        assert_eq!(parse_compression("lzma").unwrap(), 207);
        assert_eq!(parse_compression("zlib").unwrap(), 101);
        assert_eq!(parse_compression("none").unwrap(), 0);
        for bad in ["", "zstd:0", "zstd:x", "brotli", "901", "301"] {
            assert!(parse_compression(bad).is_err(), "{bad}");
        }
    }

    fn loaded(name: &str) -> Loaded {
        let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data")).join(name);
        let root = open_root(&path, true).expect("open");
        let rntuple = resolve_name(&root, name, None).expect("name");
        load(root, name, &rntuple, true).expect("load")
    }

    #[test]
    fn newer_inputs_warn_and_ours_do_not() {
        let mut l = loaded("double_real32quant_rntuple_v1-0-2-0.root");
        let mut warnings = Vec::new();
        check_format(&l, &mut warnings).expect("1.0.2.0 merges");
        assert!(warnings.is_empty(), "{warnings:?}");
        l.anchor.version_patch = 9; // 1.0.2.9: still ours
        check_format(&l, &mut warnings).expect("1.0.2.9 merges");
        assert!(warnings.is_empty(), "{warnings:?}");
        l.anchor.version_minor = 3;
        l.anchor.version_patch = 0;
        check_format(&l, &mut warnings).expect("1.0.3.0 merges with a warning");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("format 1.0.3.0, newer than this merger's 1.0.2.x"), "{}", warnings[0]);
        assert!(warnings[0].contains("double_real32quant_rntuple_v1-0-2-0.root"), "{}", warnings[0]);
    }

    #[test]
    fn records_with_bytes_of_a_later_version_are_refused() {
        // What the header parser reports for a field record with appended
        // members (rntuple-format's `unknown_trailing_data_is_skipped`).
        let mut l = loaded("ntpl001_staff_rntuple_v1-0-0-0.root");
        l.header.schema.unknown_trailing_bytes.push(("field 2 'Age'".into(), 8));
        let e = check_format(&l, &mut Vec::new()).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        let m = e.to_string();
        assert!(m.contains("header") && m.contains("field 2 'Age'") && m.contains("8 bytes"), "{m}");
        let mut l = loaded("ntpl001_staff_rntuple_v1-0-0-0.root");
        l.footer.schema_extension.unknown_trailing_bytes.push(("column 0".into(), 4));
        let m = check_format(&l, &mut Vec::new()).unwrap_err().to_string();
        assert!(m.contains("footer schema extension") && m.contains("column 0"), "{m}");
    }

    #[test]
    fn modes() {
        assert_eq!("Union".parse::<MergeMode>().unwrap(), MergeMode::Union);
        assert_eq!(MergeMode::Filter.to_string(), "filter");
        assert!("both".parse::<MergeMode>().is_err());
    }
}
