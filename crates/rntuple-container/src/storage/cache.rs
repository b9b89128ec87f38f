//! A local cache of remote bytes without read amplification: it stores
//! exactly the byte ranges fetched (never rounded to blocks), keyed by the
//! URL and the remote object's [`Identity`] (size and version, so a changed
//! remote file is never served stale).
//!
//! Layout under the cache directory:
//!
//! ```text
//! DIR/.lock                      lock file: shared while reading or adding,
//!                                exclusive while evicting
//! DIR/<key>/key                  the URL and identity the entries belong to
//! DIR/<key>/<offset>-<len>       one entry per range fetched (hex numbers)
//!
//! entry = "RNTC" | u32 format (1) | u64 offset | u64 len | u64 xxh3-64 of payload | payload
//!         (integers little-endian)
//! ```
//!
//! `<key>` is the xxh3-64 (hex) of the key text, which holds the URL without
//! its credentials ([`redact_url`]: no userinfo, no token or signature in
//! the query), so neither the key file nor the name tells a secret. An entry is written to a
//! temporary file and renamed into place, so a reader sees a whole entry or
//! none; an entry whose header or checksum does not match (a torn write, a
//! damaged disk) is never served: it is a miss and is deleted. Reading an
//! entry refreshes its modification time; when the cache grows past its
//! size cap, the least recently used entries go first.
//!
//! The cache is private to its user: the directory is created `0700`; an
//! existing one owned by another user, or that group or others can write,
//! is refused (they could replace entries, and the checksum, which anyone
//! can recompute, does not stop that); one that group or others can read
//! (`0755`) is refused too, with the fix (`chmod 700 DIR`) in the message,
//! rather than tightened: what it holds was fetched with the user's
//! credentials, and its mode is the user's to change. Files are created exclusively under
//! random names, `0600`, never through a symbolic link (`O_EXCL`,
//! `O_NOFOLLOW`); entries are opened without following links; eviction
//! walks the cache's own directories only, never into a linked one.
//!
//! A read answered partly from the cache fetches only the missing
//! sub-ranges, in one vectored request to the remote store.
//!
//! File locks (`File::lock_shared`, `File::try_lock`) are stable since Rust
//! 1.89, above the workspace's declared 1.85: this module needs 1.89.
#![allow(clippy::incompatible_msrv)]

use std::fs::{self, File};
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use super::owner::uid;
use super::redact::redact_url;
use rntuple_format::checksum::xxh3_64;
use rntuple_format::{Error, Result};

use super::{
    check_range, check_ranges_into, read_ranges_via_into, Identity, IoHints, ReadAt, TransportCounters, TransportStats,
};

/// The environment variable naming a cache directory for remote reads.
pub const CACHE_DIR_ENV: &str = "RNTUPLE_CACHE_DIR";
/// The environment variable giving the cache's size cap in bytes.
pub const CACHE_MAX_BYTES_ENV: &str = "RNTUPLE_CACHE_MAX_BYTES";
/// The default size cap: 10 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 10 << 30;

const MAGIC: &[u8; 4] = b"RNTC";
const FORMAT: u32 = 1;
const ENTRY_HEADER: usize = 32;
/// A temporary file older than this was left by a process that died.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// Where a cache lives and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// The cache directory (created when missing).
    pub dir: PathBuf,
    /// Size cap of all entries together, in bytes.
    pub max_bytes: u64,
}

impl CacheConfig {
    /// A cache in `dir` with the default size cap.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into(), max_bytes: DEFAULT_MAX_BYTES }
    }

    /// The cache of this process: the one set with [`set_process_cache`]
    /// (a command's `--cache DIR`), else the environment's ([`CacheConfig::from_env`]).
    pub fn for_process() -> Option<Self> {
        let set = PROCESS_CACHE.read().unwrap_or_else(PoisonError::into_inner).clone();
        set.or_else(Self::from_env)
    }

    /// The cache the environment asks for: [`CACHE_DIR_ENV`], with the cap
    /// of [`CACHE_MAX_BYTES_ENV`] when set; `None` without a directory.
    pub fn from_env() -> Option<Self> {
        let dir = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty())?;
        let max_bytes = std::env::var(CACHE_MAX_BYTES_ENV).ok().and_then(|v| v.trim().parse().ok());
        Some(Self { dir: dir.into(), max_bytes: max_bytes.unwrap_or(DEFAULT_MAX_BYTES) })
    }
}

