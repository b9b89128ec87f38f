//! Projected fields (RNTuple binary format 1.0, "Field Description": flag
//! 0x02 and the restrictions on projections; "Alias columns"; ROOT's
//! `RNTupleModel::AddProjectedField`).
//!
//! A projected field is a top-level field tree whose fields name their
//! source field (`source_field_id`) and whose columns are alias columns of
//! the source's physical columns. As ROOT's writer does
//! (`RPagePersistentSink::UpdateSchema`), a projection's fields follow the
//! fields written from data in the same schema update, and its alias columns
//! are listed in the order of its fields.
//!
//! Restrictions (spec): the source and the projected field have the same
//! structural role, except that `ROOT::RNTupleCardinality<SizeT>` (a leaf)
//! projects a collection; leaves have identical type names; a projection
//! crosses the same collections as its source (one collection field per
//! collection on the source's path); no arrays, bitsets or variants.

use rntuple_format::model::{AliasColumnDescriptor, FieldDescriptor, SchemaDescription, StructuralRole};

use super::cpp::{parse, template_spelling, CppType};
use super::{FieldKind, FieldNode, Schema};

/// One field of a projection, before it gets its id.
struct Node {
    name: String,
    type_name: String,
    type_alias: String,
    role: StructuralRole,
    /// Id of the source field.
    source: u32,
    /// Physical columns the field's alias columns point at, in column order.
    aliases: Vec<u32>,
    children: Vec<Node>,
}

/// What went wrong with a projection (the caller names the projection).
pub type Why = String;

/// A written field with its dotted path (for messages).
#[derive(Clone, Copy)]
struct Src<'a> {
    node: &'a FieldNode,
    path: &'a str,
}

impl Src<'_> {
    fn is_collection(&self) -> bool {
        matches!(self.node.kind, FieldKind::Collection { .. })
    }
    fn is_optional(&self) -> bool {
        matches!(self.node.kind, FieldKind::Collection { nullable: true })
    }
    fn untyped_what(&self) -> &'static str {
        if self.node.kind == FieldKind::Record {
            "record"
        } else {
            "collection"
        }
    }
}

/// Appends the projected field `name` presenting the field at the dotted
/// path `source` of `written` (as the C++ type `type_name`, or inferred) to
/// `out`: its fields (pre-order, after those already there) and their alias
/// columns. `written` is the tree of the fields of `out` written from data.
pub fn add(
    out: &mut SchemaDescription,
    written: &Schema,
    name: &str,
    source: &str,
    type_name: Option<&str>,
) -> Result<(), Why> {
    let Some(chain) = written.chain(source) else {
        return Err(unknown_source(written, source));
    };
    let paths: Vec<String> = {
        let parts: Vec<&str> = source.split('.').collect();
        (1..=parts.len()).map(|k| parts[..k].join(".")).collect()
    };
    let srcs: Vec<Src> = chain.iter().zip(&paths).map(|(n, p)| Src { node: n, path: p }).collect();
    let Some((target, above)) = srcs.split_last() else {
        return Err("empty source path".into());
    };
    let mut crossed = Vec::new();
    for f in above {
        match f.node.kind {
            FieldKind::Collection { .. } => crossed.push(*f),
            FieldKind::Record => {}
            _ => return Err(unsupported(f)),
        }
    }
    let node = match type_name {
        None => infer(name, *target, &crossed)?,
        Some(t_name) => {
            let t = parse(t_name).map_err(|e| e.to_string())?;
            typed(name, &t, *target, &crossed).map_err(|why| format!("type '{t_name}': {why}"))?
        }
    };
    emit(out, node, None);
    Ok(())
}

/// Says what the written fields near `path` are.
fn unknown_source(written: &Schema, path: &str) -> Why {
    let parts: Vec<&str> = path.split('.').collect();
    let mut known = 0;
    let mut level: Vec<&FieldNode> = written.fields.iter().collect();
    let mut here = String::new();
    for part in &parts {
        match level.iter().find(|f| f.name == *part) {
            Some(f) => {
                known += 1;
                here = parts[..known].join(".");
                level = f.children.iter().collect();
            }
            None => break,
        }
    }
    let mut names: Vec<&str> = level.iter().map(|f| f.name.as_str()).collect();
    let more = names.len().saturating_sub(20);
    names.truncate(20);
    let listed = names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    let listed = if more > 0 { format!("{listed} and {more} more") } else { listed };
    if known == 0 {
        format!("no written top-level field is named '{}' (they are: {listed})", parts[0])
    } else if level.is_empty() {
        format!("'{here}' has no subfields")
    } else {
        format!("'{here}' has no subfield '{}' (it has: {listed})", parts[known])
    }
}

