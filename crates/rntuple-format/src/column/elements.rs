//! Fixed-width element types and the byte-level codecs shared by them:
//! plain little-endian, byte split (spec "Split (only)"), zigzag and delta.

/// A fixed-width element stored little-endian.
pub(crate) trait Elem: Copy + Default {
    const SIZE: usize;
    /// From exactly `SIZE` little-endian bytes.
    fn from_le_slice(c: &[u8]) -> Self;
    /// Byte `i` (0 = least significant) of the little-endian form.
    fn byte(self, i: usize) -> u8;
    fn push_le(self, out: &mut Vec<u8>);
}

macro_rules! int_elem {
    ($t:ty, $u:ty) => {
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn from_le_slice(c: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(c);
                <$t>::from_le_bytes(a)
            }
            #[inline]
            fn byte(self, i: usize) -> u8 {
                (self as $u >> (8 * i)) as u8
            }
            #[inline]
            fn push_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
int_elem!(u16, u16);
int_elem!(u32, u32);
int_elem!(u64, u64);
int_elem!(i16, u16);
int_elem!(i32, u32);
int_elem!(i64, u64);

macro_rules! float_elem {
    ($t:ty, $u:ty) => {
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn from_le_slice(c: &[u8]) -> Self {
                <$t>::from_bits(<$u as Elem>::from_le_slice(c))
            }
            #[inline]
            fn byte(self, i: usize) -> u8 {
                self.to_bits().byte(i)
            }
            #[inline]
            fn push_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_bits().to_le_bytes());
            }
        }
    };
}
float_elem!(f32, u32);
float_elem!(f64, u64);

/// Decodes the plain little-endian elements of `page` (exactly
/// `out.len() * SIZE` bytes) into `out`.
#[inline]
pub(crate) fn unpack_plain<T: Elem>(page: &[u8], out: &mut [T]) {
    for (d, c) in out.iter_mut().zip(page.chunks_exact(T::SIZE)) {
        *d = T::from_le_slice(c);
    }
}

/// Elements un-split per block: fixed-size plane slices let the compiler
/// drop bounds checks and vectorize the byte gather.
const BLOCK: usize = 64;

/// Decodes `out.len()` elements of `S` bytes each from a byte-split page of
/// `out.len() * S` bytes (spec "Split (only)": all first bytes, then all
/// second bytes, ...) into `out`, whose elements are at least `S` bytes wide
/// (`D` is wider for e.g. 32-bit indices decoded into `u64`, or half floats
/// held in `f32` bits; the missing high bytes are zero).
#[cfg(test)]
pub(crate) fn unsplit<D: Elem, const S: usize>(page: &[u8], out: &mut [D]) {
    unsplit_range::<D, S>(page, out.len(), 0, out);
}

/// [`unsplit`] of elements `[from, from + out.len())` of a page of `count`
/// elements (`count * S` bytes).
#[inline]
pub(crate) fn unsplit_range<D: Elem, const S: usize>(page: &[u8], count: usize, from: usize, out: &mut [D]) {
    debug_assert!(S <= D::SIZE && D::SIZE <= 8);
    let n = out.len();
    if n == 0 || page.len() < count * S || from + n > count {
        return;
    }
    let planes: [&[u8]; S] = std::array::from_fn(|b| &page[b * count + from..b * count + from + n]);
    if S == 8 {
        return unsplit8(&planes, out);
    }
    let mut blocks = out.chunks_exact_mut(BLOCK);
    let mut at = 0;
    for block in &mut blocks {
        let p: [&[u8; BLOCK]; S] =
            std::array::from_fn(|b| <&[u8; BLOCK]>::try_from(&planes[b][at..at + BLOCK]).unwrap_or(&[0; BLOCK]));
        for (j, d) in block.iter_mut().enumerate() {
            let mut bytes = [0u8; 8];
            for (byte, plane) in bytes.iter_mut().zip(&p) {
                *byte = plane[j];
            }
            *d = D::from_le_slice(&bytes[..D::SIZE]);
        }
        at += BLOCK;
    }
    for (j, d) in blocks.into_remainder().iter_mut().enumerate() {
        let mut bytes = [0u8; 8];
        for (byte, plane) in bytes.iter_mut().zip(&planes) {
            *byte = plane[at + j];
        }
        *d = D::from_le_slice(&bytes[..D::SIZE]);
    }
}

