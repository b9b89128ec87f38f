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

use std::collections::{HashMap, HashSet};

use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use rntuple_format::column::{ColumnSpec, ColumnValues};
use rntuple_format::model::{ColumnDescriptor, ColumnType, FieldDescriptor, SchemaDescription, StructuralRole};
use rntuple_format::{Error, Result};

use super::cpp::{parse, primitive_name, CppType};
use super::names::check_name;
use super::options::{FieldOverride, Projection, RealEncoding, WriteOptions};
use super::project::add_projection;
use crate::schema::Primitive;

/// Most alternatives of a variant (spec "std::variant").
const MAX_VARIANT_ALTERNATIVES: usize = 125;

/// What a field stores and how its Arrow array is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A fundamental type: one column.
    Leaf(Primitive),
    /// Index column + `Char` column.
    String,
    /// A collection of its single subfield `_0`: index column.
    Vector,
    /// `std::optional<T>`: index column over the same Arrow array's validity.
    Optional,
    /// `std::array<T,N>`: repetitive field without columns.
    Array(u64),
    /// `std::bitset<N>`: repetitive leaf with one `Bit` column, `N` bits per entry.
    Bitset(u64),
    /// Record (untyped, class, pair, tuple): no columns.
    Record,
    /// `std::variant`: `Switch` column, one subfield per alternative.
    Variant,
}

impl Shape {
    /// The structural role of a field of this shape (spec "Field Description").
    pub fn role(self) -> StructuralRole {
        match self {
            Shape::Leaf(_) | Shape::String | Shape::Array(_) | Shape::Bitset(_) => StructuralRole::Leaf,
            Shape::Vector | Shape::Optional => StructuralRole::Collection,
            Shape::Record => StructuralRole::Record,
            Shape::Variant => StructuralRole::Variant,
        }
    }
}

