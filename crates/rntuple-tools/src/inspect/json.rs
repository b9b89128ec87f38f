//! The JSON form of an [`Inspection`] (schema version 1, documented in
//! `docs/tools.md`). Keys keep the order written here; sizes are exact byte
//! counts; ratios are rounded to 4 decimals and `null` when undefined.

use serde_json::{json, Value};

use super::{ColumnReport, EnvelopeInfo, FieldReport, Inspection, PageSizeStats, RNTupleReport};
use crate::load::AttributeSetSummary;
use crate::units::div;

/// Version of the JSON layout; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

fn ratio(num: u64, den: u64) -> Value {
    match div(num, den) {
        Some(r) => json!((r * 1e4).round() / 1e4),
        None => Value::Null,
    }
}

fn envelope(e: &EnvelopeInfo) -> Value {
    json!({"offset": e.offset, "compressed": e.compressed, "uncompressed": e.uncompressed})
}

fn page_sizes(s: &Option<PageSizeStats>) -> Value {
    match s {
        None => Value::Null,
        Some(s) => json!({
            "min": s.min,
            "median": s.median,
            "max": s.max,
            "mean": (s.mean * 100.0).round() / 100.0,
            "histogram": s.histogram.iter().map(|&(from, to, pages)| json!({"from": from, "to": to, "pages": pages})).collect::<Vec<_>>(),
        }),
    }
}

fn field(f: &FieldReport, total: u64) -> Value {
    json!({
        "name": f.name,
        "type": f.type_name,
        "id": f.id,
        "projected": f.projected,
        "soa": f.soa,
        "projections": f.projections.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>(),
        "num_subfields": f.num_subfields,
        "num_columns": f.num_columns,
        "num_pages": f.num_pages,
        "compressed": f.compressed,
        "uncompressed": f.uncompressed,
        "memory": f.memory,
        "compression_ratio": ratio(f.uncompressed, f.compressed),
        "fraction": ratio(f.compressed, total),
    })
}

fn column(c: &ColumnReport) -> Value {
    json!({
        "id": c.id,
        "field": c.field,
        "field_id": c.field_id,
        "top_level_field": c.top_level_field,
        "type": c.column_type.to_string(),
        "bits_on_storage": c.bits_on_storage,
        "representation_index": c.representation_index,
        "encoding": c.encoding,
        "value_range": c.value_range.map(|(a, b)| json!([a, b])),
        "first_element_index": c.first_element_index,
        "compression": c.compression,
        "num_elements": c.num_elements,
        "num_zero_elements": c.num_zero_elements,
        "num_pages": c.num_pages,
        "num_suppressed_clusters": c.num_suppressed_clusters,
        "compressed": c.compressed,
        "uncompressed": c.uncompressed,
        "memory": c.memory,
        "compression_ratio": ratio(c.uncompressed, c.compressed),
        "page_sizes": page_sizes(&c.page_sizes),
    })
}

/// The JSON value of one linked attribute set.
pub fn attribute_set(a: &AttributeSetSummary) -> Value {
    json!({
        "name": a.name,
        "schema_version": a.schema_version,
        "num_entries": a.num_entries,
        "fields": a.fields.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>(),
    })
}

/// The JSON value of one RNTuple's report.
pub fn rntuple(r: &RNTupleReport) -> Value {
    let total = r.pages.compressed;
    json!({
        "name": r.name,
        "description": r.description,
        "writer": r.writer,
        "format_version": r.format_version,
        "num_entries": r.num_entries,
        "num_fields": r.num_fields,
        "num_top_level_fields": r.num_top_level_fields,
        "num_physical_columns": r.num_physical_columns,
        "num_alias_columns": r.num_alias_columns,
        "num_clusters": r.clusters.len(),
        "num_cluster_groups": r.cluster_groups.len(),
        "num_pages": r.num_pages,
        "compression": r.compression,
        "sizes": {
            "anchor_offset": r.anchor_offset,
            "header": envelope(&r.header),
            "footer": envelope(&r.footer),
            "page_lists": {"count": r.cluster_groups.len(), "compressed": r.page_lists.compressed, "uncompressed": r.page_lists.uncompressed},
            "pages": {
                "compressed": r.pages.compressed,
                "uncompressed": r.pages.uncompressed,
                "memory": r.pages.memory,
                "checksums": r.pages.checksums,
                "stored": r.pages.stored,
                "compression_ratio": ratio(r.pages.uncompressed, r.pages.compressed),
            },
            "total_on_disk": r.total_on_disk,
        },
        "cluster_groups": r.cluster_groups.iter().map(|g| json!({
            "id": g.id,
            "min_entry": g.min_entry,
            "entry_span": g.entry_span,
            "num_clusters": g.num_clusters,
            "page_list": envelope(&g.page_list),
        })).collect::<Vec<_>>(),
        "clusters": r.clusters.iter().map(|c| json!({
            "id": c.id,
            "group": c.group,
            "first_entry": c.first_entry,
            "num_entries": c.num_entries,
            "num_pages": c.num_pages,
            "compressed": c.compressed,
            "uncompressed": c.uncompressed,
        })).collect::<Vec<_>>(),
        "fields": r.fields.iter().map(|f| field(f, total)).collect::<Vec<_>>(),
        "columns": r.columns.iter().map(column).collect::<Vec<_>>(),
        "attribute_sets": r.attribute_sets.iter().map(attribute_set).collect::<Vec<_>>(),
    })
}

/// The JSON document of an inspection.
pub fn to_json(i: &Inspection) -> Value {
    json!({
        "schema_version": SCHEMA_VERSION,
        "file": i.file,
        "file_size": i.file_size,
        "rntuples": i.rntuples.iter().map(rntuple).collect::<Vec<_>>(),
    })
}
