//! The subcommands of `rntuple` and their arguments: the one definition,
//! shared by the Rust binary and the Python package's console script.
//!
//! `convert`, `draw`, `browse` and `study` are implemented in Python (they use uproot,
//! pyarrow, matplotlib and `http.server`) but defined here like the others: the Python entry point
//! asks [`super::dispatch`] to parse the command line and receives their
//! parsed arguments ([`super::PythonCommand`]). Their values whose meaning
//! belongs to the Python package (compression names, memory sizes) are
//! checked there and reported as usage errors in the same format.

use clap::{Args, CommandFactory, Parser, Subcommand};

/// `usage:` in lower case in every help text, as in the usage errors
/// ([`super::usage`]), which follow Python's argparse.
const HELP_TEMPLATE: &str = "{before-help}{about-with-newline}\nusage: {usage}\n\n{all-args}{after-help}";

#[derive(Parser, Debug)]
#[command(
    name = "rntuple",
    version,
    about = "Inspect, read, verify, merge, convert and draw ROOT RNTuple files",
    arg_required_else_help = true
)]
pub(crate) struct Cli {
    /// Do not verify xxh3 checksums of anchor, envelopes and pages.
    #[arg(long, global = true)]
    pub no_verify: bool,
    /// Print an I/O report (requests, bytes, cache hits, time) to stderr at the end.
    #[arg(long, global = true)]
    pub io_report: bool,
    /// Keep the bytes read from remote files in the cache directory DIR.
    #[arg(long, global = true, value_name = "DIR")]
    pub cache: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// List the keys of a file with their classes.
    Ls { file: String },
    /// Show the schema, clusters and sizes of the RNTuples in FILE[:NAME].
    Show {
        /// FILE or FILE:NAME.
        target: String,
        /// Top-level fields listed in the schema, with their subfields (0: all).
        #[arg(long, default_value_t = 0, value_name = "N")]
        max_fields: usize,
        /// Print lines whole (by default they are cut at 100 characters, ending in '…').
        #[arg(long)]
        wide: bool,
    },
    /// Print entries as JSON, one object per line.
    Dump {
        /// FILE:NAME (NAME may be omitted when the file holds one RNTuple).
        target: String,
        /// Entry range A:B, like a Python slice (either side may be omitted; negative counts from the end).
        #[arg(long, value_name = "A:B", value_parser = slice, allow_hyphen_values = true)]
        entries: Option<Slice>,
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
        /// Print the tables whole (by default long names and types are cut, ending in '…',
        /// so that a line fits 100 characters).
        #[arg(long)]
        wide: bool,
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
    Merge(MergeArgs),
    /// Complete a file whose writer died with every cluster it committed.
    #[command(
        long_about = "Rebuild a valid file from one whose writer died (killed, out of memory, disk full) with \
                      every cluster it had committed, from the journal the writer keeps beside it \
                      (BROKEN.rntuple-journal). Every envelope and page kept passes its checksum; the first \
                      cluster that does not ends its RNTuple. Without OUT only reports what would be kept. \
                      Exit status 0 when the file is complete or was recovered, 1 when nothing can be recovered.",
        after_help = "examples:\n  rntuple recover crashed.root\n  rntuple recover crashed.root recovered.root"
    )]
    Recover(RecoverArgs),
    /// Convert TTrees or Parquet files to an RNTuple, or an RNTuple to Parquet.
    #[command(
        long_about = "Convert TTrees (read with uproot) or Parquet files into one RNTuple, or an RNTuple into a \
                      Parquet file. The output is written to a temporary file beside OUT and renamed when \
                      complete; an existing OUT is replaced. (Implemented by the Python package.)",
        after_help = "examples:\n  \
                      rntuple convert nano.root:Events nano_rntuple.root\n  \
                      rntuple convert 'data/*.root:Events' all.root --compression zstd:7 --cluster-size '50 MB'\n  \
                      rntuple convert table.parquet table.root --name Events\n  \
                      rntuple convert nano_rntuple.root:Events nano.parquet"
    )]
    Convert(ConvertArgs),
    /// Histogram a field or an expression of fields into a PNG (like TTree::Draw).
    #[command(
        long_about = "Histogram EXPR over the entries of an RNTuple (where --cut holds) and write it as a PNG, \
                      like TTree::Draw. EXPR and the cut are expressions of top-level fields: numbers, \
                      + - * / // % **, comparisons, and/or/not, & | ~, field.member, field[i], and numpy's \
                      math functions (sqrt, abs, log, exp, sin, ..., the list in the documentation of \
                      rntuple.draw). Collections are flattened (per-entry values broadcast over them). \
                      (Implemented by the Python package.)",
        after_help = "examples:\n  \
                      rntuple draw nano.root:Events Muon_pt -o muon_pt.png\n  \
                      rntuple draw nano.root:Events 'sqrt(Muon_pt**2 + Muon_eta**2)' --cut 'nMuon >= 2' \
                      --bins 50 --range 0 200 -o out.png\n  \
                      rntuple draw 'data/*.root:Events' MET_pt -o met.png --chain more.root   (one chain)"
    )]
    Draw(DrawArgs),
    /// Look inside a file in the web browser: fields, columns, clusters, a byte map, values.
    #[command(
        long_about = "Serve a web page showing the fields (sizes, treemap), columns (encodings, compression), \
                      clusters, a byte map of the whole file and the values of a field of the RNTuples in \
                      FILE (a path or URL), on 127.0.0.1 (a free port unless --port), and open it in the web \
                      browser; Ctrl-C stops the server. With --html, write one self-contained page instead. \
                      (Implemented by the Python package.)",
        after_help = "examples:\n  \
                      rntuple browse nano.root\n  \
                      rntuple browse https://example.org/data/nano.root:Events --port 8765 --no-browser\n  \
                      rntuple browse nano.root --html -o nano.html"
    )]
    Browse(BrowseArgs),
    /// Measure layouts and writer settings: the DUNE-style layout matrix, or a
    /// sweep of writer settings over your own RNTuple; report to DIR.
    #[command(
        long_about = "Layout studies. 'study layout' writes DUNE-like recob::Hit / recob::Wire data (deterministic \
                      from --seed) under a matrix of layouts (AOS/SOA, row granularity, one RNTuple or one per \
                      product or group, nested or flat ROIs, writer threads) and measures write rate, peak RSS, \
                      file size and cold and warm reads. 'study knobs FILE[:NAME]' rewrites an RNTuple under a \
                      sweep of writer settings and reports the Pareto front and a recommendation for --optimize. \
                      DIR receives report.md, report.html, PNG plots and results.json. (Implemented by the \
                      Python package.)",
        after_help = "examples:\n  \
                      rntuple study layout -o layout-report --quick\n  \
                      rntuple study knobs nano.root:Events -o knobs-report --optimize sparse"
    )]
    Study(StudyArgs),
}

