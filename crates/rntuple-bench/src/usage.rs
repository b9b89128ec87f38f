//! Resource figures of this process: CPU time (user + system, all threads)
//! and resident memory, as the harness (`bench/run.py`) expects them.

use std::time::Instant;

use nix::sys::resource::{getrusage, UsageWho};

use crate::BenchResult;

/// User + system CPU seconds of this process so far (all threads).
pub fn cpu_seconds() -> BenchResult<f64> {
    let u = getrusage(UsageWho::RUSAGE_SELF)?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    Ok(secs(u.user_time()) + secs(u.system_time()))
}

/// A figure of `/proc/self/status` in bytes (`key`: "VmRSS:", "VmHWM:").
fn status_bytes(key: &str) -> BenchResult<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    for line in status.lines() {
        if let Some(rest) = line.strip_prefix(key) {
            let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse()?;
            return Ok(kib * 1024);
        }
    }
    Err(format!("no {key} line in /proc/self/status").into())
}

/// Current resident set size in bytes.
pub fn rss_bytes() -> BenchResult<u64> {
    status_bytes("VmRSS:")
}

/// Peak resident set size of this program in bytes. (The rusage the harness
/// gets from `wait4` would include the harness's own peak: Linux carries the
/// pre-exec high-water mark over `exec`, and Python spawns with `vfork`.)
pub fn peak_rss_bytes() -> BenchResult<u64> {
    status_bytes("VmHWM:")
}

/// Wall-clock and CPU time of a timed section.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    wall: Instant,
    cpu: f64,
}

impl Stopwatch {
    pub fn start() -> BenchResult<Self> {
        Ok(Stopwatch { wall: Instant::now(), cpu: cpu_seconds()? })
    }

    /// `(wall seconds, cpu seconds)` since [`Stopwatch::start`].
    pub fn elapsed(&self) -> BenchResult<(f64, f64)> {
        Ok((self.wall.elapsed().as_secs_f64(), cpu_seconds()? - self.cpu))
    }
}

/// Marks a phase boundary for the heap counter of the benchmark
/// (`bench/heapcount.c`, loaded with `LD_PRELOAD` when `HEAPCOUNT_OUT` is
/// set): SIGUSR1 makes it write the figures of the phase that ends. Without
/// the counter (no `HEAPCOUNT_OUT`) nothing is sent: SIGUSR1 would end the
/// process.
pub fn heap_mark() -> BenchResult<()> {
    if std::env::var_os("HEAPCOUNT_OUT").is_some_and(|v| !v.is_empty()) {
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGUSR1)?;
    }
    Ok(())
}
