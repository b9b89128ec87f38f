//! Usage errors in one format for every subcommand, Rust's and Python's:
//! the format of Python's argparse, which the Python subcommands had before
//! they joined the registry (and which their users and tests know):
//!
//! ```text
//! usage: rntuple draw [OPTIONS] --output <PNG> <FILE[:NAME]> <EXPR>
//! rntuple draw: error: the following arguments are required: --output/-o
//! ```

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Command;

/// The usage line of `rntuple SUBCOMMAND` (or of `rntuple`), without its
/// `Usage:` heading.
pub(crate) fn usage_of(root: &mut Command, sub: Option<&str>) -> String {
    root.build();
    let styled = match sub.and_then(|name| root.find_subcommand_mut(name)) {
        Some(s) => s.render_usage(),
        None => root.render_usage(),
    };
    strip_heading(&styled.to_string())
}

fn strip_heading(usage: &str) -> String {
    let text = usage.trim();
    text.strip_prefix("Usage:").unwrap_or(text).trim().to_string()
}

/// The full text of a usage error: the usage line, then `PROG: error: MESSAGE`.
pub(crate) fn format(usage: &str, prog: &str, message: &str) -> String {
    format!("usage: {usage}\n{prog}: error: {message}\n")
}

/// Renders a parse error of `clap` in the argparse format. `sub` is the
/// subcommand being parsed, when the command line names one.
pub(crate) fn render(err: &clap::Error, root: &mut Command, sub: Option<&str>) -> String {
    let usage = match err.get(ContextKind::Usage) {
        Some(ContextValue::StyledStr(u)) => strip_heading(&u.to_string()),
        _ => usage_of(root, sub),
    };
    let prog = match sub {
        Some(s) => format!("rntuple {s}"),
        None => "rntuple".to_string(),
    };
    let cmd = sub.and_then(|s| root.find_subcommand(s)).unwrap_or(root);
    format(&usage, &prog, &message(err, cmd))
}

fn string(err: &clap::Error, kind: ContextKind) -> Option<String> {
    match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    }
}

fn strings(err: &clap::Error, kind: ContextKind) -> Vec<String> {
    match err.get(kind) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn number(err: &clap::Error, kind: ContextKind) -> Option<isize> {
    match err.get(kind) {
        Some(ContextValue::Number(n)) => Some(*n),
        _ => None,
    }
}

/// The message of `err` as argparse words it.
fn message(err: &clap::Error, cmd: &Command) -> String {
    let arg = || string(err, ContextKind::InvalidArg).map(|a| display_arg(cmd, &a)).unwrap_or_default();
    let value = || string(err, ContextKind::InvalidValue).unwrap_or_default();
    let words = match err.kind() {
        ErrorKind::MissingRequiredArgument => {
            let mut missing: Vec<String> = strings(err, ContextKind::InvalidArg);
            // Positionals first, as argparse lists them.
            missing.sort_by_key(|a| a.starts_with('-'));
            let names: Vec<String> = missing.iter().map(|a| display_arg(cmd, a)).collect();
            Some(format!("the following arguments are required: {}", names.join(", ")))
        }
        ErrorKind::UnknownArgument => {
            string(err, ContextKind::InvalidArg).map(|a| format!("unrecognized arguments: {a}"))
        }
        ErrorKind::InvalidValue => {
            let valid = strings(err, ContextKind::ValidValue);
            let choose = if valid.is_empty() {
                String::new()
            } else {
                format!(" (choose from {})", valid.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", "))
            };
            Some(if value().is_empty() {
                format!("argument {}: expected one argument", arg())
            } else {
                format!("argument {}: invalid choice: '{}'{choose}", arg(), value())
            })
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(err).map(|e| e.to_string()).unwrap_or_default();
            Some(format!("argument {}: {why}", arg()))
        }
        ErrorKind::WrongNumberOfValues | ErrorKind::TooFewValues => {
            let n = number(err, ContextKind::ExpectedNumValues).or_else(|| number(err, ContextKind::MinValues));
            n.map(|n| format!("argument {}: expected {n} argument{}", arg(), if n == 1 { "" } else { "s" }))
        }
        ErrorKind::TooManyValues => Some(format!("unrecognized arguments: {}", value())),
        ErrorKind::InvalidSubcommand => string(err, ContextKind::InvalidSubcommand).map(|s| {
            let valid: Vec<String> = cmd.get_subcommands().map(|c| format!("'{}'", c.get_name())).collect();
            format!("argument command: invalid choice: '{s}' (choose from {})", valid.join(", "))
        }),
        ErrorKind::ArgumentConflict => {
            let prior = strings(err, ContextKind::PriorArg);
            let others: Vec<String> = prior.iter().map(|a| display_arg(cmd, a)).collect();
            Some(format!("argument {}: not allowed with argument {}", arg(), others.join(", ")))
        }
        ErrorKind::NoEquals => Some(format!("argument {}: expected '=' and a value", arg())),
        _ => None,
    };
    words.unwrap_or_else(|| {
        // Anything else: clap's own first line, without its "error: ".
        let text = err.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        first.strip_prefix("error: ").unwrap_or(first).to_string()
    })
}

