//! The output schema of a merge and, per input, which output column each of
//! its columns feeds — ROOT's `RNTupleMerger` rules (`CompareDescriptorStructure`,
//! `ExtendDestinationModel`, `AddColumnsFromField`), with two extensions
//! documented in `docs/tools.md`:
//!
//! * the first input is the prototype: the output header is its header, the
//!   output schema extension starts with its extension;
//! * top-level fields are matched by name, subfields by position; matched
//!   fields must agree in name, type name, type version, type checksum (when
//!   both have one), structural role, repetition, projection (and projection
//!   source), number of subfields, and column representations: the same number
//!   of representations and of columns in each, and per column the same
//!   bits on storage and value range, and the same column type — or two types
//!   that hold the same values in another encoding (split / unsplit, ROOT's
//!   rule, and, beyond ROOT, Index32 / Index64 / SplitIndex32 / SplitIndex64);
//!   such pages are re-encoded into the first input's type. Several
//!   representations are merged (ROOT refuses them) when they match;
//! * `strict`: every input has exactly the prototype's top-level fields;
//!   `filter` (ROOT's default): inputs must have at least them, extra fields
//!   are left out; `union`: fields missing in an input are written as
//!   default (zero) values, fields that appear later are added to the schema
//!   extension with deferred columns starting at the entry where they appear.

use std::collections::{HashMap, HashSet};

use rntuple::format::model::{
    AliasColumnDescriptor, ColumnDescriptor, ColumnType, FieldDescriptor, Header, SchemaDescription,
    COLUMN_FLAG_DEFERRED, FIELD_FLAG_PROJECTED, FIELD_FLAG_REPETITIVE,
};
use rntuple::format::{Error, Result};
use rntuple::schema::FieldAt;
use rntuple::{field_multipliers, Descriptor, FieldKind, FieldNode, Schema};

use super::MergeMode;
use crate::load::Loaded;

/// What the merge knows about one output column.
#[derive(Debug, Clone)]
pub(crate) struct OutColumn {
    pub(crate) field: usize,
    /// Representation index and position in the representation.
    pub(crate) rep: usize,
    pub(crate) pos: usize,
    /// Elements per entry (first column of a representation, field reached
    /// through records and arrays only); `None` otherwise.
    pub(crate) multiplier: Option<u64>,
    /// Belongs to a streamer field (has no default value).
    pub(crate) streamer: bool,
    /// Dotted path of the field, for messages.
    pub(crate) path: String,
}

/// Per input: the input column feeding each output column.
#[derive(Debug, Clone)]
pub(crate) struct InputMap {
    /// Indexed by output column: the input's physical column, if any.
    pub(crate) source: Vec<Option<u32>>,
    /// Output columns that exist when this input's clusters are written
    /// (columns added for later inputs are not listed in its clusters).
    pub(crate) num_columns: usize,
}

/// The output schema and the column maps.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) header: Header,
    pub(crate) extension: SchemaDescription,
    pub(crate) columns: Vec<ColumnDescriptor>,
    pub(crate) out: Vec<OutColumn>,
    /// Per output column and field: all representations' columns, by
    /// representation, for suppressed-column bookkeeping.
    pub(crate) reps: Vec<Vec<Vec<u32>>>,
    pub(crate) inputs: Vec<InputMap>,
    /// Top-level fields added by `union` (with the input that brought them).
    pub(crate) added: Vec<String>,
    /// Top-level fields of later inputs left out by `filter`.
    pub(crate) dropped: Vec<String>,
}

/// One side of a comparison: the flat lists and the schema's tree by id.
struct Side<'a> {
    fields: &'a [FieldDescriptor],
    columns: &'a [ColumnDescriptor],
    by_id: &'a [Option<FieldAt<'a>>],
}

impl Side<'_> {
    /// Dotted path of field `id`.
    fn path(&self, id: u32) -> Option<String> {
        self.by_id.get(id as usize)?.as_ref().map(|f| f.path.clone())
    }
}

