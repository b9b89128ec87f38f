//! Attribute sets: values that belong to ranges of an RNTuple's entries
//! (a run number for the entries of that run, a calibration tag, ...), as
//! ROOT 6.40 writes them (`RNTupleWriter::CreateAttributeSet`,
//! `RNTupleReader::OpenAttributeSet`, `RNTupleAttr*.hxx`).
//!
//! An attribute set is an RNTuple of its own in the same file: its anchor
//! is in a key no directory lists, found through the main RNTuple's footer
//! (spec "Linked Attribute Set Record Frame", [`AttributeSetLink`]). Its
//! schema, attribute schema version 1.0 (`RNTupleAttrUtils.hxx`), is fixed:
//!
//! ```text
//! _rangeStart  std::uint64_t   first main entry the attribute entry refers to
//! _rangeLen    std::uint64_t   number of main entries (0 is valid: an empty range)
//! _userData    untyped record  the user's fields
//! ```
//!
//! Reading ([`RNTuple::attribute_set`](crate::RNTuple::attribute_set)):
//! [`AttributeSet::values`] is an [`RNTuple`](crate::RNTuple) whose
//! top-level fields are the user's fields, read like any RNTuple's;
//! [`AttributeSet::ranges`] gives the main entry range of each attribute
//! entry; the `entries_*` methods select attribute entries by main entry as
//! ROOT's `RNTupleAttrSetReader::GetAttributes*` do.
//!
//! Writing ([`RNTupleWriter::create_attribute_set`](crate::RNTupleWriter::create_attribute_set),
//! [`RNTupleWriter::commit_attributes`](crate::RNTupleWriter::commit_attributes)):
//! attribute entries are checked when committed and held in memory until
//! the main RNTuple is closed; then each set is written as its own RNTuple
//! (same options, header name = set name) before the main footer, which
//! links them. ROOT rebuilds a set's user fields from their C++ type names,
//! so a struct field needs a class type (an override) that ROOT knows.

mod read;
mod write;

pub use read::{read_anchor, AttributeRange, AttributeSet};
pub use rntuple_format::model::AttributeSetLink;
pub(crate) use write::PendingSets;

/// Attribute schema version this implementation reads (major) and writes
/// (ROOT 6.40: `kSchemaVersionMajor`, `kSchemaVersionMinor`).
pub const SCHEMA_VERSION: (u16, u16) = (1, 0);

/// Names of the meta fields, in their order (`kMetaFieldNames`).
pub const RANGE_START: &str = "_rangeStart";
pub const RANGE_LEN: &str = "_rangeLen";
pub const USER_DATA: &str = "_userData";

/// Attribute set names starting with this are reserved (ROOT 6.40 refuses them).
pub const RESERVED_PREFIX: &str = "__";