/// An argument as argparse names it: `EXPR` for a positional (clap renders
/// `<EXPR>` or `<EXPR>...`), `--output/-o` for an option (`--output <PNG>`).
fn display_arg(cmd: &Command, rendered: &str) -> String {
    let first = rendered.split_whitespace().next().unwrap_or(rendered);
    if let Some(long) = first.strip_prefix("--") {
        let long = long.split('=').next().unwrap_or(long);
        let short = cmd.get_arguments().find(|a| a.get_long() == Some(long)).and_then(|a| a.get_short());
        return match short {
            Some(s) => format!("--{long}/-{s}"),
            None => format!("--{long}"),
        };
    }
    first.trim_end_matches("...").trim_start_matches('<').trim_end_matches('>').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::registry::command;

    fn error_of(args: &[&str]) -> String {
        let mut root = command();
        let err = root.clone().try_get_matches_from(args).expect_err("a usage error");
        let argv: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let sub = crate::cli::subcommand_named(&root, &argv);
        render(&err, &mut root, sub.as_deref())
    }

    #[test]
    fn argparse_wording() {
        let e = error_of(&["rntuple", "draw", "f.root"]);
        assert!(e.starts_with("usage: rntuple draw "), "{e}");
        assert!(e.contains("\nrntuple draw: error: the following arguments are required: EXPR, --output/-o\n"), "{e}");
        let e = error_of(&["rntuple", "convert", "a.root", "b.root", "--bogus"]);
        assert!(e.contains("rntuple convert: error: unrecognized arguments: --bogus"), "{e}");
        let e = error_of(&["rntuple", "draw", "f", "x", "-o", "x.png", "--bins", "0"]);
        assert!(e.contains("error: argument --bins: must be at least 1, not 0"), "{e}");
        let e = error_of(&["rntuple", "draw", "f", "x", "-o", "x.png", "--range", "1"]);
        assert!(e.contains("error: argument --range: expected 2 arguments"), "{e}");
        let e = error_of(&["rntuple", "merge", "out.root", "in.root", "--mode", "sideways"]);
        assert!(
            e.contains("argument --mode: invalid choice: 'sideways' (choose from 'strict', 'union', 'filter')"),
            "{e}"
        );
        let e = error_of(&["rntuple", "merge"]);
        assert!(e.contains("the following arguments are required: OUT, INPUTS"), "{e}");
        let e = error_of(&["rntuple", "frobnicate"]);
        assert!(e.contains("rntuple: error: argument command: invalid choice: 'frobnicate' (choose from 'ls'"), "{e}");
    }
}
