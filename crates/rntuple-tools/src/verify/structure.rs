//! Structural checks of one cluster against the field tree (spec "Mapping of
//! C++ Types to Fields and Columns", "Page List Envelope", "Suppressed
//! Columns"), and of element offsets from cluster to cluster.

use std::collections::HashMap;

use rntuple::descriptor::{ClusterInfo, Descriptor};
use rntuple::format::column::ColumnValues;
use rntuple::format::model::ColumnType;
use rntuple::schema::FieldAt;
use rntuple::{field_multipliers, FieldKind, FieldNode, Schema};

use super::{Reporter, Where};

/// The schema's field tree by field id, with the engine's multipliers.
pub(crate) struct Tree<'s> {
    pub(crate) schema: &'s Schema,
    /// Per field id: the field with its path ([`Schema::by_id`]).
    pub(crate) fields: Vec<Option<FieldAt<'s>>>,
    /// Per field id: [`rntuple::field_multipliers`].
    multiplier: Vec<Option<u64>>,
    /// Per column: its field and its position in its representation.
    column_field: Vec<(usize, usize)>,
}

impl<'s> Tree<'s> {
    pub(crate) fn new(d: &Descriptor, schema: &'s Schema) -> Self {
        let fields = schema.by_id();
        let mut column_field: Vec<(usize, usize)> = d.columns.iter().map(|c| (c.field_id as usize, 0)).collect();
        for f in fields.iter().flatten().filter(|f| !f.node.projected) {
            for cols in &f.node.representations {
                for (pos, &c) in cols.iter().enumerate() {
                    if let Some(slot) = column_field.get_mut(c as usize) {
                        *slot = (f.node.id as usize, pos);
                    }
                }
            }
        }
        Self { schema, multiplier: field_multipliers(schema, d.fields.len()), fields, column_field }
    }

    /// Dotted path of field `f`.
    pub(crate) fn path(&self, f: usize) -> &str {
        self.fields.get(f).and_then(|x| x.as_ref()).map_or("", |x| x.path.as_str())
    }
}

/// How a column appears in a cluster's page list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listing {
    /// Not listed (a column added after the cluster was written).
    Absent,
    Suppressed,
    /// Listed with this element offset and this many elements in its pages.
    Present {
        element_offset: u64,
        elements: u64,
    },
}

/// What the page pass learnt about one cluster.
pub(crate) struct ClusterData<'a> {
    pub(crate) cluster: &'a ClusterInfo,
    /// Per physical column of the schema.
    pub(crate) listing: Vec<Listing>,
    /// Decoded index and switch columns whose pages all decoded.
    pub(crate) values: HashMap<u32, ColumnValues>,
}

impl ClusterData<'_> {
    fn elements(&self, c: u32) -> Option<u64> {
        match self.listing.get(c as usize) {
            Some(Listing::Present { elements, .. }) => Some(*elements),
            _ => None,
        }
    }
}

struct Ctx<'a, 'r, 'p> {
    d: &'a Descriptor,
    tree: &'a Tree<'a>,
    data: &'a ClusterData<'a>,
    r: &'r mut Reporter<'p>,
}

