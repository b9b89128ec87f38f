//! The human-readable form of an [`Inspection`]: a summary, then tables of
//! the top-level fields and of the columns (largest first), the clusters and
//! the cluster groups.

use std::io::{Result, Write};

use super::{FieldReport, Inspection, RNTupleReport};
use crate::load::AttributeSetSummary;
use crate::units::{bytes, compression, count, div, ratio};

/// How many rows of each long table to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Rows of the field, column, cluster and cluster-group tables; `None`: all.
    pub top: Option<usize>,
    /// Longest table line in characters: the widest left-aligned cells (names, types) are cut,
    /// ending in `…`, until lines fit; `None`: cells whole (`--wide`).
    pub width: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Self { top: Some(20), width: Some(crate::term::WIDTH) }
    }
}

/// Narrowest a cut column gets.
const MIN_CUT: usize = 12;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// Writes rows under a header, columns padded to their widest cell.
fn table(out: &mut dyn Write, header: &[(&str, Align)], rows: &[Vec<String>], max: Option<usize>) -> Result<()> {
    let mut width: Vec<usize> = header.iter().map(|(h, _)| h.chars().count()).collect();
    for r in rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // a line is 1 + (cell + 2) per column: narrow the widest left-aligned column until it fits
    if let Some(max) = max {
        loop {
            let total: usize = 1 + width.iter().map(|w| w + 2).sum::<usize>();
            let widest = (0..width.len())
                .filter(|&i| header[i].1 == Align::Left && width[i] > MIN_CUT)
                .max_by_key(|&i| width[i]);
            match widest {
                Some(i) if total > max => width[i] = MIN_CUT.max(width[i] - (total - max).min(width[i])),
                _ => break,
            }
        }
    }
    // still too wide: the last columns are left out, and named under the table
    let all = header;
    let mut kept = width.len();
    if let Some(max) = max {
        while kept > 1 && 1 + width[..kept].iter().map(|w| w + 2).sum::<usize>() > max {
            kept -= 1;
        }
    }
    let header = &header[..kept];
    let cut: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().take(kept).zip(&width).map(|(c, &w)| crate::term::fit(c, Some(w))).collect())
        .collect();
    let rows = &cut;
    let line = |cells: Vec<&str>| {
        let mut s = String::from(" ");
        for (i, (cell, (w, (_, align)))) in cells.iter().zip(width.iter().zip(header)).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            s.push(' ');
            if *align == Align::Right {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else {
                s.push_str(cell);
                if i + 1 < cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            }
            s.push(' ');
        }
        s.trim_end().to_string()
    };
    writeln!(out, "{}", line(header.iter().map(|(h, _)| *h).collect()))?;
    for r in rows {
        writeln!(out, "{}", line(r.iter().map(|c| c.as_str()).collect()))?;
    }
    if kept < all.len() {
        let left: Vec<&str> = all[kept..].iter().map(|(h, _)| *h).collect();
        writeln!(out, "  (--wide adds: {})", left.join(", "))?;
    }
    Ok(())
}

fn shown(n: usize, limits: Limits) -> usize {
    limits.top.map_or(n, |t| t.min(n))
}

/// Which rows of a table are shown when `--top` cuts it.
#[derive(Clone, Copy)]
enum Order {
    /// Sorted by size: the largest.
    LargestFirst,
    /// In file order: the first.
    InOrder,
}

/// A table's heading, saying which rows are shown when not all are.
fn heading(out: &mut dyn Write, what: &str, order: Order, shown: usize, total: usize) -> Result<()> {
    match order {
        _ if shown >= total => writeln!(out, "\n{what}"),
        Order::LargestFirst => writeln!(out, "\n{what} ({shown} of {total}, largest first; --top 0 shows all)"),
        Order::InOrder => writeln!(out, "\n{what} (first {shown} of {total}; --top 0 shows all)"),
    }
}

fn percent(part: u64, whole: u64) -> String {
    match div(part, whole) {
        Some(f) => format!("{:.1}%", f * 100.0),
        None => "-".into(),
    }
}

/// Writes the report of one RNTuple.
/// The name users know: an untyped field (RNTupleImporter's `_collection12`)
/// is shown by the projected names over it, `Muon_* (_collection12)`.
fn field_name(f: &FieldReport) -> String {
    if f.projected {
        return format!("{} (projected)", f.name);
    }
    // The size of a collection (`nMuon`) is projected too; the members name it better.
    let is_size = |t: &str| t.starts_with("ROOT::RNTupleCardinality");
    let mut names: Vec<&str> = f.projections.iter().filter(|(_, t)| !is_size(t)).map(|(n, _)| n.as_str()).collect();
    if names.is_empty() {
        names = f.projections.iter().map(|(n, _)| n.as_str()).collect();
    }
    match names.as_slice() {
        [] => f.name.clone(),
        [one] => format!("{one} ({})", f.name),
        [first, rest @ ..] => {
            // The longest prefix shared by the projected names, cut after its last '_'.
            let mut prefix = *first;
            for n in rest {
                let common = prefix.bytes().zip(n.bytes()).take_while(|(a, b)| a == b).count();
                prefix = &prefix[..common];
            }
            match prefix.rfind('_') {
                Some(i) if i > 0 => format!("{}* ({})", &prefix[..=i], f.name),
                _ if names.len() > 3 => format!("{}, ... ({})", names[..3].join(", "), f.name),
                _ => format!("{} ({})", names.join(", "), f.name),
            }
        }
    }
}

