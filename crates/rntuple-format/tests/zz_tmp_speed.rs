#![allow(clippy::unwrap_used)]
use rntuple_format::model::ColumnType as T;
use rntuple_format::*;
#[test]
fn speed() {
    let n = 4_000_000usize;
    for (ct, v) in [
        (T::SplitReal32, ColumnValues::F32((0..n).map(|i| i as f32 * 0.5).collect())),
        (T::Real32, ColumnValues::F32((0..n).map(|i| i as f32 * 0.5).collect())),
        (T::SplitIndex64, ColumnValues::Index((0..n as u64).map(|i| i * 3).collect())),
        (T::SplitInt32, ColumnValues::I32((0..n as i32).map(|i| i - 100).collect())),
        (T::SplitReal64, ColumnValues::F64((0..n).map(|i| i as f64 * 0.5).collect())),
        (T::Bit, ColumnValues::Bool((0..n).map(|i| i % 3 == 0).collect())),
        (T::Real32Trunc, ColumnValues::F32((0..n).map(|i| i as f32 * 0.5).collect())),
    ] {
        let s = ColumnSpec::new(ct, if ct == T::Real32Trunc { 20 } else { ct.default_bits().unwrap() }, None).unwrap();
        let page = encode_page(&s, &v, 0..n).unwrap();
        let mut out = ColumnValues::for_column(ct).unwrap();
        out.reserve(n);
        let t = std::time::Instant::now();
        for _ in 0..5 { if let ColumnValues::F32(x)=&mut out {x.clear()} if let ColumnValues::Index(x)=&mut out {x.clear()} if let ColumnValues::I32(x)=&mut out {x.clear()} if let ColumnValues::F64(x)=&mut out {x.clear()} if let ColumnValues::Bool(x)=&mut out {x.clear()}
            decode_page(&s, &page, n, &mut out).unwrap(); }
        let dt = t.elapsed().as_secs_f64() / 5.0;
        println!("{ct}: {:.2} GB/s of page ({} MB), {:.2} ns/elem", page.len() as f64 / dt / 1e9, page.len() / 1_000_000, dt * 1e9 / n as f64);
    }
}