static PROCESS_CACHE: RwLock<Option<CacheConfig>> = RwLock::new(None);

/// Sets the cache every later remote open of this process uses when its
/// caller names none (in front of `RNTUPLE_CACHE_DIR`); `None` unsets it.
pub fn set_process_cache(config: Option<CacheConfig>) {
    *PROCESS_CACHE.write().unwrap_or_else(PoisonError::into_inner) = config;
}

/// A [`ReadAt`] that answers from a local cache what it fetched before and
/// fetches the rest from `inner` (see the [module documentation](self)).
#[derive(Debug)]
pub struct CachedStorage {
    inner: Arc<dyn ReadAt>,
    identity: Identity,
    root: PathBuf,
    entries: PathBuf,
    max_bytes: u64,
    counters: TransportCounters,
    url: String,
}

impl CachedStorage {
    /// Wraps `inner`, the object at `url`, with the cache `config`.
    pub fn new(inner: Arc<dyn ReadAt>, url: &str, config: &CacheConfig) -> Result<Self> {
        let identity = inner.identity()?;
        let url = redact_url(url);
        let key_text =
            format!("url {url}\nsize {}\nversion {}\n", identity.size, identity.version.as_deref().unwrap_or("-"));
        let entries = config.dir.join(format!("{:016x}", xxh3_64(key_text.as_bytes())));
        let io = |what: &str, e| Error::io(format!("cache {what} {}", config.dir.display()), e);
        private_dir(&config.dir, true)?;
        private_dir(&entries, false)?;
        let key_path = entries.join("key");
        match read_nofollow(&key_path) {
            Ok(stored) if stored == key_text.as_bytes() => {}
            // Two keys with one hash: this object is not cached at all.
            Ok(_) => return Err(Error::invalid(format!("cache key collision for {url}"))),
            Err(_) => write_atomically(&entries, &key_path, key_text.as_bytes()).map_err(|e| io("key of", e))?,
        }
        Ok(Self {
            inner,
            identity,
            root: config.dir.clone(),
            entries,
            max_bytes: config.max_bytes,
            counters: TransportCounters::default(),
            url: url.to_string(),
        })
    }

