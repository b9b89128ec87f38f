//! The field tree as typed Python objects (`_lib.FieldInfo`,
//! `_lib.ColumnInfo`), built from `rntuple::schema::FieldNode` (spec
//! "Field Description", "Column Description").

use pyo3::prelude::*;
use rntuple::{FieldKind, FieldNode};

/// One physical column of a field's representation.
#[pyclass(module = "rntuple._lib", frozen, get_all)]
pub(crate) struct ColumnInfo {
    id: u32,
    /// Column type name (`"SplitReal32"`, `"Index64"`, ...).
    column_type: &'static str,
    bits_on_storage: u16,
    representation_index: u16,
}

#[pymethods]
impl ColumnInfo {
    fn __repr__(&self) -> String {
        format!(
            "ColumnInfo(id={}, column_type='{}', bits_on_storage={})",
            self.id, self.column_type, self.bits_on_storage
        )
    }
}

/// One field of the header with its subfields and columns.
#[pyclass(module = "rntuple._lib", frozen, get_all)]
pub(crate) struct FieldInfo {
    id: u32,
    name: String,
    type_name: String,
    type_alias: String,
    description: String,
    /// `"primitive"`, `"string"`, `"collection"`, `"optional"`, `"record"`, ...
    kind: String,
    type_version: u32,
    type_checksum: Option<u32>,
    array_size: Option<u64>,
    projected: bool,
    /// For a projected field: the id of the field it presents.
    source_field_id: Option<u32>,
    /// Physical columns, one list per representation.
    columns: Vec<Vec<Py<ColumnInfo>>>,
    children: Vec<Py<FieldInfo>>,
}

#[pymethods]
impl FieldInfo {
    fn __repr__(&self) -> String {
        format!("FieldInfo(id={}, name='{}', type_name='{}', kind='{}')", self.id, self.name, self.type_name, self.kind)
    }
}

fn kind_name(k: &FieldKind) -> String {
    match k {
        FieldKind::Primitive(_) => "primitive".into(),
        FieldKind::String => "string".into(),
        FieldKind::Cardinality { .. } => "cardinality".into(),
        FieldKind::Streamer => "streamer".into(),
        FieldKind::Collection { nullable: false } => "collection".into(),
        FieldKind::Collection { nullable: true } => "optional".into(),
        FieldKind::Array { .. } => "array".into(),
        FieldKind::Bitset { .. } => "bitset".into(),
        FieldKind::Record => "record".into(),
        FieldKind::Variant => "variant".into(),
        FieldKind::Wrapper => "wrapper".into(),
        FieldKind::Unsupported(what) => format!("unsupported: {what}"),
    }
}

/// The typed tree of `f`, columns described from `nt`'s descriptor.
pub(crate) fn field_info(py: Python<'_>, nt: &rntuple::RNTuple, f: &FieldNode) -> PyResult<Py<FieldInfo>> {
    let desc = nt.descriptor();
    let columns = f
        .representations
        .iter()
        .map(|r| {
            r.iter()
                .filter_map(|&c| desc.columns.get(c as usize).map(|cd| (c, cd)))
                .map(|(c, cd)| {
                    let info = ColumnInfo {
                        id: c,
                        column_type: cd.column_type.name(),
                        bits_on_storage: cd.bits_on_storage,
                        representation_index: cd.representation_index,
                    };
                    Py::new(py, info)
                })
                .collect::<PyResult<Vec<_>>>()
        })
        .collect::<PyResult<Vec<_>>>()?;
    let children = f.children.iter().map(|c| field_info(py, nt, c)).collect::<PyResult<Vec<_>>>()?;
    let info = FieldInfo {
        id: f.id,
        name: f.name.clone(),
        type_name: f.type_name.clone(),
        type_alias: f.type_alias.clone(),
        description: f.description.clone(),
        kind: kind_name(&f.kind),
        type_version: f.type_version,
        type_checksum: f.type_checksum,
        array_size: f.array_size,
        projected: f.projected,
        source_field_id: f.source_field_id,
        columns,
        children,
    };
    Py::new(py, info)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FieldInfo>()?;
    m.add_class::<ColumnInfo>()
}
