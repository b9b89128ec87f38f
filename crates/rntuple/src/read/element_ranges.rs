//! Read planning: which elements of which columns a read needs, cluster by
//! cluster, before any page is read (spec "Mapping of C++ Types to Fields and
//! Columns" gives the structure).
//!
//! Every selected field becomes a [`Node`] holding its element range in each
//! cluster the read touches, and every column it reads a [`Slot`]: one output
//! buffer over all those clusters, with one piece per cluster. The element
//! range of a collection's items (or a variant's alternatives) depends on the
//! collection's offsets. When a cluster is read whole, the page list already
//! says how many items there are, so every range is known at once and the
//! whole read is planned, fetched and decoded in one go; the offsets are
//! checked against those counts when the arrays are assembled. Only where
//! the entry range cuts a cluster are the offsets (or variant tags) of the
//! cut fields read first, one nesting level per round.

use std::collections::HashMap;

use rntuple_format::column::ColumnValues;
use rntuple_format::model::ColumnType;
use rntuple_format::{Error, Location, Result};

use super::decode::{decode_jobs, Job, Piece};
use super::select::{Keep, Selected};
use super::source::PageSource;
use super::threads::Pool;
use crate::descriptor::ClusterInfo;
use crate::schema::{FieldKind, FieldNode, Primitive};
use crate::ArrowShape;

/// Values decoded while planning: (span, column, first, end) → values.
type Resolved = HashMap<(usize, u32, u64, u64), ColumnValues>;

/// What a slot's buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Values of a leaf (primitive, bitset bits).
    Values,
    /// Cluster-relative end offsets of a collection, string or cardinality;
    /// the buffer starts with one spare element (the leading zero offset).
    Index,
    /// Bytes of a string or streamer field.
    Bytes,
    /// Variant tags and indices.
    Switch,
}

/// Elements `[a, b)` of `column` in one cluster. For index slots, `with_base`
/// says the first element is the end of the entry before the range (the
/// base its offsets are relative to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotPiece {
    pub column: u32,
    pub a: u64,
    pub b: u64,
    pub with_base: bool,
}

#[derive(Debug)]
pub(crate) struct Slot {
    pub role: Role,
    pub proto: ColumnValues,
    /// One per span; `None` where the node has no elements.
    pub pieces: Vec<Option<SlotPiece>>,
}

#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub field: &'a FieldNode,
    pub children: Vec<usize>,
    /// Element range of this field in each span's cluster.
    pub ranges: Vec<(u64, u64)>,
    pub slots: Vec<usize>,
}

impl Node<'_> {
    /// Number of elements over all spans.
    pub fn len(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b - a).sum()
    }
}

/// One cluster touched by the read and the entries `[lo, hi)` read from it
/// (cluster-relative).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub cluster: &'a ClusterInfo,
    pub lo: u64,
    pub hi: u64,
}

#[derive(Debug)]
pub(crate) struct Plan<'a> {
    pub src: &'a PageSource,
    pub spans: Vec<Span<'a>>,
    pub nodes: Vec<Node<'a>>,
    pub roots: Vec<usize>,
    pub slots: Vec<Slot>,
    pub shape: ArrowShape,
    /// Streamer fields stay bytes ([`crate::ReadOptions::streamer_bytes`]).
    pub streamer_bytes: bool,
    resolved: Resolved,
}

/// The buffer variant of a primitive field's values.
pub(crate) fn primitive_proto(p: Primitive) -> ColumnValues {
    p.values()
}

pub(crate) fn structure_error(node: &FieldNode, cluster: &ClusterInfo, message: String) -> Error {
    Error::out_of_spec(
        message,
        Location::new(format!("field '{}' (id {}) in cluster {}", node.name, node.id, cluster.id), None),
    )
}

