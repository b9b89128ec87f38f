//! The `rntuple` command line: `ls`, `show`, `dump`.
//!
//! The same entry point serves the Rust binary and the Python console
//! script (which calls [`run`] through the extension module).

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};
use rntuple::{RNTupleFile, ReadOptions};

mod show;

pub use show::show as show_rntuple;

#[derive(Parser, Debug)]
#[command(name = "rntuple", version, about = "Inspect and read ROOT RNTuple files")]
struct Cli {
    /// Do not verify xxh3 checksums of anchor, envelopes and pages.
    #[arg(long, global = true)]
    no_verify: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the keys of a file with their classes.
    Ls { file: String },
    /// Show the schema, clusters and sizes of the RNTuples in FILE[:NAME].
    Show { target: String },
    /// Print entries as JSON, one object per line.
    Dump {
        /// FILE:NAME (NAME may be omitted when the file holds one RNTuple).
        target: String,
        /// Entry range A:B (either side may be omitted).
        #[arg(long)]
        entries: Option<String>,
        /// Top-level fields to print (default: all).
        #[arg(long, num_args = 1..)]
        fields: Vec<String>,
    },
}

/// Splits `FILE:NAME`; a colon that is part of an existing path is kept.
pub fn split_target(target: &str) -> (String, Option<String>) {
    if std::path::Path::new(target).exists() {
        return (target.to_string(), None);
    }
    match target.rsplit_once(':') {
        Some((f, n)) if !f.is_empty() => (f.to_string(), if n.is_empty() { None } else { Some(n.to_string()) }),
        _ => (target.to_string(), None),
    }
}

fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once(':').ok_or_else(|| format!("entry range '{s}' is not of the form A:B"))?;
    let a = if a.is_empty() { 0 } else { a.parse().map_err(|_| format!("bad entry start '{a}'"))? };
    let b = if b.is_empty() { u64::MAX } else { b.parse().map_err(|_| format!("bad entry stop '{b}'"))? };
    Ok((a, b))
}

fn pick_name(file: &RNTupleFile, name: Option<String>) -> Result<String, String> {
    if let Some(n) = name {
        return Ok(n);
    }
    let names = file.rntuple_names().map_err(|e| e.to_string())?;
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("the file holds no RNTuple".into()),
        many => Err(format!("the file holds several RNTuples ({}); name one as FILE:NAME", many.join(", "))),
    }
}

/// Marker message for a closed standard output (e.g. `rntuple dump ... | head`).
const BROKEN_PIPE: &str = "\u{0}broken pipe";

fn execute(cli: Cli, out: &mut dyn Write) -> Result<(), String> {
    let options = ReadOptions { verify_checksums: !cli.no_verify };
    let open = |path: &str| RNTupleFile::open_with(path, options).map_err(|e| format!("{path}: {e}"));
    let io = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            BROKEN_PIPE.to_string()
        } else {
            e.to_string()
        }
    };
    match cli.command {
        Command::Ls { file } => {
            let f = open(&file)?;
            for k in f.keys().map_err(|e| e.to_string())? {
                writeln!(out, "{:<40} {:<24} cycle {}", k.path, k.class_name, k.cycle).map_err(io)?;
            }
        }
        Command::Show { target } => {
            let (path, name) = split_target(&target);
            let f = open(&path)?;
            let names = match name {
                Some(n) => vec![n],
                None => f.rntuple_names().map_err(|e| e.to_string())?,
            };
            for n in names {
                let nt = f.rntuple(&n).map_err(|e| format!("{path}:{n}: {e}"))?;
                show::show(&nt, out).map_err(io)?;
            }
        }
        Command::Dump { target, entries, fields } => {
            let (path, name) = split_target(&target);
            let f = open(&path)?;
            let name = pick_name(&f, name)?;
            let nt = f.rntuple(&name).map_err(|e| format!("{path}:{name}: {e}"))?;
            let (start, stop) = match entries {
                Some(r) => parse_range(&r)?,
                None => (0, u64::MAX),
            };
            let names: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
            let sel = if names.is_empty() { None } else { Some(names.as_slice()) };
            let nodes: Vec<&rntuple::FieldNode> = match sel {
                None => nt.readable_fields(),
                Some(names) => names
                    .iter()
                    .map(|n| nt.schema().field(n).ok_or_else(|| format!("{path}:{name}: no field '{n}'")))
                    .collect::<Result<_, _>>()?,
            };
            for batch in nt.iter_batches(sel, 10_000, start, stop) {
                let batch = batch.map_err(|e| format!("{path}:{name}: {e}"))?;
                for line in rntuple::json::entry_lines(&nodes, &batch) {
                    writeln!(out, "{line}").map_err(io)?;
                }
            }
        }
    }
    Ok(())
}

/// Runs the command line; returns the process exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let r = execute(cli, &mut out);
    let flushed = out.flush();
    match (r, flushed) {
        (Err(msg), _) if msg == BROKEN_PIPE => 0,
        (Ok(()), Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        (Ok(()), Err(e)) => {
            eprintln!("rntuple: error: {e}");
            1
        }
        (Ok(()), Ok(())) => 0,
        (Err(msg), _) => {
            eprintln!("rntuple: error: {msg}");
            1
        }
    }
}
