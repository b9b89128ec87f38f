//! The cache of remote bytes (`storage::cache`): exactly the ranges fetched,
//! only the missing sub-ranges fetched again, keyed by the remote identity,
//! torn entries never served, size-capped with least-recently-used eviction,
//! and several users of one directory at once.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rntuple_container::storage::{open_storage_with, register_backend, Backend, CacheConfig, CachedStorage};
use rntuple_container::{Identity, MemoryStorage, ReadAt, TransportStats};
use rntuple_format::Result;

/// A "remote" store in memory that records every call it answers.
#[derive(Debug)]
struct Remote {
    data: MemoryStorage,
    version: Mutex<String>,
    calls: Mutex<Vec<Vec<(u64, usize)>>>,
    bytes: AtomicU64,
}

impl Remote {
    fn new(len: usize) -> Arc<Self> {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        Arc::new(Remote {
            data: MemoryStorage::from(data),
            version: Mutex::new("v1".into()),
            calls: Mutex::default(),
            bytes: 0.into(),
        })
    }

    fn take_calls(&self) -> Vec<Vec<(u64, usize)>> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    fn expected(&self, offset: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0; len];
        self.data.read_exact_at(offset, &mut buf).unwrap();
        buf
    }
}

impl ReadAt for Remote {
    fn size(&self) -> Result<u64> {
        self.data.size()
    }
    fn identity(&self) -> Result<Identity> {
        Ok(Identity { size: self.data.size()?, version: Some(self.version.lock().unwrap().clone()) })
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.read_ranges_into(&[(offset, buf.len())], buf)
    }
    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        self.calls.lock().unwrap().push(ranges.to_vec());
        self.bytes.fetch_add(out.len() as u64, Ordering::Relaxed);
        self.data.read_ranges_into(ranges, out)
    }
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        let total = ranges.iter().map(|r| r.1).sum();
        let mut all = vec![0; total];
        self.read_ranges_into(ranges, &mut all)?;
        let mut at = 0;
        Ok(ranges
            .iter()
            .map(|r| {
                at += r.1;
                all[at - r.1..at].to_vec()
            })
            .collect())
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rntuple-cache-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Payload bytes of every entry in the cache (files other than `key` and the lock).
fn entries(dir: &PathBuf) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for sub in std::fs::read_dir(dir).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name != "key" {
                out.push((name, f.metadata().unwrap().len() - 32));
            }
        }
    }
    out.sort();
    out
}

fn cached(remote: &Arc<Remote>, config: &CacheConfig) -> CachedStorage {
    CachedStorage::new(remote.clone(), "test://host/file.root", config).unwrap()
}