impl Ctx<'_, '_, '_> {
    fn at(&self, check: &'static str, f: usize, col: Option<u32>) -> Where {
        let mut w = Where::check(check).cluster(self.data.cluster.id).field(self.tree.path(f));
        w.column = col;
        w
    }

    /// Zero elements a deferred column has at the start of this cluster.
    fn leading_zeros(&self, f: usize, col: u32, expected: u64) -> u64 {
        let first = self.d.columns[col as usize].first_element_index.unwrap_or(0);
        match (first > 0, self.tree.multiplier.get(f).copied().flatten()) {
            (true, Some(m)) => {
                let start = self.data.cluster.first_entry.saturating_mul(m);
                (first as u64).saturating_sub(start).min(expected)
            }
            _ => 0,
        }
    }

    fn visit(&mut self, node: &FieldNode, items: Option<u64>) {
        if node.projected {
            return;
        }
        let f = node.id as usize;
        let mut child_items: Option<u64> = None;
        let mut alt_items: Vec<Option<u64>> = Vec::new();
        let reps = &node.representations;
        if !reps.is_empty() {
            let state = |cols: &Vec<u32>| cols.first().map(|&c| self.data.listing[c as usize]);
            let listed = reps.iter().filter(|cols| !matches!(state(cols), None | Some(Listing::Absent))).count();
            let present: Vec<usize> =
                (0..reps.len()).filter(|&i| matches!(state(&reps[i]), Some(Listing::Present { .. }))).collect();
            if listed > 0 && present.len() != 1 {
                let msg = format!(
                    "{} of the field's {} column representations are primary in this cluster (exactly one must be)",
                    present.len(),
                    reps.len()
                );
                let w = self.at("representations", f, None);
                self.r.structure(w, msg);
            }
            if let Some(&p) = present.first() {
                self.check_columns(node, &reps[p], items, &mut child_items, &mut alt_items);
            }
        }
        // Below a field this implementation cannot classify, counts are not checked.
        let per_child = match &node.kind {
            FieldKind::Collection { .. } => child_items,
            FieldKind::Variant => None,
            FieldKind::Array { size } => items.and_then(|n| n.checked_mul((*size).max(1))),
            FieldKind::Unsupported(_) => None,
            _ => items,
        };
        for (i, k) in node.children.iter().enumerate() {
            let n = if node.kind == FieldKind::Variant { alt_items.get(i).copied().flatten() } else { per_child };
            self.visit(k, n);
        }
    }

    fn check_columns(
        &mut self,
        node: &FieldNode,
        cols: &[u32],
        items: Option<u64>,
        child_items: &mut Option<u64>,
        alt_items: &mut Vec<Option<u64>>,
    ) {
        let f = node.id as usize;
        let c0 = cols[0];
        let stored = self.data.elements(c0).unwrap_or(0);
        // A repetitive leaf with columns (std::bitset<N>) stores N elements per value.
        let per_value = match node.kind {
            FieldKind::Bitset { size } => size.max(1),
            _ => 1,
        };
        if let Some(n) = items {
            let expected = n.saturating_mul(per_value);
            let zeros = self.leading_zeros(f, c0, expected);
            if stored.saturating_add(zeros) != expected {
                let how =
                    if zeros > 0 { format!(" (+{zeros} leading zeros of the deferred column)") } else { String::new() };
                let msg = format!(
                    "the column's pages hold {stored} elements{how}, the field needs {expected} in this cluster \
                     ({n} values{})",
                    if per_value > 1 { format!(" × {per_value}") } else { String::new() }
                );
                let w = self.at("elements", f, Some(c0));
                self.r.structure(w, msg);
            }
        }
        let ct = self.d.columns[c0 as usize].column_type;
        if ct.is_index() {
            let Some(ColumnValues::Index(ends)) = self.data.values.get(&c0) else { return };
            let nullable = node.kind == FieldKind::Collection { nullable: true };
            let mut prev = 0u64;
            for (i, &e) in ends.iter().enumerate() {
                if e < prev {
                    let msg = format!("offset column decreases at element {i}: {prev} then {e}");
                    let w = self.at("offsets", f, Some(c0));
                    self.r.structure(w, msg);
                    return;
                }
                if nullable && e - prev > 1 {
                    let msg = format!("optional value {i} has {} elements (at most 1 allowed)", e - prev);
                    let w = self.at("offsets", f, Some(c0));
                    self.r.structure(w, msg);
                    return;
                }
                prev = e;
            }
            *child_items = Some(prev);
            if let Some(&c1) = cols.get(1) {
                // std::string, streamer fields: the offsets end at the byte column's length.
                let bytes = self.data.elements(c1).unwrap_or(0);
                if bytes != prev {
                    let msg = format!("the offset column ends at {prev} but the data column holds {bytes} elements");
                    let w = self.at("elements", f, Some(c1));
                    self.r.structure(w, msg);
                }
            }
        } else if ct == ColumnType::Switch {
            let Some(ColumnValues::Switch { index, tag }) = self.data.values.get(&c0) else { return };
            let n_alt = node.children.len();
            let mut per_alt = vec![0u64; n_alt];
            for (i, &t) in tag.iter().enumerate() {
                if t as usize > n_alt {
                    let msg = format!("variant tag {t} at element {i}, but the field has {n_alt} alternatives");
                    let w = self.at("variant", f, Some(c0));
                    self.r.structure(w, msg);
                    return;
                }
                if t > 0 {
                    per_alt[t as usize - 1] += 1;
                }
            }
            for (i, (&t, &ix)) in tag.iter().zip(index).enumerate() {
                if t > 0 && ix >= per_alt[t as usize - 1] {
                    let msg = format!(
                        "variant element {i} points at item {ix} of alternative {t}, which has {} items in this cluster",
                        per_alt[t as usize - 1]
                    );
                    let w = self.at("variant", f, Some(c0));
                    self.r.structure(w, msg);
                    return;
                }
            }
            *alt_items = per_alt.into_iter().map(Some).collect();
        }
    }
}