#[derive(Args, Debug)]
pub(crate) struct BrowseArgs {
    /// The file (path or URL), optionally with ':NAME' of the RNTuple shown first.
    #[arg(value_name = "FILE[:NAME]")]
    pub target: String,
    /// Port to listen on (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to listen on; anything but loopback exposes the file to the network.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Do not open the page in a web browser.
    #[arg(long)]
    pub no_browser: bool,
    /// Write one self-contained static HTML page (to --output) instead of serving.
    #[arg(long, requires = "output")]
    pub html: bool,
    /// The HTML file written with --html.
    #[arg(long, short, value_name = "HTML")]
    pub output: Option<String>,
    /// The memory budget of each read the page asks for (values, histograms):
    /// bytes or a size like '4 GB'; a read over it is refused with an error
    /// on the page, the server goes on.
    #[arg(long, value_name = "SIZE", default_value = "1 GiB")]
    pub max_memory: String,
}

#[derive(Args, Debug)]
pub(crate) struct StudyArgs {
    /// Which study: layout (generated DUNE-like data) or knobs (FILE[:NAME]).
    #[arg(value_name = "STUDY", value_parser = ["layout", "knobs"])]
    pub study: String,
    /// The RNTuple the knobs study rewrites (not for layout).
    #[arg(value_name = "FILE[:NAME]")]
    pub target: Option<String>,
    /// Directory that receives the report (created if missing).
    #[arg(long, short, value_name = "DIR")]
    pub output: String,
    /// A small run (fewer events, cells and runs): a minute, not ten.
    #[arg(long)]
    pub quick: bool,
    /// Events generated (layout; default 2000, 200 with --quick).
    #[arg(long, value_parser = positive_int)]
    pub events: Option<u64>,
    /// Entries of FILE rewritten by each knobs cell (default: all, 20000 with --quick).
    #[arg(long, value_parser = positive_int)]
    pub entries: Option<u64>,
    /// Most writer (compression) threads in the layout matrix (default 2).
    #[arg(long, value_parser = positive_int)]
    pub threads: Option<u64>,
    /// Runs of each read measurement (default 3, 1 with --quick).
    #[arg(long, value_parser = positive_int)]
    pub runs: Option<u64>,
    /// Seed of the generated data and of the sparse-read entry choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// What the knobs recommendation favours.
    #[arg(long, default_value = "size", value_parser = ["size", "read", "sparse", "write", "memory"])]
    pub optimize: String,
    #[command(flatten)]
    pub progress: ProgressFlags,
    /// Do not print the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// The new file.
    pub out: std::path::PathBuf,
    /// Input files, merged in this order; globs (sorted) and ':NAME' allowed.
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// The RNTuple to merge (default: the one the inputs name with ':NAME',
    /// else the only one of the first input).
    #[arg(long)]
    pub name: Option<String>,
    /// How inputs with different fields are merged: strict (identical
    /// top-level fields), union (all fields; missing values are defaults),
    /// filter (the first input's fields).
    #[arg(long, default_value = "strict", value_parser = ["strict", "union", "filter"])]
    pub mode: String,
    /// Output compression: a setting (505) or NAME[:LEVEL] (zstd, zlib,
    /// lzma, lz4, none); default: the first input's. Pages with another
    /// setting are recompressed.
    #[arg(long, visible_alias = "recompress", value_name = "SETTING")]
    pub compression: Option<String>,
    /// Replace OUT if it exists.
    #[arg(long, short)]
    pub force: bool,
    /// Threads that recompress pages (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// fsync the output before it is renamed into place.
    #[arg(long)]
    pub sync: bool,
    /// No summary and no progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub(crate) struct RecoverArgs {
    /// The file a writer left unfinished.
    pub broken: std::path::PathBuf,
    /// The recovered file (default: only report).
    pub out: Option<std::path::PathBuf>,
    /// Replace OUT if it exists.
    #[arg(long, short)]
    pub force: bool,
    /// fsync the output before it is renamed into place.
    #[arg(long)]
    pub sync: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--progress` / `--no-progress` (default: when stderr is a terminal).
#[derive(Args, Debug)]
pub(crate) struct ProgressFlags {
    /// Progress bar on stderr (default: when stderr is a terminal).
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// No progress bar.
    #[arg(long, overrides_with = "progress")]
    pub no_progress: bool,
}

impl ProgressFlags {
    pub fn value(&self) -> Option<bool> {
        match (self.progress, self.no_progress) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct ConvertArgs {
    /// Input files (globs allowed), each optionally with ':NAME' of its TTree
    /// or RNTuple (default: the only one in the file).
    #[arg(value_name = "IN[:NAME]", required = true, num_args = 1..)]
    pub inputs: Vec<String>,
    /// Output file: *.parquet (or .pq) writes Parquet, anything else ROOT.
    #[arg(value_name = "OUT")]
    pub output: String,
    /// Name of the RNTuple written (default: the TTree's name, else 'Events').
    #[arg(long, short)]
    pub name: Option<String>,
    /// ROOT setting (505) or algorithm[:level]: zstd, zlib, lzma, lz4, none
    /// (default: 505 = zstd level 5).
    #[arg(long, short, default_value = "505")]
    pub compression: String,
    /// Approximate compressed cluster size, e.g. '50 MB' (default: ROOT's 128
    /// MiB); for Parquet output the uncompressed size of a row group.
    #[arg(long, value_name = "SIZE")]
    pub cluster_size: Option<String>,
    /// Entries (an integer) or memory (e.g. '100 MB') read per step.
    #[arg(long, value_name = "SIZE", default_value = "100 MB")]
    pub step_size: String,
    #[command(flatten)]
    pub progress: ProgressFlags,
    /// Do not print the summary line.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub(crate) struct DrawArgs {
    /// The file (a quoted glob names several) and its RNTuple (default: the
    /// only one); several files are histogrammed as one chain.
    #[arg(value_name = "FILE[:NAME]")]
    pub source: String,
    /// More files (globs allowed), chained after FILE in this order.
    #[arg(long, value_name = "FILE[:NAME]")]
    pub chain: Vec<String>,
    /// Field or expression to histogram.
    // An expression may start with '-' ("-abs(x)"): accepted unless it is
    // an option of draw's.
    #[arg(value_name = "EXPR", allow_hyphen_values = true)]
    pub expression: String,
    /// The PNG file to write.
    #[arg(long, short, value_name = "PNG")]
    pub output: String,
    /// Selection: entries (or elements) where it is true / non-zero.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    pub cut: Option<String>,
    /// Number of bins.
    #[arg(long, default_value_t = 100, value_parser = positive_int)]
    pub bins: u64,
    /// Histogram range (default: smallest to largest value).
    #[arg(long, num_args = 2, value_names = ["LO", "HI"], allow_negative_numbers = true)]
    pub range: Option<Vec<f64>>,
    /// Entry range, like a Python slice.
    #[arg(long, value_name = "A:B", value_parser = slice, allow_hyphen_values = true)]
    pub entries: Option<Slice>,
    /// Plot title (default: the RNTuple's name).
    #[arg(long)]
    pub title: Option<String>,
    /// Logarithmic y axis.
    #[arg(long)]
    pub logy: bool,
    /// Print the histogram (counts, edges, underflow, overflow, entries,
    /// mean, std) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub progress: ProgressFlags,
    /// Do not print the summary line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// An entry range `A:B` like a Python slice: either side may be left out
/// or negative.
pub(crate) type Slice = (Option<i64>, Option<i64>);

fn positive_int(text: &str) -> Result<u64, String> {
    let n: i64 = text.trim().parse().map_err(|_| format!("not an integer: '{text}'"))?;
    if n < 1 {
        return Err(format!("must be at least 1, not {n}"));
    }
    Ok(n as u64)
}

fn slice(text: &str) -> Result<Slice, String> {
    let bad = || format!("expected A:B (either may be left out), not '{text}'");
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let side = |s: &str| -> Result<Option<i64>, String> {
        let s = s.trim();
        if s.is_empty() {
            Ok(None)
        } else {
            s.parse().map(Some).map_err(|_| bad())
        }
    };
    Ok((side(a)?, side(b)?))
}

/// The command tree with the help template applied to every subcommand.
pub(crate) fn command() -> clap::Command {
    Cli::command().help_template(HELP_TEMPLATE).mut_subcommands(|s| s.help_template(HELP_TEMPLATE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn value_parsers() {
        assert_eq!(positive_int("3"), Ok(3));
        assert_eq!(positive_int("0"), Err("must be at least 1, not 0".into()));
        assert_eq!(positive_int("many"), Err("not an integer: 'many'".into()));
        assert_eq!(slice("100:300"), Ok((Some(100), Some(300))));
        assert_eq!(slice(":-5"), Ok((None, Some(-5))));
        assert_eq!(slice("7"), Err("expected A:B (either may be left out), not '7'".into()));
    }
}
