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

/// Appends the `n` plain little-endian elements of `page` (exactly `n * SIZE` bytes).
#[inline]
pub(crate) fn unpack_plain<T: Elem>(page: &[u8], out: &mut Vec<T>) {
    out.extend(page.chunks_exact(T::SIZE).map(T::from_le_slice));
}

/// Elements un-split per block: fixed-size plane slices let the compiler
/// drop bounds checks and vectorize the byte gather.
const BLOCK: usize = 64;

/// Appends `n` elements of `S` bytes each from a byte-split page of `n * S`
/// bytes, into an output of at least `S` bytes per element (`D` is wider for
/// e.g. 32-bit indices decoded into `u64`, or half floats held in `f32` bits;
/// the missing high bytes are zero).
#[inline]
pub(crate) fn unsplit<D: Elem, const S: usize>(page: &[u8], n: usize, out: &mut Vec<D>) {
    debug_assert!(S <= D::SIZE && D::SIZE <= 8);
    if n == 0 || page.len() < n * S {
        return;
    }
    out.reserve(n);
    let full = n / BLOCK;
    for blk in 0..full {
        let at = blk * BLOCK;
        let planes: [&[u8; BLOCK]; S] = std::array::from_fn(|b| {
            <&[u8; BLOCK]>::try_from(&page[b * n + at..b * n + at + BLOCK]).unwrap_or(&[0; BLOCK])
        });
        let mut tmp = [D::default(); BLOCK];
        for (j, t) in tmp.iter_mut().enumerate() {
            let mut bytes = [0u8; 8];
            for (byte, plane) in bytes.iter_mut().zip(&planes) {
                *byte = plane[j];
            }
            *t = D::from_le_slice(&bytes[..D::SIZE]);
        }
        out.extend_from_slice(&tmp);
    }
    for i in full * BLOCK..n {
        let mut bytes = [0u8; 8];
        for (b, byte) in bytes.iter_mut().take(S).enumerate() {
            *byte = page[b * n + i];
        }
        out.push(D::from_le_slice(&bytes[..D::SIZE]));
    }
}

/// Byte-splits `values` (each `stored_size` low bytes of `T`) onto `out`.
pub(crate) fn split<T: Elem>(values: &[T], stored_size: usize, out: &mut Vec<u8>) {
    let n = values.len();
    let start = out.len();
    out.resize(start + n * stored_size, 0);
    for (b, plane) in out[start..].chunks_exact_mut(n.max(1)).enumerate() {
        for (p, v) in plane.iter_mut().zip(values) {
            *p = v.byte(b);
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

/// Undoes delta encoding of 32-bit offsets (held in `u64`), wrapping at 2^32
/// as ROOT's `CastDeltaSplitUnpack<std::uint64_t, std::uint32_t>` does.
#[inline]
pub(crate) fn undelta32(v: &mut [u64]) {
    let mut acc = 0u32;
    for x in v {
        acc = acc.wrapping_add(*x as u32);
        *x = u64::from(acc);
    }
}

/// Undoes delta encoding of 64-bit offsets.
#[inline]
pub(crate) fn undelta64(v: &mut [u64]) {
    let mut acc = 0u64;
    for x in v {
        acc = acc.wrapping_add(*x);
        *x = acc;
    }
}
