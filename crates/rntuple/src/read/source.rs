//! Page source: finds, fetches, verifies, decompresses and decodes the pages
//! of one column in one cluster (spec "Page List Envelope", "Page Locations").

use std::sync::Arc;

use rntuple_container::RootFile;
use rntuple_format::checksum::xxh3_64;
use rntuple_format::column::{decode_page, ColumnSpec, ColumnValues};
use rntuple_format::compression::decompress;
use rntuple_format::model::{ColumnPageRange, PageDescriptor};
use rntuple_format::{Error, Location, Result};

use crate::descriptor::{ClusterInfo, Descriptor};

/// Largest uncompressed/compressed ratio accepted for one page before
/// allocating (zstd's RLE blocks reach ~2^15; nothing real goes beyond).
const MAX_COMPRESSION_RATIO: u64 = 1 << 16;

/// Most bytes of synthetic zeros (deferred columns) one read of one column in
/// one cluster may produce; larger reads must go in entry batches.
const MAX_ZERO_FILL_BYTES: u64 = 4 << 30;

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
}

/// Computes [`PageSource::column_multiplier`] from the field tree.
pub(crate) fn column_multipliers(schema: &crate::schema::Schema, num_columns: usize) -> Vec<Option<u64>> {
    use crate::schema::{FieldKind, FieldNode};
    fn walk(f: &FieldNode, m: Option<u64>, out: &mut [Option<u64>]) {
        if !f.projected {
            for &c in f.representations.iter().flatten() {
                if let Some(slot) = out.get_mut(c as usize) {
                    *slot = match f.kind {
                        FieldKind::Bitset { size } => m.and_then(|m| m.checked_mul(size)),
                        _ => m,
                    };
                }
            }
        }
        let child_m = match f.kind {
            FieldKind::Record | FieldKind::Wrapper => m,
            FieldKind::Array { size } => m.and_then(|m| m.checked_mul(size)),
            _ => None,
        };
        for c in &f.children {
            walk(c, child_m, out);
        }
    }
    let mut out = vec![None; num_columns];
    for f in &schema.fields {
        walk(f, Some(1), &mut out);
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

    /// Elements `[a, b)` (cluster-relative) of physical column `col` in
    /// `cluster`. A deferred column's elements before its first element index
    /// read as zeros (spec "Column Description", flag 0x01); a column the
    /// cluster's page list does not mention (added later by a schema
    /// extension) reads as zeros throughout.
    pub fn read_column(&self, col: u32, cluster: &ClusterInfo, a: u64, b: u64) -> Result<ColumnValues> {
        self.read_column_into(col, cluster, a, b, None)
    }

    /// Like [`PageSource::read_column`], decoding into `out` (empty) when
    /// given: floating-point columns read into `F64` give ROOT's values for
    /// `double` fields (e.g. Real32Quant is dequantised in double precision).
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
        let spec = ColumnSpec::from_descriptor(cdesc)?;
        let mut out = match out {
            Some(o) => o,
            None => ColumnValues::for_column(cdesc.column_type)?,
        };
        if b <= a {
            return Ok(out);
        }
        let where_ = || Location::new(format!("page list of cluster {}", cluster.id), None);
        let empty = ColumnPageRange::default();
        let (range, zeros) = match cluster.columns.get(col as usize) {
            // Only columns added after the cluster was written (schema
            // extension, deferred) may be missing from its page list.
            None if cdesc.first_element_index.is_some() || col as usize >= self.desc.num_header_columns => (&empty, b),
            None => {
                return Err(Error::out_of_spec(
                    format!(
                        "column {col} is missing from the page list of cluster {} ({} columns listed)",
                        cluster.id,
                        cluster.columns.len()
                    ),
                    where_(),
                ))
            }
            Some(r) if r.is_suppressed() => (&empty, b),
            Some(r) => {
                // ROOT records a deferred column's element offset as its first
                // element index in the cluster where it starts; the elements of
                // that cluster before it are zeros.
                let z = match (cdesc.first_element_index, self.column_multiplier.get(col as usize)) {
                    (Some(first), Some(Some(m))) if first > 0 => {
                        (first as u64).saturating_sub(cluster.first_entry.saturating_mul(*m))
                    }
                    _ => 0,
                };
                (r, z)
            }
        };
        let available: u64 = range.pages.iter().map(|p| u64::from(p.num_elements)).sum();
        if b > zeros.saturating_add(available) {
            return Err(Error::out_of_spec(
                format!(
                    "column {col} has {} elements in cluster {} but the field structure needs {b}",
                    zeros.saturating_add(available),
                    cluster.id
                ),
                where_(),
            ));
        }
        let n = (b - a) as usize;
        out.reserve(n);
        if a < zeros {
            let n_zeros = zeros.min(b) - a;
            let bytes = spec.packed_size(n_zeros).max(n_zeros);
            if bytes > MAX_ZERO_FILL_BYTES {
                return Err(Error::WouldOverAllocate {
                    requested: bytes,
                    limit: MAX_ZERO_FILL_BYTES,
                    location: Location::new(
                        format!(
                            "zero elements {a}..{} of deferred column {col} in cluster {}",
                            zeros.min(b),
                            cluster.id
                        ),
                        None,
                    ),
                });
            }
            out.push_zeros(n_zeros as usize);
        }
        let mut first = zeros; // cluster-relative index of the page's first element
        for (p, page) in range.pages.iter().enumerate() {
            let count = u64::from(page.num_elements);
            let (lo, hi) = (first, first + count);
            first = hi;
            if hi <= a || lo >= b {
                continue;
            }
            let what = || format!("page {p} of column {col} in cluster {}", cluster.id);
            let bytes = self.page_bytes(&spec, page, &what)?;
            if a <= lo && hi <= b {
                decode_page(&spec, &bytes, count as usize, &mut out).map_err(|e| e.within(&what()))?;
            } else {
                let mut tmp = match &out {
                    ColumnValues::F64(_) => ColumnValues::F64(Vec::new()),
                    _ => ColumnValues::for_column(cdesc.column_type)?,
                };
                decode_page(&spec, &bytes, count as usize, &mut tmp).map_err(|e| e.within(&what()))?;
                let from = (a.max(lo) - lo) as usize;
                let to = (b.min(hi) - lo) as usize;
                append_range(&mut out, &tmp, from, to);
            }
        }
        Ok(out)
    }

    /// Fetches a page, verifies its checksum and decompresses it.
    fn page_bytes(
        &self,
        spec: &ColumnSpec,
        page: &PageDescriptor,
        what: &dyn Fn() -> String,
    ) -> Result<std::borrow::Cow<'static, [u8]>> {
        let unpacked = spec.packed_size(u64::from(page.num_elements));
        let size = page.locator.size;
        if unpacked > size.saturating_mul(MAX_COMPRESSION_RATIO).saturating_add(1 << 20) {
            return Err(Error::WouldOverAllocate {
                requested: unpacked,
                limit: size.saturating_mul(MAX_COMPRESSION_RATIO),
                location: Location::new(what(), Some(page.locator.offset)),
            });
        }
        let stored = size + if page.has_checksum { 8 } else { 0 };
        let mut raw =
            self.file.read_payload(page.locator.offset, stored, self.max_key_size).map_err(|e| e.within(&what()))?;
        if page.has_checksum {
            let mut b = [0u8; 8];
            b.copy_from_slice(&raw[size as usize..]);
            raw.truncate(size as usize);
            if self.verify_checksums {
                let stored_sum = u64::from_le_bytes(b);
                let computed = xxh3_64(&raw);
                if stored_sum != computed {
                    return Err(Error::ChecksumMismatch {
                        stored: stored_sum,
                        computed,
                        location: Location::new(what(), Some(page.locator.offset)),
                    });
                }
            }
        }
        if size == unpacked {
            Ok(raw.into())
        } else {
            Ok(decompress(&raw, unpacked as usize, &Location::new(what(), Some(page.locator.offset)))?.into())
        }
    }
}

