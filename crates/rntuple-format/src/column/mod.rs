//! Column elements: their in-memory form and the encodings of pages
//! (RNTuple binary format 1.0, section "Column Description").
//!
//! A page holds `num_elements` elements of one column, packed
//! `bits_on_storage` bits each (`ceil(n * bits / 8)` bytes). On top of the
//! plain little-endian layout, split types transpose the bytes of the page
//! (all first bytes, then all second bytes, ...), signed split integers are
//! zigzag-encoded first, and split index columns delta-encoded first; all of
//! this restarts with every page.

/// The name of the variant of a [`ColumnValues`] or a [`ColumnSlice`] (the
/// two enums have the same variants), for messages.
macro_rules! variant_name {
    ($value:expr) => {
        match $value {
            Self::Bool(_) => "Bool",
            Self::I8(_) => "I8",
            Self::U8(_) => "U8",
            Self::I16(_) => "I16",
            Self::U16(_) => "U16",
            Self::I32(_) => "I32",
            Self::U32(_) => "U32",
            Self::I64(_) => "I64",
            Self::U64(_) => "U64",
            Self::F32(_) => "F32",
            Self::F64(_) => "F64",
            Self::Index(_) => "Index",
            Self::Switch { .. } => "Switch",
        }
    };
}

mod bits;
mod decode;
mod elements;
mod encode;
mod slice;

pub use decode::{can_decode_into, decode_page, decode_page_into, decode_page_range_into};
pub use encode::{encode_page, encode_page_into};
pub use slice::ColumnSlice;

use crate::error::{Error, Location, Result};
use crate::model::{ColumnDescriptor, ColumnType};

/// Decoded elements of a column, one variant per in-memory element type.
///
/// Index columns hold the offsets as stored: cluster-relative, the end of
/// each collection entry. Switch columns hold the index into the chosen
/// alternative and the 1-based tag (0: invalid variant).
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnValues {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Index(Vec<u64>),
    Switch { index: Vec<u64>, tag: Vec<u32> },
}

