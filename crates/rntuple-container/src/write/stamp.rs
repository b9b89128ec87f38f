//! Time stamps (`TDatime`) and UUIDs (`TUUID`) of the records the writer emits.
//!
//! A `TDatime` packs a date and time into 32 bits (ROOT `core/base/src/TDatime.cxx`,
//! `TDatime::Set`; also `RTFDatetime` in `tree/ntuple/src/RMiniFile.cxx`):
//!
//! ```text
//! bits 31..26  year − 1995      bits 16..12  hour
//! bits 25..22  month (1–12)     bits 11..6   minute
//! bits 21..17  day (1–31)       bits  5..0   second
//! ```
//!
//! ROOT uses local time; the writer uses UTC, so that a fixed time stamp gives
//! the same bytes everywhere. Times outside 1995–2058, which the field cannot
//! hold, are clamped.
//!
//! UUIDs: ROOT draws a random one per directory. The writer derives them from
//! the file name, the time stamp, the directory's path and a seed that is random
//! unless the time stamp is fixed, so that a fixed time stamp makes the whole
//! file reproducible.

use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use rntuple_format::checksum::xxh3_64;

/// Packs Unix time `secs` (UTC) into a `TDatime`.
pub(crate) fn datime_from_unix(secs: u64) -> u32 {
    const MIN: u64 = 788_918_400; // 1995-01-01T00:00:00Z
    const MAX: u64 = 2_808_604_799; // 2058-12-31T23:59:59Z: year − 1995 = 63, the largest the field holds
    let secs = secs.clamp(MIN, MAX);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let year = (year - 1995) as u32;
    let (hour, minute, second) = ((rem / 3600) as u32, (rem / 60 % 60) as u32, (rem % 60) as u32);
    year << 26 | month << 22 | day << 17 | hour << 12 | minute << 6 | second
}

/// Proleptic Gregorian (year, month, day) of a count of days since 1970-01-01
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The current Unix time in seconds.
pub(crate) fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `SOURCE_DATE_EPOCH` (reproducible-builds.org), if set to a number.
pub(crate) fn source_date_epoch() -> Option<u64> {
    std::env::var("SOURCE_DATE_EPOCH").ok()?.trim().parse().ok()
}

/// A random 64-bit seed from the standard library's randomly keyed hasher.
pub(crate) fn random_seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

/// A version-4-style UUID derived from `seed` and the given parts.
pub(crate) fn derive_uuid(seed: u64, parts: &[&[u8]]) -> [u8; 16] {
    let mut input = seed.to_le_bytes().to_vec();
    for p in parts {
        input.extend_from_slice(&(p.len() as u64).to_le_bytes());
        input.extend_from_slice(p);
    }
    let mut uuid = [0u8; 16];
    for (half, salt) in [(0usize, 1u8), (8, 2)] {
        input.push(salt);
        uuid[half..half + 8].copy_from_slice(&xxh3_64(&input).to_be_bytes());
        input.pop();
    }
    uuid[6] = (uuid[6] & 0x0f) | 0x40; // version 4
    uuid[8] = (uuid[8] & 0x3f) | 0x80; // RFC 4122 variant
    uuid
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unpack(d: u32) -> (u32, u32, u32, u32, u32, u32) {
        (1995 + (d >> 26), d >> 22 & 0xf, d >> 17 & 0x1f, d >> 12 & 0x1f, d >> 6 & 0x3f, d & 0x3f)
    }

    #[test]
    fn packs_like_tdatime() {
        // 2026-11-22T03:11:05: the datime 0x7eec32c5 of tests/data/multikey.root
        // (written in a UTC container).
        assert_eq!(datime_from_unix(1_795_317_065), 0x7eec_32c5);
        assert_eq!(unpack(0x7eec_32c5), (2026, 11, 22, 3, 11, 5));
        assert_eq!(unpack(datime_from_unix(951_782_400)), (2000, 2, 29, 0, 0, 0));
        assert_eq!(unpack(datime_from_unix(1_735_689_599)), (2024, 12, 31, 23, 59, 59));
    }

    #[test]
    fn clamps_to_the_representable_range() {
        assert_eq!(unpack(datime_from_unix(0)), (1995, 1, 1, 0, 0, 0));
        assert_eq!(unpack(datime_from_unix(u64::MAX)), (2058, 12, 31, 23, 59, 59));
    }

    #[test]
    fn uuids_are_deterministic_per_seed_and_parts() {
        let a = derive_uuid(1, &[b"f.root", b"dir"]);
        assert_eq!(a, derive_uuid(1, &[b"f.root", b"dir"]));
        assert_ne!(a, derive_uuid(2, &[b"f.root", b"dir"]));
        assert_ne!(a, derive_uuid(1, &[b"f.root", b"di", b"r"]));
        assert_eq!(a[6] >> 4, 4);
        assert_eq!(a[8] >> 6, 2);
    }
}