/// The C++ type, or for an untyped field the distinct types of its projections.
fn field_type(f: &FieldReport) -> String {
    if f.soa {
        return format!("{} (SoA)", f.type_name);
    }
    if !f.type_name.is_empty() || f.projections.is_empty() {
        return f.type_name.clone();
    }
    let mut types: Vec<&str> = Vec::new();
    for (_, t) in &f.projections {
        if !types.contains(&t.as_str()) && !t.starts_with("ROOT::RNTupleCardinality") {
            types.push(t);
        }
    }
    types.join(", ")
}

pub fn write_rntuple(r: &RNTupleReport, file: &str, file_size: u64, limits: Limits, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "RNTuple '{}' in {file}", r.name)?;
    let mut about =
        format!("  written by {}, format {}", if r.writer.is_empty() { "?" } else { &r.writer }, r.format_version);
    if !r.description.is_empty() {
        about.push_str(&format!("; \"{}\"", r.description));
    }
    writeln!(out, "{about}")?;
    writeln!(
        out,
        "  {} entries in {} cluster(s), {} cluster group(s), {} pages",
        count(r.num_entries),
        count(r.clusters.len() as u64),
        count(r.cluster_groups.len() as u64),
        count(r.num_pages)
    )?;
    let alias =
        if r.num_alias_columns > 0 { format!(" (+{} alias)", count(r.num_alias_columns)) } else { String::new() };
    writeln!(
        out,
        "  {} fields ({} top-level), {} columns{alias}",
        count(r.num_fields),
        count(r.num_top_level_fields),
        count(r.num_physical_columns)
    )?;
    let settings: Vec<String> = r.compression.iter().map(|&s| compression(s)).collect();
    writeln!(out, "  compression {}", if settings.is_empty() { "-".to_string() } else { settings.join(", ") })?;
    attribute_sets(&r.attribute_sets, out)?;
    writeln!(out)?;

    let right = Align::Right;
    let rows = vec![
        vec![
            "header".into(),
            bytes(r.header.compressed),
            bytes(r.header.uncompressed),
            ratio(div(r.header.uncompressed, r.header.compressed)),
        ],
        vec![
            "footer".into(),
            bytes(r.footer.compressed),
            bytes(r.footer.uncompressed),
            ratio(div(r.footer.uncompressed, r.footer.compressed)),
        ],
        vec![
            format!("page lists ({})", r.cluster_groups.len()),
            bytes(r.page_lists.compressed),
            bytes(r.page_lists.uncompressed),
            ratio(div(r.page_lists.uncompressed, r.page_lists.compressed)),
        ],
        vec![
            "pages".into(),
            bytes(r.pages.compressed),
            bytes(r.pages.uncompressed),
            ratio(div(r.pages.uncompressed, r.pages.compressed)),
        ],
        vec!["page checksums".into(), bytes(r.pages.checksums), String::new(), String::new()],
        vec![
            "total on disk".into(),
            bytes(r.total_on_disk),
            String::new(),
            format!("{} of the file", percent(r.total_on_disk, file_size)),
        ],
    ];
    table(
        out,
        &[("", Align::Left), ("on disk", right), ("uncompressed", right), ("ratio", right)],
        &rows,
        limits.width,
    )?;
    if r.pages.stored < r.pages.compressed + r.pages.checksums {
        writeln!(
            out,
            "  (identical pages are stored once: {} of page data on disk for {} referenced)",
            bytes(r.pages.stored),
            bytes(r.pages.compressed + r.pages.checksums)
        )?;
    }

    let n = shown(r.fields.len(), limits);
    heading(out, "Top-level fields by compressed size", Order::LargestFirst, n, r.fields.len())?;
    let rows: Vec<Vec<String>> = r.fields[..n]
        .iter()
        .map(|f| {
            vec![
                field_name(f),
                field_type(f),
                count(f.num_columns),
                count(f.num_pages),
                bytes(f.compressed),
                bytes(f.uncompressed),
                ratio(div(f.uncompressed, f.compressed)),
                percent(f.compressed, r.pages.compressed),
            ]
        })
        .collect();
    table(
        out,
        &[
            ("field", Align::Left),
            ("type", Align::Left),
            ("columns", right),
            ("pages", right),
            ("compressed", right),
            ("uncompressed", right),
            ("ratio", right),
            ("share", right),
        ],
        &rows,
        limits.width,
    )?;

    let n = shown(r.columns.len(), limits);
    heading(out, "Columns by compressed size", Order::LargestFirst, n, r.columns.len())?;
    let rows: Vec<Vec<String>> = r.columns[..n]
        .iter()
        .map(|c| {
            let sizes = match &c.page_sizes {
                Some(s) => format!("{} / {} / {}", bytes(s.min), bytes(s.median), bytes(s.max)),
                None => "-".into(),
            };
            let mut ty = c.column_type.to_string();
            if c.representation_index > 0 {
                ty.push_str(&format!(" (rep {})", c.representation_index));
            }
            vec![
                c.id.to_string(),
                c.field.clone(),
                ty,
                c.bits_on_storage.to_string(),
                c.encoding.to_string(),
                count(c.num_elements),
                count(c.num_pages),
                bytes(c.compressed),
                bytes(c.uncompressed),
                ratio(div(c.uncompressed, c.compressed)),
                sizes,
            ]
        })
        .collect();
    table(
        out,
        &[
            ("id", right),
            ("field", Align::Left),
            ("type", Align::Left),
            ("bits", right),
            ("encoding", Align::Left),
            ("elements", right),
            ("pages", right),
            ("compressed", right),
            ("uncompressed", right),
            ("ratio", right),
            ("page size min / median / max", right),
        ],
        &rows,
        limits.width,
    )?;

    let n = shown(r.clusters.len(), limits);
    heading(out, "Clusters", Order::InOrder, n, r.clusters.len())?;
    let rows: Vec<Vec<String>> = r.clusters[..n]
        .iter()
        .map(|c| {
            vec![
                c.id.to_string(),
                c.group.to_string(),
                count(c.first_entry),
                count(c.num_entries),
                count(c.num_pages),
                bytes(c.compressed),
                bytes(c.uncompressed),
                ratio(div(c.uncompressed, c.compressed)),
            ]
        })
        .collect();
    table(
        out,
        &[
            ("id", right),
            ("group", right),
            ("first entry", right),
            ("entries", right),
            ("pages", right),
            ("compressed", right),
            ("uncompressed", right),
            ("ratio", right),
        ],
        &rows,
        limits.width,
    )?;
    if r.clusters.len() > 1 {
        let mut entries: Vec<u64> = r.clusters.iter().map(|c| c.num_entries).collect();
        let mut sizes: Vec<u64> = r.clusters.iter().map(|c| c.compressed).collect();
        entries.sort_unstable();
        sizes.sort_unstable();
        let mid = (entries.len() - 1) / 2;
        writeln!(
            out,
            "  entries per cluster min / median / max: {} / {} / {}; compressed: {} / {} / {}",
            count(entries[0]),
            count(entries[mid]),
            count(entries[entries.len() - 1]),
            bytes(sizes[0]),
            bytes(sizes[mid]),
            bytes(sizes[sizes.len() - 1])
        )?;
    }

    let n = shown(r.cluster_groups.len(), limits);
    heading(out, "Cluster groups", Order::InOrder, n, r.cluster_groups.len())?;
    let rows: Vec<Vec<String>> = r.cluster_groups[..n]
        .iter()
        .map(|g| {
            vec![
                g.id.to_string(),
                count(g.min_entry),
                count(g.entry_span),
                count(u64::from(g.num_clusters)),
                bytes(g.page_list.compressed),
                bytes(g.page_list.uncompressed),
            ]
        })
        .collect();
    table(
        out,
        &[
            ("id", right),
            ("first entry", right),
            ("entries", right),
            ("clusters", right),
            ("page list", right),
            ("uncompressed", right),
        ],
        &rows,
        None,
    )
}

/// One line per linked attribute set: name, entries, the user's fields
/// (also `rntuple show`'s).
pub fn attribute_sets(sets: &[AttributeSetSummary], out: &mut dyn Write) -> Result<()> {
    for a in sets {
        let fields: Vec<String> = a.fields.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        writeln!(
            out,
            "  attribute set '{}' (schema {}): {} entries, fields {}",
            a.name,
            a.schema_version,
            count(a.num_entries),
            if fields.is_empty() { "-".to_string() } else { fields.join(", ") }
        )?;
    }
    Ok(())
}

/// Writes the report of every RNTuple of an inspection, separated by blank lines.
pub fn write(i: &Inspection, limits: Limits, out: &mut dyn Write) -> Result<()> {
    if i.rntuples.is_empty() {
        writeln!(out, "{}: no RNTuple in this file", i.file)?;
    }
    for (k, r) in i.rntuples.iter().enumerate() {
        if k > 0 {
            writeln!(out)?;
        }
        write_rntuple(r, &i.file, i.file_size, limits, out)?;
    }
    Ok(())
}
