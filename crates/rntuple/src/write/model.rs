//! The write schema: from an Arrow schema and the user's overrides to the
//! field tree, C++ type names and physical columns of the header envelope
//! (spec "Field Description", "Column Description", "Mapping of C++ Types to
//! Fields and Columns").
//!
//! Inference, when no [`FieldOverride::type_name`] says otherwise:
//!
//! | Arrow | C++ / RNTuple |
//! |---|---|
//! | Boolean, Int8…UInt64, Float32, Float64 | `bool`, `std::int8_t` … `std::uint64_t`, `float`, `double` |
//! | Utf8, LargeUtf8 | `std::string` |
//! | List, LargeList | `std::vector<T>` (untyped collection when `T` is untyped) |
//! | FixedSizeList(N) | `std::array<T,N>` |
//! | Map | `std::map<K,V>` (items `std::pair<K,V>` named `_0`, members `_0`, `_1`) |
//! | Struct | untyped record (empty type name) |
//! | Union (sparse or dense) | `std::variant<T…>`; a null value is the invalid (valueless) state |
//! | nullable top-level field or struct member | `std::optional<T>` |
//!
//! The spec allows untyped fields only at the top level and directly below
//! untyped fields ("Untyped collections and records"). A struct is therefore
//! written untyped when every field above it is an untyped record or list;
//! below anything typed (`std::optional`, `std::array`, `std::variant`, a
//! typed record) it needs a class name (or `std::pair`/`std::tuple`) from an
//! override, and the writer says so. A nullable field whose value would be
//! untyped is written without `std::optional` (its nulls are then an error),
//! because an untyped record cannot sit inside an optional.
//!
//! Default columns follow ROOT 6.40 (`RField*.cxx`, `AutoAdjustColumnTypes`):
//! split encodings and `SplitIndex64` offsets when compressing, their plain
//! twins when the compression settings are 0, `Bit` for `bool`, `Char` for
//! strings, `Switch` for variants, `SplitReal32` for `Double32_t` always.

//!
//! The plan is split by concern: this module holds the plan and its
//! assignment of ids and columns; `infer` the inference above, `overrides`
//! the C++ types and encodings users give, `columns` the column rules.
//! Projections are built by the schema layer ([`crate::schema::projection`])
//! over the tree of the written fields ([`Plan::tree`]), the same
//! [`crate::schema::Schema`] the reader builds from a header.

use std::collections::{HashMap, HashSet};

use arrow_schema::{DataType, Schema as ArrowSchema};
use rntuple_format::column::{ColumnSpec, ColumnValues};
use rntuple_format::model::{ColumnDescriptor, ColumnType, FieldDescriptor, SchemaDescription};
use rntuple_format::{Error, Result};

use super::options::{FieldOverride, Projection, RealEncoding, WriteOptions};
use crate::schema::cpp::template_spelling;
use crate::schema::{projection, FieldKind, Primitive, Schema};

/// Most alternatives of a variant (spec "std::variant").
pub(crate) const MAX_VARIANT_ALTERNATIVES: usize = 125;