fn unsupported(f: &Src) -> Why {
    format!(
        "the path goes through '{}' ({}); projections of std::array, std::bitset and std::variant are not supported \
         (spec \"Field Description\")",
        f.path, f.node.type_name
    )
}

/// `tmpl<children…suffix>` and its alias spelled with the children's aliases (if any has one).
fn names_of(tmpl: &str, children: &[&Node], suffix: &str) -> (String, String) {
    template_spelling(tmpl, children.iter().map(|c| (c.type_name.as_str(), c.type_alias.as_str())), suffix)
}

/// A collection field `tmpl<item>` projecting the collection `source`.
fn collection(name: &str, tmpl: &str, item: Node, source: &Src) -> Node {
    let (type_name, type_alias) = names_of(tmpl, &[&item], "");
    collection_named(name, (type_name, type_alias), item, source)
}

/// A collection field with the given type name and alias projecting `source`.
fn collection_named(name: &str, (type_name, type_alias): (String, String), item: Node, source: &Src) -> Node {
    Node {
        name: name.to_string(),
        type_name,
        type_alias,
        role: StructuralRole::Collection,
        source: source.node.id,
        aliases: source.node.columns().to_vec(),
        children: vec![item],
    }
}

/// The inferred projection: the source's own type, in one `RVec` per collection crossed.
fn infer(name: &str, s: Src, crossed: &[Src]) -> Result<Node, Why> {
    match crossed.split_first() {
        Some((c, rest)) => Ok(collection(name, "ROOT::VecOps::RVec", infer("_0", s, rest)?, c)),
        None => mirror(name, s),
    }
}

/// The subfields of `s` with their paths.
fn children<'a>(s: Src<'a>, paths: &'a [String]) -> impl Iterator<Item = Src<'a>> {
    s.node.children.iter().zip(paths).map(|(node, path)| Src { node, path })
}

fn child_paths(s: Src) -> Vec<String> {
    s.node.children.iter().map(|c| format!("{}.{}", s.path, c.name)).collect()
}

/// A projection of `s` with its own type (and its subfields with theirs).
fn mirror(name: &str, s: Src) -> Result<Node, Why> {
    if matches!(s.node.kind, FieldKind::Array { .. } | FieldKind::Bitset { .. } | FieldKind::Variant) {
        return Err(unsupported(&s));
    }
    if s.node.type_name.is_empty() {
        let what = s.untyped_what();
        return Err(format!(
            "'{}' is an untyped {what}, which a projection cannot copy; give the projection a C++ type \
             ((type, path)) or project its members",
            s.path
        ));
    }
    let paths = child_paths(s);
    let children = children(s, &paths).map(|c| mirror(&c.node.name, c)).collect::<Result<Vec<_>, _>>()?;
    Ok(Node {
        name: name.to_string(),
        type_name: s.node.type_name.clone(),
        type_alias: s.node.type_alias.clone(),
        role: s
            .node
            .kind
            .role()
            .ok_or_else(|| format!("'{}' is a field that cannot be read ({:?})", s.path, s.node.kind))?,
        source: s.node.id,
        aliases: s.node.columns().to_vec(),
        children,
    })
}

fn describe(s: &Src) -> String {
    if s.node.type_name.is_empty() {
        format!("'{}' (untyped {})", s.path, s.untyped_what())
    } else {
        format!("'{}' ({})", s.path, s.node.type_name)
    }
}