/// Column types holding the same values in another encoding: pages convert
/// by decoding and encoding again.
pub(crate) fn convertible(a: ColumnType, b: ColumnType) -> bool {
    use ColumnType::*;
    let group = |t: ColumnType| match t {
        Int16 | SplitInt16 => 1,
        UInt16 | SplitUInt16 => 2,
        Int32 | SplitInt32 => 3,
        UInt32 | SplitUInt32 => 4,
        Int64 | SplitInt64 => 5,
        UInt64 | SplitUInt64 => 6,
        Real16 | SplitReal16 => 7,
        Real32 | SplitReal32 => 8,
        Real64 | SplitReal64 => 9,
        Index32 | Index64 | SplitIndex32 | SplitIndex64 => 10,
        _ => 0,
    };
    a == b || (group(a) != 0 && group(a) == group(b))
}

/// The output descriptor being built.
struct Out {
    fields: Vec<FieldDescriptor>,
    columns: Vec<ColumnDescriptor>,
    alias: Vec<AliasColumnDescriptor>,
    extension: SchemaDescription,
}

impl Out {
    fn descriptor(&self, header: &Header) -> Descriptor {
        Descriptor {
            name: header.name.clone(),
            description: header.description.clone(),
            writer: header.writer.clone(),
            fields: self.fields.clone(),
            columns: self.columns.clone(),
            alias_columns: self.alias.clone(),
            num_header_fields: header.schema.fields.len(),
            num_header_columns: header.schema.columns.len(),
            clusters: Vec::new(),
            num_cluster_groups: 0,
            extra_type_info: Vec::new(),
        }
    }
}

/// Compares field `s` of an input with output field `o`, recursively;
/// records problems in `errors` and matched columns in `map` (output → input).
fn compare(
    src: &Side<'_>,
    s: &FieldNode,
    out: &Side<'_>,
    o: &FieldNode,
    errors: &mut Vec<String>,
    map: &mut HashMap<u32, u32>,
) {
    let (sf, of) = (&src.fields[s.id as usize], &out.fields[o.id as usize]);
    let path = out.path(o.id).unwrap_or_default();
    let mut differ = |what: &str, old: String, new: String| {
        errors.push(format!("field '{path}' has a different {what} (first input: {old}, this input: {new})"));
    };
    if sf.name != of.name {
        differ("name", of.name.clone(), sf.name.clone());
        return;
    }
    if sf.type_name != of.type_name {
        differ("type", of.type_name.clone(), sf.type_name.clone());
        return;
    }
    if sf.type_version != of.type_version {
        differ("type version", of.type_version.to_string(), sf.type_version.to_string());
    }
    if let (Some(a), Some(b)) = (sf.type_checksum, of.type_checksum) {
        if a != b {
            differ("type checksum", format!("{b:#x}"), format!("{a:#x}"));
        }
    }
    if sf.role != of.role {
        differ("structural role", format!("{:?}", of.role), format!("{:?}", sf.role));
        return;
    }
    let flags = FIELD_FLAG_REPETITIVE | FIELD_FLAG_PROJECTED;
    if sf.flags & flags != of.flags & flags || sf.array_size != of.array_size {
        differ(
            "repetition or projection",
            format!("flags {:#x}, array size {:?}", of.flags & flags, of.array_size),
            format!("flags {:#x}, array size {:?}", sf.flags & flags, sf.array_size),
        );
        return;
    }
    if of.flags & FIELD_FLAG_PROJECTED != 0 {
        let (a, b) = (of.source_field_id.and_then(|i| out.path(i)), sf.source_field_id.and_then(|i| src.path(i)));
        if a != b {
            differ("projection source", format!("{a:?}"), format!("{b:?}"));
        }
    } else {
        let (sr, or) = (&s.representations, &o.representations);
        if sr.len() != or.len() {
            differ("number of column representations", or.len().to_string(), sr.len().to_string());
        } else {
            for (r, (scols, ocols)) in sr.iter().zip(or).enumerate() {
                if scols.len() != ocols.len() {
                    differ(
                        &format!("number of columns in representation {r}"),
                        ocols.len().to_string(),
                        scols.len().to_string(),
                    );
                    continue;
                }
                for (i, (&sc, &oc)) in scols.iter().zip(ocols).enumerate() {
                    let (a, b) = (&src.columns[sc as usize], &out.columns[oc as usize]);
                    let which = format!("column {i} of representation {r}");
                    if !convertible(a.column_type, b.column_type) {
                        differ(&format!("{which} type"), b.column_type.to_string(), a.column_type.to_string());
                    } else if a.column_type == b.column_type && a.bits_on_storage != b.bits_on_storage {
                        differ(
                            &format!("{which} bits on storage"),
                            b.bits_on_storage.to_string(),
                            a.bits_on_storage.to_string(),
                        );
                    } else if a.value_range != b.value_range {
                        differ(
                            &format!("{which} value range"),
                            format!("{:?}", b.value_range),
                            format!("{:?}", a.value_range),
                        );
                    } else {
                        map.insert(oc, sc);
                    }
                }
            }
        }
    }
    let (sk, ok) = (&s.children, &o.children);
    if sk.len() != ok.len() {
        differ("number of subfields", ok.len().to_string(), sk.len().to_string());
        return;
    }
    for (a, b) in sk.iter().zip(ok) {
        compare(src, a, out, b, errors, map);
    }
}

