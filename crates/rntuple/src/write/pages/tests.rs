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

/// Many threads, tiny pages and a tiny queue (a small memory budget): the
/// filling thread seals waiting batches itself whenever the queue is full,
/// the threads seal the others, and the pages are those one thread seals,
/// in the same order, for every codec and without compression.
#[test]
fn tiny_pages_and_many_threads_give_the_pages_of_one_thread() {
    let run = |threads, compression| {
        let options = WriteOptions {
            compression,
            compression_threads: threads,
            initial_unzipped_page_size: 16,
            max_unzipped_page_size: 64,
            memory_budget: 64 << 10,
            ..Default::default()
        };
        let mut c = Columns::new(&[plan(), plan(), plan()], &options).unwrap();
        let values: Vec<f64> = (0..20_000).map(|i| ((i * 7) % 101) as f64).collect();
        let mut clusters = Vec::new();
        for (k, chunk) in values.chunks(37).enumerate() {
            c.push(k % 3, chunk).unwrap();
            assert!(c.queued_bytes <= c.shares.queue_limit + c.max_page_bytes + 8, "{}", c.queued_bytes);
            if k % 200 == 199 {
                clusters.push(c.finish_cluster().unwrap());
                c.cluster_written();
            }
        }
        clusters.push(c.finish_cluster().unwrap());
        let pages: Vec<Vec<(u32, u64, Vec<u8>)>> = clusters
            .iter()
            .flat_map(|cl| {
                cl.iter().map(|col| col.pages.iter().map(|p| (p.num_elements, p.data_size, p.bytes.clone())).collect())
            })
            .collect();
        (pages, c.pool.as_ref().map_or(0, |p| p.sealed_here))
    };
    let mut helped = 0;
    for compression in [505, 404, 0] {
        let (one, _) = run(1, compression);
        assert!(one.iter().map(Vec::len).sum::<usize>() > 2000, "{compression}");
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
