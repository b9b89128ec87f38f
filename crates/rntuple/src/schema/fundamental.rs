//! The one table of fundamental types (RNTuple binary format 1.0,
//! "Fundamental Types"): C++ name and its common spellings ↔ [`Primitive`]
//! ↔ Arrow type ↔ ROOT's in-memory size ↔ the column types ROOT writes by
//! default (split when compressing, plain when not) and the ones it may
//! write instead. The reader's classification, the reader's Arrow types and
//! the writer's inference and column choice all read this table.
//!
//! `char`: the spec gives it its own column type (`Char`, written by
//! default). ROOT 6.40 on x86-64 Linux reads and writes it as the platform's
//! `char`, which is signed (its dump prints `-5` for `(char)-5`), so its
//! Arrow type is Int8; the `Char` column holds the same eight bits (the
//! format layer buffers them as bytes). An enum whose underlying type is
//! `std::int8_t` gets a `_0` subfield of type `char` from ROOT (see
//! [`Primitive::enum_underlying_name`]).

use arrow_schema::DataType;
use rntuple_format::column::ColumnValues;
use rntuple_format::model::ColumnType;

/// In-memory type of a leaf field with a single column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    Bool,
    /// `std::byte`
    Byte,
    /// `char`
    Char,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Fundamental {
    pub prim: Primitive,
    /// The normalized C++ name (spec "Type Name Normalization").
    pub name: &'static str,
    /// Other spellings accepted in type names (ROOT typedefs, C++ keywords).
    pub aliases: &'static [&'static str],
    /// ROOT's in-memory size in bytes (page sizes count these).
    pub size: u64,
    /// Default column when compressing (`W*` of the spec's table, split).
    pub split: ColumnType,
    /// Default column when not compressing (the plain twin).
    pub plain: ColumnType,
    /// Every column type ROOT may write for it (`W` in the spec's table).
    pub writable: &'static [ColumnType],
}

use ColumnType as T;

const INTEGER_READABLE: &[ColumnType] = &[
    T::Bit,
    T::Char,
    T::Int8,
    T::UInt8,
    T::Int16,
    T::UInt16,
    T::Int32,
    T::UInt32,
    T::Int64,
    T::UInt64,
    T::SplitInt16,
    T::SplitUInt16,
    T::SplitInt32,
    T::SplitUInt32,
    T::SplitInt64,
    T::SplitUInt64,
];

macro_rules! row {
    ($p:ident, $name:literal, [$($alias:literal),*], $size:literal, $split:ident, $plain:ident, [$($w:ident),*]) => {
        Fundamental {
            prim: Primitive::$p,
            name: $name,
            aliases: &[$($alias),*],
            size: $size,
            split: T::$split,
            plain: T::$plain,
            writable: &[$(T::$w),*],
        }
    };
}

/// The spec's table "Fundamental Types", one row per C++ type.
pub const FUNDAMENTALS: [Fundamental; 13] = [
    row!(Bool, "bool", ["Bool_t"], 1, Bit, Bit, [Bit]),
    row!(Byte, "std::byte", [], 1, Byte, Byte, [Byte]),
    row!(Char, "char", ["Char_t"], 1, Char, Char, [Char]),
    row!(I8, "std::int8_t", ["int8_t", "signed char"], 1, Int8, Int8, [Int8]),
    row!(U8, "std::uint8_t", ["uint8_t", "unsigned char", "UChar_t"], 1, UInt8, UInt8, [UInt8]),
    row!(I16, "std::int16_t", ["int16_t", "short", "Short_t"], 2, SplitInt16, Int16, [SplitInt16, Int16]),
    row!(
        U16,
        "std::uint16_t",
        ["uint16_t", "unsigned short", "UShort_t"],
        2,
        SplitUInt16,
        UInt16,
        [SplitUInt16, UInt16]
    ),
    row!(I32, "std::int32_t", ["int32_t", "int", "Int_t"], 4, SplitInt32, Int32, [SplitInt32, Int32]),
    row!(
        U32,
        "std::uint32_t",
        ["uint32_t", "unsigned int", "unsigned", "UInt_t"],
        4,
        SplitUInt32,
        UInt32,
        [SplitUInt32, UInt32]
    ),
    row!(I64, "std::int64_t", ["int64_t", "long", "long long", "Long64_t"], 8, SplitInt64, Int64, [SplitInt64, Int64]),
    row!(
        U64,
        "std::uint64_t",
        ["uint64_t", "unsigned long", "unsigned long long", "ULong64_t"],
        8,
        SplitUInt64,
        UInt64,
        [SplitUInt64, UInt64]
    ),
    row!(F32, "float", ["Float_t"], 4, SplitReal32, Real32, [SplitReal32, Real32, Real16, Real32Trunc, Real32Quant]),
    row!(
        F64,
        "double",
        ["Double_t", "Double32_t"],
        8,
        SplitReal64,
        Real64,
        [SplitReal64, Real64, SplitReal32, Real32, Real16, Real32Trunc, Real32Quant]
    ),
];

