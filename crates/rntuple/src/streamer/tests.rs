//! Decoding ROOT 6.40's streamer fields against ROOT's own reading
//! (`tests/data/streamer_root640.{root,json}`, made by
//! `tests/reference/streamer_root.py`), and hostile streamer infos and
//! objects refused with the class and the reason.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use rntuple_container::RootFile;

use super::*;
use crate::{load_envelopes, Checks, RNTupleFile};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data")).join(name)
}

/// The footer's streamer info content (extra type information, content id 0).
fn streamer_info_bytes() -> Vec<u8> {
    let root = Arc::new(RootFile::open(data("streamer_root640.root")).expect("open"));
    let key = root.find_key("Events").expect("key");
    let env =
        load_envelopes(&root, &key, &mut Checks::Stop { verify_checksums: true }, crate::DEFAULT_MAX_ENVELOPE_SIZE)
            .expect("envelopes");
    let infos: Vec<_> = env
        .header
        .schema
        .extra_type_info
        .iter()
        .chain(&env.footer.schema_extension.extra_type_info)
        .filter(|e| e.content_id == 0)
        .collect();
    assert_eq!(infos.len(), 1);
    infos[0].content.clone()
}

/// All entries with the streamer fields as their stored bytes
/// ([`crate::ReadOptions::streamer_bytes`]; the reader decodes them by default).
fn read_stored(nt: &crate::RNTuple) -> crate::Result<arrow_array::RecordBatch> {
    let options = crate::ReadOptions { streamer_bytes: true, ..*nt.options() };
    nt.read_with(None, 0, u64::MAX, &options)
}

/// Entry bytes of each streamer field, as stored.
fn entries() -> Vec<(String, String, Vec<Vec<u8>>)> {
    let nt = RNTupleFile::open(data("streamer_root640.root")).expect("open").rntuple("Events").expect("Events");
    let batch = read_stored(&nt).expect("read");
    nt.schema()
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let col = batch.column(i).as_binary::<i64>();
            (f.name.clone(), f.type_name.clone(), col.iter().map(|v| v.expect("value").to_vec()).collect())
        })
        .collect()
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(data("streamer_root640.json")).expect("json");
    serde_json::from_str(&text).expect("parse")
}

#[test]
fn streamer_infos_of_root_640() {
    let infos = StreamerInfos::parse(&streamer_info_bytes()).expect("parse");
    let mut names: Vec<&str> = infos.classes.keys().map(String::as_str).collect();
    names.sort();
    assert!(names.contains(&"Hit") && names.contains(&"Derived26") && names.contains(&"Base26"), "{names:?}");
    let hit = infos.get("Hit", None, None).expect("Hit");
    let members: Vec<(&str, &str)> = hit.elements.iter().map(|e| (e.name.as_str(), e.type_name.as_str())).collect();
    assert_eq!(
        members,
        [("x", "float"), ("y", "float"), ("id", "int"), ("samples", "vector<float>"), ("label", "string")]
    );
    let der = infos.get("Derived26", None, None).expect("Derived26");
    assert_eq!(der.elements[0].kind, ElementKind::Base);
    assert_eq!(der.elements[0].name, "Base26");
    let base = infos.get("Base26", None, None).expect("Base26");
    assert_eq!((base.elements[1].name.as_str(), base.elements[1].array_length), ("c", 3));
}

#[test]
fn values_equal_roots_reader() {
    let infos = StreamerInfos::parse(&streamer_info_bytes()).expect("parse");
    let expected = expected();
    let rows = expected["Events"].as_array().expect("entries");
    let fields = entries();
    assert_eq!(fields.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["hit", "hits", "der", "tob"]);
    for (name, type_name, values) in &fields {
        assert_eq!(values.len(), rows.len());
        for (i, bytes) in values.iter().enumerate() {
            let v = decode(&infos, type_name, bytes).unwrap_or_else(|e| panic!("{name} entry {i}: {e}"));
            assert_eq!(v.to_json(), rows[i][name], "{name} entry {i}");
        }
    }
}

fn hit_entry(i: usize) -> (StreamerInfos, Vec<u8>) {
    let infos = StreamerInfos::parse(&streamer_info_bytes()).expect("parse");
    let bytes = entries().into_iter().find(|f| f.0 == "hit").expect("hit").2.swap_remove(i);
    (infos, bytes)
}

