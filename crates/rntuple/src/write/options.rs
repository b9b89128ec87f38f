//! Options of the writer and per-field overrides of the inferred C++ types
//! and column representations.

use rntuple_format::{Error, Result};

/// Tunables of [`super::RNTupleWriter`]. The defaults are ROOT 6.40's
/// `RNTupleWriteOptions` (spec section "Defaults").
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    /// ROOT compression settings, `algorithm * 100 + level` (505: zstd level 5;
    /// 0: uncompressed, which also switches the default column encodings from
    /// split to plain, spec "Fundamental Types").
    pub compression: u32,
    /// Target compressed size of a cluster; the writer estimates the
    /// compression ratio from the clusters written so far, as ROOT does.
    pub approx_zipped_cluster_size: u64,
    /// A cluster is committed at the latest when its uncompressed size reaches this.
    pub max_unzipped_cluster_size: u64,
    /// Size of a new page buffer; buffers double up to `max_unzipped_page_size`.
    pub initial_unzipped_page_size: u64,
    /// Largest uncompressed page (counted in in-memory element sizes, as ROOT does).
    pub max_unzipped_page_size: u64,
    /// Sum of the page buffers of all columns; when a buffer cannot grow within
    /// it, the largest other buffers are sealed early. 0: ROOT's default,
    /// `approx_zipped_cluster_size` (doubled when compressing: 256 MiB), so
    /// that pages end where ROOT ends them.
    pub page_buffer_budget: u64,
    /// Bytes of page buffers held in memory: beyond them, the elements of
    /// the largest buffers are parked in an anonymous scratch file (beside a
    /// local output, else in `$TMPDIR`) until their page is sealed. Pages,
    /// and so the file, do not change; only where the open pages wait. 0:
    /// [`DEFAULT_PAGE_BUFFER_MEMORY`]; at least `page_buffer_budget` turns
    /// parking off. Within a `memory_budget`, the page buffers' share of it
    /// is never parked.
    pub page_buffer_memory: u64,
    /// Store an xxh3-64 after every page (spec "Page Locations").
    pub page_checksums: bool,
    /// Pages of a cluster with identical compressed bytes share one locator.
    /// Needs the page checksums: ignored when `page_checksums` is off (as
    /// ROOT's `SetEnablePageChecksums(false)` turns merging off).
    pub same_page_merging: bool,
    /// Clusters per page list envelope; 0 (ROOT's behaviour) writes one page
    /// list for all clusters when the writer is closed.
    pub cluster_group_size: usize,
    /// Description stored in the header envelope.
    pub description: String,
    /// Offsets of collections and strings in 32-bit index columns
    /// ((Split)Index32) instead of 64-bit ones; a cluster must then hold fewer
    /// than 2³² elements per column.
    pub index32: bool,
    /// Write a nullable Arrow field (top-level or member of a struct) as
    /// `std::optional<T>`. When off, every field is written as its value type
    /// and nulls are an error.
    pub nullable_as_optional: bool,
    /// Threads compressing pages, the one filling the page buffers
    /// included: with N > 1, N - 1 threads compress while the filling
    /// thread goes on (and compresses too when they are all busy); 1:
    /// the filling thread compresses. 0: one per available core. The bytes
    /// written are the same for any number.
    pub compression_threads: usize,
    /// Bytes the writer may hold: page buffers, pages sealed but not yet
    /// compressed, and compressed pages of the open cluster (see
    /// `docs/writing.md`, "Memory"). The page buffers get at most a quarter
    /// of it (or `page_buffer_budget`, if smaller) and pages at most a 64th;
    /// when the sealed pages would push the total over the budget, the
    /// cluster is committed early. 0: no budget beyond ROOT's sizes (page
    /// buffer budget, cluster sizes), as ROOT writes. Too small a budget for
    /// the columns (under 4 × (initial page + 8 bytes) per column) is an error.
    pub memory_budget: u64,
    /// Hold a cluster's compressed pages in memory until the cluster is
    /// committed, instead of spilling them to an anonymous scratch file
    /// (beside a local output file, else in `$TMPDIR`) as they are sealed.
    /// The bytes written are the same either way: a cluster's pages go to
    /// the file at its commit grouped by column, as ROOT's buffered sink
    /// lays them out (a reader of a few columns reads few, large ranges).
    /// On (ROOT's way), the writer holds a cluster's compressed pages (up to
    /// `approx_zipped_cluster_size`) and writes no scratch file; off (the
    /// default), it holds its page buffers and at a commit a buffer of at most 1 MiB
    /// (`docs/writing.md`, "Memory"). With a `memory_budget` the held pages
    /// count against the budget, so on, clusters may end earlier.
    /// Fill contexts of a parallel writer always hold their pages.
    pub group_pages_by_column: bool,
}