impl Primitive {
    /// This type's row of [`FUNDAMENTALS`].
    pub fn info(self) -> &'static Fundamental {
        // The table lists the variants in declaration order.
        &FUNDAMENTALS[self as usize]
    }

    /// The fundamental type for a normalised (or common unnormalised) C++ name.
    pub fn from_type_name(name: &str) -> Option<Self> {
        let name = name.trim();
        FUNDAMENTALS.iter().find(|f| f.name == name || f.aliases.contains(&name)).map(|f| f.prim)
    }

    /// The normalized C++ name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// ROOT's in-memory size in bytes.
    pub fn size(self) -> u64 {
        self.info().size
    }

    /// The Arrow type values of this type are read into and written from.
    pub fn arrow_type(self) -> DataType {
        match self {
            Primitive::Bool => DataType::Boolean,
            Primitive::Byte | Primitive::U8 => DataType::UInt8,
            Primitive::Char | Primitive::I8 => DataType::Int8,
            Primitive::I16 => DataType::Int16,
            Primitive::U16 => DataType::UInt16,
            Primitive::I32 => DataType::Int32,
            Primitive::U32 => DataType::UInt32,
            Primitive::I64 => DataType::Int64,
            Primitive::U64 => DataType::UInt64,
            Primitive::F32 => DataType::Float32,
            Primitive::F64 => DataType::Float64,
        }
    }

    /// The fundamental type an Arrow type is written as when nothing says
    /// otherwise (Int8 → `std::int8_t`, UInt8 → `std::uint8_t`).
    pub fn from_arrow(dt: &DataType) -> Option<Self> {
        [
            Primitive::Bool,
            Primitive::I8,
            Primitive::U8,
            Primitive::I16,
            Primitive::U16,
            Primitive::I32,
            Primitive::U32,
            Primitive::I64,
            Primitive::U64,
            Primitive::F32,
            Primitive::F64,
        ]
        .into_iter()
        .find(|p| p.arrow_type() == *dt)
    }

    /// Whether values of this type are stored from (and read into) Arrow type `dt`.
    pub fn stores(self, dt: &DataType) -> bool {
        self.arrow_type() == *dt
    }

    /// The column ROOT writes by default (spec: split encodings when
    /// compressing, their plain twins otherwise).
    pub fn default_column(self, compressed: bool) -> ColumnType {
        let f = self.info();
        if compressed {
            f.split
        } else {
            f.plain
        }
    }

    /// Whether ROOT reads a column of type `ct` into this type (`W` or `R`
    /// in the spec's table).
    pub fn reads(self, ct: ColumnType) -> bool {
        match self {
            Primitive::Byte => ct == T::Byte,
            Primitive::F32 => self.info().writable.contains(&ct) || matches!(ct, T::Real64 | T::SplitReal64),
            Primitive::F64 => self.info().writable.contains(&ct),
            // bool, char and the integers (spec: W or R from every integer column).
            _ => INTEGER_READABLE.contains(&ct),
        }
    }

    /// An empty buffer of this type's in-memory values (the Arrow type's:
    /// `char` as signed bytes, `std::byte` as bytes).
    pub fn values(self) -> ColumnValues {
        match self {
            Primitive::Bool => ColumnValues::Bool(Vec::new()),
            Primitive::Byte | Primitive::U8 => ColumnValues::U8(Vec::new()),
            Primitive::Char | Primitive::I8 => ColumnValues::I8(Vec::new()),
            Primitive::I16 => ColumnValues::I16(Vec::new()),
            Primitive::U16 => ColumnValues::U16(Vec::new()),
            Primitive::I32 => ColumnValues::I32(Vec::new()),
            Primitive::U32 => ColumnValues::U32(Vec::new()),
            Primitive::I64 => ColumnValues::I64(Vec::new()),
            Primitive::U64 => ColumnValues::U64(Vec::new()),
            Primitive::F32 => ColumnValues::F32(Vec::new()),
            Primitive::F64 => ColumnValues::F64(Vec::new()),
        }
    }

    /// Whether this is an integer type that can underlie an enum.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Primitive::I8
                | Primitive::U8
                | Primitive::I16
                | Primitive::U16
                | Primitive::I32
                | Primitive::U32
                | Primitive::I64
                | Primitive::U64
                | Primitive::Char
        )
    }

    /// The type name ROOT 6.40 gives the `_0` subfield of an enum whose
    /// underlying integer type is `self`: ROOT spells a `std::int8_t`
    /// underlying type `char` (what `TEnum` reports), the others normalized.
    pub fn enum_underlying(self) -> Primitive {
        match self {
            Primitive::I8 => Primitive::Char,
            p => p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_follows_the_spec() {
        for (i, f) in FUNDAMENTALS.iter().enumerate() {
            assert_eq!(f.prim as usize, i, "{}", f.name);
            assert!(f.writable.contains(&f.split) && f.writable.contains(&f.plain), "{}", f.name);
            assert_eq!(Primitive::from_type_name(f.name), Some(f.prim));
            for a in f.aliases {
                assert_eq!(Primitive::from_type_name(a), Some(f.prim), "{a}");
            }
        }
        // Spec "Fundamental Types": W* defaults.
        assert_eq!(Primitive::Char.default_column(true), ColumnType::Char);
        assert_eq!(Primitive::Bool.default_column(true), ColumnType::Bit);
        assert_eq!(Primitive::I32.default_column(true), ColumnType::SplitInt32);
        assert_eq!(Primitive::I32.default_column(false), ColumnType::Int32);
        assert_eq!(Primitive::F64.default_column(true), ColumnType::SplitReal64);
        // char is signed in memory (Int8), like ROOT on x86-64; std::byte is a byte.
        assert_eq!(Primitive::Char.arrow_type(), DataType::Int8);
        assert_eq!(Primitive::Byte.arrow_type(), DataType::UInt8);
        assert_eq!(Primitive::from_arrow(&DataType::Int8), Some(Primitive::I8));
        assert_eq!(Primitive::from_arrow(&DataType::UInt8), Some(Primitive::U8));
        assert_eq!(Primitive::from_arrow(&DataType::Utf8), None);
        // R entries of the spec's table.
        assert!(Primitive::I32.reads(ColumnType::Bit));
        assert!(Primitive::Char.reads(ColumnType::SplitInt64));
        assert!(!Primitive::Byte.reads(ColumnType::Char));
        assert!(Primitive::F32.reads(ColumnType::SplitReal64));
        assert!(!Primitive::I32.reads(ColumnType::Real32));
        assert_eq!(Primitive::I8.enum_underlying().name(), "char");
        assert_eq!(Primitive::U8.enum_underlying().name(), "std::uint8_t");
    }
}
