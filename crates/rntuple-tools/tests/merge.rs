//! `merge` end to end: inputs written by the crate's writer and by ROOT,
//! merged and read back by the crate's reader (values, clusters, cluster
//! groups, compression, encodings), verified by `verify`; the schema modes;
//! refused arguments; interrupted merges leave nothing behind. (ROOT and
//! uproot read merged files in tests/python/test_tools_cli.py.)

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::Int16Type;
use arrow_array::{Array, RecordBatch};
use common::*;
use rntuple::format::Error;
use rntuple::RNTupleFile;
use rntuple_tools::verify::{verify_file, VerifyOptions};
use rntuple_tools::{is_interrupted, merge, MergeMode, MergeOptions, MergeSummary, NoProgress, Progress};

fn run(out: &Path, inputs: &[&PathBuf], options: &MergeOptions) -> rntuple::format::Result<MergeSummary> {
    let inputs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    merge(out, &inputs, options, &NoProgress)
}

fn forced() -> MergeOptions {
    MergeOptions { overwrite: true, ..Default::default() }
}

fn assert_verifies(path: &Path) {
    let r = verify_file(path, VerifyOptions::default(), &NoProgress);
    assert!(r.is_ok(), "{}: {:#?}", path.display(), r.problems);
}

fn descriptor(path: &Path, name: &str) -> rntuple::Descriptor {
    RNTupleFile::open(path).expect("open").rntuple(name).expect("rntuple").descriptor().clone()
}

/// Three inputs of the crate's writer with many clusters and cluster groups.
fn inputs(tag: &str, compressions: [u32; 3], extra: [bool; 3]) -> Vec<PathBuf> {
    let sizes = [700, 1, 900];
    let mut first = 0;
    let mut out = Vec::new();
    for i in 0..3 {
        let p = scratch(&format!("{tag}-in{i}.root"));
        let n = sizes[i];
        write(
            &p,
            "t",
            vec![batch(first, n / 2, extra[i]), batch(first + n / 2, n - n / 2, extra[i])],
            small(compressions[i]),
        );
        first += n;
        out.push(p);
    }
    out
}

#[test]
fn copies_pages_and_keeps_clusters_and_groups() {
    let ins = inputs("copy", [505, 505, 505], [false; 3]);
    let out = scratch("copy-out.root");
    let s = run(&out, &ins.iter().collect::<Vec<_>>(), &MergeOptions::default()).expect("merge");
    let expected = concat(&ins.iter().map(|p| read_all(p, "t")).collect::<Vec<_>>());
    assert_eq!(read_all(&out, "t"), expected);
    let parts: Vec<_> = ins.iter().map(|p| descriptor(p, "t")).collect();
    let d = descriptor(&out, "t");
    assert_eq!(s.entries, expected.num_rows() as u64);
    assert_eq!(d.clusters.len(), parts.iter().map(|p| p.clusters.len()).sum::<usize>());
    assert_eq!(d.num_cluster_groups, parts.iter().map(|p| p.num_cluster_groups).sum::<usize>());
    assert!(
        d.num_cluster_groups > 3 && d.clusters.len() > 6,
        "{} groups, {} clusters",
        d.num_cluster_groups,
        d.clusters.len()
    );
    // Every page copied as stored: the same compressed sizes, cluster by cluster.
    assert_eq!((s.pages.resealed, s.pages.zero), (0, 0));
    let sizes = |d: &rntuple::Descriptor| -> Vec<u64> {
        d.clusters.iter().flat_map(|c| &c.columns).flat_map(|r| &r.pages).map(|p| p.locator.size).collect()
    };
    assert_eq!(sizes(&d), parts.iter().flat_map(sizes).collect::<Vec<_>>());
    assert_eq!(s.pages.copied as usize, sizes(&d).len());
    assert!(d.clusters.iter().flat_map(|c| &c.columns).all(|r| r.compression == Some(505)));
    assert_eq!(s.compression, 505);
    assert_verifies(&out);
}