/// Adds the subtree of input field `s` to the output's schema extension
/// (union mode), its columns deferred from `first_entry` on. Fills `fmap`
/// (input field → output field) and `map` (output column → input column).
fn add_subtree(
    d: &Descriptor,
    s: &FieldNode,
    multipliers: &[Option<u64>],
    out: &mut Out,
    first_entry: u64,
    fmap: &mut HashMap<usize, usize>,
    map: &mut HashMap<u32, u32>,
) -> Result<()> {
    // Fields in pre-order: a parent gets its id before its children.
    let mut nodes = Vec::new();
    s.walk("", &mut nodes);
    let order: Vec<usize> = nodes.iter().map(|(_, n)| n.id as usize).collect();
    let s = s.id as usize;
    for &f in &order {
        let id = out.fields.len();
        fmap.insert(f, id);
        let mut fd = d.fields[f].clone();
        fd.parent_id = if f == s { id as u32 } else { fmap[&(fd.parent_id as usize)] as u32 };
        if let Some(src) = fd.source_field_id {
            let mapped = fmap.get(&(src as usize)).ok_or_else(|| {
                Error::invalid(format!(
                    "projected field '{}' refers to field '{}', which is not in the output",
                    fd.name, d.fields[src as usize].name
                ))
            })?;
            fd.source_field_id = Some(*mapped as u32);
        }
        out.fields.push(fd.clone());
        out.extension.fields.push(fd);
    }
    let new: HashSet<usize> = order.iter().copied().collect();
    let mut first_of_rep: HashSet<(usize, u16)> = HashSet::new();
    for (c, cd) in d.columns.iter().enumerate() {
        if !new.contains(&(cd.field_id as usize)) {
            continue;
        }
        let of = fmap[&(cd.field_id as usize)];
        let mut col = cd.clone();
        col.field_id = of as u32;
        // Only the first column of each representation can be deferred
        // (ROOT's RFieldBase::ConnectPageSink); secondary representations of a
        // late field are deferred and suppressed (negative first element).
        let first = first_of_rep.insert((of, cd.representation_index));
        // The subtree is top-level in both: its multipliers are the input's.
        let start = match (first, multipliers.get(cd.field_id as usize).copied().flatten()) {
            (true, Some(m)) => first_entry.saturating_mul(m),
            _ => 0,
        };
        col.flags &= !COLUMN_FLAG_DEFERRED;
        col.first_element_index = None;
        if start > 0 {
            col.flags |= COLUMN_FLAG_DEFERRED;
            let start = i64::try_from(start)
                .map_err(|_| Error::invalid(format!("first element index {start} of a late field overflows")))?;
            col.first_element_index = Some(if cd.representation_index > 0 { -start } else { start });
        }
        map.insert(out.columns.len() as u32, c as u32);
        out.columns.push(col.clone());
        out.extension.columns.push(col);
    }
    Ok(())
}

