//! The Rust subcommands: `ls`, `show`, `dump` here, `inspect`, `verify` and
//! `merge` in [`super::tools`].

use std::io::Write;

use super::registry::Command;
use super::{not_an_rntuple, open, other_objects, pick_name, python_only, slice_bounds, split_target, tools, Failure};
use crate::term;

pub(crate) fn execute(command: Command, verify: bool, out: &mut dyn Write) -> Result<(), Failure> {
    match command {
        Command::Ls { file } => {
            let f = open(&file, verify)?;
            for k in f.keys().map_err(|e| e.to_string())? {
                writeln!(out, "{:<40} {:<24} cycle {}", k.path, k.class_name, k.cycle)?;
            }
        }
        Command::Show { target, max_fields, wide } => {
            let options = term::ShowOptions {
                max_fields: if max_fields == 0 { None } else { Some(max_fields) },
                width: if wide { None } else { Some(term::WIDTH) },
            };
            let (path, name) = split_target(&target);
            let f = open(&path, verify)?;
            let names = match name {
                Some(n) => vec![n],
                None => f.rntuple_names().map_err(|e| e.to_string())?,
            };
            if names.is_empty() {
                return Err(Failure::error(format!("{path}: {}", other_objects(&f, &path))));
            }
            for n in names {
                let nt = f
                    .rntuple(&n)
                    .map_err(|e| format!("{path}:{n}: {}", not_an_rntuple(&f, &path, &n, e.to_string())))?;
                term::show_with(&nt, options, out)?;
            }
        }
        Command::Dump { target, entries, fields } => {
            let (path, name) = split_target(&target);
            let f = open(&path, verify)?;
            let name = pick_name(&f, &path, name).map_err(|e| format!("{path}: {e}"))?;
            let nt = f
                .rntuple(&name)
                .map_err(|e| format!("{path}:{name}: {}", not_an_rntuple(&f, &path, &name, e.to_string())))?;
            let (start, stop) = slice_bounds(entries.unwrap_or((None, None)), nt.num_entries());
            let names: Vec<&str> = fields.iter().map(|s| s.as_str()).collect();
            let sel = if names.is_empty() { None } else { Some(names.as_slice()) };
            let nodes: Vec<&rntuple::FieldNode> = match sel {
                None => nt.readable_fields(),
                Some(names) => names
                    .iter()
                    .map(|n| {
                        nt.schema().field(n).ok_or_else(|| {
                            let known: Vec<&str> = nt.schema().fields.iter().map(|f| f.name.as_str()).collect();
                            format!("{path}:{name}: no field '{n}'{}", super::did_you_mean(n, &known))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            };
            // The dump format prints a streamer field's stored bytes (docs/dump-format.md).
            let options = rntuple::ReadOptions { streamer_bytes: true, ..*nt.options() };
            let mut at = start;
            while at < stop {
                let end = stop.min(at.saturating_add(10_000));
                let batch = nt.read_with(sel, at, end, &options).map_err(|e| format!("{path}:{name}: {e}"))?;
                for line in rntuple::json::entry_lines(&nodes, &batch) {
                    writeln!(out, "{line}")?;
                }
                at = end;
            }
        }
        Command::Inspect { target, json, top, wide } => tools::inspect(&target, json, top, wide, verify, out)?,
        Command::Verify { files, json, quiet } => {
            if !verify {
                return Err(Failure::usage("verify always checks checksums; --no-verify does not apply".into()));
            }
            tools::verify(&files, json, quiet, out)?
        }
        Command::Merge(args) => tools::merge_files(args, verify, out)?,
        Command::Recover(args) => tools::recover_file(args, out)?,
        Command::Convert(_) => return Err(python_only("convert")),
        Command::Draw(_) => return Err(python_only("draw")),
        Command::Browse(_) => return Err(python_only("browse")),
        Command::Study(_) => return Err(python_only("study")),
    }
    Ok(())
}
