//! The benchmark's neutral input form (written by `bench/workloads.py`,
//! described in `docs/benchmarks.md`): a directory with `manifest.json` and
//! one raw little-endian array per column, loaded here into one Arrow
//! record batch before any timing starts.
//!
//! ```text
//! manifest.json  {"ntuple": "Events", "entries": N, "fields": [{"name": .., "type": T}, ..]}
//! T = {"kind": "scalar", "dtype": "f4", "file": "c0001.bin"}          N values
//!   | {"kind": "vector", "offsets": "c0002.bin", "item": T}           N + 1 int64 offsets, from 0
//!   | {"kind": "record", "class": "NanoJet", "members": [{"name": .., "type": T}, ..]}
//! dtype: b (bool, one byte 0/1), i1 u1 i2 u2 i4 u4 i8 u8 f4 f8
//! ```

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeListArray,
    RecordBatch, StructArray, UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{Field, Fields, Schema};
use serde_json::Value;

use crate::BenchResult;

/// The manifest plus the loaded data.
#[derive(Debug)]
pub struct Input {
    pub ntuple: String,
    pub entries: usize,
    pub batch: RecordBatch,
    /// Bytes of all arrays (values and offsets) as stored.
    pub raw_bytes: u64,
}

fn text<'a>(v: &'a Value, key: &str, what: &str) -> BenchResult<&'a str> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("manifest: {what} has no string '{key}'").into())
}

/// Reads `count` little-endian values of `width` bytes from `path`, converting
/// each with `conv`, 1 MiB at a time (no second copy of the file in memory).
fn read_values<T, const W: usize>(path: &Path, count: usize, conv: fn([u8; W]) -> T) -> BenchResult<Vec<T>> {
    let mut f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let size = f.metadata()?.len();
    let want = count as u64 * W as u64;
    if size != want {
        return Err(format!("{}: {size} bytes, the manifest needs {count} values of {W} bytes", path.display()).into());
    }
    let mut out = Vec::with_capacity(count);
    let mut buf = vec![0u8; (1 << 20) / W * W];
    let mut left = count;
    while left > 0 {
        let n = left.min(buf.len() / W);
        f.read_exact(&mut buf[..n * W])?;
        for chunk in buf[..n * W].chunks_exact(W) {
            let mut a = [0u8; W];
            a.copy_from_slice(chunk);
            out.push(conv(a));
        }
        left -= n;
    }
    Ok(out)
}

fn scalar(path: &Path, dtype: &str, count: usize) -> BenchResult<ArrayRef> {
    Ok(match dtype {
        "b" => Arc::new(BooleanArray::from(read_values::<bool, 1>(path, count, |b| b[0] != 0)?)),
        "i1" => Arc::new(Int8Array::from(read_values::<i8, 1>(path, count, i8::from_le_bytes)?)),
        "u1" => Arc::new(UInt8Array::from(read_values::<u8, 1>(path, count, u8::from_le_bytes)?)),
        "i2" => Arc::new(Int16Array::from(read_values::<i16, 2>(path, count, i16::from_le_bytes)?)),
        "u2" => Arc::new(UInt16Array::from(read_values::<u16, 2>(path, count, u16::from_le_bytes)?)),
        "i4" => Arc::new(Int32Array::from(read_values::<i32, 4>(path, count, i32::from_le_bytes)?)),
        "u4" => Arc::new(UInt32Array::from(read_values::<u32, 4>(path, count, u32::from_le_bytes)?)),
        "i8" => Arc::new(Int64Array::from(read_values::<i64, 8>(path, count, i64::from_le_bytes)?)),
        "u8" => Arc::new(UInt64Array::from(read_values::<u64, 8>(path, count, u64::from_le_bytes)?)),
        "f4" => Arc::new(Float32Array::from(read_values::<f32, 4>(path, count, f32::from_le_bytes)?)),
        "f8" => Arc::new(Float64Array::from(read_values::<f64, 8>(path, count, f64::from_le_bytes)?)),
        other => return Err(format!("manifest: unknown dtype '{other}' ({})", path.display()).into()),
    })
}

/// Loads a value of type `ty` for `count` parents; returns the array and
/// adds the bytes it read to `bytes`.
fn load(dir: &Path, ty: &Value, count: usize, bytes: &mut u64) -> BenchResult<ArrayRef> {
    let kind = text(ty, "kind", "a type")?;
    match kind {
        "scalar" => {
            let path = dir.join(text(ty, "file", "a scalar")?);
            *bytes += std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.len();
            scalar(&path, text(ty, "dtype", "a scalar")?, count)
        }
        "vector" => {
            let path = dir.join(text(ty, "offsets", "a vector")?);
            *bytes += (count as u64 + 1) * 8;
            let offsets = read_values::<i64, 8>(&path, count + 1, i64::from_le_bytes)?;
            if offsets.first() != Some(&0) || offsets.windows(2).any(|w| w[1] < w[0]) {
                return Err(format!("{}: offsets must start at 0 and not decrease", path.display()).into());
            }
            let n_items = usize::try_from(offsets[count])?;
            let item_ty = ty.get("item").ok_or("manifest: a vector has no 'item'")?;
            let values = load(dir, item_ty, n_items, bytes)?;
            let item = Arc::new(Field::new("_0", values.data_type().clone(), false));
            let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
            Ok(Arc::new(LargeListArray::try_new(item, offsets, values, None)?))
        }
        "record" => {
            let members = ty.get("members").and_then(Value::as_array).ok_or("manifest: a record has no 'members'")?;
            let mut fields = Vec::with_capacity(members.len());
            let mut arrays = Vec::with_capacity(members.len());
            for m in members {
                let name = text(m, "name", "a record member")?;
                let a = load(dir, m.get("type").ok_or("manifest: a member has no 'type'")?, count, bytes)?;
                fields.push(Field::new(name, a.data_type().clone(), false));
                arrays.push(a);
            }
            Ok(Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?))
        }
        other => Err(format!("manifest: unknown kind '{other}'").into()),
    }
}

/// Loads the input directory `dir`.
pub fn load_input(dir: &Path) -> BenchResult<Input> {
    let manifest_path = dir.join("manifest.json");
    let manifest: Value =
        serde_json::from_reader(File::open(&manifest_path).map_err(|e| format!("{}: {e}", manifest_path.display()))?)?;
    let entries = manifest.get("entries").and_then(Value::as_u64).ok_or("manifest: no integer 'entries'")? as usize;
    let ntuple = text(&manifest, "ntuple", "the manifest")?.to_string();
    let fields = manifest.get("fields").and_then(Value::as_array).ok_or("manifest: no 'fields' list")?;
    let mut schema_fields = Vec::with_capacity(fields.len());
    let mut columns = Vec::with_capacity(fields.len());
    let mut raw_bytes = 0;
    for f in fields {
        let name = text(f, "name", "a field")?;
        let a = load(dir, f.get("type").ok_or("manifest: a field has no 'type'")?, entries, &mut raw_bytes)?;
        schema_fields.push(Field::new(name, a.data_type().clone(), false));
        columns.push(a);
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(schema_fields)), columns)?;
    Ok(Input { ntuple, entries, batch, raw_bytes })
}
