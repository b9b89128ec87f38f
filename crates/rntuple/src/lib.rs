//! `rntuple`: read ROOT RNTuple data into Arrow arrays.
//!
//! ```no_run
//! let file = rntuple::RNTupleFile::open("data.root")?;
//! let events = file.rntuple("Events")?;
//! let batch = events.read(Some(&["nMuon", "Muon_pt"]), 0, events.num_entries())?;
//! # Ok::<(), rntuple::Error>(())
//! ```

pub mod attributes;
pub mod descriptor;
pub mod json;
mod read;
pub mod schema;
pub mod streamer;
pub mod write;

use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
/// The container layer (TFile embedding, storage), for the tools.
pub use rntuple_container as container;
pub use rntuple_container::{Anchor, KeyInfo, RootFile};
/// The format layer (the bytes of the spec), for the tools.
pub use rntuple_format as format;
pub use rntuple_format::{Error, Location, Result};

pub use attributes::{AttributeRange, AttributeSet, AttributeSetLink};
pub use descriptor::{ClusterInfo, Descriptor};
pub use read::{
    check_page_checksum, field_multipliers, load_envelopes, load_from_anchor, read_envelope, stored_size, unseal_page,
    Checks, Envelopes, Found, IoStats, PageSource, BATCH_BYTES, MAX_GAP, MAX_REQUEST,
};
pub use read::{io_report_enabled, set_io_report, IoReport, UndecodedStreamer, IO_REPORT_ENV};
pub use schema::{FieldKind, FieldNode, Schema};
pub use write::{new_anchor, write_batches, FieldOverride, Projection, RNTupleWriter, RealEncoding, WriteOptions};

/// Options of the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Verify the xxh3 checksums of anchor, envelopes and pages (default: on).
    pub verify_checksums: bool,
    /// Threads that decompress and decode pages: 0 (the default) uses one
    /// per core (rayon's global pool; `RAYON_NUM_THREADS` overrides), 1
    /// reads on the calling thread only, n > 1 uses a pool of n threads
    /// (created once per n). With more than one, a further thread fetches
    /// the next batch of pages while the current one is decoded. The arrays
    /// read are the same for any number of threads (docs/reading.md).
    pub threads: usize,
    /// The Arrow types of the values read (default: [`ArrowShape::CppTypes`]).
    pub shape: ArrowShape,
    /// Largest gap in bytes between two needed pages that one request reads
    /// through; `None` (the default) takes the storage's
    /// ([`IoHints::coalesce_gap`](rntuple_container::IoHints): 64 KiB for a
    /// local file). Larger gaps mean fewer requests and more unneeded bytes.
    pub coalesce_gap: Option<u64>,
    /// Largest merged request in bytes; `None` takes the storage's
    /// ([`IoHints::max_request`](rntuple_container::IoHints): 8 MiB locally).
    pub max_request: Option<u64>,
    /// The memory one read may take, in bytes: the buffers of the values
    /// read, the read buffers and the largest page being decompressed. A
    /// read that would take more fails with [`Error::OverBudget`] before
    /// allocating anything (read in steps instead). `None`: no budget (a
    /// read the machine cannot hold fails with [`Error::OutOfMemory`]).
    pub max_memory: Option<u64>,
    /// The largest page, in bytes decompressed, a read accepts: an absolute
    /// cap, whatever the page's stored size ([`DEFAULT_MAX_PAGE_SIZE`]).
    pub max_page_size: u64,
    /// The largest envelope (header, footer, page list), in bytes stored or
    /// inflated, an open accepts: an absolute cap checked before the
    /// envelope is read ([`DEFAULT_MAX_ENVELOPE_SIZE`]).
    pub max_envelope_size: u64,
    /// Read streamer fields as the bytes stored (one binary value per
    /// entry) instead of decoding them with the file's streamer infos
    /// (default: off, decoded; `rntuple dump` prints the bytes).
    pub streamer_bytes: bool,
}

/// The default of [`ReadOptions::max_page_size`]: 1 GiB (ROOT writes pages of
/// at most 1 MiB by default; a page has at most 2^32 elements).
pub const DEFAULT_MAX_PAGE_SIZE: u64 = 1 << 30;

/// The default of [`ReadOptions::max_envelope_size`]: 1 GiB (a footer or a
/// page list of the largest files ROOT writes holds a few MB).
pub const DEFAULT_MAX_ENVELOPE_SIZE: u64 = 1 << 30;