/// One field of the write schema: what it declares (as the schema layer's
/// [`crate::schema::FieldNode`] does, classified by the same [`FieldKind`])
/// and the write-only choices of this writer.
///
/// It does not embed a `FieldNode`: a plan field exists before it has an id
/// or columns (ids are given in pre-order by [`Plan::assign`], columns by
/// the column rules), its subfields are plan fields with their own choices,
/// and once assigned, the declaration lives in [`Plan::schema`] (the
/// header's field and column records), from which [`Plan::tree`] builds the
/// `FieldNode` tree the reader would build. The declared members below are
/// therefore the inputs of that record; the reader's view is derived, never
/// kept twice.
#[derive(Debug, Clone)]
pub(crate) struct PlanField {
    pub id: u32,
    pub name: String,
    /// Dotted path of on-disk field names, e.g. `jets._0.pt`.
    pub path: String,
    pub type_name: String,
    pub type_alias: String,
    /// What the field stores and how its Arrow array is walked; never
    /// `Cardinality`, `Streamer` or `Unsupported` (see [`FieldKind`]).
    pub kind: FieldKind,
    pub children: Vec<PlanField>,
    /// Physical column ids (representation 0) in column order.
    pub columns: Vec<usize>,
    /// For variants: the Arrow union type id of each alternative.
    pub union_type_ids: Vec<i8>,
    /// For collections: how their items are ordered when written.
    pub order: Order,
    /// Type version and checksum of a user class (spec "Field Description").
    pub type_version: u32,
    pub type_checksum: Option<u32>,
    /// The field description (spec "Field Description"); empty by default.
    pub description: String,
    /// A struct-of-arrays collection (field flag 0x08, see
    /// [`FieldOverride::soa`]).
    pub soa: bool,
    pub split: Option<bool>,
    pub index32: Option<bool>,
    pub real: Option<RealEncoding>,
    /// For a streamer field: how its entries are streamed (`streamer_field`).
    pub streamer: Option<std::sync::Arc<crate::streamer::Streamed>>,
}

/// The order in which a collection's items are written. ROOT's ordered
/// associative containers (`std::set`, `std::map` and their multi variants)
/// hold their items sorted by `std::less` of the key (a map's key is its
/// pair's `_0`), and the unique ones without equal keys: the writer sorts the
/// items of every entry (stably, so equal keys keep their input order, as
/// the multi containers' inserts do) and, for `std::set` and `std::map`,
/// keeps the first of equal keys (as their `insert` does). Keys compare as
/// Arrow's `make_comparator` does: numbers by value (`-0.0` before `0.0`;
/// NaN is refused, having no order), strings bytewise (as
/// `std::char_traits<char>`), nulls (empty optionals) first, lists and
/// structs lexicographically. Unordered containers are written as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Order {
    #[default]
    AsGiven,
    /// `std::multiset`, `std::multimap`.
    Sorted,
    /// `std::set`, `std::map`.
    SortedUnique,
}

impl Order {
    pub(crate) fn of_template(tmpl: &str) -> Order {
        match tmpl {
            "std::set" | "std::map" => Order::SortedUnique,
            "std::multiset" | "std::multimap" => Order::Sorted,
            _ => Order::AsGiven,
        }
    }
}

/// One physical column.
#[derive(Debug, Clone)]
pub(crate) struct ColumnPlan {
    pub spec: ColumnSpec,
    /// ROOT's in-memory element size (page sizes count these bytes).
    pub mem_size: u64,
    /// An empty buffer of the values the column is filled with.
    pub empty: ColumnValues,
    /// Index of the column's first element: non-zero for a column added by
    /// late schema extension (a deferred column, spec "Column Description").
    pub first_element: u64,
}

impl ColumnPlan {
    /// Bytes ROOT counts per element towards the unzipped cluster size
    /// (`GetPackedSize()` of one element).
    pub fn packed_bytes(&self) -> u64 {
        u64::from(self.spec.bits_on_storage).div_ceil(8)
    }
}

/// The whole write schema. It grows by [`Plan::extend`]: fields, columns
/// and alias columns only ever get appended, so the ids given out stay valid.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Top-level fields written from Arrow data, in the order of the Arrow schema.
    pub fields: Vec<PlanField>,
    /// Physical columns; index = column id.
    pub columns: Vec<ColumnPlan>,
    /// Every field (written and projected), physical column and alias column.
    pub schema: SchemaDescription,
    /// Names of all top-level fields, written and projected.
    pub top_names: HashSet<String>,
}

impl Plan {
    pub fn new(
        arrow: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        options: &WriteOptions,
    ) -> Result<Self> {
        let mut plan = Plan {
            fields: Vec::new(),
            columns: Vec::new(),
            schema: SchemaDescription::default(),
            top_names: HashSet::new(),
        };
        plan.extend(arrow, overrides, &[], options, 0)?;
        Ok(plan)
    }

