//! A test hook that kills the writing process at a chosen point, so that
//! tests can show what a crash there leaves behind (docs/recover.md).
//!
//! `RNTUPLE_CRASH_AT=KIND:N` makes the process send itself `SIGKILL` at the
//! `N`th (1-based) event of `KIND`: `fill` (a batch appended), `compress`
//! (a page sealed for compression), `page` (inside an `RBlob` key, between
//! its header and its payload), `commit` (a cluster written, before its
//! journal record), `journal` (half of a journal record written), `footer`
//! (before an RNTuple's footer), `finish` (before the file header is
//! written) or `any` (events of every kind counted together). Unset, the
//! hook costs one load of an initialized cell per event.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable read once per process.
pub const CRASH_ENV: &str = "RNTUPLE_CRASH_AT";

/// The kinds of events the hook counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    Fill,
    Compress,
    Page,
    Commit,
    Journal,
    Footer,
    Finish,
}

impl CrashPoint {
    fn name(self) -> &'static str {
        match self {
            CrashPoint::Fill => "fill",
            CrashPoint::Compress => "compress",
            CrashPoint::Page => "page",
            CrashPoint::Commit => "commit",
            CrashPoint::Journal => "journal",
            CrashPoint::Footer => "footer",
            CrashPoint::Finish => "finish",
        }
    }
}

struct Target {
    kind: String,
    nth: u64,
    seen: AtomicU64,
}

fn target() -> &'static Option<Target> {
    static TARGET: OnceLock<Option<Target>> = OnceLock::new();
    TARGET.get_or_init(|| {
        let spec = std::env::var(CRASH_ENV).ok()?;
        let (kind, nth) = spec.split_once(':')?;
        Some(Target { kind: kind.to_string(), nth: nth.trim().parse().ok()?, seen: AtomicU64::new(0) })
    })
}

/// Counts an event of `kind`; kills the process when it is the chosen one.
#[doc(hidden)]
pub fn crash_point(kind: CrashPoint) {
    let Some(t) = target() else { return };
    if t.kind != kind.name() && t.kind != "any" {
        return;
    }
    if t.seen.fetch_add(1, Ordering::SeqCst) + 1 == t.nth {
        let pid = std::process::id().to_string();
        // SIGKILL, as a crash or the OOM killer: no destructor, no flush.
        let _ = std::process::Command::new("kill").args(["-KILL", &pid]).status();
        std::thread::sleep(std::time::Duration::from_secs(5));
        std::process::abort();
    }
}
