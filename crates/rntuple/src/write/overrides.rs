//! The C++ types and column choices users give ([`FieldOverride`]):
//! a type name parsed by the schema layer ([`crate::schema::cpp`]) imposes
//! the field tree below it, checked against the Arrow data; split, index
//! width and floating-point encodings change the field's own columns; type
//! version and checksum are stored for user classes (spec "Field
//! Description").
//!
//! How the writer tells an enum from a class: a class name (any name that
//! is not a stdlib or fundamental type) over an Arrow **integer** type is an
//! enum with that underlying type (ROOT's `REnumField`: a leaf without
//! columns whose subfield `_0` is the integer, spec "User-defined enums");
//! over a struct it is a class (a record of the struct's members).

use arrow_schema::DataType;
use rntuple_format::Error;
use rntuple_format::Result;

use super::model::compatible;
use super::model::{child_path, leaf, map_node, node, template_names, Builder, Order, PlanField};
use super::names::check_name;
use super::options::RealEncoding;
use crate::schema::cpp::{parse, CppType};
use crate::schema::{FieldKind, Primitive};

/// Sets the floating-point encoding of a leaf (`Double32_t` also sets the alias).
pub(crate) fn apply_real(f: &mut PlanField, enc: RealEncoding) -> Result<()> {
    match (&f.kind, enc) {
        (FieldKind::Primitive(Primitive::F64), RealEncoding::Double32) => f.type_alias = "Double32_t".into(),
        (FieldKind::Primitive(_), RealEncoding::Double32) => {
            return Err(Error::invalid(format!("field '{}': Double32_t needs a double (Float64) field", f.path)))
        }
        (FieldKind::Primitive(Primitive::F32 | Primitive::F64), _) => {}
        _ => {
            return Err(Error::invalid(format!(
                "field '{}' of type '{}' has no floating-point column to encode",
                f.path, f.type_name
            )))
        }
    }
    if let RealEncoding::Real32Quant { min, max, .. } = enc {
        if !(min.is_finite() && max.is_finite() && min <= max) {
            return Err(Error::invalid(format!("field '{}': invalid quantization range [{min}, {max}]", f.path)));
        }
    }
    f.real = Some(enc);
    Ok(())
}

/// The error for the record of the SoA field `path` that is not a class (`what`).
fn soa_record_error(path: &str, cpath: &str, what: &str) -> Error {
    Error::invalid(format!(
        "field '{path}': the record of a struct-of-arrays field needs a class name (types={{'{cpath}': \
         'HitRecord'}}), not {what}"
    ))
}

