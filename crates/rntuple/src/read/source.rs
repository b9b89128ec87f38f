//! Page source: what the descriptor says about the pages of one column in
//! one cluster (spec "Page List Envelope", "Page Locations"). Reading and
//! decoding those pages is [`super::decode`]'s (also for the single-column
//! reads of [`PageSource::read_column`]).

use std::sync::Arc;

use rntuple_container::RootFile;
use rntuple_format::model::{ColumnDescriptor, PageDescriptor};
use rntuple_format::{Error, Location, Result};

use super::io::IoCounters;
use crate::descriptor::{ClusterInfo, Descriptor};

/// Reads column data of one RNTuple.
#[derive(Debug, Clone)]
pub struct PageSource {
    pub(crate) file: Arc<RootFile>,
    pub(crate) desc: Arc<Descriptor>,
    pub(crate) max_key_size: u64,
    pub(crate) verify_checksums: bool,
    /// Per physical column: elements per entry when the column's field is
    /// reached from its top-level field through records and fixed-size
    /// arrays only (then the cluster's first element is `first_entry *
    /// multiplier`); `None` under a collection or variant.
    pub(crate) column_multiplier: Vec<Option<u64>>,
    /// I/O figures, shared by clones.
    pub(crate) io: Arc<IoCounters>,
    /// How requests are shaped: the storage's hints with the reader's
    /// overrides ([`crate::ReadOptions::io_hints`]).
    pub(crate) hints: rntuple_container::IoHints,
    /// The budget of one read ([`crate::ReadOptions::max_memory`]).
    pub(crate) max_memory: Option<u64>,
    /// Bytes of values the read so far holds (its index columns, read
    /// before its other columns): one counter per read, under a budget.
    pub(crate) spent: Arc<std::sync::atomic::AtomicU64>,
    /// The largest decompressed page ([`crate::ReadOptions::max_page_size`]).
    pub(crate) max_page_size: u64,
}

/// How a column fills a cluster: `zeros` leading zero elements (a deferred
/// column, or `u64::MAX` for a column without data in the cluster), then
/// the elements of `pages`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnExtent<'a> {
    pub zeros: u64,
    pub pages: &'a [PageDescriptor],
    /// Elements in `pages`.
    pub available: u64,
}

impl<'a> ColumnExtent<'a> {
    /// Number of elements the cluster holds, if it has data for the column.
    pub fn count(&self) -> Option<u64> {
        (self.zeros != u64::MAX).then(|| self.zeros.saturating_add(self.available))
    }

    /// The pages holding elements of `[a, b)` (cluster-relative), in page
    /// list order, each with the part of it that lies in the range.
    pub fn pages_in(&self, a: u64, b: u64) -> impl Iterator<Item = PageInRange<'a>> {
        let mut first = self.zeros;
        self.pages.iter().enumerate().filter_map(move |(index, page)| {
            let count = u64::from(page.num_elements);
            let (lo, hi) = (first, first.saturating_add(count));
            first = hi;
            (hi > a && lo < b).then(|| PageInRange { index, page, count, from: a.max(lo) - lo, to: b.min(hi) - lo })
        })
    }
}

/// A page of a [`ColumnExtent`] that holds elements of a range: its
/// elements `[from, to)` (page-relative) lie in the range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageInRange<'a> {
    /// Position in the cluster's page list of the column.
    pub index: usize,
    pub page: &'a PageDescriptor,
    /// Elements in the page.
    pub count: u64,
    pub from: u64,
    pub to: u64,
}

/// Per field id: elements per entry of the field's own columns when the
/// field is reached from its top-level field through records, wrappers and
/// fixed-size arrays only (the product of the `std::array` and
/// `std::bitset` sizes on the way, ROOT's `EntryToColumnElementIndex`);
/// `None` under a collection or variant. Ids outside `num_fields` are skipped.
pub fn field_multipliers(schema: &crate::schema::Schema, num_fields: usize) -> Vec<Option<u64>> {
    use crate::schema::{FieldKind, FieldNode};
    fn walk(f: &FieldNode, m: Option<u64>, out: &mut [Option<u64>]) {
        let own = match f.kind {
            FieldKind::Array { size } | FieldKind::Bitset { size } => m.and_then(|m| m.checked_mul(size)),
            _ => m,
        };
        if let Some(slot) = out.get_mut(f.id as usize) {
            *slot = own;
        }
        let child_m = match f.kind {
            FieldKind::Record | FieldKind::Wrapper | FieldKind::Array { .. } => own,
            _ => None,
        };
        for c in &f.children {
            walk(c, child_m, out);
        }
    }
    let mut out = vec![None; num_fields];
    for f in &schema.fields {
        walk(f, Some(1), &mut out);
    }
    out
}