#[test]
fn a_class_missing_from_the_streamer_info_is_named() {
    let (mut infos, bytes) = hit_entry(1);
    infos.classes.remove("Hit");
    let e = decode(&infos, "Hit", &bytes).unwrap_err();
    assert!(e.contains("class Hit is missing from the streamer info"), "{e}");
}

#[test]
fn streamer_info_lying_about_sizes_is_refused() {
    // The info says `id` is a double: the members then overrun the byte count.
    let (mut infos, bytes) = hit_entry(3);
    let hit = &mut infos.classes.get_mut("Hit").expect("Hit")[0];
    hit.elements[2].type_code = 8;
    let e = decode(&infos, "Hit", &bytes).unwrap_err();
    assert!(e.contains("Hit"), "{e}");
    // A C array claiming far more items than there are bytes.
    let (mut infos, _) = hit_entry(0);
    let der_bytes = entries().into_iter().find(|f| f.0 == "der").expect("der").2.swap_remove(1);
    infos.classes.get_mut("Base26").expect("Base26")[0].elements[1].array_length = i32::MAX;
    let e = decode(&infos, "Derived26", &der_bytes).unwrap_err();
    assert!(e.contains("Base26::c") && e.contains("cannot fit"), "{e}");
}

#[test]
fn a_vector_count_beyond_the_bytes_is_refused_before_allocating() {
    let (infos, mut bytes) = hit_entry(2);
    // `samples`: byte count (4), version (2), then the size at byte 26.
    let at = 6 + 4 + 4 + 4 + 4 + 4 + 2;
    assert_eq!(&bytes[at..at + 4], &2u32.to_be_bytes());
    bytes[at..at + 4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let e = decode(&infos, "Hit", &bytes).unwrap_err();
    assert!(e.contains("cannot fit"), "{e}");
}

#[test]
fn deep_nesting_is_bounded() {
    // A class whose only member is itself: a stream of nested headers.
    let mut infos = StreamerInfos::default();
    let me = Element {
        name: "next".into(),
        type_code: 62,
        array_length: 0,
        type_name: "Loop".into(),
        kind: ElementKind::Object,
    };
    infos
        .classes
        .insert("Loop".into(), vec![ClassInfo { name: "Loop".into(), version: 1, checksum: 0, elements: vec![me] }]);
    let mut bytes = Vec::new();
    for _ in 0..1000 {
        bytes.extend_from_slice(&0x4000_0000u32.to_be_bytes());
        bytes.extend_from_slice(&1u16.to_be_bytes());
    }
    let e = decode(&infos, "Loop", &bytes).unwrap_err();
    assert!(e.contains("nested deeper than 64"), "{e}");
}

#[test]
fn truncated_and_garbage_streamer_infos_are_refused() {
    let bytes = streamer_info_bytes();
    for cut in [0, 1, 5, 40, bytes.len() / 2, bytes.len() - 1] {
        assert!(StreamerInfos::parse(&bytes[..cut]).is_err() || cut == 0, "cut at {cut}");
    }
    let mut bad = bytes.clone();
    bad[4..8].copy_from_slice(&0x8000_1234u32.to_be_bytes()); // a reference to a class never read
    let e = StreamerInfos::parse(&bad).unwrap_err();
    assert!(e.contains("never read"), "{e}");
}

#[test]
fn arrow_arrays_have_the_split_fields_types_and_roots_values() {
    let nt = RNTupleFile::open(data("streamer_root640.root")).expect("open").rntuple("Events").expect("Events");
    let infos = nt.streamer_infos().expect("infos");
    let batch = read_stored(&nt).expect("read");
    let (read, undecoded) = nt.read_with_notes(None, 0, u64::MAX, nt.options()).expect("read decoded");
    assert!(undecoded.is_empty(), "{undecoded:?}");
    let expected = expected();
    for (i, f) in nt.schema().fields.iter().enumerate() {
        let arr = decode_array(&infos, &f.type_name, batch.column(i).as_binary::<i64>()).expect("decode");
        assert_eq!(arr.len(), 4, "{}", f.name);
        // The reader's own decoding (straight from the byte column) gives the same array.
        assert_eq!(read.column(i).as_ref(), arr.as_ref(), "{}", f.name);
        for e in 0..arr.len() {
            assert_eq!(arrow_json(&arr, e), expected["Events"][e][&f.name], "{} entry {e}", f.name);
        }
    }
    let hit = arrow_type(&infos, "Hit").expect("type");
    let leaf = |n: &str, t| arrow_schema::Field::new(n, t, false);
    let samples = arrow_schema::DataType::LargeList(std::sync::Arc::new(leaf("_0", arrow_schema::DataType::Float32)));
    let want = arrow_schema::DataType::Struct(arrow_schema::Fields::from(vec![
        leaf("x", arrow_schema::DataType::Float32),
        leaf("y", arrow_schema::DataType::Float32),
        leaf("id", arrow_schema::DataType::Int32),
        leaf("samples", samples),
        leaf("label", arrow_schema::DataType::LargeUtf8),
    ]));
    assert_eq!(hit, want);
}

/// Row `i` of an Arrow array as JSON, for the types decoding builds.
fn arrow_json(arr: &dyn arrow_array::Array, i: usize) -> serde_json::Value {
    use arrow_array::types::*;
    use arrow_schema::DataType as D;
    use serde_json::{json, Value as J};
    match arr.data_type() {
        D::Struct(fields) => {
            let s = arr.as_struct();
            J::Object(fields.iter().zip(s.columns()).map(|(f, c)| (f.name().clone(), arrow_json(c, i))).collect())
        }
        D::LargeList(_) => {
            let l = arr.as_list::<i64>().value(i);
            J::Array((0..l.len()).map(|k| arrow_json(&l, k)).collect())
        }
        D::FixedSizeList(_, _) => {
            let l = arr.as_fixed_size_list().value(i);
            J::Array((0..l.len()).map(|k| arrow_json(&l, k)).collect())
        }
        D::Float32 => json!(f64::from(arr.as_primitive::<Float32Type>().value(i))),
        D::Float64 => json!(arr.as_primitive::<Float64Type>().value(i)),
        D::Int16 => json!(arr.as_primitive::<Int16Type>().value(i)),
        D::Int32 => json!(arr.as_primitive::<Int32Type>().value(i)),
        D::Int64 => json!(arr.as_primitive::<Int64Type>().value(i)),
        D::UInt32 => json!(arr.as_primitive::<UInt32Type>().value(i)),
        D::LargeUtf8 => json!(arr.as_string::<i64>().value(i)),
        other => panic!("{other}"),
    }
}

#[test]
fn every_single_byte_corruption_is_an_answer_not_a_panic() {
    // Each byte of the streamer info and of every entry set to 0x00, 0xff
    // and 0x7f in turn: parsing and decoding return (Ok or Err), bounded.
    let info_bytes = streamer_info_bytes();
    for at in 0..info_bytes.len() {
        for v in [0x00, 0xff, 0x7f] {
            let mut b = info_bytes.clone();
            b[at] = v;
            let _ = StreamerInfos::parse(&b);
        }
    }
    let infos = StreamerInfos::parse(&info_bytes).expect("parse");
    for (_, type_name, values) in entries() {
        for bytes in values {
            for at in 0..bytes.len() {
                for v in [0x00, 0xff, 0x7f] {
                    let mut b = bytes.clone();
                    b[at] = v;
                    if let Ok(value) = decode(&infos, &type_name, &b) {
                        let _ = value.to_json();
                    }
                }
            }
        }
    }
}

// Writing: the classes of `tests/data/streamer_root640.root` (`Hit` and a
// vector of it) described to the encoder as the writer does, checked
// against the bytes and checksums ROOT 6.40 wrote.

fn basic(cpp: &str) -> Ty {
    Ty::basic(cpp).expect("basic")
}

/// `struct Hit { float x, y; int id; std::vector<float> samples; std::string label; }`
/// and `struct Base2 { double w; }`, `struct Der2 : Base2 { Hit h; std::vector<Hit> more; long long big; }`.
fn hit_classes() -> Classes {
    let m = |name: &str, ty: Ty| Member { name: name.into(), ty, base: false };
    let mut classes = Classes::default();
    let hit = Class {
        name: "Hit".into(),
        version: -1,
        members: vec![
            m("x", basic("float")),
            m("y", basic("float")),
            m("id", basic("std::int32_t")),
            m("samples", Ty::Vector(Box::new(basic("float")))),
            m("label", Ty::String),
        ],
        checksum: 0,
    };
    classes.add(hit, None);
    classes
}

#[test]
fn checksums_are_roots() {
    let classes = hit_classes();
    assert_eq!(classes.by_name["Hit"].checksum, 0xfe71_f2f1);
    // `std::vector<Hit>`'s TClass checksum, the type checksum of ROOT's field `hits`.
    assert_eq!(Classes::vector_checksum(&Ty::Class("Hit".into())), 9_975_776);
    // A base's checksum enters its derived class's (Base26 has a C array,
    // which the writer does not write: its checksum is given).
    let mut classes = hit_classes();
    classes.add(Class { name: "Base26".into(), version: -1, members: Vec::new(), checksum: 0 }, Some(0x5ee4_7fcf));
    let m = |name: &str, ty: Ty, base: bool| Member { name: name.into(), ty, base };
    let der = Class {
        name: "Derived26".into(),
        version: -1,
        members: vec![
            m("Base26", Ty::Class("Base26".into()), true),
            m("h", Ty::Class("Hit".into()), false),
            m("more", Ty::Vector(Box::new(Ty::Class("Hit".into()))), false),
            m("big", basic("std::int64_t"), false),
        ],
        checksum: 0,
    };
    classes.add(der, None);
    assert_eq!(classes.by_name["Derived26"].checksum, 0x51cd_0728);
    let infos = StreamerInfos::parse(&streamer_info_bytes()).expect("parse");
    assert_eq!(infos.get("Hit", None, None).expect("Hit").checksum, 0xfe71_f2f1);
}

#[test]
fn encoded_entries_equal_roots_bytes() {
    let nt = RNTupleFile::open(data("streamer_root640.root")).expect("open").rntuple("Events").expect("Events");
    let infos = nt.streamer_infos().expect("infos");
    let batch = read_stored(&nt).expect("read");
    for (i, f) in nt.schema().fields.iter().enumerate() {
        let top = match f.name.as_str() {
            "hit" => Ty::Class("Hit".into()),
            "hits" => Ty::Vector(Box::new(Ty::Class("Hit".into()))),
            _ => continue,
        };
        let stored = batch.column(i).as_binary::<i64>();
        let values = decode_array(&infos, &f.type_name, stored).expect("decode");
        let enc = Encoder::new(top, hit_classes()).expect("encoder");
        let (mut bytes, mut ends) = (Vec::new(), Vec::new());
        enc.encode(values.as_ref(), 0, values.len(), &mut bytes, &mut ends).expect("encode");
        let mut start = 0;
        for (e, end) in ends.iter().enumerate() {
            assert_eq!(&bytes[start..*end as usize], stored.value(e), "{} entry {e}", f.name);
            start = *end as usize;
        }
    }
}

#[test]
fn written_streamer_infos_read_as_roots() {
    let ours = StreamerInfos::parse(&hit_classes().streamer_info_list()).expect("parse ours");
    let roots = StreamerInfos::parse(&streamer_info_bytes()).expect("parse ROOT's");
    assert_eq!(ours.get("Hit", None, None), roots.get("Hit", None, None));
}

#[test]
fn member_wise_vectors_of_classes_of_classes_are_refused() {
    let m = |name: &str, ty: Ty| Member { name: name.into(), ty, base: false };
    let mut classes = hit_classes();
    classes.add(
        Class { name: "Outer".into(), version: -1, members: vec![m("h", Ty::Class("Hit".into()))], checksum: 0 },
        None,
    );
    classes.add(
        Class {
            name: "Top".into(),
            version: -1,
            members: vec![m("outers", Ty::Vector(Box::new(Ty::Class("Outer".into()))))],
            checksum: 0,
        },
        None,
    );
    let e = Encoder::new(Ty::Class("Top".into()), classes).unwrap_err();
    assert!(e.contains("Outer::h") && e.contains("member-wise"), "{e}");
}

#[test]
fn maps_sets_and_tstrings_equal_roots_reader() {
    // `tests/data/streamer_gaps_root640.{root,json}` (tests/reference/streamer_root.py):
    // Gap26 { map<int,float>, set<int>, map<string,Hit>, set<string>, TString, vector<string> }.
    let nt = RNTupleFile::open(data("streamer_gaps_root640.root")).expect("open").rntuple("Events").expect("Events");
    let infos = nt.streamer_infos().expect("infos");
    let batch = read_stored(&nt).expect("read");
    let text = std::fs::read_to_string(data("streamer_gaps_root640.json")).expect("json");
    let expected: serde_json::Value = serde_json::from_str(&text).expect("parse");
    let col = batch.column(0).as_binary::<i64>();
    for e in 0..col.len() {
        let v = decode(&infos, "Gap26", col.value(e)).unwrap_or_else(|err| panic!("entry {e}: {err}"));
        assert_eq!(v.to_json(), expected["Events"][e]["gap"], "entry {e}");
    }
    let arr = decode_array(&infos, "Gap26", col).expect("arrow");
    for e in 0..arr.len() {
        assert_eq!(arrow_json(&arr, e), expected["Events"][e]["gap"], "entry {e}");
    }
}

#[test]
fn the_writer_writes_roots_field_records_bytes_and_streamer_info() {
    use std::collections::HashMap;

    use crate::write::{write_batches, FieldOverride, WriteOptions};

    // ROOT's `hit` and `hits` decoded to Arrow, written back as streamer fields.
    let root = RNTupleFile::open(data("streamer_root640.root")).expect("open").rntuple("Events").expect("Events");
    let infos = root.streamer_infos().expect("infos");
    let batch = read_stored(&root).expect("read");
    let stored: Vec<_> = (0..2).map(|i| batch.column(i).as_binary::<i64>().clone()).collect();
    let arrays: Vec<arrow_array::ArrayRef> = ["Hit", "std::vector<Hit>"]
        .iter()
        .zip(&stored)
        .map(|(t, b)| decode_array(&infos, t, b).expect("decode"))
        .collect();
    let schema = arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("hit", arrays[0].data_type().clone(), false),
        arrow_schema::Field::new("hits", arrays[1].data_type().clone(), false),
    ]);
    let ours_batch = arrow_array::RecordBatch::try_new(Arc::new(schema), arrays).expect("batch");
    let ov = |t: &str| FieldOverride { type_name: Some(t.into()), streamer: true, ..Default::default() };
    let overrides = HashMap::from([("hit".to_string(), ov("Hit")), ("hits".to_string(), ov("std::vector<Hit>"))]);
    let path = std::env::temp_dir().join(format!("rntuple-streamer-write-{}.root", std::process::id()));
    write_batches(&path, "Events", [ours_batch], &overrides, WriteOptions::default()).expect("write");
    let ours = RNTupleFile::open(&path).expect("open ours").rntuple("Events").expect("Events");
    let ours_read = read_stored(&ours).expect("read ours");
    for (i, stored) in stored.iter().enumerate().take(2) {
        let (a, b) = (&root.descriptor().fields[i], &ours.descriptor().fields[i]);
        assert_eq!(
            (&a.name, &a.type_name, a.role, a.type_version, a.type_checksum),
            (&b.name, &b.type_name, b.role, b.type_version, b.type_checksum)
        );
        let col = ours_read.column(i).as_binary::<i64>();
        for e in 0..col.len() {
            assert_eq!(col.value(e), stored.value(e), "{} entry {e}", a.name);
        }
    }
    let (a, b) = (&root.descriptor().columns, &ours.descriptor().columns);
    assert_eq!(
        a.iter().take(4).map(|c| c.column_type).collect::<Vec<_>>(),
        b.iter().map(|c| c.column_type).collect::<Vec<_>>()
    );
    let ours_infos = ours.streamer_infos().expect("our infos");
    assert_eq!(ours_infos.get("Hit", None, None), infos.get("Hit", None, None));
    assert_eq!(ours.descriptor().extra_type_info.len(), 1);
    // The file's own StreamerInfo record lists Hit too, as ROOT's does (JSROOT
    // looks classes up there), after ROOT::RNTuple's info.
    let file_infos = |f: &RNTupleFile| {
        let payload = f.root_file().streamer_info().expect("read record").expect("a record");
        StreamerInfos::parse_key_payload(&payload, 72).expect("parse record")
    };
    let ours_file = RNTupleFile::open(&path).expect("open ours");
    let root_file = RNTupleFile::open(data("streamer_root640.root")).expect("open");
    let (ours_record, root_record) = (file_infos(&ours_file), file_infos(&root_file));
    assert_eq!(ours_record.get("Hit", None, None), root_record.get("Hit", None, None));
    assert!(ours_record.get("Hit", None, None).is_some());
    assert!(ours_record.get("ROOT::RNTuple", None, None).is_some());
    let _ = std::fs::remove_file(&path);
}