/// Which Arrow types a read gives (docs/reading.md "Arrow types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArrowShape {
    /// Numbers in the Arrow type of their C++ type, booleans as bitmaps,
    /// 64-bit offsets everywhere (large lists, strings and binaries).
    #[default]
    CppTypes,
    /// The types uproot gives (the Python package's reads): numbers in the
    /// in-memory type of their column (a `double` stored as Real32Quant is
    /// Float32, Real16 is Float16), booleans one byte each (UInt8, 0 or 1),
    /// collections and strings with 32-bit index columns as lists, strings
    /// and binaries with 32-bit offsets, cardinalities as Int32 / Int64 by
    /// the width of their index column. When the representations of a
    /// field disagree (clusters written with different column types), the
    /// field is read in its C++ type as with `CppTypes`: one type for the
    /// whole file, whatever the entry range, and no value narrowed.
    ColumnTypes,
}

impl ReadOptions {
    /// The defaults: checksums verified, one decoding thread per core.
    pub const DEFAULT: ReadOptions = ReadOptions {
        verify_checksums: true,
        threads: 0,
        shape: ArrowShape::CppTypes,
        coalesce_gap: None,
        max_request: None,
        max_memory: None,
        max_page_size: DEFAULT_MAX_PAGE_SIZE,
        max_envelope_size: DEFAULT_MAX_ENVELOPE_SIZE,
        streamer_bytes: false,
    };

    /// These options with a budget of `bytes` per read (see [`ReadOptions::max_memory`]).
    pub const fn with_max_memory(mut self, bytes: Option<u64>) -> Self {
        self.max_memory = bytes;
        self
    }

    /// These options with pages of at most `bytes` (see [`ReadOptions::max_page_size`]).
    pub const fn with_max_page_size(mut self, bytes: u64) -> Self {
        self.max_page_size = bytes;
        self
    }

    /// These options with a coalescing gap of `bytes` (see [`ReadOptions::coalesce_gap`]).
    pub const fn with_coalesce_gap(mut self, bytes: u64) -> Self {
        self.coalesce_gap = Some(bytes);
        self
    }

    /// These options with requests of at most `bytes` (see [`ReadOptions::max_request`]).
    pub const fn with_max_request(mut self, bytes: u64) -> Self {
        self.max_request = Some(bytes);
        self
    }

    /// The request shape a read uses: the storage's `hints` with these
    /// options' overrides (a largest request of at least one byte).
    pub fn io_hints(&self, hints: rntuple_container::IoHints) -> rntuple_container::IoHints {
        rntuple_container::IoHints {
            coalesce_gap: self.coalesce_gap.unwrap_or(hints.coalesce_gap),
            max_request: self.max_request.unwrap_or(hints.max_request).max(1),
            ..hints
        }
    }

    /// These options with checksum verification on or off.
    pub const fn with_verify_checksums(mut self, verify: bool) -> Self {
        self.verify_checksums = verify;
        self
    }

    /// These options with `threads` decoding threads (see [`ReadOptions::threads`]).
    pub const fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// These options with the Arrow types of `shape` (see [`ArrowShape`]).
    pub const fn with_shape(mut self, shape: ArrowShape) -> Self {
        self.shape = shape;
        self
    }
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A ROOT file opened for reading RNTuples.
#[derive(Debug, Clone)]
pub struct RNTupleFile {
    root: Arc<RootFile>,
    options: ReadOptions,
    /// The path or URL it was opened from (for the I/O report).
    location: Arc<str>,
}

impl RNTupleFile {
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, ReadOptions::default())
    }

    pub fn open_with(path: impl AsRef<Path>, options: ReadOptions) -> Result<Self> {
        Self::open_cached(path, options, None)
    }

    /// Opens a path or URL; a remote file is read through the cache `cache`
    /// (`None`: the one of `RNTUPLE_CACHE_DIR`, if set). Local files are
    /// never cached.
    pub fn open_cached(
        path: impl AsRef<Path>,
        options: ReadOptions,
        cache: Option<rntuple_container::CacheConfig>,
    ) -> Result<Self> {
        let open = rntuple_container::OpenOptions { verify_checksums: options.verify_checksums, cache };
        let location = Arc::from(path.as_ref().to_string_lossy().as_ref());
        let root = RootFile::open_with(path, open)?;
        Ok(RNTupleFile { root: Arc::new(root), options, location })
    }

    /// Wraps an already opened container.
    pub fn from_root_file(root: RootFile, options: ReadOptions) -> Self {
        RNTupleFile { root: Arc::new(root), options, location: Arc::from("(storage)") }
    }

    pub fn root_file(&self) -> &RootFile {
        &self.root
    }

    /// Every key of the file, subdirectories included (`"dir/sub/name"`).
    pub fn keys(&self) -> Result<Vec<KeyInfo>> {
        self.root.keys()
    }

    /// Paths of the RNTuples in the file.
    pub fn rntuple_names(&self) -> Result<Vec<String>> {
        self.root.rntuple_names()
    }

    /// Opens the RNTuple at `path` (`"Events"`, `"dir/Events"`): reads and
    /// checks its anchor, header, footer and page lists.
    pub fn rntuple(&self, path: &str) -> Result<RNTuple> {
        RNTuple::open(self.root.clone(), path, self.options, self.location.clone())
    }
}

