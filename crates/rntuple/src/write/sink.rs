//! The page-sink layer of the write engine: where an RNTuple's bytes go.
//!
//! A [`PageSink`] owns everything about one RNTuple that lies in the file
//! rather than in the entries: the header envelope, the placement of page
//! blobs, the clusters recorded so far (spec "Page List Envelope"), their
//! cluster groups, the footer (spec "Footer Envelope"), the anchor (spec
//! "Anchor schema") and the journal record of each committed cluster. What
//! it writes to is a [`BlobSink`]: a local [`FileWriter`], a
//! [`super::SharedFileWriter`], or any destination that can place payloads
//! and return their offsets (append-only streams, objects uploaded in parts,
//! servers that take writes at offsets fit this shape: the sink never reads
//! back or rewrites what it wrote, and asks for an offset only after
//! handing over the bytes).
//!
//! The fill contexts above it ([`super::RNTupleWriter`], the contexts of a
//! [`super::ParallelWriter`]) turn entries into pages and hand clusters of
//! sealed pages down; `merge` and `recover` (crate `rntuple-tools`) record
//! the clusters they copied, so every writer of the project ends its files
//! in [`PageSink::finish`].

use std::path::{Path, PathBuf};

use rntuple_container::write::{crash_point, CrashPoint, FileWriter, PayloadSource};
use rntuple_container::Anchor;
use rntuple_format::compression::compress;
use rntuple_format::constants::FORMAT_VERSION;
use rntuple_format::envelope::{write_footer, write_header, write_page_list};
use rntuple_format::model::{
    AttributeSetLink, ClusterGroupDescriptor, ClusterSummary, ColumnPageRange, EnvelopeLink, ExtraTypeInfo, Footer,
    Header, Locator, PageDescriptor, PageList, SchemaDescription,
};
use rntuple_format::{Error, Result};

use super::journal::ClusterRecord;

/// Where payloads go: what the write engine needs from the container.
pub trait BlobSink: Send {
    /// Writes `parts` back to back as one payload (split over keys when it
    /// exceeds the maximum key size); returns the payload's offset.
    /// `uncompressed_len` is recorded as the key's object length, as ROOT does.
    fn write_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64>;
    /// Writes the anchor of the RNTuple `name` (a path: `"dir/Events"`)
    /// into the directory that lists it.
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()>;
    /// The largest payload one key holds.
    fn max_key_size(&self) -> u64;
    /// Writes the anchor of an attribute set's RNTuple where no directory
    /// lists it; returns the offset of its bytes (`anchor.to_bytes()`).
    fn write_hidden_anchor(&mut self, _name: &str, anchor: &Anchor) -> Result<u64> {
        let bytes = anchor.to_bytes();
        self.write_blob(&[&bytes], bytes.len() as u64)
    }
    /// [`BlobSink::write_blob`] for a payload read from `src` in pieces (the
    /// pages of a cluster spilled to a scratch file): the same keys. This
    /// default gathers the payload in memory; file sinks stream it.
    fn write_blob_from(&mut self, src: &mut dyn PayloadSource, uncompressed_len: u64) -> Result<u64> {
        let len = src.len();
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        while (bytes.len() as u64) < len {
            let left = usize::try_from(len - bytes.len() as u64).unwrap_or(usize::MAX);
            let piece = src.bytes_at(bytes.len() as u64, left).map_err(|e| Error::io("reading a payload", e))?;
            bytes.extend_from_slice(piece);
        }
        self.write_blob(&[&bytes], uncompressed_len)
    }
    /// Where a writer keeps scratch files (the directory of a local output
    /// file); `None`: `$TMPDIR`.
    fn scratch_dir(&self) -> Option<PathBuf> {
        None
    }
    /// Makes the payloads written so far survive the process and journals
    /// `record` ([`FileWriter::commit`]); a sink without a journal ignores it.
    fn commit(&mut self, _record: &[u8]) -> Result<()> {
        Ok(())
    }
    /// Lists a class's streamer info in the file's streamer-info record
    /// ([`FileWriter::add_class_streamer_info`]); a sink without that record
    /// ignores it.
    fn add_class_streamer_info(&mut self, _object: &[u8]) {}
}

impl BlobSink for FileWriter {
    fn write_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64> {
        self.write_blob_parts_with_len(parts, uncompressed_len)
    }
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        FileWriter::write_anchor(self, name, anchor)
    }
    fn max_key_size(&self) -> u64 {
        FileWriter::max_key_size(self)
    }
    fn write_hidden_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<u64> {
        FileWriter::write_hidden_anchor(self, name, anchor)
    }
    fn write_blob_from(&mut self, src: &mut dyn PayloadSource, uncompressed_len: u64) -> Result<u64> {
        FileWriter::write_blob_from(self, src, uncompressed_len)
    }
    fn scratch_dir(&self) -> Option<PathBuf> {
        self.local_dir().map(Path::to_path_buf)
    }
    fn commit(&mut self, record: &[u8]) -> Result<()> {
        FileWriter::commit(self, record)
    }
    fn add_class_streamer_info(&mut self, object: &[u8]) {
        FileWriter::add_class_streamer_info(self, object)
    }
}

