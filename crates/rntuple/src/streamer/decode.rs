//! Decoding one streamed object (the bytes of one entry of a streamer
//! field) with the file's streamer infos into a [`Value`] tree whose shape
//! is the one a split field of the class has: a class is a record of its
//! members in stream order, a base class the member `:_N` (N counting
//! bases, as ROOT names base subfields), a C array and an STL vector a
//! list, a `std::string` a string.
//!
//! Layouts (`TBufferFile`, big-endian), as ROOT 6.40 writes them for
//! `RStreamerField` (see docs/format-notes.md): a class opens with a byte
//! count and its version (version 0 — a class without `ClassDef` — is
//! followed by its checksum); a `std::string` member with a byte count and
//! version, then the length and bytes; an STL member with a byte count and
//! version, then the size and the items; with the version's bit 0x4000
//! ("member-wise") the items of a vector of a class are written member by
//! member (the class version, then each member's values for all items); a
//! top-level `std::vector<T>` has no header, only the size and the items.
//!
//! Decoding is bounded: nesting depth [`MAX_DEPTH`], no count larger than
//! the bytes left could hold, and every byte count checked against the
//! bytes there are.

use super::buffer::{Buf, Fail};
use super::info::{ClassInfo, ElementKind, StreamerInfos};

/// Deepest nesting of classes and containers decoded.
pub const MAX_DEPTH: usize = 64;
/// The member-wise flag of an STL version.
const MEMBER_WISE: u16 = 0x4000;

/// One decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    UInt(u64),
    F32(f32),
    F64(f64),
    Str(String),
    List(Vec<Value>),
    Record(Vec<(String, Value)>),
}

impl Value {
    /// As JSON (records keep their member order), for comparisons.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::UInt(u) => J::from(*u),
            Value::F32(f) => J::from(f64::from(*f)),
            Value::F64(f) => J::from(*f),
            Value::Str(s) => J::String(s.clone()),
            Value::List(v) => J::Array(v.iter().map(Value::to_json).collect()),
            Value::Record(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }
}

/// Decodes the object of C++ type `type_name` in `bytes` (one entry of a
/// streamer field). Every byte must be used.
pub fn decode(infos: &StreamerInfos, type_name: &str, bytes: &[u8]) -> Result<Value, Fail> {
    let mut d = Decoder { infos, b: Buf::new(bytes) };
    let v = match vector_item(type_name) {
        Some(item) => d.vector_items(item, 0)?,
        None => d.class(type_name, 0)?,
    };
    if d.b.remaining() != 0 {
        return Err(format!("{} bytes left after the {type_name}", d.b.remaining()));
    }
    Ok(v)
}

/// The template name (without `std::`) and arguments of `type_name`, split
/// at the top-level commas.
fn template_args(type_name: &str) -> Option<(&str, Vec<&str>)> {
    let t = type_name.trim();
    let open = t.find('<')?;
    let inner = t.strip_suffix('>')?.get(open + 1..)?;
    let head = t[..open].trim();
    let head = head.strip_prefix("std::").unwrap_or(head);
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[start..].trim());
    Some((head, args))
}

/// `T` of the sequence containers ROOT streams as a size and the items:
/// `std::vector<T>`, `std::list`, `std::deque`, the (unordered, multi)
/// sets.
pub(crate) fn vector_item(type_name: &str) -> Option<&str> {
    let (head, args) = template_args(type_name)?;
    let seq = matches!(head, "vector" | "list" | "deque" | "set" | "multiset" | "unordered_set" | "unordered_multiset");
    (seq && args.len() == 1).then(|| args[0])
}

/// `(K, V)` of the (unordered, multi) maps.
pub(crate) fn map_items(type_name: &str) -> Option<(&str, &str)> {
    let (head, args) = template_args(type_name)?;
    let map = matches!(head, "map" | "multimap" | "unordered_map" | "unordered_multimap");
    (map && args.len() == 2).then(|| (args[0], args[1]))
}

/// Size in bytes and reader of a fundamental type code (`EReadWrite`).
fn basic_size(code: i32) -> Option<usize> {
    Some(match code {
        1 | 11 | 18 => 1,
        2 | 12 => 2,
        3 | 5 | 6 | 9 | 13 | 15 => 4,
        4 | 8 | 14 | 16 | 17 => 8,
        _ => return None,
    })
}

