//! Selecting subfields by dotted path (`"Muon.pt"`) reads the pages of that
//! subfield and of the offsets of the collections above it, nothing else
//! (DESIGN.md "I/O is planned"), and gives the same values as the whole read.
//! The expected bytes come from the page lists of exactly those columns.

mod write_support;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float32Array, Int32Array, LargeListArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields};
use rntuple::{FieldNode, RNTuple, RNTupleFile, WriteOptions};
use write_support::*;

/// `n` entries of `nMuon: i32` and `Muon: [{pt, eta, phi: f32, hits: [i32]}]`.
fn events(n: usize) -> RecordBatch {
    let mut offsets = vec![0i64];
    let mut hit_offsets = vec![0i64];
    let (mut pt, mut eta, mut phi, mut hits) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let k = (i * 7 + 3) % 5;
        for j in 0..k {
            pt.push(i as f32 + j as f32 / 8.0);
            eta.push(-(j as f32));
            phi.push((i % 11) as f32 / 4.0);
            for h in 0..(i + j) % 4 {
                hits.push((i * 10 + h) as i32);
            }
            hit_offsets.push(hits.len() as i64);
        }
        offsets.push(pt.len() as i64);
    }
    let hits_item = Arc::new(Field::new("_0", DataType::Int32, false));
    let hits = LargeListArray::new(
        hits_item.clone(),
        arrow_buffer::OffsetBuffer::new(hit_offsets.into()),
        Arc::new(Int32Array::from(hits)),
        None,
    );
    let members = Fields::from(vec![
        Field::new("pt", DataType::Float32, false),
        Field::new("eta", DataType::Float32, false),
        Field::new("phi", DataType::Float32, false),
        Field::new("hits", DataType::LargeList(hits_item), false),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Float32Array::from(pt)),
        Arc::new(Float32Array::from(eta)),
        Arc::new(Float32Array::from(phi)),
        Arc::new(hits),
    ];
    let muon = StructArray::new(members.clone(), columns, None);
    let item = Arc::new(Field::new("_0", DataType::Struct(members), false));
    let sizes: Vec<i32> = offsets.windows(2).map(|w| (w[1] - w[0]) as i32).collect();
    let muons = LargeListArray::new(item, arrow_buffer::OffsetBuffer::new(offsets.into()), Arc::new(muon), None);
    RecordBatch::try_from_iter([
        ("nMuon", Arc::new(Int32Array::from(sizes)) as ArrayRef),
        ("Muon", Arc::new(muons) as ArrayRef),
    ])
    .expect("batch")
}

fn open(name: &str) -> (RNTupleFile, RecordBatch) {
    let batch = events(5000);
    let path = scratch(&format!("select-{name}.root"));
    let options = WriteOptions {
        approx_zipped_cluster_size: 4000,
        max_unzipped_cluster_size: 64 * 1024,
        max_unzipped_page_size: 1024,
        initial_unzipped_page_size: 64,
        ..Default::default()
    };
    rntuple::write_batches(&path, "t", [batch.clone()], &HashMap::new(), options).expect("write");
    (RNTupleFile::open(&path).expect("open"), batch)
}

/// The field at on-disk `path` (`"Muon._0.pt"`).
fn field<'a>(nt: &'a RNTuple, path: &str) -> &'a FieldNode {
    let mut parts = path.split('.');
    let mut f = nt.schema().field(parts.next().expect("name")).expect("top-level field");
    for p in parts {
        f = f.children.iter().find(|c| c.name == p).expect("subfield");
    }
    f
}

/// Stored bytes of every page of the (first-representation) columns of
/// `fields` themselves (not their subfields), all clusters, checksums included.
fn page_bytes(nt: &RNTuple, fields: &[&FieldNode]) -> (u64, u64) {
    let cols: Vec<u32> = fields.iter().flat_map(|f| f.representations.first().cloned().unwrap_or_default()).collect();
    let (mut bytes, mut pages) = (0, 0);
    for c in &nt.descriptor().clusters {
        for &col in &cols {
            for p in c.columns.get(col as usize).map(|r| r.pages.as_slice()).unwrap_or_default() {
                bytes += p.locator.size + if p.has_checksum { 8 } else { 0 };
                pages += 1;
            }
        }
    }
    (bytes, pages)
}

fn member<'a>(batch: &'a RecordBatch, top: &str) -> &'a StructArray {
    let list = batch.column_by_name(top).expect("column").as_any().downcast_ref::<LargeListArray>().expect("list");
    list.values().as_any().downcast_ref::<StructArray>().expect("struct")
}

#[test]
fn a_subfield_reads_its_columns_and_the_offsets_above_it() {
    let (f, batch) = open("leaf");
    let nt = f.rntuple("t").expect("rntuple");
    assert!(nt.descriptor().clusters.len() > 3, "{} clusters", nt.descriptor().clusters.len());
    let cases: [(&[&str], &[&str]); 3] = [
        (&["Muon.pt"], &["Muon", "Muon._0.pt"]),
        (&["Muon._0.eta", "Muon.phi"], &["Muon", "Muon._0.eta", "Muon._0.phi"]),
        (&["Muon.hits"], &["Muon", "Muon._0.hits", "Muon._0.hits._0"]),
    ];
    let full = nt.read_all().expect("read");
    for (paths, columns_of) in cases {
        let fields: Vec<&FieldNode> = columns_of.iter().map(|p| field(&nt, p)).collect();
        let (bytes, pages) = page_bytes(&nt, &fields);
        for threads in [1, 2] {
            nt.reset_io_stats();
            let got = nt.read_with(Some(paths), 0, u64::MAX, &rntuple::ReadOptions::DEFAULT.with_threads(threads));
            let got = got.expect("read");
            let s = nt.io_stats();
            assert_eq!((s.bytes_needed, s.pages), (bytes, pages), "{paths:?}, {threads} threads: {s:?}");
            // Only the selected members, with the values of the whole read.
            let (ours, all) = (member(&got, "Muon"), member(&full, "Muon"));
            let names: Vec<&str> = ours.fields().iter().map(|f| f.name().as_str()).collect();
            let expected: Vec<&str> = paths.iter().map(|p| p.rsplit('.').next().expect("name")).collect();
            assert_eq!(names, expected, "{paths:?}");
            for name in names {
                assert_eq!(ours.column_by_name(name), all.column_by_name(name), "{paths:?} {name}");
            }
            assert_eq!(got.column(0).to_data().len(), batch.num_rows());
        }
    }
    // The whole collection reads more than any one member.
    nt.reset_io_stats();
    nt.read(Some(&["Muon"]), 0, u64::MAX).expect("read");
    let whole = nt.io_stats().bytes_needed;
    assert!(page_bytes(&nt, &[field(&nt, "Muon"), field(&nt, "Muon._0.pt")]).0 * 2 < whole);
}

#[test]
fn a_subfield_in_an_entry_range_gives_the_rows_of_the_whole_read() {
    let (f, _) = open("range");
    let nt = f.rntuple("t").expect("rntuple");
    let full = nt.read(Some(&["Muon.pt", "nMuon"]), 0, u64::MAX).expect("read");
    for (a, b) in [(1, 4999), (1234, 1300), (4000, 4001)] {
        let part = nt.read(Some(&["Muon.pt", "nMuon"]), a, b).expect("read");
        assert_eq!(part, full.slice(a as usize, (b - a) as usize), "{a}..{b}");
    }
    let err = nt.read(Some(&["Muon.mass"]), 0, 10).expect_err("unknown member").to_string();
    assert!(err.contains("Muon.mass"), "{err}");
}
