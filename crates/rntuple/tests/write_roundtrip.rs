//! Write → read round trips through our own reader over a matrix of types,
//! compression settings, page and cluster sizes and cluster groups.

mod write_support;

use std::collections::HashMap;

use rntuple::{RNTupleFile, WriteOptions};
use write_support::*;

/// Small pages and clusters: many pages per cluster, many clusters, groups.
fn small(compression: u32) -> WriteOptions {
    WriteOptions {
        compression,
        approx_zipped_cluster_size: 3000,
        max_unzipped_cluster_size: 64 * 1024,
        initial_unzipped_page_size: 16,
        max_unzipped_page_size: 256,
        cluster_group_size: 3,
        ..Default::default()
    }
}

#[test]
fn every_type_every_compression_small_pages() {
    let batches = [everything(700, 1), everything(1, 2), everything(0, 3), everything(523, 4)];
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    for compression in [0, 505, 101, 207, 404] {
        let path = scratch(&format!("matrix-{compression}.root"));
        let back = round_trip(&path, &batches, &HashMap::new(), small(compression));
        assert_same_rows(&expected, &rows(&back), &format!("compression {compression}"));
        let f = RNTupleFile::open(&path).expect("open");
        let t = f.rntuple("t").expect("rntuple");
        let d = t.descriptor();
        assert!(d.clusters.len() > 5, "compression {compression}: {} clusters", d.clusters.len());
        assert!(d.num_cluster_groups > 1, "compression {compression}: {} groups", d.num_cluster_groups);
        let pages: usize = d.clusters[0].columns.iter().map(|c| c.pages.len()).sum();
        assert!(pages > d.columns.len(), "compression {compression}: {pages} pages in cluster 0");
    }
}

#[test]
fn default_options_one_cluster() {
    let batches = [everything(3000, 11)];
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    let path = scratch("defaults.root");
    let back = round_trip(&path, &batches, &HashMap::new(), WriteOptions::default());
    assert_same_rows(&expected, &rows(&back), "defaults");
    let f = RNTupleFile::open(&path).expect("open");
    let t = f.rntuple("t").expect("rntuple");
    assert_eq!(t.descriptor().clusters.len(), 1);
    assert_eq!(t.descriptor().num_cluster_groups, 1);
    assert_eq!(t.anchor().version_minor, 2);
}

#[test]
fn without_checksums_with_index32_one_group_per_cluster() {
    let batches = [everything(900, 41)];
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    let options = WriteOptions {
        page_checksums: false,
        index32: true,
        cluster_group_size: 1,
        compression_threads: 1,
        ..small(207)
    };
    let path = scratch("no-checksums.root");
    let back = round_trip(&path, &batches, &HashMap::new(), options);
    assert_same_rows(&expected, &rows(&back), "no checksums, index32");
    assert_same_rows(&expected, &our_dump(&path, "t"), "no checksums, index32 (dump)");
    let f = RNTupleFile::open(&path).expect("open");
    let t = f.rntuple("t").expect("rntuple");
    let d = t.descriptor();
    assert_eq!(d.num_cluster_groups, d.clusters.len());
    assert!(d.clusters.iter().flat_map(|c| &c.columns).flat_map(|c| &c.pages).all(|p| !p.has_checksum));
    assert!(d.columns.iter().filter(|c| c.column_type.is_index()).all(|c| c.bits_on_storage == 32));
}

