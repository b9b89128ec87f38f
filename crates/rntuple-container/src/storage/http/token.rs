//! A bearer token found as WLCG tools find it (WLCG Bearer Token Discovery,
//! version 1.0): the `BEARER_TOKEN` variable, else the file named by
//! `BEARER_TOKEN_FILE`, else `$XDG_RUNTIME_DIR/bt_u$UID`, else
//! `/tmp/bt_u$UID`. Surrounding whitespace is removed; an empty token is none.
//!
//! Where it goes: only over `https://`, and only to the hosts the user named
//! in [`TOKEN_HOSTS_ENV`] (comma-separated; `host` names that host,
//! `.example.org` that domain and its subdomains, `*` every host). Without
//! the variable no host gets the token: a token is a credential for one
//! site, and a dataset list can name any host. (The discovery convention
//! says where a token is, not where it may be sent.)
//!
//! A token file must belong to this user and be readable by nobody else
//! (mode `0600` or stricter), as ssh demands of private keys: a file others
//! can read is a leaked token, one others own may be a planted one.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rntuple_format::{Error, Result};

/// The environment variable naming the hosts a bearer token may be sent to.
pub const TOKEN_HOSTS_ENV: &str = "RNTUPLE_TOKEN_HOSTS";

use crate::storage::owner::uid;

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Whether `host` is named by the comma-separated `patterns`.
fn host_matches(patterns: &str, host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    patterns.split(',').map(|p| p.trim().to_ascii_lowercase()).any(|p| {
        if p == "*" {
            true
        } else if let Some(domain) = p.strip_prefix('.') {
            host == domain || host.ends_with(&p)
        } else {
            !p.is_empty() && host == p
        }
    })
}

/// Whether a token may be sent with requests to `url`: an `https://` URL
/// whose host the user opted into ([`TOKEN_HOSTS_ENV`]).
pub(crate) fn allowed(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else { return false };
    let Some(host) = parsed.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    parsed.scheme() == "https" && std::env::var(TOKEN_HOSTS_ENV).is_ok_and(|p| host_matches(&p, host))
}

/// Whether the user named `host` in [`TOKEN_HOSTS_ENV`] (whatever the
/// scheme: XRootD forwards `authz=` opaque data to these hosts too).
pub(crate) fn host_opted_in(host: &str) -> bool {
    std::env::var(TOKEN_HOSTS_ENV).is_ok_and(|p| host_matches(&p, host))
}

/// The token for requests to `url`: none unless [`allowed`]; else the one
/// discovered, if any. A token file that others can read or that another
/// user owns is an error naming it.
pub(crate) fn for_url(url: &str) -> Result<Option<String>> {
    if allowed(url) {
        discover()
    } else {
        Ok(None)
    }
}

/// Reads a token file after checking its owner and mode; a missing file is
/// no token.
fn read_file(path: &Path) -> Result<Option<String>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("bearer token file {}", path.display()), e)),
    };
    let refuse = |why: String| {
        Err(Error::io(
            format!("bearer token file {}", path.display()),
            std::io::Error::new(std::io::ErrorKind::PermissionDenied, why),
        ))
    };
    let me = uid()?;
    if meta.uid() != me {
        return refuse(format!("owned by user {}, not by this user ({me}): not used", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return refuse(format!(
            "mode {:04o} lets others read it: not used (chmod 600 {})",
            meta.mode() & 0o7777,
            path.display()
        ));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io(format!("bearer token file {}", path.display()), e))?;
    Ok(non_empty(&text))
}

/// The token, if one is found (see the [module documentation](self)).
pub(crate) fn discover() -> Result<Option<String>> {
    if let Ok(token) = std::env::var("BEARER_TOKEN") {
        return Ok(non_empty(&token));
    }
    if let Ok(path) = std::env::var("BEARER_TOKEN_FILE") {
        return read_file(Path::new(&path));
    }
    let uid = uid()?;
    if let Ok(dir) = std::env::var("XDG_RUNTIME_DIR") {
        if let Some(token) = read_file(&PathBuf::from(dir).join(format!("bt_u{uid}")))? {
            return Ok(Some(token));
        }
    }
    read_file(&PathBuf::from(format!("/tmp/bt_u{uid}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        assert!(host_matches("eos.example, other", "EOS.example"));
        assert!(host_matches(".example.org", "a.b.example.org"));
        assert!(host_matches(".example.org", "example.org"));
        assert!(!host_matches(".example.org", "badexample.org"));
        assert!(!host_matches("example.org", "a.example.org"));
        assert!(!host_matches("", "h"));
        assert!(!host_matches(" , ", "h"));
        assert!(host_matches("*", "anything"));
    }
}
