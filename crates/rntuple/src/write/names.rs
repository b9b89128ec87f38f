//! Names of RNTuples and fields (RNTuple binary format 1.0, section
//! "Naming specification"): not empty, UTF-8, and none of the control codes,
//! `.`, space, `\` and `/`.

use rntuple_format::{Error, Result};

/// Checks `name` against the naming rules; `what` says what is named
/// (`"RNTuple"`, `"field"`) and `path` where, for the message.
pub(crate) fn check_name(name: &str, what: &str, path: &str) -> Result<()> {
    let bad = |why: String| Err(Error::invalid(format!("invalid {what} name {name:?} ({path}): {why}")));
    if name.is_empty() {
        return bad("names must not be empty".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_control() || matches!(c, '.' | ' ' | '\\' | '/')) {
        return bad(format!("character {c:?} is not allowed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_rules() {
        for ok in ["pt", "Muon_pt", "ünïcode", "a:b", "_0", ":_0"] {
            assert!(check_name(ok, "field", "test").is_ok(), "{ok}");
        }
        for bad in ["", "a.b", "a b", "a\\b", "a/b", "tab\t", "nl\n", "\u{7f}"] {
            assert!(check_name(bad, "field", "test").is_err(), "{bad:?}");
        }
    }
}
