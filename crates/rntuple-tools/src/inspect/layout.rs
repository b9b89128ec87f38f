//! Where each structure lies in the file: the byte map of `rntuple browse`.
//!
//! [`file_regions`] lists the structures of the ROOT container (file header,
//! the `TFile` key with the top directory, streamer info, key list, free
//! segment list, every directory key, an RNTuple anchor among them), as far
//! as they can be read: a corrupt file gives the regions found before the
//! error, and the error. With `walk`, the keys are also walked one by one from
//! `fBEGIN` to `fEND`, which finds what no directory lists: the headers of the
//! `RBlob` keys around envelopes and pages, and free gaps. [`pages`] lists the page locators of one cluster (or
//! all clusters) of a loaded RNTuple with their column, so the caller can
//! colour the bytes by field; the envelopes are in the inspection report
//! ([`super::RNTupleReport`]). Nothing here reads a page.

use rntuple::container::RootFile;
use serde_json::{json, Value};

use crate::load::Loaded;

/// One contiguous structure of the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// `"file header"`, `"top directory"`, `"streamer info"`, `"keys list"`,
    /// `"free segments"`, `"key"` (a directory key: header plus payload),
    /// `"blob key header"` (the header only) or `"free gap"`.
    pub kind: &'static str,
    pub offset: u64,
    /// Bytes on disk.
    pub size: u64,
    /// Key name (class name for a key: `"ROOT::RNTuple"`, …), else empty.
    pub name: String,
    pub class_name: String,
    /// Size of the key header in front of the payload (0 for the file header).
    pub key_len: u64,
}

/// Most keys [`file_regions`] walks (a file with more shows the rest as not
/// listed).
pub const MAX_WALKED_KEYS: usize = 1 << 20;

/// What [`file_regions`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Regions {
    /// In file order.
    pub regions: Vec<Region>,
    /// The error that stopped the listing early (its text), if any.
    pub error: Option<String>,
    /// Why the key walk stopped before `fEND`, if it did: not an error of the
    /// file (writers may leave space no key header describes), but the bytes
    /// after it are not walked.
    pub walk_stopped: Option<String>,
}

/// The container's regions. `walk`: also walk every key (one small read per
/// key: meant for local files).
pub fn file_regions(root: &RootFile, walk: bool) -> Regions {
    let h = root.header();
    let mut out = Vec::new();
    let mut push = |kind, offset: u64, size: u64, name: &str, class: &str, key_len: u64| {
        if size > 0 {
            out.push(Region { kind, offset, size, name: name.into(), class_name: class.into(), key_len });
        }
    };
    // ROOT's TFile layout: the file header occupies [0, fBEGIN); the first key
    // (at fBEGIN) holds the TFile object and its top directory record.
    push("file header", 0, h.begin, "", "", 0);
    let mut error = None;
    match root.key_at(h.begin) {
        Ok(k) => push("top directory", k.seek_key, u64::from(k.nbytes), &k.name, &k.class_name, u64::from(k.key_len)),
        Err(e) => error = Some(e.to_string()),
    }
    push("streamer info", h.seek_info, u64::from(h.nbytes_info), "StreamerInfo", "TList", 0);
    let top = root.top_directory();
    push("keys list", top.seek_keys, u64::from(top.nbytes_keys), "", "KeysList", 0);
    push("free segments", h.seek_free, u64::from(h.nbytes_free), "", "FreeSegments", 0);
    match root.keys() {
        Ok(keys) => {
            for k in keys {
                push("key", k.seek_key, u64::from(k.nbytes), &k.path, &k.class_name, u64::from(k.key_len));
            }
        }
        Err(e) => error = error.or(Some(e.to_string())),
    }
    let mut walk_stopped = None;
    if walk && error.is_none() {
        if let Err(e) = walk_keys(root, &mut out) {
            walk_stopped = Some(e.to_string());
        }
    }
    out.sort_by_key(|r| (r.offset, r.size));
    Regions { regions: out, error, walk_stopped }
}

