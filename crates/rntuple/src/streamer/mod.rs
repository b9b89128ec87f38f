//! Streamer fields decoded (`ROOT::RStreamerField`, structural role 0x04):
//! each entry is one object streamed whole by ROOT's `TBufferFile` with
//! its class's streamer info, which ROOT keeps in the footer's extra type
//! information (spec "Extra type information", content id 0 "streamer
//! info"). [`StreamerInfos::parse`] reads that list, [`decode`] one entry
//! into a [`Value`] with the shape of the split field of the class.
//!
//! What is decoded: fundamental members and C arrays of them, `std::string`,
//! `std::vector` of fundamentals, strings and classes (object-wise and
//! member-wise), class members and base classes (`TObject` included),
//! classes with and without `ClassDef`. Anything else is refused with the class, the member and the
//! reason (the caller keeps the bytes). [`decode_entries`] turns a streamer
//! field's byte column into an Arrow array typed as the split field of the
//! class would be — the reader does so for every streamer field it
//! assembles, at any depth ([`crate::RNTuple::read_with_notes`] tells which
//! stayed bytes and why; [`decode_array`] does the same for a binary array);
//! [`RNTuple::streamer_infos`](crate::RNTuple::streamer_infos) gives the
//! file's infos.

mod arrow;
mod buffer;
mod decode;
mod encode;
mod info;
mod layout;
mod memo;

pub use arrow::{arrow_type, decode_array, decode_entries, decode_entries_charged};
pub use decode::{decode, Value, MAX_DEPTH};
pub use encode::Encoder;
pub use info::{ClassInfo, Element, ElementKind, RecordObject, StreamerInfos};
pub use layout::{Class, Classes, Member, Ty, STRING_VERSION, VECTOR_CLASS_VERSION, VECTOR_VERSION};
#[cfg(test)]
pub(crate) use memo::STREAMED;
pub use memo::{Encoded, Entries, Streamed};

/// The streamer infos stored in `desc` (extra type information of content
/// id 0, header and footer), merged; empty when there are none.
pub(crate) fn infos_of(desc: &crate::Descriptor) -> rntuple_format::Result<StreamerInfos> {
    let mut all = StreamerInfos::default();
    for (i, e) in desc.extra_type_info.iter().enumerate() {
        if e.content_id != rntuple_format::constants::EXTRA_TYPE_INFO_STREAMER_INFO || e.content.is_empty() {
            continue;
        }
        let infos = StreamerInfos::parse(&e.content).map_err(|why| {
            rntuple_format::Error::out_of_spec(
                why,
                rntuple_format::Location::new(format!("streamer info (extra type information {i})"), None),
            )
        })?;
        for (class, versions) in infos.classes {
            all.classes.entry(class).or_default().extend(versions);
        }
    }
    Ok(all)
}

#[cfg(test)]
mod tests;