/// A borrowed destination is a destination.
impl<T: BlobSink + ?Sized> BlobSink for &mut T {
    fn write_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64> {
        (**self).write_blob(parts, uncompressed_len)
    }
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        (**self).write_anchor(name, anchor)
    }
    fn max_key_size(&self) -> u64 {
        (**self).max_key_size()
    }
    fn write_hidden_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<u64> {
        (**self).write_hidden_anchor(name, anchor)
    }
    fn write_blob_from(&mut self, src: &mut dyn PayloadSource, uncompressed_len: u64) -> Result<u64> {
        (**self).write_blob_from(src, uncompressed_len)
    }
    fn scratch_dir(&self) -> Option<PathBuf> {
        (**self).scratch_dir()
    }
    fn commit(&mut self, record: &[u8]) -> Result<()> {
        (**self).commit(record)
    }
    fn add_class_streamer_info(&mut self, object: &[u8]) {
        (**self).add_class_streamer_info(object)
    }
}

/// The anchor our writers store for an RNTuple whose header and footer
/// envelopes are at `header` and `footer` (spec "Anchor schema"), stamped
/// with [`FORMAT_VERSION`].
pub fn new_anchor(header: &EnvelopeLink, footer: &EnvelopeLink, max_key_size: u64) -> Anchor {
    let (version_epoch, version_major, version_minor, version_patch) = FORMAT_VERSION;
    Anchor {
        version_epoch,
        version_major,
        version_minor,
        version_patch,
        seek_header: header.locator.offset,
        nbytes_header: header.locator.size,
        len_header: header.length,
        seek_footer: footer.locator.offset,
        nbytes_footer: footer.locator.size,
        len_footer: footer.length,
        max_key_size,
    }
}

/// The header envelope as written, and how much of the schema it holds (the
/// rest goes into the footer's schema extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenHeader {
    pub link: EnvelopeLink,
    pub checksum: u64,
    /// Fields, columns and alias columns the header describes.
    pub fields: usize,
    pub columns: usize,
    pub alias_columns: usize,
}

impl WrittenHeader {
    /// What of `schema` (the whole schema now) the header does not hold:
    /// the footer's schema extension (spec "Schema Extension Record Frame").
    pub fn extension_of(&self, schema: &SchemaDescription) -> SchemaDescription {
        SchemaDescription {
            fields: schema.fields[self.fields.min(schema.fields.len())..].to_vec(),
            columns: schema.columns[self.columns.min(schema.columns.len())..].to_vec(),
            alias_columns: schema.alias_columns[self.alias_columns.min(schema.alias_columns.len())..].to_vec(),
            extra_type_info: Vec::new(),
            unknown_trailing_bytes: Vec::new(),
        }
    }
}

/// How a [`PageSink`] records its RNTuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkOptions {
    /// Compression setting of the envelopes (and recorded for the pages).
    pub compression: u32,
    /// Clusters per cluster group: a page list is written after this many
    /// (0: one group at the end).
    pub cluster_group_size: usize,
    /// Whether each recorded cluster is journaled ([`BlobSink::commit`]).
    pub journal: bool,
}

/// What the footer holds besides the cluster groups, which the sink knows.
#[derive(Debug, Clone, Default)]
pub struct FooterParts {
    pub feature_flags: Vec<u64>,
    pub schema_extension: SchemaDescription,
    pub attribute_sets: Vec<AttributeSetLink>,
}

/// One RNTuple's envelopes, clusters and anchor in a destination.
pub struct PageSink<'f> {
    dest: Box<dyn BlobSink + 'f>,
    name: String,
    options: SinkOptions,
    header: Option<WrittenHeader>,
    /// Entries of the clusters recorded so far.
    entries: u64,
    /// The index of the next element of each column (spec "Page List
    /// Envelope": a cluster's first element index of the column).
    next_element: Vec<u64>,
    /// Clusters recorded since the last page list.
    pending: Vec<(ClusterSummary, Vec<ColumnPageRange>)>,
    groups: Vec<ClusterGroupDescriptor>,
    /// The footer's extra type information so far (the streamer infos of
    /// the streamer fields' classes), carried by each journal record.
    extra_type_info: Vec<ExtraTypeInfo>,
}

