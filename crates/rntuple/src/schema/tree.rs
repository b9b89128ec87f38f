//! The field tree, built from the flat field list of the descriptor
//! (spec "Field Description": the parent id links a field to its parent;
//! top-level fields are their own parent).

use std::collections::BTreeMap;

use arrow_schema::{DataType, Field};
use rntuple_format::model::{
    AliasColumnDescriptor, ColumnDescriptor, FieldDescriptor, SchemaDescription, FIELD_FLAG_PROJECTED,
};
use rntuple_format::{Error, Location, Result};

use super::arrow;
use super::kind::FieldKind;
use crate::descriptor::Descriptor;

/// Deepest field nesting accepted (guards against hostile descriptors).
const MAX_DEPTH: usize = 256;

/// One field with its subfields and columns.
#[derive(Debug, Clone)]
pub struct FieldNode {
    pub id: u32,
    pub name: String,
    pub type_name: String,
    pub type_alias: String,
    pub description: String,
    pub kind: FieldKind,
    /// Version of the C++ type (a class's `ClassDef` version; spec "Field Description").
    pub type_version: u32,
    /// ROOT's checksum of the class layout, when stored (flag 0x04).
    pub type_checksum: Option<u32>,
    /// Array size of a repetitive field (`std::array`, `std::bitset`).
    pub array_size: Option<u64>,
    pub projected: bool,
    /// A struct-of-arrays field (flag 0x08, `RSoAField`): a collection of its
    /// record subfield whose type name is the SoA class. Read as the
    /// collection it is on disk.
    pub soa: bool,
    /// For projected fields: the id of the field they present.
    pub source_field_id: Option<u32>,
    pub children: Vec<FieldNode>,
    /// Physical column ids, grouped by representation index (outer) in
    /// column order (inner). Alias columns of projected fields resolve to
    /// their physical columns.
    pub representations: Vec<Vec<u32>>,
}

/// The top-level fields of an RNTuple.
#[derive(Debug, Clone)]
pub struct Schema {
    pub fields: Vec<FieldNode>,
}

impl Schema {
    pub fn from_descriptor(d: &Descriptor) -> Result<Self> {
        Self::from_parts(&d.fields, &d.columns, &d.alias_columns)
    }

    /// The tree of a schema description: what the writer's plan declares
    /// (and a header envelope holds).
    pub fn from_description(s: &SchemaDescription) -> Result<Self> {
        Self::from_parts(&s.fields, &s.columns, &s.alias_columns)
    }

    fn from_parts(
        fields: &[FieldDescriptor],
        columns: &[ColumnDescriptor],
        alias_columns: &[AliasColumnDescriptor],
    ) -> Result<Self> {
        let d = Parts { fields, columns, alias_columns };
        let n = d.fields.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, f) in d.fields.iter().enumerate() {
            let p = f.parent_id as usize;
            if p == i {
                roots.push(i as u32);
            } else {
                children[p].push(i as u32);
            }
        }
        // Columns of each field, grouped by representation index.
        let mut reps: Vec<BTreeMap<u16, Vec<u32>>> = vec![BTreeMap::new(); n];
        for (cid, c) in d.columns.iter().enumerate() {
            reps[c.field_id as usize].entry(c.representation_index).or_default().push(cid as u32);
        }
        for a in d.alias_columns {
            let phys = &d.columns[a.physical_column_id as usize];
            reps[a.field_id as usize].entry(phys.representation_index).or_default().push(a.physical_column_id);
        }
        let mut visited = vec![false; n];
        let mut fields = Vec::with_capacity(roots.len());
        for r in roots {
            fields.push(build(&d, r, &children, &mut reps, &mut visited, 0)?);
        }
        if let Some(orphan) = visited.iter().position(|v| !v) {
            return Err(Error::out_of_spec(
                format!(
                    "field {orphan} ('{}') is not reachable from any top-level field (parent cycle)",
                    d.fields[orphan].name
                ),
                Location::new("field tree", None),
            ));
        }
        Ok(Schema { fields })
    }

    /// The fields from the top-level one down to the field at a dotted path
    /// (`"jets._0.pt"`), or `None` when a name is unknown.
    pub fn chain(&self, path: &str) -> Option<Vec<&FieldNode>> {
        let mut parts = path.split('.');
        let mut chain = vec![self.field(parts.next()?)?];
        for part in parts {
            let parent = chain[chain.len() - 1];
            chain.push(parent.children.iter().find(|c| c.name == part)?);
        }
        Some(chain)
    }

    /// Every field of the tree by its id (its index in the descriptor's
    /// field list) with its dotted path and top-level field; `None` for an
    /// id the tree does not hold (none when built from a descriptor).
    pub fn by_id(&self) -> Vec<Option<FieldAt<'_>>> {
        let mut out: Vec<Option<FieldAt<'_>>> = Vec::new();
        for root in &self.fields {
            let mut nodes = Vec::new();
            root.walk("", &mut nodes);
            for (path, node) in nodes {
                let i = node.id as usize;
                if i >= out.len() {
                    out.resize(i + 1, None);
                }
                out[i] = Some(FieldAt { node, path, top: root });
            }
        }
        out
    }

    /// Top-level field by name.
    pub fn field(&self, name: &str) -> Option<&FieldNode> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A field of a [`Schema`] with its place in the tree ([`Schema::by_id`]).
