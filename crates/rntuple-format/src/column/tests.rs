use super::*;
use crate::model::ColumnType as T;

fn spec(ct: T) -> ColumnSpec {
    ColumnSpec::new(ct, ct.default_bits().unwrap_or(0), None).unwrap()
}

fn round_trip(spec: &ColumnSpec, values: &ColumnValues) -> ColumnValues {
    let page = encode_page(spec, values, 0..values.len()).unwrap();
    assert_eq!(page.len() as u64, spec.packed_size(values.len() as u64), "{:?}", spec.column_type);
    let mut out = ColumnValues::for_column(spec.column_type).unwrap();
    // decode in two pages to check appending
    let half = values.len() / 2;
    let p1 = encode_page(spec, values, 0..half).unwrap();
    let p2 = encode_page(spec, values, half..values.len()).unwrap();
    decode_page(spec, &p1, half, &mut out).unwrap();
    decode_page(spec, &p2, values.len() - half, &mut out).unwrap();
    let mut whole = ColumnValues::for_column(spec.column_type).unwrap();
    decode_page(spec, &page, values.len(), &mut whole).unwrap();
    assert_eq!(format!("{whole:?}"), format!("{out:?}"));
    out
}

fn assert_round_trip(ct: T, values: ColumnValues) {
    let s = spec(ct);
    let back = round_trip(&s, &values);
    // compare via Debug so NaN compares equal to NaN with the same payload
    assert_eq!(format!("{back:?}"), format!("{values:?}"), "{ct}");
}

#[test]
fn integers_round_trip() {
    let i16s = vec![0, 1, -1, i16::MIN, i16::MAX, 300, -300];
    let i32s = vec![0, 1, -1, i32::MIN, i32::MAX, 70000, -70000];
    let i64s = vec![0, 1, -1, i64::MIN, i64::MAX, 1 << 40, -(1 << 40)];
    for ct in [T::Int16, T::SplitInt16] {
        assert_round_trip(ct, ColumnValues::I16(i16s.clone()));
    }
    for ct in [T::Int32, T::SplitInt32] {
        assert_round_trip(ct, ColumnValues::I32(i32s.clone()));
    }
    for ct in [T::Int64, T::SplitInt64] {
        assert_round_trip(ct, ColumnValues::I64(i64s.clone()));
    }
    for ct in [T::UInt16, T::SplitUInt16] {
        assert_round_trip(ct, ColumnValues::U16(vec![0, 1, u16::MAX, 0x1234]));
    }
    for ct in [T::UInt32, T::SplitUInt32] {
        assert_round_trip(ct, ColumnValues::U32(vec![0, 1, u32::MAX, 0x1234_5678, 9]));
    }
    for ct in [T::UInt64, T::SplitUInt64] {
        assert_round_trip(ct, ColumnValues::U64(vec![0, 1, u64::MAX, 0x0123_4567_89ab_cdef]));
    }
    assert_round_trip(T::Int8, ColumnValues::I8(vec![0, -1, i8::MIN, i8::MAX]));
    for ct in [T::Byte, T::Char, T::UInt8] {
        assert_round_trip(ct, ColumnValues::U8(vec![0, 255, b'a']));
    }
}

