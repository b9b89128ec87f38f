//! Issue 11: the command line for a user coming from uproot. Every refusal is
//! one line naming what was found and what to do; `dump --entries` takes
//! negative indices as `draw` and Python do; `inspect` names the fields of
//! imported NanoAOD as users know them (`Muon_pt`), with their types.

use std::path::PathBuf;
use std::process::{Command, Output};

fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name);
    p.to_str().expect("utf-8 path").to_string()
}

fn rntuple(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rntuple")).args(args).output().expect("run rntuple")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const TTREE: &str = "nanoAOD_2015_CMS_Open_Data_ttbar.root";

#[test]
fn show_and_dump_on_a_ttree_file_say_what_was_found_and_what_to_do() {
    let file = data(TTREE);
    for args in [vec!["show", file.as_str()], vec!["dump", file.as_str()]] {
        let o = rntuple(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("no RNTuple") && err.contains("TTree 'Events'"), "{err}");
        assert!(err.contains(&format!("rntuple convert {file} out.root")), "{err}");
        assert!(o.stdout.is_empty());
    }
    let target = format!("{file}:Events");
    for cmd in ["show", "dump"] {
        let o = rntuple(&[cmd, &target]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("'Events' is a TTree, not an RNTuple"), "{err}");
        assert!(err.contains(&format!("rntuple convert {target} out.root")), "{err}");
    }
}

#[test]
fn dump_takes_negative_entries_like_draw_and_python() {
    let target = format!("{}:ntuple", data("test_int_float_rntuple_v1-0-0-0.root"));
    let last_two = rntuple(&["dump", &target, "--entries", "-2:"]);
    assert_eq!(last_two.status.code(), Some(0), "{}", text(&last_two.stderr));
    let explicit = rntuple(&["dump", &target, "--entries", "8:10"]);
    assert_eq!(text(&last_two.stdout), text(&explicit.stdout));
    assert_eq!(text(&last_two.stdout).lines().count(), 2);
    let middle = rntuple(&["dump", &target, "--entries", "-4:-2"]);
    assert_eq!(text(&middle.stdout), text(&rntuple(&["dump", &target, "--entries", "6:8"]).stdout));
    let all = rntuple(&["dump", &target, "--entries", ":"]);
    assert_eq!(text(&all.stdout).lines().count(), 10);
    let bad = rntuple(&["dump", &target, "--entries", "x:"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn inspect_names_imported_nanoaod_fields_as_users_know_them() {
    let file = data("cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root");
    let o = rntuple(&["inspect", &file, "--top", "0", "--wide"]); // whole types
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Top-level fields"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(table.len() > 900, "{}", table.len());
    let muon = table.iter().find(|l| l.trim_start().starts_with("Muon_* (_collection")).expect("Muon row");
    assert!(muon.contains("ROOT::VecOps::RVec<float>") && muon.contains("ROOT::VecOps::RVec<std::int32_t>"), "{muon}");
    // No untyped row left nameless: every `_collectionN` row names its projections and their types.
    for line in &table {
        assert!(!line.trim_start().starts_with("_collection"), "{line}");
    }
    let json = rntuple(&["inspect", &file, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let fields = doc["rntuples"][0]["fields"].as_array().expect("fields");
    let collection = fields.iter().find(|f| f["projections"].as_array().is_some_and(|p| p.len() > 5)).expect("one");
    assert_eq!(collection["type"], "");
    assert!(collection["projections"][0]["name"].is_string());
}