/// The projection of `s` (below the collections `crossed`) as the C++ type `t`.
fn typed(name: &str, t: &CppType, s: Src, crossed: &[Src]) -> Result<Node, Why> {
    if let Some((c, rest)) = crossed.split_first() {
        let CppType::Vector { tmpl, item } = t else {
            return Err(format!(
                "the source is inside the collection {}, so the projected type needs a vector-like collection \
                 (ROOT::VecOps::RVec<…>, std::vector<…>) for it",
                describe(c)
            ));
        };
        return Ok(collection(name, tmpl, typed("_0", item, s, rest)?, c));
    }
    let leaf = |type_name: String, type_alias: String| Node {
        name: name.to_string(),
        type_name,
        type_alias,
        role: StructuralRole::Leaf,
        source: s.node.id,
        aliases: s.node.columns().to_vec(),
        children: Vec::new(),
    };
    let paths = child_paths(s);
    let first = || Src { node: &s.node.children[0], path: &paths[0] };
    match (t, &s.node.kind) {
        (CppType::Cardinality { wide }, FieldKind::Collection { .. }) => {
            let size = if *wide { "std::uint64_t" } else { "std::uint32_t" };
            let mut n = leaf(format!("ROOT::RNTupleCardinality<{size}>"), String::new());
            n.aliases.truncate(1);
            Ok(n)
        }
        (CppType::Prim { prim, double32 }, FieldKind::Primitive(q)) if prim == q => {
            if *double32 && s.node.type_alias != "Double32_t" {
                return Err(format!("{} is not a Double32_t", describe(&s)));
            }
            let alias = if *double32 { "Double32_t".to_string() } else { String::new() };
            Ok(leaf(prim.name().to_string(), alias))
        }
        (CppType::String, FieldKind::String) => Ok(leaf("std::string".into(), String::new())),
        // A vector-like collection may present an optional (zero or one element), not the reverse.
        (CppType::Vector { tmpl, item }, FieldKind::Collection { .. }) => {
            Ok(collection(name, tmpl, typed("_0", item, first(), &[])?, &s))
        }
        (CppType::Optional { tmpl, item }, _) if s.is_optional() => {
            Ok(collection(name, tmpl, typed("_0", item, first(), &[])?, &s))
        }
        (CppType::Map { tmpl, key, value }, _) if s.is_collection() && !s.is_optional() => {
            let pair = CppType::Tuple { tmpl: "std::pair", items: vec![(**key).clone(), (**value).clone()] };
            let child = typed("_0", &pair, first(), &[])?;
            let names = names_of(tmpl, &child.children.iter().collect::<Vec<_>>(), "");
            Ok(collection_named(name, names, child, &s))
        }
        (CppType::Tuple { tmpl, items }, FieldKind::Record)
            if items.len() == s.node.children.len()
                && s.node.children.iter().enumerate().all(|(k, c)| c.name == format!("_{k}")) =>
        {
            let children = items
                .iter()
                .zip(children(s, &paths))
                .map(|(item, c)| typed(&c.node.name, item, c, &[]))
                .collect::<Result<Vec<_>, _>>()?;
            let (type_name, type_alias) = names_of(tmpl, &children.iter().collect::<Vec<_>>(), "");
            Ok(Node {
                name: name.to_string(),
                type_name,
                type_alias,
                role: StructuralRole::Record,
                source: s.node.id,
                aliases: Vec::new(),
                children,
            })
        }
        (CppType::Class(class), FieldKind::Record) if *class == s.node.type_name => mirror(name, s),
        (CppType::Array { .. } | CppType::Bitset(_) | CppType::Variant(_) | CppType::Atomic(_), _) => Err(
            "projections of std::array, std::bitset and std::variant are not supported (spec \"Field Description\")"
                .into(),
        ),
        (CppType::Cardinality { .. }, _) => {
            Err(format!("a cardinality projects a collection, and {} is not one", describe(&s)))
        }
        _ => Err(format!("it does not describe the source {}", describe(&s))),
    }
}

/// Appends `node` and its subtree to the schema in pre-order (a field, then
/// its subfields), with its alias columns.
fn emit(out: &mut SchemaDescription, node: Node, parent: Option<u32>) {
    let id = out.fields.len() as u32;
    out.fields.push(FieldDescriptor {
        field_version: 0,
        type_version: 0,
        parent_id: parent.unwrap_or(id),
        role: node.role,
        flags: 0,
        name: node.name,
        type_name: node.type_name,
        type_alias: node.type_alias,
        description: String::new(),
        array_size: None,
        source_field_id: Some(node.source),
        type_checksum: None,
    });
    for c in node.aliases {
        out.alias_columns.push(AliasColumnDescriptor { physical_column_id: c, field_id: id });
    }
    for child in node.children {
        emit(out, child, Some(id));
    }
}
