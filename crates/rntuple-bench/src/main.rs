//! `rntuple-bench`: our side of the benchmark driven by `bench/run.py`.
//! Every command prints one JSON object on stdout with the figures of its
//! timed section (wall and CPU seconds, resident memory after loading the
//! input) and, for reads, the value checksums of `checksum.rs`.
//!
//! ```text
//! rntuple-bench write --input DIR --output FILE [--compression 505] [--threads 1]
//! rntuple-bench read  --file FILE [--name Events] [--fields a,b,c] [--start A] [--stop B] [--threads 1]
//! rntuple-bench limit --file FILE [--name Events] [--compression 505,404] [--threads 1,2]
//! ```

mod checksum;
mod input;
mod limit;
mod usage;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rntuple::{RNTupleFile, ReadOptions, WriteOptions};
use serde_json::json;

use crate::checksum::Checksums;
use crate::usage::{heap_mark, peak_rss_bytes, rss_bytes, Stopwatch};

pub type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

#[derive(Debug, Parser)]
#[command(name = "rntuple-bench", about = "Benchmark runs of the rntuple crate (driven by bench/run.py)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Loads the neutral input, then writes it (timed) with `write_batches`.
    Write {
        #[arg(long)]
        input: PathBuf,
        #[arg(long)]
        output: PathBuf,
        /// RNTuple name (default: the manifest's).
        #[arg(long)]
        name: Option<String>,
        /// ROOT compression setting (505 = zstd level 5, 0 = none).
        #[arg(long, default_value_t = 505)]
        compression: u32,
        /// Compression threads (`WriteOptions::compression_threads`).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// `WriteOptions::memory_budget` in bytes (0: ROOT's sizing, no budget).
        #[arg(long, default_value_t = 0)]
        memory_budget: u64,
        /// `WriteOptions::page_buffer_memory` in bytes (0: the default).
        #[arg(long, default_value_t = 0)]
        page_buffer_memory: u64,
    },
    /// Opens a file and reads fields over an entry range (timed), then
    /// checksums the values (also timed: every value is touched once).
    Read {
        #[arg(long)]
        file: PathBuf,
        #[arg(long, default_value = "Events")]
        name: String,
        /// Comma-separated top-level fields (default: all).
        #[arg(long, value_delimiter = ',')]
        fields: Option<Vec<String>>,
        #[arg(long, default_value_t = 0)]
        start: u64,
        #[arg(long)]
        stop: Option<u64>,
        /// Reader threads (`ReadOptions::threads`).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Entries per `read` call (0: one call for the whole range).
        #[arg(long, default_value_t = 0)]
        step: u64,
    },
    /// Codec-alone compression / decompression time of a file's pages.
    Limit {
        #[arg(long)]
        file: String,
        #[arg(long, default_value = "Events")]
        name: String,
        #[arg(long, value_delimiter = ',', default_value = "505")]
        compression: Vec<u32>,
        #[arg(long, value_delimiter = ',', default_value = "1")]
        threads: Vec<usize>,
    },
}

/// Reader options for `threads` threads (checksums verified, as by default).
fn read_options(threads: usize) -> ReadOptions {
    ReadOptions::default().with_threads(threads.max(1))
}

fn write(
    input: PathBuf,
    output: PathBuf,
    name: Option<String>,
    compression: u32,
    threads: usize,
    memory_budget: u64,
    page_buffer_memory: u64,
) -> BenchResult<()> {
    let data = input::load_input(&input)?;
    let rss_after_load = rss_bytes()?;
    let name = name.unwrap_or(data.ntuple.clone());
    let options = WriteOptions {
        compression,
        compression_threads: threads.max(1),
        memory_budget,
        page_buffer_memory,
        ..WriteOptions::default()
    };
    let entries = data.entries;
    heap_mark()?; // the heap counter's phase of the timed section starts (no-op without it)
    let sw = Stopwatch::start()?;
    rntuple::write_batches(&output, &name, [data.batch], &HashMap::new(), options)?;
    let (wall, cpu) = sw.elapsed()?;
    heap_mark()?;
    let out = json!({
        "wall": wall,
        "cpu": cpu,
        "rss_after_load": rss_after_load,
        "peak_rss_self": peak_rss_bytes()?,
        "entries": entries,
        "input_bytes": data.raw_bytes,
        "file_size": std::fs::metadata(&output)?.len(),
        "threads": threads,
    });
    println!("{out}");
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn read(
    file: PathBuf,
    name: String,
    fields: Option<Vec<String>>,
    start: u64,
    stop: Option<u64>,
    threads: usize,
    step: u64,
) -> BenchResult<()> {
    let rss_after_load = rss_bytes()?;
    let options = read_options(threads);
    let names: Option<Vec<&str>> = fields.as_ref().map(|f| f.iter().map(String::as_str).collect());
    let sw = Stopwatch::start()?;
    let f = RNTupleFile::open_with(&file, options)?;
    let ntuple = f.rntuple(&name)?;
    let (open_wall, open_cpu) = sw.elapsed()?;
    let stop = stop.unwrap_or(u64::MAX).min(ntuple.num_entries());
    let mut sums = Checksums::default();
    let mut entries = 0u64;
    let step = if step == 0 { stop.saturating_sub(start).max(1) } else { step };
    let mut checksum_wall = 0.0;
    for batch in ntuple.iter_batches(names.as_deref(), step, start, stop) {
        let batch = batch?;
        entries += batch.num_rows() as u64;
        let t = std::time::Instant::now();
        sums.add_batch(&batch)?;
        checksum_wall += t.elapsed().as_secs_f64();
    }
    let (wall, cpu) = sw.elapsed()?;
    let io = ntuple.io_stats();
    let out = json!({
        "wall": wall,
        "cpu": cpu,
        "open_wall": open_wall,
        "open_cpu": open_cpu,
        "checksum_wall": checksum_wall,
        "rss_after_load": rss_after_load,
        "peak_rss_self": peak_rss_bytes()?,
        "entries": entries,
        "threads": threads,
        "io": {
            "requests": io.requests,
            "bytes_read": io.bytes_read,
            "bytes_needed": io.bytes_needed,
            "pages": io.pages,
        },
        "checksum": sums.to_json(),
    });
    println!("{out}");
    Ok(())
}

fn limit(file: String, name: String, compression: Vec<u32>, threads: Vec<usize>) -> BenchResult<()> {
    let pages = limit::collect_pages(&file, &name)?;
    let mut runs = Vec::new();
    for &setting in &compression {
        for &t in &threads {
            let l = limit::measure(&pages, setting, t)?;
            runs.push(json!({
                "compression": setting,
                "threads": t,
                "pages": l.pages,
                "uncompressed_bytes": l.uncompressed_bytes,
                "compressed_bytes": l.compressed_bytes,
                "compress_wall": l.compress_wall,
                "compress_cpu": l.compress_cpu,
                "decompress_wall": l.decompress_wall,
                "decompress_cpu": l.decompress_cpu,
            }));
        }
    }
    println!("{}", json!({ "limits": runs }));
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Write { input, output, name, compression, threads, memory_budget, page_buffer_memory } => {
            write(input, output, name, compression, threads, memory_budget, page_buffer_memory)
        }
        Command::Read { file, name, fields, start, stop, threads, step } => {
            read(file, name, fields, start, stop, threads, step)
        }
        Command::Limit { file, name, compression, threads } => limit(file, name, compression, threads),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rntuple-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
