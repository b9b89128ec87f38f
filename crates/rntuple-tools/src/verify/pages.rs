//! The descriptor, page and value checks of one RNTuple (steps 3 to 6 of
//! [`super`]).

use std::collections::HashMap;
use std::sync::Arc;

use rntuple::container::RootFile;
use rntuple::descriptor::{ClusterInfo, Descriptor};
use rntuple::format::column::{decode_page, ColumnSpec, ColumnValues};
use rntuple::format::compression::Decompressor;
use rntuple::format::model::{ColumnDescriptor, ColumnPageRange, ColumnType, PageDescriptor};
use rntuple::format::Location;
use rntuple::{check_page_checksum, unseal_page, Checks, Found};
use rntuple::{RNTupleFile, ReadOptions, Schema};

use super::structure::{check_cluster, ClusterData, Listing, Offsets, Tree};
use super::{Envelopes, Reporter, VerifyOptions, Where};

/// Most page bytes read at once.
const READ_BATCH: u64 = 32 << 20;

/// Most decoded elements of index and switch columns kept per cluster for
/// the structural checks (columns beyond it are checked page by page only).
const MAX_KEPT_ELEMENTS: u64 = 1 << 26;

/// Pages of a cluster as the page pass sees them.
struct ClusterView<'a> {
    id: usize,
    columns: &'a [ColumnPageRange],
}

/// What lies in a byte range of the file.
#[derive(Clone, Copy)]
enum Holds {
    Anchor,
    Header,
    Footer,
    PageList(usize),
    /// Page `page` of column `column` in cluster `cluster`.
    Page {
        cluster: usize,
        column: usize,
        page: usize,
    },
}

impl Holds {
    fn describe(self) -> String {
        match self {
            Holds::Anchor => "the anchor".into(),
            Holds::Header => "the header envelope".into(),
            Holds::Footer => "the footer envelope".into(),
            Holds::PageList(g) => format!("the page list of cluster group {g}"),
            Holds::Page { cluster, column, page } => format!("page {page} of column {column} in cluster {cluster}"),
        }
    }
}

/// A byte range of the file and what lies there, for the overlap check
/// (small: there is one per page).
struct Extent {
    start: u64,
    end: u64,
    holds: Holds,
}

impl Extent {
    /// Pages may share identical byte ranges (same-page merging).
    fn is_page(&self) -> bool {
        matches!(self.holds, Holds::Page { .. })
    }
}

