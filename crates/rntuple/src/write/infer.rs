//! Inference of the C++ type of an Arrow type when no override names one
//! (the table in [`super::plan`]'s documentation; composite types through
//! the schema layer's one mapping, [`crate::schema::arrow`]).

use arrow_schema::{DataType, Field};
use rntuple_format::{Error, Result};
use std::collections::HashSet;

use super::model::{child_path, leaf, map_node, node, template_names, Builder, PlanField, MAX_VARIANT_ALTERNATIVES};
use crate::schema::arrow::Composite;
use crate::schema::{FieldKind, Primitive};

impl Builder<'_> {
    /// Whether inference would make the value at `path` untyped.
    pub(crate) fn untyped_value(&self, dt: &DataType, path: &str) -> bool {
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

    fn unsupported(&self, path: &str, dt: &DataType) -> Error {
        Error::unsupported(
            format!("writing Arrow type {dt}"),
            rntuple_format::Location::new(format!("field '{path}'"), None),
        )
    }

    /// Infers the C++ type of a (non-optional) value.
    pub(crate) fn infer(&mut self, name: &str, path: &str, dt: &DataType, untyped_ok: bool) -> Result<PlanField> {
        if let Some(p) = Primitive::from_arrow(dt) {
            return Ok(leaf(name, path, p));
        }
        if matches!(dt, DataType::Utf8 | DataType::LargeUtf8) {
            return Ok(node(name, path, FieldKind::String, "std::string".into(), String::new(), Vec::new()));
        }
        let Some(composite) = Composite::of_arrow(dt) else {
            return Err(self.unsupported(path, dt));
        };
        let tmpl = composite.template();
        let cpath = child_path(path, "_0");
        match composite {
            Composite::Collection { item } => {
                let child = self.field("_0", &cpath, item.data_type(), item.is_nullable(), None, untyped_ok, false)?;
                let vector = FieldKind::Collection { nullable: false };
                if child.type_name.is_empty() {
                    Ok(node(name, path, vector, String::new(), String::new(), vec![child]))
                } else {
                    let (t, a) = template_names(tmpl, std::slice::from_ref(&child), "");
                    Ok(node(name, path, vector, t, a, vec![child]))
                }
            }
            Composite::Map { entries } => {
                let mut kv = Vec::with_capacity(2);
                for (k, m) in entries.iter().enumerate() {
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
                let child = node("_0", &cpath, FieldKind::Record, t, a, kv);
                Ok(map_node(name, path, tmpl, child))
            }
            Composite::Array { item, size } => {
                let size = u64::try_from(size).ok().filter(|&n| n > 0).ok_or_else(|| {
                    Error::invalid(format!("field '{path}': fixed-size list of size {size} cannot be a std::array"))
                })?;
                let child = self.field("_0", &cpath, item.data_type(), item.is_nullable(), None, false, false)?;
                let (t, a) = template_names(tmpl, std::slice::from_ref(&child), &format!(",{size}"));
                Ok(node(name, path, FieldKind::Array { size }, t, a, vec![child]))
            }
            Composite::Record { members } => {
                if !untyped_ok {
                    return Err(Error::invalid(format!(
                        "field '{path}': an Arrow struct below a typed field needs a C++ type; the spec allows \
                         untyped records only at the top level and directly below untyped fields. Give it a class \
                         name (read by ROOT through a dictionary or emulation) or std::pair/std::tuple with \
                         FieldOverride::type_name"
                    )));
                }
                let children = self.members(path, members.iter().map(|f| f.as_ref()), true)?;
                Ok(node(name, path, FieldKind::Record, String::new(), String::new(), children))
            }
            Composite::Variant { alternatives } => {
                let n = alternatives.len();
                if n == 0 || n > MAX_VARIANT_ALTERNATIVES {
                    return Err(Error::invalid(format!(
                        "field '{path}': a union of {n} members cannot be a std::variant (1 to 125 alternatives)"
                    )));
                }
                let mut children = Vec::with_capacity(n);
                let mut ids = Vec::with_capacity(n);
                for (k, (tid, f)) in alternatives.iter().enumerate() {
                    let cname = format!("_{k}");
                    let cpath = child_path(path, &cname);
                    children.push(self.field(&cname, &cpath, f.data_type(), false, None, false, false)?);
                    ids.push(tid);
                }
                let (t, a) = template_names(tmpl, &children, "");
                let mut f = node(name, path, FieldKind::Variant, t, a, children);
                f.union_type_ids = ids;
                Ok(f)
            }
        }
    }

    /// Members of a struct, keeping their names; nullable members become optionals.
    pub(crate) fn members<'f>(
        &mut self,
        path: &str,
        fields: impl Iterator<Item = &'f Field>,
        untyped_ok: bool,
    ) -> Result<Vec<PlanField>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for f in fields {
            if !seen.insert(f.name().clone()) {
                return Err(Error::invalid(format!("field '{path}' has two members named '{}'", f.name())));
            }
            let cpath = child_path(path, f.name());
            out.push(self.field(f.name(), &cpath, f.data_type(), f.is_nullable(), None, untyped_ok, true)?);
        }
        Ok(out)
    }
}
