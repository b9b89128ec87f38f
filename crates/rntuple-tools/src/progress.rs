//! Progress reporting and cancellation of long-running tools.
//!
//! The tools do not draw anything: they tell a [`Progress`] what they do and
//! ask it whether to stop. The one bar that draws it is
//! [`crate::term::Bar`]; the command line stops on Ctrl-C, the Python
//! bindings when Python has a pending `KeyboardInterrupt`.

use rntuple::format::Error;

/// Receives the progress of a long-running tool.
pub trait Progress: Send + Sync {
    /// A phase begins: `what` (e.g. `"merging"`), with `total` units of
    /// work; `unit` is `"B"` for bytes, else a plural noun (`"clusters"`).
    fn start(&self, what: &str, total: u64, unit: &str) {
        let _ = (what, total, unit);
    }
    /// `n` more units of the current phase are done.
    fn advance(&self, n: u64) {
        let _ = n;
    }
    /// The current phase is over.
    fn finish(&self) {}
    /// Polled between units of work; `true` makes the tool stop with
    /// [`interrupted`] (after cleaning up what it wrote).
    fn cancelled(&self) -> bool {
        false
    }
}

/// A [`Progress`] that shows nothing and never cancels.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// The error of a tool stopped by its [`Progress`]: an I/O error of kind
/// [`std::io::ErrorKind::Interrupted`].
pub fn interrupted(what: &str) -> Error {
    Error::io(what, std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"))
}

/// Whether `e` is the error of [`interrupted`].
pub fn is_interrupted(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::Interrupted)
}

/// Fails with [`interrupted`] when `progress` asks to stop.
pub(crate) fn check(progress: &dyn Progress, what: &str) -> rntuple::format::Result<()> {
    if progress.cancelled() {
        Err(interrupted(what))
    } else {
        Ok(())
    }
}
