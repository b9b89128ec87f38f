//! The classes a streamer field is written with: their members in stream
//! order, versions and ROOT checksums ([`Classes`]), and the `TList` of
//! `TStreamerInfo` that ROOT needs in the footer to read them
//! ([`Classes::streamer_info_list`], spec "Extra type information", content
//! id 0). The byte layout is the one [`super::StreamerInfos::parse`] reads
//! (documented in docs/format-notes.md, "Streamer fields"); the element
//! sizes are those of the x86-64 ABI ROOT runs on.

use std::collections::HashMap;

/// A member's type, as far as the writer streams it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// A fundamental type: `EReadWrite` code (`basic_code`) and the name
    /// ROOT gives it in streamer infos (`float`, `int`, `Long64_t`, ...).
    Basic { code: i32, name: &'static str },
    /// `std::string`.
    String,
    /// `std::vector<T>`.
    Vector(Box<Ty>),
    /// A class, by name (its layout in [`Classes`]).
    Class(String),
}

impl Ty {
    /// The fundamental type of an Arrow-compatible C++ type name.
    pub fn basic(cpp: &str) -> Option<Ty> {
        let (code, name) = match cpp {
            "bool" => (18, "bool"),
            "char" | "std::int8_t" => (1, "char"),
            "std::uint8_t" | "unsigned char" | "std::byte" => (11, "unsigned char"),
            "std::int16_t" | "short" => (2, "short"),
            "std::uint16_t" | "unsigned short" => (12, "unsigned short"),
            "std::int32_t" | "int" => (3, "int"),
            "std::uint32_t" | "unsigned int" => (13, "unsigned int"),
            "std::int64_t" | "long long" => (16, "Long64_t"),
            "std::uint64_t" | "unsigned long long" => (17, "ULong64_t"),
            "float" => (5, "float"),
            "double" => (8, "double"),
            _ => return None,
        };
        Some(Ty::Basic { code, name })
    }

    /// The type name ROOT's streamer infos and checksums spell (STL
    /// containers without `std::` and default arguments).
    pub fn root_name(&self) -> String {
        match self {
            Ty::Basic { name, .. } => name.to_string(),
            Ty::String => "string".into(),
            Ty::Vector(item) => {
                let inner = item.root_name();
                // `vector<vector<float> >`: ROOT keeps a space between closing brackets.
                let sep = if inner.ends_with('>') { " " } else { "" };
                format!("vector<{inner}{sep}>")
            }
            Ty::Class(c) => c.clone(),
        }
    }

    fn size_align(&self, classes: &Classes) -> (u32, u32) {
        match self {
            Ty::Basic { code, .. } => {
                let s = match code {
                    1 | 11 | 18 => 1,
                    2 | 12 => 2,
                    3 | 5 | 13 => 4,
                    _ => 8,
                };
                (s, s)
            }
            Ty::String => (32, 8),
            Ty::Vector(_) => (24, 8),
            Ty::Class(c) => classes.size_align(c),
        }
    }
}

/// One member (or base class: `base`, named by its class) of a class.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub name: String,
    pub ty: Ty,
    pub base: bool,
}

/// A class as the writer streams it.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    pub name: String,
    /// Its `ClassDef` version; -1 for a class without `ClassDef` (streamed
    /// with version 0 and its checksum, as `TBufferFile` does for such
    /// "foreign" classes; its streamer info has version 1).
    pub version: i32,
    pub members: Vec<Member>,
    /// ROOT's checksum (`TClass::GetCheckSum`), computed by [`Classes::add`]
    /// unless given.
    pub checksum: u32,
}

/// The classes of a streamer field, in the order ROOT lists their infos
/// (a class before the classes its members and bases reach).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classes {
    pub order: Vec<String>,
    pub by_name: HashMap<String, Class>,
}

/// The version ROOT 6.40 writes before a `std::vector` member's size (the
/// version of its STL streaming, not that of the class).
pub const VECTOR_VERSION: u16 = 10;
/// The class version of a `std::vector<T>` (ROOT 6.40): the type version of
/// a streamer field of that type.
pub const VECTOR_CLASS_VERSION: u32 = 6;
/// The version ROOT 6.40 writes before a `std::string` member.
pub const STRING_VERSION: u16 = 10;

/// `id * 3 + c` over the bytes of `s` (`TClass::GetCheckSum`'s step; the
/// characters are C `char`s, signed).
fn mix(mut id: u32, s: &str) -> u32 {
    for &b in s.as_bytes() {
        id = id.wrapping_mul(3).wrapping_add(b as i8 as i32 as u32);
    }
    id
}