#[test]
fn recompresses_pages_whose_setting_differs() {
    let ins = inputs("recompress", [505, 101, 0], [false; 3]);
    let expected = concat(&ins.iter().map(|p| read_all(p, "t")).collect::<Vec<_>>());
    let out = scratch("recompress-out.root");
    // Default: the first input's setting; the other inputs' pages are resealed.
    let s = run(&out, &ins.iter().collect::<Vec<_>>(), &MergeOptions::default()).expect("merge");
    assert_eq!(read_all(&out, "t"), expected);
    assert_eq!(s.compression, 505);
    assert!(s.pages.copied > 0 && s.pages.resealed > 0, "{:?}", s.pages);
    assert!(descriptor(&out, "t").clusters.iter().flat_map(|c| &c.columns).all(|r| r.compression == Some(505)));
    assert_verifies(&out);
    // An explicit setting reseals everything else.
    for setting in [207, 404, 0] {
        let s = run(&out, &ins.iter().collect::<Vec<_>>(), &MergeOptions { compression: Some(setting), ..forced() })
            .expect("merge");
        assert_eq!(read_all(&out, "t"), expected, "setting {setting}");
        let d = descriptor(&out, "t");
        assert!(d.clusters.iter().flat_map(|c| &c.columns).all(|r| r.compression == Some(setting)));
        if setting == 0 {
            assert!(s.pages.copied > 0, "the uncompressed input's pages are copied");
        }
        assert_verifies(&out);
    }
}

#[test]
fn re_encodes_split_unsplit_and_index_widths() {
    // Compression 0 makes the writer choose unsplit encodings; index32 narrow offsets.
    let a = scratch("enc-plain.root");
    write(&a, "t", vec![batch(0, 500, false)], small(0));
    let b = scratch("enc-split.root");
    write(&b, "t", vec![batch(500, 400, false)], small(505));
    let c = scratch("enc-index32.root");
    write(&c, "t", vec![batch(900, 300, false)], rntuple::WriteOptions { index32: true, ..small(505) });
    let types = |p: &Path| descriptor(p, "t").columns.iter().map(|c| c.column_type).collect::<Vec<_>>();
    assert_ne!(types(&a), types(&b));
    assert_ne!(types(&b), types(&c));
    for order in [[&a, &b, &c], [&b, &c, &a], [&c, &a, &b]] {
        let out = scratch("enc-out.root");
        let s = run(&out, &order, &MergeOptions { compression: Some(505), ..Default::default() }).expect("merge");
        let expected = concat(&order.iter().map(|p| read_all(p, "t")).collect::<Vec<_>>());
        assert_eq!(read_all(&out, "t"), expected);
        assert_eq!(types(&out), types(order[0]), "the first input's column types");
        assert!(s.pages.resealed > 0);
        assert_verifies(&out);
    }
}

fn column<'a>(b: &'a RecordBatch, name: &str) -> &'a dyn Array {
    b.column(b.schema().index_of(name).expect("column")).as_ref()
}