/// One RNTuple: its descriptor, schema and a page source.
#[derive(Debug, Clone)]
pub struct RNTuple {
    path: String,
    anchor: Anchor,
    schema: Schema,
    source: PageSource,
    options: ReadOptions,
    /// The footer's linked attribute sets ([`RNTuple::attribute_set`]).
    attribute_sets: Vec<AttributeSetLink>,
    /// Prints the I/O report when the last clone goes ([`IoReport`]).
    reporter: Arc<read::report::Reporter>,
}

impl RNTuple {
    fn open(root: Arc<RootFile>, path: &str, options: ReadOptions, location: Arc<str>) -> Result<Self> {
        let key = root.find_key(path)?;
        let checks = &mut Checks::Stop { verify_checksums: options.verify_checksums };
        let envelopes = load_envelopes(&root, &key, checks, options.max_envelope_size)?;
        Self::from_envelopes(root.clone(), path, envelopes, options, location)
    }

    /// Opens the RNTuple of `anchor` found through a linked attribute set's
    /// locator; `path` names it.
    fn open_anchor(root: Arc<RootFile>, path: &str, anchor: Anchor, options: ReadOptions) -> Result<Self> {
        let checks = &mut Checks::Stop { verify_checksums: options.verify_checksums };
        let location = Arc::from("(attribute set)");
        let envelopes = load_from_anchor(&root, anchor, checks, options.max_envelope_size)?;
        Self::from_envelopes(root.clone(), path, envelopes, options, location)
    }

    fn from_envelopes(
        root: Arc<RootFile>,
        path: &str,
        mut envelopes: Envelopes,
        options: ReadOptions,
        location: Arc<str>,
    ) -> Result<Self> {
        let verify = options.verify_checksums;
        let page_lists = envelopes.take_page_lists()?;
        let Envelopes { anchor, header, mut footer, .. } = envelopes;
        let mk = anchor.max_key_size;
        let attribute_sets = std::mem::take(&mut footer.attribute_sets);
        let desc = Arc::new(Descriptor::new(header, footer, page_lists)?);
        let schema = Schema::from_descriptor(&desc)?;
        let column_multiplier = read::column_multipliers(&schema, desc.fields.len(), desc.columns.len());
        let hints = options.io_hints(root.storage().hints());
        let io: Arc<read::IoCounters> = Arc::default();
        let reporter = Arc::new(read::report::Reporter::new(root.clone(), io.clone(), location, path.to_string()));
        let source = PageSource {
            file: root,
            desc,
            max_key_size: mk,
            verify_checksums: verify,
            column_multiplier,
            io,
            hints,
            max_memory: options.max_memory,
            max_page_size: options.max_page_size,
            spent: Arc::default(),
        };
        Ok(RNTuple { path: path.to_string(), anchor, schema, source, options, attribute_sets, reporter })
    }

