//! `inspect`: where the bytes of an RNTuple go.
//!
//! Everything is computed from the envelopes (anchor, header, footer, page
//! lists); no page is read. Per physical column: type, encoding, elements,
//! pages, compressed size (the page locators' sizes, checksums excluded, as
//! ROOT's `RNTupleInspector` counts), uncompressed size (the bytes the pages
//! inflate to: elements × bits on storage), in-memory size (elements × the
//! size of ROOT's default in-memory type, what `RNTupleInspector` calls the
//! uncompressed size) and the distribution of compressed page sizes. Fields
//! aggregate the columns of their subfields; clusters, cluster groups and
//! envelopes have their own entries. [`json`] gives the stable JSON form
//! documented in `docs/tools.md`, [`table`] the human one.

pub mod json;
pub mod layout;
pub mod table;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use rntuple::format::model::{ColumnDescriptor, ColumnType};
use rntuple::format::Result;

use crate::load::{attribute_sets_of, load, open_root, AttributeSetSummary, Loaded};

/// Position and sizes of an envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EnvelopeInfo {
    /// File offset of the envelope's (first) payload byte.
    pub offset: u64,
    /// Bytes on disk.
    pub compressed: u64,
    /// Bytes after decompression.
    pub uncompressed: u64,
}

/// Summary of the compressed sizes of a set of pages.
#[derive(Debug, Clone, PartialEq)]
pub struct PageSizeStats {
    pub min: u64,
    /// The lower median.
    pub median: u64,
    pub max: u64,
    pub mean: f64,
    /// Pages per power-of-two bin `[from, to]` (bytes, inclusive); only
    /// non-empty bins, in increasing order. Bin 0 is `[0, 1]`.
    pub histogram: Vec<(u64, u64, u64)>,
}

impl PageSizeStats {
    /// Statistics of `sizes` (sorted in place); `None` when empty.
    pub fn new(sizes: &mut [u64]) -> Option<Self> {
        if sizes.is_empty() {
            return None;
        }
        sizes.sort_unstable();
        let sum: u128 = sizes.iter().map(|&s| u128::from(s)).sum();
        let mut histogram: Vec<(u64, u64, u64)> = Vec::new();
        for &s in sizes.iter() {
            let (from, to) = if s <= 1 { (0, 1) } else { bin_of(s) };
            match histogram.last_mut() {
                Some(last) if last.0 == from => last.2 += 1,
                _ => histogram.push((from, to, 1)),
            }
        }
        Some(Self {
            min: sizes[0],
            median: sizes[(sizes.len() - 1) / 2],
            max: sizes[sizes.len() - 1],
            mean: sum as f64 / sizes.len() as f64,
            histogram,
        })
    }
}

/// The power-of-two bin `[2^k, 2^(k+1) - 1]` holding `s >= 2`.
fn bin_of(s: u64) -> (u64, u64) {
    let k = 63 - s.leading_zeros();
    let from = 1u64 << k;
    (from, from.saturating_add(from - 1))
}

/// One physical column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnReport {
    pub id: u32,
    pub field_id: u32,
    /// Dotted path of the owning field, e.g. `"Muon.pt"`.
    pub field: String,
    pub top_level_field: String,
    pub column_type: ColumnType,
    pub bits_on_storage: u16,
    pub representation_index: u16,
    /// How the pages are encoded, e.g. `"split+zigzag"` (see [`encoding`]).
    pub encoding: &'static str,
    pub value_range: Option<(f64, f64)>,
    /// First element index of a deferred column (negative: also suppressed).
    pub first_element_index: Option<i64>,
    /// Distinct compression settings of the column's ranges.
    pub compression: Vec<u32>,
    /// Elements stored in pages.
    pub num_elements: u64,
    /// Leading zero elements of a deferred column (not stored).
    pub num_zero_elements: u64,
    pub num_pages: u64,
    /// Clusters in which the column is suppressed (secondary representation).
    pub num_suppressed_clusters: u64,
    pub compressed: u64,
    pub uncompressed: u64,
    pub memory: u64,
    pub page_sizes: Option<PageSizeStats>,
}