    /// Adds the top-level fields of `arrow` (written as `overrides` say) and
    /// the `projections`, all or nothing. `first_entry` is the number of
    /// entries written before: non-zero for late schema extension, where the
    /// new columns are deferred (ROOT's `RFieldBase::EntryToColumnElementIndex`:
    /// the principal column starts at `first_entry` times the enclosing array
    /// sizes; columns below a collection or variant, and the second column of
    /// a string, start at 0).
    pub fn extend(
        &mut self,
        arrow: &ArrowSchema,
        overrides: &HashMap<String, FieldOverride>,
        projections: &[Projection],
        options: &WriteOptions,
        first_entry: u64,
    ) -> Result<()> {
        let mut b = Builder { overrides, options, used: HashSet::new() };
        let mut top = Vec::with_capacity(arrow.fields().len());
        let mut seen = HashSet::new();
        for f in arrow.fields() {
            if !seen.insert(f.name().as_str()) {
                return Err(Error::invalid(format!("the schema has two top-level fields named '{}'", f.name())));
            }
            if self.top_names.contains(f.name()) {
                return Err(Error::invalid(format!("the RNTuple already has a top-level field named '{}'", f.name())));
            }
            top.push(b.field(f.name(), f.name(), f.data_type(), f.is_nullable(), None, true, true)?);
        }
        let mut unused: Vec<&String> = overrides.keys().filter(|k| !b.used.contains(k.as_str())).collect();
        if !unused.is_empty() {
            unused.sort();
            return Err(Error::invalid(format!(
                "overrides name fields that the schema does not have: {}",
                unused.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ")
            )));
        }
        let mut next = self.clone();
        for mut f in top {
            let id = next.schema.fields.len() as u32;
            next.assign(&mut f, id, options, first_entry)?;
            next.top_names.insert(f.name.clone());
            next.fields.push(f);
        }
        // One layout per class among the streamer fields, old and new.
        let mut classes = crate::streamer::Classes::default();
        for f in &next.fields {
            if let Some(e) = &f.streamer {
                classes
                    .absorb(&e.classes)
                    .map_err(|why| Error::invalid(format!("streamer field '{}': {why}", f.path)))?;
            }
        }
        if !projections.is_empty() {
            let written = next.tree()?;
            for p in projections {
                next.add_projection(&written, p)?;
            }
        }
        *self = next;
        Ok(())
    }

    /// The field tree of everything declared so far, as the reader sees it
    /// once written (one model for both: [`Schema`]).
    pub fn tree(&self) -> Result<Schema> {
        Schema::from_description(&self.schema)
    }

    /// Adds the projected field `p` (its fields and alias columns) over the
    /// `written` fields.
    fn add_projection(&mut self, written: &Schema, p: &Projection) -> Result<()> {
        let err = |why: projection::Why| Error::invalid(format!("projection '{}' of '{}': {why}", p.name, p.source));
        super::names::check_name(&p.name, "projected field", &p.name)?;
        if self.top_names.contains(&p.name) {
            return Err(err(format!("the RNTuple already has a top-level field named '{}'", p.name)));
        }
        projection::add(&mut self.schema, written, &p.name, &p.source, p.type_name.as_deref()).map_err(err)?;
        self.top_names.insert(p.name.clone());
        Ok(())
    }

