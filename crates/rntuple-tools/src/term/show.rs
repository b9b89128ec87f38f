//! `rntuple show`: schema tree, columns and encodings, clusters, sizes.

use std::io::{Result, Write};

use rntuple::format::column::ColumnSpec;
use rntuple::{FieldNode, RNTuple};

struct Sizes {
    compressed: Vec<u64>,
    uncompressed: Vec<u64>,
    pages: Vec<u64>,
}

fn column_sizes(nt: &RNTuple) -> Sizes {
    let d = nt.descriptor();
    let n = d.columns.len();
    let mut s = Sizes { compressed: vec![0; n], uncompressed: vec![0; n], pages: vec![0; n] };
    for c in &d.clusters {
        for (id, range) in c.columns.iter().enumerate() {
            let spec = ColumnSpec::from_descriptor(&d.columns[id]).ok();
            for p in &range.pages {
                s.compressed[id] += p.locator.size;
                s.pages[id] += 1;
                if let Some(spec) = &spec {
                    s.uncompressed[id] += spec.packed_size(u64::from(p.num_elements));
                }
            }
        }
    }
    s
}

/// What `rntuple show` prints: how many top-level fields, and how wide a line may be. The
/// default is everything, lines as long as they are (the Python `RNTuple.show()` default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShowOptions {
    /// Top-level fields listed in the schema (with their subfields); `None`: all.
    pub max_fields: Option<usize>,
    /// Longest line in characters (longer ones end in `…`); `None`: no limit (`--wide`).
    pub width: Option<usize>,
}

/// `line` cut to `width` characters, the last one `…`, when it is longer.
pub fn fit(line: &str, width: Option<usize>) -> String {
    match width {
        Some(w) if w > 0 && line.chars().count() > w => {
            let mut s: String = line.chars().take(w - 1).collect();
            s.push('…');
            s
        }
        _ => line.to_string(),
    }
}

fn field_line(
    nt: &RNTuple,
    f: &FieldNode,
    depth: usize,
    sizes: &Sizes,
    width: Option<usize>,
    out: &mut dyn Write,
) -> Result<()> {
    let d = nt.descriptor();
    let indent = "  ".repeat(depth + 1);
    let ty = if f.type_name.is_empty() { "(untyped)" } else { f.type_name.as_str() };
    let mut extra = String::new();
    if !f.type_alias.is_empty() {
        extra.push_str(&format!(" alias {}", f.type_alias));
    }
    if f.projected {
        extra.push_str(" [projected]");
    }
    if f.soa {
        let record = f.children.first().map_or("?", |c| c.type_name.as_str());
        extra.push_str(&format!(" [SoA of {record}]"));
    }
    writeln!(out, "{}", fit(&format!("{indent}{} : {ty}{extra}", f.name), width))?;
    for (r, cols) in f.representations.iter().enumerate() {
        let descs: Vec<String> = cols
            .iter()
            .map(|&c| {
                let cd = &d.columns[c as usize];
                let mut s = format!("#{c} {}", cd.column_type.name());
                if cd.bits_on_storage != cd.column_type.default_bits().unwrap_or(cd.bits_on_storage) {
                    s.push_str(&format!("({} bits)", cd.bits_on_storage));
                }
                if let Some((lo, hi)) = cd.value_range {
                    s.push_str(&format!("[{lo}, {hi}]"));
                }
                if let Some(first) = cd.first_element_index {
                    s.push_str(&format!(" deferred from {first}"));
                }
                if !f.projected {
                    s.push_str(&format!(
                        " {} pages, {} B zipped / {} B unzipped",
                        sizes.pages[c as usize], sizes.compressed[c as usize], sizes.uncompressed[c as usize]
                    ));
                }
                s
            })
            .collect();
        let label = if f.representations.len() > 1 { format!("representation {r}: ") } else { String::new() };
        writeln!(out, "{}", fit(&format!("{indent}  {label}{}", descs.join("; ")), width))?;
    }
    for c in &f.children {
        field_line(nt, c, depth + 1, sizes, width, out)?;
    }
    Ok(())
}

/// Writes the text of `rntuple show` for `nt`: header facts, the field tree
/// with columns and their sizes, the clusters.
pub fn show(nt: &RNTuple, out: &mut dyn Write) -> Result<()> {
    show_with(nt, ShowOptions::default(), out)
}

/// [`show`] with a limit on the top-level fields listed and on the line width.
pub fn show_with(nt: &RNTuple, options: ShowOptions, out: &mut dyn Write) -> Result<()> {
    let d = nt.descriptor();
    let a = nt.anchor();
    let sizes = column_sizes(nt);
    let zipped: u64 = sizes.compressed.iter().sum();
    let unzipped: u64 = sizes.uncompressed.iter().sum();
    writeln!(out, "RNTuple '{}'", nt.path())?;
    if !d.description.is_empty() {
        writeln!(out, "  description: {}", d.description)?;
    }
    writeln!(out, "  writer: {}", d.writer)?;
    writeln!(out, "  format version: {}.{}.{}.{}", a.version_epoch, a.version_major, a.version_minor, a.version_patch)?;
    writeln!(out, "  entries: {}", nt.num_entries())?;
    // the words of `rntuple inspect` and of the Python repr: top-level fields, fields in all, columns
    let top = nt.schema().fields.len();
    let alias = if d.alias_columns.is_empty() { String::new() } else { format!(" (+{} alias)", d.alias_columns.len()) };
    writeln!(out, "  {} fields ({top} top-level), {} columns{alias}", d.fields.len(), d.columns.len())?;
    writeln!(out, "  clusters: {}, cluster groups: {}", d.clusters.len(), d.num_cluster_groups)?;
    let ratio = if zipped > 0 { unzipped as f64 / zipped as f64 } else { 1.0 };
    writeln!(out, "  data: {zipped} B compressed, {unzipped} B uncompressed (ratio {ratio:.2})")?;
    writeln!(
        out,
        "  header: {} B ({} B uncompressed), footer: {} B ({} B uncompressed)",
        a.nbytes_header, a.len_header, a.nbytes_footer, a.len_footer
    )?;
    let sets = crate::load::attribute_sets(nt).map_err(std::io::Error::other)?;
    crate::inspect::table::attribute_sets(&sets, out)?;
    let fields = &nt.schema().fields;
    let listed = options.max_fields.map_or(fields.len(), |n| n.min(fields.len()));
    if listed < fields.len() {
        writeln!(out, "  schema (first {listed} of {} top-level fields; --max-fields 0 shows all):", fields.len())?;
    } else {
        writeln!(out, "  schema:")?;
    }
    for f in &fields[..listed] {
        field_line(nt, f, 1, &sizes, options.width, out)?;
    }
    writeln!(out, "  clusters:")?;
    for c in &d.clusters {
        let z: u64 = c.columns.iter().flat_map(|r| r.pages.iter()).map(|p| p.locator.size).sum();
        writeln!(
            out,
            "    #{} group {} entries [{}, {}) {} B compressed",
            c.id,
            c.group,
            c.first_entry,
            c.first_entry + c.num_entries,
            z
        )?;
    }
    Ok(())
}