#[test]
fn schema_modes() {
    let ins = inputs("modes", [505, 505, 505], [false, true, false]);
    let refs: Vec<&PathBuf> = ins.iter().collect();
    let out = scratch("modes-out.root");

    // strict: the second input has more fields.
    let e = run(&out, &refs, &MergeOptions::default()).unwrap_err().to_string();
    assert!(e.contains("strict") && e.contains("extra_i16") && e.contains("modes-in1.root"), "{e}");
    assert!(!out.exists());

    // filter: the first input's fields; the second's extra fields are left out.
    let s = run(&out, &refs, &MergeOptions { mode: MergeMode::Filter, ..forced() }).expect("filter");
    assert_eq!(s.fields_dropped.len(), 2, "{:?}", s.fields_dropped);
    let b1 = read_all(&ins[1], "t");
    let b1 = b1.project(&(0..6).collect::<Vec<_>>()).expect("project");
    assert_eq!(read_all(&out, "t"), concat(&[read_all(&ins[0], "t"), b1.clone(), read_all(&ins[2], "t")]));
    assert_verifies(&out);
    // filter: an input lacking one of the first input's fields is refused.
    let e = run(&out, &[&ins[1], &ins[0]], &MergeOptions { mode: MergeMode::Filter, ..forced() }).unwrap_err();
    assert!(e.to_string().contains("lacks the field(s) extra_i16, extra_vi"), "{e}");

    // union: the fields appear at the second input's first entry, as deferred
    // columns; entries before and after them read default values.
    let s = run(&out, &refs, &MergeOptions { mode: MergeMode::Union, ..forced() }).expect("union");
    assert_eq!(s.fields_added.len(), 2, "{:?}", s.fields_added);
    assert!(s.pages.zero > 0);
    let merged = read_all(&out, "t");
    let (n0, n1) = (read_all(&ins[0], "t").num_rows(), b1.num_rows());
    let i16s = column(&merged, "extra_i16").as_primitive::<Int16Type>();
    let full1 = read_all(&ins[1], "t");
    let i16_in = column(&full1, "extra_i16").as_primitive::<Int16Type>();
    for i in 0..merged.num_rows() {
        let want = if (n0..n0 + n1).contains(&i) { i16_in.value(i - n0) } else { 0 };
        assert_eq!(i16s.value(i), want, "entry {i}");
    }
    let lists = column(&merged, "extra_vi").as_list::<i64>();
    let lists_in = column(&full1, "extra_vi").as_list::<i64>();
    for i in 0..merged.num_rows() {
        if (n0..n0 + n1).contains(&i) {
            assert_eq!(lists.value(i).as_ref(), lists_in.value(i - n0).as_ref(), "entry {i}");
        } else {
            assert_eq!(lists.value_length(i), 0, "entry {i}");
        }
    }
    let common_fields: Vec<usize> = (0..6).collect();
    assert_eq!(
        merged.project(&common_fields).expect("project"),
        concat(&[read_all(&ins[0], "t"), b1, read_all(&ins[2], "t")])
    );
    let d = descriptor(&out, "t");
    let deferred: Vec<_> = d.columns.iter().filter(|c| c.first_element_index.is_some()).collect();
    assert_eq!(deferred.len(), 2, "extra_i16 and extra_vi's offsets: {deferred:?}");
    assert!(deferred.iter().all(|c| c.first_element_index == Some(n0 as i64)));
    assert_eq!(d.num_header_columns, descriptor(&ins[0], "t").columns.len());
    assert_verifies(&out);
}

#[test]
fn root_written_inputs_and_shared_pages() {
    for (file, name) in [
        ("test_stl_containers_rntuple_v1-0-0-0.root", "ntuple"),
        ("test_multiple_representations_rntuple_v1-0-0-0.root", "ntuple"),
        ("test_extension_columns_rntuple_v1-0-0-0.root", "ntuple"),
        ("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", "ntuple"),
        ("cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root", "Events"),
    ] {
        let input = data(file);
        let out = scratch(&format!("root-{file}"));
        let s = run(&out, &[&input, &input], &MergeOptions::default()).expect(file);
        assert_eq!(s.pages.resealed, 0, "{file}");
        let one = read_all(&input, name);
        assert_eq!(read_all(&out, name), concat(&[one.clone(), one]), "{file}");
        assert_verifies(&out);
    }
    // Same-page merging: 191 locators share a few byte ranges; they stay shared.
    let input = data("test_int_multicluster_rntuple_v1-0-0-0.root");
    let out = scratch("root-multicluster.root");
    let s = run(&out, &[&input, &input], &MergeOptions::default()).expect("merge");
    assert!(s.pages.shared > 300, "{:?}", s.pages);
    assert!(s.bytes < 2 * std::fs::metadata(&input).expect("size").len() + 2000, "{} bytes", s.bytes);
    let f = RNTupleFile::open(&out).expect("open");
    let nt = f.rntuple("ntuple").expect("rntuple");
    let n = 100_000_000u64;
    assert_eq!(nt.num_entries(), 2 * n);
    let orig = RNTupleFile::open(&input)
        .expect("open")
        .rntuple("ntuple")
        .expect("rntuple")
        .read(None, n - 5, n)
        .expect("read");
    assert_eq!(nt.read(None, n - 5, n).expect("read"), orig);
    assert_eq!(nt.read(None, 2 * n - 5, 2 * n).expect("read"), orig);
}

