//! The `rntuple` command line: one registry of subcommands ([`registry`],
//! clap), run by the Rust binary (`crates/rntuple-cli`) and by the Python
//! package's console script (`python -m rntuple`, through the extension
//! module).
//!
//! Why here: the registry sits below both the binary and the Python
//! bindings, so neither depends on the other. The Python-implemented
//! subcommands (`convert`, `draw`) are defined in the registry like the
//! others; [`dispatch`] parses every command line and either runs a Rust
//! subcommand or hands the parsed arguments of a Python one back to its
//! caller ([`Dispatch::Python`]); the Rust binary ([`run`]) answers those
//! with a message naming the Python package.
//!
//! Exit status: 0 on success, 1 on failure (for `verify`: a problem found),
//! 2 for usage errors, 130 when interrupted (Ctrl-C).

use std::ffi::OsString;
use std::io::Write;

use clap::FromArgMatches;
use rntuple::{RNTupleFile, ReadOptions};
use serde_json::json;

mod commands;
mod inputs;
mod registry;
mod tools;
mod usage;

use registry::{BrowseArgs, Cli, Command, ConvertArgs, DrawArgs, StudyArgs};

/// What [`dispatch`] did with a command line.
#[derive(Debug)]
pub enum Dispatch {
    /// A Rust subcommand ran, or the command line was a usage error or a
    /// request for help: exit with this status (all output is written).
    Done(i32),
    /// A subcommand implemented by the Python package, with its arguments.
    Python(PythonCommand),
}

/// A parsed command line of a Python-implemented subcommand.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonCommand {
    /// `"convert"`, `"draw"`, `"browse"` or `"study"`.
    pub name: String,
    /// The arguments by their long names with `_` for `-` (`"cluster_size"`),
    /// defaults filled in; `draw` also gets `verify_checksums` from the global
    /// `--no-verify`.
    pub args: serde_json::Value,
    /// The subcommand's usage line, for the usage errors the Python side
    /// reports itself (values whose meaning it owns).
    pub usage: String,
}

impl PythonCommand {
    /// Subcommand `name` with its arguments, and its usage line from `root`.
    fn new(name: &str, args: serde_json::Value, root: &mut clap::Command) -> Self {
        PythonCommand { name: name.into(), args, usage: usage::usage_of(root, Some(name)) }
    }
}

/// The usage error text for `rntuple SUBCOMMAND` in the format of every
/// other usage error: `usage: ...` then `rntuple SUBCOMMAND: error: MESSAGE`.
pub fn usage_error(usage: &str, subcommand: &str, message: &str) -> String {
    usage::format(usage, &format!("rntuple {subcommand}"), message)
}

/// Parses `args` (program name first) with the registry and runs a Rust
/// subcommand; a Python one is returned to the caller.
pub fn dispatch<I, T>(args: I) -> Dispatch
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let mut root = registry::command();
    let sub = subcommand_named(&root, &argv);
    let parsed = root.clone().try_get_matches_from(&argv).and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => return Dispatch::Done(report_parse_error(&e, &mut root, sub.as_deref())),
    };
    if cli.io_report {
        rntuple::set_io_report(true);
    }
    if let Some(dir) = &cli.cache {
        rntuple::container::storage::set_process_cache(Some(rntuple::container::CacheConfig::new(dir)));
    }
    match cli.command {
        Command::Convert(a) => Dispatch::Python(convert_command(a, &mut root)),
        Command::Draw(a) => draw_command(a, !cli.no_verify, &mut root),
        Command::Browse(a) => Dispatch::Python(browse_command(a, !cli.no_verify, &mut root)),
        Command::Study(a) => Dispatch::Python(study_command(a, &mut root)),
        command => Dispatch::Done(run_rust(command, !cli.no_verify)),
    }
}

/// Runs the command line of the Rust binary; returns the process exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // Without the Python package its subcommands cannot run, whatever their
    // arguments: say so before judging them.
    if let Some(name) =
        subcommand_named(&registry::command(), &argv).filter(|n| PYTHON_SUBCOMMANDS.contains(&n.as_str()))
    {
        return report(Err(python_only(&name)));
    }
    match dispatch(argv) {
        Dispatch::Done(status) => status,
        Dispatch::Python(p) => report(Err(python_only(&p.name))),
    }
}

