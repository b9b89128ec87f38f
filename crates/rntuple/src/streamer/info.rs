//! The streamer infos of a file: the ROOT-serialised `TList` of
//! `TStreamerInfo` that ROOT keeps in the footer's extra type information
//! (content id 0, spec "Extra type information") for the classes its
//! streamer fields use. Only what decoding needs is kept: per class its
//! version, checksum and the elements (members and bases) in stream order.

use std::collections::HashMap;

use super::buffer::{Buf, Fail, Mark, BYTE_COUNT_MASK, NEW_CLASS_TAG};

/// Most objects in a list, elements in a class (bounds hostile counts).
const MAX_ITEMS: i32 = 100_000;

/// One member or base of a class, as `TStreamerElement` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub name: String,
    /// `TStreamerElement::fType` (`TVirtualStreamerInfo::EReadWrite`).
    pub type_code: i32,
    /// Length of a C array (0: not an array).
    pub array_length: i32,
    pub type_name: String,
    pub kind: ElementKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ElementKind {
    /// `TStreamerBase`: a base class (the element's name is its class).
    Base,
    /// `TStreamerBasicType`: a fundamental type or a C array of one.
    Basic,
    /// `TStreamerSTLstring`: a `std::string`.
    String,
    /// `TStreamerSTL`: an STL container (`fSTLtype`, `fCtype`).
    Stl { stl_type: i32, ctype: i32 },
    /// `TStreamerObject`, `TStreamerObjectAny`: a class member.
    Object,
    /// Anything else (pointers, TString, ...): named by its streamer class.
    Other(String),
}

/// One class's `TStreamerInfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassInfo {
    pub name: String,
    pub version: i32,
    pub checksum: u32,
    pub elements: Vec<Element>,
}

/// The streamer infos of a file, by class name (several versions possible).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamerInfos {
    pub classes: HashMap<String, Vec<ClassInfo>>,
}

impl StreamerInfos {
    /// Parses a `TList` of `TStreamerInfo` as `TBufferFile` writes it
    /// (`WriteObjectAny` of the list). Objects of other classes in the list
    /// (schema evolution rules) are skipped by their byte counts.
    pub fn parse(bytes: &[u8]) -> Result<Self, Fail> {
        Self::parse_buf(Buf::new(bytes))
    }

    fn parse_buf(mut b: Buf<'_>) -> Result<Self, Fail> {
        Ok(Self::of(list_object(&mut b)?))
    }

    /// The infos of `spans` ([`list_spans`]), by class.
    fn of(spans: Vec<(ClassInfo, usize, usize)>) -> Self {
        let mut infos = StreamerInfos::default();
        for (info, ..) in spans {
            infos.classes.entry(info.name.clone()).or_default().push(info);
        }
        infos
    }

    /// The `TList` of `TStreamerInfo` that is the payload of a file's
    /// `StreamerInfo` key (`fSeekInfo`; the list itself, not a pointer to
    /// it), whose class tags count from the start of the key: `key_len`
    /// bytes before the payload.
    pub fn parse_key_payload(payload: &[u8], key_len: usize) -> Result<Self, Fail> {
        let mut shifted = vec![0u8; key_len];
        shifted.extend_from_slice(payload);
        let mut b = Buf::new(&shifted);
        b.seek(key_len, "streamer info record")?;
        Ok(Self::of(list_spans(&mut b, None)?))
    }

    /// The info of `class`: of `version` if given and known, of `checksum`
    /// if given, else the only or the highest version.
    pub fn get(&self, class: &str, version: Option<i32>, checksum: Option<u32>) -> Option<&ClassInfo> {
        let all = self.classes.get(class)?;
        if let Some(c) = checksum {
            return all.iter().find(|i| i.checksum == c);
        }
        if let Some(v) = version {
            if let Some(i) = all.iter().find(|i| i.version == v) {
                return Some(i);
            }
        }
        all.iter().max_by_key(|i| i.version)
    }
}

/// One class's `TStreamerInfo` taken out of a list on its own, as a file's
/// streamer-info record lists it ([`StreamerInfos::record_objects`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordObject {
    pub info: ClassInfo,
    /// The object as `WriteObjectAny` streams it, every class tag written
    /// in full, then the list's option string: bytes that can be placed
    /// anywhere in a list
    /// ([`rntuple_container::write::FileWriter::add_class_streamer_info`]).
    pub bytes: Vec<u8>,
}

