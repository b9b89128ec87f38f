//! Committing clusters, cluster groups and the footer of an
//! [`RNTupleWriter`] (spec "Page List Envelope", "Footer Envelope"): what
//! turns buffered entries into data a reader can find.

use super::*;
use rntuple_format::model::PageDescriptor;

impl RNTupleWriter<'_> {
    /// Commits the entries written since the last cluster as a cluster (no-op
    /// when there are none).
    pub fn commit_cluster(&mut self) -> Result<()> {
        self.usable()?;
        let r = self.commit_cluster_inner();
        self.guard(r)
    }

    pub(super) fn commit_cluster_inner(&mut self) -> Result<()> {
        if self.cluster_entries == 0 {
            return Ok(());
        }
        let mut columns = self.filler.columns.finish_cluster()?;
        let entries = self.cluster_entries;
        let written = match &self.sink {
            Sink::Context(main) => {
                // Clusters of fill contexts are appended in commit order.
                let main = Arc::clone(main);
                let mut main = lock_main(&main)?;
                main.usable()?;
                // Fields added since this context last looked: its entries
                // get their zero values, so that the cluster carries every
                // column of the schema it is recorded under (`extend`).
                if self.adopt(&main)? {
                    let added = self.filler.columns.finish_cluster()?;
                    let known = columns.len();
                    columns.extend(added.into_iter().skip(known));
                }
                let r = main.record_cluster(&columns, entries, true, None);
                main.guard(r)?
            }
            _ => {
                self.write_streamed(true)?;
                let merge = self.options.same_page_merging && self.options.page_checksums;
                let streamed = match self.open.as_mut() {
                    Some(o) => Some(o.finish(self.sink.get()?, columns.len(), merge)?),
                    None => None,
                };
                self.record_cluster(&columns, entries, false, streamed)?
            }
        };
        drop(columns);
        self.filler.columns.cluster_written();
        // ROOT's estimate of the next cluster's unzipped size: the target
        // compressed size times the compression factor so far (in f32, capped at 1000).
        self.bytes_filled += self.cluster_unzipped;
        self.bytes_flushed += written;
        let factor = (self.bytes_filled as f32 / self.bytes_flushed as f32).min(1000.0);
        self.unzipped_estimate = (factor * self.options.approx_zipped_cluster_size as f32) as u64;
        self.first_entry += entries;
        self.cluster_entries = 0;
        self.cluster_unzipped = 0;
        self.filler.reset_counts();
        Ok(())
    }

    /// Writes the pages of a cluster of `entries` entries and records it as
    /// the next cluster; returns the bytes written. `parallel`: the cluster
    /// comes from a fill context, so its entries and column elements are
    /// numbered here, after those recorded before. `streamed`: the pages
    /// were written already, with these descriptors and bytes written.
    pub(super) fn record_cluster(
        &mut self,
        columns: &[ClusterColumn],
        entries: u64,
        parallel: bool,
        streamed: Option<(Vec<Vec<PageDescriptor>>, u64)>,
    ) -> Result<u64> {
        if columns.len() != self.plan.columns.len() {
            return Err(Error::internal(format!(
                "a cluster of {} columns for RNTuple '{}' of {} columns",
                columns.len(),
                self.name,
                self.plan.columns.len()
            )));
        }
        let (pages, written) = match streamed {
            Some(s) => s,
            None => {
                let merge = self.options.same_page_merging && self.options.page_checksums;
                write_cluster_pages(self.sink.get()?, columns, merge)?
            }
        };
        let mut ranges = Vec::with_capacity(columns.len());
        for (i, (c, pages)) in columns.iter().zip(pages).enumerate() {
            let first_element = if parallel {
                let n = c.pages.iter().map(|p| p.num_elements as u64).sum();
                self.filler.columns.advance(i, n)
            } else {
                c.first_element
            };
            ranges.push(ColumnPageRange {
                element_offset: first_element as i64,
                compression: Some(self.options.compression),
                pages,
            });
        }
        let summary = ClusterSummary { first_entry: self.first_entry, num_entries: entries, flags: 0 };
        let record = if self.journal { Some(self.journal_record(summary, &ranges)?) } else { None };
        self.pending.push((summary, ranges));
        if parallel {
            self.first_entry += entries;
        }
        if self.options.cluster_group_size > 0 && self.pending.len() >= self.options.cluster_group_size {
            self.commit_cluster_group_inner()?;
        }
        // The cluster is committed once its record is in the journal.
        if let Some(record) = record {
            self.sink.get()?.commit(&record)?;
        }
        Ok(written)
    }

    /// The journal record of a cluster about to be recorded
    /// ([`crate::write::journal`]): its page list, the header's locator and
    /// the schema extension so far.
    fn journal_record(&mut self, summary: ClusterSummary, ranges: &[ColumnPageRange]) -> Result<Vec<u8>> {
        let header = self.ensure_header()?;
        let list = PageList {
            header_checksum: header.checksum,
            clusters: vec![summary],
            page_locations: vec![ranges.to_vec()],
        };
        let footer = Footer {
            feature_flags: Vec::new(),
            header_checksum: header.checksum,
            schema_extension: self.schema_extension(&header),
            cluster_groups: Vec::new(),
            attribute_sets: Vec::new(),
        };
        let record = crate::write::journal::ClusterRecord {
            name: self.name.clone(),
            header: header.link,
            header_checksum: header.checksum,
            compression: self.options.compression,
            page_list: write_page_list(&list)?.0,
            footer: footer_envelope(&footer)?,
        };
        Ok(record.encode())
    }

    fn schema_extension(&self, header: &WrittenHeader) -> SchemaDescription {
        let s = &self.plan.schema;
        SchemaDescription {
            fields: s.fields[header.fields..].to_vec(),
            columns: s.columns[header.columns..].to_vec(),
            alias_columns: s.alias_columns[header.alias_columns..].to_vec(),
            extra_type_info: Vec::new(),
        }
    }

    /// Writes the page list of the clusters committed since the last one
    /// (no-op when there are none). Entries not yet in a cluster stay open.
    pub fn commit_cluster_group(&mut self) -> Result<()> {
        self.usable()?;
        let r = self.commit_cluster_group_inner();
        self.guard(r)
    }

    pub(super) fn commit_cluster_group_inner(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let min_entry = pending[0].0.first_entry;
        let entry_span = pending.iter().map(|(s, _)| s.num_entries).sum();
        let num_clusters = pending.len() as u32;
        let (clusters, page_locations) = pending.into_iter().unzip();
        let header_checksum = self.ensure_header()?.checksum;
        let list = PageList { header_checksum, clusters, page_locations };
        let (bytes, _) = write_page_list(&list)?;
        let page_list = self.write_envelope(&bytes)?;
        self.groups.push(ClusterGroupDescriptor { min_entry, entry_span, num_clusters, page_list });
        Ok(())
    }

    /// The attribute sets of this RNTuple, the entries written so far and
    /// the options, for [`crate::attributes`]; fails when the writer cannot
    /// take them (failed earlier, or a fill context).
    pub(crate) fn attribute_sets_mut(&mut self) -> Result<(&mut PendingSets, u64, &WriteOptions)> {
        self.usable()?;
        if matches!(self.sink, Sink::Context(_)) {
            return Err(Error::invalid(format!(
                "attribute sets are created on the parallel writer of '{}'",
                self.name
            )));
        }
        let written = self.num_entries();
        Ok((&mut self.attribute_sets, written, &self.options))
    }

    /// Commits the last cluster, writes the page lists, the attribute sets,
    /// the footer and the anchor.
    pub fn close(mut self) -> Result<()> {
        let anchor = self.close_anchor()?;
        self.sink.get()?.write_anchor(&self.name, &anchor)
    }

    /// [`RNTupleWriter::close`] but for the anchor, which is returned (an
    /// attribute set's RNTuple puts it where no directory lists it).
    pub(crate) fn close_anchor(&mut self) -> Result<rntuple_container::Anchor> {
        self.usable()?;
        let header = self.ensure_header()?;
        self.commit_cluster_inner()?;
        self.commit_cluster_group_inner()?;
        let schema_extension = self.schema_extension(&header);
        let sets = std::mem::take(&mut self.attribute_sets);
        let attribute_sets = sets.write(self.sink.get()?)?;
        let footer = Footer {
            feature_flags: Vec::new(),
            header_checksum: header.checksum,
            schema_extension,
            cluster_groups: std::mem::take(&mut self.groups),
            attribute_sets,
        };
        let bytes = footer_envelope(&footer)?;
        crash_point(CrashPoint::Footer);
        let footer = self.write_envelope(&bytes)?;
        Ok(crate::new_anchor(&header.link, &footer, self.sink.get()?.max_key_size()))
    }
}

/// The footer envelope (spec "Footer Envelope") as ROOT 6.40 writes it: the
/// schema extension record frame always holds the four (possibly empty) list
/// frames, and the cluster groups are followed by the (empty) list frame of
/// linked attribute sets of format 1.0.1.0+ (uproot 5.7 needs both).
pub(crate) fn footer_envelope(f: &Footer) -> Result<Vec<u8>> {
    Ok(rntuple_format::envelope::write_footer(f)?.0)
}
