//! Input arguments that name several files, as the Python package's
//! `_dataset.expand` reads them: a path, a glob (`"data/*.root"`, matched
//! here so that a quoted pattern works as an unquoted one does in a shell)
//! and either of them with `:NAME` (`"f.root:Events"`). Matches come in
//! sorted order; a pattern that matches nothing is an error, as in uproot.

use std::path::{Path, PathBuf};

use super::split_target;

/// `(path, RNTuple name)` for every file the arguments name, in order.
pub(crate) fn expand(specs: &[String]) -> Result<Vec<(PathBuf, Option<String>)>, String> {
    let mut out = Vec::new();
    for spec in specs {
        let (path, name) = split_target(spec);
        if !has_wildcard(&path) {
            out.push((PathBuf::from(path), name));
            continue;
        }
        let matches = glob(&path).map_err(|e| format!("{path}: {e}"))?;
        if matches.is_empty() {
            return Err(format!("{path}: no file matches the pattern"));
        }
        out.extend(matches.into_iter().map(|p| (p, name.clone())));
    }
    Ok(out)
}

fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Files matching `pattern`, component by component (`*`, `?`, `[abc]`,
/// `[a-z]`, `[!a]` within one component), sorted.
fn glob(pattern: &str) -> std::io::Result<Vec<PathBuf>> {
    let absolute = pattern.starts_with('/');
    let mut current = vec![PathBuf::from(if absolute { "/" } else { "" })];
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for dir in &current {
            if !has_wildcard(part) {
                let p = dir.join(part);
                if p.exists() {
                    next.push(p);
                }
                continue;
            }
            let listing = if dir.as_os_str().is_empty() { Path::new(".") } else { dir.as_path() };
            let Ok(entries) = std::fs::read_dir(listing) else { continue };
            for entry in entries {
                let entry = entry?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                // As in a shell, a wildcard does not match a leading dot.
                if name.starts_with('.') && !part.starts_with('.') {
                    continue;
                }
                if matches(part.as_bytes(), name.as_bytes()) {
                    next.push(dir.join(name));
                }
            }
        }
        next.retain(|p| if last { p.is_file() } else { p.is_dir() });
        next.sort();
        current = next;
    }
    Ok(current)
}

/// Whether `name` matches the one-component pattern `pat`.
fn matches(pat: &[u8], name: &[u8]) -> bool {
    match pat.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| matches(rest, &name[i..])),
        Some((b'?', rest)) => !name.is_empty() && matches(rest, &name[1..]),
        Some((b'[', rest)) => match (rest.iter().position(|&c| c == b']'), name.split_first()) {
            (Some(end), Some((&c, tail))) if end > 0 => {
                let (negate, set) = match rest[..end].split_first() {
                    Some((b'!' | b'^', set)) => (true, set),
                    _ => (false, &rest[..end]),
                };
                in_set(set, c) != negate && matches(&rest[end + 1..], tail)
            }
            (Some(_), None) => false,
            // No closing bracket: a literal '['.
            _ => name.first() == Some(&b'[') && matches(rest, &name[1..]),
        },
        Some((&c, rest)) => name.first() == Some(&c) && matches(rest, &name[1..]),
    }
}

fn in_set(set: &[u8], c: u8) -> bool {
    let mut i = 0;
    while i < set.len() {
        if i + 2 < set.len() && set[i + 1] == b'-' {
            if (set[i]..=set[i + 2]).contains(&c) {
                return true;
            }
            i += 3;
        } else {
            if set[i] == c {
                return true;
            }
            i += 1;
        }
    }
    false
}

/// The one RNTuple name the inputs and `--name` agree on (None: each
/// input's only one, as the merger resolves it).
pub(crate) fn common_name(
    inputs: &[(PathBuf, Option<String>)],
    option: Option<&str>,
) -> Result<Option<String>, String> {
    let mut name = option.map(str::to_string);
    for (path, inline) in inputs {
        match (&name, inline) {
            (Some(n), Some(i)) if n != i => {
                return Err(format!(
                    "{}:{i} names another RNTuple than '{n}'; merge combines one RNTuple from every input",
                    path.display()
                ))
            }
            (None, Some(i)) => name = Some(i.clone()),
            _ => {}
        }
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_one_component() {
        assert!(matches(b"*.root", b"a.root"));
        assert!(!matches(b"*.root", b"a.root.bak"));
        assert!(matches(b"f?.root", b"f1.root"));
        assert!(matches(b"f[0-2].root", b"f2.root"));
        assert!(!matches(b"f[0-2].root", b"f3.root"));
        assert!(matches(b"f[!0].root", b"f3.root"));
        assert!(matches(b"[ab]*", b"b"));
        assert!(matches(b"a[", b"a["));
    }

    #[test]
    fn globs_expand_sorted_with_names() {
        let dir = std::env::temp_dir().join(format!("rntuple-inputs-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["b.root", "a.root", "c.txt", "sub/d.root"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let d = dir.display();
        let got = expand(&[format!("{d}/*.root:Events"), format!("{d}/*/d.root")]).unwrap();
        let want = vec![
            (dir.join("a.root"), Some("Events".to_string())),
            (dir.join("b.root"), Some("Events".to_string())),
            (dir.join("sub/d.root"), None),
        ];
        assert_eq!(got, want);
        assert!(expand(&[format!("{d}/*.nothing")]).unwrap_err().contains("no file matches"));
        assert_eq!(common_name(&got, None).unwrap(), Some("Events".into()));
        assert!(common_name(&got, Some("Other")).unwrap_err().contains("names another RNTuple"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