/// 128 MiB: ROOT's approximate compressed cluster size.
pub const DEFAULT_APPROX_ZIPPED_CLUSTER_SIZE: u64 = 128 * 1024 * 1024;

/// 16 MiB: the page buffers held in memory when `page_buffer_memory` is 0;
/// the rest of ROOT's 256 MiB page buffer budget is parked in a scratch
/// file (`docs/writing.md`, "Memory").
pub const DEFAULT_PAGE_BUFFER_MEMORY: u64 = 16 * 1024 * 1024;

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: 505,
            approx_zipped_cluster_size: DEFAULT_APPROX_ZIPPED_CLUSTER_SIZE,
            max_unzipped_cluster_size: 10 * DEFAULT_APPROX_ZIPPED_CLUSTER_SIZE,
            initial_unzipped_page_size: 256,
            max_unzipped_page_size: 1024 * 1024,
            page_buffer_budget: 0,
            page_buffer_memory: 0,
            page_checksums: true,
            same_page_merging: true,
            cluster_group_size: 0,
            description: String::new(),
            index32: false,
            nullable_as_optional: true,
            compression_threads: 0,
            memory_budget: 0,
            group_pages_by_column: false,
        }
    }
}

/// The most compression threads one writer starts (`WriteOptions::compression_threads`).
pub(crate) const MAX_COMPRESSION_THREADS: usize = 1024;

impl WriteOptions {
    /// Checks the tunables as ROOT's `RNTupleWriteOptions` setters do.
    pub fn validate(&self) -> Result<()> {
        if self.approx_zipped_cluster_size == 0 {
            return Err(Error::invalid("approx_zipped_cluster_size must not be 0"));
        }
        if self.initial_unzipped_page_size == 0 || self.max_unzipped_page_size == 0 {
            return Err(Error::invalid("page sizes must not be 0"));
        }
        if self.approx_zipped_cluster_size > self.max_unzipped_cluster_size {
            return Err(Error::invalid(format!(
                "approx_zipped_cluster_size ({}) must not exceed max_unzipped_cluster_size ({})",
                self.approx_zipped_cluster_size, self.max_unzipped_cluster_size
            )));
        }
        if self.initial_unzipped_page_size > self.max_unzipped_page_size {
            return Err(Error::invalid(format!(
                "initial_unzipped_page_size ({}) must not exceed max_unzipped_page_size ({})",
                self.initial_unzipped_page_size, self.max_unzipped_page_size
            )));
        }
        if self.max_unzipped_page_size > self.max_unzipped_cluster_size {
            return Err(Error::invalid(format!(
                "max_unzipped_page_size ({}) must not exceed max_unzipped_cluster_size ({})",
                self.max_unzipped_page_size, self.max_unzipped_cluster_size
            )));
        }
        // Each thread is started (and its handle held) up front: a count from a typo or a
        // fuzzer (2^31) must be refused, not attempted (the Python fuzz target's finding).
        if self.compression_threads > MAX_COMPRESSION_THREADS {
            return Err(Error::invalid(format!(
                "compression_threads ({}) must not exceed {MAX_COMPRESSION_THREADS}",
                self.compression_threads
            )));
        }
        // Surface unknown algorithms now rather than at the first page.
        rntuple_format::compression::compress(&[0u8; 64], self.compression)?;
        Ok(())
    }

    /// The page buffer budget: `page_buffer_budget`, or when 0 ROOT's
    /// (`GetPageBufferBudget`: `approx_zipped_cluster_size`, doubled when
    /// compressing). The same with or without `group_pages_by_column`, so
    /// that both write the same bytes.
    pub(crate) fn effective_page_buffer_budget(&self) -> u64 {
        if self.page_buffer_budget != 0 {
            return self.page_buffer_budget;
        }
        let scale = if self.compressed() { 2 } else { 1 };
        self.approx_zipped_cluster_size.saturating_mul(scale)
    }

