//! Column types (RNTuple binary format 1.0, section "Column Description").
//!
//! | Type | Bits  | Name         | | Type | Bits  | Name         |
//! |------|-------|--------------|-|------|-------|--------------|
//! | 0x00 | 1     | Bit          | | 0x0F | 64    | Index64      |
//! | 0x01 | 8     | Byte         | | 0x10 | 96    | Switch       |
//! | 0x02 | 8     | Char         | | 0x11 | 16    | SplitInt16   |
//! | 0x03 | 8     | Int8         | | 0x12 | 16    | SplitUInt16  |
//! | 0x04 | 8     | UInt8        | | 0x13 | 32    | SplitInt32   |
//! | 0x05 | 16    | Int16        | | 0x14 | 32    | SplitUInt32  |
//! | 0x06 | 16    | UInt16       | | 0x15 | 64    | SplitInt64   |
//! | 0x07 | 32    | Int32        | | 0x16 | 64    | SplitUInt64  |
//! | 0x08 | 32    | UInt32       | | 0x17 | 16    | SplitReal16  |
//! | 0x09 | 64    | Int64        | | 0x18 | 32    | SplitReal32  |
//! | 0x0A | 64    | UInt64       | | 0x19 | 64    | SplitReal64  |
//! | 0x0B | 16    | Real16       | | 0x1A | 32    | SplitIndex32 |
//! | 0x0C | 32    | Real32       | | 0x1B | 64    | SplitIndex64 |
//! | 0x0D | 64    | Real64       | | 0x1C | 10-31 | Real32Trunc  |
//! | 0x0E | 32    | Index32      | | 0x1D | 1-32  | Real32Quant  |

use crate::constants::*;
use crate::model::ColumnType;

impl ColumnType {
    /// The column type of an on-disk type id; unknown ids map to [`ColumnType::Unknown`].
    pub fn from_id(id: u16) -> Self {
        use ColumnType::*;
        match id {
            COLUMN_BIT => Bit,
            COLUMN_BYTE => Byte,
            COLUMN_CHAR => Char,
            COLUMN_INT8 => Int8,
            COLUMN_UINT8 => UInt8,
            COLUMN_INT16 => Int16,
            COLUMN_UINT16 => UInt16,
            COLUMN_INT32 => Int32,
            COLUMN_UINT32 => UInt32,
            COLUMN_INT64 => Int64,
            COLUMN_UINT64 => UInt64,
            COLUMN_REAL16 => Real16,
            COLUMN_REAL32 => Real32,
            COLUMN_REAL64 => Real64,
            COLUMN_INDEX32 => Index32,
            COLUMN_INDEX64 => Index64,
            COLUMN_SWITCH => Switch,
            COLUMN_SPLIT_INT16 => SplitInt16,
            COLUMN_SPLIT_UINT16 => SplitUInt16,
            COLUMN_SPLIT_INT32 => SplitInt32,
            COLUMN_SPLIT_UINT32 => SplitUInt32,
            COLUMN_SPLIT_INT64 => SplitInt64,
            COLUMN_SPLIT_UINT64 => SplitUInt64,
            COLUMN_SPLIT_REAL16 => SplitReal16,
            COLUMN_SPLIT_REAL32 => SplitReal32,
            COLUMN_SPLIT_REAL64 => SplitReal64,
            COLUMN_SPLIT_INDEX32 => SplitIndex32,
            COLUMN_SPLIT_INDEX64 => SplitIndex64,
            COLUMN_REAL32_TRUNC => Real32Trunc,
            COLUMN_REAL32_QUANT => Real32Quant,
            other => Unknown(other),
        }
    }

    /// The on-disk type id.
    pub fn id(self) -> u16 {
        use ColumnType::*;
        match self {
            Bit => COLUMN_BIT,
            Byte => COLUMN_BYTE,
            Char => COLUMN_CHAR,
            Int8 => COLUMN_INT8,
            UInt8 => COLUMN_UINT8,
            Int16 => COLUMN_INT16,
            UInt16 => COLUMN_UINT16,
            Int32 => COLUMN_INT32,
            UInt32 => COLUMN_UINT32,
            Int64 => COLUMN_INT64,
            UInt64 => COLUMN_UINT64,
            Real16 => COLUMN_REAL16,
            Real32 => COLUMN_REAL32,
            Real64 => COLUMN_REAL64,
            Index32 => COLUMN_INDEX32,
            Index64 => COLUMN_INDEX64,
            Switch => COLUMN_SWITCH,
            SplitInt16 => COLUMN_SPLIT_INT16,
            SplitUInt16 => COLUMN_SPLIT_UINT16,
            SplitInt32 => COLUMN_SPLIT_INT32,
            SplitUInt32 => COLUMN_SPLIT_UINT32,
            SplitInt64 => COLUMN_SPLIT_INT64,
            SplitUInt64 => COLUMN_SPLIT_UINT64,
            SplitReal16 => COLUMN_SPLIT_REAL16,
            SplitReal32 => COLUMN_SPLIT_REAL32,
            SplitReal64 => COLUMN_SPLIT_REAL64,
            SplitIndex32 => COLUMN_SPLIT_INDEX32,
            SplitIndex64 => COLUMN_SPLIT_INDEX64,
            Real32Trunc => COLUMN_REAL32_TRUNC,
            Real32Quant => COLUMN_REAL32_QUANT,
            Unknown(id) => id,
        }
    }

