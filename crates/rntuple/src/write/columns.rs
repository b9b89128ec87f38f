//! Column rules: which physical columns a field of each kind gets and
//! their types (ROOT 6.40's defaults, `RField*.cxx`, `AutoAdjustColumnTypes`;
//! spec "Fundamental Types" through the table in
//! [`crate::schema::fundamental`]), with the overrides of split encodings,
//! index width and floating-point encodings.

use arrow_schema::DataType;
use rntuple_format::model::ColumnType;
use rntuple_format::Error;
use rntuple_format::Result;

use super::options::{RealEncoding, WriteOptions};
use super::plan::{unwritable, PlanField};
use crate::schema::{FieldKind, Primitive};

/// Column type, bits on storage (0: the type's width), value range and
/// ROOT's in-memory element size of one column.
pub(crate) type ColumnChoice = (ColumnType, u16, Option<(f64, f64)>, u64);

/// The columns of field `f` (representation 0, in column order).
pub(crate) fn field_columns(f: &PlanField, options: &WriteOptions) -> Result<Vec<ColumnChoice>> {
    let split = f.split.unwrap_or(options.compressed());
    let index = {
        let narrow = f.index32.unwrap_or(options.index32);
        match (narrow, split) {
            (false, true) => ColumnType::SplitIndex64,
            (false, false) => ColumnType::Index64,
            (true, true) => ColumnType::SplitIndex32,
            (true, false) => ColumnType::Index32,
        }
    };
    Ok(match f.kind {
        FieldKind::Primitive(p) => vec![leaf_column(p, f.real, f.split, options.compressed(), &f.path)?],
        FieldKind::String => vec![(index, 0, None, 8), (ColumnType::Char, 8, None, 1)],
        FieldKind::Collection { .. } => vec![(index, 0, None, 8)],
        FieldKind::Variant => vec![(ColumnType::Switch, 0, None, 16)],
        FieldKind::Bitset { .. } => vec![(ColumnType::Bit, 0, None, 1)],
        FieldKind::Array { .. } | FieldKind::Record | FieldKind::Wrapper => Vec::new(),
        FieldKind::Cardinality { .. } | FieldKind::Streamer | FieldKind::Unsupported(_) => return Err(unwritable(f)),
    })
}

/// The [`ColumnChoice`] of a leaf.
fn leaf_column(
    p: Primitive,
    real: Option<RealEncoding>,
    split: Option<bool>,
    compressed: bool,
    path: &str,
) -> Result<ColumnChoice> {
    use ColumnType as T;
    let s = split.unwrap_or(compressed);
    let pick = |split_t: T, plain_t: T| if s { split_t } else { plain_t };
    let mem = p.size();
    if let Some(enc) = real {
        return Ok(match enc {
            RealEncoding::Real16 => (T::Real16, 0, None, mem),
            RealEncoding::Real32 => (pick(T::SplitReal32, T::Real32), 0, None, mem),
            RealEncoding::Real32Trunc { bits } => (T::Real32Trunc, bits, None, mem),
            RealEncoding::Real32Quant { bits, min, max } => (T::Real32Quant, bits, Some((min, max)), mem),
            RealEncoding::Double32 => (if split.unwrap_or(true) { T::SplitReal32 } else { T::Real32 }, 0, None, mem),
        });
    }
    let info = p.info();
    if split == Some(true) && info.split == info.plain {
        return Err(Error::invalid(format!("field '{path}': {} has no split encoding", p.name())));
    }
    Ok((p.default_column(s), 0, None, mem))
}

/// Whether a C++ fundamental type stores an Arrow type bit for bit.
pub(crate) fn compatible(p: Primitive, dt: &DataType) -> bool {
    p.stores(dt)
}
