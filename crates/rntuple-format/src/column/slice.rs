//! [`ColumnSlice`]: a mutable window onto decoded elements, the slice form of
//! [`ColumnValues`]. A reader preallocates the output buffer of a column and
//! decodes every page straight into its own window of it (several pages at
//! once, on several threads, each owning a disjoint window).

use super::ColumnValues;

/// Mutable elements of one in-memory type; see [`ColumnValues`] for what each
/// variant holds.
#[derive(Debug)]
pub enum ColumnSlice<'a> {
    Bool(&'a mut [bool]),
    I8(&'a mut [i8]),
    U8(&'a mut [u8]),
    I16(&'a mut [i16]),
    U16(&'a mut [u16]),
    I32(&'a mut [i32]),
    U32(&'a mut [u32]),
    I64(&'a mut [i64]),
    U64(&'a mut [u64]),
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    Index(&'a mut [u64]),
    Switch { index: &'a mut [u64], tag: &'a mut [u32] },
}

macro_rules! each_variant {
    ($value:expr, $v:ident => $body:expr, $index:ident, $tag:ident => $switch:expr) => {
        match $value {
            ColumnSlice::Bool($v) => $body,
            ColumnSlice::I8($v) => $body,
            ColumnSlice::U8($v) => $body,
            ColumnSlice::I16($v) => $body,
            ColumnSlice::U16($v) => $body,
            ColumnSlice::I32($v) => $body,
            ColumnSlice::U32($v) => $body,
            ColumnSlice::I64($v) => $body,
            ColumnSlice::U64($v) => $body,
            ColumnSlice::F32($v) => $body,
            ColumnSlice::F64($v) => $body,
            ColumnSlice::Index($v) => $body,
            ColumnSlice::Switch { index: $index, tag: $tag } => $switch,
        }
    };
}

impl<'a> ColumnSlice<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        each_variant!(self, v => v.len(), index, _tag => index.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Splits into `[0, mid)` and `[mid, len)`; `mid` is clamped to the length.
    pub fn split_at(self, mid: usize) -> (ColumnSlice<'a>, ColumnSlice<'a>) {
        use ColumnSlice as S;
        let mid = mid.min(self.len());
        match self {
            S::Bool(v) => split(v, mid, S::Bool),
            S::I8(v) => split(v, mid, S::I8),
            S::U8(v) => split(v, mid, S::U8),
            S::I16(v) => split(v, mid, S::I16),
            S::U16(v) => split(v, mid, S::U16),
            S::I32(v) => split(v, mid, S::I32),
            S::U32(v) => split(v, mid, S::U32),
            S::I64(v) => split(v, mid, S::I64),
            S::U64(v) => split(v, mid, S::U64),
            S::F32(v) => split(v, mid, S::F32),
            S::F64(v) => split(v, mid, S::F64),
            S::Index(v) => split(v, mid, S::Index),
            S::Switch { index, tag } => {
                let (i0, i1) = index.split_at_mut(mid);
                let (t0, t1) = tag.split_at_mut(mid.min(tag.len()));
                (S::Switch { index: i0, tag: t0 }, S::Switch { index: i1, tag: t1 })
            }
        }
    }

    /// Name of the variant, for messages.
    pub fn kind(&self) -> &'static str {
        variant_name!(self)
    }

    /// Copies `src[from..from + self.len()]` into this window, converting
    /// each element with `as` (integers and reals into each other; booleans
    /// from integers as `x != 0`, into numbers as 0/1). Returns an error
    /// message for conversions that make no sense (a switch into anything
    /// but a switch, reals or indices into booleans) or when `src` is too
    /// short.
    pub fn convert_from(self, src: &ColumnValues, from: usize) -> std::result::Result<(), String> {
        let n = self.len();
        if from.checked_add(n).is_none_or(|end| end > src.len()) {
            return Err(format!("{n} elements from {from} of {} decoded ones", src.len()));
        }
        let to = from + n;
        macro_rules! cast_into {
            ($dst:expr, $t:ty) => {{
                let dst = $dst;
                match src {
                    ColumnValues::Bool(s) => copy_as(dst, &s[from..to], |x| u8::from(x) as $t),
                    ColumnValues::I8(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::U8(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::I16(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::U16(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::I32(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::U32(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::I64(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::U64(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::F32(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::F64(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::Index(s) => copy_as(dst, &s[from..to], |x| x as $t),
                    ColumnValues::Switch { .. } => {
                        return Err("a Switch column cannot hold a fundamental type".to_string())
                    }
                }
            }};
        }
        match self {
            ColumnSlice::Bool(dst) => match src {
                ColumnValues::Bool(s) => dst.copy_from_slice(&s[from..to]),
                ColumnValues::I8(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::U8(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::I16(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::U16(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::I32(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::U32(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::I64(s) => copy_as(dst, &s[from..to], |x| x != 0),
                ColumnValues::U64(s) => copy_as(dst, &s[from..to], |x| x != 0),
                _ => return Err("a floating-point, index or switch column cannot hold bool".into()),
            },
            ColumnSlice::I8(d) => cast_into!(d, i8),
            ColumnSlice::U8(d) => cast_into!(d, u8),
            ColumnSlice::I16(d) => cast_into!(d, i16),
            ColumnSlice::U16(d) => cast_into!(d, u16),
            ColumnSlice::I32(d) => cast_into!(d, i32),
            ColumnSlice::U32(d) => cast_into!(d, u32),
            ColumnSlice::I64(d) => cast_into!(d, i64),
            ColumnSlice::U64(d) => cast_into!(d, u64),
            ColumnSlice::F32(d) => cast_into!(d, f32),
            ColumnSlice::F64(d) => cast_into!(d, f64),
            ColumnSlice::Index(d) => match src {
                ColumnValues::Index(s) => d.copy_from_slice(&s[from..to]),
                other => return Err(format!("{} values cannot be read as an index", other.kind())),
            },
            ColumnSlice::Switch { index, tag } => match src {
                ColumnValues::Switch { index: si, tag: st } if st.len() == si.len() => {
                    index.copy_from_slice(&si[from..to]);
                    tag.copy_from_slice(&st[from..to]);
                }
                other => return Err(format!("{} values cannot be read as a switch", other.kind())),
            },
        }
        Ok(())
    }
}

fn split<'a, T>(
    v: &'a mut [T],
    mid: usize,
    wrap: fn(&'a mut [T]) -> ColumnSlice<'a>,
) -> (ColumnSlice<'a>, ColumnSlice<'a>) {
    let (a, b) = v.split_at_mut(mid);
    (wrap(a), wrap(b))
}

#[inline]
fn copy_as<S: Copy, D>(dst: &mut [D], src: &[S], f: impl Fn(S) -> D) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = f(s);
    }
}

impl ColumnValues {
    /// The whole buffer as a mutable window.
    pub fn as_slice_mut(&mut self) -> ColumnSlice<'_> {
        match self {
            Self::Bool(v) => ColumnSlice::Bool(v),
            Self::I8(v) => ColumnSlice::I8(v),
            Self::U8(v) => ColumnSlice::U8(v),
            Self::I16(v) => ColumnSlice::I16(v),
            Self::U16(v) => ColumnSlice::U16(v),
            Self::I32(v) => ColumnSlice::I32(v),
            Self::U32(v) => ColumnSlice::U32(v),
            Self::I64(v) => ColumnSlice::I64(v),
            Self::U64(v) => ColumnSlice::U64(v),
            Self::F32(v) => ColumnSlice::F32(v),
            Self::F64(v) => ColumnSlice::F64(v),
            Self::Index(v) => ColumnSlice::Index(v),
            Self::Switch { index, tag } => ColumnSlice::Switch { index, tag },
        }
    }

    /// `n` zeros of the same variant (freshly allocated zeroed memory, which
    /// the operating system hands out lazily). Aborts when the memory is not
    /// to be had: for sizes from the input use [`ColumnValues::try_zeros_like`].
    pub fn zeros_like(&self, n: usize) -> Self {
        match self {
            Self::Bool(_) => Self::Bool(vec![false; n]),
            Self::I8(_) => Self::I8(vec![0; n]),
            Self::U8(_) => Self::U8(vec![0; n]),
            Self::I16(_) => Self::I16(vec![0; n]),
            Self::U16(_) => Self::U16(vec![0; n]),
            Self::I32(_) => Self::I32(vec![0; n]),
            Self::U32(_) => Self::U32(vec![0; n]),
            Self::I64(_) => Self::I64(vec![0; n]),
            Self::U64(_) => Self::U64(vec![0; n]),
            Self::F32(_) => Self::F32(vec![0.0; n]),
            Self::F64(_) => Self::F64(vec![0.0; n]),
            Self::Index(_) => Self::Index(vec![0; n]),
            Self::Switch { .. } => Self::Switch { index: vec![0; n], tag: vec![0; n] },
        }
    }

    /// [`ColumnValues::zeros_like`] that fails with [`crate::Error::OutOfMemory`]
    /// naming `what` instead of aborting when the memory is not to be had.
    pub fn try_zeros_like(&self, n: usize, what: impl Fn() -> String) -> crate::Result<Self> {
        use crate::alloc::try_zeroed as z;
        Ok(match self {
            Self::Bool(_) => Self::Bool(z(n, &what)?),
            Self::I8(_) => Self::I8(z(n, &what)?),
            Self::U8(_) => Self::U8(z(n, &what)?),
            Self::I16(_) => Self::I16(z(n, &what)?),
            Self::U16(_) => Self::U16(z(n, &what)?),
            Self::I32(_) => Self::I32(z(n, &what)?),
            Self::U32(_) => Self::U32(z(n, &what)?),
            Self::I64(_) => Self::I64(z(n, &what)?),
            Self::U64(_) => Self::U64(z(n, &what)?),
            Self::F32(_) => Self::F32(z(n, &what)?),
            Self::F64(_) => Self::F64(z(n, &what)?),
            Self::Index(_) => Self::Index(z(n, &what)?),
            Self::Switch { .. } => Self::Switch { index: z(n, &what)?, tag: z(n, &what)? },
        })
    }

    /// Bytes per element in memory.
    pub fn element_size(&self) -> usize {
        match self {
            Self::Bool(_) | Self::I8(_) | Self::U8(_) => 1,
            Self::I16(_) | Self::U16(_) => 2,
            Self::I32(_) | Self::U32(_) | Self::F32(_) => 4,
            Self::I64(_) | Self::U64(_) | Self::F64(_) | Self::Index(_) => 8,
            Self::Switch { .. } => 12,
        }
    }

    /// Shortens to `n` elements (no effect when already shorter).
    pub fn truncate(&mut self, n: usize) {
        match self {
            Self::Bool(v) => v.truncate(n),
            Self::I8(v) => v.truncate(n),
            Self::U8(v) => v.truncate(n),
            Self::I16(v) => v.truncate(n),
            Self::U16(v) => v.truncate(n),
            Self::I32(v) => v.truncate(n),
            Self::U32(v) => v.truncate(n),
            Self::I64(v) => v.truncate(n),
            Self::U64(v) => v.truncate(n),
            Self::F32(v) => v.truncate(n),
            Self::F64(v) => v.truncate(n),
            Self::Index(v) => v.truncate(n),
            Self::Switch { index, tag } => {
                index.truncate(n);
                tag.truncate(n);
            }
        }
    }
}