/// [`unsplit`] of 8-byte elements, eight at a time: the eight planes'
/// bytes of eight elements form an 8×8 byte matrix, transposed in registers
/// (about five times faster than gathering byte by byte).
#[inline]
fn unsplit8<D: Elem, const S: usize>(planes: &[&[u8]; S], out: &mut [D]) {
    let mut groups = out.chunks_exact_mut(8);
    let mut at = 0;
    for group in &mut groups {
        // Row b: byte b of the eight elements (element j in byte j).
        let rows: [u64; 8] =
            std::array::from_fn(|b| planes.get(b).and_then(|p| p.get(at..at + 8)).map_or(0, u64::from_le_slice));
        for (d, x) in group.iter_mut().zip(transpose8x8(rows)) {
            *d = D::from_le_slice(&x.to_le_bytes()[..D::SIZE]);
        }
        at += 8;
    }
    for (j, d) in groups.into_remainder().iter_mut().enumerate() {
        let mut bytes = [0u8; 8];
        for (byte, plane) in bytes.iter_mut().zip(planes) {
            *byte = plane[at + j];
        }
        *d = D::from_le_slice(&bytes[..D::SIZE]);
    }
}

/// Transposes an 8×8 byte matrix held in eight little-endian words: byte
/// `j` of word `b` becomes byte `b` of word `j`.
#[inline(always)]
fn transpose8x8(mut x: [u64; 8]) -> [u64; 8] {
    for i in 0..4 {
        let (a, b) = (x[i], x[i + 4]);
        x[i] = (a & 0x0000_0000_FFFF_FFFF) | (b << 32);
        x[i + 4] = (a >> 32) | (b & 0xFFFF_FFFF_0000_0000);
    }
    for base in [0, 4] {
        for i in base..base + 2 {
            let (a, b) = (x[i], x[i + 2]);
            x[i] = (a & 0x0000_FFFF_0000_FFFF) | ((b & 0x0000_FFFF_0000_FFFF) << 16);
            x[i + 2] = ((a >> 16) & 0x0000_FFFF_0000_FFFF) | (b & 0xFFFF_0000_FFFF_0000);
        }
    }
    for i in [0, 2, 4, 6] {
        let (a, b) = (x[i], x[i + 1]);
        x[i] = (a & 0x00FF_00FF_00FF_00FF) | ((b & 0x00FF_00FF_00FF_00FF) << 8);
        x[i + 1] = ((a >> 8) & 0x00FF_00FF_00FF_00FF) | (b & 0xFF00_FF00_FF00_FF00);
    }
    x
}

/// Byte-splits `values` (each `stored_size` low bytes of `T`) onto `out`.
pub(crate) fn split<T: Elem>(values: &[T], stored_size: usize, out: &mut Vec<u8>) {
    debug_assert_eq!(stored_size, T::SIZE);
    split_map(values, |x| x, out);
}

/// Byte-splits `map(v)` of every `v` in `values` (in order) onto `out`
/// (spec "Split (only)": all first bytes, then all second bytes, ...): the
/// zigzag and delta encodings of split columns are applied on the way, a
/// block at a time, without a temporary page.
#[inline]
pub(crate) fn split_map<T: Copy, U: Elem>(values: &[T], mut map: impl FnMut(T) -> U, out: &mut Vec<u8>) {
    let n = values.len();
    let start = out.len();
    out.resize(start + n * U::SIZE, 0);
    let planes = &mut out[start..];
    let mut block = [U::default(); BLOCK];
    for (k, chunk) in values.chunks(BLOCK).enumerate() {
        let block = &mut block[..chunk.len()];
        for (b, &v) in block.iter_mut().zip(chunk) {
            *b = map(v);
        }
        let at = k * BLOCK;
        for i in 0..U::SIZE {
            let plane = &mut planes[i * n + at..i * n + at + block.len()];
            for (p, b) in plane.iter_mut().zip(block.iter()) {
                *p = b.byte(i);
            }
        }
    }
}

