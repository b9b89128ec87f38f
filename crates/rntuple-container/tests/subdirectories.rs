//! Object paths, cycles and subdirectories, on subdir.root from tests/data/make.py:
//! RNTuples "top", "dir/Events", "dir/sub/Events" and a TNamed "dir/note" with
//! cycles 1 ("first") and 2 ("second").

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::*;
use rntuple_container::RootFile;
use rntuple_format::Error;

fn subdir() -> RootFile {
    RootFile::open(data_file("subdir.root")).unwrap()
}

#[test]
fn lists_nested_keys_depth_first() {
    let file = subdir();
    let paths: Vec<String> = file.keys().unwrap().iter().map(|k| format!("{};{}", k.path, k.cycle)).collect();
    assert_eq!(paths, ["dir;1", "dir/sub;1", "dir/sub/Events;1", "dir/Events;1", "dir/note;2", "dir/note;1", "top;1"]);
    assert_eq!(file.rntuple_names().unwrap(), ["dir/sub/Events", "dir/Events", "top"]);
}

#[test]
fn finds_keys_by_path_and_cycle() {
    let file = subdir();
    assert_eq!(file.find_key("dir/note").unwrap().title, "second");
    assert_eq!(file.find_key("dir/note;2").unwrap().title, "second");
    assert_eq!(file.find_key("dir/note;1").unwrap().title, "first");
    assert_eq!(file.find_key("/dir/sub/Events").unwrap().path, "dir/sub/Events");
    assert!(file.find_key("dir/sub").unwrap().is_directory());
    for anchor_path in ["top", "dir/Events", "dir/sub/Events"] {
        let a = file.anchor(anchor_path).unwrap();
        assert_eq!(a.max_key_size, 8192, "{anchor_path}");
    }
}

#[test]
fn missing_objects_are_not_found() {
    let file = subdir();
    for path in ["Events", "dir/nothing", "nodir/Events", "dir/sub/sub/Events", "dir/note;3", "top/x"] {
        assert!(matches!(file.anchor(path), Err(Error::NotFound { .. })), "{path}: {:?}", file.anchor(path));
    }
}

#[test]
fn wrong_class_and_bad_paths_are_invalid_arguments() {
    let file = subdir();
    for path in ["dir/note", "dir", "dir/sub", "", "dir//Events", "dir/Events;x", "dir/"] {
        let err = file.anchor(path).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{path}: {err}");
    }
    let msg = file.anchor("dir/note").unwrap_err().to_string();
    assert!(msg.contains("TNamed"), "{msg}");
}
