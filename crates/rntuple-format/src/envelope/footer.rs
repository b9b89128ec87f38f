//! The footer envelope, type 0x02 (RNTuple binary format 1.0, sections
//! "Footer Envelope", "Schema Extension Record Frame", "Cluster Group Record
//! Frame"):
//!
//! ```text
//! envelope preamble (type 0x02, length)
//! feature flags
//! u64 header checksum (xxh3-64)
//! record frame: schema extension (empty, or the four schema list frames)
//! list frame of cluster group record frames:
//!     u64 minimum entry number, u64 entry span, u32 number of clusters,
//!     envelope link of the page list (u64 length + locator)
//! list frame of linked attribute set record frames (1.0.1.0+, see
//!     `attribute_sets`; absent in 1.0.0.x footers)
//! xxh3-64 checksum
//! ```

use super::attribute_sets::{read_attribute_sets, write_attribute_sets};
use super::{begin, finish, open, read_feature_flags, write_feature_flags};
use crate::constants::{ENVELOPE_TYPE_FOOTER, RECORD_FRAME_PREAMBLE_SIZE};
use crate::envelope::schema::{parse_schema_description, write_schema_description};
use crate::error::Result;
use crate::locator::{read_envelope_link, write_envelope_link};
use crate::model::{ClusterGroupDescriptor, Footer, SchemaDescription};

/// Parses a whole uncompressed footer envelope.
pub fn parse_footer(bytes: &[u8], verify_checksum: bool) -> Result<Footer> {
    let mut r = open(bytes, ENVELOPE_TYPE_FOOTER, verify_checksum)?;
    let feature_flags = read_feature_flags(&mut r)?;
    let header_checksum = r.u64("header checksum")?;
    let mut ext = r.record_frame("schema extension record frame")?;
    let schema_extension = if ext.is_empty() {
        SchemaDescription::default()
    } else {
        parse_schema_description(&mut ext).map_err(|e| e.within("schema extension"))?
    };
    let (n, mut list) = r.list_frame(RECORD_FRAME_PREAMBLE_SIZE, "cluster group list frame")?;
    let mut cluster_groups = Vec::with_capacity(n as usize);
    for i in 0..n {
        let group = (|| {
            let mut f = list.record_frame("cluster group record frame")?;
            let min_entry = f.u64("minimum entry number")?;
            let entry_span = f.u64("entry span")?;
            let num_clusters = f.u32("number of clusters")?;
            let page_list = read_envelope_link(&mut f, "page list envelope link")?;
            Ok(ClusterGroupDescriptor { min_entry, entry_span, num_clusters, page_list })
        })()
        .map_err(|e: crate::Error| e.within(&format!("cluster group {i}")))?;
        cluster_groups.push(group);
    }
    // As ROOT 6.40: the list is read when bytes are left (1.0.0.x footers end here).
    let attribute_sets = if r.is_empty() { Vec::new() } else { read_attribute_sets(&mut r)? };
    Ok(Footer { feature_flags, header_checksum, schema_extension, cluster_groups, attribute_sets })
}

/// Serializes a footer envelope; returns its bytes and its checksum.
///
/// Written as ROOT 6.40 writes it: the schema extension record frame always
/// holds its four list frames (empty ones included), and the cluster groups
/// are followed by the list of linked attribute sets that format 1.0.1.0
/// added, empty ones included — uproot 5.7 expects that list when the anchor
/// announces 1.0.1.0 or later; readers of 1.0.0.x skip it as unknown
/// trailing data.
pub fn write_footer(f: &Footer) -> Result<(Vec<u8>, u64)> {
    let mut w = begin(ENVELOPE_TYPE_FOOTER);
    write_feature_flags(&mut w, &f.feature_flags)?;
    w.u64(f.header_checksum);
    let ext = w.begin_record();
    write_schema_description(&mut w, &f.schema_extension)?;
    w.end_frame(ext);
    w.record_list(&f.cluster_groups, |w, g| {
        w.u64(g.min_entry);
        w.u64(g.entry_span);
        w.u32(g.num_clusters);
        write_envelope_link(w, &g.page_list);
        Ok(())
    })?;
    write_attribute_sets(&mut w, &f.attribute_sets)?;
    finish(w)
}
