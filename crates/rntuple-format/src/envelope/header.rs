//! The header envelope, type 0x01 (RNTuple binary format 1.0, section
//! "Header Envelope"):
//!
//! ```text
//! envelope preamble (type 0x01, length)
//! feature flags (u64 words, continued while the sign bit is set)
//! String: name of the ntuple
//! String: description
//! String: writer identifier (ROOT writes "ROOT v6.xx.yy")
//! schema description (four list frames: fields, columns, alias columns, extra type info)
//! [unknown trailing data from newer writers]
//! xxh3-64 checksum
//! ```

use super::{begin, finish, open, read_feature_flags, write_feature_flags};
use crate::constants::ENVELOPE_TYPE_HEADER;
use crate::envelope::schema::{parse_schema_description, write_schema_description};
use crate::error::Result;
use crate::model::Header;

/// Parses a whole uncompressed header envelope.
pub fn parse_header(bytes: &[u8], verify_checksum: bool) -> Result<Header> {
    let mut r = open(bytes, ENVELOPE_TYPE_HEADER, verify_checksum)?;
    let feature_flags = read_feature_flags(&mut r)?;
    let name = r.string("ntuple name")?;
    let description = r.string("ntuple description")?;
    let writer = r.string("writer identifier")?;
    let schema = parse_schema_description(&mut r)?;
    Ok(Header { feature_flags, name, description, writer, schema })
}

/// Serializes a header envelope; returns its bytes and its checksum (which
/// footer and page lists quote).
pub fn write_header(h: &Header) -> Result<(Vec<u8>, u64)> {
    let mut w = begin(ENVELOPE_TYPE_HEADER);
    write_feature_flags(&mut w, &h.feature_flags)?;
    w.string(&h.name)?;
    w.string(&h.description)?;
    w.string(&h.writer)?;
    write_schema_description(&mut w, &h.schema)?;
    finish(w)
}