impl Classes {
    /// Adds `class` (its members' classes must be added first, bases
    /// included); its checksum is computed as `TClass::GetCheckSum` does:
    /// the class name, each base's name and checksum, each member's name
    /// and type name.
    pub fn add(&mut self, mut class: Class, checksum: Option<u32>) {
        class.checksum = checksum.unwrap_or_else(|| self.checksum_of(&class));
        if !self.by_name.contains_key(&class.name) {
            self.order.push(class.name.clone());
        }
        self.by_name.insert(class.name.clone(), class);
    }

    /// Adds the classes of `other` not known yet, in its order. A class
    /// known with another layout (members, version or checksum) is refused,
    /// named: a file holds one layout per class name and version, as one
    /// ROOT dictionary does, and the entries of both would be read with one.
    pub fn absorb(&mut self, other: &Classes) -> Result<(), String> {
        for name in &other.order {
            let c = &other.by_name[name];
            match self.by_name.get(name) {
                Some(known) if known != c => {
                    let members = |c: &Class| c.members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ");
                    return Err(format!(
                        "class {name} is declared twice with different layouts (version {}, members {} against \
                         version {}, members {})",
                        known.version,
                        members(known),
                        c.version,
                        members(c)
                    ));
                }
                Some(_) => {}
                None => {
                    self.order.push(name.clone());
                    self.by_name.insert(name.clone(), c.clone());
                }
            }
        }
        Ok(())
    }

    /// Puts `first` first (the top-level class of a field).
    pub fn bring_first(&mut self, first: &str) {
        if let Some(i) = self.order.iter().position(|n| n == first) {
            let n = self.order.remove(i);
            self.order.insert(0, n);
        }
    }

    fn checksum_of(&self, class: &Class) -> u32 {
        let mut id = mix(0, &class.name);
        for m in class.members.iter().filter(|m| m.base) {
            id = mix(id, &m.name);
            if let Some(b) = self.by_name.get(&m.name) {
                id = id.wrapping_mul(3).wrapping_add(b.checksum);
            }
        }
        for m in class.members.iter().filter(|m| !m.base) {
            id = mix(id, &m.name);
            id = mix(id, &m.ty.root_name());
        }
        id
    }

    /// The checksum of `std::vector<item>`'s `TClass`: its name only.
    pub fn vector_checksum(item: &Ty) -> u32 {
        mix(0, &Ty::Vector(Box::new(item.clone())).root_name())
    }

    fn size_align(&self, name: &str) -> (u32, u32) {
        let Some(c) = self.by_name.get(name) else { return (0, 1) };
        let (mut size, mut align) = (0u32, 1u32);
        for m in &c.members {
            let (s, a) = m.ty.size_align(self);
            size = size.div_ceil(a) * a + s;
            align = align.max(a);
        }
        if size == 0 {
            size = 1;
        }
        (size.div_ceil(align) * align, align)
    }

    /// The `TList` of `TStreamerInfo` of all classes, as `TBufferFile`
    /// writes it with `WriteObjectAny` (content of the footer's extra type
    /// information record, content id 0).
    pub fn streamer_info_list(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.object("TList", |w| {
            w.version_counted(5, |w| {
                w.tobject(0);
                w.tstring("");
                w.i32(self.order.len() as i32);
                for name in &self.order {
                    let c = &self.by_name[name];
                    w.object("TStreamerInfo", |w| self.streamer_info(w, c));
                    w.tstring("");
                }
            })
        });
        w.out
    }

    /// Each class's `TStreamerInfo` on its own, as a `TList` of the file's
    /// streamer-info record holds it (the object, then the option string),
    /// with every class tag written in full, so that the bytes can be placed
    /// anywhere in that list
    /// ([`rntuple_container::write::FileWriter::add_class_streamer_info`]).
    pub fn streamer_info_objects(&self) -> Vec<Vec<u8>> {
        self.order
            .iter()
            .map(|name| {
                let mut w = Writer { standalone: true, ..Writer::default() };
                w.object("TStreamerInfo", |w| self.streamer_info(w, &self.by_name[name]));
                w.tstring("");
                w.out
            })
            .collect()
    }

    fn streamer_info(&self, w: &mut Writer, c: &Class) {
        w.version_counted(9, |w| {
            w.tnamed(&c.name, 0x0001_0000);
            w.u32(c.checksum);
            w.i32(if c.version < 0 { 1 } else { c.version });
            w.object("TObjArray", |w| {
                w.version_counted(3, |w| {
                    w.tobject(0);
                    w.tstring("");
                    w.i32(c.members.len() as i32);
                    w.i32(0);
                    for m in &c.members {
                        self.element(w, m);
                    }
                })
            });
        });
    }

