//! [`Bar`]: the one progress bar of the project, a line on standard error.
//!
//! ```text
//! merging [=============>              ]  48%  1.20 GB/2.50 GB  310 MB/s  ETA 0:04
//! out.root [===========================>] 100%  1,500,000/1,500,000 entries  2.1M entries/s
//! ```
//!
//! The command line draws it for `verify` and `merge` (cleared when a phase
//! ends); the Python package draws it for `convert` and `draw` (the last line
//! is kept), through the extension module.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::units::{bytes, count};
use crate::Progress;

/// Redraw at most this often.
const TICK: Duration = Duration::from_millis(100);
/// Characters of the bar itself.
const WIDTH: usize = 28;
/// Longest label; longer ones keep their end ("...d/out.root").
const MAX_LABEL: usize = 24;

/// When a [`Bar`] draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Never,
    /// Only when standard error is a terminal (output piped into a file or
    /// another program stays clean).
    Terminal,
    Always,
}

/// What a finished phase leaves on standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// Nothing: the line is cleared (the command prints its own summary).
    Clear,
    /// The final state of the bar, ended by a newline.
    Keep,
}

#[derive(Debug)]
struct State {
    what: String,
    unit: String,
    total: u64,
    done: u64,
    started: Instant,
    drawn: Option<Instant>,
}

/// A progress bar on standard error (see [`When`] and [`Finish`]); stops
/// the tool it observes once `interrupt` is set (Ctrl-C).
#[derive(Debug)]
pub struct Bar {
    show: bool,
    finish: Finish,
    state: Mutex<State>,
    interrupt: Option<Arc<AtomicBool>>,
}

impl Bar {
    /// A bar that draws `when` asked and clears its line at the end of a phase.
    pub fn new(when: When, interrupt: Option<Arc<AtomicBool>>) -> Self {
        let show = match when {
            When::Never => false,
            When::Terminal => std::io::stderr().is_terminal(),
            When::Always => true,
        };
        let state =
            State { what: String::new(), unit: String::new(), total: 0, done: 0, started: Instant::now(), drawn: None };
        Self { show, finish: Finish::Clear, state: Mutex::new(state), interrupt }
    }

    /// This bar with `finish` as what a finished phase leaves.
    pub fn with_finish(mut self, finish: Finish) -> Self {
        self.finish = finish;
        self
    }

    /// Whether the bar draws at all.
    pub fn shows(&self) -> bool {
        self.show
    }

    fn draw(&self, s: &mut State, force: bool) {
        let now = Instant::now();
        if !force && s.drawn.is_some_and(|t| now.duration_since(t) < TICK) {
            return;
        }
        s.drawn = Some(now);
        let text = line(&s.what, &s.unit, s.done, s.total, now.duration_since(s.started).as_secs_f64());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{text}");
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
        let Ok(mut s) = self.state.lock() else { return };
        if !self.show || (s.drawn.is_none() && s.done == 0) {
            return;
        }
        match self.finish {
            Finish::Keep => {
                self.draw(&mut s, true);
                let _ = writeln!(std::io::stderr());
            }
            Finish::Clear => {
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K");
                let _ = err.flush();
            }
        }
        s.drawn = None;
        s.done = 0;
    }

    fn cancelled(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// The text of the bar: `what`, `done` of `total` units after `secs` seconds.
fn line(what: &str, unit: &str, done: u64, total: u64, secs: f64) -> String {
    let total = total.max(done);
    let frac = if total == 0 { 1.0 } else { done as f64 / total as f64 };
    let filled = (frac * WIDTH as f64) as usize;
    let bar: String = (0..WIDTH)
        .map(|i| match i.cmp(&filled) {
            std::cmp::Ordering::Less => '=',
            std::cmp::Ordering::Equal => '>',
            std::cmp::Ordering::Greater => ' ',
        })
        .collect();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    let (amount, speed) = if unit == "B" {
        (format!("{}/{}", bytes(done), bytes(total)), format!("{}/s", bytes(rate as u64)))
    } else {
        (format!("{}/{} {unit}", count(done), count(total)), format!("{} {unit}/s", si(rate)))
    };
    let eta = if rate > 0.0 && done < total && secs >= 1.0 {
        format!("  ETA {}", duration((total - done) as f64 / rate))
    } else {
        String::new()
    };
    format!("{} [{bar}] {:>3.0}%  {amount}  {speed}{eta}", label(what), frac * 100.0)
}

/// `what`, cut to its last characters when longer than [`MAX_LABEL`].
fn label(what: &str) -> String {
    let n = what.chars().count();
    if n <= MAX_LABEL {
        return what.to_string();
    }
    let tail: String = what.chars().skip(n - (MAX_LABEL - 3)).collect();
    format!("...{tail}")
}

/// A rate with an SI prefix: `"812"`, `"45.6k"`, `"2.1M"`.
fn si(x: f64) -> String {
    for (unit, scale) in [("G", 1e9), ("M", 1e6), ("k", 1e3)] {
        if x >= scale {
            return format!("{:.1}{unit}", x / scale);
        }
    }
    format!("{x:.0}")
}

/// Seconds as `m:ss` or `h:mm:ss`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_for_counts_and_bytes() {
        assert_eq!(
            line("out.root", "entries", 1500, 1500, 2.0),
            "out.root [============================] 100%  1,500/1,500 entries  750 entries/s"
        );
        assert_eq!(
            line("merging", "B", 1_000_000, 4_000_000, 2.0),
            "merging [=======>                    ]  25%  1.00 MB/4.00 MB  500 kB/s  ETA 0:06"
        );
        // Nothing to do is done; more done than announced counts as the total.
        assert!(line("x", "clusters", 0, 0, 0.0).contains("100%  0/0 clusters"));
        assert!(line("x", "clusters", 5, 3, 1.0).contains("100%  5/5 clusters"));
        assert_eq!(si(2_100_000.0), "2.1M");
        assert_eq!(duration(3725.0), "1:02:05");
        assert_eq!(label("/a/very/long/directory/name/out.root"), "...rectory/name/out.root");
        assert_eq!(label("é".repeat(30).as_str()).chars().count(), MAX_LABEL);
    }

    #[test]
    fn a_hidden_bar_still_counts_and_cancels() {
        let flag = Arc::new(AtomicBool::new(false));
        let bar = Bar::new(When::Never, Some(flag.clone()));
        assert!(!bar.shows() && !bar.cancelled());
        bar.start("verifying", 10, "pages");
        bar.advance(4);
        assert_eq!(bar.state.lock().map(|s| s.done).unwrap_or(0), 4);
        flag.store(true, Ordering::Relaxed);
        assert!(bar.cancelled());
        assert!(Bar::new(When::Always, None).shows());
    }
}