/// Walks the keys from `fBEGIN` to `fEND` (ROOT writes them back to back; a
/// free gap starts with its length negated, `TFile::WriteFree`/`TKey` with a
/// negative `fNbytes`): adds the header of each `RBlob` key and each gap.
fn walk_keys(root: &RootFile, out: &mut Vec<Region>) -> rntuple::format::Result<()> {
    let (mut pos, end) = (root.header().begin, root.header().end.min(root.size()));
    for _ in 0..MAX_WALKED_KEYS {
        if pos.saturating_add(4) > end {
            break;
        }
        let mut nbytes = [0u8; 4];
        root.storage().read_exact_at(pos, &mut nbytes)?;
        let n = i32::from_be_bytes(nbytes);
        if n < 0 {
            let size = u64::from(n.unsigned_abs());
            out.push(Region {
                kind: "free gap",
                offset: pos,
                size,
                name: String::new(),
                class_name: String::new(),
                key_len: 0,
            });
            pos += size;
            continue;
        }
        let k = root.key_at(pos)?;
        if k.nbytes == 0 {
            let at = rntuple::format::Location::new("key walk", Some(pos));
            return Err(rntuple::format::Error::out_of_spec("a key of 0 bytes", at));
        }
        if k.class_name == "RBlob" {
            let key_len = u64::from(k.key_len);
            out.push(Region {
                kind: "blob key header",
                offset: pos,
                size: key_len,
                name: k.name,
                class_name: k.class_name,
                key_len,
            });
        }
        pos += u64::from(k.nbytes);
    }
    Ok(())
}

/// One page locator (spec "Page Locations": the page list's page records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRecord {
    pub cluster: usize,
    /// Physical column id.
    pub column: u32,
    pub offset: u64,
    /// Bytes of the compressed page, its checksum excluded.
    pub size: u64,
    /// An 8-byte xxh3 checksum follows the page.
    pub checksum: bool,
    pub num_elements: u64,
}

/// The pages of cluster `cluster` (all clusters when `None`) in column
/// order; an unknown cluster id gives none.
pub fn pages(l: &Loaded, cluster: Option<usize>) -> Vec<PageRecord> {
    let mut out = Vec::new();
    for c in l.descriptor.clusters.iter().filter(|c| cluster.is_none_or(|id| c.id == id)) {
        for (col, range) in c.columns.iter().enumerate() {
            for p in &range.pages {
                out.push(PageRecord {
                    cluster: c.id,
                    column: col as u32,
                    offset: p.locator.offset,
                    size: p.locator.size,
                    checksum: p.has_checksum,
                    num_elements: u64::from(p.num_elements),
                });
            }
        }
    }
    out
}

/// JSON of the regions: objects with the fields of [`Region`].
pub fn regions_json(regions: &[Region]) -> Value {
    Value::Array(
        regions
            .iter()
            .map(|r| {
                json!({"kind": r.kind, "offset": r.offset, "size": r.size, "name": r.name,
                       "class": r.class_name, "key_len": r.key_len})
            })
            .collect(),
    )
}

