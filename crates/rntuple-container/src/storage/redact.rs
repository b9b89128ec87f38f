//! Credentials out of the URLs that are shown: the one function
//! ([`redact_url`]) every message, report, cache key and page that names a
//! URL goes through, and [`redact_text`] for text that may hold URLs.
//!
//! What counts as a credential in a URL:
//!
//! * the userinfo (`user:password@`) of the authority (RFC 3986 §3.2.1):
//!   removed whole;
//! * the value of a query parameter whose name (case-insensitive) contains
//!   `token`, `sig` (S3/GCS `X-Amz-Signature`, `Signature`, Azure `sig`),
//!   `credential` (`X-Amz-Credential` holds the access key id), `secret`,
//!   `pass`, `auth` (XRootD `authz`), `key` (`AWSAccessKeyId`, `apikey`):
//!   replaced with `REDACTED`. The parameter names stay, so a message still
//!   says that a URL was signed.
//!
//! Everything else (scheme, host, port, path, other parameters, fragment)
//! stays as given.

use std::borrow::Cow;

/// What replaces a credential's value.
pub const REDACTED: &str = "REDACTED";

/// Fragments of query parameter names whose values are credentials.
const SECRET_NAMES: [&str; 7] = ["token", "sig", "credential", "secret", "pass", "auth", "key"];

/// Whether the query parameter `name` carries a credential.
fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| lower.contains(s))
}

/// `url` without its credentials (see the [module documentation](self)). A
/// location without `scheme://` (a local path) is returned unchanged.
pub fn redact_url(url: &str) -> Cow<'_, str> {
    let Some(start) = url.find("://").map(|i| i + 3) else { return Cow::Borrowed(url) };
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    let mut out = String::with_capacity(url.len());
    let mut changed = false;
    match url[start..authority_end].rfind('@') {
        Some(at) => {
            out.push_str(&url[..start]);
            out.push_str(&url[start + at + 1..authority_end]);
            changed = true;
        }
        None => out.push_str(&url[..authority_end]),
    }
    let rest = &url[authority_end..];
    let (before_fragment, fragment) = match rest.find('#') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            for (i, param) in query.split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match param.split_once('=') {
                    Some((name, value)) if is_secret_name(name) && !value.is_empty() => {
                        out.push_str(name);
                        out.push('=');
                        out.push_str(REDACTED);
                        changed = true;
                    }
                    _ => out.push_str(param),
                }
            }
        }
        None => out.push_str(before_fragment),
    }
    out.push_str(fragment);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(url)
    }
}

/// `path?query` (or a URL) with the query parameters that carry credentials
/// removed entirely (for data sent on, not shown): `/f?authz=x&a=1` is
/// `/f?a=1`, `/f?authz=x` is `/f`.
pub fn without_credentials(path: &str) -> String {
    let Some((base, query)) = path.split_once('?') else { return path.to_string() };
    let kept: Vec<&str> =
        query.split('&').filter(|p| !p.split_once('=').is_some_and(|(name, _)| is_secret_name(name))).collect();
    if kept.iter().all(|p| p.is_empty()) {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

/// Whether `url` carries a credential [`redact_url`] would remove.
pub fn has_credentials(url: &str) -> bool {
    matches!(redact_url(url), Cow::Owned(_))
}

/// `text` with every URL in it (a `scheme://` run up to white space or a
/// quote or bracket) passed through [`redact_url`].
pub fn redact_text(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let ends = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | '(' | ')' | '[' | ']');
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(sep) = rest.find("://") {
        let start = rest[..sep]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(sep, |(i, _)| i);
        let end = rest[sep + 3..].find(ends).map_or(rest.len(), |i| sep + 3 + i);
        out.push_str(&rest[..start]);
        let url = redact_url(&rest[start..end]);
        changed |= matches!(url, Cow::Owned(_));
        out.push_str(&url);
        rest = &rest[end..];
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_removed_and_the_rest_stays() {
        let cases = [
            ("https://user:pw@host:8443/a/b.root?x=1#f", "https://host:8443/a/b.root?x=1#f"),
            ("root://u@eos.example//store/f.root?authz=ABC&xrd.wantprot=unix", "root://eos.example//store/f.root?authz=REDACTED&xrd.wantprot=unix"),
            (
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc&X-Amz-Security-Token=t",
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&X-Amz-Security-Token=REDACTED",
            ),
            ("https://h/f?sv=2020&sig=s3cr3t&se=1", "https://h/f?sv=2020&sig=REDACTED&se=1"),
            ("https://h/f?access_token=t&AWSAccessKeyId=A", "https://h/f?access_token=REDACTED&AWSAccessKeyId=REDACTED"),
            // An @ in the path is not userinfo.
            ("https://h/a@b.root", "https://h/a@b.root"),
        ];
        for (given, shown) in cases {
            assert_eq!(redact_url(given), shown, "{given}");
            assert!(has_credentials(given) == (given != shown), "{given}");
        }
        for plain in ["data/x.root", "/tmp/a@b?token=1", "s3://bucket/key.root", "http://h/f?entries=10"] {
            assert!(matches!(redact_url(plain), Cow::Borrowed(_)), "{plain}");
        }
    }

    #[test]
    fn credentials_are_dropped_from_data_sent_on() {
        assert_eq!(without_credentials("/f.root?authz=x&a=1"), "/f.root?a=1");
        assert_eq!(without_credentials("/f.root?AuthZ=x"), "/f.root");
        assert_eq!(without_credentials("/f.root?a=1"), "/f.root?a=1");
        assert_eq!(without_credentials("/f.root"), "/f.root");
    }

    #[test]
    fn urls_inside_text_are_redacted() {
        let text = "cannot open 'https://me:pw@h/f.root?token=abc': server answered 403 (https://h/g)";
        assert_eq!(
            redact_text(text),
            "cannot open 'https://h/f.root?token=REDACTED': server answered 403 (https://h/g)"
        );
        assert!(matches!(redact_text("no url here: a/b"), Cow::Borrowed(_)));
    }
}
