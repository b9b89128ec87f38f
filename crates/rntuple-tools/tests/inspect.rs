//! `inspect` figures against independent truth: the `RBlob` keys of the file
//! (walked key by key from the file header), the reader's descriptor, and
//! the report's own totals adding up. (ROOT's `RNTupleInspector` numbers are
//! compared in tests/python/test_tools_cli.py.)

mod common;

use common::*;
use rntuple::container::RootFile;
use rntuple_tools::inspect::{json::to_json, table};
use rntuple_tools::inspect_file;

/// Sum of the payloads of all `RBlob` keys: every key of the file, walked
/// from `fBEGIN` to `fEND` by their `fNbytes`.
fn blob_payload_bytes(path: &std::path::Path) -> u64 {
    let root = RootFile::open(path).expect("open");
    let mut pos = root.header().begin;
    let end = root.header().end;
    let mut total = 0;
    while pos < end {
        let key = root.key_at(pos).expect("key");
        if key.class_name == "RBlob" {
            total += u64::from(key.nbytes) - u64::from(key.key_len);
        }
        assert!(key.nbytes > 0);
        pos += u64::from(key.nbytes);
    }
    total
}

#[test]
fn on_disk_total_is_the_sum_of_the_blob_keys() {
    // Files with one RNTuple, written in one go (no free gaps between keys).
    for name in [
        "test_stl_containers_rntuple_v1-0-0-0.root",
        "test_int_5e4_rntuple_v1-0-0-0.root",
        "test_split_3e4_rntuple_v1-0-0-0.root",
        "test_multiple_cluster_groups_rntuple_v1-0-0-0.root",
        "test_extension_columns_rntuple_v1-0-0-0.root",
        "test_int_multicluster_rntuple_v1-0-0-0.root",
        "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root",
        "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root",
    ] {
        let path = data(name);
        let i = inspect_file(&path, None, true).expect(name);
        assert_eq!(i.rntuples.len(), 1, "{name}");
        assert_eq!(i.rntuples[0].total_on_disk, blob_payload_bytes(&path), "{name}");
    }
    // Our writer's files too, with many clusters and groups.
    let p = scratch("inspect-ours.root");
    write(&p, "t", vec![batch(0, 2000, true)], small(505));
    let i = inspect_file(&p, None, true).expect("inspect");
    assert_eq!(i.rntuples[0].total_on_disk, blob_payload_bytes(&p));
    assert!(i.rntuples[0].cluster_groups.len() > 2);
}

#[test]
fn figures_agree_with_the_descriptor_and_add_up() {
    for path in good_files() {
        let i = inspect_file(&path, None, true).expect("inspect");
        let f = rntuple::RNTupleFile::open(&path).expect("open");
        for r in &i.rntuples {
            let nt = f.rntuple(&r.name).expect("rntuple");
            let d = nt.descriptor();
            let ctx = format!("{}:{}", path.display(), r.name);
            assert_eq!(r.num_entries, nt.num_entries(), "{ctx}");
            assert_eq!(r.clusters.len(), d.clusters.len(), "{ctx}");
            assert_eq!(r.num_physical_columns as usize, d.columns.len(), "{ctx}");
            let pages: Vec<_> = d
                .clusters
                .iter()
                .flat_map(|c| &c.columns)
                .filter(|c| !c.is_suppressed())
                .flat_map(|c| &c.pages)
                .collect();
            assert_eq!(r.num_pages as usize, pages.len(), "{ctx}");
            assert_eq!(r.pages.compressed, pages.iter().map(|p| p.locator.size).sum::<u64>(), "{ctx}");
            // Columns, fields and clusters all add up to the totals.
            let sum = |f: fn(&rntuple_tools::inspect::ColumnReport) -> u64| r.columns.iter().map(f).sum::<u64>();
            assert_eq!(sum(|c| c.compressed), r.pages.compressed, "{ctx}");
            assert_eq!(sum(|c| c.uncompressed), r.pages.uncompressed, "{ctx}");
            assert_eq!(sum(|c| c.num_pages), r.num_pages, "{ctx}");
            assert_eq!(r.fields.iter().map(|f| f.compressed).sum::<u64>(), r.pages.compressed, "{ctx}");
            assert_eq!(r.fields.iter().map(|f| f.memory).sum::<u64>(), r.pages.memory, "{ctx}");
            assert_eq!(r.clusters.iter().map(|c| c.compressed).sum::<u64>(), r.pages.compressed, "{ctx}");
            assert_eq!(r.clusters.iter().map(|c| c.num_entries).sum::<u64>(), r.num_entries, "{ctx}");
            assert!(r.pages.stored <= r.pages.compressed + r.pages.checksums, "{ctx}");
            assert!(r.total_on_disk <= i.file_size, "{ctx}");
            // Sorted largest first.
            assert!(r.columns.windows(2).all(|w| w[0].compressed >= w[1].compressed), "{ctx}");
            assert!(r.fields.windows(2).all(|w| w[0].compressed >= w[1].compressed), "{ctx}");
            for c in &r.columns {
                if let Some(s) = &c.page_sizes {
                    assert!(s.min <= s.median && s.median <= s.max, "{ctx}");
                    assert_eq!(s.histogram.iter().map(|b| b.2).sum::<u64>(), c.num_pages, "{ctx}");
                }
            }
        }
        // Both forms render.
        let mut text = Vec::new();
        table::write(&i, table::Limits::default(), &mut text).expect("table");
        let json = to_json(&i);
        assert_eq!(json["schema_version"], 1);
        assert_eq!(json["rntuples"].as_array().map(|a| a.len()), Some(i.rntuples.len()));
    }
}

