//! The read engine: entry ranges and field selections to Arrow record batches.

mod build;
mod source;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use rntuple_format::{Error, Result};

pub(crate) use source::column_multipliers;
pub use source::PageSource;

use crate::schema::FieldNode;

/// Reads the selected top-level fields for entries `[start, stop)`.
pub(crate) fn read_range(src: &PageSource, fields: &[&FieldNode], start: u64, stop: u64) -> Result<RecordBatch> {
    let arrow_fields: Vec<_> = fields.iter().map(|f| Arc::new(f.arrow_field())).collect();
    let schema = Arc::new(ArrowSchema::new(arrow_fields));
    let mut per_field: Vec<Vec<ArrayRef>> = vec![Vec::new(); fields.len()];
    for cluster in &src.desc.clusters {
        let c_start = cluster.first_entry;
        let c_stop = c_start + cluster.num_entries;
        if c_stop <= start || c_start >= stop {
            continue;
        }
        let lo = start.max(c_start) - c_start;
        let hi = stop.min(c_stop) - c_start;
        for (i, f) in fields.iter().enumerate() {
            per_field[i].push(build::build_field(src, f, cluster, lo, hi)?);
        }
    }
    let mut columns = Vec::with_capacity(fields.len());
    let mut actual_fields = Vec::with_capacity(fields.len());
    for (i, parts) in per_field.into_iter().enumerate() {
        let declared = schema.field(i);
        let col = match parts.len() {
            0 => arrow_array::new_empty_array(declared.data_type()),
            1 => parts.into_iter().next().unwrap_or_else(|| arrow_array::new_empty_array(declared.data_type())),
            _ => concat_parts(fields[i], parts)?,
        };
        actual_fields.push(Arc::new(declared.clone().with_data_type(col.data_type().clone())));
        columns.push(col);
    }
    let schema = Arc::new(ArrowSchema::new(actual_fields));
    let n = stop.saturating_sub(start) as usize;
    RecordBatch::try_new_with_options(schema, columns, &RecordBatchOptions::new().with_row_count(Some(n)))
        .map_err(|e| Error::InvalidArgument { message: format!("cannot assemble record batch: {e}") })
}

/// Replaces every `LargeUtf8` in `dt` by `LargeBinary`.
fn binary_strings(dt: &DataType) -> DataType {
    let field = |f: &Arc<Field>| Arc::new(f.as_ref().clone().with_data_type(binary_strings(f.data_type())));
    match dt {
        DataType::LargeUtf8 => DataType::LargeBinary,
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// Concatenates the per-cluster arrays of one field. When some cluster held
/// strings that are not UTF-8 (delivered as binary), every part is cast to
/// the binary form first.
fn concat_parts(field: &FieldNode, mut parts: Vec<ArrayRef>) -> Result<ArrayRef> {
    let err = |e: arrow_schema::ArrowError| Error::InvalidArgument {
        message: format!("cannot concatenate clusters of field '{}': {e}", field.name),
    };
    if parts.iter().any(|p| p.data_type() != parts[0].data_type()) {
        let target = binary_strings(parts[0].data_type());
        for p in parts.iter_mut() {
            if p.data_type() != &target {
                *p = arrow_cast::cast(p.as_ref(), &target).map_err(err)?;
            }
        }
    }
    let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&refs).map_err(err)
}