/// Steps 3 to 6; the value pass runs only when the RNTuple had no problem
/// (`problems_before` were found before it).
pub(super) fn verify_data(
    root: &Arc<RootFile>,
    env: &Envelopes,
    options: VerifyOptions,
    problems_before: usize,
    r: &mut Reporter<'_>,
) {
    let mut columns: Vec<ColumnDescriptor> = env.header.schema.columns.clone();
    columns.extend(env.footer.schema_extension.columns.iter().cloned());

    // Step 3: the descriptor and the schema (only with every page list).
    let complete = env.page_lists.iter().all(|p| p.is_some());
    let mut descriptor = None;
    let mut schema = None;
    if complete {
        let lists: Vec<_> = env.page_lists.iter().flatten().cloned().collect();
        match Descriptor::new(env.header.clone(), env.footer.clone(), lists) {
            Ok(d) => match Schema::from_descriptor(&d) {
                Ok(s) => {
                    schema = Some(s);
                    descriptor = Some(d);
                }
                Err(e) => r.error(&e, Where::check("schema")),
            },
            Err(e) => r.error(&e, Where::check("schema")),
        }
    }
    let tree = descriptor.as_ref().zip(schema.as_ref()).map(|(d, s)| Tree::new(d, s));

    // The clusters, from the descriptor (sorted, validated) or the page lists as they are.
    let views: Vec<ClusterView<'_>> = match &descriptor {
        Some(d) => d.clusters.iter().map(|c| ClusterView { id: c.id, columns: &c.columns }).collect(),
        None => env
            .page_lists
            .iter()
            .flatten()
            .flat_map(|pl| pl.clusters.iter().zip(&pl.page_locations))
            .enumerate()
            .map(|(id, (_, cols))| ClusterView { id, columns: cols })
            .collect(),
    };
    check_extents(root, env, &views, r);

    // Step 4 and 5: every page, cluster by cluster.
    let field_of = |c: usize| -> Option<String> {
        let f = columns.get(c)?.field_id as usize;
        tree.as_ref().map(|t| t.path(f).to_string())
    };
    let specs: Vec<Option<ColumnSpec>> = columns
        .iter()
        .enumerate()
        .map(|(c, cd)| match ColumnSpec::from_descriptor(cd) {
            Ok(s) => Some(s),
            Err(e) => {
                let mut w = Where::check("schema").column(c as u32);
                w.field = field_of(c);
                r.error(&e, w);
                None
            }
        })
        .collect();
    let total: u64 = views
        .iter()
        .flat_map(|v| v.columns.iter())
        .flat_map(|c| c.pages.iter())
        .map(|p| p.locator.size + if p.has_checksum { 8 } else { 0 })
        .fold(0u64, |a, b| a.saturating_add(b));
    r.progress.start(&format!("verifying {}", r.rntuple.as_deref().unwrap_or("")), total, "B");
    let mut offsets = Offsets::new(columns.len());
    let mut reported_extra_columns = false;
    for v in &views {
        if r.cancelled() {
            break;
        }
        if v.columns.len() > columns.len() && !reported_extra_columns {
            reported_extra_columns = true;
            r.structure(
                Where::check("clusters").cluster(v.id),
                format!("the page list lists {} columns, the schema has {}", v.columns.len(), columns.len()),
            );
        }
        let mut listing = vec![Listing::Absent; columns.len()];
        let mut values: HashMap<u32, ColumnValues> = HashMap::new();
        let mut kept = 0u64;
        for (c, range) in v.columns.iter().enumerate().take(columns.len()) {
            if r.cancelled() {
                break;
            }
            if range.is_suppressed() {
                listing[c] = Listing::Suppressed;
                continue;
            }
            let elements: u64 = range.pages.iter().map(|p| u64::from(p.num_elements)).sum();
            listing[c] = Listing::Present { element_offset: range.element_offset as u64, elements };
            let mut at = Where::check("page").cluster(v.id).column(c as u32);
            at.field = field_of(c);
            if let Some(setting) = range.compression {
                if setting / 100 > 5 {
                    r.structure(at.clone(), format!("unknown compression setting {setting} of the column range"));
                }
            }
            let keep = (columns[c].column_type.is_index() || columns[c].column_type == ColumnType::Switch)
                && kept.saturating_add(elements) <= MAX_KEPT_ELEMENTS;
            if keep {
                kept += elements;
            }
            if let Some(vals) = check_pages(root, env.anchor.max_key_size, specs[c].as_ref(), range, keep, &at, r) {
                values.insert(c as u32, vals);
            }
        }
        if r.report.interrupted {
            break;
        }
        // Columns of the header must be listed in every cluster (spec: only
        // columns added later by a schema extension may be missing).
        let num_header_columns = env.header.schema.columns.len();
        for (c, l) in listing.iter().enumerate().take(num_header_columns) {
            if *l == Listing::Absent && columns[c].first_element_index.is_none() {
                let mut at = Where::check("clusters").cluster(v.id).column(c as u32);
                at.field = field_of(c);
                r.structure(
                    at,
                    format!("the column is missing from the cluster's page list ({} columns listed)", v.columns.len()),
                );
            }
        }
        if let (Some(d), Some(tree)) = (&descriptor, &tree) {
            let info = &d.clusters[v.id];
            let data = ClusterData { cluster: info, listing, values };
            check_cluster(d, tree, &data, r);
            offsets.check(d, tree, &data, r);
        }
    }
    r.progress.finish();

    // Step 6: the reader, when everything else passed.
    if options.read_values && !r.report.interrupted && r.report.num_problems == problems_before {
        if let Some(d) = &descriptor {
            read_values(root, d, env.attribute_set.as_ref(), r);
        }
    }
}

