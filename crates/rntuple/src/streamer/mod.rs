//! Streamer fields decoded (`ROOT::RStreamerField`, structural role 0x04):
//! each entry is one object streamed whole by ROOT's `TBufferFile` with
//! its class's streamer info, which ROOT keeps in the footer's extra type
//! information (spec "Extra type information", content id 0 "streamer
//! info"). [`StreamerInfos::parse`] reads that list, [`decode`] one entry
//! into a [`Value`] with the shape of the split field of the class.
//!
//! What is decoded: fundamental members and C arrays of them, `std::string`,
//! `std::vector` of fundamentals, strings and classes (object-wise and
//! member-wise), class members and base classes, classes with and without
//! `ClassDef`. Anything else is refused with the class, the member and the
//! reason (the caller keeps the bytes). Not yet wired into
//! `RNTuple::read`, which returns streamer fields as bytes.

mod buffer;
mod decode;
mod info;

pub use decode::{decode, Value, MAX_DEPTH};
pub use info::{ClassInfo, Element, ElementKind, StreamerInfos};

#[cfg(test)]
mod tests;