    /// The entries of this object, sorted by offset: `(offset, len, path)`.
    fn list(&self) -> Vec<(u64, u64, PathBuf)> {
        let mut out: Vec<_> = fs::read_dir(&self.entries)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|d| d.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|d| {
                let name = d.file_name();
                let (o, l) = name.to_str()?.split_once('-')?;
                Some((u64::from_str_radix(o, 16).ok()?, u64::from_str_radix(l, 16).ok()?, d.path()))
            })
            .collect();
        out.sort();
        out
    }

    /// Reads `ranges` into `out` (one after the other): the parts held by
    /// whole, valid entries from the cache, the rest in one vectored request.
    fn read_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        let lock = self.lock_file()?;
        lock.lock_shared().map_err(|e| Error::io(format!("locking the cache {}", self.root.display()), e))?;
        let entries = self.list();
        let mut loaded: Vec<Option<Option<Vec<u8>>>> = vec![None; entries.len()];
        // Missing pieces: (file offset, len, position in `out`).
        let mut missing: Vec<(u64, usize, usize)> = Vec::new();
        let mut pos = 0usize;
        for &(offset, len) in ranges {
            let end = offset + len as u64;
            let mut at = offset;
            let first = entries.partition_point(|e| e.0 + e.1 <= offset);
            for (i, (e_off, e_len, path)) in entries.iter().enumerate().skip(first) {
                if *e_off >= end {
                    break;
                }
                let e_end = e_off + e_len;
                if e_end <= at {
                    continue;
                }
                let payload = loaded[i].get_or_insert_with(|| load_entry(path, *e_off, *e_len));
                let Some(payload) = payload else { continue };
                if *e_off > at {
                    missing.push((at, (*e_off - at) as usize, pos + (at - offset) as usize));
                    at = *e_off;
                }
                let upto = e_end.min(end);
                let src = &payload[(at - e_off) as usize..(upto - e_off) as usize];
                let dst = pos + (at - offset) as usize;
                out[dst..dst + src.len()].copy_from_slice(src);
                self.counters.cache_hit(src.len() as u64);
                at = upto;
            }
            if at < end {
                missing.push((at, (end - at) as usize, pos + (at - offset) as usize));
            }
            pos += len;
        }
        if !missing.is_empty() {
            let want: Vec<(u64, usize)> = missing.iter().map(|&(o, l, _)| (o, l)).collect();
            let fetched = self.inner.read_ranges(&want)?;
            for (&(offset, len, dst), bytes) in missing.iter().zip(&fetched) {
                out[dst..dst + len].copy_from_slice(bytes);
                // A cache that cannot store is only slower.
                let _ = self.store(offset, bytes);
            }
        }
        drop(lock);
        if !missing.is_empty() {
            self.evict();
        }
        Ok(())
    }

    fn lock_file(&self) -> Result<File> {
        let path = self.root.join(".lock");
        File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| Error::io(format!("cache lock {}", path.display()), e))
    }

    /// Writes one entry atomically.
    fn store(&self, offset: u64, payload: &[u8]) -> std::io::Result<()> {
        // The copy is fallible (the payload's size comes from the file): an
        // entry the memory cannot hold is not kept.
        let Ok(mut bytes) = rntuple_format::alloc::try_with_capacity(ENTRY_HEADER + payload.len(), String::new) else {
            return Ok(());
        };
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&FORMAT.to_le_bytes());
        bytes.extend_from_slice(&offset.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&xxh3_64(payload).to_le_bytes());
        bytes.extend_from_slice(payload);
        let path = self.entries.join(format!("{offset:016x}-{:016x}", payload.len()));
        write_atomically(&self.entries, &path, &bytes)
    }

    /// Deletes the least recently used entries of the whole cache until it
    /// fits its cap, and temporary files left by dead processes. Skipped
    /// when another process is evicting.
    fn evict(&self) {
        let Ok(lock) = self.lock_file() else { return };
        if lock.try_lock().is_err() {
            return;
        }
        let mut all: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let now = SystemTime::now();
        // Only the cache's own directories and files: a symbolic link (to a
        // directory or a file) is neither entered nor counted nor deleted.
        let own_dirs = fs::read_dir(&self.root).into_iter().flatten().flatten();
        for dir in own_dirs.filter(|d| d.file_type().is_ok_and(|t| t.is_dir())) {
            for f in fs::read_dir(dir.path()).into_iter().flatten().flatten() {
                if !f.file_type().is_ok_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(meta) = f.metadata() else { continue };
                let name = f.file_name();
                let time = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if name.to_string_lossy().starts_with(".tmp") {
                    if now.duration_since(time).is_ok_and(|age| age > STALE_TMP) {
                        let _ = fs::remove_file(f.path());
                    }
                } else if name != "key" {
                    all.push((time, meta.len(), f.path()));
                }
            }
        }
        let mut total: u64 = all.iter().map(|e| e.1).sum();
        all.sort();
        for (_, len, path) in all {
            if total <= self.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// The payload of the entry at `path` for `offset..offset + len`, if whole
/// and valid; a damaged entry is deleted. Refreshes its use time.
fn load_entry(path: &Path, offset: u64, len: u64) -> Option<Vec<u8>> {
    let read = || -> std::io::Result<Option<Vec<u8>>> {
        let mut f = File::options().read(true).write(true).custom_flags(libc::O_NOFOLLOW).open(path)?;
        // (A size the allocator refuses: a miss; the fetch allocates fallibly.)
        let Ok(mut bytes) = rntuple_format::alloc::try_with_capacity(ENTRY_HEADER + len as usize, String::new) else {
            return Ok(None);
        };
        f.read_to_end(&mut bytes)?;
        let word = |at: usize| bytes.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        let valid = bytes.len() as u64 == ENTRY_HEADER as u64 + len
            && bytes[..4] == *MAGIC
            && bytes[4..8] == FORMAT.to_le_bytes()
            && word(8) == Some(offset)
            && word(16) == Some(len)
            && word(24) == Some(xxh3_64(&bytes[ENTRY_HEADER..]));
        if !valid {
            return Ok(None);
        }
        let _ = f.set_modified(SystemTime::now());
        bytes.drain(..ENTRY_HEADER);
        Ok(Some(bytes))
    };
    match read() {
        Ok(Some(payload)) => Some(payload),
        Ok(None) => {
            let _ = fs::remove_file(path);
            None
        }
        Err(_) => None,
    }
}

/// Makes sure `dir` is a directory private to this user: created `0700`
/// when missing; refused, with an error naming it, when another user owns
/// it or group or others can write it. The cache's own subdirectories
/// (`root` false) must not be symbolic links either; the root may be one
/// (the user named it).
fn private_dir(dir: &Path, root: bool) -> Result<()> {
    let io = |e| Error::io(format!("cache directory {}", dir.display()), e);
    match fs::DirBuilder::new().mode(0o700).recursive(root).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    let meta = if root { fs::metadata(dir) } else { fs::symlink_metadata(dir) }.map_err(io)?;
    let refuse = |why: String| {
        Err(Error::io(
            format!("cache directory {}", dir.display()),
            std::io::Error::new(std::io::ErrorKind::PermissionDenied, why),
        ))
    };
    if !meta.is_dir() {
        return refuse("not a directory (a symbolic link or a file is not followed)".into());
    }
    let me = uid()?;
    if meta.uid() != me {
        return refuse(format!(
            "owned by user {}, not by this user ({me}): another user could replace its entries; choose a directory of your own",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return refuse(format!(
            "mode {:04o} lets group or others write to it, so they could replace its entries (chmod 700 {})",
            meta.mode() & 0o7777,
            dir.display()
        ));
    }
    // Readable (or searchable) by others: refused too, not tightened. The
    // entries hold what this user's credentials fetched, so others must not
    // read them; and the directory is the user's to change (it may be one
    // shared on purpose, or not only a cache), so its mode is not changed
    // behind their back: the message says how (as ssh does for a readable key).
    if meta.mode() & 0o077 != 0 {
        return refuse(format!(
            "mode {:04o} lets group or others read it, and the cache holds what your credentials fetched \
             (chmod 700 {}, or choose a directory of your own)",
            meta.mode() & 0o7777,
            dir.display()
        ));
    }
    Ok(())
}

/// Reads a whole file without following a symbolic link at `path`.
fn read_nofollow(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = File::options().read(true).custom_flags(libc::O_NOFOLLOW).open(path)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A name nobody can guess: 128 bits from the process's random hash keys,
/// the process id, a counter and the time.
fn random_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let word = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u64(n);
        h.write_u32(std::process::id());
        h.write_u128(now);
        h.finish()
    };
    format!("{:016x}{:016x}", word(1), word(2))
}

/// Writes `bytes` to a new temporary file in `dir` (created exclusively,
/// `0600`, under a random name, never through a symbolic link), then
/// renames it to `path`.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".tmp-{}", random_name()));
    let created = File::options().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(&tmp);
    let result = created.and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_data()
    });
    let result = result.and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

impl ReadAt for CachedStorage {
    fn size(&self) -> Result<u64> {
        Ok(self.identity.size)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.identity.size, "read")?;
        self.read_into(&[(offset, buf.len())], buf).map_err(|e| e.within(&self.url))
    }

    fn identity(&self) -> Result<Identity> {
        Ok(self.identity.clone())
    }

    fn hints(&self) -> IoHints {
        self.inner.hints()
    }

    fn transport_stats(&self) -> Option<TransportStats> {
        let own = self.counters.snapshot();
        let wire = self.inner.transport_stats().unwrap_or_default();
        Some(TransportStats { cache_hits: own.cache_hits, cache_bytes: own.cache_bytes, ..wire })
    }

    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        read_ranges_via_into(self, self.identity.size, ranges)
    }

    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        check_ranges_into(ranges, self.identity.size, out.len())?;
        self.read_into(ranges, out)
    }
}