#[test]
fn refused_arguments_leave_files_alone() {
    let a = scratch("args-a.root");
    write(&a, "t", vec![batch(0, 50, false)], small(505));
    let dir = scratch("args-dir/x").parent().expect("dir").to_path_buf();
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.join("out.root");
    std::fs::write(&out, b"precious").expect("write");
    let msg = |r: rntuple::format::Result<MergeSummary>| r.expect_err("must fail").to_string();

    let e = msg(run(&out, &[&a], &MergeOptions::default()));
    assert!(e.contains("exists"), "{e}");
    assert_eq!(std::fs::read(&out).expect("read"), b"precious");

    let e = msg(run(&a, &[&a], &forced()));
    assert!(e.contains("is also an input"), "{e}");

    let missing = PathBuf::from("/nonexistent/in.root");
    let e = run(&out, &[&a, &missing], &forced()).expect_err("missing input");
    assert!(matches!(&e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound), "{e}");
    assert_eq!(std::fs::read(&out).expect("read"), b"precious");

    let e = msg(run(&out, &[&a], &MergeOptions { name: Some("nope".into()), ..forced() }));
    assert!(e.contains("nope"), "{e}");

    let other = scratch("args-other-name.root");
    write(&other, "u", vec![batch(0, 5, false)], small(505));
    let e = msg(run(&out, &[&a, &other], &forced()));
    assert!(e.contains("args-other-name.root"), "{e}");

    let e = msg(run(&out, &[&a], &MergeOptions { compression: Some(901), ..forced() }));
    assert!(e.contains("901"), "{e}");

    let e = msg(run(Path::new("/nonexistent/dir/out.root"), &[&a], &forced()));
    assert!(e.contains("/nonexistent/dir"), "{e}");

    let e = msg(run(&out, &[], &forced()));
    assert!(e.contains("no input"), "{e}");

    // A field of another type.
    let typed = scratch("args-typed.root");
    let b = batch(0, 10, false);
    let mut cols: Vec<arrow_array::ArrayRef> = b.columns().to_vec();
    cols[0] = std::sync::Arc::new(arrow_array::Int64Array::from_iter_values(0..10));
    let mut fields: Vec<arrow_schema::Field> = b.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[0] = arrow_schema::Field::new("i32", arrow_schema::DataType::Int64, false);
    let b = RecordBatch::try_new(std::sync::Arc::new(arrow_schema::Schema::new(fields)), cols).expect("batch");
    write(&typed, "t", vec![b], small(505));
    for mode in [MergeMode::Strict, MergeMode::Union, MergeMode::Filter] {
        let e = msg(run(&out, &[&a, &typed], &MergeOptions { mode, ..forced() }));
        assert!(e.contains("field 'i32' has a different type"), "{e}");
    }
    assert_eq!(std::fs::read(&out).expect("read"), b"precious");
    no_temp_files(out.parent().expect("dir"));
}