    /// The spec's name of the type, e.g. `"SplitReal32"`; `"Unknown"` for unknown ids.
    pub fn name(self) -> &'static str {
        use ColumnType::*;
        match self {
            Bit => "Bit",
            Byte => "Byte",
            Char => "Char",
            Int8 => "Int8",
            UInt8 => "UInt8",
            Int16 => "Int16",
            UInt16 => "UInt16",
            Int32 => "Int32",
            UInt32 => "UInt32",
            Int64 => "Int64",
            UInt64 => "UInt64",
            Real16 => "Real16",
            Real32 => "Real32",
            Real64 => "Real64",
            Index32 => "Index32",
            Index64 => "Index64",
            Switch => "Switch",
            SplitInt16 => "SplitInt16",
            SplitUInt16 => "SplitUInt16",
            SplitInt32 => "SplitInt32",
            SplitUInt32 => "SplitUInt32",
            SplitInt64 => "SplitInt64",
            SplitUInt64 => "SplitUInt64",
            SplitReal16 => "SplitReal16",
            SplitReal32 => "SplitReal32",
            SplitReal64 => "SplitReal64",
            SplitIndex32 => "SplitIndex32",
            SplitIndex64 => "SplitIndex64",
            Real32Trunc => "Real32Trunc",
            Real32Quant => "Real32Quant",
            Unknown(_) => "Unknown",
        }
    }

    /// Bits on storage of fixed-width types; `None` for the variable-width
    /// `Real32Trunc` and `Real32Quant` and for unknown types.
    pub fn default_bits(self) -> Option<u16> {
        use ColumnType::*;
        match self {
            Bit => Some(1),
            Byte | Char | Int8 | UInt8 => Some(8),
            Int16 | UInt16 | Real16 | SplitInt16 | SplitUInt16 | SplitReal16 => Some(16),
            Int32 | UInt32 | Real32 | Index32 | SplitInt32 | SplitUInt32 | SplitReal32 | SplitIndex32 => Some(32),
            Int64 | UInt64 | Real64 | Index64 | SplitInt64 | SplitUInt64 | SplitReal64 | SplitIndex64 => Some(64),
            Switch => Some(SWITCH_BITS),
            Real32Trunc | Real32Quant | Unknown(_) => None,
        }
    }

    /// Whether this is an offset column of a collection ((Split)Index32/64).
    pub fn is_index(self) -> bool {
        matches!(self, ColumnType::Index32 | ColumnType::Index64 | ColumnType::SplitIndex32 | ColumnType::SplitIndex64)
    }

    /// Whether pages of this type are byte-split (all first bytes, then all second bytes, ...).
    pub fn is_split(self) -> bool {
        use ColumnType::*;
        matches!(
            self,
            SplitInt16
                | SplitUInt16
                | SplitInt32
                | SplitUInt32
                | SplitInt64
                | SplitUInt64
                | SplitReal16
                | SplitReal32
                | SplitReal64
                | SplitIndex32
                | SplitIndex64
        )
    }

    /// Inclusive range of allowed bits on storage. Fixed-width types allow
    /// exactly their width; unknown types allow nothing (`(0, 0)`).
    pub fn bits_range(self) -> (u16, u16) {
        match self {
            ColumnType::Real32Trunc => REAL32_TRUNC_BITS,
            ColumnType::Real32Quant => REAL32_QUANT_BITS,
            other => match other.default_bits() {
                Some(b) => (b, b),
                None => (0, 0),
            },
        }
    }
}

impl std::fmt::Display for ColumnType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColumnType::Unknown(id) => write!(f, "Unknown({id:#06x})"),
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for id in 0u16..=0x1D {
            let t = ColumnType::from_id(id);
            assert!(!matches!(t, ColumnType::Unknown(_)), "{id:#x}");
            assert_eq!(t.id(), id);
            assert_ne!(t.name(), "Unknown");
        }
        assert_eq!(ColumnType::from_id(0x99), ColumnType::Unknown(0x99));
        assert_eq!(ColumnType::from_id(0x99).id(), 0x99);
    }

    #[test]
    fn widths() {
        assert_eq!(ColumnType::Switch.default_bits(), Some(96));
        assert_eq!(ColumnType::SplitReal16.default_bits(), Some(16));
        assert_eq!(ColumnType::Real32Trunc.bits_range(), (10, 31));
        assert_eq!(ColumnType::Real32Quant.bits_range(), (1, 32));
        assert_eq!(ColumnType::Bit.bits_range(), (1, 1));
        assert!(ColumnType::SplitIndex32.is_index());
        assert!(!ColumnType::UInt64.is_index());
        assert_eq!(ColumnType::SplitReal32.to_string(), "SplitReal32");
    }
}