impl ColumnValues {
    /// An empty buffer of the natural in-memory type of a column type:
    /// Bit → Bool; Byte, Char, UInt8 → U8; Int8 → I8; (Split)(U)IntN → the
    /// matching integer; Real16, SplitReal16, (Split)Real32, Real32Trunc,
    /// Real32Quant → F32; (Split)Real64 → F64; (Split)Index32/64 → Index;
    /// Switch → Switch. Unknown column types are unsupported.
    pub fn for_column(ct: ColumnType) -> Result<Self> {
        use ColumnType::*;
        Ok(match ct {
            Bit => Self::Bool(Vec::new()),
            Byte | Char | UInt8 => Self::U8(Vec::new()),
            Int8 => Self::I8(Vec::new()),
            Int16 | SplitInt16 => Self::I16(Vec::new()),
            UInt16 | SplitUInt16 => Self::U16(Vec::new()),
            Int32 | SplitInt32 => Self::I32(Vec::new()),
            UInt32 | SplitUInt32 => Self::U32(Vec::new()),
            Int64 | SplitInt64 => Self::I64(Vec::new()),
            UInt64 | SplitUInt64 => Self::U64(Vec::new()),
            Real16 | SplitReal16 | Real32 | SplitReal32 | Real32Trunc | Real32Quant => Self::F32(Vec::new()),
            Real64 | SplitReal64 => Self::F64(Vec::new()),
            Index32 | Index64 | SplitIndex32 | SplitIndex64 => Self::Index(Vec::new()),
            Switch => Self::Switch { index: Vec::new(), tag: Vec::new() },
            Unknown(id) => {
                return Err(Error::unsupported(format!("column type {id:#06x}"), Location::new("column values", None)))
            }
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Self::Bool(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::U8(v) => v.len(),
            Self::I16(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::Index(v) => v.len(),
            Self::Switch { index, .. } => index.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes room for `n` more elements (growing as `push` would), or
    /// [`crate::Error::OutOfMemory`] naming `what` when the memory is not to be had.
    pub fn try_reserve(&mut self, n: usize, what: impl Fn() -> String) -> crate::Result<()> {
        use crate::alloc::try_grow as r;
        match self {
            Self::Bool(v) => r(v, n, what),
            Self::I8(v) => r(v, n, what),
            Self::U8(v) => r(v, n, what),
            Self::I16(v) => r(v, n, what),
            Self::U16(v) => r(v, n, what),
            Self::I32(v) => r(v, n, what),
            Self::U32(v) => r(v, n, what),
            Self::I64(v) => r(v, n, what),
            Self::U64(v) | Self::Index(v) => r(v, n, what),
            Self::F32(v) => r(v, n, what),
            Self::F64(v) => r(v, n, what),
            Self::Switch { index, tag } => {
                r(index, n, &what)?;
                r(tag, n, &what)
            }
        }
    }

    /// Appends `n` zero elements (what the spec prescribes for the range
    /// before the first element of a deferred column).
    pub fn push_zeros(&mut self, n: usize) {
        fn z<T: Clone + Default>(v: &mut Vec<T>, n: usize) {
            v.resize(v.len() + n, T::default());
        }
        match self {
            Self::Bool(v) => z(v, n),
            Self::I8(v) => z(v, n),
            Self::U8(v) => z(v, n),
            Self::I16(v) => z(v, n),
            Self::U16(v) => z(v, n),
            Self::I32(v) => z(v, n),
            Self::U32(v) => z(v, n),
            Self::I64(v) => z(v, n),
            Self::U64(v) => z(v, n),
            Self::F32(v) => z(v, n),
            Self::F64(v) => z(v, n),
            Self::Index(v) => z(v, n),
            Self::Switch { index, tag } => {
                z(index, n);
                z(tag, n);
            }
        }
    }

    /// Reserves room for `n` more elements.
    pub fn reserve(&mut self, n: usize) {
        match self {
            Self::Bool(v) => v.reserve(n),
            Self::I8(v) => v.reserve(n),
            Self::U8(v) => v.reserve(n),
            Self::I16(v) => v.reserve(n),
            Self::U16(v) => v.reserve(n),
            Self::I32(v) => v.reserve(n),
            Self::U32(v) => v.reserve(n),
            Self::I64(v) => v.reserve(n),
            Self::U64(v) => v.reserve(n),
            Self::F32(v) => v.reserve(n),
            Self::F64(v) => v.reserve(n),
            Self::Index(v) => v.reserve(n),
            Self::Switch { index, tag } => {
                index.reserve(n);
                tag.reserve(n);
            }
        }
    }

    /// Name of the variant, for messages.
    pub fn kind(&self) -> &'static str {
        variant_name!(self)
    }
}

/// What is needed to decode or encode the pages of one physical column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnSpec {
    pub column_type: ColumnType,
    pub bits_on_storage: u16,
    /// Inclusive (min, max); required for `Real32Quant`.
    pub value_range: Option<(f64, f64)>,
}

impl ColumnSpec {
    /// Checks the bits on storage against the type and, for `Real32Quant`,
    /// the value range (present, finite, min ≤ max).
    pub fn new(column_type: ColumnType, bits_on_storage: u16, value_range: Option<(f64, f64)>) -> Result<Self> {
        let here = || Location::new(format!("column of type {column_type}"), None);
        if let ColumnType::Unknown(id) = column_type {
            return Err(Error::unsupported(format!("column type {id:#06x}"), here()));
        }
        let (lo, hi) = column_type.bits_range();
        if bits_on_storage < lo || bits_on_storage > hi {
            return Err(Error::out_of_spec(
                format!("{bits_on_storage} bits on storage, the type allows {lo}..={hi}"),
                here(),
            ));
        }
        if column_type == ColumnType::Real32Quant {
            match value_range {
                Some((min, max)) if min.is_finite() && max.is_finite() && min <= max => {}
                Some((min, max)) => {
                    return Err(Error::out_of_spec(format!("invalid quantization range [{min}, {max}]"), here()))
                }
                None => return Err(Error::out_of_spec("Real32Quant column without a value range", here())),
            }
        }
        Ok(Self { column_type, bits_on_storage, value_range })
    }

    /// The spec of a column described in the header or schema extension.
    pub fn from_descriptor(c: &ColumnDescriptor) -> Result<Self> {
        Self::new(c.column_type, c.bits_on_storage, c.value_range)
    }

    /// Bytes of an uncompressed page of `num_elements` elements.
    pub fn packed_size(&self, num_elements: u64) -> u64 {
        let bits = u128::from(num_elements) * u128::from(self.bits_on_storage);
        u64::try_from(bits.div_ceil(8)).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests;