/// Appends `src[from..to]` to `dst` (same variant).
fn append_range(dst: &mut ColumnValues, src: &ColumnValues, from: usize, to: usize) {
    use ColumnValues as V;
    match (dst, src) {
        (V::Bool(d), V::Bool(s)) => d.extend_from_slice(&s[from..to]),
        (V::I8(d), V::I8(s)) => d.extend_from_slice(&s[from..to]),
        (V::U8(d), V::U8(s)) => d.extend_from_slice(&s[from..to]),
        (V::I16(d), V::I16(s)) => d.extend_from_slice(&s[from..to]),
        (V::U16(d), V::U16(s)) => d.extend_from_slice(&s[from..to]),
        (V::I32(d), V::I32(s)) => d.extend_from_slice(&s[from..to]),
        (V::U32(d), V::U32(s)) => d.extend_from_slice(&s[from..to]),
        (V::I64(d), V::I64(s)) => d.extend_from_slice(&s[from..to]),
        (V::U64(d), V::U64(s)) => d.extend_from_slice(&s[from..to]),
        (V::F32(d), V::F32(s)) => d.extend_from_slice(&s[from..to]),
        (V::F64(d), V::F64(s)) => d.extend_from_slice(&s[from..to]),
        (V::Index(d), V::Index(s)) => d.extend_from_slice(&s[from..to]),
        (V::Switch { index: di, tag: dt }, V::Switch { index: si, tag: st }) => {
            di.extend_from_slice(&si[from..to]);
            dt.extend_from_slice(&st[from..to]);
        }
        _ => {}
    }
}
