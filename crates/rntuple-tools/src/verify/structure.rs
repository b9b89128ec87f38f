//! Structural checks of one cluster against the field tree (spec "Mapping of
//! C++ Types to Fields and Columns", "Page List Envelope", "Suppressed
//! Columns"), and of element offsets from cluster to cluster.

use std::collections::HashMap;

use rntuple::descriptor::{ClusterInfo, Descriptor};
use rntuple::format::column::ColumnValues;
use rntuple::format::model::{ColumnType, StructuralRole, FIELD_FLAG_PROJECTED, FIELD_FLAG_REPETITIVE};

use super::{Reporter, Where};
use crate::load::FieldFacts;

/// The field tree with each field's physical columns by representation.
pub(crate) struct Tree {
    pub(crate) facts: FieldFacts,
    children: Vec<Vec<usize>>,
    /// Per field: representations (by index) of physical column ids.
    reps: Vec<Vec<Vec<u32>>>,
    top_level: Vec<usize>,
    /// Per column: its field and its position in its representation.
    column_field: Vec<(usize, usize, usize)>,
}

impl Tree {
    pub(crate) fn new(d: &Descriptor, facts: FieldFacts) -> Self {
        let n = d.fields.len();
        let mut children = vec![Vec::new(); n];
        let mut top_level = Vec::new();
        for (i, f) in d.fields.iter().enumerate() {
            let p = f.parent_id as usize;
            if p == i {
                top_level.push(i);
            } else if p < n {
                children[p].push(i);
            }
        }
        let mut reps: Vec<Vec<Vec<u32>>> = vec![Vec::new(); n];
        let mut column_field = Vec::with_capacity(d.columns.len());
        for (cid, c) in d.columns.iter().enumerate() {
            let f = c.field_id as usize;
            let r = c.representation_index as usize;
            let list = &mut reps[f];
            // Representation indexes are consecutive (spec); a gap is only
            // padded here, the reader reports it as it sees fit.
            if r >= list.len() && r < 1 << 16 {
                list.resize(r + 1, Vec::new());
            }
            let pos = list.get(r).map_or(0, |l| l.len());
            if let Some(l) = list.get_mut(r) {
                l.push(cid as u32);
            }
            column_field.push((f, r, pos));
        }
        Self { facts, children, reps, top_level, column_field }
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
    tree: &'a Tree,
    data: &'a ClusterData<'a>,
    r: &'r mut Reporter<'p>,
}

impl Ctx<'_, '_, '_> {
    fn at(&self, check: &'static str, f: usize, col: Option<u32>) -> Where {
        let mut w = Where::check(check).cluster(self.data.cluster.id).field(&self.tree.facts.path[f]);
        w.column = col;
        w
    }

    /// Zero elements a deferred column has at the start of this cluster.
    fn leading_zeros(&self, f: usize, col: u32, expected: u64) -> u64 {
        let first = self.d.columns[col as usize].first_element_index.unwrap_or(0);
        match (first > 0, self.tree.facts.multiplier[f]) {
            (true, Some(m)) => {
                let start = self.data.cluster.first_entry.saturating_mul(m);
                (first as u64).saturating_sub(start).min(expected)
            }
            _ => 0,
        }
    }

    fn visit(&mut self, f: usize, items: Option<u64>) {
        let fd = &self.d.fields[f];
        if fd.flags & FIELD_FLAG_PROJECTED != 0 {
            return;
        }
        let mut child_items: Option<u64> = None;
        let mut alt_items: Vec<Option<u64>> = Vec::new();
        let reps = &self.tree.reps[f];
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
                self.check_columns(f, &reps[p], items, &mut child_items, &mut alt_items);
            }
        }
        let kids = &self.tree.children[f];
        match fd.role {
            StructuralRole::Collection => {
                for &k in kids {
                    self.visit(k, child_items);
                }
            }
            StructuralRole::Variant => {
                for (i, &k) in kids.iter().enumerate() {
                    self.visit(k, alt_items.get(i).copied().flatten());
                }
            }
            _ => {
                let reps_of_self =
                    if fd.flags & FIELD_FLAG_REPETITIVE != 0 { fd.array_size.unwrap_or(1).max(1) } else { 1 };
                let n = items.and_then(|n| n.checked_mul(reps_of_self));
                for &k in kids {
                    self.visit(k, n);
                }
            }
        }
    }

    fn check_columns(
        &mut self,
        f: usize,
        cols: &[u32],
        items: Option<u64>,
        child_items: &mut Option<u64>,
        alt_items: &mut Vec<Option<u64>>,
    ) {
        let fd = &self.d.fields[f];
        let c0 = cols[0];
        let stored = self.data.elements(c0).unwrap_or(0);
        // A repetitive leaf with columns (std::bitset<N>) stores N elements per value.
        let per_value = if fd.flags & FIELD_FLAG_REPETITIVE != 0 { fd.array_size.unwrap_or(1).max(1) } else { 1 };
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
            let nullable = fd.role == StructuralRole::Collection
                && (fd.type_name.starts_with("std::optional<") || fd.type_name.starts_with("std::unique_ptr<"));
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
            let n_alt = self.tree.children[f].len();
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
pub(crate) fn check_cluster(d: &Descriptor, tree: &Tree, data: &ClusterData<'_>, r: &mut Reporter<'_>) {
    let mut ctx = Ctx { d, tree, data, r };
    for &f in &tree.top_level {
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

    pub(crate) fn check(&mut self, d: &Descriptor, tree: &Tree, data: &ClusterData<'_>, r: &mut Reporter<'_>) {
        for (c, l) in data.listing.iter().enumerate() {
            if let Listing::Present { element_offset, elements } = *l {
                let first = d.columns[c].first_element_index.filter(|&f| f > 0).map_or(0, |f| f as u64);
                let expected = self.next[c].unwrap_or(first);
                if element_offset != expected {
                    let (f, _, _) = tree.column_field[c];
                    let at =
                        Where::check("offsets").cluster(data.cluster.id).column(c as u32).field(&tree.facts.path[f]);
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
            let (f, _, pos) = tree.column_field[c];
            let primary =
                tree.reps[f].iter().filter_map(|cols| cols.get(pos)).find_map(|&p| match data.listing[p as usize] {
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
