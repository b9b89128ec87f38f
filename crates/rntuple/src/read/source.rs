//! Page source: what the descriptor says about the pages of one column in
//! one cluster (spec "Page List Envelope", "Page Locations"), and reads of
//! single column ranges.

use std::sync::Arc;

use rntuple_container::RootFile;
use rntuple_format::column::{ColumnSpec, ColumnValues};
use rntuple_format::model::PageDescriptor;
use rntuple_format::{Error, Location, Result};

use super::fill::{fill, Job, Piece};
use super::io::IoCounters;
use super::pool::Pool;
use crate::descriptor::{ClusterInfo, Descriptor};

/// Most bytes of synthetic zeros (deferred columns) one read of one column in
/// one cluster may produce; larger reads must go in entry batches.
pub(crate) use rntuple_format::constants::MAX_ZERO_FILL_BYTES;

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

impl ColumnExtent<'_> {
    /// Number of elements the cluster holds, if it has data for the column.
    pub fn count(&self) -> Option<u64> {
        (self.zeros != u64::MAX).then(|| self.zeros.saturating_add(self.available))
    }
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

    /// The pages of column `col` in `cluster` and its leading zeros. A
    /// deferred column's elements before its first element index read as
    /// zeros (spec "Column Description", flag 0x01); a suppressed column, or
    /// one the cluster's page list does not mention (added later by a schema
    /// extension), reads as zeros throughout.
    pub(crate) fn column_extent<'c>(&self, col: u32, cluster: &'c ClusterInfo) -> Result<ColumnExtent<'c>> {
        let cdesc = self.desc.columns.get(col as usize).ok_or_else(|| {
            Error::out_of_spec(format!("column id {col} out of range"), Location::new("field columns", None))
        })?;
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

    /// Elements `[a, b)` (cluster-relative) of physical column `col` in
    /// `cluster`, in the column's natural in-memory type
    /// ([`ColumnValues::for_column`]).
    pub fn read_column(&self, col: u32, cluster: &ClusterInfo, a: u64, b: u64) -> Result<ColumnValues> {
        self.read_column_into(col, cluster, a, b, None)
    }

    /// Like [`PageSource::read_column`], decoding into the variant of `out`
    /// (which must be empty) when given: floating-point columns read into
    /// `F64` give ROOT's values for `double` fields (e.g. Real32Quant is
    /// dequantised in double precision); other variants convert with `as`.
    pub fn read_column_into(
        &self,
        col: u32,
        cluster: &ClusterInfo,
        a: u64,
        b: u64,
        out: Option<ColumnValues>,
    ) -> Result<ColumnValues> {
        let cdesc = self.desc.columns.get(col as usize).ok_or_else(|| {
            Error::out_of_spec(format!("column id {col} out of range"), Location::new("field columns", None))
        })?;
        ColumnSpec::from_descriptor(cdesc)?;
        let proto = match out {
            Some(o) => o,
            None => ColumnValues::for_column(cdesc.column_type)?,
        };
        let n = b.saturating_sub(a);
        let mut jobs =
            vec![Job::new(&proto, n, vec![Piece { r: 0, cluster, column: col, a, b, offset: 0, pre: None }])];
        fill(self, &mut jobs, &Pool::Sequential, self.verify_checksums)?;
        Ok(jobs.pop().map(|j| j.sink).unwrap_or(proto))
    }
}