#[test]
fn stores_exactly_the_ranges_fetched_and_fetches_only_what_is_missing() {
    let dir = temp_dir("exact");
    let config = CacheConfig::new(&dir);
    let remote = Remote::new(100_000);
    let c = cached(&remote, &config);
    assert_eq!(c.read_ranges(&[(1000, 50), (5000, 7)]).unwrap(), [remote.expected(1000, 50), remote.expected(5000, 7)]);
    assert_eq!(remote.take_calls(), [vec![(1000, 50), (5000, 7)]]);
    // No rounding to blocks: one entry per range, of its exact length.
    assert_eq!(entries(&dir), [(format!("{:016x}-{:016x}", 1000, 50), 50), (format!("{:016x}-{:016x}", 5000, 7), 7)]);

    // Partly held: only the missing sub-ranges go out, in one call.
    let mut buf = vec![0; 100];
    c.read_exact_at(980, &mut buf).unwrap();
    assert_eq!(buf, remote.expected(980, 100));
    assert_eq!(remote.take_calls(), [vec![(980, 20), (1050, 30)]]);
    assert_eq!(c.transport_stats().unwrap(), TransportStats { cache_hits: 1, cache_bytes: 50, ..Default::default() });

    // A second user of the directory (another process) reads all from the cache.
    let again = cached(&remote, &config);
    let mut out = vec![0; 107];
    again.read_ranges_into(&[(980, 100), (5000, 7)], &mut out).unwrap();
    assert_eq!(out[..100], remote.expected(980, 100));
    assert_eq!(out[100..], remote.expected(5000, 7));
    assert!(remote.take_calls().is_empty());
    assert_eq!(remote.bytes.load(Ordering::Relaxed), 107);
    let stats = again.transport_stats().unwrap();
    assert_eq!((stats.cache_hits, stats.cache_bytes, stats.bytes_transferred), (4, 107, 0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_remote_file_is_never_served_stale() {
    let dir = temp_dir("identity");
    let config = CacheConfig::new(&dir);
    let remote = Remote::new(10_000);
    cached(&remote, &config).read_ranges(&[(0, 100)]).unwrap();
    *remote.version.lock().unwrap() = "v2".into();
    remote.take_calls();
    cached(&remote, &config).read_ranges(&[(0, 100)]).unwrap();
    assert_eq!(remote.take_calls(), [vec![(0, 100)]]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_or_damaged_entry_is_a_miss_and_is_deleted() {
    let dir = temp_dir("torn");
    let config = CacheConfig::new(&dir);
    let remote = Remote::new(10_000);
    cached(&remote, &config).read_ranges(&[(100, 200), (1000, 200)]).unwrap();
    let sub = std::fs::read_dir(&dir).unwrap().flatten().find(|d| d.path().is_dir()).unwrap().path();
    // One entry cut short (a crash mid-write of a non-atomic writer), one with a flipped byte.
    let torn = sub.join(format!("{:016x}-{:016x}", 100, 200));
    let bytes = std::fs::read(&torn).unwrap();
    std::fs::write(&torn, &bytes[..bytes.len() - 10]).unwrap();
    let bad = sub.join(format!("{:016x}-{:016x}", 1000, 200));
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&bad, &bytes).unwrap();
    remote.take_calls();
    let c = cached(&remote, &config);
    assert_eq!(
        c.read_ranges(&[(100, 200), (1000, 200)]).unwrap(),
        [remote.expected(100, 200), remote.expected(1000, 200)]
    );
    assert_eq!(remote.take_calls(), [vec![(100, 200), (1000, 200)]]);
    assert_eq!(c.transport_stats().unwrap().cache_hits, 0);
    // Fetched again and stored whole.
    assert_eq!(entries(&dir).iter().map(|e| e.1).collect::<Vec<_>>(), [200, 200]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_least_recently_used_entries_go_when_the_cap_is_reached() {
    let dir = temp_dir("lru");
    let config = CacheConfig { dir: dir.clone(), max_bytes: 3 * (1000 + 32) };
    let remote = Remote::new(100_000);
    let c = cached(&remote, &config);
    for offset in [0, 10_000, 20_000] {
        c.read_ranges(&[(offset, 1000)]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Use the first again, then add a fourth: the second (least recently used) goes.
    c.read_ranges(&[(0, 1000)]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    c.read_ranges(&[(30_000, 1000)]).unwrap();
    let names: Vec<String> = entries(&dir).into_iter().map(|e| e.0).collect();
    let name = |o: u64| format!("{o:016x}-{:016x}", 1000);
    assert_eq!(names, [name(0), name(20_000), name(30_000)]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_users_at_once_read_the_right_bytes() {
    let dir = temp_dir("concurrent");
    let config = CacheConfig::new(&dir);
    let remote = Remote::new(1 << 20);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (remote, config) = (remote.clone(), config.clone());
            s.spawn(move || {
                let c = cached(&remote, &config);
                for i in 0..50u64 {
                    let offset = (i * 7919 + t * 104_729) % 1_000_000;
                    let len = 1 + ((i * 31 + t) % 5000) as usize;
                    assert_eq!(c.read_ranges(&[(offset, len)]).unwrap(), [remote.expected(offset, len)]);
                }
            });
        }
    });
    // Every entry is whole and valid: a fresh reader serves them all without the remote.
    let c = cached(&remote, &config);
    remote.take_calls();
    for (name, len) in entries(&dir) {
        let offset = u64::from_str_radix(name.split('-').next().unwrap(), 16).unwrap();
        assert_eq!(c.read_ranges(&[(offset, len as usize)]).unwrap(), [remote.expected(offset, len as usize)]);
    }
    assert!(remote.take_calls().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A registered scheme is read through the cache given to `open_storage_with`;
/// local files never are.
#[derive(Debug)]
struct TestBackend(Arc<Remote>);

impl Backend for TestBackend {
    fn open(&self, _url: &str) -> Result<Arc<dyn ReadAt>> {
        Ok(self.0.clone())
    }
}

#[test]
fn remote_urls_go_through_the_cache_and_local_files_do_not() {
    let dir = temp_dir("dispatch");
    let config = CacheConfig::new(&dir);
    let remote = Remote::new(10_000);
    register_backend("cachetest", Arc::new(TestBackend(remote.clone())));
    for _ in 0..2 {
        let s = open_storage_with("cachetest://host/f.root", Some(&config)).unwrap();
        let mut buf = [0; 10];
        s.read_exact_at(5, &mut buf).unwrap();
    }
    assert_eq!(remote.take_calls(), [vec![(5, 10)]]);
    let local = std::env::temp_dir().join(format!("rntuple-cache-local-{}", std::process::id()));
    std::fs::write(&local, [1u8; 64]).unwrap();
    let s = open_storage_with(local.to_str().unwrap(), Some(&config)).unwrap();
    assert!(s.transport_stats().is_none(), "{s:?}");
    assert_eq!(entries(&dir).len(), 1);
    let _ = std::fs::remove_file(&local);
    let _ = std::fs::remove_dir_all(&dir);
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn permission_error(err: &rntuple_format::Error) -> bool {
    matches!(err, rntuple_format::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied)
}

#[test]
fn the_cache_directory_is_created_private_and_one_others_can_write_or_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let parent = temp_dir("private");
    let dir = parent.join("a/cache");
    let remote = Remote::new(10_000);
    cached(&remote, &CacheConfig::new(&dir)).read_ranges(&[(0, 10)]).unwrap();
    assert_eq!(mode(&dir), 0o700);
    for sub in std::fs::read_dir(&dir).unwrap().flatten() {
        let want = if sub.path().is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&sub.path()), want, "{}", sub.path().display());
        for f in std::fs::read_dir(sub.path()).into_iter().flatten().flatten() {
            assert_eq!(mode(&f.path()), 0o600, "{}", f.path().display());
        }
    }

    // A shared directory anyone can write (as a careless /tmp/cache would be).
    let shared = parent.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    for open in [0o777, 0o775, 0o1777] {
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(open)).unwrap();
        let err = CachedStorage::new(remote.clone(), "test://host/file.root", &CacheConfig::new(&shared)).unwrap_err();
        assert!(permission_error(&err), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(&shared.display().to_string()) && text.contains("write"), "{text}");
    }
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0, "nothing was written into the refused directory");
    // Readable by others (a plain `mkdir` under umask 022): refused as well, its mode left as it
    // was, the message saying how to make it private.
    for readable in [0o755, 0o750, 0o705, 0o711] {
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(readable)).unwrap();
        let err = CachedStorage::new(remote.clone(), "test://host/file.root", &CacheConfig::new(&shared)).unwrap_err();
        assert!(permission_error(&err), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(&format!("chmod 700 {}", shared.display())) && text.contains("read"), "{text}");
        assert_eq!(mode(&shared), readable, "the directory's mode is not changed");
    }
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0, "nothing was written into the refused directory");
    // Private: accepted.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o700)).unwrap();
    cached(&remote, &CacheConfig::new(&shared)).read_ranges(&[(0, 10)]).unwrap();
    let _ = std::fs::remove_dir_all(&parent);
}

#[test]
fn planted_symbolic_links_are_not_followed() {
    use std::os::unix::fs::symlink;
    let parent = temp_dir("symlinks");
    let dir = parent.join("cache");
    let elsewhere = parent.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let victim = elsewhere.join("victim");
    std::fs::write(&victim, b"the victim's data").unwrap();
    let remote = Remote::new(10_000);
    let config = CacheConfig { dir: dir.clone(), max_bytes: 0 };
    let c = cached(&remote, &config);
    assert_eq!(c.read_ranges(&[(100, 10)]).unwrap(), [remote.expected(100, 10)]);

    // A directory of the cache replaced by a link elsewhere: eviction (the cap
    // is 0, so it deletes every entry it sees) does not walk into it.
    symlink(&elsewhere, dir.join("0123456789abcdef")).unwrap();
    // An entry replaced by a link to a forged entry: never read, and its target never deleted.
    let key_dir = std::fs::read_dir(&dir).unwrap().flatten().find(|d| d.file_type().unwrap().is_dir()).unwrap().path();
    let entry = key_dir.join(format!("{:016x}-{:016x}", 200, 10));
    let mut forged = b"RNTC".to_vec();
    forged.extend_from_slice(&1u32.to_le_bytes());
    forged.extend_from_slice(&200u64.to_le_bytes());
    forged.extend_from_slice(&10u64.to_le_bytes());
    forged.extend_from_slice(&rntuple_format::checksum::xxh3_64(&[0xAA; 10]).to_le_bytes());
    forged.extend_from_slice(&[0xAA; 10]);
    let forged_path = elsewhere.join("forged");
    std::fs::write(&forged_path, &forged).unwrap();
    symlink(&forged_path, &entry).unwrap();

    remote.take_calls();
    assert_eq!(c.read_ranges(&[(200, 10)]).unwrap(), [remote.expected(200, 10)], "the forged bytes were served");
    assert_eq!(remote.take_calls(), [vec![(200, 10)]]);
    assert_eq!(std::fs::read(&victim).unwrap(), b"the victim's data");
    assert_eq!(std::fs::read(&forged_path).unwrap(), forged);
    // The fetched bytes replaced the link with an entry of the cache's own (max_bytes 0 evicts it).
    assert!(std::fs::symlink_metadata(&entry).map_or(true, |m| m.file_type().is_file()));

    // A link where the lock file goes is refused, its target untouched.
    std::fs::remove_file(dir.join(".lock")).unwrap();
    symlink(&victim, dir.join(".lock")).unwrap();
    assert!(c.read_ranges(&[(300, 10)]).is_err());
    assert_eq!(std::fs::read(&victim).unwrap(), b"the victim's data");
    // The cache directory's own subdirectory as a link (to a directory this user owns) is refused.
    let linked_cache = parent.join("linked");
    let first = CachedStorage::new(remote.clone(), "test://host/other.root", &CacheConfig::new(&linked_cache)).unwrap();
    drop(first);
    let sub = std::fs::read_dir(&linked_cache).unwrap().flatten().find(|d| d.path().is_dir()).unwrap().path();
    std::fs::remove_dir_all(&sub).unwrap();
    symlink(&elsewhere, &sub).unwrap();
    let err =
        CachedStorage::new(remote.clone(), "test://host/other.root", &CacheConfig::new(&linked_cache)).unwrap_err();
    assert!(permission_error(&err) && err.to_string().contains("symbolic link"), "{err}");
    assert!(!elsewhere.join("key").exists());
    let _ = std::fs::remove_dir_all(&parent);
}

#[test]
fn keys_hold_the_url_without_credentials() {
    let dir = temp_dir("credentials");
    let remote = Remote::new(10_000);
    let config = CacheConfig::new(&dir);
    let secret_url = "https://alice:pa55word@host/file.root?X-Amz-Credential=AKIA1234&X-Amz-Signature=0ddba11&x=1";
    let c = CachedStorage::new(remote.clone(), secret_url, &config).unwrap();
    c.read_ranges(&[(0, 10)]).unwrap();
    let mut texts = Vec::new();
    for sub in std::fs::read_dir(&dir).unwrap().flatten() {
        texts.push(sub.file_name().to_string_lossy().into_owned());
        for f in std::fs::read_dir(sub.path()).into_iter().flatten().flatten() {
            texts.push(f.file_name().to_string_lossy().into_owned());
            texts.push(String::from_utf8_lossy(&std::fs::read(f.path()).unwrap()).into_owned());
        }
    }
    let all = texts.join("\n");
    for secret in ["alice", "pa55word", "AKIA1234", "0ddba11"] {
        assert!(!all.contains(secret), "{secret} in the cache: {all}");
    }
    assert!(
        all.contains("url https://host/file.root?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&x=1\n"),
        "{all}"
    );
    // The same object under another signature is the same entry: no second fetch.
    remote.take_calls();
    let other = "https://host/file.root?X-Amz-Credential=AKIA9&X-Amz-Signature=feed&x=1";
    CachedStorage::new(remote.clone(), other, &config).unwrap().read_ranges(&[(0, 10)]).unwrap();
    assert!(remote.take_calls().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
