//! The Ctrl-C (SIGINT, SIGTERM) flag that long-running commands poll.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// SIGINT and SIGTERM set a flag instead of killing the process while this
/// lives (handlers installed before, e.g. Python's, still run); a second
/// signal kills it the default way. Dropping it removes the handlers.
#[derive(Debug)]
pub struct Interrupt {
    pub flag: Arc<AtomicBool>,
    ids: Vec<signal_hook::SigId>,
}

impl Interrupt {
    pub fn install() -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Registered twice: the first call makes a second signal terminate
            // the process (the flag is already set), the second sets the flag.
            if let Ok(id) = signal_hook::flag::register_conditional_default(sig, flag.clone()) {
                ids.push(id);
            }
            if let Ok(id) = signal_hook::flag::register(sig, flag.clone()) {
                ids.push(id);
            }
        }
        Self { flag, ids }
    }

    pub fn triggered(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