/// Reads, checks and decodes the pages of one column range; returns the
/// decoded values when `keep` and every page decoded.
fn check_pages(
    root: &RootFile,
    max_key: u64,
    spec: Option<&ColumnSpec>,
    range: &ColumnPageRange,
    keep: bool,
    at: &Where,
    r: &mut Reporter<'_>,
) -> Option<ColumnValues> {
    let size = root.size();
    let mut out = match (keep, spec) {
        (true, Some(s)) => ColumnValues::for_column(s.column_type).ok(),
        _ => None,
    };
    let mut batch: Vec<(usize, &PageDescriptor)> = Vec::new();
    let mut batch_bytes = 0u64;
    let flush = |batch: &mut Vec<(usize, &PageDescriptor)>, out: &mut Option<ColumnValues>, r: &mut Reporter<'_>| {
        if batch.is_empty() {
            return;
        }
        let list: Vec<(u64, u64)> = batch
            .iter()
            .map(|(_, p)| (p.locator.offset, p.locator.size + if p.has_checksum { 8 } else { 0 }))
            .collect();
        let bufs = match root.read_payloads(&list, max_key) {
            Ok(b) => b,
            Err(_) => {
                // Read one by one to name the page that fails.
                list.iter()
                    .zip(batch.iter())
                    .map(|(&(o, s), (k, _))| match root.read_payload(o, s, max_key) {
                        Ok(b) => b,
                        Err(e) => {
                            r.error(&e, at.clone().page(*k).at(o));
                            Vec::new()
                        }
                    })
                    .collect()
            }
        };
        for ((k, p), raw) in batch.iter().zip(bufs) {
            let stored = p.locator.size + if p.has_checksum { 8 } else { 0 };
            r.report.num_pages += 1;
            r.report.page_bytes += stored;
            r.progress.advance(stored);
            if raw.len() as u64 != stored {
                *out = None; // unreadable (already reported)
                continue;
            }
            if !check_page(spec, p, raw, out, &at.clone().page(*k).at(p.locator.offset), r) {
                *out = None;
            }
        }
        batch.clear();
    };
    for (k, p) in range.pages.iter().enumerate() {
        let stored = p.locator.size + if p.has_checksum { 8 } else { 0 };
        // A page split over keys: its first key (max_key bytes) is at the
        // offset, its other chunks where that key says (read_payload checks them).
        let span =
            if matches!(root.payload_is_split(p.locator.offset, stored, max_key), Ok(true)) { max_key } else { stored };
        let fits = p.locator.offset.checked_add(span).is_some_and(|end| end <= size);
        if !fits {
            r.structure(
                Where { check: "locator", ..at.clone() }.page(k).at(p.locator.offset),
                format!(
                    "the page's {stored} bytes at offset {} end past the end of the file ({size} bytes)",
                    p.locator.offset
                ),
            );
            out = None;
            continue;
        }
        if batch_bytes + stored > READ_BATCH {
            flush(&mut batch, &mut out, r);
            batch_bytes = 0;
        }
        batch.push((k, p));
        batch_bytes += stored;
    }
    flush(&mut batch, &mut out, r);
    out
}

/// Checksum, decompression and decoding of one page (the engine's page
/// pipeline, [`rntuple::unseal_page`], reporting and going on); appends the
/// values to `out` when given. Returns false when a problem was found.
fn check_page(
    spec: Option<&ColumnSpec>,
    p: &PageDescriptor,
    raw: Vec<u8>,
    out: &mut Option<ColumnValues>,
    at: &Where,
    r: &mut Reporter<'_>,
) -> bool {
    let mut ok = true;
    let location = || Location::new("page", Some(p.locator.offset));
    let mut report = |f: Found| {
        ok = false;
        r.error(&f.error, at.clone());
    };
    let mut checks = Checks::Report(&mut report);
    let Some(spec) = spec else {
        // Reports a mismatch; nothing else can fail.
        let _ = check_page_checksum(&raw, p, &mut checks, &location);
        return false;
    };
    let n = u64::from(p.num_elements);
    let mut buf = Vec::new();
    let unsealed =
        unseal_page(&raw, p, spec.packed_size(n), &mut checks, &location, &mut Decompressor::new(), &mut buf);
    let bytes = match unsealed {
        Ok(b) => b,
        Err(e) => {
            r.error(&e, at.clone());
            return false;
        }
    };
    let mut tmp;
    let target = match out {
        Some(o) => o,
        None => match ColumnValues::for_column(spec.column_type) {
            Ok(v) => {
                tmp = v;
                &mut tmp
            }
            Err(e) => {
                r.error(&e, at.clone());
                return false;
            }
        },
    };
    if let Err(e) = decode_page(spec, bytes, n as usize, target) {
        r.error(&e, Where { check: "page", ..at.clone() });
        return false;
    }
    ok
}

