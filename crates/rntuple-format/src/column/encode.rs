//! Encoding of [`ColumnValues`] into uncompressed pages (the writer's side
//! of [`super::decode_page`]).

use half::f16;

use super::bits::{pack_bits, pack_bools};
use super::elements::*;
use super::{ColumnSpec, ColumnValues};
use crate::error::{Error, Location, Result};
use crate::model::ColumnType;

/// Encodes `values[range]` as one uncompressed page of `spec`'s column type.
///
/// `values` must be the variant [`ColumnValues::for_column`] gives for the
/// type (or `F64` for 16/32-bit real columns, narrowed to `f32` first as
/// ROOT does for `double` fields). SplitReal16 is never written (ROOT does
/// not implement it). Index32 offsets must fit in 32 bits; Real32Quant
/// values must lie in the value range (ROOT refuses them too).
pub fn encode_page(spec: &ColumnSpec, values: &ColumnValues, range: std::ops::Range<usize>) -> Result<Vec<u8>> {
    let size = spec.packed_size(range.len() as u64);
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    encode_page_into(spec, values, range, &mut out)?;
    Ok(out)
}

/// As [`encode_page`], appending the page to `out`: a writer that encodes
/// many pages reuses one buffer rather than set up a new one per page. On
/// error, `out` may hold part of the page.
pub fn encode_page_into(
    spec: &ColumnSpec,
    values: &ColumnValues,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) -> Result<()> {
    if range.start > range.end || range.end > values.len() {
        return Err(Error::invalid(format!("range {range:?} out of bounds of {} values", values.len())));
    }
    let n = range.len();
    let size = spec.packed_size(n as u64);
    let first = out.len();
    out.reserve(usize::try_from(size).unwrap_or(0));
    use ColumnType as T;
    use ColumnValues as V;
    match (spec.column_type, values) {
        (T::Bit, V::Bool(v)) => pack_bools(&v[range], out),
        (T::Byte | T::Char | T::UInt8, V::U8(v)) => out.extend_from_slice(&v[range]),
        (T::Int8, V::I8(v)) => out.extend(v[range].iter().map(|&x| x as u8)),
        (T::Int16, V::I16(v)) => plain(&v[range], out),
        (T::UInt16, V::U16(v)) => plain(&v[range], out),
        (T::Int32, V::I32(v)) => plain(&v[range], out),
        (T::UInt32, V::U32(v)) => plain(&v[range], out),
        (T::Int64, V::I64(v)) => plain(&v[range], out),
        (T::UInt64, V::U64(v)) => plain(&v[range], out),
        (T::SplitInt16, V::I16(v)) => split_map(&v[range], zigzag_encode16, out),
        (T::SplitInt32, V::I32(v)) => split_map(&v[range], zigzag_encode32, out),
        (T::SplitInt64, V::I64(v)) => split_map(&v[range], zigzag_encode64, out),
        (T::SplitUInt16, V::U16(v)) => split(&v[range], 2, out),
        (T::SplitUInt32, V::U32(v)) => split(&v[range], 4, out),
        (T::SplitUInt64, V::U64(v)) => split(&v[range], 8, out),
        (T::Real64, V::F64(v)) => plain(&v[range], out),
        (T::SplitReal64, V::F64(v)) => split(&v[range], 8, out),
        (T::SplitReal16, _) => {
            return Err(Error::unsupported(
                "writing SplitReal16 columns (not implemented by ROOT)",
                Location::new("page encoding", None),
            ))
        }
        (T::Real32Quant, V::F32(v)) => quantize(spec, v[range].iter().map(|&x| f64::from(x)), out)?,
        (T::Real32Quant, V::F64(v)) => quantize(spec, v[range].iter().copied(), out)?,
        (ct @ (T::Real16 | T::Real32 | T::SplitReal32 | T::Real32Trunc), V::F32(v)) => {
            encode_f32(ct, spec, &v[range], out)
        }
        (ct @ (T::Real16 | T::Real32 | T::SplitReal32 | T::Real32Trunc), V::F64(v)) => {
            let f: Vec<f32> = v[range].iter().map(|&x| x as f32).collect();
            encode_f32(ct, spec, &f, out)
        }
        (T::Index32, V::Index(v)) => {
            for &x in &v[range] {
                plain(&[narrow32(x)?], out);
            }
        }
        (T::Index64, V::Index(v)) => plain(&v[range], out),
        (T::SplitIndex32, V::Index(v)) => {
            let v = &v[range];
            if let Some(&x) = v.iter().find(|&&x| x > u64::from(u32::MAX)) {
                narrow32(x)?;
            }
            let mut prev = 0u32;
            split_map(
                v,
                |x| {
                    let x = x as u32; // fits: checked above
                    let delta = x.wrapping_sub(prev);
                    prev = x;
                    delta
                },
                out,
            );
        }
        (T::SplitIndex64, V::Index(v)) => {
            let mut prev = 0u64;
            split_map(
                &v[range],
                |x| {
                    let delta = x.wrapping_sub(prev);
                    prev = x;
                    delta
                },
                out,
            );
        }
        (T::Switch, V::Switch { index, tag }) => {
            if index.len() != tag.len() {
                return Err(Error::invalid(format!(
                    "switch column with {} indices and {} tags",
                    index.len(),
                    tag.len()
                )));
            }
            for (&i, &t) in index[range.clone()].iter().zip(&tag[range]) {
                out.extend_from_slice(&i.to_le_bytes());
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
        (ct, values) => {
            return Err(Error::invalid(format!("cannot encode {} values as a {ct} column", values.kind())));
        }
    }
    debug_assert_eq!((out.len() - first) as u64, size);
    Ok(())
}

fn plain<T: Elem>(v: &[T], out: &mut Vec<u8>) {
    out.reserve(v.len() * T::SIZE);
    for &x in v {
        x.push_le(out);
    }
}

fn narrow32(x: u64) -> Result<u32> {
    u32::try_from(x).map_err(|_| Error::invalid(format!("offset {x} does not fit in an Index32 column")))
}

fn encode_f32(ct: ColumnType, spec: &ColumnSpec, v: &[f32], out: &mut Vec<u8>) {
    match ct {
        ColumnType::Real16 => {
            for &x in v {
                out.extend_from_slice(&f16::from_f32(x).to_bits().to_le_bytes());
            }
        }
        ColumnType::Real32 => plain(v, out),
        ColumnType::SplitReal32 => split(v, 4, out),
        _ => {
            // Real32Trunc: keep the top `bits` bits of the pattern (truncation, as ROOT).
            let shift = 32 - u32::from(spec.bits_on_storage);
            pack_bits(v.iter().map(|x| x.to_bits() >> shift), u32::from(spec.bits_on_storage), out);
        }
    }
}

/// ROOT's `Quantize::QuantizeReals`: `q = (u32)(0.5 + (x - min) * ((2^n - 1) / (max - min)))`.
fn quantize(spec: &ColumnSpec, values: impl Iterator<Item = f64> + Clone, out: &mut Vec<u8>) -> Result<()> {
    let (min, max) = spec.value_range.unwrap_or((0.0, 0.0));
    let bits = u32::from(spec.bits_on_storage);
    let q_max = ((1u64 << bits) - 1) as f64;
    let scale = q_max / (max - min);
    let outside = values.clone().filter(|x| !(min <= *x && *x <= max)).count();
    if outside > 0 {
        return Err(Error::invalid(format!("{outside} values are outside the quantization range [{min}, {max}]")));
    }
    pack_bits(values.map(|x| (0.5 + (x - min) * scale) as u32), bits, out);
    Ok(())
}