/// Plans the merge of `inputs` (all loaded, the first is the prototype).
pub(crate) fn plan(inputs: &[Loaded], mode: MergeMode, writer: String) -> Result<Plan> {
    let first = &inputs[0];
    let mut header = first.header.clone();
    header.writer = writer;
    let d0 = &first.descriptor;
    let mut out = Out {
        fields: d0.fields.clone(),
        columns: d0.columns.clone(),
        alias: d0.alias_columns.clone(),
        extension: first.footer.schema_extension.clone(),
    };
    let mut maps =
        vec![InputMap { source: (0..d0.columns.len() as u32).map(Some).collect(), num_columns: d0.columns.len() }];
    let mut added = Vec::new();
    let mut dropped = Vec::new();
    let mut entries = d0.num_entries();
    let mut extra_types: HashSet<(u32, u32, String)> = header
        .schema
        .extra_type_info
        .iter()
        .chain(&out.extension.extra_type_info)
        .map(|e| (e.content_id, e.type_version, e.type_name.clone()))
        .collect();

    for (k, input) in inputs.iter().enumerate().skip(1) {
        let d = &input.descriptor;
        let context = |msg: String| {
            Error::invalid(format!("cannot merge {} (input {}) in {mode} mode: {msg}", input.file, k + 1))
        };
        let out_schema = Schema::from_descriptor(&out.descriptor(&header))?;
        let out_by_id = out_schema.by_id();
        let src_by_id = input.schema.by_id();
        let num_out_fields = out.fields.len();
        let out_top: HashMap<&str, &FieldNode> = out_schema.fields.iter().map(|f| (f.name.as_str(), f)).collect();
        let src_top = &input.schema.fields;
        let src_names: HashSet<&str> = src_top.iter().map(|f| f.name.as_str()).collect();

        let mut errors = Vec::new();
        let mut map: HashMap<u32, u32> = HashMap::new();
        {
            let src = Side { fields: &d.fields, columns: &d.columns, by_id: &src_by_id };
            let dst = Side { fields: &out.fields, columns: &out.columns, by_id: &out_by_id };
            for s in src_top {
                if let Some(o) = out_top.get(s.name.as_str()) {
                    compare(&src, s, &dst, o, &mut errors, &mut map);
                }
            }
        }
        if !errors.is_empty() {
            return Err(context(format!("its schema differs from the first input's:\n  * {}", errors.join("\n  * "))));
        }
        let mut missing: Vec<String> =
            out_schema.fields.iter().map(|f| f.name.clone()).filter(|n| !src_names.contains(n.as_str())).collect();
        missing.sort_unstable();
        let extra: Vec<&FieldNode> = src_top.iter().filter(|s| !out_top.contains_key(s.name.as_str())).collect();
        if !missing.is_empty() && mode != MergeMode::Union {
            return Err(context(format!("it lacks the field(s) {}", missing.join(", "))));
        }
        if !extra.is_empty() {
            match mode {
                MergeMode::Strict => {
                    let names: Vec<&str> = extra.iter().map(|s| s.name.as_str()).collect();
                    return Err(context(format!("it has field(s) the first input lacks: {}", names.join(", "))));
                }
                MergeMode::Filter => {
                    dropped.extend(extra.iter().map(|s| format!("{} (from {})", s.name, input.file)));
                }
                MergeMode::Union => {
                    let mut fmap: HashMap<usize, usize> = HashMap::new();
                    // Fields matched by name map to their output fields (for projections).
                    for s in src_top {
                        if let Some(o) = out_top.get(s.name.as_str()) {
                            map_matched(s, o, &mut fmap);
                        }
                    }
                    // Non-projected fields first, then projected ones (ROOT's order).
                    let mut order: Vec<&FieldNode> = extra.iter().copied().filter(|s| !s.projected).collect();
                    order.extend(extra.iter().copied().filter(|s| s.projected));
                    let multipliers = field_multipliers(&input.schema, d.fields.len());
                    for s in order {
                        add_subtree(d, s, &multipliers, &mut out, entries, &mut fmap, &mut map)
                            .map_err(|e| context(e.to_string()))?;
                        added.push(format!("{} (from {}, entry {entries})", s.name, input.file));
                    }
                    // Alias columns of the new projected fields.
                    let inverse: HashMap<u32, u32> = map.iter().map(|(&o, &i)| (i, o)).collect();
                    for a in &d.alias_columns {
                        let Some(&of) = fmap.get(&(a.field_id as usize)) else { continue };
                        if of < num_out_fields {
                            continue; // an existing output field keeps its aliases
                        }
                        let phys = inverse.get(&a.physical_column_id).ok_or_else(|| {
                            context(format!(
                                "a projected field refers to column {} which is not merged",
                                a.physical_column_id
                            ))
                        })?;
                        let alias = AliasColumnDescriptor { physical_column_id: *phys, field_id: of as u32 };
                        out.alias.push(alias);
                        out.extension.alias_columns.push(alias);
                    }
                }
            }
        }
        for e in input.header.schema.extra_type_info.iter().chain(&input.footer.schema_extension.extra_type_info) {
            if extra_types.insert((e.content_id, e.type_version, e.type_name.clone())) {
                out.extension.extra_type_info.push(e.clone());
            }
        }
        let mut source = vec![None; out.columns.len()];
        for (o, i) in map {
            source[o as usize] = Some(i);
        }
        maps.push(InputMap { source, num_columns: out.columns.len() });
        entries = entries.saturating_add(d.num_entries());
    }

    let schema = Schema::from_descriptor(&out.descriptor(&header))?;
    let by_id = schema.by_id();
    let multiplier = field_multipliers(&schema, out.fields.len());
    // Physical columns of every field by representation (none for projected fields).
    let reps: Vec<Vec<Vec<u32>>> = by_id
        .iter()
        .map(|f| f.as_ref().filter(|f| !f.node.projected).map_or_else(Vec::new, |f| f.node.representations.clone()))
        .collect();
    let mut pos_of = vec![(0usize, 0usize); out.columns.len()];
    for cols in reps.iter().flatten() {
        for (p, &c) in cols.iter().enumerate() {
            let r = out.columns[c as usize].representation_index as usize;
            pos_of[c as usize] = (r, p);
        }
    }
    // Fields inside a streamer field (which has no default value).
    let mut streamer = vec![false; out.fields.len()];
    for f in by_id.iter().flatten().filter(|f| f.node.kind == FieldKind::Streamer) {
        let mut nodes = Vec::new();
        f.node.walk("", &mut nodes);
        for (_, n) in nodes {
            streamer[n.id as usize] = true;
        }
    }
    let path = |f: usize| by_id.get(f).and_then(|x| x.as_ref()).map_or_else(String::new, |x| x.path.clone());
    let out_cols = out
        .columns
        .iter()
        .enumerate()
        .map(|(c, cd)| {
            let f = cd.field_id as usize;
            let (rep, pos) = pos_of[c];
            OutColumn {
                field: f,
                rep,
                pos,
                multiplier: if pos == 0 { multiplier.get(f).copied().flatten() } else { None },
                streamer: streamer.get(f).copied().unwrap_or(false),
                path: path(f),
            }
        })
        .collect();
    Ok(Plan {
        header,
        extension: out.extension,
        columns: out.columns,
        out: out_cols,
        reps,
        inputs: maps,
        added,
        dropped,
    })
}

/// Maps matched subtrees field by field (by position).
fn map_matched(s: &FieldNode, o: &FieldNode, fmap: &mut HashMap<usize, usize>) {
    fmap.insert(s.id as usize, o.id as usize);
    for (a, b) in s.children.iter().zip(&o.children) {
        map_matched(a, b, fmap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convertible_types() {
        use ColumnType::*;
        assert!(convertible(Real32, SplitReal32));
        assert!(convertible(Index32, SplitIndex64));
        assert!(convertible(Int64, Int64));
        assert!(convertible(Real32Trunc, Real32Trunc));
        assert!(!convertible(Real32, Real16));
        assert!(!convertible(Int32, UInt32));
        assert!(!convertible(Int32, Int64));
        assert!(!convertible(Real32Trunc, Real32));
    }
}
