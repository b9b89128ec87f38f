//! A progress bar on standard error (only when it is a terminal) and the
//! Ctrl-C (SIGINT, SIGTERM) flag that long-running commands poll.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rntuple_tools::units::{bytes, count};
use rntuple_tools::Progress;

/// Redraw at most this often.
const TICK: Duration = Duration::from_millis(100);
const WIDTH: usize = 28;

struct State {
    what: String,
    unit: String,
    total: u64,
    done: u64,
    started: Instant,
    drawn: Option<Instant>,
}

/// Draws a one-line bar on standard error when it is a terminal and `show`
/// is set; stops the command when [`Interrupt`] has been triggered.
pub struct Bar {
    show: bool,
    state: Mutex<State>,
    interrupt: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for Bar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bar").field("show", &self.show).finish()
    }
}

impl Bar {
    pub fn new(show: bool, interrupt: Option<Arc<AtomicBool>>) -> Self {
        Self {
            show: show && std::io::stderr().is_terminal(),
            state: Mutex::new(State {
                what: String::new(),
                unit: String::new(),
                total: 0,
                done: 0,
                started: Instant::now(),
                drawn: None,
            }),
            interrupt,
        }
    }

    fn draw(&self, s: &mut State, last: bool) {
        let now = Instant::now();
        if !last && s.drawn.is_some_and(|t| now.duration_since(t) < TICK) {
            return;
        }
        s.drawn = Some(now);
        let frac = if s.total == 0 { 1.0 } else { (s.done as f64 / s.total as f64).min(1.0) };
        let filled = (frac * WIDTH as f64) as usize;
        let bar: String = (0..WIDTH)
            .map(|i| {
                if i < filled {
                    '='
                } else if i == filled {
                    '>'
                } else {
                    ' '
                }
            })
            .collect();
        let secs = now.duration_since(s.started).as_secs_f64();
        let amount = if s.unit == "B" {
            let rate = if secs > 0.0 { format!("  {}/s", bytes((s.done as f64 / secs) as u64)) } else { String::new() };
            format!("{} / {}{rate}", bytes(s.done), bytes(s.total))
        } else {
            format!("{} / {} {}", count(s.done), count(s.total), s.unit)
        };
        let eta = if frac > 0.0 && frac < 1.0 && secs > 1.0 {
            format!("  ETA {:.0}s", secs / frac - secs)
        } else {
            String::new()
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{} [{bar}] {:>3.0}% {amount}{eta}", s.what, frac * 100.0);
        if last {
            let _ = write!(err, "\r\x1b[K");
        }
        let _ = err.flush();
    }
}

impl Progress for Bar {
    fn start(&self, what: &str, total: u64, unit: &str) {
        if let Ok(mut s) = self.state.lock() {
            *s = State {
                what: what.to_string(),
                unit: unit.to_string(),
                total,
                done: 0,
                started: Instant::now(),
                drawn: None,
            };
            if self.show {
                self.draw(&mut s, false);
            }
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(mut s) = self.state.lock() {
            s.done = s.done.saturating_add(n);
            if self.show {
                self.draw(&mut s, false);
            }
        }
    }

    fn finish(&self) {
        if self.show {
            if let Ok(mut s) = self.state.lock() {
                self.draw(&mut s, true);
            }
        }
    }

    fn cancelled(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

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