    /// `page_buffer_memory`, or when 0 [`DEFAULT_PAGE_BUFFER_MEMORY`].
    pub(crate) fn effective_page_buffer_memory(&self) -> u64 {
        match self.page_buffer_memory {
            0 => DEFAULT_PAGE_BUFFER_MEMORY,
            n => n,
        }
    }

    /// Whether compression settings are given; ROOT tests the settings
    /// against 0 (not the level) for the encodings and the size estimates.
    pub(crate) fn compressed(&self) -> bool {
        self.compression != 0
    }
}

/// Storage of a floating-point field (spec "Fundamental Types" and
/// "Low-precision Floating Points").
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum RealEncoding {
    /// IEEE half precision (`Real16`).
    Real16,
    /// A `double` field in a 32-bit float column ((Split)Real32).
    Real32,
    /// Float with the mantissa truncated to `bits` bits in total (10–31).
    Real32Trunc { bits: u16 },
    /// Integers of `bits` bits (1–32) quantizing the inclusive range `[min, max]`.
    Real32Quant { bits: u16, min: f64, max: f64 },
    /// ROOT's `Double32_t`: a `double` field with type alias `Double32_t`
    /// stored as `SplitReal32` (also when uncompressed, as ROOT does).
    Double32,
}

/// How one field (addressed by its dotted path, e.g. `"jets._0.pt"`) is
/// written instead of what [`super::RNTupleWriter`] infers from Arrow.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldOverride {
    /// The C++ type of the field; it must describe the Arrow data:
    ///
    /// * fundamental types for the Arrow type of the same width and
    ///   signedness, `char` for Int8, `std::byte` for UInt8, `Double32_t`
    ///   for Float64; `std::string` for (Large)Utf8;
    /// * `std::vector<T>`, `ROOT::VecOps::RVec<T>`, `std::(unordered_)(multi)set<T>`
    ///   for (Large)List; `std::(unordered_)(multi)map<K,V>` for Map or a
    ///   (Large)List of two-member structs; `std::array<T,N>` for FixedSizeList(N);
    ///   `std::variant<…>` for a union with as many members;
    /// * `std::optional<T>` / `std::unique_ptr<T>` around any of them
    ///   (nulls become empty optionals); leaving it out of a nullable field
    ///   writes the field without optional (nulls are then an error);
    /// * `std::pair<…>` / `std::tuple<…>` for a struct with as many members
    ///   (the members are renamed `_0`, `_1`, …);
    /// * any other name for a struct: a typed record of that class, whose
    ///   members keep their names and inferred types. ROOT reads it with the
    ///   class's dictionary or by emulating it;
    /// * any other name for integers: an enum of that underlying type (a
    ///   leaf without columns over a subfield `_0`, as ROOT writes enums;
    ///   ROOT needs the enum's dictionary to read it);
    /// * `std::atomic<T>` for whatever `T` takes (a leaf without columns
    ///   over a subfield `_0` of type `T`).
    pub type_name: Option<String>,
    /// Split (`Some(true)`) or plain (`Some(false)`) encodings for the
    /// field's own columns; default: split iff compressed.
    pub split: Option<bool>,
    /// Offsets of this collection or string in 32 (`Some(true)`) or 64 bits.
    pub index32: Option<bool>,
    /// Storage of a `float` / `double` field.
    pub real: Option<RealEncoding>,
    /// Version of a user class or enum (its `ClassDef` version), stored in
    /// the field description (spec "Field Description"); default 0.
    pub type_version: Option<u32>,
    /// ROOT's checksum of a user class (`TClass::GetCheckSum()`), stored
    /// with the field flag 0x04 (spec "Field Description").
    pub type_checksum: Option<u32>,
    /// The field's description (spec "Field Description"), e.g. the unit of
    /// integers that stand for timestamps.
    pub description: Option<String>,
    /// Write the field (a struct with a class name, or a list of them) as
    /// one streamer field (ROOT's `RStreamerField`): each entry streamed
    /// whole by ROOT's `TBufferFile` rules, the classes' streamer infos in
    /// the footer (docs/writing.md, "Streamer fields").
    pub streamer: bool,
    /// Write this list of structs as a struct-of-arrays field (field flag
    /// 0x08, ROOT's `ROOT::Experimental::RSoAField`): a collection whose
    /// type name ([`FieldOverride::type_name`], required) is the SoA class
    /// and whose subfield `_0` is the underlying record, which needs a class
    /// name too (an override of `path._0`). Version and checksum, when
    /// given, are the SoA class's.
    pub soa: bool,
}

