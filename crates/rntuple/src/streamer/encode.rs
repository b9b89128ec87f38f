//! Writing streamer fields: each entry of an Arrow array streamed as ROOT's
//! `TBufferFile` streams the object with the streamer infos of
//! [`Classes`] — the inverse of [`super::decode`], byte for byte what ROOT
//! 6.40's `RStreamerField` writes for the same values (see
//! docs/format-notes.md, "Streamer fields"): a class with a byte count and
//! its version (version 0 and the checksum for a class without
//! `ClassDef`), a base class as a class, a `std::string` member with a byte
//! count and version 10, a `std::vector` member with a byte count and
//! version 6 (a vector of a class member-wise, version bit 0x4000), a
//! top-level `std::vector<T>` as its size and items.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, GenericListArray, OffsetSizeTrait};
use arrow_schema::DataType;

use super::layout::{Class, Classes, Ty, Writer, STRING_VERSION, VECTOR_VERSION};
use super::MAX_DEPTH;

/// The member-wise flag of a vector's version.
const MEMBER_WISE: u16 = 0x4000;

/// Streams the values of one streamer field.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoder {
    /// The field's type: a class or a `std::vector` of one.
    pub top: Ty,
    pub classes: Classes,
}

/// An error: what and where.
pub type Fail = String;

impl Encoder {
    /// Checks that every type the field reaches can be written.
    pub fn new(top: Ty, classes: Classes) -> Result<Self, Fail> {
        let e = Encoder { top, classes };
        e.check(&e.top, true, 0)?;
        Ok(e)
    }

    fn check(&self, ty: &Ty, object_wise: bool, depth: usize) -> Result<(), Fail> {
        if depth > MAX_DEPTH {
            return Err(format!("types nested deeper than {MAX_DEPTH} levels"));
        }
        match ty {
            Ty::Basic { .. } | Ty::String => Ok(()),
            Ty::Vector(item) => match item.as_ref() {
                Ty::Vector(_) => Err(format!("{}: a vector of vectors is not written", ty.root_name())),
                Ty::Class(c) if !object_wise => self.check_member_wise(c, depth + 1),
                other => self.check(other, false, depth + 1),
            },
            Ty::Class(c) => {
                let class = self.class(c)?;
                for m in &class.members {
                    self.check(&m.ty, false, depth + 1)?;
                }
                Ok(())
            }
        }
    }

    /// A vector of a class inside a class is written member-wise: the
    /// class's members must be fundamentals, strings or vectors of those.
    fn check_member_wise(&self, c: &str, depth: usize) -> Result<(), Fail> {
        for m in &self.class(c)?.members {
            let ok = match &m.ty {
                Ty::Basic { .. } | Ty::String => !m.base,
                Ty::Vector(item) => matches!(item.as_ref(), Ty::Basic { .. } | Ty::String),
                Ty::Class(_) => false,
            };
            if !ok {
                return Err(format!(
                    "{c}::{} ({}): a vector of {c} inside a class is streamed member-wise, which is written only \
                     for classes of fundamentals, strings and vectors of those",
                    m.name,
                    m.ty.root_name()
                ));
            }
        }
        let _ = depth;
        Ok(())
    }

    /// Whether Arrow type `dt` holds values of the field's type (lists of
    /// either offset width, strings of either kind).
    pub fn accepts(&self, dt: &DataType) -> bool {
        self.fits(&self.top, dt, 0)
    }

