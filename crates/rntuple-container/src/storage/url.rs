//! Which storage a location names: a local path, a `file://` URL, or a URL
//! whose scheme picks a registered [`Backend`].
//!
//! Dispatch, in order: a location without `scheme://` is a local path; a
//! `file://` URL is a local path (percent-decoded); any other scheme goes to
//! the backend registered for it with [`register_backend`], else to
//! [`builtin_backend`], which holds the remote backends of DESIGN.md:
//! XRootD (`root`, `xroot`), HTTP (`http`, `https`) and S3 (`s3`).
//! A local path that looks like a URL can be given as `./root://...`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use rntuple_format::{Error, Location, Result};

use super::{CacheConfig, CachedStorage, LocalFile, LocalSink, ReadAt, WriteSink};

/// A storage backend for the URLs of one or more schemes.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Opens the object at `url` for reading.
    fn open(&self, url: &str) -> Result<Arc<dyn ReadAt>>;

    /// Creates the object at `url` for writing; by default unsupported.
    fn create(&self, url: &str) -> Result<Box<dyn WriteSink>> {
        let shown = super::redact::redact_url(url).into_owned();
        Err(Error::unsupported("writing through this storage backend", Location::new(shown, None)))
    }
}

/// A parsed location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageUrl {
    /// A local file: a path, or the path of a `file://` URL.
    Local(PathBuf),
    /// A URL of another scheme (lower-cased), kept whole.
    Remote { scheme: String, url: String },
}

impl StorageUrl {
    /// Parses a path or URL. Only `file://` URLs can be malformed here (a
    /// host other than `localhost`, a bad percent escape); other URLs are
    /// checked by their backend.
    pub fn parse(location: &str) -> Result<Self> {
        let Some(scheme) = scheme_of(location) else {
            return Ok(StorageUrl::Local(PathBuf::from(location)));
        };
        let rest = &location[scheme.len() + 3..];
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "file" {
            return Ok(StorageUrl::Remote { scheme, url: location.to_string() });
        }
        // file:///abs/path or file://localhost/abs/path (RFC 8089).
        let path = if rest.starts_with('/') {
            rest
        } else if let Some(p) = rest.strip_prefix("localhost").filter(|p| p.starts_with('/')) {
            p
        } else {
            let authority = rest.split('/').next().unwrap_or_default();
            // (The host without userinfo: credentials are never shown.)
            let host = authority.rsplit('@').next().unwrap_or_default();
            let shown = super::redact::redact_url(location);
            return Err(Error::invalid(format!("{shown}: a file:// URL names a local file, not one on host '{host}'")));
        };
        let bad = |message| Error::invalid(format!("{}: {message}", super::redact::redact_url(location)));
        Ok(StorageUrl::Local(percent_decode(path).map_err(bad)?))
    }
}

/// The scheme of `location` when it starts with `scheme://` (RFC 3986:
/// a letter, then letters, digits, `+`, `-`, `.`).
fn scheme_of(location: &str) -> Option<&str> {
    let (scheme, _) = location.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(scheme)
}

