use rntuple_format::column::decode_page;
use rntuple_format::compression::decompress;
use rntuple_format::model::ColumnType;
use rntuple_format::Location;

use super::*;

fn plan() -> ColumnPlan {
    ColumnPlan {
        spec: ColumnSpec::new(ColumnType::SplitReal64, 64, None).unwrap(),
        mem_size: 8,
        empty: ColumnValues::F64(Vec::new()),
        first_element: 0,
    }
}

#[test]
fn filling_goes_on_while_batches_are_compressed_within_the_queue_share() {
    let options =
        WriteOptions { compression: 505, compression_threads: 2, max_unzipped_page_size: 8192, ..Default::default() };
    let mut c = Columns::new(&[plan(), plan()], &options).unwrap();
    let values: Vec<f64> = (0..600_000).map(|i| (i % 977) as f64 * 0.5).collect();
    let mut overlapped = 0;
    for (k, chunk) in values.chunks(1000).enumerate() {
        c.push(k % 2, chunk).unwrap();
        // Pages handed to the pool are not waited for: appending returns
        // with batches still being compressed.
        if !c.in_flight.is_empty() {
            overlapped += 1;
        }
        // The queued and in-flight pages stay within the queue's share
        // (and the page that overfills it).
        assert!(c.queued_bytes <= c.shares.queue_limit + c.max_page_bytes + 8, "{}", c.queued_bytes);
        assert_eq!(c.queued_bytes, c.pending_bytes + c.in_flight.values().sum::<u64>());
    }
    assert!(overlapped > 100, "{overlapped}");
    let cluster = c.finish_cluster().unwrap();
    assert_eq!(c.queued_bytes, 0);
    // Every page is back, in order: column k holds chunks k, k + 2, ...
    for (k, col) in cluster.iter().enumerate() {
        let mut got = ColumnValues::F64(Vec::new());
        for p in &col.pages {
            let page = decompress(&p.bytes[..p.data_size as usize], p.packed_size as usize, &Location::new("t", None))
                .unwrap();
            decode_page(&plan().spec, &page, p.num_elements as usize, &mut got).unwrap();
        }
        let expected: Vec<f64> = values.chunks(1000).skip(k).step_by(2).flatten().copied().collect();
        assert!(matches!(got, ColumnValues::F64(v) if v == expected), "column {k}");
    }
}

fn plan_of(ct: ColumnType, mem_size: u64, empty: ColumnValues) -> ColumnPlan {
    ColumnPlan {
        spec: ColumnSpec::new(ct, ct.default_bits().unwrap_or(0), None).unwrap(),
        mem_size,
        empty,
        first_element: 0,
    }
}

/// One column of each kind of encoding: plain, split, zigzag-split,
/// delta-split offsets, bits, bytes, truncated reals, and a switch.
fn plans_of_every_kind() -> Vec<ColumnPlan> {
    use ColumnType as T;
    vec![
        plan(),
        plan_of(T::SplitInt32, 4, ColumnValues::I32(Vec::new())),
        plan_of(T::SplitInt16, 2, ColumnValues::I16(Vec::new())),
        plan_of(T::SplitIndex64, 8, ColumnValues::Index(Vec::new())),
        plan_of(T::SplitIndex32, 8, ColumnValues::Index(Vec::new())),
        plan_of(T::Bit, 1, ColumnValues::Bool(Vec::new())),
        plan_of(T::UInt8, 1, ColumnValues::U8(Vec::new())),
        plan_of(T::Real32, 4, ColumnValues::F32(Vec::new())),
        plan_of(T::SplitUInt64, 8, ColumnValues::U64(Vec::new())),
        plan_of(T::Int64, 8, ColumnValues::I64(Vec::new())),
        plan_of(T::Switch, 12, ColumnValues::Switch { index: Vec::new(), tag: Vec::new() }),
    ]
}

/// Appends `n` values, from `k` on, to column `col` of `plans_of_every_kind`.
fn push_kind(c: &mut Columns, col: usize, k: usize, n: usize) {
    let r = k..k + n;
    let m = |i: usize| ((i * 7919) % 1013) as i64 - 500;
    match col {
        0 => c.push(col, &r.map(|i| m(i) as f64 * 0.5).collect::<Vec<_>>()),
        1 => c.push(col, &r.map(|i| m(i) as i32 * 4099).collect::<Vec<_>>()),
        2 => c.push(col, &r.map(|i| m(i) as i16).collect::<Vec<_>>()),
        3 | 4 => c.push(col, &r.map(|i| (i * 3) as u64).collect::<Vec<_>>()),
        5 => c.push(col, &r.map(|i| i % 3 == 0).collect::<Vec<_>>()),
        6 => c.push(col, &r.map(|i| m(i) as u8).collect::<Vec<_>>()),
        7 => c.push(col, &r.map(|i| m(i) as f32 * 0.25).collect::<Vec<_>>()),
        8 => c.push(col, &r.map(|i| (m(i) as u64) << 20).collect::<Vec<_>>()),
        9 => c.push(col, &r.map(|i| m(i) << 33).collect::<Vec<_>>()),
        _ => {
            let index: Vec<u64> = r.clone().map(|i| i as u64 / 2).collect();
            let tag: Vec<u32> = r.map(|i| (i % 3) as u32 + 1).collect();
            c.push_switch(col, &index, &tag)
        }
    }
    .unwrap();
}