impl StreamerInfos {
    /// Each `TStreamerInfo` of a `TList` as [`StreamerInfos::parse`] reads
    /// it (the footer's extra type information), taken out on its own: the
    /// references to class tags named earlier in the list become the names
    /// themselves and the byte counts around them grow to match. Each
    /// object is read back on its own and must give the same class info
    /// (else the list is refused). This is how a merged file lists, in its
    /// streamer-info record, the classes of the streamer fields it copies.
    pub fn record_objects(list: &[u8]) -> Result<Vec<RecordObject>, Fail> {
        let mut b = Buf::recording(list);
        let spans = list_object(&mut b)?;
        let marks = b.marks();
        spans
            .into_iter()
            .map(|(info, start, end)| {
                let bytes = standalone(list, marks, start, end);
                let mut again = Buf::new(&bytes);
                let back = match again.object_header("re-placed streamer info")? {
                    Some((class, obj_end)) if class == "TStreamerInfo" => {
                        let back = streamer_info(&mut again)?;
                        again.seek(obj_end, "re-placed streamer info")?;
                        again.tstring("TList option")?;
                        back
                    }
                    _ => return Err(format!("class {}: its info does not read back on its own", info.name)),
                };
                if back != info || again.remaining() != 0 {
                    return Err(format!("class {}: its info reads back otherwise on its own", info.name));
                }
                Ok(RecordObject { info, bytes })
            })
            .collect()
    }
}

/// The `TStreamerInfo` objects of a `TList` streamed by `WriteObjectAny`
/// ([`list_spans`]); none for a null pointer.
fn list_object(b: &mut Buf<'_>) -> Result<Vec<(ClassInfo, usize, usize)>, Fail> {
    let Some((class, end)) = b.object_header("streamer info list")? else {
        return Ok(Vec::new());
    };
    if class != "TList" {
        return Err(format!("the streamer info record holds a {class}, not a TList"));
    }
    list_spans(b, Some(end))
}

/// The `TStreamerInfo` objects of a `TList` (`TList::Streamer`: version,
/// `TObject`, name, objects each followed by its option string) ending at
/// `end`, each with where it starts and where its option string ends.
/// Objects of other classes (schema evolution rules) are skipped by their
/// byte counts.
fn list_spans(b: &mut Buf<'_>, end: Option<usize>) -> Result<Vec<(ClassInfo, usize, usize)>, Fail> {
    let (counted_end, ..) = b.version("TList")?;
    tobject(b)?;
    b.tstring("TList name")?;
    let n = b.i32("TList size")?;
    if !(0..=MAX_ITEMS).contains(&n) {
        return Err(format!("the streamer info list claims {n} objects"));
    }
    let mut spans = Vec::new();
    for i in 0..n {
        let what = format!("streamer info list object {i}");
        let start = b.pos();
        let mut info = None;
        if let Some((class, obj_end)) = b.object_header(&what)? {
            if class == "TStreamerInfo" {
                info = Some(streamer_info(b).map_err(|e| format!("{what} (TStreamerInfo): {e}"))?);
            }
            b.seek(obj_end, &what)?;
        }
        b.tstring("TList option")?;
        if let Some(info) = info {
            spans.push((info, start, b.pos()));
        }
    }
    if let Some(end) = end.or(counted_end) {
        b.seek(end, "streamer info list")?;
    }
    Ok(spans)
}

/// `data[start..end]` with every class-tag reference in it written as the
/// class name (`kNewClassTag`, the name, a zero byte) and the byte counts
/// in it grown by the bytes so added inside them.
fn standalone(data: &[u8], marks: &[Mark], start: usize, end: usize) -> Vec<u8> {
    let span = start..end;
    let mut grown: Vec<(usize, &str)> = marks
        .iter()
        .filter_map(|m| match m {
            Mark::Tag { at, class, new: false } if span.contains(at) => Some((*at, class.as_str())),
            _ => None,
        })
        .collect();
    grown.sort_unstable();
    let added = |a: usize, b: usize| -> usize {
        grown.iter().filter(|(at, _)| (a..b).contains(at)).map(|(_, c)| c.len() + 1).sum()
    };
    let mut out = Vec::with_capacity(end - start + added(start, end));
    let mut pos = start;
    for (at, class) in &grown {
        out.extend_from_slice(&data[pos..*at]);
        out.extend_from_slice(&NEW_CLASS_TAG.to_be_bytes());
        out.extend_from_slice(class.as_bytes());
        out.push(0);
        pos = at + 4;
    }
    out.extend_from_slice(&data[pos..end]);
    for m in marks {
        let Mark::Count { at } = *m else { continue };
        if !span.contains(&at) {
            continue;
        }
        let word = u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        let n = (word & !BYTE_COUNT_MASK) as usize;
        let new_n = n + added(at + 4, at + 4 + n);
        let to = at - start + added(start, at);
        // Class names are at most 4096 bytes and objects within the list's
        // bounds, so the count stays below the mask.
        let new_word = (new_n as u32) | BYTE_COUNT_MASK;
        out[to..to + 4].copy_from_slice(&new_word.to_be_bytes());
    }
    out
}

