//! Every writer of the project ends its files in one place, the page sink
//! (`rntuple::write::PageSink`): the single writer, the parallel writer,
//! `recover` and `merge`. For the same clusters they give the same page
//! lists and footers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use rntuple::container::write::{FileWriter, WriterOptions};
use rntuple::format::compression::decompress;
use rntuple::format::envelope::{parse_footer, parse_page_list};
use rntuple::format::model::{Footer, PageList};
use rntuple::format::Location;
use rntuple::write::{ParallelWriter, RNTupleWriter, SharedFileWriter, WriteOptions};
use rntuple::RNTupleFile;
use rntuple_tools::recover::{recover, RecoverOptions};
use rntuple_tools::{merge, MergeOptions, NoProgress};

/// `out.root` in a directory of its own (the file's name is in its bytes).
fn scratch(dir: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rntuple-one-end-{}", std::process::id())).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("out.root")
}

fn batch(k: i64) -> RecordBatch {
    let schema = Schema::new(vec![Field::new("x", DataType::Int64, false), Field::new("y", DataType::Float64, false)]);
    let x: Vec<i64> = (0..1000).map(|i| k * 1000 + i).collect();
    let y: Vec<f64> = x.iter().map(|&v| (v as f64).sqrt()).collect();
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(Int64Array::from(x)), Arc::new(Float64Array::from(y))])
        .unwrap()
}

const CLUSTERS: i64 = 3;

fn options() -> WriteOptions {
    WriteOptions { group_pages_by_column: true, ..Default::default() }
}

/// Three clusters by the single writer; `finish`: else the process "dies"
/// after the last commit (writer and file are never closed).
fn write_single(path: &Path, finish: bool) {
    let mut file = FileWriter::create(path, WriterOptions::default()).unwrap();
    let mut w = RNTupleWriter::new(&mut file, "t", &batch(0).schema(), &HashMap::new(), options()).unwrap();
    for k in 0..CLUSTERS {
        w.write_batch(&batch(k)).unwrap();
        w.commit_cluster().unwrap();
    }
    if finish {
        w.close().unwrap();
        file.finish().unwrap();
    } else {
        // What a killed process leaves: no close, no file header update.
        std::mem::forget(w);
        std::mem::forget(file);
    }
}

/// The same clusters through one fill context of a parallel writer.
fn write_parallel(path: &Path) {
    let file = SharedFileWriter::create(path, WriterOptions::default()).unwrap();
    let writer = ParallelWriter::new(&file, "t", &batch(0).schema(), &HashMap::new(), options()).unwrap();
    let mut ctx = writer.create_fill_context().unwrap();
    for k in 0..CLUSTERS {
        ctx.write_batch(&batch(k)).unwrap();
        ctx.flush_cluster().unwrap();
    }
    ctx.close().unwrap();
    writer.close().unwrap();
    file.finish().unwrap();
}

/// The footer and first page list envelopes of `t`, uncompressed.
fn end_of(path: &Path) -> (Vec<u8>, Vec<u8>) {
    let a = RNTupleFile::open(path).unwrap().rntuple("t").unwrap().anchor().clone();
    let bytes = std::fs::read(path).unwrap();
    let inflate = |offset: u64, size: u64, length: u64| {
        let raw = &bytes[offset as usize..(offset + size) as usize];
        if size == length {
            raw.to_vec()
        } else {
            decompress(raw, length as usize, &Location::default()).unwrap()
        }
    };
    let footer = inflate(a.seek_footer, a.nbytes_footer, a.len_footer);
    let f: Footer = parse_footer(&footer, true).unwrap();
    let pl = &f.cluster_groups[0].page_list;
    (footer, inflate(pl.locator.offset, pl.locator.size, pl.length))
}

#[test]
fn single_and_parallel_writers_and_recover_end_files_alike() {
    let single = scratch("single");
    let parallel = scratch("parallel");
    write_single(&single, true);
    write_parallel(&parallel);
    // One fill context over the sink, or one fill context over the shared
    // sink of a parallel writer: the same page list (the same pages at the
    // same places) and the same footer, byte for byte.
    let (footer, page_list) = end_of(&single);
    assert!(end_of(&parallel) == (footer.clone(), page_list.clone()), "the parallel writer ends its file otherwise");

    // A writer that dies after its last commit: `recover` finishes the file
    // through the same sink, with the same page list and footer.
    let broken = scratch("broken");
    let recovered = scratch("recovered");
    write_single(&broken, false);
    recover(&broken, Some(&recovered), RecoverOptions { overwrite: true, ..Default::default() }).unwrap();
    assert!(end_of(&recovered) == (footer.clone(), page_list.clone()), "recover ends its file otherwise");

    // `merge` of the file: its header differs (the writer's name), so the
    // envelopes carry another header checksum, but the clusters and their
    // groups are recorded alike.
    let merged = scratch("merged");
    merge(&merged, &[&single], &MergeOptions { overwrite: true, ..Default::default() }, &NoProgress).unwrap();
    let (mfooter, mpage_list) = end_of(&merged);
    let (f, mf) = (parse_footer(&footer, true).unwrap(), parse_footer(&mfooter, true).unwrap());
    let (p, mp): (PageList, PageList) =
        (parse_page_list(&page_list, true).unwrap(), parse_page_list(&mpage_list, true).unwrap());
    assert_eq!(p.clusters, mp.clusters);
    assert_eq!(p.clusters.len(), CLUSTERS as usize);
    let offsets = |l: &PageList| -> Vec<Vec<i64>> {
        l.page_locations.iter().map(|c| c.iter().map(|r| r.element_offset).collect()).collect()
    };
    assert_eq!(offsets(&p), offsets(&mp));
    let groups = |f: &Footer| -> Vec<(u64, u64, u32)> {
        f.cluster_groups.iter().map(|g| (g.min_entry, g.entry_span, g.num_clusters)).collect()
    };
    assert_eq!(groups(&f), groups(&mf));
    assert_eq!(f.schema_extension, mf.schema_extension);
}