impl std::fmt::Debug for PageSink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageSink")
            .field("name", &self.name)
            .field("entries", &self.entries)
            .field("clusters", &self.num_clusters())
            .finish_non_exhaustive()
    }
}

impl<'f> PageSink<'f> {
    /// A sink for the RNTuple `name` (a path: the anchor goes into those
    /// subdirectories) into `dest`.
    pub fn new(dest: impl BlobSink + 'f, name: &str, options: SinkOptions) -> Self {
        PageSink {
            dest: Box::new(dest),
            name: name.to_string(),
            options,
            header: None,
            entries: 0,
            next_element: Vec::new(),
            pending: Vec::new(),
            groups: Vec::new(),
            extra_type_info: Vec::new(),
        }
    }

    /// The extra type information the footer will carry (the writer's
    /// streamer infos): each journal record's footer carries it too, so
    /// that `recover` restores it with the committed clusters (without it
    /// a recovered streamer field could not be decoded).
    pub fn set_extra_type_info(&mut self, infos: Vec<ExtraTypeInfo>) {
        self.extra_type_info = infos;
    }

    /// The name of the RNTuple as given (`"dir/Events"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The destination, for payloads the sink does not place itself (pages
    /// copied as they are by `merge`).
    pub fn dest(&mut self) -> &mut (dyn BlobSink + 'f) {
        &mut *self.dest
    }

    pub fn options(&self) -> SinkOptions {
        self.options
    }

    /// Journals recorded clusters or not ([`SinkOptions::journal`]).
    pub fn set_journal(&mut self, on: bool) {
        self.options.journal = on;
    }

    /// Columns declared so far ([`PageSink::add_columns`]).
    pub fn num_columns(&self) -> usize {
        self.next_element.len()
    }

    /// The header as written, once it is.
    pub fn header(&self) -> Option<WrittenHeader> {
        self.header
    }

    /// Entries of the clusters recorded so far.
    pub fn num_entries(&self) -> u64 {
        self.entries
    }

    /// Cluster groups whose page lists are written.
    pub fn num_cluster_groups(&self) -> usize {
        self.groups.len()
    }

    /// Clusters recorded so far.
    pub fn num_clusters(&self) -> usize {
        self.groups.iter().map(|g| g.num_clusters as usize).sum::<usize>() + self.pending.len()
    }

    /// Compresses `bytes` (an envelope) with the sink's setting and writes
    /// it as one payload.
    pub fn write_envelope(&mut self, bytes: &[u8]) -> Result<EnvelopeLink> {
        let zipped = compress(bytes, self.options.compression)?;
        let offset = self.dest.write_blob(&[&zipped], bytes.len() as u64)?;
        Ok(EnvelopeLink { length: bytes.len() as u64, locator: Locator { offset, size: zipped.len() as u64 } })
    }

    /// Writes the header envelope (once).
    pub fn write_header(&mut self, header: &Header) -> Result<WrittenHeader> {
        if self.header.is_some() {
            return Err(Error::internal(format!("the header of RNTuple '{}' is written twice", self.name)));
        }
        let (bytes, checksum) = write_header(header)?;
        let link = self.write_envelope(&bytes)?;
        let s = &header.schema;
        let h = WrittenHeader {
            link,
            checksum,
            fields: s.fields.len(),
            columns: s.columns.len(),
            alias_columns: s.alias_columns.len(),
        };
        self.header = Some(h);
        Ok(h)
    }

    /// Takes the header envelope at `link`, written before (by a writer
    /// that died: `recover`). How much of the schema it holds is not known
    /// here: the footer's schema extension is then given whole, and no
    /// journal records are made.
    pub fn resume(&mut self, link: EnvelopeLink, checksum: u64) {
        self.header = Some(WrittenHeader { link, checksum, fields: 0, columns: 0, alias_columns: 0 });
        self.options.journal = false;
    }

    fn written_header(&self) -> Result<WrittenHeader> {
        self.header.ok_or_else(|| Error::internal(format!("RNTuple '{}' has no header yet", self.name)))
    }

    /// Declares the columns of the schema so far: the first element index
    /// of each column added since the last call (spec "Column Description":
    /// nonzero for a deferred column).
    pub fn add_columns(&mut self, first_elements: impl IntoIterator<Item = u64>) {
        self.next_element.extend(first_elements);
    }

