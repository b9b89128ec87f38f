//! The read engine: entry ranges and field selections to Arrow record batches.

mod build;
mod source;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::Schema as ArrowSchema;
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
    for (i, parts) in per_field.into_iter().enumerate() {
        let col = match parts.len() {
            0 => arrow_array::new_empty_array(schema.field(i).data_type()),
            1 => parts.into_iter().next().unwrap_or_else(|| arrow_array::new_empty_array(schema.field(i).data_type())),
            _ => {
                let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
                arrow_select::concat::concat(&refs).map_err(|e| Error::InvalidArgument {
                    message: format!("cannot concatenate clusters of field '{}': {e}", fields[i].name),
                })?
            }
        };
        columns.push(col);
    }
    let n = stop.saturating_sub(start) as usize;
    RecordBatch::try_new_with_options(schema, columns, &RecordBatchOptions::new().with_row_count(Some(n)))
        .map_err(|e| Error::InvalidArgument { message: format!("cannot assemble record batch: {e}") })
}