    pub fn path(&self) -> &str {
        &self.path
    }
    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }
    pub fn descriptor(&self) -> &Descriptor {
        &self.source.desc
    }
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The streamer infos ROOT stored for this RNTuple's streamer fields
    /// (extra type information of content id 0, header and footer), to
    /// decode them with [`streamer::decode_array`]. Empty when there are none.
    pub fn streamer_infos(&self) -> Result<streamer::StreamerInfos> {
        streamer::infos_of(self.descriptor())
    }
    pub fn num_entries(&self) -> u64 {
        self.source.desc.num_entries()
    }

    /// The attribute sets linked to this RNTuple, as its footer lists them
    /// (read one with [`RNTuple::attribute_set`]).
    pub fn attribute_sets(&self) -> &[AttributeSetLink] {
        &self.attribute_sets
    }

    /// Top-level fields read by default: all but those of a type this
    /// implementation cannot read (the spec asks readers to skip them).
    pub fn readable_fields(&self) -> Vec<&FieldNode> {
        self.schema.fields.iter().filter(|f| !has_unsupported(f)).collect()
    }

    /// Arrow schema of [`RNTuple::readable_fields`]: the schema of the
    /// batches [`RNTuple::read`] returns. It is the schema of a read of no
    /// entries (no page is read), so that a streamer field has the type of
    /// its decoded objects, as in the batches, or stays binary where the
    /// read would keep bytes (a class missing from the streamer info,
    /// [`ReadOptions::streamer_bytes`]). Should that read fail, the
    /// schema of the fields' declared types is given.
    pub fn arrow_schema(&self) -> SchemaRef {
        match self.read(None, 0, 0) {
            Ok(batch) => batch.schema(),
            Err(_) => {
                Arc::new(ArrowSchema::new(self.readable_fields().iter().map(|f| f.arrow_field()).collect::<Vec<_>>()))
            }
        }
    }

    fn select(&self, fields: Option<&[&str]>) -> Result<Vec<read::Selected<'_>>> {
        match fields {
            None => Ok(self.readable_fields().into_iter().map(read::Selected::whole).collect()),
            Some(paths) => read::resolve_selection(&self.schema.fields, paths, &self.path),
        }
    }

    /// Reads `fields` (all readable ones when `None`) for entries
    /// `[entry_start, entry_stop)` (clamped to the number of entries). A
    /// field is a top-level name or the dotted path of a subfield
    /// (`"Muon.pt"`), which reads that subfield's columns and the offsets
    /// of the collections above it only; the record batch then holds the
    /// top-level field with only the selected members.
    pub fn read(&self, fields: Option<&[&str]>, entry_start: u64, entry_stop: u64) -> Result<RecordBatch> {
        self.read_with(fields, entry_start, entry_stop, &self.options)
    }

    /// Like [`RNTuple::read`] with other options for this read (e.g. another
    /// number of threads, or page checksums not verified).
    pub fn read_with(
        &self,
        fields: Option<&[&str]>,
        entry_start: u64,
        entry_stop: u64,
        options: &ReadOptions,
    ) -> Result<RecordBatch> {
        Ok(self.read_with_notes(fields, entry_start, entry_stop, options)?.0)
    }

    /// Like [`RNTuple::read_with`], and the streamer fields (at any depth)
    /// the read left as bytes because their objects could not be decoded,
    /// each with the reason (sorted by path; see [`UndecodedStreamer`]).
    pub fn read_with_notes(
        &self,
        fields: Option<&[&str]>,
        entry_start: u64,
        entry_stop: u64,
        options: &ReadOptions,
    ) -> Result<(RecordBatch, Vec<UndecodedStreamer>)> {
        let sel = self.select(fields)?;
        let stop = entry_stop.min(self.num_entries());
        let start = entry_start.min(stop);
        let began = std::time::Instant::now();
        let read = read::read_range(&self.source, &sel, start, stop, options);
        self.source.io.add_read_time(began.elapsed());
        read
    }

    /// The I/O figures of this handle so far, with the storage's wire
    /// figures (see [`IoReport`]; printed at the end when
    /// `RNTUPLE_IO_REPORT=1` or [`set_io_report`]).
    pub fn io_report(&self) -> IoReport {
        self.reporter.report()
    }

    /// Prints the I/O report now (to stderr, once per handle) when reports
    /// are on; for handles a garbage collector may never drop.
    pub fn print_io_report(&self) {
        self.reporter.print()
    }

    /// The page source (column-level reads, see [`PageSource::read_column`]).
    pub fn page_source(&self) -> &PageSource {
        &self.source
    }

    /// The options reads use by default (those the file was opened with).
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// I/O done by the reads of this RNTuple (and its clones) so far:
    /// requests, bytes read and bytes needed (see [`IoStats`]).
    pub fn io_stats(&self) -> IoStats {
        self.source.io.snapshot()
    }

    /// Sets the [`RNTuple::io_stats`] counters to zero.
    pub fn reset_io_stats(&self) {
        self.source.io.reset()
    }

    /// Reads everything.
    pub fn read_all(&self) -> Result<RecordBatch> {
        self.read(None, 0, u64::MAX)
    }

    /// Batches of at most `step` entries over `[start, stop)`.
    pub fn iter_batches<'a>(
        &'a self,
        fields: Option<&'a [&'a str]>,
        step: u64,
        start: u64,
        stop: u64,
    ) -> impl Iterator<Item = Result<RecordBatch>> + 'a {
        let stop = stop.min(self.num_entries());
        let step = step.max(1);
        let mut pos = start.min(stop);
        std::iter::from_fn(move || {
            if pos >= stop {
                return None;
            }
            let end = (pos + step).min(stop);
            let r = self.read(fields, pos, end);
            pos = end;
            Some(r)
        })
    }
}

fn has_unsupported(f: &FieldNode) -> bool {
    matches!(f.kind, FieldKind::Unsupported(_)) || f.children.iter().any(has_unsupported)
}
