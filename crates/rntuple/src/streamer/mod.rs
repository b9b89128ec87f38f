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
//! reason (the caller keeps the bytes). [`decode_array`] turns a streamer
//! field's column of bytes (what `RNTuple::read` returns for it) into an
//! Arrow array typed as the split field of the class would be;
//! [`RNTuple::streamer_infos`](crate::RNTuple::streamer_infos) gives the
//! file's infos.

mod arrow;
mod buffer;
mod decode;
mod encode;
mod info;
mod layout;
mod memo;

pub use arrow::{arrow_type, decode_array};
pub use decode::{decode, Value, MAX_DEPTH};
pub use encode::Encoder;
pub use info::{ClassInfo, Element, ElementKind, StreamerInfos};
pub use layout::{Class, Classes, Member, Ty, STRING_VERSION, VECTOR_CLASS_VERSION, VECTOR_VERSION};
#[cfg(test)]
pub(crate) use memo::STREAMED;
pub use memo::{Encoded, Entries, Streamed};

#[cfg(test)]
mod tests;