#[test]
fn split_and_zigzag_layout() {
    // SplitInt32 of [1, -1, 2]: zigzag 2, 1, 4; then all low bytes first.
    let page = encode_page(&spec(T::SplitInt32), &ColumnValues::I32(vec![1, -1, 2]), 0..3).unwrap();
    assert_eq!(page, [2, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // SplitUInt16 of [0x0102, 0x0304]
    let page = encode_page(&spec(T::SplitUInt16), &ColumnValues::U16(vec![0x0102, 0x0304]), 0..2).unwrap();
    assert_eq!(page, [0x02, 0x04, 0x01, 0x03]);
    // SplitIndex64 of [3, 3, 10]: deltas 3, 0, 7
    let page = encode_page(&spec(T::SplitIndex64), &ColumnValues::Index(vec![3, 3, 10]), 0..3).unwrap();
    assert_eq!(&page[..3], [3, 0, 7]);
    assert!(page[3..].iter().all(|&b| b == 0));
}

/// Pages longer than a block of the split encoder (and not a multiple of
/// it), appended after bytes already in the buffer: byte `b` of element `i`
/// lands at `b * n + i`, after zigzag (signed) or delta (index) encoding.
#[test]
fn split_pages_across_blocks_append() {
    let n = 200usize;
    let signed: Vec<i64> = (0..n as i64).map(|i| (i - 100) * 0x0102_0304_0506).collect();
    let offsets: Vec<u64> = (0..n as u64).map(|i| i * i).collect();
    let reals: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 7.0).collect();
    let cases: [(T, ColumnValues, Vec<u64>, usize); 3] = [
        (
            T::SplitInt64,
            ColumnValues::I64(signed.clone()),
            signed.iter().map(|&x| if x >= 0 { 2 * x as u64 } else { 2 * x.unsigned_abs() - 1 }).collect(),
            8,
        ),
        (
            T::SplitIndex32,
            ColumnValues::Index(offsets.clone()),
            (0..n).map(|i| offsets[i] - if i == 0 { 0 } else { offsets[i - 1] }).collect(),
            4,
        ),
        (T::SplitReal32, ColumnValues::F32(reals.clone()), reals.iter().map(|x| u64::from(x.to_bits())).collect(), 4),
    ];
    for (ct, values, encoded, size) in cases {
        let mut out = vec![0xAA; 3];
        encode_page_into(&spec(ct), &values, 0..n, &mut out).unwrap();
        assert_eq!(out.len(), 3 + n * size, "{ct}");
        assert_eq!(out[..3], [0xAA; 3]);
        for (i, e) in encoded.iter().enumerate() {
            for b in 0..size {
                assert_eq!(out[3 + b * n + i], (e >> (8 * b)) as u8, "{ct}: byte {b} of element {i}");
            }
        }
        assert_eq!(encode_page(&spec(ct), &values, 0..n).unwrap(), out[3..], "{ct}");
    }
}

/// Every split encoding, pages of ragged sizes around the split encoder's
/// block (64 elements) taken from inside a longer column, appended after
/// bytes already in the buffer: byte `b` of element `i` lands at
/// `b * n + i`, after zigzag (signed), delta (index, from 0 at the page's
/// start) or f64-to-f32 (reals) encoding; `encode_page` gives the same page.
#[test]
fn every_split_encoding_on_ragged_pages() {
    let total = 400usize;
    let raw = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let zz = |x: i64| ((x << 1) ^ (x >> 63)) as u64;
    let offsets: Vec<u64> = (0..total as u64).map(|i| i * i + 3 * i).collect();
    let f64s: Vec<f64> = (0..total).map(|i| (raw(i) >> 40) as f64 * 0.37 - 1e5).collect();
    type Expect = Box<dyn Fn(std::ops::Range<usize>) -> Vec<u64>>;
    let o = offsets.clone();
    let f = f64s.clone();
    let cases: Vec<(T, ColumnValues, usize, Expect)> = vec![
        (
            T::SplitInt16,
            ColumnValues::I16((0..total).map(|i| raw(i) as i16).collect()),
            2,
            Box::new(move |r| r.map(|i| zz(i64::from(raw(i) as i16)) & 0xFFFF).collect()),
        ),
        (
            T::SplitInt32,
            ColumnValues::I32((0..total).map(|i| raw(i) as i32).collect()),
            4,
            Box::new(move |r| r.map(|i| zz(i64::from(raw(i) as i32)) & 0xFFFF_FFFF).collect()),
        ),
        (
            T::SplitInt64,
            ColumnValues::I64((0..total).map(|i| raw(i) as i64).collect()),
            8,
            Box::new(move |r| r.map(|i| zz(raw(i) as i64)).collect()),
        ),
        (
            T::SplitUInt16,
            ColumnValues::U16((0..total).map(|i| raw(i) as u16).collect()),
            2,
            Box::new(move |r| r.map(|i| raw(i) & 0xFFFF).collect()),
        ),
        (
            T::SplitUInt32,
            ColumnValues::U32((0..total).map(|i| raw(i) as u32).collect()),
            4,
            Box::new(move |r| r.map(|i| raw(i) & 0xFFFF_FFFF).collect()),
        ),
        (T::SplitUInt64, ColumnValues::U64((0..total).map(raw).collect()), 8, Box::new(move |r| r.map(raw).collect())),
        (
            T::SplitReal64,
            ColumnValues::F64(f64s.clone()),
            8,
            Box::new({
                let f = f.clone();
                move |r| r.map(|i| f[i].to_bits()).collect()
            }),
        ),
        (
            T::SplitReal32,
            ColumnValues::F64(f64s.clone()),
            4,
            Box::new(move |r| r.map(|i| u64::from((f[i] as f32).to_bits())).collect()),
        ),
        (
            T::SplitIndex32,
            ColumnValues::Index(offsets.clone()),
            4,
            Box::new({
                let o = o.clone();
                move |r: std::ops::Range<usize>| {
                    let s = r.start;
                    r.map(|i| o[i] - if i == s { 0 } else { o[i - 1] }).collect()
                }
            }),
        ),
        (
            T::SplitIndex64,
            ColumnValues::Index(offsets.clone()),
            8,
            Box::new(move |r: std::ops::Range<usize>| {
                let s = r.start;
                r.map(|i| o[i] - if i == s { 0 } else { o[i - 1] }).collect()
            }),
        ),
    ];
    for (ct, values, size, expect) in &cases {
        for (start, n) in [(0, 0), (5, 1), (0, 63), (7, 64), (1, 65), (100, 127), (3, 129), (0, 400)] {
            let mut out = vec![0xAA; 5];
            encode_page_into(&spec(*ct), values, start..start + n, &mut out).unwrap();
            assert_eq!(out.len(), 5 + n * size, "{ct}, {n} values");
            assert_eq!(out[..5], [0xAA; 5], "{ct}");
            for (i, e) in expect(start..start + n).iter().enumerate() {
                for b in 0..*size {
                    assert_eq!(out[5 + b * n + i], (e >> (8 * b)) as u8, "{ct}, {n} values: byte {b} of element {i}");
                }
            }
            assert_eq!(encode_page(&spec(*ct), values, start..start + n).unwrap(), out[5..], "{ct}, {n} values");
        }
    }
}

#[test]
fn reals_round_trip() {
    let f32s =
        vec![0.0, -0.0, 1.5, -2.25, f32::MAX, f32::MIN_POSITIVE, 1e-45, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    let f64s = vec![0.0, -0.0, 1.5, f64::MAX, f64::MIN_POSITIVE, 5e-324, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    for ct in [T::Real32, T::SplitReal32] {
        assert_round_trip(ct, ColumnValues::F32(f32s.clone()));
    }
    for ct in [T::Real64, T::SplitReal64] {
        assert_round_trip(ct, ColumnValues::F64(f64s.clone()));
    }
    // Real16: values exactly representable in half precision survive
    let halves = vec![0.0, -0.0, 1.0, -2.5, 65504.0, 5.960_464_5e-8, f32::INFINITY, f32::NEG_INFINITY];
    assert_round_trip(T::Real16, ColumnValues::F32(halves));
    // NaN stays NaN, rounding is to nearest
    let back = round_trip(&spec(T::Real16), &ColumnValues::F32(vec![f32::NAN, 1.0 + 1.0 / 4096.0, 70000.0]));
    let ColumnValues::F32(b) = back else { panic!() };
    assert!(b[0].is_nan());
    assert_eq!(b[1], 1.0);
    assert_eq!(b[2], f32::INFINITY);
}

#[test]
fn split_real16_is_read() {
    let vals = [1.0f32, -2.0, 0.5, 65504.0, 3.0];
    let bits: Vec<u16> = vals.iter().map(|&x| half::f16::from_f32(x).to_bits()).collect();
    let mut page: Vec<u8> = bits.iter().map(|b| *b as u8).collect();
    page.extend(bits.iter().map(|b| (b >> 8) as u8));
    let s = spec(T::SplitReal16);
    let mut out = ColumnValues::for_column(T::SplitReal16).unwrap();
    decode_page(&s, &page, vals.len(), &mut out).unwrap();
    assert_eq!(out, ColumnValues::F32(vals.to_vec()));
    let mut wide = ColumnValues::F64(vec![]);
    decode_page(&s, &page, vals.len(), &mut wide).unwrap();
    assert_eq!(wide, ColumnValues::F64(vals.iter().map(|&x| f64::from(x)).collect()));
    assert!(encode_page(&s, &out, 0..1).is_err());
}

#[test]
fn bits_round_trip_odd_counts() {
    for n in [0usize, 1, 7, 8, 9, 17, 64, 65] {
        let v: Vec<bool> = (0..n).map(|i| i % 3 == 0 || i % 5 == 1).collect();
        assert_round_trip(T::Bit, ColumnValues::Bool(v));
    }
}

#[test]
fn indices_round_trip() {
    let offsets = vec![0, 3, 3, 10, 4_000_000_000, u32::MAX as u64];
    for ct in [T::Index32, T::SplitIndex32, T::Index64, T::SplitIndex64] {
        assert_round_trip(ct, ColumnValues::Index(offsets.clone()));
    }
    let big = vec![1u64 << 40, u64::MAX, 5];
    for ct in [T::Index64, T::SplitIndex64] {
        assert_round_trip(ct, ColumnValues::Index(big.clone()));
    }
    assert!(encode_page(&spec(T::Index32), &ColumnValues::Index(big.clone()), 0..3).is_err());
    assert!(encode_page(&spec(T::SplitIndex32), &ColumnValues::Index(big), 0..3).is_err());
}

#[test]
fn split_index32_deltas_wrap_at_32_bits() {
    // Deltas 0xFFFF_FFFF and 2: ROOT accumulates in uint32 and wraps.
    let mut page = Vec::new();
    let d = [0xFFFF_FFFFu32, 2];
    for b in 0..4 {
        page.extend(d.iter().map(|x| (x >> (8 * b)) as u8));
    }
    let mut out = ColumnValues::Index(vec![]);
    decode_page(&spec(T::SplitIndex32), &page, 2, &mut out).unwrap();
    assert_eq!(out, ColumnValues::Index(vec![0xFFFF_FFFF, 1]));
}

#[test]
fn switch_layout() {
    let v = ColumnValues::Switch { index: vec![7, 0, u64::MAX], tag: vec![1, 0, 125] };
    let page = encode_page(&spec(T::Switch), &v, 0..3).unwrap();
    assert_eq!(page.len(), 36);
    assert_eq!(&page[..12], [7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
    assert_round_trip(T::Switch, v);
}

#[test]
fn real32_trunc() {
    for bits in [10u16, 16, 23, 31] {
        let s = ColumnSpec::new(T::Real32Trunc, bits, None).unwrap();
        let vals = vec![1.0f32, -1.5, 3.140625, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1e30, 7.0];
        let back = round_trip(&s, &ColumnValues::F32(vals.clone()));
        let ColumnValues::F32(b) = back else { panic!() };
        let mask = u32::MAX << (32 - bits);
        for (x, y) in vals.iter().zip(&b) {
            assert_eq!(y.to_bits(), x.to_bits() & mask, "bits {bits} value {x}");
        }
        // NaN keeps its top bits (quiet NaN bit is bit 22, within 10+ bits)
        let back = round_trip(&s, &ColumnValues::F32(vec![f32::NAN]));
        let ColumnValues::F32(b) = back else { panic!() };
        assert!(b[0].is_nan());
    }
    // 3 elements of 10 bits: 30 bits -> 4 bytes; ROOT's packing of 1.0f32
    // (0x3F80_0000, top 10 bits 0x0FE) is 0xFE, 0x00 in the first two bytes.
    let s = ColumnSpec::new(T::Real32Trunc, 10, None).unwrap();
    let page = encode_page(&s, &ColumnValues::F32(vec![1.0, 1.0, 1.0]), 0..3).unwrap();
    assert_eq!(page.len(), 4);
    assert_eq!(page[0], 0xFE);
    assert_eq!(page[1] & 0b11, 0);
    assert!(ColumnSpec::new(T::Real32Trunc, 9, None).is_err());
    assert!(ColumnSpec::new(T::Real32Trunc, 32, None).is_err());
}

#[test]
fn real32_quant() {
    let (min, max) = (-10.0, 25.0);
    for bits in [1u16, 2, 7, 16, 20, 31, 32] {
        let s = ColumnSpec::new(T::Real32Quant, bits, Some((min, max))).unwrap();
        let vals = vec![-10.0f32, 25.0, 0.0, 3.3, -9.999, 24.999, 12.5];
        let back = round_trip(&s, &ColumnValues::F32(vals.clone()));
        let ColumnValues::F32(b) = back else { panic!() };
        let q_max = ((1u64 << bits) - 1) as f64;
        let step = (max - min) / q_max;
        assert_eq!(b[0], -10.0, "min is exact");
        assert_eq!(b[1], 25.0, "max is exact");
        for (x, y) in vals.iter().zip(&b) {
            assert!((f64::from(*x) - f64::from(*y)).abs() <= step / 2.0 + 1e-5, "bits {bits}: {x} -> {y}");
            assert!((min as f32..=max as f32).contains(y));
        }
        // the exact formula of ROOT's UnquantizeReals for a double field
        let page = encode_page(&s, &ColumnValues::F32(vec![3.3]), 0..1).unwrap();
        let mut wide = ColumnValues::F64(vec![]);
        decode_page(&s, &page, 1, &mut wide).unwrap();
        let q = (0.5 + (f64::from(3.3f32) - min) * (q_max / (max - min))) as u32;
        assert_eq!(wide, ColumnValues::F64(vec![(f64::from(q) * ((max - min) / q_max) + min).min(max)]));
    }
    let s = ColumnSpec::new(T::Real32Quant, 8, Some((0.0, 1.0))).unwrap();
    for bad in [1.5f32, -0.1, f32::NAN, f32::INFINITY] {
        assert!(encode_page(&s, &ColumnValues::F32(vec![bad]), 0..1).is_err(), "{bad}");
    }
    assert!(ColumnSpec::new(T::Real32Quant, 8, None).is_err());
    assert!(ColumnSpec::new(T::Real32Quant, 8, Some((1.0, 0.0))).is_err());
    assert!(ColumnSpec::new(T::Real32Quant, 8, Some((0.0, f64::INFINITY))).is_err());
    assert!(ColumnSpec::new(T::Real32Quant, 0, Some((0.0, 1.0))).is_err());
    assert!(ColumnSpec::new(T::Real32Quant, 33, Some((0.0, 1.0))).is_err());
    // a degenerate range decodes to its single value
    let s = ColumnSpec::new(T::Real32Quant, 4, Some((2.0, 2.0))).unwrap();
    assert_round_trip_spec(&s, ColumnValues::F32(vec![2.0, 2.0, 2.0]));
}

fn assert_round_trip_spec(s: &ColumnSpec, v: ColumnValues) {
    assert_eq!(round_trip(s, &v), v);
}

#[test]
fn wrong_page_sizes_and_types_are_errors() {
    let s = spec(T::Real32);
    let mut out = ColumnValues::for_column(T::Real32).unwrap();
    assert!(decode_page(&s, &[0; 7], 2, &mut out).is_err());
    assert!(decode_page(&s, &[0; 9], 2, &mut out).is_err());
    let mut wrong = ColumnValues::I32(vec![]);
    assert!(matches!(decode_page(&s, &[0; 8], 2, &mut wrong), Err(Error::InvalidArgument { .. })));
    assert!(encode_page(&s, &ColumnValues::I32(vec![1]), 0..1).is_err());
    assert!(encode_page(&s, &ColumnValues::F32(vec![1.0]), 0..2).is_err());
    // bit-packed sizes
    assert_eq!(spec(T::Bit).packed_size(9), 2);
    assert_eq!(ColumnSpec::new(T::Real32Trunc, 10, None).unwrap().packed_size(3), 4);
    assert_eq!(spec(T::Switch).packed_size(2), 24);
    assert_eq!(spec(T::Real64).packed_size(u64::MAX), u64::MAX);
    let mut bits = ColumnValues::Bool(vec![]);
    assert!(decode_page(&spec(T::Bit), &[0; 1], 9, &mut bits).is_err());
}

#[test]
fn spec_validation() {
    let c = ColumnDescriptor {
        column_type: T::Real32,
        bits_on_storage: 16,
        field_id: 0,
        flags: 0,
        representation_index: 0,
        first_element_index: None,
        value_range: None,
    };
    assert!(ColumnSpec::from_descriptor(&c).is_err());
    let c = ColumnDescriptor { bits_on_storage: 32, ..c };
    assert!(ColumnSpec::from_descriptor(&c).is_ok());
    let c = ColumnDescriptor { column_type: T::Unknown(0x99), ..c };
    assert!(matches!(ColumnSpec::from_descriptor(&c), Err(Error::Unsupported { .. })));
    assert!(ColumnValues::for_column(T::Unknown(0x99)).is_err());
}

#[test]
fn values_helpers() {
    for id in 0..=0x1D {
        let ct = T::from_id(id);
        let mut v = ColumnValues::for_column(ct).unwrap();
        assert!(v.is_empty());
        v.reserve(10);
        v.push_zeros(3);
        assert_eq!(v.len(), 3);
        // zeros encode to all-zero bytes for every type but Real32Quant (min + 0)
        let s = match ct {
            T::Real32Trunc => ColumnSpec::new(ct, 12, None).unwrap(),
            T::Real32Quant => ColumnSpec::new(ct, 12, Some((0.0, 1.0))).unwrap(),
            T::SplitReal16 => continue,
            _ => spec(ct),
        };
        let page = encode_page(&s, &v, 0..3).unwrap();
        assert!(page.iter().all(|&b| b == 0), "{ct}");
    }
}

#[test]
fn widening_reads() {
    let vals = vec![1.5f32, -3.0, 1e-3];
    for ct in [T::Real32, T::SplitReal32] {
        let s = spec(ct);
        let page = encode_page(&s, &ColumnValues::F32(vals.clone()), 0..3).unwrap();
        let mut wide = ColumnValues::F64(vec![]);
        decode_page(&s, &page, 3, &mut wide).unwrap();
        assert_eq!(wide, ColumnValues::F64(vals.iter().map(|&x| f64::from(x)).collect()));
    }
}

/// `expect[from..from + len]` as a buffer of its own.
fn window_of(expect: &ColumnValues, from: usize, len: usize) -> ColumnValues {
    let mut want = expect.zeros_like(len);
    want.as_slice_mut().convert_from(expect, from).unwrap();
    want
}

/// Every element range of a page of `values` (encoded as `spec`) decodes
/// straight into its window to `expect` over that range.
fn assert_ranges(spec: &ColumnSpec, values: &ColumnValues, expect: &ColumnValues) {
    let page = encode_page(spec, values, 0..values.len()).unwrap();
    assert_page_ranges(spec, &page, expect);
}

/// Every element range of `page` decodes into its window to `expect` over that range.
fn assert_page_ranges(spec: &ColumnSpec, page: &[u8], expect: &ColumnValues) {
    let n = expect.len();
    for from in [0, 1, 2, 3, 7, 8, 9, 16, 17, n - 2, n - 1] {
        for len in [0, 1, 2, 5, 8, 9, 15, n - from] {
            if from + len > n {
                continue;
            }
            let mut got = expect.zeros_like(len);
            decode_page_range_into(spec, page, n, from, got.as_slice_mut()).unwrap();
            let want = window_of(expect, from, len);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{} elements {from}+{len}", spec.column_type);
        }
    }
    // A range past the page is refused, not read.
    let mut past = expect.zeros_like(2);
    let e = decode_page_range_into(spec, page, n, n - 1, past.as_slice_mut()).unwrap_err();
    assert!(e.to_string().contains(&format!("elements {}..{} of a page of {n}", n - 1, n + 1)), "{e}");
}

#[test]
fn ranges_of_a_page_decode_to_the_values_written() {
    let n = 41usize;
    let same = |ct: T, v: ColumnValues| assert_ranges(&spec(ct), &v, &v);
    same(T::Bit, ColumnValues::Bool((0..n).map(|i| i % 3 == 0 || i % 7 == 1).collect()));
    for ct in [T::Byte, T::Char, T::UInt8] {
        same(ct, ColumnValues::U8((0..n).map(|i| (i * 37) as u8).collect()));
    }
    same(T::Int8, ColumnValues::I8((0..n).map(|i| (i as i8).wrapping_mul(53)).collect()));
    for ct in [T::Int16, T::SplitInt16] {
        same(ct, ColumnValues::I16((0..n).map(|i| (i as i16 - 20) * 1001).collect()));
    }
    for ct in [T::UInt16, T::SplitUInt16] {
        same(ct, ColumnValues::U16((0..n).map(|i| (i as u16) * 1597).collect()));
    }
    for ct in [T::Int32, T::SplitInt32] {
        same(ct, ColumnValues::I32((0..n).map(|i| (i as i32 - 20) * 100_003).collect()));
    }
    for ct in [T::UInt32, T::SplitUInt32] {
        same(ct, ColumnValues::U32((0..n).map(|i| (i as u32).wrapping_mul(2_654_435_761)).collect()));
    }
    for ct in [T::Int64, T::SplitInt64] {
        same(ct, ColumnValues::I64((0..n).map(|i| (i as i64 - 20) * 1_000_000_007_000).collect()));
    }
    for ct in [T::UInt64, T::SplitUInt64] {
        same(ct, ColumnValues::U64((0..n).map(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect()));
    }
    let f32s: Vec<f32> = (0..n).map(|i| (i as f32 - 20.0) * 1.375e3).collect();
    let f64s: Vec<f64> = f32s.iter().map(|&x| f64::from(x)).collect();
    for ct in [T::Real32, T::SplitReal32] {
        same(ct, ColumnValues::F32(f32s.clone()));
        // Widened into doubles.
        assert_ranges(&spec(ct), &ColumnValues::F32(f32s.clone()), &ColumnValues::F64(f64s.clone()));
    }
    for ct in [T::Real64, T::SplitReal64] {
        same(ct, ColumnValues::F64((0..n).map(|i| (i as f64 - 20.0) / 3.0).collect()));
    }
    // Half floats, truncated and quantized reals: values they hold exactly.
    let halves: Vec<f32> = (0..n).map(|i| (i as f32 - 20.0) * 0.5).collect();
    let wide = ColumnValues::F64(halves.iter().map(|&x| f64::from(x)).collect());
    same(T::Real16, ColumnValues::F32(halves.clone()));
    assert_ranges(&spec(T::Real16), &ColumnValues::F32(halves.clone()), &wide);
    // SplitReal16 (never written): the Real16 page's low bytes, then its high bytes.
    let plain = encode_page(&spec(T::Real16), &ColumnValues::F32(halves.clone()), 0..n).unwrap();
    let split: Vec<u8> = plain.iter().step_by(2).chain(plain.iter().skip(1).step_by(2)).copied().collect();
    assert_page_ranges(&spec(T::SplitReal16), &split, &ColumnValues::F32(halves.clone()));
    assert_page_ranges(&spec(T::SplitReal16), &split, &wide);
    let trunc = ColumnSpec::new(T::Real32Trunc, 13, None).unwrap();
    let short: Vec<f32> = (0..n).map(|i| [1.5, -2.25, 1024.0, 0.75, -3.5][i % 5] * (1 + i % 3) as f32).collect();
    assert_ranges(&trunc, &ColumnValues::F32(short.clone()), &ColumnValues::F32(short.clone()));
    let wide = ColumnValues::F64(short.iter().map(|&x| f64::from(x)).collect());
    assert_ranges(&trunc, &ColumnValues::F32(short), &wide);
    let quant = ColumnSpec::new(T::Real32Quant, 7, Some((0.0, 127.0))).unwrap();
    let grid: Vec<f32> = (0..n).map(|i| ((i * 45) % 128) as f32).collect();
    assert_ranges(&quant, &ColumnValues::F32(grid.clone()), &ColumnValues::F32(grid.clone()));
    assert_ranges(
        &quant,
        &ColumnValues::F32(grid.clone()),
        &ColumnValues::F64(grid.iter().map(|&x| f64::from(x)).collect()),
    );
    // Offsets: delta-encoded split pages start from the sum before the range.
    let ends: Vec<u64> = (0..n as u64)
        .scan(0, |acc, i| {
            *acc += i * i % 11;
            Some(*acc)
        })
        .collect();
    for ct in [T::Index32, T::Index64, T::SplitIndex32, T::SplitIndex64] {
        same(ct, ColumnValues::Index(ends.clone()));
    }
    let high: Vec<u64> = ends.iter().map(|e| e + 4_294_967_000).collect();
    same(T::SplitIndex32, ColumnValues::Index(high.iter().map(|&e| e.min(u64::from(u32::MAX))).collect()));
    same(T::SplitIndex64, ColumnValues::Index(high.iter().map(|e| e << 20).collect()));
    same(
        T::Switch,
        ColumnValues::Switch {
            index: (0..n as u64).map(|i| i * 5).collect(),
            tag: (0..n as u32).map(|i| i % 3).collect(),
        },
    );
}