impl<'a> Plan<'a> {
    /// The nodes and slots of the selected parts of `fields` over entries `[start, stop)`.
    pub(crate) fn new(src: &'a PageSource, fields: &[Selected<'a>], start: u64, stop: u64, shape: ArrowShape) -> Self {
        let spans: Vec<Span> = src
            .desc
            .clusters
            .iter()
            .filter(|c| c.first_entry < stop && c.first_entry + c.num_entries > start)
            .map(|c| Span {
                cluster: c,
                lo: start.max(c.first_entry) - c.first_entry,
                hi: stop.min(c.first_entry + c.num_entries) - c.first_entry,
            })
            .collect();
        let mut plan = Plan {
            src,
            spans,
            nodes: Vec::new(),
            roots: Vec::new(),
            slots: Vec::new(),
            shape,
            streamer_bytes: false,
            resolved: HashMap::new(),
        };
        for s in fields {
            let id = plan.add(s.field, &s.keep);
            plan.roots.push(id);
        }
        plan
    }

    /// The type of the first column of each of `field`'s representations
    /// when the read is [`ArrowShape::ColumnTypes`] (else none).
    pub(crate) fn first_column_types(&self, field: &FieldNode) -> Vec<ColumnType> {
        if self.shape != ArrowShape::ColumnTypes {
            return Vec::new();
        }
        let columns = &self.src.desc.columns;
        field
            .representations
            .iter()
            .filter_map(|r| r.first().and_then(|&c| columns.get(c as usize)))
            .map(|c| c.column_type)
            .collect()
    }

    /// Whether every representation of `field` has a first column of one of
    /// `types` (and there is one), under [`ArrowShape::ColumnTypes`].
    pub(crate) fn columns_all(&self, field: &FieldNode, types: &[ColumnType]) -> bool {
        let found = self.first_column_types(field);
        !found.is_empty() && found.iter().all(|t| types.contains(t))
    }

    /// Under [`ArrowShape::ColumnTypes`], the buffer of the in-memory type of
    /// `field`'s column when all its representations agree on it. A
    /// `double` stored as Real32Quant stays double: ROOT dequantises it in
    /// double precision (spec "Real32Quant"), which float32 would round.
    fn column_proto(&self, field: &FieldNode) -> Option<ColumnValues> {
        let types = self.first_column_types(field);
        if field.kind == FieldKind::Primitive(Primitive::F64) && types.contains(&ColumnType::Real32Quant) {
            return None;
        }
        let mut protos = types.into_iter().map(ColumnValues::for_column);
        let first = protos.next()?.ok()?;
        protos.all(|p| p.is_ok_and(|p| p.kind() == first.kind())).then_some(first)
    }

    /// Adds `field` with the subfields `keep` selects (a variant keeps all
    /// its alternatives: their positions are the switch tags).
    fn add(&mut self, field: &'a FieldNode, keep: &Keep) -> usize {
        let spans = self.spans.len();
        let slot = |plan: &mut Self, role: Role, proto: ColumnValues| {
            plan.slots.push(Slot { role, proto, pieces: vec![None; spans] });
            plan.slots.len() - 1
        };
        let slots = match &field.kind {
            FieldKind::Primitive(p) => {
                let proto = self.column_proto(field).unwrap_or_else(|| primitive_proto(*p));
                vec![slot(self, Role::Values, proto)]
            }
            FieldKind::Bitset { .. } => vec![slot(self, Role::Values, ColumnValues::Bool(Vec::new()))],
            FieldKind::String | FieldKind::Streamer => vec![
                slot(self, Role::Index, ColumnValues::Index(Vec::new())),
                slot(self, Role::Bytes, ColumnValues::U8(Vec::new())),
            ],
            FieldKind::Cardinality { .. } | FieldKind::Collection { .. } => {
                vec![slot(self, Role::Index, ColumnValues::Index(Vec::new()))]
            }
            FieldKind::Variant => {
                vec![slot(self, Role::Switch, ColumnValues::Switch { index: Vec::new(), tag: Vec::new() })]
            }
            _ => Vec::new(),
        };
        let id = self.nodes.len();
        self.nodes.push(Node { field, children: Vec::new(), ranges: vec![(0, 0); spans], slots });
        let children = match keep {
            Keep::Some(kept) if field.kind != FieldKind::Variant => kept
                .iter()
                .filter_map(|(i, k)| field.children.get(*i).map(|c| (c, k)))
                .map(|(c, k)| self.add(c, k))
                .collect(),
            _ => field.children.iter().map(|c| self.add(c, &Keep::All)).collect(),
        };
        self.nodes[id].children = children;
        id
    }

    /// Computes every node's ranges, reading the offsets and tags of cut
    /// fields in rounds (one nesting level per round) until all are known.
    pub(crate) fn resolve(&mut self, pool: &Pool, verify: bool) -> Result<()> {
        loop {
            for n in &mut self.nodes {
                n.ranges.iter_mut().for_each(|r| *r = (0, 0));
            }
            for s in &mut self.slots {
                s.pieces.iter_mut().for_each(|p| *p = None);
            }
            let mut needs: Vec<(usize, u32, u64, u64, ColumnValues)> = Vec::new();
            for r in 0..self.spans.len() {
                let Span { cluster, lo, hi } = self.spans[r];
                let full = lo == 0 && hi == cluster.num_entries;
                for i in 0..self.roots.len() {
                    self.resolve_node(self.roots[i], r, lo, hi, full, &mut needs)?;
                }
            }
            if needs.is_empty() {
                return Ok(());
            }
            needs.sort_by_key(|n| (n.0, n.1, n.2, n.3));
            needs.dedup_by_key(|n| (n.0, n.1, n.2, n.3));
            let mut jobs: Vec<Job> = needs
                .iter()
                .map(|(r, column, a, b, proto)| {
                    let piece = Piece {
                        r: *r,
                        cluster: self.spans[*r].cluster,
                        column: *column,
                        a: *a,
                        b: *b,
                        offset: 0,
                        pre: None,
                    };
                    Job::new(proto, b - a, vec![piece])
                })
                .collect();
            decode_jobs(self.src, &mut jobs, pool, verify)?;
            for ((r, column, a, b, _), job) in needs.into_iter().zip(jobs) {
                self.resolved.insert((r, column, a, b), job.sink);
            }
        }
    }

    /// The output buffers of all slots, with their pieces; values decoded
    /// while planning are copied instead of read again.
    pub(crate) fn jobs(&self) -> Vec<Job<'_>> {
        self.slots
            .iter()
            .map(|slot| {
                let mut offset = u64::from(slot.role == Role::Index);
                let mut pieces = Vec::new();
                for (r, p) in slot.pieces.iter().enumerate() {
                    let Some(p) = *p else { continue };
                    let pre = self.resolved.get(&(r, p.column, p.a, p.b));
                    pieces.push(Piece {
                        r,
                        cluster: self.spans[r].cluster,
                        column: p.column,
                        a: p.a,
                        b: p.b,
                        offset,
                        pre,
                    });
                    offset += p.b - p.a;
                }
                Job::new(&slot.proto, offset, pieces)
            })
            .collect()
    }

    /// Elements of `f` in `cluster` according to the page list, if the
    /// cluster stores them (used when the cluster is read whole).
    fn count(&self, f: &FieldNode, cluster: &ClusterInfo) -> Option<u64> {
        let principal = || {
            let cols = self.src.primary(&f.representations, cluster)?;
            self.src.column_extent(*cols.first()?, cluster).ok()?.count()
        };
        let per = |n: u64, size: u64| (size > 0 && n % size == 0).then(|| n / size);
        match &f.kind {
            FieldKind::Primitive(_)
            | FieldKind::String
            | FieldKind::Streamer
            | FieldKind::Cardinality { .. }
            | FieldKind::Collection { .. }
            | FieldKind::Variant => principal(),
            FieldKind::Bitset { size } => per(principal()?, *size),
            FieldKind::Array { size } => per(self.count(f.children.first()?, cluster)?, *size),
            FieldKind::Record => f.children.iter().find_map(|c| self.count(c, cluster)),
            FieldKind::Wrapper => self.count(f.children.first()?, cluster),
            FieldKind::Unsupported(_) => None,
        }
    }

    fn set_piece(&mut self, slot: usize, r: usize, piece: SlotPiece) {
        self.slots[slot].pieces[r] = Some(piece);
    }

    /// Sets the range `[a, b)` of node `n` in span `r` and, recursively, of
    /// its subfields. `full`: the range is everything the cluster holds of
    /// the field. Offsets or tags still to be read go to `needs`.
    fn resolve_node(
        &mut self,
        n: usize,
        r: usize,
        a: u64,
        b: u64,
        full: bool,
        needs: &mut Vec<(usize, u32, u64, u64, ColumnValues)>,
    ) -> Result<()> {
        self.nodes[n].ranges[r] = (a, b);
        let field = self.nodes[n].field;
        let cluster = self.spans[r].cluster;
        let src = self.src;
        let principal = |k: usize| -> Result<&'a [u32]> {
            match src.primary(&field.representations, cluster) {
                Some(cols) if cols.len() >= k => Ok(cols),
                _ => Err(structure_error(field, cluster, format!("field needs {k} column(s) but has none attached"))),
            }
        };
        let scaled = |size: u64| match (a.checked_mul(size), b.checked_mul(size)) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(structure_error(
                field,
                cluster,
                format!("element {b} of a repetitive field of size {size} overflows"),
            )),
        };
        match &field.kind {
            FieldKind::Primitive(_) => {
                let cols = principal(1)?;
                if a < b {
                    let slot = self.nodes[n].slots[0];
                    self.set_piece(slot, r, SlotPiece { column: cols[0], a, b, with_base: false });
                }
            }
            FieldKind::Bitset { size } => {
                let cols = principal(1)?;
                let (ca, cb) = scaled(*size)?;
                if ca < cb {
                    let slot = self.nodes[n].slots[0];
                    self.set_piece(slot, r, SlotPiece { column: cols[0], a: ca, b: cb, with_base: false });
                }
            }
            FieldKind::String | FieldKind::Streamer | FieldKind::Cardinality { .. } | FieldKind::Collection { .. } => {
                let two = matches!(field.kind, FieldKind::String | FieldKind::Streamer);
                let cols = principal(if two { 2 } else { 1 })?;
                if a >= b {
                    return Ok(());
                }
                let with_base = a > 0;
                let ia = a - u64::from(with_base);
                let slot = self.nodes[n].slots[0];
                self.set_piece(slot, r, SlotPiece { column: cols[0], a: ia, b, with_base });
                if matches!(field.kind, FieldKind::Cardinality { .. }) {
                    return Ok(());
                }
                let known = if full {
                    if two {
                        src.column_extent(cols[1], cluster).ok().and_then(|e| e.count())
                    } else {
                        field.children.first().and_then(|c| self.count(c, cluster))
                    }
                } else {
                    None
                };
                let (ca, cb, child_full) = match known {
                    Some(c) => (0, c, true),
                    None => match self.resolved.get(&(r, cols[0], ia, b)) {
                        Some(ColumnValues::Index(v)) if !v.is_empty() => {
                            let base = if with_base { v[0] } else { 0 };
                            let last = *v.last().unwrap_or(&base);
                            if last < base {
                                return Err(structure_error(
                                    field,
                                    cluster,
                                    format!("index column {} decreases from {base} to {last}", cols[0]),
                                ));
                            }
                            (base, last, full && base == 0)
                        }
                        Some(_) => {
                            return Err(structure_error(field, cluster, format!("column {} is not an index", cols[0])))
                        }
                        None => {
                            needs.push((r, cols[0], ia, b, ColumnValues::Index(Vec::new())));
                            return Ok(());
                        }
                    },
                };
                if two {
                    if ca < cb {
                        let slot = self.nodes[n].slots[1];
                        self.set_piece(slot, r, SlotPiece { column: cols[1], a: ca, b: cb, with_base: false });
                    }
                } else if let Some(&child) = self.nodes[n].children.first() {
                    self.resolve_node(child, r, ca, cb, child_full, needs)?;
                }
            }
            FieldKind::Array { size } => {
                let (ca, cb) = scaled(*size)?;
                if let Some(&child) = self.nodes[n].children.first() {
                    self.resolve_node(child, r, ca, cb, full, needs)?;
                }
            }
            FieldKind::Record | FieldKind::Wrapper => {
                for i in 0..self.nodes[n].children.len() {
                    let child = self.nodes[n].children[i];
                    self.resolve_node(child, r, a, b, full, needs)?;
                }
            }
            FieldKind::Variant => {
                let cols = principal(1)?;
                let alternatives = field.children.len();
                if alternatives == 0 || alternatives > 125 {
                    return Err(structure_error(field, cluster, format!("variant with {alternatives} alternatives")));
                }
                if a >= b {
                    return Ok(());
                }
                let slot = self.nodes[n].slots[0];
                self.set_piece(slot, r, SlotPiece { column: cols[0], a, b, with_base: false });
                let counts: Option<Vec<u64>> =
                    if full { field.children.iter().map(|c| self.count(c, cluster)).collect() } else { None };
                let ranges: Vec<(u64, u64, bool)> = match counts {
                    Some(c) => c.into_iter().map(|c| (0, c, true)).collect(),
                    None => match self.resolved.get(&(r, cols[0], a, b)) {
                        Some(ColumnValues::Switch { index, tag }) => {
                            variant_ranges(field, cluster, a, index, tag, alternatives)?
                                .into_iter()
                                .map(|(lo, hi)| (lo, hi, false))
                                .collect()
                        }
                        Some(_) => {
                            return Err(structure_error(field, cluster, "variant column is not a Switch column".into()))
                        }
                        None => {
                            needs.push((r, cols[0], a, b, ColumnValues::Switch { index: Vec::new(), tag: Vec::new() }));
                            return Ok(());
                        }
                    },
                };
                for (k, (lo, hi, child_full)) in ranges.into_iter().enumerate() {
                    let child = self.nodes[n].children[k];
                    self.resolve_node(child, r, lo, hi, child_full, needs)?;
                }
            }
            FieldKind::Unsupported(what) => {
                return Err(Error::unsupported(
                    what.clone(),
                    Location::new(format!("field '{}' (type '{}')", field.name, field.type_name), None),
                ))
            }
        }
        Ok(())
    }
}