/// One top-level field with its subfields' columns.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldReport {
    pub id: u32,
    pub name: String,
    pub type_name: String,
    pub projected: bool,
    /// A struct-of-arrays field (flag 0x08, ROOT's `RSoAField`): `type_name`
    /// is the SoA class, the stored collection is of its record subfield.
    pub soa: bool,
    /// `(name, type)` of the projected top-level fields whose source lies in
    /// this field (RNTupleImporter's `Muon_pt` over `_collection12`): the
    /// names users know for an untyped record or collection.
    pub projections: Vec<(String, String)>,
    pub num_subfields: u64,
    /// Physical columns of the field and its subfields (alias columns excluded).
    pub num_columns: u64,
    pub num_pages: u64,
    pub compressed: u64,
    pub uncompressed: u64,
    pub memory: u64,
}

/// One cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterReport {
    pub id: usize,
    pub group: usize,
    pub first_entry: u64,
    pub num_entries: u64,
    pub num_pages: u64,
    pub compressed: u64,
    pub uncompressed: u64,
}

/// One cluster group (one page list envelope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupReport {
    pub id: usize,
    pub min_entry: u64,
    pub entry_span: u64,
    pub num_clusters: u32,
    pub page_list: EnvelopeInfo,
}

/// Totals over all pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageTotals {
    /// Sum of the page locators' sizes (a page stored once and referenced by
    /// several locators counts each time, as in ROOT's inspector).
    pub compressed: u64,
    pub uncompressed: u64,
    pub memory: u64,
    /// Bytes of page checksums (8 per distinct stored page with a checksum).
    pub checksums: u64,
    /// Distinct bytes the pages occupy in the file, checksums included.
    pub stored: u64,
}

/// Everything `inspect` says about one RNTuple.
#[derive(Debug, Clone, PartialEq)]
pub struct RNTupleReport {
    pub name: String,
    pub description: String,
    pub writer: String,
    /// Format version of the anchor, e.g. `"1.0.2.0"`.
    pub format_version: String,
    pub num_entries: u64,
    /// All fields, subfields included.
    pub num_fields: u64,
    pub num_top_level_fields: u64,
    pub num_physical_columns: u64,
    pub num_alias_columns: u64,
    pub num_pages: u64,
    /// Distinct compression settings of all column ranges.
    pub compression: Vec<u32>,
    /// File offset of the anchor key's payload.
    pub anchor_offset: u64,
    pub header: EnvelopeInfo,
    pub footer: EnvelopeInfo,
    /// Sum over the page list envelopes (offset 0).
    pub page_lists: EnvelopeInfo,
    pub pages: PageTotals,
    /// Header, footer and page lists on disk plus the stored page bytes.
    pub total_on_disk: u64,
    pub cluster_groups: Vec<GroupReport>,
    pub clusters: Vec<ClusterReport>,
    /// Top-level fields by compressed size (largest first).
    pub fields: Vec<FieldReport>,
    /// Physical columns by compressed size (largest first).
    pub columns: Vec<ColumnReport>,
    /// Linked attribute sets, in the footer's order.
    pub attribute_sets: Vec<AttributeSetSummary>,
}

/// What `inspect` says about a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    pub file: String,
    pub file_size: u64,
    pub rntuples: Vec<RNTupleReport>,
}

/// Inspects the RNTuple `name` of the file at `path`, or all its RNTuples.
pub fn inspect_file(path: &Path, name: Option<&str>, verify_checksums: bool) -> Result<Inspection> {
    let file = path.display().to_string();
    let root = open_root(path, verify_checksums)?;
    let names = match name {
        Some(n) => vec![n.to_string()],
        None => root.rntuple_names()?,
    };
    let mut rntuples = Vec::with_capacity(names.len());
    for n in names {
        let loaded =
            load(root.clone(), &file, &n, verify_checksums).map_err(|e| e.within(&format!("RNTuple '{n}'")))?;
        let mut report = inspect_loaded(&loaded);
        report.attribute_sets =
            attribute_sets_of(&loaded).map_err(|e| e.within(&format!("attribute sets of RNTuple '{n}'")))?;
        rntuples.push(report);
    }
    Ok(Inspection { file, file_size: root.size(), rntuples })
}