fn no_temp_files(dir: &Path) {
    let temps: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rntuple-merge.tmp"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

#[test]
fn an_interrupted_merge_leaves_no_output() {
    struct StopAfter(AtomicU64, u64);
    impl Progress for StopAfter {
        fn advance(&self, _: u64) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn cancelled(&self) -> bool {
            self.0.load(Ordering::Relaxed) >= self.1
        }
    }
    let ins = inputs("interrupt", [505, 101, 505], [false; 3]);
    let refs: Vec<&Path> = ins.iter().map(|p| p.as_path()).collect();
    let dir = scratch("interrupt-dir/x").parent().expect("dir").to_path_buf();
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.join("out.root");
    let _ = std::fs::remove_file(&out);
    for after in [0, 1, 10, 100] {
        let e =
            merge(&out, &refs, &MergeOptions::default(), &StopAfter(AtomicU64::new(0), after)).expect_err("stopped");
        assert!(is_interrupted(&e), "{e}");
        assert!(!out.exists());
        no_temp_files(&dir);
    }
    // Not stopped: the output appears.
    merge(&out, &refs, &MergeOptions::default(), &StopAfter(AtomicU64::new(0), u64::MAX)).expect("merge");
    assert_verifies(&out);
}

/// ROOT 6.40's `RNTupleMerger` (hadd, `TFileMerger`) writes no attribute set
/// into the merged file; the merge leaves them out too and names each one.
#[test]
fn attribute_sets_are_left_out_and_named() {
    let input = data("attributes_root640.root");
    let out = scratch("merged-attributes.root");
    let s = run(&out, &[&input, &input], &forced()).expect("merge");
    let file = input.display().to_string();
    let from = |set: &str| format!("{set} (from {file})");
    assert_eq!(s.attribute_sets_dropped, vec![from("runs"), from("flags"), from("runs"), from("flags")]);
    let nt = RNTupleFile::open(&out).expect("open").rntuple("Events").expect("rntuple");
    assert_eq!(nt.num_entries(), 12);
    assert!(nt.attribute_sets().is_empty());
    assert_verifies(&out);
}

/// The cluster groups of the footer of RNTuple "t" in `path`, as stored.
fn stored_groups(path: &Path) -> Vec<rntuple::format::model::ClusterGroupDescriptor> {
    let root = rntuple_tools::load::open_root(path, true).expect("open");
    rntuple_tools::load::load(root, "out", "t", true).expect("load").footer.cluster_groups
}

#[test]
fn inputs_without_entries_add_no_empty_cluster_group() {
    // Format 1.0.2.2 forbids cluster groups without clusters.
    let empty = scratch("empty-in.root");
    write(&empty, "t", vec![batch(0, 0, false)], small(505));
    assert_eq!(descriptor(&empty, "t").clusters.len(), 0);
    let full = scratch("empty-full-in.root");
    write(&full, "t", vec![batch(0, 50, false)], small(505));
    let out = scratch("empty-merged.root");
    let s = run(&out, &[&empty, &full, &empty], &forced()).expect("merge");
    assert_eq!(s.entries, 50);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let groups = stored_groups(&out);
    assert_eq!(groups.len(), s.cluster_groups);
    assert!(!groups.is_empty() && groups.iter().all(|g| g.num_clusters > 0), "{groups:?}");
    assert_eq!(read_all(&out, "t"), read_all(&full, "t"));
    let s = run(&out, &[&empty, &empty], &forced()).expect("merge of empty inputs");
    assert_eq!((s.entries, s.cluster_groups), (0, 0));
    assert!(stored_groups(&out).is_empty());
    assert_verifies(&out);
}

/// The classes of the TFile's own streamer-info record of `path`.
fn record_infos(path: &Path) -> rntuple::streamer::StreamerInfos {
    let f = RNTupleFile::open(path).expect("open");
    let payload = f.root_file().streamer_info().expect("read record").expect("a record");
    // Its class tags count from the key's start: a key of 72 bytes (a small
    // file's "StreamerInfo" key, class TList), as ROOT and we write it.
    rntuple::streamer::StreamerInfos::parse_key_payload(&payload, 72).expect("parse record")
}

#[test]
fn merged_streamer_fields_list_their_classes_in_the_files_streamer_info_record() {
    // ROOT's file (tests/data/streamer_root640.root, streamer fields of Hit,
    // Derived26 with its base and members, Tagged26 : TObject): the merged
    // file's record lists every class of the footer's streamer infos, as
    // ROOT's own record does, each with the same info.
    let input = data("streamer_root640.root");
    let out = scratch("merged_streamer.root");
    let options = MergeOptions { name: Some("Events".into()), ..forced() };
    let summary = run(&out, &[&input, &input], &options).expect("merge");
    assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);
    let footer =
        RNTupleFile::open(&out).expect("open").rntuple("Events").expect("Events").streamer_infos().expect("infos");
    let record = record_infos(&out);
    let roots = record_infos(&input);
    assert!(footer.classes.len() >= 4, "{:?}", footer.classes.keys());
    for (class, versions) in &footer.classes {
        for info in versions {
            let listed = record.get(class, Some(info.version), Some(info.checksum));
            assert_eq!(listed, Some(info), "class {class} in the merged file's record");
            assert_eq!(roots.get(class, Some(info.version), Some(info.checksum)), Some(info), "ROOT lists {class}");
        }
    }
    assert!(record.get("ROOT::RNTuple", None, None).is_some());
    let _ = std::fs::remove_file(&out);
}