/// One field of the write schema.
#[derive(Debug, Clone)]
pub(crate) struct PlanField {
    pub id: u32,
    pub name: String,
    /// Dotted path of on-disk field names, e.g. `jets._0.pt`.
    pub path: String,
    pub type_name: String,
    pub type_alias: String,
    pub shape: Shape,
    pub children: Vec<PlanField>,
    /// Physical column ids (representation 0) in column order.
    pub columns: Vec<usize>,
    /// For variants: the Arrow union type id of each alternative.
    pub union_type_ids: Vec<i8>,
    /// For collections: how their items are ordered when written.
    pub order: Order,
    split: Option<bool>,
    index32: Option<bool>,
    real: Option<RealEncoding>,
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
    fn of_template(tmpl: &str) -> Order {
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
                return Err(invalid(format!("the schema has two top-level fields named '{}'", f.name())));
            }
            if self.top_names.contains(f.name()) {
                return Err(invalid(format!("the RNTuple already has a top-level field named '{}'", f.name())));
            }
            top.push(b.field(f.name(), f.name(), f.data_type(), f.is_nullable(), None, true, true)?);
        }
        let mut unused: Vec<&String> = overrides.keys().filter(|k| !b.used.contains(k.as_str())).collect();
        if !unused.is_empty() {
            unused.sort();
            return Err(invalid(format!(
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
        for p in projections {
            add_projection(&mut next, p)?;
        }
        *self = next;
        Ok(())
    }

    /// The written field at a dotted path, with the fields above it (top-level first).
    pub fn find(&self, path: &str) -> Option<Vec<&PlanField>> {
        let mut parts = path.split('.');
        let first = parts.next()?;
        let mut chain = vec![self.fields.iter().find(|f| f.name == first)?];
        for part in parts {
            let parent = chain[chain.len() - 1];
            chain.push(parent.children.iter().find(|c| c.name == part)?);
        }
        Some(chain)
    }

    /// Gives `f` and its subfields ids in pre-order (ROOT's order: a field,
    /// then its subtree) and attaches their columns in the same order.
    /// `first` is the first element index of the field's principal column.
    fn assign(&mut self, f: &mut PlanField, parent: u32, options: &WriteOptions, first: u64) -> Result<()> {
        let id = self.schema.fields.len() as u32;
        f.id = id;
        let array_size = match f.shape {
            Shape::Array(n) | Shape::Bitset(n) => Some(n),
            _ => None,
        };
        self.schema.fields.push(FieldDescriptor {
            field_version: 0,
            type_version: 0,
            parent_id: parent,
            role: f.shape.role(),
            flags: 0,
            name: f.name.clone(),
            type_name: f.type_name.clone(),
            type_alias: f.type_alias.clone(),
            description: String::new(),
            array_size,
            source_field_id: None,
            type_checksum: None,
        });
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
        let columns: Vec<ColumnChoice> = match f.shape {
            Shape::Leaf(p) => vec![leaf_column(p, f.real, f.split, options.compressed(), &f.path)?],
            Shape::String => vec![(index, 0, None, 8), (ColumnType::Char, 8, None, 1)],
            Shape::Vector | Shape::Optional => vec![(index, 0, None, 8)],
            Shape::Variant => vec![(ColumnType::Switch, 0, None, 16)],
            Shape::Bitset(_) => vec![(ColumnType::Bit, 0, None, 1)],
            Shape::Array(_) | Shape::Record => Vec::new(),
        };
        let principal_first = match f.shape {
            Shape::Bitset(n) => first * n,
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
            let empty = match f.shape {
                Shape::Leaf(p) => leaf_values(p),
                _ => ColumnValues::for_column(column_type)?,
            };
            self.columns.push(ColumnPlan { spec, mem_size, empty, first_element });
        }
        let child_first = match f.shape {
            Shape::Array(n) => first * n,
            Shape::Record => first,
            _ => 0,
        };
        for c in &mut f.children {
            self.assign(c, id, options, child_first)?;
        }
        Ok(())
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidArgument { message }
}

/// The in-memory values of a leaf of type `p` (whatever its column type).
fn leaf_values(p: Primitive) -> ColumnValues {
    match p {
        Primitive::Bool => ColumnValues::Bool(Vec::new()),
        Primitive::Byte | Primitive::Char | Primitive::U8 => ColumnValues::U8(Vec::new()),
        Primitive::I8 => ColumnValues::I8(Vec::new()),
        Primitive::I16 => ColumnValues::I16(Vec::new()),
        Primitive::U16 => ColumnValues::U16(Vec::new()),
        Primitive::I32 => ColumnValues::I32(Vec::new()),
        Primitive::U32 => ColumnValues::U32(Vec::new()),
        Primitive::I64 => ColumnValues::I64(Vec::new()),
        Primitive::U64 => ColumnValues::U64(Vec::new()),
        Primitive::F32 => ColumnValues::F32(Vec::new()),
        Primitive::F64 => ColumnValues::F64(Vec::new()),
    }
}

/// ROOT's in-memory size of a fundamental type.
fn primitive_size(p: Primitive) -> u64 {
    match p {
        Primitive::Bool | Primitive::Byte | Primitive::Char | Primitive::I8 | Primitive::U8 => 1,
        Primitive::I16 | Primitive::U16 => 2,
        Primitive::I32 | Primitive::U32 | Primitive::F32 => 4,
        Primitive::I64 | Primitive::U64 | Primitive::F64 => 8,
    }
}

/// Column type, bits on storage (0: the type's width), value range and
/// ROOT's in-memory element size of one column.
type ColumnChoice = (ColumnType, u16, Option<(f64, f64)>, u64);

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
    let mem = primitive_size(p);
    if let Some(enc) = real {
        return Ok(match enc {
            RealEncoding::Real16 => (T::Real16, 0, None, mem),
            RealEncoding::Real32 => (pick(T::SplitReal32, T::Real32), 0, None, mem),
            RealEncoding::Real32Trunc { bits } => (T::Real32Trunc, bits, None, mem),
            RealEncoding::Real32Quant { bits, min, max } => (T::Real32Quant, bits, Some((min, max)), mem),
            RealEncoding::Double32 => (if split.unwrap_or(true) { T::SplitReal32 } else { T::Real32 }, 0, None, mem),
        });
    }
    let t = match p {
        Primitive::Bool => T::Bit,
        Primitive::Byte => T::Byte,
        Primitive::Char => T::Char,
        Primitive::I8 => T::Int8,
        Primitive::U8 => T::UInt8,
        Primitive::I16 => pick(T::SplitInt16, T::Int16),
        Primitive::U16 => pick(T::SplitUInt16, T::UInt16),
        Primitive::I32 => pick(T::SplitInt32, T::Int32),
        Primitive::U32 => pick(T::SplitUInt32, T::UInt32),
        Primitive::I64 => pick(T::SplitInt64, T::Int64),
        Primitive::U64 => pick(T::SplitUInt64, T::UInt64),
        Primitive::F32 => pick(T::SplitReal32, T::Real32),
        Primitive::F64 => pick(T::SplitReal64, T::Real64),
    };
    let one_byte = matches!(p, Primitive::Bool | Primitive::Byte | Primitive::Char | Primitive::I8 | Primitive::U8);
    if split == Some(true) && one_byte {
        return Err(invalid(format!("field '{path}': {} has no split encoding", primitive_name(p))));
    }
    Ok((t, 0, None, mem))
}

/// The fundamental type an Arrow type is written as by default.
fn arrow_primitive(dt: &DataType) -> Option<Primitive> {
    Some(match dt {
        DataType::Boolean => Primitive::Bool,
        DataType::Int8 => Primitive::I8,
        DataType::UInt8 => Primitive::U8,
        DataType::Int16 => Primitive::I16,
        DataType::UInt16 => Primitive::U16,
        DataType::Int32 => Primitive::I32,
        DataType::UInt32 => Primitive::U32,
        DataType::Int64 => Primitive::I64,
        DataType::UInt64 => Primitive::U64,
        DataType::Float32 => Primitive::F32,
        DataType::Float64 => Primitive::F64,
        _ => return None,
    })
}

/// Whether a C++ fundamental type stores an Arrow type bit for bit.
pub(crate) fn compatible(p: Primitive, dt: &DataType) -> bool {
    match (p, arrow_primitive(dt)) {
        (Primitive::Char, Some(Primitive::I8)) | (Primitive::Byte, Some(Primitive::U8)) => true,
        (p, Some(q)) => p == q,
        (_, None) => false,
    }
}

/// `tmpl<a,b,...>` from the children's type names, and the alias spelled
/// with the children's aliases when any child has one (spec "Type Name
/// Normalization": the alias keeps `Double32_t`).
fn template_names(tmpl: &str, children: &[PlanField], suffix: &str) -> (String, String) {
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

struct Builder<'a> {
    overrides: &'a HashMap<String, FieldOverride>,
    options: &'a WriteOptions,
    used: HashSet<String>,
}

fn node(
    name: &str,
    path: &str,
    shape: Shape,
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
        shape,
        children,
        columns: Vec::new(),
        union_type_ids: Vec::new(),
        order: Order::AsGiven,
        split: None,
        index32: None,
        real: None,
    }
}

fn leaf(name: &str, path: &str, p: Primitive) -> PlanField {
    node(name, path, Shape::Leaf(p), primitive_name(p).to_string(), String::new(), Vec::new())
}

/// Sets the floating-point encoding of a leaf (`Double32_t` also sets the alias).
fn apply_real(f: &mut PlanField, enc: RealEncoding) -> Result<()> {
    match (f.shape, enc) {
        (Shape::Leaf(Primitive::F64), RealEncoding::Double32) => f.type_alias = "Double32_t".into(),
        (Shape::Leaf(_), RealEncoding::Double32) => {
            return Err(invalid(format!("field '{}': Double32_t needs a double (Float64) field", f.path)))
        }
        (Shape::Leaf(Primitive::F32 | Primitive::F64), _) => {}
        _ => {
            return Err(invalid(format!(
                "field '{}' of type '{}' has no floating-point column to encode",
                f.path, f.type_name
            )))
        }
    }
    if let RealEncoding::Real32Quant { min, max, .. } = enc {
        if !(min.is_finite() && max.is_finite() && min <= max) {
            return Err(invalid(format!("field '{}': invalid quantization range [{min}, {max}]", f.path)));
        }
    }
    f.real = Some(enc);
    Ok(())
}

/// A map field: a collection whose item `pair` is a `std::pair<K,V>`
/// record; its type name is `tmpl<K,V>` (aliases kept as in
/// [`template_names`]).
fn map_node(name: &str, path: &str, tmpl: &str, pair: PlanField) -> PlanField {
    let (type_name, alias) = template_names(tmpl, &pair.children, "");
    let mut f = node(name, path, Shape::Vector, type_name, alias, vec![pair]);
    f.order = Order::of_template(tmpl);
    f
}

fn child_path(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

impl Builder<'_> {
    /// Builds the field `name` at `path` for Arrow type `dt`. `spec` is the
    /// C++ type imposed by the parent's type name; `untyped_ok` whether the
    /// field may be untyped; `member` whether Arrow nullability means
    /// `std::optional` here (top-level fields and struct members).
    #[allow(clippy::too_many_arguments)]
    fn field(
        &mut self,
        name: &str,
        path: &str,
        dt: &DataType,
        nullable: bool,
        spec: Option<CppType>,
        untyped_ok: bool,
        member: bool,
    ) -> Result<PlanField> {
        check_name(name, "field", path)?;
        let ov = self.overrides.get(path).cloned().unwrap_or_default();
        if self.overrides.contains_key(path) {
            self.used.insert(path.to_string());
        }
        let spec = match (spec, &ov.type_name) {
            (Some(_), Some(t)) => {
                return Err(invalid(format!(
                    "field '{path}': its type is given by its parent's type name, the override '{t}' cannot change it"
                )))
            }
            (None, Some(t)) => Some(parse(t).map_err(|e| e.within(&format!("override of field '{path}'")))?),
            (s, None) => s,
        };
        let mut f = match spec {
            Some(CppType::Optional { tmpl, item }) => self.optional(name, path, dt, tmpl, Some(*item), ov.real)?,
            Some(s) => self.typed(name, path, dt, s)?,
            None => {
                let wrap = member
                    && nullable
                    && self.options.nullable_as_optional
                    && !self.untyped_value(dt, &child_path(path, "_0"));
                if wrap {
                    self.optional(name, path, dt, "std::optional", None, ov.real)?
                } else {
                    self.infer(name, path, dt, untyped_ok)?
                }
            }
        };
        if f.shape != Shape::Optional {
            if let Some(enc) = ov.real {
                apply_real(&mut f, enc)?;
            }
        }
        if let Some(s) = ov.split {
            if matches!(f.shape, Shape::Array(_) | Shape::Bitset(_) | Shape::Record | Shape::Variant) {
                return Err(invalid(format!("field '{path}' has no columns with a split encoding")));
            }
            f.split = Some(s);
        }
        if let Some(i) = ov.index32 {
            if !matches!(f.shape, Shape::String | Shape::Vector | Shape::Optional) {
                return Err(invalid(format!("field '{path}' has no index column")));
            }
            f.index32 = Some(i);
        }
        Ok(f)
    }

    /// Whether inference would make the value at `path` untyped.
    fn untyped_value(&self, dt: &DataType, path: &str) -> bool {
        if self.overrides.get(path).is_some_and(|o| o.type_name.is_some()) {
            return false;
        }
        match dt {
            DataType::Struct(_) => true,
            DataType::List(item) | DataType::LargeList(item) => {
                self.untyped_value(item.data_type(), &child_path(path, "_0"))
            }
            _ => false,
        }
    }

    fn optional(
        &mut self,
        name: &str,
        path: &str,
        dt: &DataType,
        tmpl: &str,
        item: Option<CppType>,
        real: Option<RealEncoding>,
    ) -> Result<PlanField> {
        let cpath = child_path(path, "_0");
        let mut child = self.field("_0", &cpath, dt, false, item, false, false)?;
        if let Some(enc) = real {
            apply_real(&mut child, enc)?;
        }
        let (type_name, alias) = template_names(tmpl, std::slice::from_ref(&child), "");
        Ok(node(name, path, Shape::Optional, type_name, alias, vec![child]))
    }

    fn unsupported(&self, path: &str, dt: &DataType) -> Error {
        Error::unsupported(
            format!("writing Arrow type {dt}"),
            rntuple_format::Location::new(format!("field '{path}'"), None),
        )
    }

    /// Infers the C++ type of a (non-optional) value.
    fn infer(&mut self, name: &str, path: &str, dt: &DataType, untyped_ok: bool) -> Result<PlanField> {
        if let Some(p) = arrow_primitive(dt) {
            return Ok(leaf(name, path, p));
        }
        match dt {
            DataType::Utf8 | DataType::LargeUtf8 => {
                Ok(node(name, path, Shape::String, "std::string".into(), String::new(), Vec::new()))
            }
            DataType::List(item) | DataType::LargeList(item) => {
                let cpath = child_path(path, "_0");
                let child = self.field("_0", &cpath, item.data_type(), item.is_nullable(), None, untyped_ok, false)?;
                if child.type_name.is_empty() {
                    Ok(node(name, path, Shape::Vector, String::new(), String::new(), vec![child]))
                } else {
                    let (t, a) = template_names("std::vector", std::slice::from_ref(&child), "");
                    Ok(node(name, path, Shape::Vector, t, a, vec![child]))
                }
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(members) = entries.data_type() else {
                    return Err(self.unsupported(path, dt));
                };
                let cpath = child_path(path, "_0");
                let mut kv = Vec::with_capacity(2);
                for (k, m) in members.iter().enumerate() {
                    let cname = format!("_{k}");
                    kv.push(self.field(
                        &cname,
                        &child_path(&cpath, &cname),
                        m.data_type(),
                        false,
                        None,
                        false,
                        false,
                    )?);
                }
                let (t, a) = template_names("std::pair", &kv, "");
                let child = node("_0", &cpath, Shape::Record, t, a, kv);
                Ok(map_node(name, path, "std::map", child))
            }
            DataType::FixedSizeList(item, n) => {
                let size = u64::try_from(*n).ok().filter(|&n| n > 0).ok_or_else(|| {
                    invalid(format!("field '{path}': fixed-size list of size {n} cannot be a std::array"))
                })?;
                let cpath = child_path(path, "_0");
                let child = self.field("_0", &cpath, item.data_type(), item.is_nullable(), None, false, false)?;
                let (t, a) = template_names("std::array", std::slice::from_ref(&child), &format!(",{size}"));
                Ok(node(name, path, Shape::Array(size), t, a, vec![child]))
            }
            DataType::Struct(fields) => {
                if !untyped_ok {
                    return Err(invalid(format!(
                        "field '{path}': an Arrow struct below a typed field needs a C++ type; the spec allows \
                         untyped records only at the top level and directly below untyped fields. Give it a class \
                         name (read by ROOT through a dictionary or emulation) or std::pair/std::tuple with \
                         FieldOverride::type_name"
                    )));
                }
                let children = self.members(path, fields.iter().map(|f| f.as_ref()), true)?;
                Ok(node(name, path, Shape::Record, String::new(), String::new(), children))
            }
            DataType::Union(fields, _) => {
                let n = fields.len();
                if n == 0 || n > MAX_VARIANT_ALTERNATIVES {
                    return Err(invalid(format!(
                        "field '{path}': a union of {n} members cannot be a std::variant (1 to 125 alternatives)"
                    )));
                }
                let mut children = Vec::with_capacity(n);
                let mut ids = Vec::with_capacity(n);
                for (k, (tid, f)) in fields.iter().enumerate() {
                    let cname = format!("_{k}");
                    let cpath = child_path(path, &cname);
                    children.push(self.field(&cname, &cpath, f.data_type(), false, None, false, false)?);
                    ids.push(tid);
                }
                let (t, a) = template_names("std::variant", &children, "");
                let mut f = node(name, path, Shape::Variant, t, a, children);
                f.union_type_ids = ids;
                Ok(f)
            }
            other => Err(self.unsupported(path, other)),
        }
    }

    /// Members of a struct, keeping their names; nullable members become optionals.
    fn members<'f>(
        &mut self,
        path: &str,
        fields: impl Iterator<Item = &'f Field>,
        untyped_ok: bool,
    ) -> Result<Vec<PlanField>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for f in fields {
            if !seen.insert(f.name().clone()) {
                return Err(invalid(format!("field '{path}' has two members named '{}'", f.name())));
            }
            let cpath = child_path(path, f.name());
            out.push(self.field(f.name(), &cpath, f.data_type(), f.is_nullable(), None, untyped_ok, true)?);
        }
        Ok(out)
    }

    /// Builds a (non-optional) value whose C++ type is given.
    fn typed(&mut self, name: &str, path: &str, dt: &DataType, spec: CppType) -> Result<PlanField> {
        let mismatch =
            |what: &str| invalid(format!("field '{path}': the C++ type {what} does not describe the Arrow type {dt}"));
        match spec {
            CppType::Prim { prim, double32 } => {
                if !compatible(prim, dt) {
                    return Err(mismatch(primitive_name(prim)));
                }
                let mut f = leaf(name, path, prim);
                if double32 {
                    apply_real(&mut f, RealEncoding::Double32)?;
                }
                Ok(f)
            }
            CppType::String => match dt {
                DataType::Utf8 | DataType::LargeUtf8 => {
                    Ok(node(name, path, Shape::String, "std::string".into(), String::new(), Vec::new()))
                }
                _ => Err(mismatch("std::string")),
            },
            CppType::Vector { tmpl, item } => match dt {
                DataType::List(f) | DataType::LargeList(f) => {
                    let cpath = child_path(path, "_0");
                    let child = self.field("_0", &cpath, f.data_type(), false, Some(*item), false, false)?;
                    let (t, a) = template_names(tmpl, std::slice::from_ref(&child), "");
                    let mut f = node(name, path, Shape::Vector, t, a, vec![child]);
                    f.order = Order::of_template(tmpl);
                    Ok(f)
                }
                _ => Err(mismatch(tmpl)),
            },
            CppType::Map { tmpl, key, value } => {
                let entries = match dt {
                    DataType::Map(f, _) => f,
                    DataType::List(f) | DataType::LargeList(f) if matches!(f.data_type(), DataType::Struct(m) if m.len() == 2) => {
                        f
                    }
                    _ => return Err(mismatch(&format!("{tmpl}<…> (a map or a list of two-member structs)"))),
                };
                let pair = CppType::Tuple { tmpl: "std::pair", items: vec![*key, *value] };
                let cpath = child_path(path, "_0");
                let child = self.field("_0", &cpath, entries.data_type(), false, Some(pair), false, false)?;
                Ok(map_node(name, path, tmpl, child))
            }
            CppType::Array { size, item } => match dt {
                DataType::FixedSizeList(f, n) if i64::from(*n) == size as i64 => {
                    let cpath = child_path(path, "_0");
                    let child = self.field("_0", &cpath, f.data_type(), false, Some(*item), false, false)?;
                    let (t, a) = template_names("std::array", std::slice::from_ref(&child), &format!(",{size}"));
                    Ok(node(name, path, Shape::Array(size), t, a, vec![child]))
                }
                _ => Err(mismatch(&format!("std::array<…,{size}>"))),
            },
            CppType::Variant(items) => match dt {
                DataType::Union(fields, _) if fields.len() == items.len() => {
                    let mut children = Vec::with_capacity(items.len());
                    let mut ids = Vec::with_capacity(items.len());
                    for (k, ((tid, f), item)) in fields.iter().zip(items).enumerate() {
                        let cname = format!("_{k}");
                        let cpath = child_path(path, &cname);
                        children.push(self.field(&cname, &cpath, f.data_type(), false, Some(item), false, false)?);
                        ids.push(tid);
                    }
                    let (t, a) = template_names("std::variant", &children, "");
                    let mut f = node(name, path, Shape::Variant, t, a, children);
                    f.union_type_ids = ids;
                    Ok(f)
                }
                _ => Err(mismatch(&format!("std::variant of {} alternatives", items.len()))),
            },
            CppType::Tuple { tmpl, items } => match dt {
                DataType::Struct(fields) if fields.len() == items.len() => {
                    let mut children = Vec::with_capacity(items.len());
                    for (k, (f, item)) in fields.iter().zip(items).enumerate() {
                        let cname = format!("_{k}");
                        let cpath = child_path(path, &cname);
                        children.push(self.field(&cname, &cpath, f.data_type(), false, Some(item), false, false)?);
                    }
                    let (t, a) = template_names(tmpl, &children, "");
                    Ok(node(name, path, Shape::Record, t, a, children))
                }
                _ => Err(mismatch(&format!("{tmpl} of {} members", items.len()))),
            },
            CppType::Class(class) => match dt {
                DataType::Struct(fields) => {
                    let children = self.members(path, fields.iter().map(|f| f.as_ref()), false)?;
                    Ok(node(name, path, Shape::Record, class, String::new(), children))
                }
                _ => Err(mismatch(&format!("class {class}"))),
            },
            CppType::Optional { .. } => {
                Err(invalid(format!("field '{path}': an optional of an optional cannot be written from Arrow data")))
            }
            CppType::Bitset(size) => {
                let fits = match dt {
                    DataType::FixedSizeList(f, n) => {
                        i64::from(*n) == size as i64 && matches!(f.data_type(), DataType::Boolean)
                    }
                    DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => size <= 64,
                    _ => false,
                };
                if !fits {
                    return Err(mismatch(&format!(
                        "std::bitset<{size}> (a fixed-size list of {size} booleans, or unsigned integers for up to 64 \
                         bits)"
                    )));
                }
                Ok(node(name, path, Shape::Bitset(size), format!("std::bitset<{size}>"), String::new(), Vec::new()))
            }
            CppType::Cardinality { .. } => Err(invalid(format!(
                "field '{path}': ROOT::RNTupleCardinality presents the sizes of a collection; it can only be a \
                 projected field (see projections)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn plan(fields: Vec<Field>, ov: &[(&str, FieldOverride)], options: WriteOptions) -> Result<Plan> {
        let ov: HashMap<String, FieldOverride> = ov.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Plan::new(&ArrowSchema::new(fields), &ov, &options)
    }

    fn names(p: &Plan) -> Vec<(String, String, u32)> {
        p.schema.fields.iter().map(|f| (f.name.clone(), f.type_name.clone(), f.parent_id)).collect()
    }

    #[test]
    fn infers_root_types_in_preorder() {
        let item = Arc::new(Field::new("item", DataType::Float32, true));
        let p = plan(
            vec![
                Field::new("x", DataType::Int16, false),
                Field::new("v", DataType::LargeList(item.clone()), false),
                Field::new("o", DataType::Float64, true),
                Field::new("s", DataType::Utf8, false),
                Field::new("a", DataType::FixedSizeList(item, 3), false),
            ],
            &[],
            WriteOptions::default(),
        )
        .unwrap();
        let n = names(&p);
        assert_eq!(n[0], ("x".into(), "std::int16_t".into(), 0));
        assert_eq!(n[1], ("v".into(), "std::vector<float>".into(), 1));
        assert_eq!(n[2], ("_0".into(), "float".into(), 1));
        assert_eq!(n[3], ("o".into(), "std::optional<double>".into(), 3));
        assert_eq!(n[5], ("s".into(), "std::string".into(), 5));
        assert_eq!(n[6], ("a".into(), "std::array<float,3>".into(), 6));
        assert_eq!(p.schema.fields[6].array_size, Some(3));
        let types: Vec<ColumnType> = p.schema.columns.iter().map(|c| c.column_type).collect();
        use ColumnType as T;
        assert_eq!(
            types,
            [
                T::SplitInt16,
                T::SplitIndex64,
                T::SplitReal32,
                T::SplitIndex64,
                T::SplitReal64,
                T::SplitIndex64,
                T::Char,
                T::SplitReal32
            ]
        );
        let plain = plan(
            vec![Field::new("x", DataType::Int16, false)],
            &[],
            WriteOptions { compression: 0, ..Default::default() },
        )
        .unwrap();
        assert_eq!(plain.schema.columns[0].column_type, T::Int16);
    }

    #[test]
    fn structs_are_untyped_where_the_spec_allows() {
        let s = DataType::Struct(vec![Field::new("pt", DataType::Float32, false)].into());
        let p = plan(
            vec![Field::new("jets", DataType::List(Arc::new(Field::new("item", s.clone(), true))), false)],
            &[],
            WriteOptions::default(),
        )
        .unwrap();
        assert_eq!(names(&p)[0].1, "");
        assert_eq!(names(&p)[1].1, "");
        assert_eq!(names(&p)[2], ("pt".into(), "float".into(), 1));
        // Below std::array a struct needs a name.
        let e = plan(
            vec![Field::new("a", DataType::FixedSizeList(Arc::new(Field::new("i", s.clone(), false)), 2), false)],
            &[],
            WriteOptions::default(),
        );
        assert!(e.is_err());
        let ok = plan(
            vec![Field::new("a", DataType::FixedSizeList(Arc::new(Field::new("i", s.clone(), false)), 2), false)],
            &[("a._0", FieldOverride::type_name("Jet"))],
            WriteOptions::default(),
        )
        .unwrap();
        assert_eq!(names(&ok)[0].1, "std::array<Jet,2>");
        // A nullable top-level struct stays untyped and not optional.
        let p = plan(vec![Field::new("s", s, true)], &[], WriteOptions::default()).unwrap();
        assert_eq!(p.schema.fields[0].role, StructuralRole::Record);
    }

    #[test]
    fn overrides_shape_types_and_columns() {
        let item = Arc::new(Field::new("item", DataType::Float64, true));
        let p = plan(
            vec![
                Field::new("v", DataType::List(item), false),
                Field::new("o", DataType::Float32, true),
                Field::new("c", DataType::Int8, false),
            ],
            &[
                (
                    "v",
                    FieldOverride {
                        type_name: Some("ROOT::RVec<Double32_t>".into()),
                        index32: Some(true),
                        ..Default::default()
                    },
                ),
                (
                    "o",
                    FieldOverride {
                        type_name: Some("float".into()),
                        real: Some(RealEncoding::Real16),
                        ..Default::default()
                    },
                ),
                ("c", FieldOverride::type_name("char")),
            ],
            WriteOptions::default(),
        )
        .unwrap();
        let f = &p.schema.fields;
        assert_eq!(
            (f[0].type_name.as_str(), f[0].type_alias.as_str()),
            ("ROOT::VecOps::RVec<double>", "ROOT::VecOps::RVec<Double32_t>")
        );
        assert_eq!(f[1].type_alias, "Double32_t");
        assert_eq!(f[2].type_name, "float");
        assert_eq!(f[3].type_name, "char");
        let c: Vec<ColumnType> = p.schema.columns.iter().map(|c| c.column_type).collect();
        assert_eq!(c, [ColumnType::SplitIndex32, ColumnType::SplitReal32, ColumnType::Real16, ColumnType::Char]);
        assert!(plan(
            vec![Field::new("x", DataType::Int32, false)],
            &[("y", FieldOverride::type_name("int"))],
            WriteOptions::default()
        )
        .is_err());
        assert!(plan(
            vec![Field::new("x", DataType::Int32, false)],
            &[("x", FieldOverride::type_name("float"))],
            WriteOptions::default()
        )
        .is_err());
        assert!(plan(vec![Field::new("a.b", DataType::Int32, false)], &[], WriteOptions::default()).is_err());
    }
}