/// The subcommands the Python package implements.
pub const PYTHON_SUBCOMMANDS: [&str; 4] = ["convert", "draw", "browse", "study"];

/// The subcommand the command line names (its first word that is not an
/// option), if the registry has it.
fn subcommand_named(root: &clap::Command, argv: &[OsString]) -> Option<String> {
    let word = argv.iter().skip(1).filter_map(|a| a.to_str()).find(|a| !a.starts_with('-'))?;
    root.find_subcommand(word).map(|c| c.get_name().to_string())
}

fn report_parse_error(e: &clap::Error, root: &mut clap::Command, sub: Option<&str>) -> i32 {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.use_stderr() {
                2
            } else {
                0
            }
        }
        _ => {
            eprint!("{}", usage::render(e, root, sub));
            2
        }
    }
}

fn convert_command(a: ConvertArgs, root: &mut clap::Command) -> PythonCommand {
    PythonCommand::new(
        "convert",
        json!({
            "inputs": a.inputs,
            "output": a.output,
            "name": a.name,
            "compression": a.compression,
            "cluster_size": a.cluster_size,
            "step_size": a.step_size,
            "progress": a.progress.value(),
            "quiet": a.quiet,
        }),
        root,
    )
}

fn browse_command(a: BrowseArgs, verify: bool, root: &mut clap::Command) -> PythonCommand {
    PythonCommand::new(
        "browse",
        json!({
            "target": a.target,
            "port": a.port,
            "host": a.host,
            "no_browser": a.no_browser,
            "html": a.html,
            "output": a.output,
            "max_memory": a.max_memory,
            "verify_checksums": verify,
        }),
        root,
    )
}

fn study_command(a: StudyArgs, root: &mut clap::Command) -> PythonCommand {
    PythonCommand::new(
        "study",
        json!({
            "study": a.study,
            "target": a.target,
            "output": a.output,
            "quick": a.quick,
            "events": a.events,
            "entries": a.entries,
            "threads": a.threads,
            "runs": a.runs,
            "seed": a.seed,
            "optimize": a.optimize,
            "progress": a.progress.value(),
            "quiet": a.quiet,
        }),
        root,
    )
}

fn draw_command(a: DrawArgs, verify: bool, root: &mut clap::Command) -> Dispatch {
    let usage = usage::usage_of(root, Some("draw"));
    if let Some([lo, hi]) = a.range.as_deref() {
        if lo >= hi || lo.is_nan() || hi.is_nan() {
            let message = format!("argument --range: LO must be less than HI, not {lo} {hi}");
            eprint!("{}", usage_error(&usage, "draw", &message));
            return Dispatch::Done(2);
        }
    }
    Dispatch::Python(PythonCommand {
        name: "draw".into(),
        args: json!({
            "sources": std::iter::once(a.source).chain(a.chain).collect::<Vec<_>>(),
            "expression": a.expression,
            "output": a.output,
            "cut": a.cut,
            "bins": a.bins,
            "range": a.range,
            "entries": a.entries.map(|(start, stop)| [start, stop]),
            "title": a.title,
            "logy": a.logy,
            "json": a.json,
            "progress": a.progress.value(),
            "quiet": a.quiet,
            "verify_checksums": verify,
        }),
        usage,
    })
}

/// Runs a Rust subcommand with standard output buffered; returns its status.
fn run_rust(command: Command, verify: bool) -> i32 {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let r = commands::execute(command, verify, &mut out);
    let flushed = out.flush().map_err(Failure::from);
    report(r.and(flushed))
}

/// Prints the message of a failure; returns the exit status.
fn report(result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(Failure { status, message }) => {
            if let Some(m) = message {
                // No credential of a URL in a message.
                eprintln!("rntuple: error: {}", rntuple::container::storage::redact_text(&m));
            }
            status
        }
    }
}

