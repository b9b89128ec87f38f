//! Envelopes (RNTuple binary format 1.0, section "Envelopes").
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |        Envelope Type ID       |                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+        Envelope Length        +
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//!                          ENVELOPE PAYLOAD
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                     XxHash-3 (64 bit)                         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! As ROOT writes them, the length counts the whole envelope including the
//! checksum, and the checksum covers every byte before it (preamble included).
//! The functions here take the whole **uncompressed** envelope.

mod attribute_sets;
mod footer;
mod header;
mod page_list;
mod schema;

pub use footer::{parse_footer, write_footer};
pub use header::{parse_header, write_header};
pub use page_list::{parse_page_list, write_page_list};
pub use schema::{parse_schema_description, write_schema_description};

use crate::checksum::xxh3_64;
use crate::constants::*;
use crate::error::{Error, Location, Result};
use crate::frame::{Reader, Writer};

/// Name of an envelope type, for messages.
pub fn envelope_name(type_id: u16) -> &'static str {
    match type_id {
        ENVELOPE_TYPE_HEADER => "header envelope",
        ENVELOPE_TYPE_FOOTER => "footer envelope",
        ENVELOPE_TYPE_PAGE_LIST => "page list envelope",
        _ => "envelope",
    }
}

/// Checks preamble, length and (optionally) checksum of an envelope; returns
/// a cursor over its payload (between preamble and checksum) whose offsets
/// count from the start of the envelope.
pub(crate) fn open(bytes: &[u8], expected_type: u16, verify_checksum: bool) -> Result<Reader<'_>> {
    let name = envelope_name(expected_type);
    let mut r = Reader::new(bytes, name);
    let min = ENVELOPE_PREAMBLE_SIZE + ENVELOPE_CHECKSUM_SIZE;
    r.ensure(min, "envelope preamble and checksum")?;
    let word = r.u64("envelope preamble")?;
    let type_id = (word & 0xFFFF) as u16;
    let length = word >> 16;
    if type_id != expected_type {
        return Err(Error::out_of_spec(
            format!("envelope type {type_id:#06x} ({}), expected {expected_type:#06x}", envelope_name(type_id)),
            Location::new(name, Some(0)),
        ));
    }
    if length != bytes.len() as u64 {
        return Err(Error::out_of_spec(
            format!("envelope length field says {length} bytes, buffer holds {}", bytes.len()),
            Location::new(name, Some(0)),
        ));
    }
    let body = bytes.len() - ENVELOPE_CHECKSUM_SIZE;
    if verify_checksum {
        let stored = stored_checksum(bytes);
        let computed = xxh3_64(&bytes[..body]);
        if stored != computed {
            return Err(Error::ChecksumMismatch { stored, computed, location: Location::new(name, Some(body as u64)) });
        }
    }
    r.sub(body - ENVELOPE_PREAMBLE_SIZE, "envelope payload")
}

fn stored_checksum(bytes: &[u8]) -> u64 {
    let mut tail = [0u8; 8];
    tail.copy_from_slice(&bytes[bytes.len() - ENVELOPE_CHECKSUM_SIZE..]);
    u64::from_le_bytes(tail)
}

/// The checksum stored at the end of a header envelope (what footer and page
/// lists quote as "header checksum"). Checks type and length, not the checksum.
pub fn header_checksum(bytes: &[u8]) -> Result<u64> {
    open(bytes, ENVELOPE_TYPE_HEADER, false)?;
    Ok(stored_checksum(bytes))
}

/// Starts an envelope: writes the preamble with a zero length.
pub(crate) fn begin(type_id: u16) -> Writer {
    let mut w = Writer::new();
    w.u64(u64::from(type_id));
    w
}

/// Finishes an envelope: patches the length, appends the checksum. Returns
/// the envelope bytes and the checksum.
pub(crate) fn finish(mut w: Writer) -> Result<(Vec<u8>, u64)> {
    let length = (w.len() + ENVELOPE_CHECKSUM_SIZE) as u64;
    if length > ENVELOPE_MAX_LENGTH {
        return Err(Error::invalid(format!("envelope of {length} bytes exceeds the 48-bit length field")));
    }
    let buf = w.as_mut_slice();
    let mut word = [0u8; 8];
    word.copy_from_slice(&buf[..8]);
    let word = u64::from_le_bytes(word) | (length << 16);
    buf[..8].copy_from_slice(&word.to_le_bytes());
    let checksum = xxh3_64(w.as_slice());
    w.u64(checksum);
    Ok((w.into_inner(), checksum))
}

/// Reads feature flag words (spec "Feature Flags"): words follow as long as
/// the previous one has its most significant bit set. Returns the words with
/// that continuation bit cleared; fails on any set bit, since this reader
/// implements none. Bit 0 is format 1.1.0.0's "nested deferred columns"
/// (set by ROOT 6.42's merger when a later input adds fields under a
/// collection; ROOT's `RNTupleDescriptor::kFeatureFlagNestedDeferredColumns`):
/// its refusal names the feature, so that a user knows a newer reader is
/// needed rather than that the file is broken.
pub(crate) fn read_feature_flags(r: &mut Reader<'_>) -> Result<Vec<u64>> {
    let mut words = Vec::new();
    loop {
        let start = r.clone();
        let word = r.u64("feature flags")?;
        let flags = word & !FEATURE_FLAG_CONTINUATION;
        if flags != 0 {
            let bit = flags.trailing_zeros() + FEATURE_FLAG_BITS_PER_WORD * words.len() as u32;
            let feature = match bit {
                0 => "feature flag bit 0: nested deferred columns (format 1.1)".to_string(),
                _ => format!("feature flag bit {bit}"),
            };
            return Err(start.unsupported("feature flags", feature));
        }
        words.push(flags);
        if word & FEATURE_FLAG_CONTINUATION == 0 {
            return Ok(words);
        }
    }
}

/// Writes feature flag words, setting the continuation bit on all but the last.
pub(crate) fn write_feature_flags(w: &mut Writer, flags: &[u64]) -> Result<()> {
    if flags.is_empty() {
        w.u64(0);
        return Ok(());
    }
    for (i, &f) in flags.iter().enumerate() {
        if f & FEATURE_FLAG_CONTINUATION != 0 {
            return Err(Error::invalid(format!(
                "feature flag word {i} uses bit 63, which is reserved for continuation"
            )));
        }
        let last = i + 1 == flags.len();
        w.u64(if last { f } else { f | FEATURE_FLAG_CONTINUATION });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
