//! Parsed forms of the on-disk descriptors (spec sections "Header Envelope",
//! "Footer Envelope", "Page List Envelope", "Locators and Envelope Links").
//!
//! These are plain data; parsing lives beside them in the envelope modules.

/// Column types, spec section "Column Description" (type ids 0x00–0x1D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColumnType {
    Bit,
    Byte,
    Char,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Real16,
    Real32,
    Real64,
    Index32,
    Index64,
    Switch,
    SplitInt16,
    SplitUInt16,
    SplitInt32,
    SplitUInt32,
    SplitInt64,
    SplitUInt64,
    SplitReal16,
    SplitReal32,
    SplitReal64,
    SplitIndex32,
    SplitIndex64,
    Real32Trunc,
    Real32Quant,
    /// A type id this implementation does not know (spec: readers ignore the
    /// top-level field that uses it).
    Unknown(u16),
}

/// A byte range in the file (spec "Locators and Envelope Links").
/// Large locators (type 0x01) are normalised to this form; other locator
/// kinds are rejected while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Locator {
    pub offset: u64,
    pub size: u64,
}

/// Uncompressed length plus locator of an envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EnvelopeLink {
    pub length: u64,
    pub locator: Locator,
}

/// Structural role of a field (spec "Field Description").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StructuralRole {
    Leaf,
    Collection,
    Record,
    Variant,
    Streamer,
    Unknown(u16),
}

/// Field flag: repetitive field (fixed-size array / bitset).
pub const FIELD_FLAG_REPETITIVE: u16 = 0x01;
/// Field flag: projected field.
pub const FIELD_FLAG_PROJECTED: u16 = 0x02;
/// Field flag: has ROOT type checksum.
pub const FIELD_FLAG_TYPE_CHECKSUM: u16 = 0x04;
/// Field flag: struct-of-arrays field (ROOT 6.40's experimental
/// `ROOT::Experimental::RSoAField`): a collection whose type name is the SoA
/// class and whose only subfield is the underlying record. On disk it is a
/// collection of that record; the flag only says which in-memory type wrote
/// it. ROOT 6.40 writes it with flag 0x04 (type checksum of the SoA class).
pub const FIELD_FLAG_SOA: u16 = 0x08;
/// Column flag: deferred column.
pub const COLUMN_FLAG_DEFERRED: u16 = 0x01;
/// Column flag: column with value range.
pub const COLUMN_FLAG_RANGE: u16 = 0x02;

#[derive(Debug, Clone, PartialEq)]
pub struct FieldDescriptor {
    pub field_version: u32,
    pub type_version: u32,
    pub parent_id: u32,
    pub role: StructuralRole,
    pub flags: u16,
    pub name: String,
    pub type_name: String,
    pub type_alias: String,
    pub description: String,
    /// Present iff flag 0x01.
    pub array_size: Option<u64>,
    /// Present iff flag 0x02.
    pub source_field_id: Option<u32>,
    /// Present iff flag 0x04.
    pub type_checksum: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDescriptor {
    pub column_type: ColumnType,
    pub bits_on_storage: u16,
    pub field_id: u32,
    pub flags: u16,
    pub representation_index: u16,
    /// Present iff flag 0x01. Negative: deferred *and* suppressed.
    pub first_element_index: Option<i64>,
    /// Present iff flag 0x02: inclusive (min, max).
    pub value_range: Option<(f64, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AliasColumnDescriptor {
    pub physical_column_id: u32,
    pub field_id: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraTypeInfo {
    pub content_id: u32,
    pub type_version: u32,
    pub type_name: String,
    pub content: Vec<u8>,
}

/// The four list frames shared by the header and the footer's schema extension.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaDescription {
    pub fields: Vec<FieldDescriptor>,
    pub columns: Vec<ColumnDescriptor>,
    pub alias_columns: Vec<AliasColumnDescriptor>,
    pub extra_type_info: Vec<ExtraTypeInfo>,
    /// Records that hold bytes after everything this reader knows (the
    /// spec's "Frames": a later format version may append members, which
    /// readers skip), as (record, number of bytes), e.g. `("field 3", 8)`.
    /// Reading ignores them; a tool that copies records (merge) must keep
    /// or refuse them. Never written.
    pub unknown_trailing_bytes: Vec<(String, usize)>,
}

/// Header envelope (type 0x01).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    /// Feature flag words as stored (continuation words included).
    pub feature_flags: Vec<u64>,
    pub name: String,
    pub description: String,
    pub writer: String,
    pub schema: SchemaDescription,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterGroupDescriptor {
    pub min_entry: u64,
    pub entry_span: u64,
    pub num_clusters: u32,
    pub page_list: EnvelopeLink,
}

/// Footer envelope (type 0x02).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Footer {
    pub feature_flags: Vec<u64>,
    pub header_checksum: u64,
    pub schema_extension: SchemaDescription,
    pub cluster_groups: Vec<ClusterGroupDescriptor>,
    /// Linked attribute sets (format 1.0.1.0+; empty when the footer ends
    /// before their list, as those of 1.0.0.x do).
    pub attribute_sets: Vec<AttributeSetLink>,
}

/// One linked attribute set (spec "Footer Envelope", "Linked Attribute Set
/// Record Frame"): another RNTuple in the same file whose entries carry
/// values for ranges of this RNTuple's entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttributeSetLink {
    pub schema_version_major: u16,
    pub schema_version_minor: u16,
    /// Size of the attribute RNTuple's anchor object after decompression,
    /// checksum and ROOT's 6-byte object prefix included (78 for ROOT 6.40).
    pub anchor_length: u32,
    /// Where the anchor object is: the payload of its (unlisted) key.
    pub anchor_locator: Locator,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterSummary {
    pub first_entry: u64,
    pub num_entries: u64,
    pub flags: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageDescriptor {
    pub num_elements: u32,
    /// An xxh3-64 of the compressed page follows the page on disk.
    pub has_checksum: bool,
    pub locator: Locator,
}

/// The pages of one column in one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnPageRange {
    /// Index of the first element of this column in this cluster; negative
    /// when the column is suppressed in this cluster.
    pub element_offset: i64,
    /// Compression settings (algorithm * 100 + level); `None` when suppressed.
    pub compression: Option<u32>,
    pub pages: Vec<PageDescriptor>,
}

impl ColumnPageRange {
    pub fn is_suppressed(&self) -> bool {
        self.element_offset < 0
    }
}

/// Page list envelope (type 0x03).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PageList {
    pub header_checksum: u64,
    pub clusters: Vec<ClusterSummary>,
    /// `[cluster][physical column]`.
    pub page_locations: Vec<Vec<ColumnPageRange>>,
}
