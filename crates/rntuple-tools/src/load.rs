//! Opening an RNTuple with every envelope kept as parsed (the reader's
//! [`rntuple::RNTuple`] keeps only the merged descriptor): what inspect and
//! merge start from (their field tree is [`Loaded::schema`]).

use std::path::Path;
use std::sync::Arc;

use rntuple::container::{Anchor, OpenOptions, RootFile};
use rntuple::format::model::{Footer, Header, PageList};
use rntuple::format::{Error, Result};
use rntuple::{load_envelopes, Checks, Descriptor, Envelopes, RNTuple, RNTupleFile, ReadOptions, Schema};

/// One RNTuple with its envelopes as stored and its merged descriptor.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file as named by the caller (for messages).
    pub file: String,
    pub root: Arc<RootFile>,
    /// Path of the RNTuple in the file.
    pub name: String,
    pub anchor: Anchor,
    /// Uncompressed checksum of the header envelope (what footer and page
    /// lists quote).
    pub header_checksum: u64,
    pub header: Header,
    pub footer: Footer,
    /// One page list per cluster group, in the footer's order.
    pub page_lists: Vec<PageList>,
    pub descriptor: Descriptor,
    pub schema: Schema,
}

/// Opens a local ROOT file.
pub fn open_root(path: &Path, verify_checksums: bool) -> Result<Arc<RootFile>> {
    Ok(Arc::new(RootFile::open_with(path, OpenOptions { verify_checksums, cache: None })?))
}

/// The RNTuple to work on: `name` if given, else the only RNTuple of the file.
pub fn resolve_name(root: &RootFile, file: &str, name: Option<&str>) -> Result<String> {
    if let Some(n) = name {
        return Ok(n.to_string());
    }
    let names = root.rntuple_names()?;
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::NotFound { what: format!("RNTuple in {file} (the file holds none)") }),
        many => Err(Error::invalid(format!("{file} holds several RNTuples ({}); name one", many.join(", ")))),
    }
}

/// Reads and checks anchor, header, footer and page lists of the RNTuple
/// `name` (checksums when `verify`) through the engine's loader
/// ([`rntuple::load_envelopes`]), and merges them into a descriptor.
pub fn load(root: Arc<RootFile>, file: &str, name: &str, verify: bool) -> Result<Loaded> {
    let key = root.find_key(name)?;
    let mut envelopes = load_envelopes(
        &root,
        &key,
        &mut Checks::Stop { verify_checksums: verify },
        rntuple::DEFAULT_MAX_ENVELOPE_SIZE,
    )?;
    let page_lists = envelopes.take_page_lists()?;
    let Envelopes { anchor, header_checksum, header, footer, .. } = envelopes;
    let descriptor = Descriptor::new(header.clone(), footer.clone(), page_lists.clone())?;
    let schema = Schema::from_descriptor(&descriptor)?;
    Ok(Loaded {
        file: file.to_string(),
        root,
        name: name.to_string(),
        anchor,
        header_checksum,
        header,
        footer,
        page_lists,
        descriptor,
        schema,
    })
}

/// One linked attribute set as the tools list it (spec "Linked Attribute Set
/// Record Frame"; read through [`rntuple::RNTuple::attribute_set`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeSetSummary {
    pub name: String,
    /// Attribute schema version, `"major.minor"`.
    pub schema_version: String,
    /// Attribute entries.
    pub num_entries: u64,
    /// The user's top-level fields: name and C++ type name.
    pub fields: Vec<(String, String)>,
}

/// The attribute sets of `nt`, in the footer's order.
pub fn attribute_sets(nt: &RNTuple) -> Result<Vec<AttributeSetSummary>> {
    nt.attribute_sets()
        .iter()
        .map(|link| {
            let set = nt.attribute_set(&link.name)?;
            Ok(AttributeSetSummary {
                name: link.name.clone(),
                schema_version: format!("{}.{}", link.schema_version_major, link.schema_version_minor),
                num_entries: set.num_entries(),
                fields: set.values().schema().fields.iter().map(|f| (f.name.clone(), f.type_name.clone())).collect(),
            })
        })
        .collect()
}

/// The attribute sets of a loaded RNTuple (opened through the reader).
pub fn attribute_sets_of(l: &Loaded) -> Result<Vec<AttributeSetSummary>> {
    if l.footer.attribute_sets.is_empty() {
        return Ok(Vec::new());
    }
    let file = RNTupleFile::from_root_file(l.root.as_ref().clone(), ReadOptions::default());
    attribute_sets(&file.rntuple(&l.name)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rntuple::field_multipliers;
    use rntuple::format::model::{StructuralRole, FIELD_FLAG_REPETITIVE};
    use std::path::PathBuf;

    fn data(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
    }

    #[test]
    fn facts_of_nested_arrays_and_collections() {
        let file = data("test_stl_containers_rntuple_v1-0-0-0.root");
        let root = open_root(&file, true).unwrap();
        let l = load(root, "f", "ntuple", true).unwrap();
        let by_id = l.schema.by_id();
        let multiplier = field_multipliers(&l.schema, l.descriptor.fields.len());
        for (id, f) in l.descriptor.fields.iter().enumerate() {
            let at = by_id[id].as_ref().unwrap();
            let top = at.top.id as usize;
            assert_eq!(l.descriptor.fields[top].parent_id as usize, top);
            assert!(at.path.ends_with(&f.name));
            assert!(at.path.starts_with(&l.descriptor.fields[top].name));
        }
        // A top-level std::array<T,N> field's subfield has N elements per entry.
        let (arr, _) = l
            .descriptor
            .fields
            .iter()
            .enumerate()
            .find(|(i, f)| f.parent_id as usize == *i && f.flags & FIELD_FLAG_REPETITIVE != 0)
            .expect("a top-level array field");
        let size = l.descriptor.fields[arr].array_size.unwrap();
        let child =
            (0..l.descriptor.fields.len()).find(|&i| i != arr && l.descriptor.fields[i].parent_id as usize == arr);
        assert_eq!(multiplier[child.expect("the array's item field")], Some(size));
        // Subfields of a top-level vector are under a collection.
        let (vec, _) = l
            .descriptor
            .fields
            .iter()
            .enumerate()
            .find(|(i, f)| f.parent_id as usize == *i && f.role == StructuralRole::Collection)
            .expect("a top-level collection");
        assert_eq!(multiplier[vec], Some(1));
        let item =
            (0..l.descriptor.fields.len()).find(|&i| i != vec && l.descriptor.fields[i].parent_id as usize == vec);
        let item = item.expect("the collection's item field");
        assert_eq!(multiplier[item], None);
    }
}
