//! Column page decoding (every column type and encoding: split, zigzag,
//! delta, bit packing, Real16, Real32Trunc, Real32Quant) on arbitrary bytes.
//!
//! Input: column type id (1 byte), bits on storage (1 byte), a flag byte
//! (bit 0: the column has a value range), min and max (f64 LE each), then the
//! page. The number of elements is the largest the page holds, and also that
//! plus one (which must fail cleanly).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple_format::model::ColumnType;
use rntuple_format::{decode_page, ColumnSpec, ColumnValues};

fuzz_target!(|data: &[u8]| {
    if data.len() < 19 {
        return;
    }
    let column_type = ColumnType::from_id(u16::from(data[0]));
    let bits = u16::from(data[1]);
    let range = (data[2] & 1 == 1).then(|| {
        let f = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        (f(&data[3..11]), f(&data[11..19]))
    });
    let page = &data[19..];
    let Ok(spec) = ColumnSpec::new(column_type, bits, range) else {
        return;
    };
    let Ok(mut out) = ColumnValues::for_column(column_type) else {
        return;
    };
    let n = if bits == 0 { 0 } else { (page.len() * 8) / usize::from(bits) };
    for num in [n, n + 1] {
        let _ = decode_page(&spec, page, num, &mut out);
    }
});