/// Splits `FILE:NAME`; a colon that is part of an existing path, or of a
/// URL's scheme or port (`root://host:1094//f.root`), is kept.
pub fn split_target(target: &str) -> (String, Option<String>) {
    if std::path::Path::new(target).exists() {
        return (target.to_string(), None);
    }
    let after_scheme = target.find("://").map_or(0, |i| i + 3);
    match target[after_scheme..].rsplit_once(':') {
        Some((f, n)) if !f.is_empty() && !is_port(n) => {
            let file = format!("{}{f}", &target[..after_scheme]);
            (file, if n.is_empty() { None } else { Some(n.to_string()) })
        }
        _ => (target.to_string(), None),
    }
}

/// `1094//eos/f.root`: the port of a URL, not an RNTuple name.
fn is_port(rest: &str) -> bool {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with('/')
}

/// Python-slice bounds over `n` entries: None is the end, negative counts
/// from the end, clamped (as `draw` and `RNTuple.arrays(entry_start=...)`).
fn slice_bounds((start, stop): registry::Slice, n: u64) -> (u64, u64) {
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    let at = |v: Option<i64>, default: i64| {
        let v = v.unwrap_or(default);
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(0, n) as u64
    };
    let (a, b) = (at(start, 0), at(stop, n));
    (a, b.max(a))
}

/// What the file holds instead of an RNTuple, for the messages that say so.
fn other_objects(file: &RNTupleFile, path: &str) -> String {
    let keys = file.keys().unwrap_or_default();
    let found: Vec<String> = keys.iter().map(|k| format!("{} '{}'", k.class_name, k.path)).collect();
    if found.is_empty() {
        return "the file holds no RNTuple (and no other object)".into();
    }
    let hint = if keys.iter().any(|k| k.class_name == "TTree") {
        format!("; convert a TTree first: rntuple convert {path} out.root")
    } else {
        String::new()
    };
    format!("the file holds no RNTuple, only {}{hint}", found.join(", "))
}

/// Why `name` is not an RNTuple of `file`: names the class found under it.
fn not_an_rntuple(file: &RNTupleFile, path: &str, name: &str, error: String) -> String {
    let keys = file.keys().unwrap_or_default();
    match keys.iter().find(|k| k.path == name && k.class_name != "ROOT::RNTuple") {
        Some(k) if k.class_name == "TTree" => {
            format!("'{name}' is a TTree, not an RNTuple; convert it first: rntuple convert {path}:{name} out.root")
        }
        Some(k) => format!("'{name}' is a {}, not an RNTuple", k.class_name),
        None => {
            let names = file.rntuple_names().unwrap_or_default();
            let known: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
            format!("{error}{}", did_you_mean(name, &known))
        }
    }
}

/// "; did you mean 'EventData'?" for an unknown RNTuple name of the file at `path`.
fn suggest_rntuple(path: &str, name: &str, verify: bool) -> String {
    let Ok(file) = open(path, verify) else { return String::new() };
    let names = file.rntuple_names().unwrap_or_default();
    let known: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    did_you_mean(name, &known)
}

/// "; did you mean 'a', 'b'?" naming the (at most 5, distinct) known names closest to `name`
/// by edit distance (at most a third of the longer name's length), or those containing it;
/// empty when none is close.
fn did_you_mean(name: &str, known: &[&str]) -> String {
    let mut scored: Vec<(usize, &str)> = Vec::new();
    for &k in known {
        if scored.iter().any(|&(_, s)| s == k) {
            continue;
        }
        let d = edit_distance(&name.to_lowercase(), &k.to_lowercase());
        let longest = name.chars().count().max(k.chars().count());
        if d * 3 <= longest || k.to_lowercase().contains(&name.to_lowercase()) {
            scored.push((d, k));
        }
    }
    scored.sort();
    let close: Vec<String> = scored.iter().take(5).map(|(_, k)| format!("'{k}'")).collect();
    if close.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", close.join(", "))
    }
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

fn pick_name(file: &RNTupleFile, path: &str, name: Option<String>) -> Result<String, String> {
    if let Some(n) = name {
        return Ok(n);
    }
    let names = file.rntuple_names().map_err(|e| e.to_string())?;
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(other_objects(file, path)),
        many => Err(format!("the file holds several RNTuples ({}); name one as FILE:NAME", many.join(", "))),
    }
}

