//! Field selections: top-level fields, or subfields named by dotted paths
//! (`"Muon.pt"`), resolved to the part of each field tree a read plans.
//!
//! A subfield selection keeps, of every record on the way down, only the
//! members on a selected path; a collection, array or wrapper keeps its
//! single item field. The plan then reads the selected leaves' columns and
//! the offsets of the collections above them, nothing else. A variant is
//! always read whole (its alternatives share one switch column).

use rntuple_format::{Error, Result};

use crate::schema::{FieldKind, FieldNode};

/// The part of a field a read keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The field with all its subfields.
    All,
    /// Only these children (index into `children`, ascending), each with its own part.
    Some(Vec<(usize, Keep)>),
}

impl Keep {
    /// Adds the path of child positions `route` (everything below its end).
    fn insert(&mut self, route: &[usize]) {
        let Some((&first, rest)) = route.split_first() else {
            *self = Keep::All;
            return;
        };
        let Keep::Some(kids) = self else { return };
        let at = match kids.binary_search_by_key(&first, |(i, _)| *i) {
            Ok(at) => at,
            Err(at) => {
                let empty = if rest.is_empty() { Keep::All } else { Keep::Some(Vec::new()) };
                kids.insert(at, (first, empty));
                at
            }
        };
        kids[at].1.insert(rest);
    }
}

/// A top-level field to read and the part of it kept.
#[derive(Debug, Clone)]
pub(crate) struct Selected<'a> {
    pub field: &'a FieldNode,
    pub keep: Keep,
}

impl<'a> Selected<'a> {
    /// The whole field.
    pub(crate) fn whole(field: &'a FieldNode) -> Self {
        Selected { field, keep: Keep::All }
    }
}

/// Whether a child adds no name to user-facing paths: the item of a
/// collection, array or wrapper, or a base class (`:_0`, spec "Field
/// Description" of derived classes).
fn transparent(parent: &FieldNode, child: &FieldNode) -> bool {
    matches!(parent.kind, FieldKind::Collection { .. } | FieldKind::Array { .. } | FieldKind::Wrapper)
        || (parent.kind == FieldKind::Record && child.name.starts_with(":_"))
}

/// Child positions from `field` down to the subfield called `name`: a direct
/// child, or one reached through transparent children.
fn find_child(field: &FieldNode, name: &str) -> Option<Vec<usize>> {
    if let Some(i) = field.children.iter().position(|c| c.name == name) {
        return Some(vec![i]);
    }
    field.children.iter().enumerate().find_map(|(i, c)| {
        if !transparent(field, c) {
            return None;
        }
        let mut route = find_child(c, name)?;
        route.insert(0, i);
        Some(route)
    })
}

/// Resolves `paths` (top-level names or dotted paths of on-disk subfield
/// names; item fields of collections and base classes may be left out) over
/// the top-level `fields`. The result lists each top-level field once, in
/// the order of its first path.
pub(crate) fn resolve<'a>(fields: &'a [FieldNode], paths: &[&str], ntuple: &str) -> Result<Vec<Selected<'a>>> {
    let mut out: Vec<Selected<'a>> = Vec::new();
    for path in paths {
        let not_found = || Error::NotFound { what: format!("field '{path}' in RNTuple '{ntuple}'") };
        let mut parts = path.split('.');
        let top_name = parts.next().unwrap_or_default();
        let top = fields.iter().find(|f| f.name == top_name).ok_or_else(not_found)?;
        let mut route = Vec::new();
        let mut at = top;
        for part in parts {
            if at.kind == FieldKind::Variant {
                break; // read whole
            }
            let steps = find_child(at, part).ok_or_else(not_found)?;
            for &i in &steps {
                at = &at.children[i];
            }
            route.extend(steps);
        }
        let pos = match out.iter().position(|s| std::ptr::eq(s.field, top)) {
            Some(pos) => pos,
            None => {
                out.push(Selected { field: top, keep: Keep::Some(Vec::new()) });
                out.len() - 1
            }
        };
        out[pos].keep.insert(&route);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Primitive;

    fn node(name: &str, kind: FieldKind, children: Vec<FieldNode>) -> FieldNode {
        FieldNode {
            id: 0,
            name: name.into(),
            type_name: String::new(),
            type_alias: String::new(),
            description: String::new(),
            kind,
            type_version: 0,
            type_checksum: None,
            array_size: None,
            projected: false,
            soa: false,
            source_field_id: None,
            children,
            representations: Vec::new(),
        }
    }

    fn muon() -> Vec<FieldNode> {
        let leaf = |n: &str| node(n, FieldKind::Primitive(Primitive::F32), Vec::new());
        let base = node(":_0", FieldKind::Record, vec![leaf("charge")]);
        let item = node("_0", FieldKind::Record, vec![base, leaf("pt"), leaf("eta")]);
        vec![
            node("n", FieldKind::Primitive(Primitive::I32), Vec::new()),
            node("Muon", FieldKind::Collection { nullable: false }, vec![item]),
        ]
    }

    #[test]
    fn dotted_paths_keep_only_their_branch() {
        let fields = muon();
        let sel = resolve(&fields, &["Muon.pt", "n", "Muon._0.eta", "Muon.charge"], "t").expect("resolve");
        assert_eq!(sel.len(), 2);
        assert_eq!(sel[0].field.name, "Muon");
        let expected = Keep::Some(vec![(
            0,
            Keep::Some(vec![(0, Keep::Some(vec![(0, Keep::All)])), (1, Keep::All), (2, Keep::All)]),
        )]);
        assert_eq!(sel[0].keep, expected);
        assert_eq!((sel[1].field.name.as_str(), &sel[1].keep), ("n", &Keep::All));
    }

    #[test]
    fn a_whole_field_absorbs_its_paths_and_unknown_paths_fail() {
        let fields = muon();
        for order in [["Muon.pt", "Muon"], ["Muon", "Muon.pt"]] {
            let sel = resolve(&fields, &order, "t").expect("resolve");
            assert_eq!(sel[0].keep, Keep::All, "{order:?}");
        }
        for bad in ["Muon.phi", "Jet", "n.x"] {
            let err = resolve(&fields, &[bad], "t").expect_err(bad).to_string();
            assert!(err.contains(bad) && err.contains("'t'"), "{err}");
        }
    }
}