/// Element range of each alternative touched by the switch values of
/// entries starting at `a` (spec "Variant": tag 0 is the valueless state,
/// tag k selects alternative k - 1 at the given index).
pub(crate) fn variant_ranges(
    field: &FieldNode,
    cluster: &ClusterInfo,
    a: u64,
    index: &[u64],
    tag: &[u32],
    alternatives: usize,
) -> Result<Vec<(u64, u64)>> {
    let mut ranges = vec![(u64::MAX, 0u64); alternatives];
    for (i, (&ix, &t)) in index.iter().zip(tag).enumerate() {
        if t as usize > alternatives {
            return Err(structure_error(
                field,
                cluster,
                format!("variant tag {t} at element {} but only {alternatives} alternatives", a + i as u64),
            ));
        }
        if t > 0 {
            let r = &mut ranges[t as usize - 1];
            r.0 = r.0.min(ix);
            r.1 = r.1.max(ix.saturating_add(1));
        }
    }
    for (k, r) in ranges.iter_mut().enumerate() {
        if r.0 == u64::MAX {
            *r = (0, 0);
        }
        if r.1 - r.0 > index.len() as u64 * 4 + 1024 {
            // Sparse or hostile indices: refuse to read far more than the entries can hold.
            return Err(structure_error(
                field,
                cluster,
                format!("variant alternative {k} indices span {}..{}", r.0, r.1),
            ));
        }
    }
    Ok(ranges)
}
