//! The element types a column's page buffer takes from a batch (see `Columns::push`).

use rntuple_format::column::ColumnValues;

/// Elements that can be appended to a column's values.
pub(crate) trait Element: Copy {
    fn extend(values: &mut ColumnValues, s: &[Self]) -> bool;
}

macro_rules! element {
    ($t:ty, $($var:ident)|+) => {
        impl Element for $t {
            fn extend(values: &mut ColumnValues, s: &[Self]) -> bool {
                match values {
                    $(ColumnValues::$var(d) => {
                        d.extend_from_slice(s);
                        true
                    })+
                    _ => false,
                }
            }
        }
    };
}
element!(bool, Bool);
element!(i8, I8);
element!(u8, U8);
element!(i16, I16);
element!(u16, U16);
element!(i32, I32);
element!(u32, U32);
element!(i64, I64);
element!(u64, U64 | Index);
element!(f32, F32);
element!(f64, F64);