    /// Gives `f` and its subfields ids in pre-order (ROOT's order: a field,
    /// then its subtree) and attaches their columns in the same order.
    /// `first` is the first element index of the field's principal column.
    fn assign(&mut self, f: &mut PlanField, parent: u32, options: &WriteOptions, first: u64) -> Result<()> {
        let id = self.schema.fields.len() as u32;
        f.id = id;
        let role = f.kind.role().ok_or_else(|| unwritable(f))?;
        self.schema.fields.push(FieldDescriptor {
            field_version: 0,
            type_version: f.type_version,
            parent_id: parent,
            role,
            flags: if f.soa { rntuple_format::model::FIELD_FLAG_SOA } else { 0 },
            name: f.name.clone(),
            type_name: f.type_name.clone(),
            type_alias: f.type_alias.clone(),
            description: f.description.clone(),
            array_size: f.kind.array_size(),
            source_field_id: None,
            type_checksum: f.type_checksum,
        });
        let columns: Vec<ColumnChoice> = field_columns(f, options)?;
        let principal_first = match f.kind {
            FieldKind::Bitset { size: n } => first * n,
            _ => first,
        };
        for (k, (column_type, bits, range, mem_size)) in columns.into_iter().enumerate() {
            let bits = if bits == 0 { column_type.default_bits().unwrap_or(0) } else { bits };
            let spec =
                ColumnSpec::new(column_type, bits, range).map_err(|e| e.within(&format!("field '{}'", f.path)))?;
            let first_element = if k == 0 { principal_first } else { 0 };
            f.columns.push(self.columns.len());
            self.schema.columns.push(ColumnDescriptor {
                column_type,
                bits_on_storage: bits,
                field_id: id,
                flags: 0,
                representation_index: 0,
                first_element_index: (first_element > 0).then_some(first_element as i64),
                value_range: range,
            });
            // A leaf's in-memory values (whatever its column type), except
            // that `char` goes into its `Char` column as bytes.
            let empty = match f.kind {
                FieldKind::Primitive(p) if p != Primitive::Char => p.values(),
                _ => ColumnValues::for_column(column_type)?,
            };
            self.columns.push(ColumnPlan { spec, mem_size, empty, first_element });
        }
        let child_first = match f.kind {
            FieldKind::Array { size: n } => first * n,
            FieldKind::Record | FieldKind::Wrapper => first,
            _ => 0,
        };
        for c in &mut f.children {
            self.assign(c, id, options, child_first)?;
        }
        Ok(())
    }
}

/// The error for a plan field of a kind the writer does not build (see
/// [`PlanField::kind`]).
pub(crate) fn unwritable(f: &PlanField) -> Error {
    Error::internal(format!("field '{}' of kind {:?} cannot be written from Arrow data", f.path, f.kind))
}

/// `tmpl<a,b,...>` from the children's type names, and the alias spelled
/// with the children's aliases when any child has one (spec "Type Name
/// Normalization": the alias keeps `Double32_t`).
pub(crate) fn template_names(tmpl: &str, children: &[PlanField], suffix: &str) -> (String, String) {
    template_spelling(tmpl, children.iter().map(|c| (c.type_name.as_str(), c.type_alias.as_str())), suffix)
}

/// Builds the [`PlanField`]s of an Arrow schema (see `infer` and `overrides`).
pub(crate) struct Builder<'a> {
    pub overrides: &'a HashMap<String, FieldOverride>,
    pub options: &'a WriteOptions,
    /// Paths of the overrides used so far.
    pub used: HashSet<String>,
}

pub(crate) fn node(
    name: &str,
    path: &str,
    kind: FieldKind,
    type_name: String,
    type_alias: String,
    children: Vec<PlanField>,
) -> PlanField {
    PlanField {
        id: 0,
        name: name.to_string(),
        path: path.to_string(),
        type_name,
        type_alias,
        kind,
        children,
        columns: Vec::new(),
        union_type_ids: Vec::new(),
        order: Order::AsGiven,
        type_version: 0,
        type_checksum: None,
        description: String::new(),
        soa: false,
        split: None,
        index32: None,
        real: None,
        streamer: None,
    }
}

pub(crate) fn leaf(name: &str, path: &str, p: Primitive) -> PlanField {
    node(name, path, FieldKind::Primitive(p), p.name().to_string(), String::new(), Vec::new())
}