/// `TObject::Streamer`: version, unique id, bits (and a process id when
/// the object is referenced, bit 4).
fn tobject(b: &mut Buf<'_>) -> Result<(), Fail> {
    b.version("TObject")?;
    b.u32("TObject unique id")?;
    let bits = b.u32("TObject bits")?;
    if bits & (1 << 4) != 0 {
        b.u16("TObject process id")?;
    }
    Ok(())
}

/// `TNamed::Streamer`: returns (name, title).
fn tnamed(b: &mut Buf<'_>) -> Result<(String, String), Fail> {
    let (end, _, _) = b.version("TNamed")?;
    tobject(b)?;
    let name = b.tstring("name")?;
    let title = b.tstring("title")?;
    if let Some(end) = end {
        b.seek(end, "TNamed")?;
    }
    Ok((name, title))
}

fn streamer_info(b: &mut Buf<'_>) -> Result<ClassInfo, Fail> {
    let (end, _, _) = b.version("TStreamerInfo")?;
    let (name, _) = tnamed(b)?;
    let checksum = b.u32("class checksum")?;
    let version = b.i32("class version")?;
    let mut elements = Vec::new();
    if let Some((class, arr_end)) = b.object_header("element array")? {
        if class != "TObjArray" {
            return Err(format!("class {name}: its elements are a {class}, not a TObjArray"));
        }
        b.version("TObjArray")?;
        tobject(b)?;
        b.tstring("TObjArray name")?;
        let n = b.i32("element count")?;
        b.i32("lower bound")?;
        if !(0..=MAX_ITEMS).contains(&n) {
            return Err(format!("class {name}: {n} elements"));
        }
        for i in 0..n {
            let what = format!("class {name}, element {i}");
            let Some((class, el_end)) = b.object_header(&what)? else { continue };
            elements.push(element(b, &class).map_err(|e| format!("{what} ({class}): {e}"))?);
            b.seek(el_end, &what)?;
        }
        b.seek(arr_end, "element array")?;
    }
    if let Some(end) = end {
        b.seek(end, "TStreamerInfo")?;
    }
    Ok(ClassInfo { name, version, checksum, elements })
}

fn element(b: &mut Buf<'_>, class: &str) -> Result<Element, Fail> {
    let (_outer_end, outer_version, _) = b.version(class)?;
    if class == "TStreamerSTLstring" {
        // Its streamer is TStreamerSTL's, one level further down.
        b.version("TStreamerSTL")?;
    }
    let (end, version, _) = b.version("TStreamerElement")?;
    let (name, _) = tnamed(b)?;
    let type_code = b.i32("fType")?;
    b.i32("fSize")?;
    let array_length = b.i32("fArrayLength")?;
    b.i32("fArrayDim")?;
    if version == 1 {
        let n = b.i32("fMaxIndex size")?;
        if !(0..=5).contains(&n) {
            return Err(format!("fMaxIndex of {n} dimensions"));
        }
        b.take(4 * n as usize, "fMaxIndex")?;
    } else {
        b.take(20, "fMaxIndex")?;
    }
    let type_name = b.tstring("fTypeName")?;
    if let Some(end) = end {
        b.seek(end, "TStreamerElement")?;
    }
    let kind = match class {
        "TStreamerBase" => {
            if outer_version > 2 {
                b.i32("base version")?;
            }
            ElementKind::Base
        }
        "TStreamerBasicType" => ElementKind::Basic,
        "TStreamerSTLstring" => ElementKind::String,
        "TStreamerSTL" if type_code == 365 => ElementKind::String,
        "TStreamerSTL" => ElementKind::Stl { stl_type: b.i32("fSTLtype")?, ctype: b.i32("fCtype")? },
        "TStreamerObject" | "TStreamerObjectAny" => ElementKind::Object,
        other => ElementKind::Other(other.to_string()),
    };
    Ok(Element { name, type_code, array_length, type_name, kind })
}
