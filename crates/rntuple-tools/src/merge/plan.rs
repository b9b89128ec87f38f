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
    AliasColumnDescriptor, ColumnDescriptor, ColumnType, FieldDescriptor, Header, SchemaDescription, StructuralRole,
    COLUMN_FLAG_DEFERRED, FIELD_FLAG_PROJECTED, FIELD_FLAG_REPETITIVE,
};
use rntuple::format::{Error, Result};
use rntuple::{Descriptor, Schema};

use super::MergeMode;
use crate::load::{FieldFacts, Loaded};

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

/// Children (by id order) of every field.
fn children_of(fields: &[FieldDescriptor]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); fields.len()];
    for (i, f) in fields.iter().enumerate() {
        let p = f.parent_id as usize;
        if p != i && p < fields.len() {
            out[p].push(i);
        }
    }
    out
}

/// Physical columns of every field by representation index.
fn reps_of(num_fields: usize, columns: &[ColumnDescriptor]) -> Vec<Vec<Vec<u32>>> {
    let mut out: Vec<Vec<Vec<u32>>> = vec![Vec::new(); num_fields];
    for (c, cd) in columns.iter().enumerate() {
        let list = &mut out[cd.field_id as usize];
        let r = cd.representation_index as usize;
        if r >= list.len() {
            list.resize(r + 1, Vec::new());
        }
        list[r].push(c as u32);
    }
    out
}

fn top_level(fields: &[FieldDescriptor]) -> Vec<usize> {
    (0..fields.len()).filter(|&i| fields[i].parent_id as usize == i).collect()
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
        }
    }
}

/// Compares `src` field `s` of input `d` with output field `o`, recursively;
/// records problems in `errors` and matched columns in `map` (output → input).
#[allow(clippy::too_many_arguments)]
fn compare(
    d: &Descriptor,
    s: usize,
    src_kids: &[Vec<usize>],
    src_reps: &[Vec<Vec<u32>>],
    src_facts: &FieldFacts,
    out: &Out,
    o: usize,
    out_kids: &[Vec<usize>],
    out_reps: &[Vec<Vec<u32>>],
    out_facts: &FieldFacts,
    errors: &mut Vec<String>,
    map: &mut HashMap<u32, u32>,
) {
    let (sf, of) = (&d.fields[s], &out.fields[o]);
    let path = &out_facts.path[o];
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
        let src_of = |id: Option<u32>, facts: &FieldFacts| id.and_then(|i| facts.path.get(i as usize).cloned());
        let (a, b) = (src_of(of.source_field_id, out_facts), src_of(sf.source_field_id, src_facts));
        if a != b {
            differ("projection source", format!("{a:?}"), format!("{b:?}"));
        }
    } else {
        let (sr, or) = (&src_reps[s], &out_reps[o]);
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
                    let (a, b) = (&d.columns[sc as usize], &out.columns[oc as usize]);
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
    let (sk, ok) = (&src_kids[s], &out_kids[o]);
    if sk.len() != ok.len() {
        differ("number of subfields", ok.len().to_string(), sk.len().to_string());
        return;
    }
    for (&a, &b) in sk.iter().zip(ok) {
        compare(d, a, src_kids, src_reps, src_facts, out, b, out_kids, out_reps, out_facts, errors, map);
    }
}