impl FieldOverride {
    /// An override of the C++ type only.
    pub fn type_name(name: impl Into<String>) -> Self {
        FieldOverride { type_name: Some(name.into()), ..Default::default() }
    }

    /// An override of the floating-point encoding only.
    pub fn real(encoding: RealEncoding) -> Self {
        FieldOverride { real: Some(encoding), ..Default::default() }
    }

    /// This override with the type version of a user class.
    pub fn type_version(mut self, version: u32) -> Self {
        self.type_version = Some(version);
        self
    }

    /// This override with the type checksum of a user class.
    pub fn type_checksum(mut self, checksum: u32) -> Self {
        self.type_checksum = Some(checksum);
        self
    }

    /// This override as a struct-of-arrays field (see [`FieldOverride::soa`]).
    pub fn soa(mut self) -> Self {
        self.soa = true;
        self
    }
}

/// A projected field (spec "Field Description", flag 0x02; ROOT's
/// `RNTupleModel::AddProjectedField`): a new top-level field that presents
/// data of a written field under another name and type. It has no data of
/// its own (its columns are alias columns of the source's), so batches do not
/// carry it.
///
/// * `source`: dotted path of a written field (`"jets._0.pt"`; on-disk names,
///   `_0` for the items of collections).
/// * `type_name: None`: the type is inferred: the source's own type, in one
///   `ROOT::VecOps::RVec<…>` per collection the path crosses (what ROOT's
///   `RNTupleImporter` makes of a TTree leaf list: `_collection0._0.Muon_pt`
///   becomes `ROOT::VecOps::RVec<float>`). The source must not be untyped.
/// * `type_name: Some(t)`: `t` must describe the source's structure: one
///   vector-like collection (`ROOT::VecOps::RVec`, `std::vector`, sets) per
///   collection crossed, then the source's fundamental type or `std::string`,
///   or any collection type for a collection source (with a type that
///   describes its items), a map for a collection of pairs, `std::pair` /
///   `std::tuple` for a record of `_0`, `_1`, …, the class name of a typed
///   record, or `ROOT::RNTupleCardinality<std::uint32_t|std::uint64_t>` for
///   the sizes of a collection.
///
/// Projections through `std::array`, `std::bitset` and `std::variant` are not
/// supported (spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projection {
    pub name: String,
    pub source: String,
    pub type_name: Option<String>,
}

impl Projection {
    /// A projection whose type is inferred from the source.
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Self {
        Projection { name: name.into(), source: source.into(), type_name: None }
    }

    /// A projection of the given C++ type.
    pub fn typed(name: impl Into<String>, type_name: impl Into<String>, source: impl Into<String>) -> Self {
        Projection { name: name.into(), source: source.into(), type_name: Some(type_name.into()) }
    }
}

/// A ROOT compression setting, `algorithm * 100 + level` (ROOT's
/// `RCompressionSetting`; the algorithm ids are those of the compression
/// block header, spec "Compression Block"). The one parser of settings for
/// the writer, the merger, the command line and the Python package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Compression(u32);

/// Algorithm names, their ids and ROOT's default level for each
/// (`RCompressionSetting::EDefaults`: 101, 207, 404, 505).
const ALGORITHMS: [(&str, u32, u32); 4] = [("zlib", 1, 1), ("lzma", 2, 7), ("lz4", 4, 4), ("zstd", 5, 5)];

/// Names of "no compression" (setting 0).
const NO_COMPRESSION: [&str; 3] = ["none", "uncompressed", "off"];

impl Compression {
    /// Setting 0: pages stored as they are.
    pub const NONE: Compression = Compression(0);