/// The entries of `tests/data/soa_root640.root` (`tests/reference/soa_root.py`): entry `e` holds
/// `e % 4` hits with `x = e + 0.25 k`, `y = -e - 0.5 k`, `id = 100 e + k`, and `n = e`.
fn soa_batch() -> arrow_array::RecordBatch {
    use std::sync::Arc;

    use arrow_array::{Float32Array, Int32Array, ListArray, StructArray};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{DataType, Field, Fields};
    let (mut x, mut y, mut id, mut sizes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for e in 0..5i32 {
        for k in 0..e % 4 {
            x.push(e as f32 + 0.25 * k as f32);
            y.push(-e as f32 - 0.5 * k as f32);
            id.push(100 * e + k);
        }
        sizes.push((e % 4) as usize);
    }
    let members = Fields::from(vec![
        Field::new("x", DataType::Float32, false),
        Field::new("y", DataType::Float32, false),
        Field::new("id", DataType::Int32, false),
    ]);
    let records = StructArray::new(
        members.clone(),
        vec![Arc::new(Float32Array::from(x)), Arc::new(Float32Array::from(y)), Arc::new(Int32Array::from(id))],
        None,
    );
    let item = Arc::new(Field::new("item", DataType::Struct(members), false));
    let hits = ListArray::new(item, OffsetBuffer::from_lengths(sizes), Arc::new(records), None);
    batch(vec![("hits", false, Arc::new(hits)), ("n", false, Arc::new(Int32Array::from_iter_values(0..5)))])
}

/// `hits` as ROOT 6.40's `RSoAField("hits", "HitSoA")` writes it, with the versions and checksums
/// ROOT's file holds for the two classes of `tests/reference/soa/soa_classes.hxx`.
fn soa_overrides() -> HashMap<String, rntuple::write::FieldOverride> {
    use rntuple::write::FieldOverride;
    HashMap::from([
        ("hits".to_string(), FieldOverride::type_name("HitSoA").type_version(2).type_checksum(1_905_544_633).soa()),
        ("hits._0".to_string(), FieldOverride::type_name("HitRecord").type_version(2).type_checksum(2_530_391_345)),
    ])
}

fn soa_root640() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/soa_root640.root")
}

#[test]
fn soa_field_records_and_columns_are_roots() {
    let path = scratch("soa.root");
    let back = round_trip(&path, &[soa_batch()], &soa_overrides(), WriteOptions::default());
    assert_same_rows(&rows(&soa_batch()), &rows(&back), "soa round trip");
    let ours = RNTupleFile::open(&path).expect("open ours");
    let ours = ours.rntuple("t").expect("rntuple").descriptor().clone();
    let roots = RNTupleFile::open(soa_root640()).expect("open ROOT's");
    let roots = roots.rntuple("Events").expect("rntuple").descriptor().clone();
    // Every field record (flags 0x08 | 0x04 on the SoA collection, type names, versions,
    // checksums, roles, parents) and every column record, as ROOT 6.40 writes them.
    assert_eq!(ours.fields, roots.fields);
    assert_eq!(ours.columns, roots.columns);
    assert_eq!(ours.fields[0].flags, 0x08 | 0x04);
    // ... and the data: our reader reads ROOT's file and ours alike.
    let theirs = RNTupleFile::open(soa_root640()).expect("open").rntuple("Events").expect("rntuple").read_all();
    assert_same_rows(&rows(&theirs.expect("read ROOT's")), &rows(&back), "ROOT's file");
}

#[test]
fn soa_fields_need_a_list_of_records_and_two_class_names() {
    use rntuple::write::FieldOverride;
    let refused = |overrides: HashMap<String, FieldOverride>, needle: &str| {
        let path = scratch("soa-refused.root");
        let err = rntuple::write_batches(&path, "t", [soa_batch()], &overrides, WriteOptions::default())
            .expect_err("an SoA field that cannot be written");
        assert!(matches!(err, rntuple::Error::InvalidArgument { .. }), "{err:?}");
        assert!(err.to_string().contains(needle), "{err}");
    };
    let mut no_record = soa_overrides();
    no_record.remove("hits._0");
    refused(no_record, "the record of a struct-of-arrays field needs a class name (types={'hits._0'");
    let mut no_class = soa_overrides();
    no_class.insert("hits".into(), FieldOverride::default().soa());
    refused(no_class, "needs the SoA class as its type (types={'hits': 'HitSoA'}), not no type");
    let mut vector = soa_overrides();
    vector.insert("hits".into(), FieldOverride::type_name("std::vector<HitRecord>").soa());
    refused(vector, "not 'std::vector<HitRecord>'");
    let mut pair = soa_overrides();
    pair.insert("hits._0".into(), FieldOverride::type_name("std::tuple<float,float,std::int32_t>"));
    refused(pair, "not 'std::tuple<float,float,std::int32_t>'");
    let mut not_a_list = soa_overrides();
    not_a_list.insert("n".into(), FieldOverride::type_name("NSoA").soa());
    refused(not_a_list, "field 'n': a struct-of-arrays field is written from a list of structs");
}