/// How the pages of a column type are encoded on top of the plain
/// little-endian layout (spec "Column Description").
pub fn encoding(t: ColumnType) -> &'static str {
    use ColumnType::*;
    match t {
        Bit => "bit-packed",
        SplitInt16 | SplitInt32 | SplitInt64 => "split+zigzag",
        SplitUInt16 | SplitUInt32 | SplitUInt64 | SplitReal16 | SplitReal32 | SplitReal64 => "split",
        SplitIndex32 | SplitIndex64 => "split+delta",
        Real32Trunc => "truncated",
        Real32Quant => "quantized",
        Real16 => "half-precision",
        Unknown(_) => "unknown",
        _ => "plain",
    }
}

/// Bytes of one element in ROOT's default in-memory type of the column type
/// (`RColumnElementBase::Generate(type)->GetSize()`): what ROOT's
/// `RNTupleInspector` multiplies the element counts with.
pub fn memory_size(c: &ColumnDescriptor) -> u64 {
    use ColumnType::*;
    match c.column_type {
        Bit | Byte | Char | Int8 | UInt8 => 1,
        Int16 | UInt16 | SplitInt16 | SplitUInt16 => 2,
        Int32 | UInt32 | SplitInt32 | SplitUInt32 => 4,
        Real16 | SplitReal16 | Real32 | SplitReal32 | Real32Trunc | Real32Quant => 4,
        Int64 | UInt64 | SplitInt64 | SplitUInt64 | Real64 | SplitReal64 => 8,
        // ROOT::Internal::RColumnIndex is a 64-bit integer.
        Index32 | Index64 | SplitIndex32 | SplitIndex64 => 8,
        // RColumnSwitch: a 64-bit index and a 32-bit tag, padded to 16 bytes.
        Switch => 16,
        _ => u64::from(c.bits_on_storage).div_ceil(8),
    }
}

/// Bytes `n` elements of `bits` bits each occupy when packed.
fn packed(n: u64, bits: u16) -> u64 {
    u64::try_from((u128::from(n) * u128::from(bits)).div_ceil(8)).unwrap_or(u64::MAX)
}