/// Computes [`PageSource::column_multiplier`] from the field tree: the
/// multiplier of each column's field ([`field_multipliers`]); `None` for the
/// columns of projected fields (they are read through their source).
pub(crate) fn column_multipliers(
    schema: &crate::schema::Schema,
    num_fields: usize,
    num_columns: usize,
) -> Vec<Option<u64>> {
    fn walk(f: &crate::schema::FieldNode, fields: &[Option<u64>], out: &mut [Option<u64>]) {
        if !f.projected {
            for &c in f.representations.iter().flatten() {
                if let Some(slot) = out.get_mut(c as usize) {
                    *slot = fields.get(f.id as usize).copied().flatten();
                }
            }
        }
        for c in &f.children {
            walk(c, fields, out);
        }
    }
    let fields = field_multipliers(schema, num_fields);
    let mut out = vec![None; num_columns];
    for f in &schema.fields {
        walk(f, &fields, &mut out);
    }
    out
}

impl PageSource {
    /// The representation of `reps` that is primary in `cluster`: the first
    /// whose principal column is present and not suppressed there. Falls back
    /// to the first representation (its columns then read as deferred zeros).
    pub fn primary<'a>(&self, reps: &'a [Vec<u32>], cluster: &ClusterInfo) -> Option<&'a [u32]> {
        reps.iter()
            .find(|r| {
                r.first().and_then(|&c| cluster.columns.get(c as usize)).is_some_and(|range| !range.is_suppressed())
            })
            .or_else(|| reps.first())
            .map(|r| r.as_slice())
    }

    /// The descriptor of physical column `col`.
    pub(crate) fn column(&self, col: u32) -> Result<&ColumnDescriptor> {
        self.desc.columns.get(col as usize).ok_or_else(|| {
            Error::out_of_spec(format!("column id {col} out of range"), Location::new("field columns", None))
        })
    }

    /// The pages of column `col` in `cluster` and its leading zeros. A
    /// deferred column's elements before its first element index read as
    /// zeros (spec "Column Description", flag 0x01); a suppressed column, or
    /// one the cluster's page list does not mention (added later by a schema
    /// extension), reads as zeros throughout.
    pub(crate) fn column_extent<'c>(&self, col: u32, cluster: &'c ClusterInfo) -> Result<ColumnExtent<'c>> {
        let cdesc = self.column(col)?;
        let none = ColumnExtent { zeros: u64::MAX, pages: &[], available: 0 };
        match cluster.columns.get(col as usize) {
            // Only columns added after the cluster was written (schema
            // extension, deferred) may be missing from its page list.
            None if cdesc.first_element_index.is_some() || col as usize >= self.desc.num_header_columns => Ok(none),
            None => Err(Error::out_of_spec(
                format!(
                    "column {col} is missing from the page list of cluster {} ({} columns listed)",
                    cluster.id,
                    cluster.columns.len()
                ),
                Location::new(format!("page list of cluster {}", cluster.id), None),
            )),
            Some(r) if r.is_suppressed() => Ok(none),
            Some(r) => {
                // ROOT records a deferred column's element offset as its first
                // element index in the cluster where it starts; the elements of
                // that cluster before it are zeros.
                let zeros = match (cdesc.first_element_index, self.column_multiplier.get(col as usize)) {
                    (Some(first), Some(Some(m))) if first > 0 => {
                        (first as u64).saturating_sub(cluster.first_entry.saturating_mul(*m))
                    }
                    _ => 0,
                };
                let available = r.pages.iter().map(|p| u64::from(p.num_elements)).sum();
                Ok(ColumnExtent { zeros, pages: &r.pages, available })
            }
        }
    }
}