/// Checks one cluster: element counts, offsets, variants, representations.
pub(crate) fn check_cluster(d: &Descriptor, tree: &Tree<'_>, data: &ClusterData<'_>, r: &mut Reporter<'_>) {
    let mut ctx = Ctx { d, tree, data, r };
    for f in &tree.schema.fields {
        ctx.visit(f, Some(data.cluster.num_entries));
    }
}

/// Element offsets from cluster to cluster (spec "Page Locations": the
/// per-column, per-cluster element offset is the index of the cluster's
/// first element of the column).
pub(crate) struct Offsets {
    next: Vec<Option<u64>>,
}

impl Offsets {
    pub(crate) fn new(num_columns: usize) -> Self {
        Self { next: vec![None; num_columns] }
    }

    pub(crate) fn check(&mut self, d: &Descriptor, tree: &Tree<'_>, data: &ClusterData<'_>, r: &mut Reporter<'_>) {
        for (c, l) in data.listing.iter().enumerate() {
            if let Listing::Present { element_offset, elements } = *l {
                let first = d.columns[c].first_element_index.filter(|&f| f > 0).map_or(0, |f| f as u64);
                let expected = self.next[c].unwrap_or(first);
                if element_offset != expected {
                    let (f, _) = tree.column_field[c];
                    let at = Where::check("offsets").cluster(data.cluster.id).column(c as u32).field(tree.path(f));
                    let why = if self.next[c].is_some() {
                        "the previous cluster's offset plus its elements"
                    } else if first > 0 {
                        "the deferred column's first element index"
                    } else {
                        "0 in the column's first cluster"
                    };
                    r.structure(at, format!("element offset {element_offset}, expected {expected} ({why})"));
                }
                self.next[c] = Some(element_offset.saturating_add(elements));
            }
        }
        // Suppressed columns follow the column at the same position in the
        // field's primary representation of the cluster.
        for (c, l) in data.listing.iter().enumerate() {
            if *l != Listing::Suppressed {
                continue;
            }
            let (f, pos) = tree.column_field[c];
            let Some(Some(field)) = tree.fields.get(f) else { continue };
            let primary = field.node.representations.iter().filter_map(|cols| cols.get(pos)).find_map(|&p| match data
                .listing[p as usize]
            {
                Listing::Present { element_offset, elements } => Some((element_offset, elements)),
                _ => None,
            });
            if let Some((offset, elements)) = primary {
                let base = self.next[c].unwrap_or(offset);
                self.next[c] = Some(base.saturating_add(elements));
            }
        }
    }
}