/// JSON of page records, compact: `[cluster, column, offset, size, checksum (0/1), elements]`.
pub fn pages_json(pages: &[PageRecord]) -> Value {
    Value::Array(
        pages
            .iter()
            .map(|p| json!([p.cluster, p.column, p.offset, p.size, u8::from(p.checksum), p.num_elements]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::load::{load, open_root};

    fn data(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
    }

    /// Every key of the file, walked from `fBEGIN` by `fNbytes` (the
    /// independent truth): (offset, size, class name, key header length).
    fn walk(root: &RootFile) -> Vec<(u64, u64, String, u64)> {
        let (mut pos, mut out) = (root.header().begin, Vec::new());
        while pos < root.header().end {
            let k = root.key_at(pos).unwrap();
            out.push((pos, u64::from(k.nbytes), k.class_name.clone(), u64::from(k.key_len)));
            pos += u64::from(k.nbytes);
        }
        out
    }

    #[test]
    fn regions_and_pages_lie_where_the_keys_are() {
        for name in [
            "test_int_multicluster_rntuple_v1-0-0-0.root",
            "test_multiple_cluster_groups_rntuple_v1-0-0-0.root",
            "test_stl_containers_rntuple_v1-0-0-0.root",
        ] {
            let path = data(name);
            let root = open_root(&path, true).unwrap();
            let keys = walk(&root);
            let Regions { regions, error, walk_stopped } = file_regions(&root, false);
            assert_eq!((error, walk_stopped), (None, None), "{name}");
            assert_eq!((regions[0].kind, regions[0].offset, regions[0].size), ("file header", 0, 100));
            // Every region but the file header is one whole key of the walk.
            for r in &regions[1..] {
                assert!(keys.iter().any(|k| k.0 == r.offset && k.1 == r.size), "{name}: {r:?}");
            }
            let anchor = regions.iter().find(|r| r.class_name == "ROOT::RNTuple").unwrap();
            assert!(keys.contains(&(anchor.offset, anchor.size, "ROOT::RNTuple".into(), anchor.key_len)));
            for kind in ["top directory", "streamer info", "keys list", "free segments"] {
                assert_eq!(regions.iter().filter(|r| r.kind == kind).count(), 1, "{name}: {kind}");
            }

            // Pages: each inside the payload of one RBlob key, checksum included.
            let loaded = load(Arc::clone(&root), name, &anchor.name, true).unwrap();
            let all = pages(&loaded, None);
            let blobs: Vec<_> = keys.iter().filter(|k| k.2 == "RBlob").collect();
            for p in &all {
                let end = p.offset + p.size + if p.checksum { 8 } else { 0 };
                assert!(blobs.iter().any(|k| k.0 + k.3 <= p.offset && end <= k.0 + k.1), "{name}: {p:?}");
            }
            let expected: usize =
                loaded.descriptor.clusters.iter().flat_map(|c| &c.columns).map(|r| r.pages.len()).sum();
            assert_eq!(all.len(), expected, "{name}");
            // Per cluster: the same records, split.
            let mut split = Vec::new();
            for c in &loaded.descriptor.clusters {
                let one = pages(&loaded, Some(c.id));
                assert!(one.iter().all(|p| p.cluster == c.id));
                split.extend(one);
            }
            assert_eq!(split, all, "{name}");
            assert!(pages(&loaded, Some(usize::MAX)).is_empty());

            // Walking the keys adds every RBlob key's header: then regions,
            // envelopes and pages (checksums included) cover the file.
            let Regions { regions: walked, error, walk_stopped } = file_regions(&root, true);
            assert_eq!((error, walk_stopped), (None, None), "{name}");
            let headers: Vec<_> = walked.iter().filter(|r| r.kind == "blob key header").collect();
            assert_eq!(headers.len(), blobs.len(), "{name}");
            let a = &loaded.anchor;
            let mut spans: Vec<(u64, u64)> = walked.iter().map(|r| (r.offset, r.offset + r.size)).collect();
            spans.push((a.seek_header, a.seek_header + a.nbytes_header));
            spans.push((a.seek_footer, a.seek_footer + a.nbytes_footer));
            for g in &loaded.footer.cluster_groups {
                spans.push((g.page_list.locator.offset, g.page_list.locator.offset + g.page_list.locator.size));
            }
            spans.extend(all.iter().map(|p| (p.offset, p.offset + p.size + if p.checksum { 8 } else { 0 })));
            spans.sort_unstable();
            let mut end = 0;
            for (from, to) in spans {
                assert!(from <= end, "{name}: bytes {end}..{from} are in no region");
                end = end.max(to);
            }
            assert_eq!(end, root.size(), "{name}");
            assert_eq!(pages_json(&all[..1])[0][2], all[0].offset);
        }
    }

    #[test]
    fn a_file_cut_in_its_key_list_gives_the_regions_before_the_error() {
        let root = open_root(&data("bad/truncated_in_key_list.root"), true).unwrap();
        let Regions { regions, error, .. } = file_regions(&root, true);
        assert_eq!(regions[0].kind, "file header");
        assert!(regions.iter().any(|r| r.kind == "top directory"));
        assert!(!regions.iter().any(|r| r.kind == "key"));
        assert!(error.unwrap().contains("key list"));
    }
}