    /// Parses a setting: a number (`"505"`, `"0"`), an algorithm name
    /// (`"zstd"`, `"zlib"`, `"lzma"`, `"lz4"`, `"none"`; any case) with
    /// ROOT's default level, or a name and a level (`"zstd:9"`, `"lzma:7"`).
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim().to_ascii_lowercase();
        if let Ok(n) = t.parse::<u32>() {
            return Self::from_setting(n);
        }
        let (name, level) = match t.split_once(':') {
            Some((name, level)) => {
                let level = level.trim().parse::<i64>().map_err(|_| {
                    Error::invalid(format!(
                        "compression '{text}': the level after ':' must be an integer (like 'zstd:7')"
                    ))
                })?;
                (name.trim(), Some(level))
            }
            None => (t.as_str(), None),
        };
        Self::from_name(name, level)
    }

    /// The setting of algorithm `name` (as [`Compression::parse`] takes it)
    /// at `level` (1 to 99; `None`: ROOT's default level for the algorithm).
    pub fn from_name(name: &str, level: Option<i64>) -> Result<Self> {
        let name = name.trim().to_ascii_lowercase();
        if NO_COMPRESSION.contains(&name.as_str()) {
            return Ok(Self::NONE);
        }
        let Some(&(_, algorithm, default)) = ALGORITHMS.iter().find(|a| a.0 == name) else {
            return Err(Error::invalid(format!(
                "unknown compression algorithm '{name}'; use one of 'zlib', 'lzma', 'lz4', 'zstd', 'none' \
                 or a setting like 505"
            )));
        };
        Self::from_setting(algorithm * 100 + check_level(level.unwrap_or(i64::from(default)))?)
    }

    /// A numeric setting, checked: its algorithm must be one this writer
    /// writes (ROOT's historic deflate, 3, and unknown ids are refused).
    pub fn from_setting(setting: u32) -> Result<Self> {
        rntuple_format::compression::compress(&[0u8; 64], setting)
            .map_err(|e| Error::invalid(format!("compression setting {setting}: {e}")))?;
        Ok(Compression(setting))
    }

    /// The same algorithm at `level` (1 to 99); no compression stays none.
    pub fn with_level(self, level: i64) -> Result<Self> {
        let level = check_level(level)?;
        if self.0 == 0 {
            return Ok(self);
        }
        Self::from_setting(self.0 / 100 * 100 + level)
    }

    /// `algorithm * 100 + level`, as [`WriteOptions::compression`] takes it.
    pub fn setting(self) -> u32 {
        self.0
    }
}

impl std::str::FromStr for Compression {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

fn check_level(level: i64) -> Result<u32> {
    match u32::try_from(level) {
        Ok(l) if (1..=99).contains(&l) => Ok(l),
        _ => Err(Error::invalid(format!("compression_level must be an integer from 1 to 99, not {level}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_settings_parse_as_root_names_them() {
        let ok = [
            ("505", 505),
            ("0", 0),
            ("zstd", 505),
            (" ZSTD:9 ", 509),
            ("zstd:7", 507),
            ("lz4", 404),
            ("lzma", 207),
            ("lzma:7", 207),
            ("zlib", 101),
            ("zlib:9", 109),
            ("none", 0),
            ("off", 0),
            ("uncompressed", 0),
            ("none:3", 0),
            ("101", 101),
        ];
        for (text, setting) in ok {
            assert_eq!(Compression::parse(text).map(Compression::setting).ok(), Some(setting), "{text}");
            assert_eq!(text.parse::<Compression>().ok(), Compression::parse(text).ok(), "{text}");
        }
        let bad = [
            ("", "unknown compression algorithm"),
            ("brotli", "unknown compression algorithm 'brotli'"),
            ("zstd:x", "the level after ':' must be an integer"),
            ("zstd:0", "compression_level must be an integer from 1 to 99, not 0"),
            ("zstd:100", "from 1 to 99"),
            ("901", "compression setting 901"),
            ("301", "compression setting 301"),
        ];
        for (text, message) in bad {
            match Compression::parse(text) {
                Err(e) => assert!(e.to_string().contains(message), "{text}: {e}"),
                Ok(c) => panic!("{text} parsed as {c:?}"),
            }
        }
    }

    #[test]
    fn too_many_compression_threads_are_refused() {
        let ok = WriteOptions { compression_threads: MAX_COMPRESSION_THREADS, ..Default::default() };
        assert!(ok.validate().is_ok());
        let bad = WriteOptions { compression_threads: 1 << 31, ..Default::default() };
        let e = bad.validate().expect_err("2^31 threads");
        assert!(e.to_string().contains("compression_threads (2147483648) must not exceed 1024"), "{e}");
    }

    #[test]
    fn a_level_replaces_the_level_of_a_setting() {
        let zstd = Compression::parse("zstd").expect("zstd");
        assert_eq!(zstd.with_level(1).map(Compression::setting).ok(), Some(501));
        assert_eq!(Compression::NONE.with_level(5).map(Compression::setting).ok(), Some(0));
        assert!(zstd.with_level(0).is_err() && zstd.with_level(-3).is_err());
        assert_eq!(Compression::from_name("lzma", Some(3)).map(Compression::setting).ok(), Some(203));
    }
}