#[test]
fn known_figures() {
    // 50,000 int32 entries in one page of one column.
    let i = inspect_file(&data("test_int_5e4_rntuple_v1-0-0-0.root"), None, true).expect("inspect");
    let r = &i.rntuples[0];
    assert_eq!((r.num_entries, r.num_pages, r.columns.len()), (50_000, 1, 1));
    let c = &r.columns[0];
    assert_eq!((c.num_elements, c.uncompressed, c.memory), (50_000, 200_000, 200_000));
    assert_eq!(c.compression, vec![505]);
    // 10^8 int16 entries in 191 pages stored in a few shared byte ranges.
    let i = inspect_file(&data("test_int_multicluster_rntuple_v1-0-0-0.root"), None, true).expect("inspect");
    let r = &i.rntuples[0];
    assert_eq!((r.num_entries, r.num_pages), (100_000_000, 191));
    assert_eq!(r.columns[0].uncompressed, 200_000_000);
    assert!(r.pages.stored < r.pages.compressed / 4, "{:?}", r.pages);
    // Deferred columns of a late schema extension: leading zeros counted apart.
    let i = inspect_file(&data("test_extension_columns_rntuple_v1-0-0-0.root"), None, true).expect("inspect");
    assert!(i.rntuples[0].columns.iter().any(|c| c.first_element_index.is_some() && c.num_zero_elements > 0));
    // A file with several RNTuples, or one of them by name.
    let path = data("rntviewer-testfile-multiple-rntuples-v1-0-0-0.root");
    assert_eq!(inspect_file(&path, None, true).expect("inspect").rntuples.len(), 2);
    let one = inspect_file(&path, Some("B"), true).expect("inspect");
    assert_eq!(one.rntuples.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["B"]);
    assert!(inspect_file(&path, Some("C"), true).is_err());
}

/// The sets ROOT 6.40 wrote (tests/reference/attributes_root.py): "runs"
/// with two entries, "flags" with three.
#[test]
fn attribute_sets_are_listed_in_text_json_and_show() {
    let path = data("attributes_root640.root");
    let i = inspect_file(&path, None, true).expect("inspect");
    let j = to_json(&i);
    let sets = &j["rntuples"][0]["attribute_sets"];
    assert_eq!(
        sets,
        &serde_json::json!([
            {"name": "runs", "schema_version": "1.0", "num_entries": 2, "fields": [
                {"name": "run", "type": "std::int32_t"},
                {"name": "tag", "type": "std::string"},
                {"name": "weights", "type": "std::vector<float>"}]},
            {"name": "flags", "schema_version": "1.0", "num_entries": 3, "fields": [
                {"name": "flag", "type": "std::uint16_t"}]},
        ])
    );
    let mut text = Vec::new();
    table::write(&i, table::Limits::default(), &mut text).expect("text");
    let text = String::from_utf8(text).expect("utf-8");
    let runs = "attribute set 'runs' (schema 1.0): 2 entries, fields run: std::int32_t, tag: std::string, \
                weights: std::vector<float>";
    let flags = "attribute set 'flags' (schema 1.0): 3 entries, fields flag: std::uint16_t";
    assert!(text.contains(runs) && text.contains(flags), "{text}");
    let nt = rntuple::RNTupleFile::open(&path).expect("open").rntuple("Events").expect("rntuple");
    let mut shown = Vec::new();
    rntuple_tools::term::show(&nt, &mut shown).expect("show");
    let shown = String::from_utf8(shown).expect("utf-8");
    assert!(shown.contains(runs) && shown.contains(flags), "{shown}");
}

#[test]
fn soa_fields_show_their_soa_type() {
    // ROOT 6.40's RSoAField (tests/reference/soa_root.py): the field `hits`
    // has flag 0x08, type name HitSoA and the record subfield HitRecord.
    let path = data("soa_root640.root");
    let i = inspect_file(&path, None, true).expect("inspect");
    let j = to_json(&i);
    let fields = j["rntuples"][0]["fields"].as_array().expect("fields");
    let hits = fields.iter().find(|f| f["name"] == "hits").expect("hits");
    assert_eq!((&hits["type"], &hits["soa"]), (&serde_json::json!("HitSoA"), &serde_json::json!(true)));
    let n = fields.iter().find(|f| f["name"] == "n").expect("n");
    assert_eq!(n["soa"], serde_json::json!(false));
    let mut text = Vec::new();
    table::write(&i, table::Limits::default(), &mut text).expect("text");
    let text = String::from_utf8(text).expect("utf-8");
    assert!(text.contains("HitSoA (SoA)"), "{text}");
    let nt = rntuple::RNTupleFile::open(&path).expect("open").rntuple("Events").expect("rntuple");
    let mut shown = Vec::new();
    rntuple_tools::term::show(&nt, &mut shown).expect("show");
    let shown = String::from_utf8(shown).expect("utf-8");
    assert!(shown.contains("hits : HitSoA [SoA of HitRecord]"), "{shown}");
}