/// Many threads, tiny pages and a tiny queue (a small memory budget): the
/// filling thread seals waiting batches itself whenever the queue is full,
/// the threads seal the others, and the pages are those one thread seals,
/// in the same order, for columns of every kind, every codec and without
/// compression; the sealers' scratch buffers are counted as held.
#[test]
fn tiny_pages_and_many_threads_give_the_pages_of_one_thread() {
    let plans = plans_of_every_kind();
    let run = |threads, compression| {
        let options = WriteOptions {
            compression,
            compression_threads: threads,
            initial_unzipped_page_size: 16,
            max_unzipped_page_size: 96,
            memory_budget: 64 << 10,
            ..Default::default()
        };
        let mut c = Columns::new(&plans, &options).unwrap();
        let mut clusters = Vec::new();
        for k in 0..3000 {
            // Ragged appends: 1 to 37 values.
            push_kind(&mut c, k % plans.len(), k * 13, 1 + (k * 5) % 37);
            assert!(c.queued_bytes <= c.shares.queue_limit + c.max_page_bytes + 8, "{}", c.queued_bytes);
            if k % 700 == 699 {
                clusters.push(c.finish_cluster().unwrap());
                c.cluster_written();
            }
        }
        clusters.push(c.finish_cluster().unwrap());
        c.cluster_written();
        // What is still held: the page buffers and the scratch buffers.
        let scratch: u64 = c.scratch.values().sum();
        assert_eq!(c.memory_use().held, c.allocated + scratch);
        if compression != 0 {
            assert!(scratch >= 96 && scratch <= c.scratch_bound(), "{scratch}");
        }
        let pages: Vec<Vec<(u32, u64, Vec<u8>)>> = clusters
            .iter()
            .flat_map(|cl| {
                cl.iter().map(|col| col.pages.iter().map(|p| (p.num_elements, p.data_size, p.bytes.clone())).collect())
            })
            .collect();
        (pages, c.pool.as_ref().map_or(0, |p| p.sealed_here))
    };
    let mut helped = 0;
    for compression in [505, 404, 101, 0] {
        let (one, _) = run(1, compression);
        assert!(one.iter().map(Vec::len).sum::<usize>() > 1000, "{compression}");
        for threads in [2, 3, 7] {
            let (pages, here) = run(threads, compression);
            assert!(pages == one, "compression {compression}, {threads} threads");
            if compression != 0 {
                helped += here;
            }
        }
    }
    assert!(helped > 0);
}

/// Page buffers parked in a scratch file when their memory is exceeded:
/// the pages are those of buffers kept in memory, for columns of every
/// kind, while the buffers in memory stay within `page_buffer_memory`.
#[test]
fn parked_page_buffers_give_the_pages_of_buffers_kept_in_memory() {
    let plans = plans_of_every_kind();
    let run = |memory: u64| {
        let options = WriteOptions {
            compression: 505,
            compression_threads: 1,
            max_unzipped_page_size: 64 << 10,
            page_buffer_memory: memory,
            ..Default::default()
        };
        let mut c = Columns::new(&plans, &options).unwrap();
        let mut clusters = Vec::new();
        let mut most = 0;
        for k in 0..8000 {
            push_kind(&mut c, k % plans.len(), k * 13, 1 + (k * 5) % 97);
            most = most.max(c.resident);
            assert!(c.resident <= memory.max(c.cols.len() as u64 * 256), "{} held", c.resident);
            assert!(c.resident <= c.allocated);
            if k % 3000 == 2999 {
                clusters.push(c.finish_cluster().unwrap());
                c.cluster_written();
            }
        }
        clusters.push(c.finish_cluster().unwrap());
        let pages: Vec<Vec<(u32, Vec<u8>)>> = clusters
            .iter()
            .flat_map(|cl| cl.iter().map(|col| col.pages.iter().map(|p| (p.num_elements, p.bytes.clone())).collect()))
            .collect();
        (pages, c.parked_elements(), most)
    };
    let (kept, none, high) = run(u64::MAX);
    let (parked, n, low) = run(16 << 10);
    assert_eq!(none, 0);
    assert!(n > 50_000, "{n} elements parked");
    assert!(kept.iter().map(Vec::len).sum::<usize>() > 30);
    assert!(parked == kept, "parking changed the pages");
    assert!(low * 3 < high, "page buffers in memory: {low} parked, {high} kept");
}