/// A map field: a collection whose item `pair` is a `std::pair<K,V>`
/// record; its type name is `tmpl<K,V>` (aliases kept as in
/// [`template_names`]).
pub(crate) fn map_node(name: &str, path: &str, tmpl: &str, pair: PlanField) -> PlanField {
    let (type_name, alias) = template_names(tmpl, &pair.children, "");
    let mut f = node(name, path, FieldKind::Collection { nullable: false }, type_name, alias, vec![pair]);
    f.order = Order::of_template(tmpl);
    f
}

pub(crate) fn child_path(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

// Column rules: which physical columns a field of each kind gets and their
// types (ROOT 6.40's defaults, `RField*.cxx`, `AutoAdjustColumnTypes`; spec
// "Fundamental Types" through the table in [`crate::schema::fundamental`]),
// with the overrides of split encodings, index width and floating-point
// encodings.

/// Column type, bits on storage (0: the type's width), value range and
/// ROOT's in-memory element size of one column.
pub(crate) type ColumnChoice = (ColumnType, u16, Option<(f64, f64)>, u64);

/// The columns of field `f` (representation 0, in column order).
pub(crate) fn field_columns(f: &PlanField, options: &WriteOptions) -> Result<Vec<ColumnChoice>> {
    let split = f.split.unwrap_or(options.compressed());
    let index = {
        let narrow = f.index32.unwrap_or(options.index32);
        match (narrow, split) {
            (false, true) => ColumnType::SplitIndex64,
            (false, false) => ColumnType::Index64,
            (true, true) => ColumnType::SplitIndex32,
            (true, false) => ColumnType::Index32,
        }
    };
    Ok(match f.kind {
        FieldKind::Primitive(p) => vec![leaf_column(p, f.real, f.split, options.compressed(), &f.path)?],
        FieldKind::String => vec![(index, 0, None, 8), (ColumnType::Char, 8, None, 1)],
        FieldKind::Collection { .. } => vec![(index, 0, None, 8)],
        FieldKind::Variant => vec![(ColumnType::Switch, 0, None, 16)],
        FieldKind::Bitset { .. } => vec![(ColumnType::Bit, 0, None, 1)],
        FieldKind::Array { .. } | FieldKind::Record | FieldKind::Wrapper => Vec::new(),
        // ROOT's `RStreamerField`: offsets and the streamed bytes.
        FieldKind::Streamer if f.streamer.is_some() => vec![(index, 0, None, 8), (ColumnType::Byte, 8, None, 1)],
        FieldKind::Cardinality { .. } | FieldKind::Streamer | FieldKind::Unsupported(_) => return Err(unwritable(f)),
    })
}

/// The [`ColumnChoice`] of a leaf.
fn leaf_column(
    p: Primitive,
    real: Option<RealEncoding>,
    split: Option<bool>,
    compressed: bool,
    path: &str,
) -> Result<ColumnChoice> {
    use ColumnType as T;
    let s = split.unwrap_or(compressed);
    let pick = |split_t: T, plain_t: T| if s { split_t } else { plain_t };
    let mem = p.size();
    if let Some(enc) = real {
        return Ok(match enc {
            RealEncoding::Real16 => (T::Real16, 0, None, mem),
            RealEncoding::Real32 => (pick(T::SplitReal32, T::Real32), 0, None, mem),
            RealEncoding::Real32Trunc { bits } => (T::Real32Trunc, bits, None, mem),
            RealEncoding::Real32Quant { bits, min, max } => (T::Real32Quant, bits, Some((min, max)), mem),
            RealEncoding::Double32 => (if split.unwrap_or(true) { T::SplitReal32 } else { T::Real32 }, 0, None, mem),
        });
    }
    let info = p.info();
    if split == Some(true) && info.split == info.plain {
        return Err(Error::invalid(format!("field '{path}': {} has no split encoding", p.name())));
    }
    Ok((p.default_column(s), 0, None, mem))
}

/// Whether a C++ fundamental type stores an Arrow type bit for bit.
pub(crate) fn compatible(p: Primitive, dt: &DataType) -> bool {
    p.stores(dt)
}