    fn element(&self, w: &mut Writer, m: &Member) {
        let (size, _) = m.ty.size_align(self);
        // (fType, fSize, fMaxIndex[0], fTypeName)
        let common = |w: &mut Writer, ty: i32, size: u32, max0: u32, type_name: &str| {
            w.version_counted(4, |w| {
                w.tnamed(&m.name, 0);
                w.i32(ty);
                w.u32(size);
                w.i32(0);
                w.i32(0);
                w.u32(max0);
                for _ in 0..4 {
                    w.i32(0);
                }
                w.tstring(type_name);
            })
        };
        if m.base {
            let (version, checksum) = match self.by_name.get(&m.name) {
                Some(b) => (b.version, b.checksum),
                None => (-1, 0),
            };
            w.object("TStreamerBase", |w| {
                w.version_counted(3, |w| {
                    common(w, 0, 0, checksum, "BASE");
                    w.i32(version);
                })
            });
            return;
        }
        match &m.ty {
            Ty::Basic { code, name } => w.object("TStreamerBasicType", |w| {
                w.version_counted(2, |w| common(w, *code, size, 0, name));
            }),
            Ty::String => w.object("TStreamerSTLstring", |w| {
                w.version_counted(2, |w| {
                    w.version_counted(3, |w| {
                        // ROOT 6.40 stores a std::string member as kSTL (500)
                        // with STL type and content type kSTLstring (365).
                        common(w, 500, size, 0, "string");
                        w.i32(365);
                        w.i32(365);
                    })
                })
            }),
            Ty::Vector(item) => {
                let ctype = match item.as_ref() {
                    Ty::Basic { code, .. } => *code,
                    Ty::String => 365,
                    _ => 61,
                };
                w.object("TStreamerSTL", |w| {
                    w.version_counted(3, |w| {
                        common(w, 500, size, 0, &m.ty.root_name());
                        w.i32(1);
                        w.i32(ctype);
                    })
                })
            }
            Ty::Class(name) => w.object("TStreamerObjectAny", |w| {
                w.version_counted(2, |w| common(w, 62, size, 0, name));
            }),
        }
    }
}

/// A big-endian `TBufferFile` writer: byte counts, versions, class tags.
#[derive(Default)]
pub(crate) struct Writer {
    pub out: Vec<u8>,
    /// Positions (+ 2) of the class tags written, by class name.
    tags: HashMap<&'static str, u32>,
    /// Write every class tag in full, never a reference to an earlier one.
    standalone: bool,
}

/// The byte-count flag of a count word.
const BYTE_COUNT: u32 = 0x4000_0000;

impl Writer {
    pub fn with(out: Vec<u8>) -> Self {
        Writer { out, ..Writer::default() }
    }
    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
    pub fn tstring(&mut self, s: &str) {
        let b = s.as_bytes();
        if b.len() < 255 {
            self.u8(b.len() as u8);
        } else {
            self.u8(255);
            self.u32(b.len() as u32);
        }
        self.out.extend_from_slice(b);
    }

    /// A byte count word (filled in afterwards) around what `body` writes.
    pub fn counted(&mut self, body: impl FnOnce(&mut Self)) {
        let at = self.out.len();
        self.u32(0);
        body(self);
        let n = (self.out.len() - at - 4) as u32;
        self.out[at..at + 4].copy_from_slice(&(n | BYTE_COUNT).to_be_bytes());
    }

    /// A byte count, the version, then `body`.
    pub fn version_counted(&mut self, version: u16, body: impl FnOnce(&mut Self)) {
        self.counted(|w| {
            w.u16(version);
            body(w)
        })
    }

    /// `WriteObjectAny`: byte count, class tag (the name the first time, a
    /// reference to that tag after), the object.
    fn object(&mut self, class: &'static str, body: impl FnOnce(&mut Self)) {
        self.counted(|w| {
            match w.tags.get(class) {
                Some(&t) if !w.standalone => w.u32(0x8000_0000 | t),
                _ => {
                    let at = w.out.len() as u32;
                    w.tags.insert(class, at + 2);
                    w.u32(0xFFFF_FFFF);
                    w.out.extend_from_slice(class.as_bytes());
                    w.u8(0);
                }
            }
            body(w)
        })
    }

    fn tobject(&mut self, bits: u32) {
        self.u16(1);
        self.u32(0);
        self.u32(bits);
    }

    fn tnamed(&mut self, name: &str, bits: u32) {
        self.version_counted(1, |w| {
            w.tobject(bits);
            w.tstring(name);
            w.tstring("");
        })
    }
}
