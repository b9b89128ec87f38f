//! Terminal helpers shared by the `rntuple` command and the Python package:
//! the one progress bar ([`Bar`]), the text of `rntuple show` ([`show`]),
//! and, with the `cli` feature, the Ctrl-C flag of long-running commands
//! ([`Interrupt`]).
//!
//! They live here, below both the command line and the Python bindings, so
//! that neither depends on the other.

mod bar;
#[cfg(feature = "cli")]
mod interrupt;
mod show;

pub use bar::{Bar, Finish, When};
#[cfg(feature = "cli")]
pub use interrupt::Interrupt;
pub use show::{fit, show, show_with, ShowOptions};

/// The width `rntuple show` and `rntuple inspect` fit their lines to unless `--wide`.
pub const WIDTH: usize = 100;