/// The report of one loaded RNTuple.
pub fn inspect_loaded(l: &Loaded) -> RNTupleReport {
    let d = &l.descriptor;
    // Dotted path and top-level field id of every field.
    let at: Vec<(String, usize)> =
        l.schema.by_id().into_iter().map(|f| f.map_or((String::new(), 0), |f| (f.path, f.top.id as usize))).collect();
    let ncols = d.columns.len();

    struct Acc {
        compression: BTreeSet<u32>,
        elements: u64,
        pages: u64,
        suppressed: u64,
        compressed: u64,
        sizes: Vec<u64>,
    }
    let mut acc: Vec<Acc> = (0..ncols)
        .map(|_| Acc {
            compression: BTreeSet::new(),
            elements: 0,
            pages: 0,
            suppressed: 0,
            compressed: 0,
            sizes: Vec::new(),
        })
        .collect();
    let mut clusters = Vec::with_capacity(d.clusters.len());
    let mut all_settings = BTreeSet::new();
    let mut distinct: HashSet<(u64, u64)> = HashSet::new();
    let mut totals = PageTotals::default();
    for c in &d.clusters {
        let mut cr = ClusterReport {
            id: c.id,
            group: c.group,
            first_entry: c.first_entry,
            num_entries: c.num_entries,
            num_pages: 0,
            compressed: 0,
            uncompressed: 0,
        };
        for (col, range) in c.columns.iter().enumerate() {
            let a = &mut acc[col];
            if range.is_suppressed() {
                a.suppressed += 1;
                continue;
            }
            if let Some(s) = range.compression {
                a.compression.insert(s);
                all_settings.insert(s);
            }
            let bits = d.columns[col].bits_on_storage;
            for p in &range.pages {
                let n = u64::from(p.num_elements);
                let size = p.locator.size;
                a.elements += n;
                a.pages += 1;
                a.compressed += size;
                a.sizes.push(size);
                cr.num_pages += 1;
                cr.compressed += size;
                cr.uncompressed += packed(n, bits);
                let stored = size + if p.has_checksum { 8 } else { 0 };
                if distinct.insert((p.locator.offset, stored)) {
                    totals.stored += stored;
                    if p.has_checksum {
                        totals.checksums += 8;
                    }
                }
            }
        }
        clusters.push(cr);
    }

    let mut columns: Vec<ColumnReport> = Vec::with_capacity(ncols);
    for (id, (cd, a)) in d.columns.iter().zip(acc).enumerate() {
        let fid = cd.field_id as usize;
        let zeros = cd.first_element_index.filter(|&f| f > 0).map_or(0, |f| f as u64);
        let mut sizes = a.sizes;
        let uncompressed = packed(a.elements, cd.bits_on_storage);
        let memory = a.elements.saturating_mul(memory_size(cd));
        totals.compressed += a.compressed;
        totals.uncompressed += uncompressed;
        totals.memory += memory;
        columns.push(ColumnReport {
            id: id as u32,
            field_id: cd.field_id,
            field: at[fid].0.clone(),
            top_level_field: d.fields[at[fid].1].name.clone(),
            column_type: cd.column_type,
            bits_on_storage: cd.bits_on_storage,
            representation_index: cd.representation_index,
            encoding: encoding(cd.column_type),
            value_range: cd.value_range,
            first_element_index: cd.first_element_index,
            compression: a.compression.into_iter().collect(),
            num_elements: a.elements,
            num_zero_elements: zeros,
            num_pages: a.pages,
            num_suppressed_clusters: a.suppressed,
            compressed: a.compressed,
            uncompressed,
            memory,
            page_sizes: PageSizeStats::new(&mut sizes),
        });
    }

    // Top-level fields: their own and their subfields' physical columns.
    let mut fields: Vec<FieldReport> = Vec::new();
    let mut slot = vec![usize::MAX; d.fields.len()];
    for (id, f) in d.fields.iter().enumerate() {
        if f.parent_id as usize == id {
            slot[id] = fields.len();
            fields.push(FieldReport {
                id: id as u32,
                name: f.name.clone(),
                type_name: f.type_name.clone(),
                projected: f.flags & rntuple::format::model::FIELD_FLAG_PROJECTED != 0,
                soa: f.flags & rntuple::format::model::FIELD_FLAG_SOA != 0,
                projections: Vec::new(),
                num_subfields: 0,
                num_columns: 0,
                num_pages: 0,
                compressed: 0,
                uncompressed: 0,
                memory: 0,
            });
        }
    }
    // Spec "Field Description": a projected field names its source field.
    for (id, f) in d.fields.iter().enumerate() {
        let source = f.source_field_id.and_then(|s| at.get(s as usize));
        if let (true, Some(&(_, top))) = (f.parent_id as usize == id, source) {
            if let Some(r) = slot.get(top).and_then(|&i| fields.get_mut(i)) {
                r.projections.push((f.name.clone(), f.type_name.clone()));
            }
        }
    }
    for (id, &(_, top)) in at.iter().enumerate() {
        if top != id {
            if let Some(f) = fields.get_mut(slot[top]) {
                f.num_subfields += 1;
            }
        }
    }
    for c in &columns {
        if let Some(f) = fields.get_mut(slot[at[c.field_id as usize].1]) {
            f.num_columns += 1;
            f.num_pages += c.num_pages;
            f.compressed += c.compressed;
            f.uncompressed += c.uncompressed;
            f.memory += c.memory;
        }
    }
    fields.sort_by(|a, b| b.compressed.cmp(&a.compressed).then(a.id.cmp(&b.id)));
    columns.sort_by(|a, b| b.compressed.cmp(&a.compressed).then(a.id.cmp(&b.id)));

    let cluster_groups: Vec<GroupReport> = l
        .footer
        .cluster_groups
        .iter()
        .enumerate()
        .map(|(i, g)| GroupReport {
            id: i,
            min_entry: g.min_entry,
            entry_span: g.entry_span,
            num_clusters: g.num_clusters,
            page_list: EnvelopeInfo {
                offset: g.page_list.locator.offset,
                compressed: g.page_list.locator.size,
                uncompressed: g.page_list.length,
            },
        })
        .collect();
    let page_lists = cluster_groups.iter().fold(EnvelopeInfo::default(), |acc, g| EnvelopeInfo {
        offset: 0,
        compressed: acc.compressed + g.page_list.compressed,
        uncompressed: acc.uncompressed + g.page_list.uncompressed,
    });
    let a = &l.anchor;
    let header = EnvelopeInfo { offset: a.seek_header, compressed: a.nbytes_header, uncompressed: a.len_header };
    let footer = EnvelopeInfo { offset: a.seek_footer, compressed: a.nbytes_footer, uncompressed: a.len_footer };
    let anchor_offset = l.root.find_key(&l.name).map(|k| k.payload_offset()).unwrap_or(0);
    RNTupleReport {
        name: l.name.clone(),
        description: d.description.clone(),
        writer: d.writer.clone(),
        format_version: format!("{}.{}.{}.{}", a.version_epoch, a.version_major, a.version_minor, a.version_patch),
        num_entries: d.num_entries(),
        num_fields: d.fields.len() as u64,
        num_top_level_fields: fields.len() as u64,
        num_physical_columns: ncols as u64,
        num_alias_columns: d.alias_columns.len() as u64,
        num_pages: columns.iter().map(|c| c.num_pages).sum(),
        compression: all_settings.into_iter().collect(),
        anchor_offset,
        header,
        footer,
        page_lists,
        pages: totals,
        total_on_disk: header.compressed + footer.compressed + page_lists.compressed + totals.stored,
        cluster_groups,
        clusters,
        fields,
        columns,
        attribute_sets: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_statistics() {
        assert_eq!(PageSizeStats::new(&mut []), None);
        let s = PageSizeStats::new(&mut [300, 1, 5000, 260, 0, 511, 512]).unwrap();
        assert_eq!((s.min, s.median, s.max), (0, 300, 5000));
        assert!((s.mean - 6584.0 / 7.0).abs() < 1e-9);
        assert_eq!(s.histogram, vec![(0, 1, 2), (256, 511, 3), (512, 1023, 1), (4096, 8191, 1)]);
        assert_eq!(bin_of(2), (2, 3));
        assert_eq!(bin_of(u64::MAX), (1 << 63, u64::MAX));
    }

    #[test]
    fn encodings_and_memory_sizes() {
        assert_eq!(encoding(ColumnType::SplitInt32), "split+zigzag");
        assert_eq!(encoding(ColumnType::SplitIndex64), "split+delta");
        assert_eq!(encoding(ColumnType::SplitReal32), "split");
        assert_eq!(encoding(ColumnType::Real32), "plain");
        let col = |t: ColumnType, bits: u16| ColumnDescriptor {
            column_type: t,
            bits_on_storage: bits,
            field_id: 0,
            flags: 0,
            representation_index: 0,
            first_element_index: None,
            value_range: None,
        };
        assert_eq!(memory_size(&col(ColumnType::Index32, 32)), 8);
        assert_eq!(memory_size(&col(ColumnType::Real32Trunc, 12)), 4);
        assert_eq!(memory_size(&col(ColumnType::Bit, 1)), 1);
        assert_eq!(packed(10, 1), 2);
        assert_eq!(packed(3, 12), 5);
    }
}