    /// Records the cluster of `entries` entries whose pages (of every column
    /// declared, in order) lie at `pages`: numbers its elements after those
    /// recorded before. `schema` is the whole schema now (its extension goes
    /// into the journal record).
    pub fn commit_pages(
        &mut self,
        entries: u64,
        pages: Vec<Vec<PageDescriptor>>,
        schema: &SchemaDescription,
    ) -> Result<()> {
        if pages.len() != self.next_element.len() {
            return Err(Error::internal(format!(
                "a cluster of {} columns for RNTuple '{}' of {} columns",
                pages.len(),
                self.name,
                self.next_element.len()
            )));
        }
        let ranges = pages
            .into_iter()
            .zip(&mut self.next_element)
            .map(|(pages, next)| {
                let first = *next;
                *next += pages.iter().map(|p| p.num_elements as u64).sum::<u64>();
                ColumnPageRange { element_offset: first as i64, compression: Some(self.options.compression), pages }
            })
            .collect();
        self.record_cluster(entries, ranges, Some(schema))
    }

    /// Records the next cluster, of `entries` entries, its pages at `ranges`
    /// (one per column, element offsets given). With a journal, the cluster
    /// is committed once its record is in the journal (`schema`: the whole
    /// schema, whose extension the record carries).
    pub fn record_cluster(
        &mut self,
        entries: u64,
        ranges: Vec<ColumnPageRange>,
        schema: Option<&SchemaDescription>,
    ) -> Result<()> {
        let summary = ClusterSummary { first_entry: self.entries, num_entries: entries, flags: 0 };
        let record = match schema {
            Some(s) if self.options.journal => Some(self.journal_record(summary, &ranges, s)?),
            _ => None,
        };
        self.pending.push((summary, ranges));
        self.entries += entries;
        if self.options.cluster_group_size > 0 && self.pending.len() >= self.options.cluster_group_size {
            self.commit_cluster_group()?;
        }
        if let Some(record) = record {
            self.dest.commit(&record)?;
        }
        Ok(())
    }

    /// The journal record of a cluster ([`crate::write::journal`]): its page
    /// list, the header's locator and the schema extension so far.
    fn journal_record(
        &self,
        summary: ClusterSummary,
        ranges: &[ColumnPageRange],
        schema: &SchemaDescription,
    ) -> Result<Vec<u8>> {
        let header = self.written_header()?;
        let list = PageList {
            header_checksum: header.checksum,
            clusters: vec![summary],
            page_locations: vec![ranges.to_vec()],
        };
        let footer = Footer {
            feature_flags: Vec::new(),
            header_checksum: header.checksum,
            schema_extension: SchemaDescription {
                extra_type_info: self.extra_type_info.clone(),
                ..header.extension_of(schema)
            },
            cluster_groups: Vec::new(),
            attribute_sets: Vec::new(),
        };
        let record = ClusterRecord {
            name: self.name.clone(),
            header: header.link,
            header_checksum: header.checksum,
            compression: self.options.compression,
            page_list: write_page_list(&list)?.0,
            footer: write_footer(&footer)?.0,
        };
        Ok(record.encode())
    }

    /// Writes the page list of the clusters recorded since the last one
    /// (no-op when there are none).
    pub fn commit_cluster_group(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let header_checksum = self.written_header()?.checksum;
        let pending = std::mem::take(&mut self.pending);
        let min_entry = pending[0].0.first_entry;
        let entry_span = pending.iter().map(|(s, _)| s.num_entries).sum();
        let num_clusters = pending.len() as u32;
        let (clusters, page_locations) = pending.into_iter().unzip();
        let list = PageList { header_checksum, clusters, page_locations };
        let page_list = self.write_envelope(&write_page_list(&list)?.0)?;
        self.groups.push(ClusterGroupDescriptor { min_entry, entry_span, num_clusters, page_list });
        Ok(())
    }

    /// Ends the RNTuple: the last page list, the footer; returns the anchor,
    /// to be written with [`PageSink::write_anchor`] (or where no directory
    /// lists it, for an attribute set).
    pub fn finish(&mut self, parts: FooterParts) -> Result<Anchor> {
        let header = self.written_header()?;
        self.commit_cluster_group()?;
        let footer = Footer {
            feature_flags: parts.feature_flags,
            header_checksum: header.checksum,
            schema_extension: parts.schema_extension,
            cluster_groups: std::mem::take(&mut self.groups),
            attribute_sets: parts.attribute_sets,
        };
        // The footer as ROOT 6.40 writes it: the schema extension record frame
        // always holds its four (possibly empty) list frames, and the cluster
        // groups are followed by the (empty) list of linked attribute sets of
        // format 1.0.1.0+ (uproot 5.7 needs both).
        let bytes = write_footer(&footer)?.0;
        crash_point(CrashPoint::Footer);
        let link = self.write_envelope(&bytes)?;
        Ok(new_anchor(&header.link, &link, self.dest.max_key_size()))
    }

    /// Writes `anchor` into the directory of the RNTuple's name.
    pub fn write_anchor(&mut self, anchor: &Anchor) -> Result<()> {
        let name = self.name.clone();
        self.dest.write_anchor(&name, anchor)
    }
}
