//! `rntuple inspect`, `rntuple verify`, `rntuple merge`: the command-line
//! faces of the tools of this crate.

use std::io::Write;
use std::path::Path;

use crate::inspect::{json as inspect_json, table};
use crate::merge::{parse_compression, MergeMode, MergeOptions};
use crate::units::{bytes, compression, count};
use crate::verify::{FileReport, VerifyOptions};
use crate::{inspect_file, is_interrupted, merge, verify_file};
use serde_json::json;

use super::registry::{MergeArgs, RecoverArgs};
use super::{split_target, Failure};
use crate::term::{Bar, Interrupt, When};

/// `rntuple inspect FILE[:NAME] [--json] [--top N]`.
pub(crate) fn inspect(
    target: &str,
    as_json: bool,
    top: usize,
    wide: bool,
    verify: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let (path, name) = split_target(target);
    let i = inspect_file(Path::new(&path), name.as_deref(), verify).map_err(|e| {
        let hint = match (&e, &name) {
            (rntuple::format::Error::NotFound { .. }, Some(n)) => super::suggest_rntuple(&path, n, verify),
            _ => String::new(),
        };
        Failure::error(format!("{path}: {e}{hint}"))
    })?;
    if as_json {
        let text =
            serde_json::to_string_pretty(&inspect_json::to_json(&i)).map_err(|e| Failure::error(e.to_string()))?;
        writeln!(out, "{text}")?;
    } else {
        let limits = table::Limits {
            top: if top == 0 { None } else { Some(top) },
            width: if wide { None } else { Some(crate::term::WIDTH) },
        };
        table::write(&i, limits, out)?;
    }
    Ok(())
}

fn report_json(r: &FileReport) -> serde_json::Value {
    json!({
        "file": r.file,
        "ok": r.is_ok(),
        "rntuples": r.rntuples,
        "num_pages": r.num_pages,
        "page_bytes": r.page_bytes,
        "num_problems": r.num_problems,
        "interrupted": r.interrupted,
        "problems": r.problems.iter().map(|p| json!({
            "file": p.file,
            "rntuple": p.rntuple,
            "field": p.field,
            "column": p.column,
            "cluster": p.cluster,
            "page": p.page,
            "offset": p.offset,
            "check": p.check,
            "message": p.message,
        })).collect::<Vec<_>>(),
    })
}

