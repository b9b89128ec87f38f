//! The whole descriptor of one RNTuple: header, footer schema extension and
//! every cluster of every page list, merged into one view (spec "Footer
//! Envelope": the extension is read as if appended to the header's schema).

use rntuple_format::model::{
    AliasColumnDescriptor, ClusterSummary, ColumnDescriptor, ColumnPageRange, FieldDescriptor, Footer, Header, PageList,
};
use rntuple_format::{Error, Location, Result};

/// One cluster: its entry range and, per physical column, its pages.
#[derive(Debug, Clone)]
pub struct ClusterInfo {
    pub id: usize,
    /// Cluster group this cluster belongs to.
    pub group: usize,
    pub first_entry: u64,
    pub num_entries: u64,
    /// Indexed by physical column id; columns that the page list does not
    /// mention (added later by schema extension) are absent.
    pub columns: Vec<ColumnPageRange>,
}

/// Header + footer + page lists, merged.
#[derive(Debug, Clone)]
pub struct Descriptor {
    pub name: String,
    pub description: String,
    pub writer: String,
    pub fields: Vec<FieldDescriptor>,
    /// Physical columns, header first then extension; index = column id.
    pub columns: Vec<ColumnDescriptor>,
    pub alias_columns: Vec<AliasColumnDescriptor>,
    /// Number of fields that came from the header (the rest are extension fields).
    pub num_header_fields: usize,
    /// Number of physical columns that came from the header.
    pub num_header_columns: usize,
    pub clusters: Vec<ClusterInfo>,
    pub num_cluster_groups: usize,
    /// Extra type information of header and footer (spec "Extra type
    /// information"): ROOT's streamer infos of its streamer fields.
    pub extra_type_info: Vec<rntuple_format::model::ExtraTypeInfo>,
}

impl Descriptor {
    /// Merges the envelopes. `page_lists` are in cluster-group order.
    pub fn new(header: Header, footer: Footer, page_lists: Vec<PageList>) -> Result<Self> {
        let mut fields = header.schema.fields;
        let num_header_fields = fields.len();
        fields.extend(footer.schema_extension.fields);
        let mut columns = header.schema.columns;
        let num_header_columns = columns.len();
        columns.extend(footer.schema_extension.columns);
        let mut alias_columns = header.schema.alias_columns;
        alias_columns.extend(footer.schema_extension.alias_columns);
        let mut extra_type_info = header.schema.extra_type_info;
        extra_type_info.extend(footer.schema_extension.extra_type_info);

        let loc = |what: String| Location::new(what, None);
        for (i, f) in fields.iter().enumerate() {
            if f.parent_id as usize >= fields.len() {
                return Err(Error::out_of_spec(
                    format!(
                        "field {i} ('{}') has parent id {} but there are only {} fields",
                        f.name,
                        f.parent_id,
                        fields.len()
                    ),
                    loc("header field list".into()),
                ));
            }
            if let Some(src) = f.source_field_id {
                if src as usize >= fields.len() {
                    return Err(Error::out_of_spec(
                        format!("projected field {i} ('{}') has source field id {src} out of range", f.name),
                        loc("header field list".into()),
                    ));
                }
            }
        }
        for (i, c) in columns.iter().enumerate() {
            if c.field_id as usize >= fields.len() {
                return Err(Error::out_of_spec(
                    format!("column {i} refers to field {} but there are only {} fields", c.field_id, fields.len()),
                    loc("header column list".into()),
                ));
            }
        }
        for (i, a) in alias_columns.iter().enumerate() {
            if a.field_id as usize >= fields.len() || a.physical_column_id as usize >= columns.len() {
                return Err(Error::out_of_spec(
                    format!(
                        "alias column {i} refers to field {} / physical column {} out of range",
                        a.field_id, a.physical_column_id
                    ),
                    loc("header alias column list".into()),
                ));
            }
        }

        let mut clusters = Vec::new();
        let num_cluster_groups = page_lists.len();
        for (g, pl) in page_lists.into_iter().enumerate() {
            if pl.page_locations.len() != pl.clusters.len() {
                return Err(Error::out_of_spec(
                    format!(
                        "page list has {} cluster summaries but page locations for {} clusters",
                        pl.clusters.len(),
                        pl.page_locations.len()
                    ),
                    loc(format!("page list of cluster group {g}")),
                ));
            }
            for (summary, cols) in pl.clusters.into_iter().zip(pl.page_locations) {
                let ClusterSummary { first_entry, num_entries, .. } = summary;
                if cols.len() > columns.len() {
                    return Err(Error::out_of_spec(
                        format!("cluster lists {} columns but the schema has {}", cols.len(), columns.len()),
                        loc(format!("page list of cluster group {g}")),
                    ));
                }
                clusters.push(ClusterInfo { id: clusters.len(), group: g, first_entry, num_entries, columns: cols });
            }
        }
        clusters.sort_by_key(|c| c.first_entry);
        // Clusters partition the entries: each starts where the previous ends.
        let mut next_entry = clusters.first().map_or(0, |c| c.first_entry);
        for (i, c) in clusters.iter_mut().enumerate() {
            c.id = i;
            if c.first_entry != next_entry {
                return Err(Error::out_of_spec(
                    format!(
                        "cluster {i} starts at entry {} but the previous cluster ends at entry {next_entry}",
                        c.first_entry
                    ),
                    loc(format!("page list of cluster group {}", c.group)),
                ));
            }
            next_entry =
                c.first_entry.checked_add(c.num_entries).filter(|&e| e <= i64::MAX as u64).ok_or_else(|| {
                    Error::out_of_spec(
                        format!("cluster {i} entry range {} + {} overflows", c.first_entry, c.num_entries),
                        loc(format!("page list of cluster group {}", c.group)),
                    )
                })?;
        }
        if clusters.first().is_some_and(|c| c.first_entry != 0) {
            return Err(Error::out_of_spec(
                format!("the first cluster starts at entry {} instead of 0", clusters[0].first_entry),
                loc("page list of cluster group 0".into()),
            ));
        }
        Ok(Descriptor {
            name: header.name,
            description: header.description,
            writer: header.writer,
            fields,
            columns,
            alias_columns,
            num_header_fields,
            num_header_columns,
            clusters,
            num_cluster_groups,
            extra_type_info,
        })
    }

    /// Total number of entries (sum over clusters).
    pub fn num_entries(&self) -> u64 {
        self.clusters.iter().map(|c| c.num_entries).sum()
    }
}