/// The type code of a fundamental type name, for vector items.
pub(crate) fn basic_code(type_name: &str) -> Option<i32> {
    Some(match type_name {
        "char" | "Char_t" | "std::int8_t" | "int8_t" => 1,
        "short" | "Short_t" | "std::int16_t" | "int16_t" => 2,
        "int" | "Int_t" | "std::int32_t" | "int32_t" => 3,
        "long" | "Long_t" => 4,
        "float" | "Float_t" => 5,
        "double" | "Double_t" => 8,
        "Double32_t" => 9,
        "unsigned char" | "UChar_t" | "std::uint8_t" | "uint8_t" => 11,
        "unsigned short" | "UShort_t" | "std::uint16_t" | "uint16_t" => 12,
        "unsigned int" | "UInt_t" | "std::uint32_t" | "uint32_t" => 13,
        "unsigned long" | "ULong_t" => 14,
        "long long" | "Long64_t" | "std::int64_t" | "int64_t" => 16,
        "unsigned long long" | "ULong64_t" | "std::uint64_t" | "uint64_t" => 17,
        "bool" | "Bool_t" => 18,
        _ => return None,
    })
}

pub(crate) fn is_string(type_name: &str) -> bool {
    matches!(type_name.trim(), "string" | "std::string")
}

struct Decoder<'a, 'b> {
    infos: &'a StreamerInfos,
    b: Buf<'b>,
}