/// Adds the subtree of input field `s` to the output's schema extension
/// (union mode), its columns deferred from `first_entry` on. Fills `fmap`
/// (input field → output field) and `map` (output column → input column).
#[allow(clippy::too_many_arguments)]
fn add_subtree(
    d: &Descriptor,
    s: usize,
    src_kids: &[Vec<usize>],
    src_facts: &FieldFacts,
    out: &mut Out,
    first_entry: u64,
    fmap: &mut HashMap<usize, usize>,
    map: &mut HashMap<u32, u32>,
) -> Result<()> {
    // Fields in pre-order: a parent gets its id before its children.
    let mut order = Vec::new();
    let mut stack = vec![s];
    while let Some(f) = stack.pop() {
        order.push(f);
        if order.len() > d.fields.len() {
            return Err(Error::InvalidArgument { message: "field tree with a cycle".into() });
        }
        stack.extend(src_kids[f].iter().rev());
    }
    for &f in &order {
        let id = out.fields.len();
        fmap.insert(f, id);
        let mut fd = d.fields[f].clone();
        fd.parent_id = if f == s { id as u32 } else { fmap[&(fd.parent_id as usize)] as u32 };
        if let Some(src) = fd.source_field_id {
            let mapped = fmap.get(&(src as usize)).ok_or_else(|| Error::InvalidArgument {
                message: format!(
                    "projected field '{}' refers to field '{}', which is not in the output",
                    fd.name, d.fields[src as usize].name
                ),
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
        let start = match (first, src_facts.multiplier.get(cd.field_id as usize).copied().flatten()) {
            (true, Some(m)) => first_entry.saturating_mul(m),
            _ => 0,
        };
        col.flags &= !COLUMN_FLAG_DEFERRED;
        col.first_element_index = None;
        if start > 0 {
            col.flags |= COLUMN_FLAG_DEFERRED;
            let start = i64::try_from(start).map_err(|_| Error::InvalidArgument {
                message: format!("first element index {start} of a late field overflows"),
            })?;
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
        let context = |msg: String| Error::InvalidArgument {
            message: format!("cannot merge {} (input {}) in {mode} mode: {msg}", input.file, k + 1),
        };
        let out_kids = children_of(&out.fields);
        let out_reps = reps_of(out.fields.len(), &out.columns);
        let out_facts = FieldFacts::new(&Schema::from_descriptor(&out.descriptor(&header))?, out.fields.len());
        let src_kids = children_of(&d.fields);
        let src_reps = reps_of(d.fields.len(), &d.columns);
        let src_facts = FieldFacts::new(&input.schema, d.fields.len());
        let out_top: HashMap<String, usize> =
            top_level(&out.fields).into_iter().map(|i| (out.fields[i].name.clone(), i)).collect();
        let src_top: Vec<usize> = top_level(&d.fields);
        let src_names: HashSet<&str> = src_top.iter().map(|&i| d.fields[i].name.as_str()).collect();

        let mut errors = Vec::new();
        let mut map: HashMap<u32, u32> = HashMap::new();
        for &s in &src_top {
            if let Some(&o) = out_top.get(d.fields[s].name.as_str()) {
                compare(
                    d,
                    s,
                    &src_kids,
                    &src_reps,
                    &src_facts,
                    &out,
                    o,
                    &out_kids,
                    &out_reps,
                    &out_facts,
                    &mut errors,
                    &mut map,
                );
            }
        }
        if !errors.is_empty() {
            return Err(context(format!("its schema differs from the first input's:\n  * {}", errors.join("\n  * "))));
        }
        let mut missing: Vec<String> = top_level(&out.fields)
            .into_iter()
            .map(|i| out.fields[i].name.clone())
            .filter(|n| !src_names.contains(n.as_str()))
            .collect();
        missing.sort_unstable();
        let extra: Vec<usize> =
            src_top.iter().copied().filter(|&s| !out_top.contains_key(d.fields[s].name.as_str())).collect();
        if !missing.is_empty() && mode != MergeMode::Union {
            return Err(context(format!("it lacks the field(s) {}", missing.join(", "))));
        }
        if !extra.is_empty() {
            match mode {
                MergeMode::Strict => {
                    let names: Vec<&str> = extra.iter().map(|&s| d.fields[s].name.as_str()).collect();
                    return Err(context(format!("it has field(s) the first input lacks: {}", names.join(", "))));
                }
                MergeMode::Filter => {
                    dropped.extend(extra.iter().map(|&s| format!("{} (from {})", d.fields[s].name, input.file)));
                }
                MergeMode::Union => {
                    let mut fmap: HashMap<usize, usize> = HashMap::new();
                    // Fields matched by name map to their output fields (for projections).
                    for &s in &src_top {
                        if let Some(&o) = out_top.get(d.fields[s].name.as_str()) {
                            map_matched(s, o, &src_kids, &out_kids, &mut fmap);
                        }
                    }
                    // Non-projected fields first, then projected ones (ROOT's order).
                    let mut order: Vec<usize> =
                        extra.iter().copied().filter(|&s| d.fields[s].flags & FIELD_FLAG_PROJECTED == 0).collect();
                    order.extend(extra.iter().copied().filter(|&s| d.fields[s].flags & FIELD_FLAG_PROJECTED != 0));
                    for s in order {
                        add_subtree(d, s, &src_kids, &src_facts, &mut out, entries, &mut fmap, &mut map)
                            .map_err(|e| context(e.to_string()))?;
                        added.push(format!("{} (from {}, entry {entries})", d.fields[s].name, input.file));
                    }
                    // Alias columns of the new projected fields.
                    let inverse: HashMap<u32, u32> = map.iter().map(|(&o, &i)| (i, o)).collect();
                    for a in &d.alias_columns {
                        let Some(&of) = fmap.get(&(a.field_id as usize)) else { continue };
                        if of < out_kids.len() {
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

    let desc = out.descriptor(&header);
    let facts = FieldFacts::new(&Schema::from_descriptor(&desc)?, desc.fields.len());
    let reps = reps_of(out.fields.len(), &out.columns);
    let mut pos_of = vec![(0usize, 0usize); out.columns.len()];
    for cols in reps.iter().flatten() {
        for (p, &c) in cols.iter().enumerate() {
            let r = out.columns[c as usize].representation_index as usize;
            pos_of[c as usize] = (r, p);
        }
    }
    let streamer = |f: usize| {
        let mut f = f;
        for _ in 0..=out.fields.len() {
            if out.fields[f].role == StructuralRole::Streamer {
                return true;
            }
            let p = out.fields[f].parent_id as usize;
            if p == f {
                break;
            }
            f = p;
        }
        false
    };
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
                multiplier: if pos == 0 { facts.multiplier[f] } else { None },
                streamer: streamer(f),
                path: facts.path[f].clone(),
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
fn map_matched(s: usize, o: usize, src_kids: &[Vec<usize>], out_kids: &[Vec<usize>], fmap: &mut HashMap<usize, usize>) {
    fmap.insert(s, o);
    for (&a, &b) in src_kids[s].iter().zip(&out_kids[o]) {
        map_matched(a, b, src_kids, out_kids, fmap);
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