fn open(path: &str, verify: bool) -> Result<RNTupleFile, String> {
    let options = ReadOptions { verify_checksums: verify, ..Default::default() };
    RNTupleFile::open_with(path, options).map_err(|e| format!("{path}: {e}"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_at_the_name() {
        let s = |t: &str| split_target(t);
        assert_eq!(s("f.root:Events"), ("f.root".into(), Some("Events".into())));
        assert_eq!(s("f.root:dir/Events"), ("f.root".into(), Some("dir/Events".into())));
        assert_eq!(s("f.root"), ("f.root".into(), None));
        assert_eq!(s("root://eos.cern.ch//f.root"), ("root://eos.cern.ch//f.root".into(), None));
        assert_eq!(s("root://host:1094//f.root"), ("root://host:1094//f.root".into(), None));
        assert_eq!(s("root://host:1094//f.root:Events"), ("root://host:1094//f.root".into(), Some("Events".into())));
        assert_eq!(s("file:///tmp/f.root:Events"), ("file:///tmp/f.root".into(), Some("Events".into())));
    }

    #[test]
    fn python_subcommands_come_back_parsed() {
        let argv = [
            "rntuple",
            "--no-verify",
            "draw",
            "f.root:E",
            "x",
            "-o",
            "x.png",
            "--entries",
            "-5:",
            "--range",
            "-1",
            "2",
        ];
        let Dispatch::Python(p) = dispatch(argv) else { panic!("draw is Python's") };
        assert_eq!(p.name, "draw");
        assert!(p.usage.starts_with("rntuple draw"), "{}", p.usage);
        assert_eq!(p.args["entries"], json!([-5, null]));
        assert_eq!(p.args["range"], json!([-1.0, 2.0]));
        assert_eq!(p.args["bins"], json!(100));
        assert_eq!(p.args["verify_checksums"], json!(false));
        assert_eq!(p.args["progress"], json!(null));
        // An expression that starts with '-' is not an option; -o still is.
        let argv = ["rntuple", "draw", "f.root", "-abs(x * y)", "-o", "x.png", "--cut", "-x > 1"];
        let Dispatch::Python(p) = dispatch(argv) else { panic!("draw is Python's") };
        assert_eq!((&p.args["expression"], &p.args["output"]), (&json!("-abs(x * y)"), &json!("x.png")));
        assert_eq!(p.args["cut"], json!("-x > 1"));
        // Several sources before the expression: the chain of them.
        let argv = ["rntuple", "draw", "a*.root", "x", "-o", "x.png", "--chain", "b.root:E", "--chain", "c.root"];
        let Dispatch::Python(p) = dispatch(argv) else { panic!("draw is Python's") };
        assert_eq!(p.args["sources"], json!(["a*.root", "b.root:E", "c.root"]));
        assert_eq!(p.args["expression"], json!("x"));
        let argv = ["rntuple", "convert", "a.root", "b.root:t", "out.root", "--no-progress", "-c", "zstd:7"];
        let Dispatch::Python(p) = dispatch(argv) else { panic!("convert is Python's") };
        assert_eq!(p.args["inputs"], json!(["a.root", "b.root:t"]));
        assert_eq!(p.args["output"], json!("out.root"));
        assert_eq!(p.args["compression"], json!("zstd:7"));
        assert_eq!(p.args["step_size"], json!("100 MB"));
        assert_eq!(p.args["progress"], json!(false));
        // A usage error of a Python subcommand is reported here.
        assert!(matches!(
            dispatch(["rntuple", "draw", "f.root", "x", "-o", "p.png", "--range", "5", "1"]),
            Dispatch::Done(2)
        ));
        assert!(matches!(dispatch(["rntuple", "convert", "only.root"]), Dispatch::Done(2)));
        let argv = ["rntuple", "study", "knobs", "f.root:E", "-o", "out", "--optimize", "sparse", "--quick"];
        let Dispatch::Python(p) = dispatch(argv) else { panic!("study is Python's") };
        assert_eq!((&p.args["study"], &p.args["target"]), (&json!("knobs"), &json!("f.root:E")));
        assert_eq!(
            (&p.args["optimize"], &p.args["quick"], &p.args["seed"]),
            (&json!("sparse"), &json!(true), &json!(1))
        );
        assert!(matches!(dispatch(["rntuple", "study", "shape", "-o", "d"]), Dispatch::Done(2)));
    }
}
