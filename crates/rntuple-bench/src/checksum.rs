//! The value checksum every reader of the benchmark prints (definition in
//! `docs/benchmarks.md`, reference implementation `bench/checksum.py`):
//!
//! * a leaf column at path `p`: Σ bits(vₖ)·k mod 2⁶⁴ over its values in
//!   flattened order (k = 1, 2, …), bits = the little-endian bit pattern
//!   zero-extended to 64 bits (bool: 0 / 1);
//! * a collection at path `p`: Σ sizeₖ·k mod 2⁶⁴ over its instances;
//! * paths: a top-level field's name, `parent.member` for record members,
//!   `parent[]` for the items of a collection.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, OffsetSizeTrait, RecordBatch};
use arrow_schema::DataType;

use crate::BenchResult;

/// Running checksums; batches of one read may be added one after the other.
#[derive(Debug, Default)]
pub struct Checksums {
    sums: BTreeMap<String, (u64, u64)>, // path -> (sum, values seen)
}

impl Checksums {
    fn slot(&mut self, path: &str) -> &mut (u64, u64) {
        self.sums.entry(path.to_string()).or_insert((0, 0))
    }

    fn add(&mut self, path: &str, values: impl Iterator<Item = u64>) {
        let slot = self.slot(path);
        let (mut sum, mut k) = *slot;
        for v in values {
            k += 1;
            sum = sum.wrapping_add(v.wrapping_mul(k));
        }
        *slot = (sum, k);
    }

    /// [`Checksums::add`] for a slice, as an indexed loop the compiler vectorizes.
    fn add_slice<T: Copy>(&mut self, path: &str, values: &[T], bits: impl Fn(T) -> u64) {
        let slot = self.slot(path);
        let (sum, k) = *slot;
        let mut acc = 0u64;
        for (i, v) in values.iter().enumerate() {
            acc = acc.wrapping_add(bits(*v).wrapping_mul(k + 1 + i as u64));
        }
        *slot = (sum.wrapping_add(acc), k + values.len() as u64);
    }

    pub fn add_batch(&mut self, batch: &RecordBatch) -> BenchResult<()> {
        for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
            self.add_array(field.name(), array)?;
        }
        Ok(())
    }

    fn add_list<O: OffsetSizeTrait>(&mut self, path: &str, offsets: &[O], values: &ArrayRef) -> BenchResult<()> {
        let first = offsets.first().map_or(0, |o| o.as_usize());
        let last = offsets.last().map_or(0, |o| o.as_usize());
        self.add(path, offsets.windows(2).map(|w| (w[1].as_usize() - w[0].as_usize()) as u64));
        self.add_array(&format!("{path}[]"), &values.slice(first, last - first))
    }

    pub fn add_array(&mut self, path: &str, a: &ArrayRef) -> BenchResult<()> {
        match a.data_type() {
            DataType::Boolean => self.add(path, a.as_boolean().values().iter().map(u64::from)),
            DataType::Int8 => self.add_slice(path, a.as_primitive::<Int8Type>().values(), |v| v as u8 as u64),
            DataType::UInt8 => self.add_slice(path, a.as_primitive::<UInt8Type>().values(), u64::from),
            DataType::Int16 => self.add_slice(path, a.as_primitive::<Int16Type>().values(), |v| v as u16 as u64),
            DataType::UInt16 => self.add_slice(path, a.as_primitive::<UInt16Type>().values(), u64::from),
            DataType::Int32 => self.add_slice(path, a.as_primitive::<Int32Type>().values(), |v| v as u32 as u64),
            DataType::UInt32 => self.add_slice(path, a.as_primitive::<UInt32Type>().values(), u64::from),
            DataType::Int64 => self.add_slice(path, a.as_primitive::<Int64Type>().values(), |v| v as u64),
            DataType::UInt64 => self.add_slice(path, a.as_primitive::<UInt64Type>().values(), |v| v),
            DataType::Float32 => {
                self.add_slice(path, a.as_primitive::<Float32Type>().values(), |v| u64::from(v.to_bits()))
            }
            DataType::Float64 => self.add_slice(path, a.as_primitive::<Float64Type>().values(), f64::to_bits),
            DataType::List(_) => {
                let l = a.as_list::<i32>();
                self.add_list(path, l.value_offsets(), l.values())?
            }
            DataType::LargeList(_) => {
                let l = a.as_list::<i64>();
                self.add_list(path, l.value_offsets(), l.values())?
            }
            DataType::Struct(fields) => {
                let s = a.as_struct();
                for (f, child) in fields.iter().zip(s.columns()) {
                    self.add_array(&format!("{path}.{}", f.name()), child)?;
                }
            }
            other => return Err(format!("checksum: unsupported Arrow type {other} at '{path}'").into()),
        }
        if a.null_count() > 0 {
            return Err(format!("checksum: unexpected nulls at '{path}'").into());
        }
        Ok(())
    }

    /// `{path: sum}` as JSON (sums as decimal strings: they exceed 2⁵³).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.sums.iter().map(|(k, (sum, _))| (k.clone(), serde_json::Value::String(sum.to_string()))).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float32Array, Int32Array, ListArray, StructArray};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{Field, Fields};

    use super::*;

    #[test]
    fn weights_values_by_position_and_names_paths() {
        let values: ArrayRef = Arc::new(Float32Array::from(vec![1.0f32, 2.0, 3.0]));
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![-1, 5, 7]));
        let rec = Arc::new(StructArray::new(
            Fields::from(vec![Field::new("pt", DataType::Float32, false), Field::new("q", DataType::Int32, false)]),
            vec![values, ints],
            None,
        ));
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("_0", rec.data_type().clone(), false)),
            OffsetBuffer::new(vec![0, 2, 2, 3].into()),
            rec,
            None,
        ));
        let mut c = Checksums::default();
        c.add_array("Jet", &list).unwrap();
        let j = c.to_json();
        // sizes 2, 0, 1 at positions 1, 2, 3
        assert_eq!(j["Jet"], "5");
        // bits of 1.0, 2.0, 3.0 are 0x3f800000, 0x40000000, 0x40400000
        let expect = 0x3f80_0000u64 + 2 * 0x4000_0000 + 3 * 0x4040_0000;
        assert_eq!(j["Jet[].pt"], expect.to_string());
        // -1 as u32 zero-extended
        let expect = 0xffff_ffffu64 + 2 * 5 + 3 * 7;
        assert_eq!(j["Jet[].q"], expect.to_string());

        // A slice continues nothing: the items of the selected lists only.
        let mut c = Checksums::default();
        c.add_array("Jet", &list.slice(2, 1)).unwrap();
        assert_eq!(c.to_json()["Jet[].pt"], 0x4040_0000u64.to_string());
    }
}
