//! The `rntuple` command line: `ls`, `show`, `dump`, `inspect`, `verify`,
//! `merge` (`convert` and `draw` come with the Python package).
//!
//! The same entry point serves the Rust binary and the Python console
//! script (which calls [`run`] through the extension module and handles
//! `convert` and `draw` itself).
//!
//! Exit status: 0 on success, 1 on failure (for `verify`: a problem found),
//! 2 for usage errors, 130 when interrupted (Ctrl-C).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use rntuple::{RNTupleFile, ReadOptions};

pub mod progress;
mod show;
mod tools;

pub use show::show as show_rntuple;

#[derive(Parser, Debug)]
#[command(name = "rntuple", version, about = "Inspect, read, verify and merge ROOT RNTuple files")]
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
    /// Where the bytes go: sizes, compression and pages per field and column,
    /// clusters, envelopes (of every RNTuple in FILE, or of NAME).
    Inspect {
        /// FILE or FILE:NAME.
        target: String,
        /// Print the report as JSON (schema in docs/tools.md).
        #[arg(long)]
        json: bool,
        /// Rows of the field, column and cluster tables (0: all).
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
    /// Read every envelope and page and check every checksum and structural
    /// invariant; exit status 0 only when every file passes.
    Verify {
        /// Files to check.
        #[arg(required = true)]
        files: Vec<String>,
        /// Print the reports as JSON.
        #[arg(long)]
        json: bool,
        /// Print only problems (and no progress bar).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Concatenate the RNTuples of one name from several files into OUT;
    /// compressed pages are copied as they are when the compression agrees.
    Merge {
        /// The new file.
        out: PathBuf,
        /// Input files, merged in this order.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The RNTuple to merge (default: the only one of the first input).
        #[arg(long)]
        name: Option<String>,
        /// How inputs with different fields are merged: strict (identical
        /// top-level fields), union (all fields; missing values are defaults),
        /// filter (the first input's fields).
        #[arg(long, default_value = "strict", value_parser = ["strict", "union", "filter"])]
        mode: String,
        /// Output compression: a setting (505) or NAME[:LEVEL] (zstd, zlib,
        /// lzma, lz4, none); default: the first input's. Pages with another
        /// setting are recompressed.
        #[arg(long, visible_alias = "recompress", value_name = "SETTING")]
        compression: Option<String>,
        /// Replace OUT if it exists.
        #[arg(long, short)]
        force: bool,
        /// Threads that recompress pages (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// fsync the output before it is renamed into place.
        #[arg(long)]
        sync: bool,
        /// No summary and no progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Convert TTree or Parquet files to RNTuple (Python package only).
    #[command(disable_help_flag = true)]
    Convert {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Histogram a field into a PNG (Python package only).
    #[command(disable_help_flag = true)]
    Draw {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
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

/// Why a command did not succeed: its exit status and what to print.
#[derive(Debug)]
pub(crate) struct Failure {
    status: i32,
    message: Option<String>,
}

impl Failure {
    pub(crate) fn error(message: String) -> Self {
        Self { status: 1, message: Some(message) }
    }
    pub(crate) fn usage(message: String) -> Self {
        Self { status: 2, message: Some(message) }
    }
    pub(crate) fn silent(status: i32) -> Self {
        Self { status, message: None }
    }
    pub(crate) fn interrupted(what: &str) -> Self {
        Self { status: 130, message: Some(format!("{what} interrupted; nothing was written")) }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::error(message)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // A closed standard output (e.g. `rntuple dump ... | head`) ends the command quietly.
            Self::silent(0)
        } else {
            Self::error(e.to_string())
        }
    }
}

fn python_only(command: &str) -> Failure {
    Failure::usage(format!(
        "'rntuple {command}' comes with the Python package: install it (pip install ./crates/rntuple-python) \
         and run 'rntuple {command} ...' or 'python -m rntuple {command} ...'"
    ))
}

fn execute(cli: Cli, out: &mut dyn Write) -> Result<(), Failure> {
    let options = ReadOptions { verify_checksums: !cli.no_verify, ..Default::default() };
    let open = |path: &str| RNTupleFile::open_with(path, options).map_err(|e| format!("{path}: {e}"));
    match cli.command {
        Command::Ls { file } => {
            let f = open(&file)?;
            for k in f.keys().map_err(|e| e.to_string())? {
                writeln!(out, "{:<40} {:<24} cycle {}", k.path, k.class_name, k.cycle)?;
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
                show::show(&nt, out)?;
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
                    writeln!(out, "{line}")?;
                }
            }
        }
        Command::Inspect { target, json, top } => tools::inspect(&target, json, top, !cli.no_verify, out)?,
        Command::Verify { files, json, quiet } => {
            if cli.no_verify {
                return Err(Failure::usage("verify always checks checksums; --no-verify does not apply".into()));
            }
            tools::verify(&files, json, quiet, out)?
        }
        Command::Merge { out: output, inputs, name, mode, compression, force, threads, sync, quiet } => {
            let args = tools::MergeArgs {
                out: output,
                inputs,
                name,
                mode,
                compression,
                force,
                threads,
                sync,
                quiet,
                verify: !cli.no_verify,
            };
            tools::merge_files(args, out)?
        }
        Command::Convert { .. } => return Err(python_only("convert")),
        Command::Draw { .. } => return Err(python_only("draw")),
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
    let flushed = out.flush().map_err(Failure::from);
    let failure = match (r, flushed) {
        (Err(f), _) => Some(f),
        (Ok(()), Err(f)) => Some(f),
        (Ok(()), Ok(())) => None,
    };
    match failure {
        None => 0,
        Some(Failure { status, message }) => {
            if let Some(m) = message {
                eprintln!("rntuple: error: {m}");
            }
            status
        }
    }
}
