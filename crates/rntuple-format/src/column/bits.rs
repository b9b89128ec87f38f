//! Bit packing of `Bit`, `Real32Trunc` and `Real32Quant` pages.
//!
//! All three use one little-endian bit stream: element `i` occupies stream
//! bits `[i * n, (i + 1) * n)`, and stream bit `k` is bit `k % 8` of byte
//! `k / 8`. The page has `ceil(count * n / 8)` bytes; padding bits of the last
//! byte are ignored on reading (ROOT's `Bit` packer leaves stale bits there)
//! and written as zero. This is what ROOT's `BitPacking::PackBits` produces
//! (64-bit little-endian words filled from the least significant bit) and
//! what `RColumnElement<bool, kBit>` does with 8-bit `std::bitset`s.
//!
//! For `Real32Trunc` the packed value is the top `n` bits of the IEEE-754
//! float bit pattern; for `Real32Quant` the `n`-bit quantized integer.

/// Decodes booleans `[from, from + out.len())` of a `Bit` page into `out`.
pub(crate) fn unpack_bools(page: &[u8], from: usize, out: &mut [bool]) {
    if from % 8 != 0 {
        for (k, d) in (from..).zip(out.iter_mut()) {
            *d = page.get(k / 8).is_some_and(|b| (b >> (k % 8)) & 1 != 0);
        }
        return;
    }
    let page = page.get(from / 8..).unwrap_or_default();
    let mut chunks = out.chunks_exact_mut(8);
    let mut bytes = page.iter();
    for chunk in &mut chunks {
        let byte = bytes.next().copied().unwrap_or(0);
        for (j, d) in chunk.iter_mut().enumerate() {
            *d = (byte >> j) & 1 != 0;
        }
    }
    let byte = bytes.next().copied().unwrap_or(0);
    for (j, d) in chunks.into_remainder().iter_mut().enumerate() {
        *d = (byte >> j) & 1 != 0;
    }
}

/// Appends the packed form of `values` to `out`.
pub(crate) fn pack_bools(values: &[bool], out: &mut Vec<u8>) {
    out.extend(values.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |acc, (j, &b)| acc | (u8::from(b) << j))));
}

/// Calls `sink` with each of the `count` `nbits`-bit values (1 ≤ nbits ≤ 32)
/// of a packed stream from value `first` on. Missing bytes read as zero
/// (callers check the size).
#[inline]
pub(crate) fn unpack_bits(page: &[u8], first: usize, count: usize, nbits: u32, mut sink: impl FnMut(u32)) {
    debug_assert!((1..=32).contains(&nbits));
    let mask = if nbits == 32 { u64::from(u32::MAX) } else { (1u64 << nbits) - 1 };
    let start = first.saturating_mul(nbits as usize);
    let mut bytes = page.get(start / 8..).unwrap_or_default().iter();
    // Bits of the first byte that belong to earlier values are dropped.
    let skip = (start % 8) as u32;
    let mut acc = 0u64;
    let mut have = 0u32;
    if skip > 0 {
        acc = u64::from(bytes.next().copied().unwrap_or(0)) >> skip;
        have = 8 - skip;
    }
    for _ in 0..count {
        while have < nbits {
            acc |= u64::from(bytes.next().copied().unwrap_or(0)) << have;
            have += 8;
        }
        sink((acc & mask) as u32);
        acc >>= nbits;
        have -= nbits;
    }
}

/// Appends the packed stream of `values`, `nbits` low bits each (1 ≤ nbits ≤ 32).
pub(crate) fn pack_bits(values: impl Iterator<Item = u32>, nbits: u32, out: &mut Vec<u8>) {
    debug_assert!((1..=32).contains(&nbits));
    let mask = if nbits == 32 { u64::from(u32::MAX) } else { (1u64 << nbits) - 1 };
    let mut acc = 0u64;
    let mut have = 0u32;
    for v in values {
        acc |= (u64::from(v) & mask) << have;
        have += nbits;
        while have >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            have -= 8;
        }
    }
    if have > 0 {
        out.push(acc as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bools_lsb_first() {
        let v = [true, false, false, false, false, false, false, true, true, true];
        let mut packed = Vec::new();
        pack_bools(&v, &mut packed);
        assert_eq!(packed, [0x81, 0x03]);
        let mut back = [false; 10];
        unpack_bools(&[0x81, 0xff], 0, &mut back); // stale padding bits ignored
        assert_eq!(back, v);
    }

    #[test]
    fn bit_stream_layout() {
        // 3-bit values 1, 2, 7, 5: stream bits 001 010 111 101 (LSB first)
        let mut out = Vec::new();
        pack_bits([1u32, 2, 7, 5].into_iter(), 3, &mut out);
        // byte0 = 1 | 2<<3 | (7&3)<<6 = 0b1101_0001, byte1 = 7>>2 | 5<<1 = 0b0000_1011
        assert_eq!(out, [0b1101_0001, 0b0000_1011]);
        let mut back = Vec::new();
        unpack_bits(&out, 0, 4, 3, |v| back.push(v));
        assert_eq!(back, [1, 2, 7, 5]);
    }

    #[test]
    fn round_trip_all_widths() {
        for nbits in 1..=32u32 {
            for count in [0usize, 1, 7, 8, 9, 63, 64, 65, 100] {
                let mask = if nbits == 32 { u32::MAX } else { (1 << nbits) - 1 };
                let vals: Vec<u32> = (0..count as u32).map(|i| i.wrapping_mul(2_654_435_761) & mask).collect();
                let mut out = Vec::new();
                pack_bits(vals.iter().copied(), nbits, &mut out);
                assert_eq!(out.len(), (count * nbits as usize).div_ceil(8));
                let mut back = Vec::new();
                unpack_bits(&out, 0, count, nbits, |v| back.push(v));
                assert_eq!(back, vals, "nbits {nbits} count {count}");
            }
        }
    }
}