impl<'a> Decoder<'a, '_> {
    fn basic(&mut self, code: i32, what: &str) -> Result<Value, Fail> {
        let b = &mut self.b;
        Ok(match code {
            1 => Value::Int(i64::from(b.u8(what)? as i8)),
            2 => Value::Int(i64::from(b.u16(what)? as i16)),
            3 | 6 => Value::Int(i64::from(b.i32(what)?)),
            4 | 16 => Value::Int(b.u64(what)? as i64),
            5 | 9 => Value::F32(f32::from_bits(b.u32(what)?)),
            8 => Value::F64(f64::from_bits(b.u64(what)?)),
            11 => Value::UInt(u64::from(b.u8(what)?)),
            12 => Value::UInt(u64::from(b.u16(what)?)),
            13 | 15 => Value::UInt(u64::from(b.u32(what)?)),
            14 | 17 => Value::UInt(b.u64(what)?),
            18 => Value::Bool(b.u8(what)? != 0),
            _ => return Err(format!("{what}: fundamental type code {code} is not decoded")),
        })
    }

    /// `n` items need at least `n * size` bytes: refuses counts the bytes
    /// left cannot hold (before allocating for them).
    fn count(&mut self, what: &str, size: usize) -> Result<usize, Fail> {
        let at = self.b.pos();
        let n = self.b.i32(what)?;
        let n = usize::try_from(n).map_err(|_| format!("{what} at byte {at}: negative count {n}"))?;
        if n.saturating_mul(size.max(1)) > self.b.remaining() {
            return Err(format!("{what} at byte {at}: {n} items cannot fit in the {} bytes left", self.b.remaining()));
        }
        Ok(n)
    }

    fn info(&self, class: &str, version: u16, checksum: Option<u32>) -> Result<&'a ClassInfo, Fail> {
        let v = if checksum.is_some() { None } else { Some(i32::from(version)) };
        self.infos.get(class, v, checksum).ok_or_else(|| match self.infos.classes.contains_key(class) {
            true => format!("class {class}: no streamer info of version {version} / checksum {checksum:?}"),
            false => format!("class {class} is missing from the streamer info"),
        })
    }

    fn depth(depth: usize, class: &str) -> Result<(), Fail> {
        if depth > MAX_DEPTH {
            return Err(format!("class {class}: nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    /// A class with its version header.
    fn class(&mut self, class: &str, depth: usize) -> Result<Value, Fail> {
        Self::depth(depth, class)?;
        let (end, version, checksum) = self.b.counted_version(class)?;
        let info = self.info(class, version, checksum)?;
        let v = self.members(info, depth)?;
        if let Some(end) = end {
            if self.b.pos() != end {
                return Err(format!(
                    "class {class}: its byte count says it ends at byte {end}, its members end at {}",
                    self.b.pos()
                ));
            }
        }
        Ok(v)
    }

    fn members(&mut self, info: &ClassInfo, depth: usize) -> Result<Value, Fail> {
        let mut out = Vec::with_capacity(info.elements.len());
        let mut bases = 0;
        for e in &info.elements {
            let what = format!("{}::{}", info.name, e.name);
            let v = match &e.kind {
                ElementKind::Base => {
                    let v = if e.name == "TObject" { self.tobject(&what)? } else { self.class(&e.name, depth + 1)? };
                    out.push((format!(":_{bases}"), v));
                    bases += 1;
                    continue;
                }
                ElementKind::Basic if (1..20).contains(&e.type_code) => self.basic(e.type_code, &what)?,
                ElementKind::Basic if (21..40).contains(&e.type_code) => {
                    let n = usize::try_from(e.array_length).map_err(|_| format!("{what}: array length"))?;
                    let size = basic_size(e.type_code - 20).unwrap_or(1);
                    if n.saturating_mul(size) > self.b.remaining() {
                        return Err(format!("{what}: a C array of {n} items cannot fit in the bytes left"));
                    }
                    List((0..n).map(|_| self.basic(e.type_code - 20, &what)).collect::<Result<_, _>>()?)
                }
                ElementKind::String => {
                    let (end, _, _) = self.b.counted_version(&what)?;
                    let s = Value::Str(self.b.tstring(&what)?);
                    self.at_end(end, &what)?;
                    s
                }
                ElementKind::Object => self.class(&e.type_name, depth + 1)?,
                // `TStreamerString` (kTString): the length and the bytes.
                ElementKind::Other(c) if c == "TStreamerString" || e.type_code == 65 => {
                    Value::Str(self.b.tstring(&what)?)
                }
                ElementKind::Stl { .. } if map_items(&e.type_name).is_some() => {
                    let (k, v) = map_items(&e.type_name).unwrap_or_default();
                    let (k, v) = (k.to_string(), v.to_string());
                    let (end, version, _) = self.b.counted_version(&what)?;
                    let m = self.map(&what, version, &k, &v, depth + 1)?;
                    self.at_end(end, &what)?;
                    m
                }
                ElementKind::Stl { .. } => {
                    let item = vector_item(&e.type_name)
                        .ok_or_else(|| format!("{what}: container type '{}' is not decoded", e.type_name))?
                        .to_string();
                    let (end, version, _) = self.b.counted_version(&what)?;
                    let v = if version & MEMBER_WISE != 0 {
                        self.member_wise(&item, depth + 1)?
                    } else {
                        self.vector_items(&item, depth + 1)?
                    };
                    self.at_end(end, &what)?;
                    v
                }
                _ => {
                    return Err(format!(
                        "{what}: member of type '{}' (streamer element type {}) is not decoded",
                        e.type_name, e.type_code
                    ))
                }
            };
            out.push((e.name.clone(), v));
        }
        Ok(Value::Record(out))
    }

    /// A `TObject` base as `TObject::Streamer` writes it: a version without
    /// byte count, the unique id, the bits (and a process id when bit 4,
    /// kIsReferenced, is set); read as the split field `TObject` is, the
    /// record {fUniqueID, fBits}.
    fn tobject(&mut self, what: &str) -> Result<Value, Fail> {
        let what = format!("{what} (TObject)");
        self.b.u16(&what)?;
        let id = self.b.u32(&what)?;
        let bits = self.b.u32(&what)?;
        if bits & (1 << 4) != 0 {
            self.b.u16(&what)?;
        }
        Ok(Value::Record(vec![
            ("fUniqueID".into(), Value::UInt(u64::from(id))),
            ("fBits".into(), Value::UInt(u64::from(bits))),
        ]))
    }

    fn at_end(&mut self, end: Option<usize>, what: &str) -> Result<(), Fail> {
        match end {
            Some(end) if self.b.pos() != end => {
                Err(format!("{what}: its byte count says it ends at byte {end}, its content ends at {}", self.b.pos()))
            }
            _ => Ok(()),
        }
    }

    /// A map as ROOT 6.40 streams it inside a class (after its byte count
    /// and version, which carries the member-wise bit): the version (and
    /// checksum) of its `pair<K,V>`, the size, then all keys, then all
    /// values, each as a member of a member-wise vector (fundamentals as
    /// plain arrays, strings and containers under one byte count, classes
    /// one by one) — what `RStreamerField` wrote in
    /// `tests/data/streamer_gaps_root640.root`. (`TClass::Streamer` of the
    /// same object, with a dictionary of the map class itself, wrote a
    /// `std::map<int,float>` key and value item by item under the same
    /// version: such bytes would decode as wrong numbers of the right
    /// size; see docs/format-notes.md.)
    /// Returned as the split field reads: a list of records `{_0, _1}`.
    fn map(&mut self, what: &str, version: u16, k: &str, v: &str, depth: usize) -> Result<Value, Fail> {
        Self::depth(depth, what)?;
        if version & MEMBER_WISE == 0 {
            return Err(format!("{what}: a map streamed object-wise is not decoded"));
        }
        let pv = self.b.u16(what)?;
        if pv == 0 {
            self.b.u32(what)?;
        }
        let n = self.count(what, 1)?;
        if n == 0 {
            // Nothing follows, not even the members' headers.
            return Ok(List(Vec::new()));
        }
        let pair = |k: Value, v: Value| Value::Record(vec![("_0".into(), k), ("_1".into(), v)]);
        let keys = self.column(what, k, n, depth)?;
        let values = self.column(what, v, n, depth)?;
        Ok(List(keys.into_iter().zip(values).map(|(k, v)| pair(k, v)).collect()))
    }

    /// `n` values of type `t` written member-wise (see [`Self::map`]).
    fn column(&mut self, what: &str, t: &str, n: usize, depth: usize) -> Result<Vec<Value>, Fail> {
        if let Some(code) = basic_code(t) {
            if n.saturating_mul(basic_size(code).unwrap_or(1)) > self.b.remaining() {
                return Err(format!("{what}: {n} values cannot fit in the bytes left"));
            }
            return (0..n).map(|_| self.basic(code, what)).collect();
        }
        if is_string(t) {
            let (end, _, _) = self.b.counted_version(what)?;
            let v = (0..n).map(|_| self.b.tstring(what).map(Value::Str)).collect::<Result<_, _>>()?;
            self.at_end(end, what)?;
            return Ok(v);
        }
        if let Some(item) = vector_item(t) {
            let item = item.to_string();
            let (end, _, _) = self.b.counted_version(what)?;
            let v = (0..n).map(|_| self.vector_items(&item, depth + 1)).collect::<Result<_, _>>()?;
            self.at_end(end, what)?;
            return Ok(v);
        }
        if n.saturating_mul(6) > self.b.remaining() {
            return Err(format!("{what}: {n} objects cannot fit in the bytes left"));
        }
        (0..n).map(|_| self.class(t, depth + 1)).collect()
    }

    /// A vector's size and items, each item as itself (object-wise).
    fn vector_items(&mut self, item: &str, depth: usize) -> Result<Value, Fail> {
        Self::depth(depth, item)?;
        let what = format!("std::vector<{item}>");
        if let Some(code) = basic_code(item) {
            let n = self.count(&what, basic_size(code).unwrap_or(1))?;
            return Ok(List((0..n).map(|_| self.basic(code, &what)).collect::<Result<_, _>>()?));
        }
        if is_string(item) {
            let n = self.count(&what, 1)?;
            return Ok(List((0..n).map(|_| self.b.tstring(&what).map(Value::Str)).collect::<Result<_, _>>()?));
        }
        // A class item opens with its version header (at least 6 bytes).
        let n = self.count(&what, 6)?;
        Ok(List((0..n).map(|_| self.class(item, depth + 1)).collect::<Result<_, _>>()?))
    }

    /// A vector of a class written member-wise: the class version, the
    /// size, then each member's values for all items; returned as a list
    /// of records like the object-wise form.
    fn member_wise(&mut self, item: &str, depth: usize) -> Result<Value, Fail> {
        Self::depth(depth, item)?;
        let what = format!("std::vector<{item}> (member-wise)");
        let version = self.b.u16(&what)?;
        let checksum = if version == 0 { Some(self.b.u32(&what)?) } else { None };
        let info = self.info(item, version, checksum)?;
        let n = self.count(&what, 0)?;
        if n == 0 {
            // Nothing follows, not even the members' headers.
            return Ok(List(Vec::new()));
        }
        // (No capacity per item: n is bounded by the bytes, the elements by
        // the streamer info; their product is not.)
        let mut items: Vec<Vec<(String, Value)>> = vec![Vec::new(); n];
        for e in &info.elements {
            let what = format!("{}::{} (member-wise)", info.name, e.name);
            let column: Vec<Value> = match &e.kind {
                ElementKind::Basic if (1..20).contains(&e.type_code) => {
                    if n.saturating_mul(basic_size(e.type_code).unwrap_or(1)) > self.b.remaining() {
                        return Err(format!("{what}: {n} values cannot fit in the bytes left"));
                    }
                    (0..n).map(|_| self.basic(e.type_code, &what)).collect::<Result<_, _>>()?
                }
                ElementKind::String => {
                    let (end, _, _) = self.b.counted_version(&what)?;
                    let v = (0..n).map(|_| self.b.tstring(&what).map(Value::Str)).collect::<Result<_, _>>()?;
                    self.at_end(end, &what)?;
                    v
                }
                ElementKind::Stl { .. } if vector_item(&e.type_name).is_some() => {
                    let inner = vector_item(&e.type_name)
                        .ok_or_else(|| format!("{what}: container type '{}' is not decoded", e.type_name))?
                        .to_string();
                    let (end, _, _) = self.b.counted_version(&what)?;
                    let v = (0..n).map(|_| self.vector_items(&inner, depth + 1)).collect::<Result<_, _>>()?;
                    self.at_end(end, &what)?;
                    v
                }
                _ => {
                    return Err(format!(
                        "{what}: member of type '{}' (streamer element type {}) in a member-wise vector is not decoded",
                        e.type_name, e.type_code
                    ))
                }
            };
            for (item, v) in items.iter_mut().zip(column) {
                item.push((e.name.clone(), v));
            }
        }
        Ok(List(items.into_iter().map(Value::Record).collect()))
    }
}

#[allow(non_snake_case)]
fn List(v: Vec<Value>) -> Value {
    Value::List(v)
}
