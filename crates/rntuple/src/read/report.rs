//! The I/O report of one RNTuple handle, in the manner of XRootD's JCache
//! summary: what the reads asked for (the planner's figures, [`IoStats`])
//! next to what crossed the wire ([`TransportStats`] of the storage: single
//! and vectored requests, sub-ranges, bytes, retries, cache hits), with the
//! share of the file read, wall time and read rate.
//!
//! Printed to stderr once per handle when its last clone is dropped, when
//! `RNTUPLE_IO_REPORT=1` is set or a program asked for it
//! ([`set_io_report`], the CLI's `--io-report`).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rntuple_container::{RootFile, TransportStats};

use super::io::{IoCounters, IoStats};

/// The environment variable that turns the report on (`1`).
pub const IO_REPORT_ENV: &str = "RNTUPLE_IO_REPORT";

static FORCED: AtomicBool = AtomicBool::new(false);

/// Turns the report at the end of every RNTuple handle on or off for this
/// process, whatever [`IO_REPORT_ENV`] says.
pub fn set_io_report(on: bool) {
    FORCED.store(on, Ordering::Relaxed);
}

/// Whether reports are printed: [`set_io_report`] or `RNTUPLE_IO_REPORT=1`.
pub fn io_report_enabled() -> bool {
    FORCED.load(Ordering::Relaxed) || std::env::var(IO_REPORT_ENV).is_ok_and(|v| v.trim() == "1")
}

/// The I/O figures of one RNTuple handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoReport {
    /// The file (path or URL) and the RNTuple.
    pub location: String,
    pub name: String,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// What the reads asked the storage for.
    pub io: IoStats,
    /// What crossed the wire, for a storage that counts it (remote, cached);
    /// metadata read on open included.
    pub wire: Option<TransportStats>,
}

impl IoReport {
    /// Wall time spent in reads.
    pub fn wall_time(&self) -> Duration {
        Duration::from_nanos(self.io.read_nanos)
    }

    /// Bytes that came from the store: the wire's count, else those read.
    pub fn bytes_transferred(&self) -> u64 {
        self.wire.map_or(self.io.bytes_read, |w| w.bytes_transferred)
    }

    /// Mean bytes per request sent.
    pub fn average_request(&self) -> u64 {
        let requests = match self.wire {
            Some(w) if w.single_requests + w.sub_ranges > 0 => w.single_requests + w.sub_ranges,
            _ => self.io.requests,
        };
        self.bytes_transferred().checked_div(requests).unwrap_or(0)
    }

    /// Bytes read per second of wall time in reads.
    pub fn read_rate(&self) -> f64 {
        let secs = self.wall_time().as_secs_f64();
        if secs > 0.0 {
            self.io.bytes_read as f64 / secs
        } else {
            0.0
        }
    }
}

/// `n` bytes exactly, with a binary unit beside from 1 KiB on.
fn bytes(n: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    match units.iter().find(|(_, size)| n >= *size) {
        Some((unit, size)) => format!("{n} B ({:.1} {unit})", n as f64 / *size as f64),
        None => format!("{n} B"),
    }
}

impl fmt::Display for IoReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let io = &self.io;
        let location = rntuple_container::storage::redact_url(&self.location);
        writeln!(f, "rntuple I/O report: {location} ({})", self.name)?;
        writeln!(f, "  requests:     {} in {} vectored reads, {} pages", io.requests, io.vectored_calls, io.pages)?;
        if let Some(w) = &self.wire {
            writeln!(
                f,
                "  wire:         {} single, {} vectored ({} sub-ranges), {} retries",
                w.single_requests, w.vectored_requests, w.sub_ranges, w.retries
            )?;
        }
        writeln!(
            f,
            "  bytes:        {} needed, {} read, {} transferred",
            bytes(io.bytes_needed),
            bytes(io.bytes_read),
            bytes(self.bytes_transferred())
        )?;
        writeln!(f, "  avg request:  {}", bytes(self.average_request()))?;
        let share = if self.file_size > 0 { 100.0 * io.bytes_read as f64 / self.file_size as f64 } else { 0.0 };
        writeln!(f, "  file read:    {share:.2}% of {}", bytes(self.file_size))?;
        let (hits, hit_bytes) = self.wire.map_or((0, 0), |w| (w.cache_hits, w.cache_bytes));
        writeln!(f, "  cache hits:   {hits} ({})", bytes(hit_bytes))?;
        write!(f, "  wall time:    {:.3} s, {}/s", self.wall_time().as_secs_f64(), bytes(self.read_rate() as u64))
    }
}

/// Prints the report of a handle when its last clone is dropped (when
/// reports are on and pages were read or the storage is remote), or earlier through
/// [`Reporter::print`]; never twice.
#[derive(Debug)]
pub(crate) struct Reporter {
    pub file: Arc<RootFile>,
    pub io: Arc<IoCounters>,
    pub location: Arc<str>,
    pub name: String,
    printed: AtomicBool,
}

impl Reporter {
    pub(crate) fn new(file: Arc<RootFile>, io: Arc<IoCounters>, location: Arc<str>, name: String) -> Self {
        Self { file, io, location, name, printed: AtomicBool::new(false) }
    }

    pub(crate) fn report(&self) -> IoReport {
        IoReport {
            location: self.location.to_string(),
            name: self.name.clone(),
            file_size: self.file.size(),
            io: self.io.snapshot(),
            wire: self.file.storage().transport_stats(),
        }
    }

    /// Prints the report to stderr if reports are on, pages were read (or
    /// the storage is remote) and it was not printed yet.
    pub(crate) fn print(&self) {
        let report = self.report();
        let read = report.io.requests > 0 || report.wire.is_some();
        if read && io_report_enabled() && !self.printed.swap(true, Ordering::Relaxed) {
            eprintln!("{report}");
        }
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.print();
    }
}