macro_rules! zigzag {
    ($enc:ident, $dec:ident, $s:ty, $u:ty) => {
        /// Zigzag encoding: x ↦ 2x for x ≥ 0, −(2x + 1) for x < 0.
        #[inline]
        pub(crate) fn $enc(x: $s) -> $u {
            ((x << 1) ^ (x >> (<$s>::BITS - 1))) as $u
        }
        /// Zigzag decoding, in place on values whose bits hold the encoded form.
        #[inline]
        pub(crate) fn $dec(v: &mut [$s]) {
            for x in v {
                let u = *x as $u;
                *x = ((u >> 1) as $s) ^ -((u & 1) as $s);
            }
        }
    };
}
zigzag!(zigzag_encode16, zigzag_decode16, i16, u16);
zigzag!(zigzag_encode32, zigzag_decode32, i32, u32);
zigzag!(zigzag_encode64, zigzag_decode64, i64, u64);

/// Sum (wrapping at 2^64) of the first `from` elements of a byte-split page
/// of `count` elements of `S` bytes: the running total a delta-encoded page
/// cut at `from` starts with.
pub(crate) fn split_prefix_sum<const S: usize>(page: &[u8], count: usize, from: usize) -> u64 {
    let mut sum = 0u64;
    for j in 0..from.min(count) {
        let mut x = 0u64;
        for b in 0..S {
            x |= u64::from(page.get(b * count + j).copied().unwrap_or(0)) << (8 * b);
        }
        sum = sum.wrapping_add(x);
    }
    sum
}

/// Undoes delta encoding of 32-bit offsets (held in `u64`), wrapping at 2^32
/// as ROOT's `CastDeltaSplitUnpack<std::uint64_t, std::uint32_t>` does,
/// starting from the running total `acc`.
#[inline]
pub(crate) fn undelta32(v: &mut [u64], mut acc: u32) {
    for x in v {
        acc = acc.wrapping_add(*x as u32);
        *x = u64::from(acc);
    }
}

/// Undoes delta encoding of 64-bit offsets, starting from the running total `acc`.
#[inline]
pub(crate) fn undelta64(v: &mut [u64], mut acc: u64) {
    for x in v {
        acc = acc.wrapping_add(*x);
        *x = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte `b` of element `i` sits at `b * n + i` (spec "Split (only)").
    fn naive<const S: usize>(page: &[u8], n: usize) -> Vec<u64> {
        (0..n).map(|i| (0..S).map(|b| u64::from(page[b * n + i]) << (8 * b)).sum()).collect()
    }

    #[test]
    fn unsplit_matches_the_split_layout_for_every_length() {
        for n in (0..40).chain([63, 64, 65, 127, 128, 129, 1000]) {
            let page: Vec<u8> = (0..8 * n).map(|i| (i * 37 + i / 7) as u8).collect();
            let mut out8 = vec![0u64; n];
            unsplit::<u64, 8>(&page, &mut out8);
            assert_eq!(out8, naive::<8>(&page, n), "8 bytes, n = {n}");
            let mut f64s = vec![0f64; n];
            unsplit::<f64, 8>(&page, &mut f64s);
            assert_eq!(f64s.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), naive::<8>(&page, n));
            let mut out4 = vec![0u32; n];
            unsplit::<u32, 4>(&page[..4 * n], &mut out4);
            assert_eq!(
                out4.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(),
                naive::<4>(&page, n),
                "4 bytes, n = {n}"
            );
            let mut wide = vec![0u64; n];
            unsplit::<u64, 4>(&page[..4 * n], &mut wide);
            assert_eq!(wide, naive::<4>(&page, n), "4 bytes into 8, n = {n}");
            let mut out2 = vec![0u16; n];
            unsplit::<u16, 2>(&page[..2 * n], &mut out2);
            assert_eq!(
                out2.iter().map(|&x| u64::from(x)).collect::<Vec<_>>(),
                naive::<2>(&page, n),
                "2 bytes, n = {n}"
            );
        }
    }

    #[test]
    fn transposes_bytes() {
        let rows: [u64; 8] = std::array::from_fn(|b| u64::from_le_bytes(std::array::from_fn(|j| (16 * b + j) as u8)));
        let cols = transpose8x8(rows);
        for (j, c) in cols.iter().enumerate() {
            assert_eq!(c.to_le_bytes(), std::array::from_fn(|b| (16 * b + j) as u8));
        }
    }
}