/// Decodes `%XX` escapes into the bytes of a Unix path.
fn percent_decode(path: &str) -> std::result::Result<PathBuf, String> {
    use std::os::unix::ffi::OsStringExt;
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = byte else {
                return Err(format!("bad percent escape at character {i} of the path"));
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

type Registry = RwLock<HashMap<String, Arc<dyn Backend>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

/// Registers `backend` for the URLs of `scheme` (case-insensitive) for the
/// rest of the process, in front of the built-in ones; returns the backend
/// it replaces. For backends that live outside this crate (tests, bindings).
pub fn register_backend(scheme: &str, backend: Arc<dyn Backend>) -> Option<Arc<dyn Backend>> {
    let mut map = registry().write().unwrap_or_else(PoisonError::into_inner);
    map.insert(scheme.to_ascii_lowercase(), backend)
}

/// The remote schemes this crate knows, with the store they name.
pub const REMOTE_SCHEMES: [(&str, &str); 5] =
    [("root", "XRootD"), ("xroot", "XRootD"), ("http", "HTTP"), ("https", "HTTP"), ("s3", "S3")];

/// The built-in backend of `scheme`: the one place where the remote
/// backends are plugged in (XRootD, HTTP, S3); an unknown scheme is refused
/// with the list of known ones.
pub fn builtin_backend(scheme: &str, url: &str) -> Result<Arc<dyn Backend>> {
    match scheme {
        "root" | "xroot" => Ok(Arc::new(super::XrootdBackend)),
        "http" | "https" => Ok(Arc::new(super::HttpBackend)),
        "s3" => Ok(Arc::new(super::S3Backend)),
        _ => {
            let known: Vec<&str> = REMOTE_SCHEMES.iter().map(|(s, _)| *s).collect();
            Err(Error::unsupported(
                format!("unknown URL scheme '{scheme}' (known: file, {})", known.join(", ")),
                Location::new(super::redact::redact_url(url).into_owned(), None),
            ))
        }
    }
}

fn backend(scheme: &str, url: &str) -> Result<Arc<dyn Backend>> {
    let registered = registry().read().unwrap_or_else(PoisonError::into_inner).get(scheme).cloned();
    match registered {
        Some(b) => Ok(b),
        None => builtin_backend(scheme, url),
    }
}

/// Opens a path or URL for reading (see the [module documentation](self)),
/// a remote one behind the cache of the process
/// ([`CacheConfig::for_process`]: `--cache DIR` or `RNTUPLE_CACHE_DIR`) when
/// there is one.
pub fn open_storage(location: &str) -> Result<Arc<dyn ReadAt>> {
    open_storage_with(location, None)
}

/// Opens a path or URL for reading; a remote one is read through the cache
/// `cache`, else through the one of the process
/// ([`CacheConfig::for_process`]), if any. Local files are never cached.
pub fn open_storage_with(location: &str, cache: Option<&CacheConfig>) -> Result<Arc<dyn ReadAt>> {
    match StorageUrl::parse(location)? {
        StorageUrl::Local(path) => Ok(Arc::new(LocalFile::open(path)?)),
        StorageUrl::Remote { scheme, url } => {
            let storage = backend(&scheme, &url)?.open(&url)?;
            match cache.cloned().or_else(CacheConfig::for_process) {
                Some(config) => Ok(Arc::new(CachedStorage::new(storage, &url, &config)?)),
                None => Ok(storage),
            }
        }
    }
}

/// Creates a path or URL for writing: a [`LocalSink`] for a path or a
/// `file://` URL, else the sink of the scheme's backend.
pub fn create_sink(location: &str) -> Result<Box<dyn WriteSink>> {
    match StorageUrl::parse(location)? {
        StorageUrl::Local(path) => Ok(Box::new(LocalSink::create(path)?)),
        StorageUrl::Remote { scheme, url } => backend(&scheme, &url)?.create(&url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paths_and_urls() {
        let local = |s: &str| StorageUrl::Local(PathBuf::from(s));
        assert_eq!(StorageUrl::parse("data/x.root").unwrap(), local("data/x.root"));
        assert_eq!(StorageUrl::parse("./root://x").unwrap(), local("./root://x"));
        assert_eq!(StorageUrl::parse("a:b/c.root").unwrap(), local("a:b/c.root"));
        assert_eq!(StorageUrl::parse("file:///tmp/a%20b.root").unwrap(), local("/tmp/a b.root"));
        assert_eq!(StorageUrl::parse("FILE://localhost/tmp/x").unwrap(), local("/tmp/x"));
        assert_eq!(
            StorageUrl::parse("root://eos.cern.ch//f.root").unwrap(),
            StorageUrl::Remote { scheme: "root".into(), url: "root://eos.cern.ch//f.root".into() }
        );
        assert_eq!(
            StorageUrl::parse("S3://bucket/key").unwrap(),
            StorageUrl::Remote { scheme: "s3".into(), url: "S3://bucket/key".into() }
        );
        // Not a scheme: digits first, or characters a scheme cannot hold.
        assert_eq!(StorageUrl::parse("1a://x").unwrap(), local("1a://x"));
        assert_eq!(StorageUrl::parse("a b://x").unwrap(), local("a b://x"));
        for bad in ["file://otherhost/x", "file://localhostx/y", "file:///a%2", "file:///a%zz"] {
            assert!(matches!(StorageUrl::parse(bad), Err(Error::InvalidArgument { .. })), "{bad}");
        }
    }

    #[test]
    fn refused_urls_are_named_without_their_credentials() {
        // Each is refused before any connection; the message names the URL, never its secrets.
        let secrets = ["hunter2", "tok123", "sig456", "AKIDEXAMPLE"];
        let check = |what: &str, err: Error| {
            let text = format!("{err} {err:?}");
            assert!(secrets.iter().all(|s| !text.contains(s)), "{what}: {text}");
            assert!(text.contains("REDACTED") || !what.contains('?'), "{what}: {text}");
        };
        for url in [
            "file://alice:hunter2@otherhost/x?token=tok123",
            "file:///a%zz?token=tok123",
            "root://alice:hunter2@h?authz=tok123",
            "xroot://alice:hunter2@h/",
            "s3://Bad_Bucket!/k?X-Amz-Signature=sig456&X-Amz-Credential=AKIDEXAMPLE",
            "gopher://alice:hunter2@h/f.root?token=tok123",
        ] {
            match open_storage(url) {
                Err(e @ (Error::InvalidArgument { .. } | Error::Unsupported { .. })) => check(url, e),
                other => panic!("{url}: {other:?}"),
            }
        }
        for url in [
            "https://alice:hunter2@h/f.root?token=tok123",
            "http://alice:hunter2@h/",
            "root://alice:hunter2@h//f.root?authz=tok123",
            "s3://alice:hunter2@b?X-Amz-Signature=sig456",
        ] {
            match create_sink(url) {
                Err(e @ Error::InvalidArgument { .. }) => check(url, e),
                other => panic!("{url}: {other:?}"),
            }
        }
    }

    #[test]
    fn remote_schemes_have_backends_and_unknown_ones_are_named() {
        // Writing needs a URL that names a file (the writes themselves:
        // tests/python/test_write_*.py, against real servers).
        for url in ["http://h/", "https://h/f.root?x=1", "s3://bucket"] {
            assert!(matches!(create_sink(url), Err(Error::InvalidArgument { .. })), "{url}");
        }
        // A URL naming no file is refused before any connection.
        for url in ["root://h", "xroot://h/"] {
            assert!(matches!(open_storage(url), Err(Error::InvalidArgument { .. })), "{url}");
            assert!(matches!(create_sink(url), Err(Error::InvalidArgument { .. })), "{url}");
        }
        match open_storage("gopher://h/f.root") {
            Err(Error::Unsupported { feature, .. }) => assert!(feature.contains("unknown URL scheme 'gopher'")),
            other => panic!("{other:?}"),
        }
    }
}
