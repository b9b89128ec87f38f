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

use rntuple_format::model::{AliasColumnDescriptor, FieldDescriptor, StructuralRole};
use rntuple_format::{Error, Result};

use super::cpp::{parse, primitive_name, CppType};
use super::names::check_name;
use super::options::Projection;
use super::plan::{Plan, PlanField, Shape};

/// One field of a projection, before it gets its id.
struct Node {
    name: String,
    type_name: String,
    type_alias: String,
    role: StructuralRole,
    /// Id of the source field.
    source: u32,
    /// Physical columns the field's alias columns point at, in column order.
    aliases: Vec<usize>,
    children: Vec<Node>,
}

/// What went wrong, said of the projection as a whole by [`add_projection`].
type Why = String;

/// Adds the projected field `p` (and its subfields and alias columns) to `plan`.
pub(crate) fn add_projection(plan: &mut Plan, p: &Projection) -> Result<()> {
    let err =
        |why: Why| Error::InvalidArgument { message: format!("projection '{}' of '{}': {why}", p.name, p.source) };
    check_name(&p.name, "projected field", &p.name)?;
    if plan.top_names.contains(&p.name) {
        return Err(err(format!("the RNTuple already has a top-level field named '{}'", p.name)));
    }
    let Some(chain) = plan.find(&p.source) else {
        return Err(err(unknown_source(plan, &p.source)));
    };
    let Some((target, above)) = chain.split_last() else {
        return Err(err("empty source path".into()));
    };
    let mut crossed = Vec::new();
    for f in above {
        match f.shape {
            Shape::Vector | Shape::Optional => crossed.push(*f),
            Shape::Record => {}
            _ => return Err(err(unsupported(f))),
        }
    }
    let node = match &p.type_name {
        None => infer(&p.name, target, &crossed).map_err(err)?,
        Some(t) => {
            let t = parse(t).map_err(|e| err(e.to_string()))?;
            let t_name = p.type_name.as_deref().unwrap_or("");
            typed(&p.name, &t, target, &crossed).map_err(|why| err(format!("type '{t_name}': {why}")))?
        }
    };
    emit(plan, node, None);
    plan.top_names.insert(p.name.clone());
    Ok(())
}