/// Every page, envelope and the anchor must lie inside the file, and no two
/// may overlap partially (spec "Page Locations": locators may reference
/// identical byte ranges but not arbitrarily overlapping ones).
fn check_extents(root: &RootFile, env: &Envelopes, views: &[ClusterView<'_>], r: &mut Reporter<'_>) {
    let mk = env.anchor.max_key_size;
    let single = |size: u64| mk == 0 || size <= mk;
    let mut ext = Vec::new();
    let (start, end) = env.anchor_extent;
    ext.push(Extent { start, end, holds: Holds::Anchor });
    let a = &env.anchor;
    for (holds, offset, size) in
        [(Holds::Header, a.seek_header, a.nbytes_header), (Holds::Footer, a.seek_footer, a.nbytes_footer)]
    {
        if single(size) {
            ext.push(Extent { start: offset, end: offset.saturating_add(size), holds });
        }
    }
    for (g, cg) in env.footer.cluster_groups.iter().enumerate() {
        let l = cg.page_list.locator;
        if single(l.size) {
            ext.push(Extent { start: l.offset, end: l.offset.saturating_add(l.size), holds: Holds::PageList(g) });
        }
    }
    for v in views {
        for (c, range) in v.columns.iter().enumerate() {
            for (k, p) in range.pages.iter().enumerate() {
                let stored = p.locator.size + if p.has_checksum { 8 } else { 0 };
                if single(stored) && stored > 0 {
                    ext.push(Extent {
                        start: p.locator.offset,
                        end: p.locator.offset.saturating_add(stored),
                        holds: Holds::Page { cluster: v.id, column: c, page: k },
                    });
                }
            }
        }
    }
    ext.sort_by(|x, y| x.start.cmp(&y.start).then(x.end.cmp(&y.end)));
    let mut reported = 0;
    // The extent reaching furthest so far.
    let mut reach: Option<usize> = None;
    for i in 0..ext.len() {
        if let Some(j) = reach {
            let (prev, cur) = (&ext[j], &ext[i]);
            let identical = prev.start == cur.start && prev.end == cur.end && prev.is_page() && cur.is_page();
            if cur.start < prev.end && !identical {
                if reported < 10 {
                    r.structure(
                        Where::check("overlap").at(cur.start),
                        format!(
                            "{} (bytes {}..{}) overlaps {} (bytes {}..{})",
                            cur.holds.describe(),
                            cur.start,
                            cur.end,
                            prev.holds.describe(),
                            prev.start,
                            prev.end
                        ),
                    );
                }
                reported += 1;
            }
        }
        if reach.is_none_or(|j| ext[i].end > ext[j].end) {
            reach = Some(i);
        }
    }
    if reported > 10 {
        r.structure(Where::check("overlap"), format!("{} more overlapping byte ranges", reported - 10));
    }
    // Pages and envelopes are payloads of keys: never inside the file header.
    let begin = root.header().begin;
    if let Some(e) = ext.iter().find(|e| e.start < begin) {
        r.structure(
            Where::check("locator").at(e.start),
            format!("{} starts at byte {} inside the file header (which ends at {begin})", e.holds.describe(), e.start),
        );
    }
}

/// Step 6: every cluster through the reader, one top-level field at a time.
/// `set`: the main RNTuple and the name of the attribute set being read.
fn read_values(root: &Arc<RootFile>, d: &Descriptor, set: Option<&(String, String)>, r: &mut Reporter<'_>) {
    let Some(name) = r.rntuple.clone() else { return };
    let file = RNTupleFile::from_root_file(
        root.as_ref().clone(),
        ReadOptions { verify_checksums: true, ..Default::default() },
    );
    let opened = match set {
        Some((main, set)) => file.rntuple(main).and_then(|m| m.attribute_set(set)).map(|s| s.rntuple().clone()),
        None => file.rntuple(&name),
    };
    let nt = match opened {
        Ok(nt) => nt,
        Err(e) => {
            r.error(&e, Where::check("values"));
            return;
        }
    };
    let fields: Vec<String> = nt.readable_fields().iter().map(|f| f.name.clone()).collect();
    r.progress.start(&format!("reading {name}"), d.clusters.len() as u64, "clusters");
    for c in &d.clusters {
        if r.cancelled() {
            break;
        }
        read_cluster(&nt, c, &fields, r);
        r.progress.advance(1);
    }
    r.progress.finish();
}

/// Entries read at once by the value pass (bounds its memory).
const VALUE_STEP: u64 = 1 << 20;

fn read_cluster(nt: &rntuple::RNTuple, c: &ClusterInfo, fields: &[String], r: &mut Reporter<'_>) {
    let stop = c.first_entry + c.num_entries;
    for f in fields {
        let mut a = c.first_entry;
        while a < stop {
            let b = stop.min(a.saturating_add(VALUE_STEP));
            if let Err(e) = nt.read(Some(&[f.as_str()]), a, b) {
                r.error(&e, Where::check("values").cluster(c.id).field(f));
                break;
            }
            a = b;
        }
    }
}