/// `rntuple verify FILE...`: exit status 0 when every file passed, 1 when a
/// problem was found (a missing or unreadable file is a problem too), 130
/// when interrupted.
pub(crate) fn verify(files: &[String], as_json: bool, quiet: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let interrupt = Interrupt::install();
    let bar = Bar::new(if quiet { When::Never } else { When::Terminal }, Some(interrupt.flag.clone()));
    let options = VerifyOptions::default();
    let mut reports = Vec::with_capacity(files.len());
    for f in files {
        let r = verify_file(Path::new(f), options, &bar);
        if !as_json {
            for p in &r.problems {
                writeln!(out, "{p}")?;
            }
            if r.num_problems > r.problems.len() {
                writeln!(out, "{}: ... and {} more problems", r.file, r.num_problems - r.problems.len())?;
            }
            if r.is_ok() && !quiet {
                let what = match r.rntuples.len() {
                    0 => "no RNTuple".to_string(),
                    1 => format!("RNTuple {}", r.rntuples[0]),
                    n => format!("{n} RNTuples"),
                };
                writeln!(
                    out,
                    "{}: OK ({what}, {} pages, {} checked)",
                    r.file,
                    count(r.num_pages),
                    bytes(r.page_bytes)
                )?;
            } else if r.num_problems > 0 {
                writeln!(
                    out,
                    "{}: FAILED ({} problem{})",
                    r.file,
                    r.num_problems,
                    if r.num_problems == 1 { "" } else { "s" }
                )?;
            }
            out.flush()?;
        }
        let stop = r.interrupted;
        reports.push(r);
        if stop {
            break;
        }
    }
    let bad = reports.iter().filter(|r| r.num_problems > 0).count();
    if as_json {
        let doc = json!({
            "ok": bad == 0 && !interrupt.triggered(),
            "files": reports.iter().map(report_json).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&doc).map_err(|e| Failure::error(e.to_string()))?;
        writeln!(out, "{text}")?;
    } else if files.len() > 1 && !quiet {
        writeln!(out, "verified {} files: {} OK, {bad} with problems", reports.len(), reports.len() - bad)?;
    }
    out.flush()?;
    if interrupt.triggered() {
        return Err(Failure::interrupted("verify"));
    }
    if bad > 0 {
        return Err(Failure::silent(1));
    }
    Ok(())
}

/// `rntuple merge OUT IN...`.
pub(crate) fn merge_files(a: MergeArgs, verify: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let mode: MergeMode = a.mode.parse().map_err(|e| Failure::usage(format!("{e}")))?;
    let compression_setting = match &a.compression {
        Some(s) => Some(parse_compression(s).map_err(|e| Failure::usage(format!("{e}")))?),
        None => None,
    };
    let inputs = super::inputs::expand(&a.inputs).map_err(Failure::error)?;
    let name = super::inputs::common_name(&inputs, a.name.as_deref()).map_err(Failure::usage)?;
    let options = MergeOptions {
        name,
        mode,
        compression: compression_setting,
        verify_checksums: verify,
        overwrite: a.force,
        sync: a.sync,
        threads: a.threads,
    };
    let interrupt = Interrupt::install();
    let bar = Bar::new(if a.quiet { When::Never } else { When::Terminal }, Some(interrupt.flag.clone()));
    let inputs: Vec<&Path> = inputs.iter().map(|(p, _)| p.as_path()).collect();
    let summary = match merge(&a.out, &inputs, &options, &bar) {
        Ok(s) => s,
        Err(e) if is_interrupted(&e) => return Err(Failure::interrupted("merge")),
        Err(e) => return Err(Failure::error(format!("merge into {} failed: {e}", a.out.display()))),
    };
    drop(interrupt);
    if !a.quiet {
        let p = summary.pages;
        writeln!(
            out,
            "merged {} inputs into {}: RNTuple '{}', {} entries, {} clusters in {} cluster groups, {}",
            summary.inputs,
            a.out.display(),
            summary.name,
            count(summary.entries),
            count(summary.clusters as u64),
            count(summary.cluster_groups as u64),
            bytes(summary.bytes)
        )?;
        writeln!(
            out,
            "compression {}; pages: {} copied, {} recompressed, {} of default values, {} shared",
            compression(summary.compression),
            count(p.copied),
            count(p.resealed),
            count(p.zero),
            count(p.shared)
        )?;
        for f in &summary.fields_added {
            writeln!(out, "added field {f}")?;
        }
        for f in &summary.fields_dropped {
            writeln!(out, "left out field {f}")?;
        }
        for w in &summary.warnings {
            writeln!(out, "warning: {w}")?;
        }
        for a in &summary.attribute_sets_dropped {
            writeln!(out, "left out attribute set {a} (attribute sets are not merged, as by ROOT's RNTupleMerger)")?;
        }
    }
    Ok(())
}

/// `rntuple recover BROKEN [OUT]`: exit status 0 when the file is complete
/// or recovered (or recoverable, without OUT), 1 when nothing can be.
pub(crate) fn recover_file(a: RecoverArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let options = crate::RecoverOptions { sync: a.sync, overwrite: a.force };
    let report = crate::recover(&a.broken, a.out.as_deref(), options)
        .map_err(|e| Failure::error(format!("recover {}: {e}", a.broken.display())))?;
    if a.json {
        let text = serde_json::to_string_pretty(&report.to_json()).map_err(|e| Failure::error(e.to_string()))?;
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{report}")?;
    }
    Ok(())
}