    fn fits(&self, ty: &Ty, dt: &DataType, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        match (ty, dt) {
            (Ty::Basic { code, .. }, dt) => matches!(
                (code, dt),
                (18, DataType::Boolean)
                    | (1, DataType::Int8)
                    | (11, DataType::UInt8)
                    | (2, DataType::Int16)
                    | (12, DataType::UInt16)
                    | (3, DataType::Int32)
                    | (13, DataType::UInt32)
                    | (16, DataType::Int64)
                    | (17, DataType::UInt64)
                    | (5, DataType::Float32)
                    | (8, DataType::Float64)
            ),
            (Ty::String, dt) => matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View),
            (Ty::Vector(item), DataType::List(f) | DataType::LargeList(f)) => self.fits(item, f.data_type(), depth + 1),
            (Ty::Class(c), DataType::Struct(fields)) => match self.classes.by_name.get(c) {
                Some(class) => {
                    class.members.len() == fields.len()
                        && class
                            .members
                            .iter()
                            .zip(fields.iter())
                            .all(|(m, f)| self.fits(&m.ty, f.data_type(), depth + 1))
                }
                None => false,
            },
            _ => false,
        }
    }

    fn class(&self, c: &str) -> Result<&Class, Fail> {
        self.classes.by_name.get(c).ok_or_else(|| format!("class {c} has no layout"))
    }

    /// Appends the bytes of entries `[a, b)` of `arr` to `out` and the end
    /// offset (relative to `out`'s length before) of each to `ends`.
    pub fn encode(
        &self,
        arr: &dyn Array,
        a: usize,
        b: usize,
        out: &mut Vec<u8>,
        ends: &mut Vec<u64>,
    ) -> Result<(), Fail> {
        let base = out.len();
        let mut w = Writer::with(std::mem::take(out));
        let r = (|| {
            for i in a..b {
                if arr.is_null(i) {
                    return Err(format!("entry {i} is null (a streamer field has no missing values)"));
                }
                match &self.top {
                    Ty::Vector(item) => self.vector_items(&mut w, item, arr, i)?,
                    ty => self.value(&mut w, ty, arr, i)?,
                }
                ends.push((w.out.len() - base) as u64);
            }
            Ok(())
        })();
        *out = w.out;
        r
    }

    fn value(&self, w: &mut Writer, ty: &Ty, arr: &dyn Array, i: usize) -> Result<(), Fail> {
        if arr.is_null(i) {
            return Err(format!("a null {} (streamed objects have no missing values)", ty.root_name()));
        }
        match ty {
            Ty::Basic { code, .. } => basic(w, *code, arr, i),
            Ty::String => {
                w.try_version_counted(STRING_VERSION, |w| string(w, arr, i))?;
                Ok(())
            }
            Ty::Vector(item) => {
                let member_wise = matches!(item.as_ref(), Ty::Class(_));
                let version = if member_wise { VECTOR_VERSION | MEMBER_WISE } else { VECTOR_VERSION };
                w.try_version_counted(version, |w| {
                    if member_wise {
                        self.member_wise(w, item, arr, i)
                    } else {
                        self.vector_items(w, item, arr, i)
                    }
                })?;
                Ok(())
            }
            Ty::Class(c) => {
                let class = self.class(c)?;
                let s = arr.as_struct_opt().ok_or_else(|| format!("class {c}: not a struct array"))?;
                if s.num_columns() != class.members.len() {
                    return Err(format!(
                        "class {c}: {} members, the struct has {}",
                        class.members.len(),
                        s.num_columns()
                    ));
                }
                w.try_counted(|w| {
                    class_version(w, class);
                    for (m, col) in class.members.iter().zip(s.columns()) {
                        self.value(w, &m.ty, col.as_ref(), i).map_err(|e| format!("{c}::{}: {e}", m.name))?;
                    }
                    Ok(())
                })?;
                Ok(())
            }
        }
    }

    /// A vector's size and items, each streamed as itself.
    fn vector_items(&self, w: &mut Writer, item: &Ty, arr: &dyn Array, i: usize) -> Result<(), Fail> {
        let (values, a, b) = list_range(arr, i)?;
        w.i32(i32::try_from(b - a).map_err(|_| format!("a vector of {} items", b - a))?);
        for k in a..b {
            match item {
                Ty::String => string(w, values.as_ref(), k)?,
                other => self.value(w, other, values.as_ref(), k)?,
            }
        }
        Ok(())
    }

    /// A vector of a class, member-wise: the class version, the size, then
    /// each member's values for all items (nothing more for no items).
    fn member_wise(&self, w: &mut Writer, item: &Ty, arr: &dyn Array, i: usize) -> Result<(), Fail> {
        let Ty::Class(c) = item else { return Err("member-wise items must be a class".into()) };
        let class = self.class(c)?;
        let (values, a, b) = list_range(arr, i)?;
        let s = values.as_struct_opt().ok_or_else(|| format!("class {c}: not a struct array"))?;
        class_version(w, class);
        w.i32(i32::try_from(b - a).map_err(|_| format!("a vector of {} items", b - a))?);
        if a == b {
            return Ok(());
        }
        for (m, col) in class.members.iter().zip(s.columns()) {
            let col = col.as_ref();
            let what = |e: Fail| format!("{c}::{} (member-wise): {e}", m.name);
            match &m.ty {
                Ty::Basic { code, .. } => {
                    for k in a..b {
                        basic(w, *code, col, k).map_err(what)?;
                    }
                }
                Ty::String => w
                    .try_version_counted(STRING_VERSION, |w| (a..b).try_for_each(|k| string(w, col, k)))
                    .map_err(what)?,
                Ty::Vector(inner) => w
                    .try_version_counted(VECTOR_VERSION, |w| {
                        (a..b).try_for_each(|k| self.vector_items(w, inner, col, k))
                    })
                    .map_err(what)?,
                Ty::Class(_) => return Err(what("a class member is not written member-wise".into())),
            }
        }
        Ok(())
    }
}