impl Builder<'_> {
    /// Builds the field `name` at `path` for Arrow type `dt`. `spec` is the
    /// C++ type imposed by the parent's type name; `untyped_ok` whether the
    /// field may be untyped; `member` whether Arrow nullability means
    /// `std::optional` here (top-level fields and struct members).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn field(
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
                return Err(Error::invalid(format!(
                    "field '{path}': its type is given by its parent's type name, the override '{t}' cannot change it"
                )))
            }
            (None, Some(t)) => Some(parse(t).map_err(|e| e.within(&format!("override of field '{path}'")))?),
            (s, None) => s,
        };
        let mut f = match spec {
            _ if ov.soa => self.soa(name, path, dt, ov.type_name.as_deref())?,
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
        if !matches!(f.kind, FieldKind::Collection { nullable: true }) {
            if let Some(enc) = ov.real {
                apply_real(&mut f, enc)?;
            }
        }
        if let Some(s) = ov.split {
            if matches!(
                f.kind,
                FieldKind::Array { .. } | FieldKind::Bitset { .. } | FieldKind::Record | FieldKind::Variant
            ) {
                return Err(Error::invalid(format!("field '{path}' has no columns with a split encoding")));
            }
            f.split = Some(s);
        }
        if let Some(i) = ov.index32 {
            if !matches!(f.kind, FieldKind::String | FieldKind::Collection { .. }) {
                return Err(Error::invalid(format!("field '{path}' has no index column")));
            }
            f.index32 = Some(i);
        }
        if ov.type_version.is_some() || ov.type_checksum.is_some() {
            let class = (matches!(f.kind, FieldKind::Record | FieldKind::Wrapper) || f.soa)
                && !f.type_name.is_empty()
                && !f.type_name.starts_with("std::");
            if !class {
                let what = if f.type_name.is_empty() { "an untyped field" } else { f.type_name.as_str() };
                return Err(Error::invalid(format!(
                    "field '{path}' is {what}: a type version and checksum belong to user classes and enums \
                     (for an optional or a collection of a class, give them to its '_0')"
                )));
            }
            f.type_version = ov.type_version.unwrap_or(0);
            f.type_checksum = ov.type_checksum;
        }
        if let Some(d) = &ov.description {
            f.description = d.clone();
        }
        if ov.streamer {
            f = super::streamer_field::convert(f)?;
        }
        Ok(f)
    }

    /// Builds the struct-of-arrays field `path` (field flag 0x08, ROOT 6.40's
    /// `ROOT::Experimental::RSoAField`): on disk a collection of the record
    /// `_0` whose type name is the SoA class, as ROOT writes it (compared
    /// field by field with ROOT's file in `tests/python/test_soa.py`). Both
    /// the SoA class (`class`, the field's own override) and the record (the
    /// override of `path._0`) must be class names: ROOT finds the record
    /// through the SoA class's dictionary, and a reader without it through
    /// the record's name. An SoA field is never optional.
    fn soa(&mut self, name: &str, path: &str, dt: &DataType, class: Option<&str>) -> Result<PlanField> {
        let cpath = child_path(path, "_0");
        let soa_class = match class.map(parse).transpose() {
            Ok(Some(CppType::Class(c))) => c,
            _ => {
                return Err(Error::invalid(format!(
                    "field '{path}': a struct-of-arrays field needs the SoA class as its type (types={{'{path}': \
                     'HitSoA'}}), not {}",
                    class.map_or_else(|| "no type".to_string(), |t| format!("'{t}'"))
                )))
            }
        };
        let item = match dt {
            DataType::List(f) | DataType::LargeList(f) if matches!(f.data_type(), DataType::Struct(_)) => f,
            _ => {
                return Err(Error::invalid(format!(
                    "field '{path}': a struct-of-arrays field is written from a list of structs (its records), \
                     not {dt}"
                )))
            }
        };
        // Without a class name the record would be inferred untyped, which the spec forbids below a
        // typed collection: say what an SoA field needs instead.
        if self.overrides.get(&cpath).is_none_or(|o| o.type_name.is_none()) {
            return Err(soa_record_error(path, &cpath, "an untyped record"));
        }
        let child = self.field("_0", &cpath, item.data_type(), false, None, false, false)?;
        let record_class = matches!(child.kind, FieldKind::Record)
            && !child.type_name.is_empty()
            && !child.type_name.starts_with("std::");
        if !record_class {
            return Err(soa_record_error(path, &cpath, &format!("'{}'", child.type_name)));
        }
        let mut f = node(name, path, FieldKind::Collection { nullable: false }, soa_class, String::new(), vec![child]);
        f.soa = true;
        Ok(f)
    }

    pub(crate) fn optional(
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
        Ok(node(name, path, FieldKind::Collection { nullable: true }, type_name, alias, vec![child]))
    }

    /// Builds a (non-optional) value whose C++ type is given.
    pub(crate) fn typed(&mut self, name: &str, path: &str, dt: &DataType, spec: CppType) -> Result<PlanField> {
        let mismatch = |what: &str| {
            Error::invalid(format!("field '{path}': the C++ type {what} does not describe the Arrow type {dt}"))
        };
        match spec {
            CppType::Prim { prim, double32 } => {
                if !compatible(prim, dt) {
                    return Err(mismatch(prim.name()));
                }
                let mut f = leaf(name, path, prim);
                if double32 {
                    apply_real(&mut f, RealEncoding::Double32)?;
                }
                Ok(f)
            }
            CppType::String => match dt {
                DataType::Utf8 | DataType::LargeUtf8 => {
                    Ok(node(name, path, FieldKind::String, "std::string".into(), String::new(), Vec::new()))
                }
                _ => Err(mismatch("std::string")),
            },
            CppType::Vector { tmpl, item } => match dt {
                DataType::List(f) | DataType::LargeList(f) => {
                    let cpath = child_path(path, "_0");
                    let child = self.field("_0", &cpath, f.data_type(), false, Some(*item), false, false)?;
                    let (t, a) = template_names(tmpl, std::slice::from_ref(&child), "");
                    let mut f = node(name, path, FieldKind::Collection { nullable: false }, t, a, vec![child]);
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
                    Ok(node(name, path, FieldKind::Array { size }, t, a, vec![child]))
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
                    let mut f = node(name, path, FieldKind::Variant, t, a, children);
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
                    Ok(node(name, path, FieldKind::Record, t, a, children))
                }
                _ => Err(mismatch(&format!("{tmpl} of {} members", items.len()))),
            },
            CppType::Class(class) => match dt {
                DataType::Struct(fields) => {
                    let children = self.members(path, fields.iter().map(|f| f.as_ref()), false)?;
                    Ok(node(name, path, FieldKind::Record, class, String::new(), children))
                }
                // A class name over integers is an enum (see the module documentation).
                dt => match Primitive::from_arrow(dt).filter(|p| p.is_integer()) {
                    Some(p) => {
                        let underlying = CppType::Prim { prim: p.enum_underlying(), double32: false };
                        let child =
                            self.field("_0", &child_path(path, "_0"), dt, false, Some(underlying), false, false)?;
                        Ok(node(name, path, FieldKind::Wrapper, class, String::new(), vec![child]))
                    }
                    None => Err(mismatch(&format!("class {class} (a struct) or enum {class} (integers)"))),
                },
            },
            CppType::Atomic(item) => {
                let child = self.field("_0", &child_path(path, "_0"), dt, false, Some(*item), false, false)?;
                let (t, a) = template_names("std::atomic", std::slice::from_ref(&child), "");
                Ok(node(name, path, FieldKind::Wrapper, t, a, vec![child]))
            }
            CppType::Optional { .. } => Err(Error::invalid(format!(
                "field '{path}': an optional of an optional cannot be written from Arrow data"
            ))),
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
                Ok(node(
                    name,
                    path,
                    FieldKind::Bitset { size },
                    format!("std::bitset<{size}>"),
                    String::new(),
                    Vec::new(),
                ))
            }
            CppType::Cardinality { .. } => Err(Error::invalid(format!(
                "field '{path}': ROOT::RNTupleCardinality presents the sizes of a collection; it can only be a \
                 projected field (see projections)"
            ))),
        }
    }
}
