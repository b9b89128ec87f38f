//! The one page pipeline: from a page's stored bytes to its packed column
//! data (spec "Page Locations", "Compression Block"). The reader, `verify`
//! and `merge` all unseal pages here.
//!
//! ```text
//! stored bytes:  [ page data: locator.size bytes ][ xxh3-64, LE (8 bytes, if has_checksum) ]
//!                 compressed unless locator.size equals the packed size
//! ```

use rntuple_format::checksum::xxh3_64;
use rntuple_format::compression::{guard_expansion, Decompressor};
use rntuple_format::constants::ENVELOPE_CHECKSUM_SIZE as CHECKSUM_SIZE;
use rntuple_format::model::PageDescriptor;
use rntuple_format::{Error, Location, Result};

use super::load::{Checks, Found};

/// Bytes a page takes in the file: its data and its checksum, if any.
pub fn stored_size(page: &PageDescriptor) -> u64 {
    page.locator.size.saturating_add(if page.has_checksum { CHECKSUM_SIZE as u64 } else { 0 })
}

/// Checks the page's xxh3-64 checksum (stored little-endian after the page
/// data) when `checks` verifies: a mismatch is returned when stopping,
/// reported otherwise. `stored` holds at least [`stored_size`] bytes.
pub fn check_page_checksum(
    stored: &[u8],
    page: &PageDescriptor,
    checks: &mut Checks<'_>,
    location: &dyn Fn() -> Location,
) -> Result<()> {
    if !page.has_checksum || !checks.verifies() {
        return Ok(());
    }
    let size = usize::try_from(page.locator.size).unwrap_or(usize::MAX);
    let (data, sum) = match stored.get(..size).zip(stored.get(size..size.saturating_add(CHECKSUM_SIZE))) {
        Some(parts) => parts,
        None => return Err(truncated(stored, page, location)),
    };
    let mut b = [0u8; CHECKSUM_SIZE];
    b.copy_from_slice(sum);
    let stored_sum = u64::from_le_bytes(b);
    let computed = xxh3_64(data);
    if stored_sum != computed {
        let error = Error::ChecksumMismatch { stored: stored_sum, computed, location: location() };
        let offset = Some(page.locator.offset);
        checks.recoverable(Found { check: "checksum", offset, error }).map_err(Error::from)?;
    }
    Ok(())
}

fn truncated(stored: &[u8], page: &PageDescriptor, location: &dyn Fn() -> Location) -> Error {
    Error::Truncated { needed: stored_size(page), available: stored.len() as u64, location: location() }
}

/// Unseals one page: checks its checksum under `checks`
/// ([`check_page_checksum`]), then, when compressed, decompresses it under the
/// allocation guard ([`guard_expansion`]) into `buf` (grown as needed, reused
/// across pages). Returns the page's `unpacked` bytes of packed column data.
pub fn unseal_page<'a>(
    stored: &'a [u8],
    page: &PageDescriptor,
    unpacked: u64,
    checks: &mut Checks<'_>,
    location: &dyn Fn() -> Location,
    decompressor: &mut Decompressor,
    buf: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    check_page_checksum(stored, page, checks, location)?;
    let size = page.locator.size;
    let data =
        usize::try_from(size).ok().and_then(|s| stored.get(..s)).ok_or_else(|| truncated(stored, page, location))?;
    if size == unpacked {
        return Ok(data);
    }
    let here = location();
    let n = guard_expansion(size, unpacked, &here)?;
    if buf.len() < n {
        // A new buffer rather than a grown one: what it held is not needed,
        // and fresh zeroed memory is not written before decompression fills it.
        *buf = rntuple_format::alloc::try_zeroed(n, || here.to_string())?;
    }
    decompressor.decompress_into(data, &mut buf[..n], &here)?;
    Ok(&buf[..n])
}

#[cfg(test)]
mod tests {
    use rntuple_format::compression::compress;
    use rntuple_format::model::Locator;

    use super::*;

    fn sealed(data: &[u8], setting: u32) -> (Vec<u8>, PageDescriptor) {
        let mut stored = compress(data, setting).unwrap();
        let size = stored.len() as u64;
        stored.extend_from_slice(&xxh3_64(&stored).to_le_bytes());
        let page = PageDescriptor { num_elements: 1, has_checksum: true, locator: Locator { size, offset: 4096 } };
        (stored, page)
    }

    fn here() -> Location {
        Location::new("page 0 of column 0 in cluster 0", Some(4096))
    }

    #[test]
    fn unseals_compressed_and_plain_pages() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        for setting in [0, 505, 101] {
            let (stored, page) = sealed(&data, setting);
            let (mut d, mut buf) = (Decompressor::new(), Vec::new());
            let mut checks = Checks::Stop { verify_checksums: true };
            let out = unseal_page(&stored, &page, 10_000, &mut checks, &here, &mut d, &mut buf).unwrap();
            assert_eq!(out, &data[..], "setting {setting}");
        }
    }

    #[test]
    fn a_flipped_bit_stops_or_is_reported_and_the_page_still_unseals() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let (mut stored, page) = sealed(&data, 0);
        stored[10] ^= 1;
        let (mut d, mut buf) = (Decompressor::new(), Vec::new());
        let mut stop = Checks::Stop { verify_checksums: true };
        let e = unseal_page(&stored, &page, 1000, &mut stop, &here, &mut d, &mut buf).unwrap_err();
        assert!(matches!(&e, Error::ChecksumMismatch { location, .. } if location.offset == Some(4096)), "{e}");
        let mut unchecked = Checks::Stop { verify_checksums: false };
        assert_eq!(unseal_page(&stored, &page, 1000, &mut unchecked, &here, &mut d, &mut buf).unwrap()[10], 10 ^ 1);
        let mut found = Vec::new();
        let mut report = |f: Found| found.push((f.check, f.offset));
        let mut checks = Checks::Report(&mut report);
        assert_eq!(unseal_page(&stored, &page, 1000, &mut checks, &here, &mut d, &mut buf).unwrap().len(), 1000);
        assert_eq!(found, [("checksum", Some(4096))]);
    }

    #[test]
    fn the_guard_runs_before_allocating() {
        let (stored, page) = sealed(&[7u8; 64], 505);
        let (mut d, mut buf) = (Decompressor::new(), Vec::new());
        let mut checks = Checks::Stop { verify_checksums: true };
        let e = unseal_page(&stored, &page, 1 << 40, &mut checks, &here, &mut d, &mut buf).unwrap_err();
        assert!(matches!(e, Error::WouldOverAllocate { requested, .. } if requested == 1 << 40), "{e}");
        assert!(buf.is_empty());
        let e = unseal_page(&stored[..4], &page, 64, &mut checks, &here, &mut d, &mut buf).unwrap_err();
        assert!(matches!(e, Error::Truncated { .. }), "{e}");
    }
}