/// Says what the written fields near `path` are.
fn unknown_source(plan: &Plan, path: &str) -> Why {
    let parts: Vec<&str> = path.split('.').collect();
    let mut known = 0;
    let mut level: Vec<&PlanField> = plan.fields.iter().collect();
    let mut here = String::new();
    for part in &parts {
        match level.iter().find(|f| f.name == *part) {
            Some(f) => {
                known += 1;
                here = f.path.clone();
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

fn unsupported(f: &PlanField) -> Why {
    format!(
        "the path goes through '{}' ({}); projections of std::array, std::bitset and std::variant are not supported \
         (spec \"Field Description\")",
        f.path, f.type_name
    )
}

/// `tmpl<children…suffix>` and its alias spelled with the children's aliases (if any has one).
fn names_of(tmpl: &str, children: &[&Node], suffix: &str) -> (String, String) {
    let names: Vec<&str> = children.iter().map(|c| c.type_name.as_str()).collect();
    let type_name = format!("{tmpl}<{}{suffix}>", names.join(","));
    let alias = if children.iter().any(|c| !c.type_alias.is_empty()) {
        let names: Vec<&str> = children
            .iter()
            .map(|c| if c.type_alias.is_empty() { c.type_name.as_str() } else { c.type_alias.as_str() })
            .collect();
        format!("{tmpl}<{}{suffix}>", names.join(","))
    } else {
        String::new()
    };
    (type_name, alias)
}

/// A collection field `tmpl<item>` projecting the collection `source`.
fn collection(name: &str, tmpl: &str, item: Node, source: &PlanField) -> Node {
    let (type_name, type_alias) = names_of(tmpl, &[&item], "");
    Node {
        name: name.to_string(),
        type_name,
        type_alias,
        role: StructuralRole::Collection,
        source: source.id,
        aliases: source.columns.clone(),
        children: vec![item],
    }
}

/// The inferred projection: the source's own type, in one `RVec` per collection crossed.
fn infer(name: &str, s: &PlanField, crossed: &[&PlanField]) -> std::result::Result<Node, Why> {
    match crossed.split_first() {
        Some((c, rest)) => Ok(collection(name, "ROOT::VecOps::RVec", infer("_0", s, rest)?, c)),
        None => mirror(name, s),
    }
}

/// A projection of `s` with its own type (and its subfields with theirs).
fn mirror(name: &str, s: &PlanField) -> std::result::Result<Node, Why> {
    if matches!(s.shape, Shape::Array(_) | Shape::Bitset(_) | Shape::Variant) {
        return Err(unsupported(s));
    }
    if s.type_name.is_empty() {
        let what = if s.shape == Shape::Record { "record" } else { "collection" };
        return Err(format!(
            "'{}' is an untyped {what}, which a projection cannot copy; give the projection a C++ type \
             ((type, path)) or project its members",
            s.path
        ));
    }
    let children = s.children.iter().map(|c| mirror(&c.name, c)).collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(Node {
        name: name.to_string(),
        type_name: s.type_name.clone(),
        type_alias: s.type_alias.clone(),
        role: s.shape.role(),
        source: s.id,
        aliases: s.columns.clone(),
        children,
    })
}

fn describe(s: &PlanField) -> String {
    if s.type_name.is_empty() {
        format!("'{}' (untyped {})", s.path, if s.shape == Shape::Record { "record" } else { "collection" })
    } else {
        format!("'{}' ({})", s.path, s.type_name)
    }
}

/// The projection of `s` (below the collections `crossed`) as the C++ type `t`.
fn typed(name: &str, t: &CppType, s: &PlanField, crossed: &[&PlanField]) -> std::result::Result<Node, Why> {
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
        source: s.id,
        aliases: s.columns.clone(),
        children: Vec::new(),
    };
    match (t, s.shape) {
        (CppType::Cardinality { wide }, Shape::Vector | Shape::Optional) => {
            let size = if *wide { "std::uint64_t" } else { "std::uint32_t" };
            let mut n = leaf(format!("ROOT::RNTupleCardinality<{size}>"), String::new());
            n.aliases.truncate(1);
            Ok(n)
        }
        (CppType::Prim { prim, double32 }, Shape::Leaf(q)) if *prim == q => {
            if *double32 && s.type_alias != "Double32_t" {
                return Err(format!("{} is not a Double32_t", describe(s)));
            }
            let alias = if *double32 { "Double32_t".to_string() } else { String::new() };
            Ok(leaf(primitive_name(*prim).to_string(), alias))
        }
        (CppType::String, Shape::String) => Ok(leaf("std::string".into(), String::new())),
        // A vector-like collection may present an optional (zero or one element), not the reverse.
        (CppType::Vector { tmpl, item }, Shape::Vector | Shape::Optional)
        | (CppType::Optional { tmpl, item }, Shape::Optional) => {
            Ok(collection(name, tmpl, typed("_0", item, &s.children[0], &[])?, s))
        }
        (CppType::Map { tmpl, key, value }, Shape::Vector) => {
            let pair = CppType::Tuple { tmpl: "std::pair", items: vec![(**key).clone(), (**value).clone()] };
            let child = typed("_0", &pair, &s.children[0], &[])?;
            let (type_name, type_alias) = names_of(tmpl, &child.children.iter().collect::<Vec<_>>(), "");
            Ok(Node {
                name: name.to_string(),
                type_name,
                type_alias,
                role: StructuralRole::Collection,
                source: s.id,
                aliases: s.columns.clone(),
                children: vec![child],
            })
        }
        (CppType::Tuple { tmpl, items }, Shape::Record)
            if items.len() == s.children.len()
                && s.children.iter().enumerate().all(|(k, c)| c.name == format!("_{k}")) =>
        {
            let children = items
                .iter()
                .zip(&s.children)
                .map(|(item, c)| typed(&c.name, item, c, &[]))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let (type_name, type_alias) = names_of(tmpl, &children.iter().collect::<Vec<_>>(), "");
            Ok(Node {
                name: name.to_string(),
                type_name,
                type_alias,
                role: StructuralRole::Record,
                source: s.id,
                aliases: Vec::new(),
                children,
            })
        }
        (CppType::Class(class), Shape::Record) if *class == s.type_name => mirror(name, s),
        (CppType::Array { .. } | CppType::Bitset(_) | CppType::Variant(_), _) => Err(
            "projections of std::array, std::bitset and std::variant are not supported (spec \"Field Description\")"
                .into(),
        ),
        (CppType::Cardinality { .. }, _) => {
            Err(format!("a cardinality projects a collection, and {} is not one", describe(s)))
        }
        _ => Err(format!("it does not describe the source {}", describe(s))),
    }
}

/// Appends `node` and its subtree to the schema in pre-order (a field, then
/// its subfields), with its alias columns.
fn emit(plan: &mut Plan, node: Node, parent: Option<u32>) {
    let id = plan.schema.fields.len() as u32;
    plan.schema.fields.push(FieldDescriptor {
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
        plan.schema.alias_columns.push(AliasColumnDescriptor { physical_column_id: c as u32, field_id: id });
    }
    for child in node.children {
        emit(plan, child, Some(id));
    }
}
