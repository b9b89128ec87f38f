//! The writer's inputs: Arrow record batches with hostile shapes and types
//! (see `rntuple_fuzz::arrow_gen`), write options and type overrides, all
//! drawn from the fuzz bytes, written into memory. The writer may refuse
//! (an `Err`); a panic, a hang or a huge allocation is a bug, and so is a
//! file it finished that our reader cannot read back with every entry.
#![no_main]

use std::collections::HashMap;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rntuple::write::{FieldOverride, RNTupleWriter, RealEncoding, WriteOptions};
use rntuple::{RNTupleFile, ReadOptions};
use rntuple_container::write::{FileWriter, WriterOptions};
use rntuple_container::{MemoryStorage, OpenOptions, RootFile};
use rntuple_fuzz::{arrow_gen, Bytes, VecSink};

const TYPE_NAMES: [&str; 12] = [
    "std::int32_t",
    "float",
    "double",
    "std::string",
    "std::vector<float>",
    "std::array<float,3>",
    "std::bitset<5>",
    "std::optional<std::int64_t>",
    "std::variant<std::int32_t,float>",
    "std::map<",
    "",
    "std::vector<std::vector<bool>>",
];

fn options(b: &mut Bytes<'_>) -> WriteOptions {
    WriteOptions {
        compression: [0, 505, 101, 207, 404, 0][b.below(6)],
        approx_zipped_cluster_size: 1 + u64::from(b.u16()),
        max_unzipped_cluster_size: 1 + u64::from(b.u32()),
        initial_unzipped_page_size: 1 + u64::from(b.u8()),
        max_unzipped_page_size: 1 + u64::from(b.u16()),
        page_checksums: b.u8() != 0,
        same_page_merging: b.bool(),
        cluster_group_size: b.below(3),
        index32: b.bool(),
        nullable_as_optional: b.u8() != 0,
        compression_threads: 1,
        memory_budget: if b.bool() { 0 } else { u64::from(b.u32() % (8 << 20)) },
        ..Default::default()
    }
}

fn overrides(b: &mut Bytes<'_>, schema: &arrow_schema::Schema) -> HashMap<String, FieldOverride> {
    let mut out = HashMap::new();
    for f in schema.fields() {
        match b.u8() % 8 {
            0 => {
                out.insert(f.name().clone(), FieldOverride::type_name(TYPE_NAMES[b.below(TYPE_NAMES.len())]));
            }
            1 => {
                let enc = match b.below(5) {
                    0 => RealEncoding::Real16,
                    1 => RealEncoding::Real32,
                    2 => RealEncoding::Real32Trunc { bits: u16::from(b.u8()) },
                    3 => RealEncoding::Real32Quant {
                        bits: u16::from(b.u8()),
                        min: f64::from_bits(b.u64()),
                        max: f64::from_bits(b.u64()),
                    },
                    _ => RealEncoding::Double32,
                };
                out.insert(f.name().clone(), FieldOverride::real(enc));
            }
            _ => {}
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let opts = options(&mut b);
    let Some(first) = arrow_gen::batch(&mut b, 64) else {
        return;
    };
    let schema = first.schema();
    let ov = overrides(&mut b, &schema);
    let sink = VecSink::default();
    let Ok(mut file) = FileWriter::with_sink(Box::new(sink.clone()), "memory.root", WriterOptions::default()) else {
        return;
    };
    let Ok(mut w) = RNTupleWriter::new(&mut file, "t", &schema, &ov, opts) else {
        return;
    };
    let mut rows = 0u64;
    let mut batch = first;
    for _ in 0..3 {
        if w.write_batch(&batch).is_err() {
            return;
        }
        rows += batch.num_rows() as u64;
        if b.bool() && w.commit_cluster().is_err() {
            return;
        }
        // The next batch: the same rows again, sliced differently.
        let skip = b.below(batch.num_rows() + 1);
        batch = batch.slice(skip, batch.num_rows() - skip);
        if b.exhausted() {
            break;
        }
    }
    if w.close().is_err() || file.finish().is_err() {
        return;
    }
    // A file the writer finished must read back whole.
    let storage = Arc::new(MemoryStorage::new(sink.bytes()));
    let root = RootFile::from_storage_with(storage, OpenOptions::new()).expect("our own file opens");
    let f = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    let t = f.rntuple("t").expect("our own RNTuple opens");
    assert_eq!(t.num_entries(), rows, "entries written");
    let read = t.read_all().expect("our own file reads back");
    assert_eq!(read.num_rows() as u64, rows);
});