/// A class's version header (without the byte count).
fn class_version(w: &mut Writer, class: &Class) {
    if class.version < 0 {
        w.u16(0);
        w.u32(class.checksum);
    } else {
        w.u16(class.version as u16);
    }
}

impl Writer {
    fn try_counted(&mut self, body: impl FnOnce(&mut Self) -> Result<(), Fail>) -> Result<(), Fail> {
        let mut r = Ok(());
        self.counted(|w| r = body(w));
        r
    }
    fn try_version_counted(&mut self, v: u16, body: impl FnOnce(&mut Self) -> Result<(), Fail>) -> Result<(), Fail> {
        self.try_counted(|w| {
            w.u16(v);
            body(w)
        })
    }
}

fn list_range(arr: &dyn Array, i: usize) -> Result<(ArrayRef, usize, usize), Fail> {
    fn parts<O: OffsetSizeTrait>(l: &GenericListArray<O>, i: usize) -> (ArrayRef, usize, usize) {
        let o = l.value_offsets();
        (l.values().clone(), o[i].as_usize(), o[i + 1].as_usize())
    }
    match arr.data_type() {
        DataType::List(_) => Ok(parts(arr.as_list::<i32>(), i)),
        DataType::LargeList(_) => Ok(parts(arr.as_list::<i64>(), i)),
        other => Err(format!("a std::vector needs a list array, not {other}")),
    }
}

fn string(w: &mut Writer, arr: &dyn Array, i: usize) -> Result<(), Fail> {
    if arr.is_null(i) {
        return Err("a null string".into());
    }
    let s = match arr.data_type() {
        DataType::Utf8 => arr.as_string::<i32>().value(i),
        DataType::LargeUtf8 => arr.as_string::<i64>().value(i),
        DataType::Utf8View => arr.as_string_view().value(i),
        other => return Err(format!("a std::string needs a string array, not {other}")),
    };
    w.tstring(s);
    Ok(())
}

fn basic(w: &mut Writer, code: i32, arr: &dyn Array, i: usize) -> Result<(), Fail> {
    if arr.is_null(i) {
        return Err("a null value".into());
    }
    macro_rules! p {
        ($t:ty) => {
            arr.as_primitive_opt::<$t>().map(|p| p.value(i))
        };
    }
    let dt = arr.data_type();
    let bad = || format!("fundamental type code {code} cannot be written from {dt}");
    match code {
        18 => w.u8(u8::from(arr.as_boolean_opt().ok_or_else(bad)?.value(i))),
        1 => w.u8(p!(Int8Type).ok_or_else(bad)? as u8),
        11 => w.u8(p!(UInt8Type).ok_or_else(bad)?),
        2 => w.u16(p!(Int16Type).ok_or_else(bad)? as u16),
        12 => w.u16(p!(UInt16Type).ok_or_else(bad)?),
        3 => w.i32(p!(Int32Type).ok_or_else(bad)?),
        13 => w.u32(p!(UInt32Type).ok_or_else(bad)?),
        16 => w.out.extend_from_slice(&p!(Int64Type).ok_or_else(bad)?.to_be_bytes()),
        17 => w.out.extend_from_slice(&p!(UInt64Type).ok_or_else(bad)?.to_be_bytes()),
        5 => w.u32(p!(Float32Type).ok_or_else(bad)?.to_bits()),
        8 => w.out.extend_from_slice(&p!(Float64Type).ok_or_else(bad)?.to_bits().to_be_bytes()),
        _ => return Err(bad()),
    }
    Ok(())
}
