//! A bearer token found as WLCG tools find it (WLCG Bearer Token Discovery,
//! version 1.0): the `BEARER_TOKEN` variable, else the file named by
//! `BEARER_TOKEN_FILE`, else `$XDG_RUNTIME_DIR/bt_u$UID`, else
//! `/tmp/bt_u$UID`. Surrounding whitespace is removed; an empty token is none.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The user id of this process (the owner of `/proc/self`), without `libc`.
fn uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The token, if one is found.
pub(crate) fn discover() -> Option<String> {
    if let Ok(token) = std::env::var("BEARER_TOKEN") {
        return non_empty(&token);
    }
    let read = |path: PathBuf| std::fs::read_to_string(path).ok().and_then(|s| non_empty(&s));
    if let Ok(path) = std::env::var("BEARER_TOKEN_FILE") {
        return read(PathBuf::from(path));
    }
    let uid = uid()?;
    if let Ok(dir) = std::env::var("XDG_RUNTIME_DIR") {
        if let Some(token) = read(PathBuf::from(dir).join(format!("bt_u{uid}"))) {
            return Some(token);
        }
    }
    read(PathBuf::from(format!("/tmp/bt_u{uid}")))
}