#[derive(Debug, Clone)]
pub struct FieldAt<'a> {
    pub node: &'a FieldNode,
    /// Dotted path from the top-level field (`"Muon.pt"`).
    pub path: String,
    /// The top-level field holding it (itself for a top-level field).
    pub top: &'a FieldNode,
}

/// The flat lists a tree is built from.
struct Parts<'a> {
    fields: &'a [FieldDescriptor],
    columns: &'a [ColumnDescriptor],
    alias_columns: &'a [AliasColumnDescriptor],
}

fn build(
    d: &Parts,
    id: u32,
    children: &[Vec<u32>],
    reps: &mut [BTreeMap<u16, Vec<u32>>],
    visited: &mut [bool],
    depth: usize,
) -> Result<FieldNode> {
    let loc = || Location::new("field tree", None);
    if depth > MAX_DEPTH {
        return Err(Error::out_of_spec(format!("field nesting deeper than {MAX_DEPTH} at field {id}"), loc()));
    }
    if visited[id as usize] {
        return Err(Error::out_of_spec(format!("field {id} appears twice in the field tree"), loc()));
    }
    visited[id as usize] = true;
    let f = &d.fields[id as usize];
    let mut kids = Vec::with_capacity(children[id as usize].len());
    for &c in &children[id as usize] {
        kids.push(build(d, c, children, reps, visited, depth + 1)?);
    }
    let representations: Vec<Vec<u32>> = std::mem::take(&mut reps[id as usize]).into_values().collect();
    let unknown_column = representations
        .iter()
        .flatten()
        .find(|&&c| matches!(d.columns[c as usize].column_type, rntuple_format::model::ColumnType::Unknown(_)));
    let kind = match unknown_column {
        // Spec "Notes on Backward and Forward Compatibility": a field with an
        // unknown column type is skipped (with its top-level field).
        Some(&c) => FieldKind::Unsupported(format!(
            "column {c} has unknown column type {}",
            d.columns[c as usize].column_type.id()
        )),
        None => FieldKind::classify(f, kids.len(), !representations.is_empty()),
    };
    Ok(FieldNode {
        id,
        name: f.name.clone(),
        type_name: f.type_name.clone(),
        type_alias: f.type_alias.clone(),
        description: f.description.clone(),
        kind,
        type_version: f.type_version,
        type_checksum: f.type_checksum,
        array_size: f.array_size,
        projected: f.flags & FIELD_FLAG_PROJECTED != 0 || f.source_field_id.is_some(),
        soa: f.flags & rntuple_format::model::FIELD_FLAG_SOA != 0,
        source_field_id: f.source_field_id,
        children: kids,
        representations,
    })
}

impl FieldNode {
    /// The Arrow field this field is read into.
    pub fn arrow_field(&self) -> Field {
        let nullable = matches!(self.kind, FieldKind::Collection { nullable: true });
        let mut dt = self.arrow_type();
        if nullable {
            // The optional's value type; nullability is on the field.
            if let DataType::LargeList(inner) = dt {
                dt = inner.data_type().clone();
            }
        }
        Field::new(&self.name, dt, nullable)
    }

    /// Arrow type of one value of this field (for optionals: a list of 0/1,
    /// which [`FieldNode::arrow_field`] turns into a nullable value).
    pub fn arrow_type(&self) -> DataType {
        match &self.kind {
            FieldKind::Primitive(p) => p.arrow_type(),
            FieldKind::String => DataType::LargeUtf8,
            FieldKind::Cardinality { wide: true } => DataType::UInt64,
            FieldKind::Cardinality { wide: false } => DataType::UInt32,
            FieldKind::Streamer => DataType::LargeBinary,
            FieldKind::Collection { .. } => arrow::collection_type(self.children[0].arrow_field()),
            FieldKind::Array { size } => arrow::array_type(self.children[0].arrow_field(), *size),
            FieldKind::Bitset { size } => arrow::bitset_type(*size),
            FieldKind::Record => arrow::record_type(self.children.iter().map(FieldNode::arrow_field)),
            FieldKind::Variant => arrow::variant_type(self.children.iter().map(FieldNode::arrow_field)),
            FieldKind::Wrapper => self.children[0].arrow_type(),
            FieldKind::Unsupported(_) => DataType::Null,
        }
    }

    /// Physical column ids of the first representation, in column order.
    pub fn columns(&self) -> &[u32] {
        self.representations.first().map(Vec::as_slice).unwrap_or(&[])
    }

    /// Walks the tree (pre-order) with the dotted path of each field.
    pub fn walk<'a>(&'a self, prefix: &str, out: &mut Vec<(String, &'a FieldNode)>) {
        let path = if prefix.is_empty() { self.name.clone() } else { format!("{prefix}.{}", self.name) };
        out.push((path.clone(), self));
        for c in &self.children {
            c.walk(&path, out);
        }
    }
}
