//! The one envelope loader: anchor, header, footer and page lists of one
//! RNTuple, as stored (spec "Anchor schema", "Envelopes", "Header
//! Envelope", "Footer Envelope", "Page List Envelope"), under the allocation
//! guard ([`guard_expansion`]) and a checksum policy ([`Checks`]).
//!
//! The reader ([`crate::RNTuple`]) and the tools (inspect, verify, merge)
//! all load through [`load_envelopes`]; the reader stops at the first
//! problem, `verify` reports each one and goes on where it can.

use rntuple_container::{Anchor, KeyInfo, RootFile};
use rntuple_format::compression::{decompress, guard_expansion};
use rntuple_format::envelope::{header_checksum, parse_footer, parse_header, parse_page_list};
use rntuple_format::model::{Footer, Header, PageList};
use rntuple_format::{Error, Location, Result};

/// A problem found while loading or unsealing, with the name of the check
/// that found it (`"anchor"`, `"envelope"`, `"checksum"`, `"page"`, ...) and
/// the byte offset of what was being read.
#[derive(Debug)]
pub struct Found {
    pub check: &'static str,
    pub offset: Option<u64>,
    pub error: Error,
}

impl From<Found> for Error {
    fn from(f: Found) -> Self {
        f.error
    }
}

/// The checksum and problem policy of loading ([`load_envelopes`]) and of
/// unsealing pages ([`crate::unseal_page`]).
pub enum Checks<'a> {
    /// Stop at the first problem and return it; verify xxh3 checksums when
    /// `verify_checksums` (the reader).
    Stop { verify_checksums: bool },
    /// Verify every checksum; hand each problem that the work can go past
    /// (a checksum mismatch: the bytes are then used as they are) to the
    /// callback and continue. Problems that stop the work are reported too
    /// before being returned (`verify`).
    Report(&'a mut dyn FnMut(Found)),
}

impl std::fmt::Debug for Checks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Checks::Stop { verify_checksums } => write!(f, "Checks::Stop {{ verify_checksums: {verify_checksums} }}"),
            Checks::Report(_) => write!(f, "Checks::Report"),
        }
    }
}

impl Checks<'_> {
    /// Whether checksums are verified.
    pub fn verifies(&self) -> bool {
        match self {
            Checks::Stop { verify_checksums } => *verify_checksums,
            Checks::Report(_) => true,
        }
    }

    /// A problem the work can go past: returned when stopping, else reported.
    pub fn recoverable(&mut self, found: Found) -> Result<(), Found> {
        match self {
            Checks::Stop { .. } => Err(found),
            Checks::Report(report) => {
                report(found);
                Ok(())
            }
        }
    }

    /// A problem that stops the work: reported when reporting, and returned
    /// as the error to stop with.
    fn fatal(&mut self, check: &'static str, offset: Option<u64>, error: Error) -> Found {
        match self {
            Checks::Stop { .. } => Found { check, offset, error },
            Checks::Report(report) => {
                let message = error.to_string();
                report(Found { check, offset, error });
                // The caller ignores what it was told already; keep the text.
                Found { check, offset, error: Error::invalid(message) }
            }
        }
    }

    /// Parses with the checksum when verifying; when reporting, a mismatch is
    /// reported and the bytes parsed again without it, so that later checks
    /// still run.
    fn parse<T>(&mut self, check: &'static str, offset: u64, parse: impl Fn(bool) -> Result<T>) -> Result<T, Found> {
        let verify = self.verifies();
        match parse(verify) {
            Ok(v) => Ok(v),
            Err(e @ Error::ChecksumMismatch { .. }) if matches!(self, Checks::Report(_)) => {
                self.recoverable(Found { check, offset: Some(offset), error: e })?;
                parse(false).map_err(|e| self.fatal(check, Some(offset), e))
            }
            Err(e) => Err(self.fatal(check, Some(offset), e)),
        }
    }
}

/// The envelopes of one RNTuple, as stored.
#[derive(Debug, Clone)]
pub struct Envelopes {
    pub anchor: Anchor,
    /// xxh3-64 of the uncompressed header envelope (what footer and page
    /// lists quote).
    pub header_checksum: u64,
    pub header: Header,
    pub footer: Footer,
    /// One page list per cluster group, in the footer's order; `None` for
    /// one that could not be read (only under [`Checks::Report`]).
    pub page_lists: Vec<Option<PageList>>,
}

impl Envelopes {
    /// Takes the page lists out, failing when one could not be read.
    pub fn take_page_lists(&mut self) -> Result<Vec<PageList>> {
        std::mem::take(&mut self.page_lists)
            .into_iter()
            .enumerate()
            .map(|(g, pl)| pl.ok_or_else(|| Error::NotFound { what: format!("page list of cluster group {g}") }))
            .collect()
    }
}

/// Reads an envelope of `size` bytes on disk at `offset` that inflates to
/// `length` bytes (spec "Envelopes"; compressed as "Compression Block"),
/// after checking `length` against the allocation guard.
pub fn read_envelope(
    root: &RootFile,
    offset: u64,
    size: u64,
    length: u64,
    max_key: u64,
    what: &str,
) -> Result<Vec<u8>> {
    let raw = root.read_payload(offset, size, max_key).map_err(|e| e.within(what))?;
    inflate_envelope(raw, offset, size, length, what)
}

/// Inflates the `raw` bytes of an envelope read at `offset` (see
/// [`read_envelope`]).
fn inflate_envelope(raw: Vec<u8>, offset: u64, size: u64, length: u64, what: &str) -> Result<Vec<u8>> {
    if size == length {
        return Ok(raw);
    }
    let location = Location::new(what, Some(offset));
    let length = guard_expansion(size, length, &location)?;
    decompress(&raw, length, &location)
}

/// The stored bytes of several envelopes `(offset, size)` in one vectored
/// read ([`RootFile::read_payloads`]), so that a remote open pays one round
/// trip for all of them. `None` for each when that read fails: the
/// envelopes are then read one by one, which names the one at fault.
fn read_together(root: &RootFile, envelopes: &[(u64, u64)], max_key: u64) -> Vec<Option<Vec<u8>>> {
    match root.read_payloads(envelopes, max_key) {
        Ok(all) => all.into_iter().map(Some).collect(),
        Err(_) => vec![None; envelopes.len()],
    }
}

/// A checksum quoted by another envelope against the header's own
/// (spec "Footer Envelope", "Page List Envelope": both repeat the header's
/// xxh3-64).
fn quoted(what: &str, stored: u64, computed: u64, offset: u64) -> Found {
    Found {
        check: "checksum",
        offset: Some(offset),
        error: Error::ChecksumMismatch {
            stored,
            computed,
            location: Location::new(
                format!("the {what}, which quotes header checksum {stored:#018x} while the header envelope's is {computed:#018x}"),
                Some(offset),
            ),
        },
    }
}

/// Where an envelope is: offset and size on disk, inflated length, and its
/// stored bytes when read already.
struct Stored {
    at: u64,
    size: u64,
    length: u64,
    raw: Option<Vec<u8>>,
}

impl Stored {
    /// The envelope's inflated bytes, read now unless read already.
    fn inflate(self, root: &RootFile, max_key: u64, what: &str) -> Result<Vec<u8>> {
        match self.raw {
            Some(raw) => inflate_envelope(raw, self.at, self.size, self.length, what),
            None => read_envelope(root, self.at, self.size, self.length, max_key, what),
        }
    }
}

/// Inflates and parses the header or the footer envelope `stored`
/// (reading it unless read already); returns it and its bytes.
fn parse_envelope<T>(
    root: &RootFile,
    checks: &mut Checks<'_>,
    what: &str,
    stored: Stored,
    max_key: u64,
    parse: impl Fn(&[u8], bool) -> Result<T>,
) -> Result<(T, Vec<u8>), Found> {
    let at = stored.at;
    let bytes = stored.inflate(root, max_key, what).map_err(|e| checks.fatal("envelope", Some(at), e))?;
    let context = format!("{what} at file offset {at}");
    let parsed = checks.parse("envelope", at, |verify| parse(&bytes, verify).map_err(|e| e.within(&context)))?;
    Ok((parsed, bytes))
}

/// Refuses an envelope larger, stored (`size`) or inflated (`length`), than
/// `cap` ([`crate::ReadOptions::max_envelope_size`]) before it is read: the
/// sizes come from the anchor or the footer, which a hostile file or server
/// chooses.
fn cap_envelope(what: &str, at: u64, size: u64, length: u64, cap: u64) -> Result<()> {
    let requested = size.max(length);
    if requested <= cap {
        return Ok(());
    }
    let location = Location::new(what, Some(at));
    Err(Error::OverBudget { requested, limit: cap, what: "envelope cap", hint: " (max_envelope_size)", location })
}

/// Loads the anchor stored in `key` and the envelopes it points to, each at
/// most `max_envelope` bytes stored and inflated.
pub fn load_envelopes(
    root: &RootFile,
    key: &KeyInfo,
    checks: &mut Checks<'_>,
    max_envelope: u64,
) -> Result<Envelopes, Found> {
    let at = key.payload_offset();
    if !key.is_rntuple() {
        let message = format!("'{}' is a {}, not a ROOT::RNTuple", key.path, key.class_name);
        return Err(checks.fatal("anchor", Some(at), Error::invalid(message)));
    }
    let bytes = root.read_object(key).map_err(|e| checks.fatal("anchor", Some(at), e))?;
    let location = Location::new(format!("RNTuple anchor '{}'", key.path), Some(at));
    let anchor = checks.parse("anchor", at, |verify| Anchor::parse(&bytes, verify, &location))?;
    load_from_anchor(root, anchor, checks, max_envelope)
}

/// Loads the envelopes `anchor` points to (an anchor found through a key, or
/// through a linked attribute set's locator), each at most `max_envelope`
/// bytes stored and inflated.
pub fn load_from_anchor(
    root: &RootFile,
    anchor: Anchor,
    checks: &mut Checks<'_>,
    max_envelope: u64,
) -> Result<Envelopes, Found> {
    let mk = anchor.max_key_size;
    let envelope = |what: &str, offset: u64| format!("{what} at file offset {offset}");

    // Header and footer in one request, then every page list in one more.
    let (h, f) = ((anchor.seek_header, anchor.nbytes_header), (anchor.seek_footer, anchor.nbytes_footer));
    for (what, (at, size), length) in
        [("header envelope", h, anchor.len_header), ("footer envelope", f, anchor.len_footer)]
    {
        cap_envelope(what, at, size, length, max_envelope).map_err(|e| checks.fatal("envelope", Some(at), e))?;
    }
    let mut raw = read_together(root, &[h, f], mk).into_iter();
    let header = Stored { at: h.0, size: h.1, length: anchor.len_header, raw: raw.next().flatten() };
    let footer = Stored { at: f.0, size: f.1, length: anchor.len_footer, raw: raw.next().flatten() };

    let at = anchor.seek_header;
    let (header, hbytes) = parse_envelope(root, checks, "header envelope", header, mk, parse_header)?;
    let hsum = header_checksum(&hbytes).map_err(|e| checks.fatal("envelope", Some(at), e))?;
    drop(hbytes);

    let at = anchor.seek_footer;
    let (footer, _) = parse_envelope(root, checks, "footer envelope", footer, mk, parse_footer)?;
    if checks.verifies() && footer.header_checksum != hsum {
        checks.recoverable(quoted("footer envelope", footer.header_checksum, hsum, at))?;
    }

    let mut page_lists = Vec::with_capacity(footer.cluster_groups.len().min(1 << 16));
    for (g, cg) in footer.cluster_groups.iter().enumerate() {
        let (l, at) = (cg.page_list, cg.page_list.locator.offset);
        let what = format!("page list envelope of cluster group {g}");
        cap_envelope(&what, at, l.locator.size, l.length, max_envelope)
            .map_err(|e| checks.fatal("envelope", Some(at), e))?;
    }
    let lists: Vec<(u64, u64)> =
        footer.cluster_groups.iter().map(|cg| (cg.page_list.locator.offset, cg.page_list.locator.size)).collect();
    let raw = read_together(root, &lists, mk);
    for ((g, cg), raw) in footer.cluster_groups.iter().enumerate().zip(raw) {
        let what = format!("page list envelope of cluster group {g}");
        let l = cg.page_list;
        let at = l.locator.offset;
        let stored = Stored { at, size: l.locator.size, length: l.length, raw };
        let pl = stored.inflate(root, mk, &what).map_err(|e| checks.fatal("envelope", Some(at), e)).and_then(|bytes| {
            checks.parse("envelope", at, |verify| {
                parse_page_list(&bytes, verify).map_err(|e| e.within(&what).within(&envelope("envelope", at)))
            })
        });
        let pl = match pl {
            Ok(pl) => pl,
            Err(f) if matches!(checks, Checks::Stop { .. }) => return Err(f),
            // Reported already: the other groups are still read.
            Err(_) => {
                page_lists.push(None);
                continue;
            }
        };
        if checks.verifies() && pl.header_checksum != hsum {
            checks.recoverable(quoted(&what, pl.header_checksum, hsum, at))?;
        }
        page_lists.push(Some(pl));
    }
    Ok(Envelopes { anchor, header_checksum: hsum, header, footer, page_lists })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use rntuple_container::OpenOptions;

    use super::*;

    fn open(name: &str) -> (RootFile, KeyInfo) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name);
        let root = RootFile::open_with(path, OpenOptions { verify_checksums: false, cache: None }).unwrap();
        let key = root.keys().unwrap().into_iter().find(|k| k.is_rntuple()).unwrap();
        (root, key)
    }

    /// What a report-mode load handed to its callback: check, offset, message.
    type Reported = Vec<(&'static str, Option<u64>, String)>;

    fn report(root: &RootFile, key: &KeyInfo) -> (Result<Envelopes, Found>, Reported) {
        let mut found = Vec::new();
        let mut collect = |f: Found| found.push((f.check, f.offset, f.error.to_string()));
        let loaded = load_envelopes(root, key, &mut Checks::Report(&mut collect), crate::DEFAULT_MAX_ENVELOPE_SIZE);
        (loaded, found)
    }

    #[test]
    fn envelopes_over_the_cap_are_refused_before_they_are_read() {
        let (root, key) = open("test_multiple_cluster_groups_rntuple_v1-0-0-0.root");
        let stop = || Checks::Stop { verify_checksums: true };
        let loaded = load_envelopes(&root, &key, &mut stop(), crate::DEFAULT_MAX_ENVELOPE_SIZE).unwrap();
        let a = &loaded.anchor;
        let mut sizes = vec![
            ("header envelope".to_string(), a.nbytes_header.max(a.len_header)),
            ("footer envelope".to_string(), a.nbytes_footer.max(a.len_footer)),
        ];
        for (g, cg) in loaded.footer.cluster_groups.iter().enumerate() {
            let l = cg.page_list;
            sizes.push((format!("page list envelope of cluster group {g}"), l.locator.size.max(l.length)));
        }
        let largest = sizes.iter().map(|(_, n)| *n).max().unwrap();
        assert!(load_envelopes(&root, &key, &mut stop(), largest).is_ok());
        let first_over = |cap: u64| sizes.iter().find(|(_, n)| *n > cap).unwrap().clone();
        for cap in [0, largest - 1] {
            let (what, size) = first_over(cap);
            let e = load_envelopes(&root, &key, &mut stop(), cap).unwrap_err();
            assert_eq!(e.check, "envelope");
            match &e.error {
                Error::OverBudget { requested, limit, .. } => assert_eq!((*requested, *limit), (size, cap)),
                other => panic!("cap {cap}: {other}"),
            }
            let message = e.error.to_string();
            assert!(message.contains(&what) && message.contains("max_envelope_size"), "{message}");
        }
    }

    #[test]
    fn a_good_file_loads_the_same_under_every_policy() {
        let (root, key) = open("test_multiple_cluster_groups_rntuple_v1-0-0-0.root");
        let mut stop =
            load_envelopes(&root, &key, &mut Checks::Stop { verify_checksums: true }, crate::DEFAULT_MAX_ENVELOPE_SIZE)
                .unwrap();
        let (reported, found) = report(&root, &key);
        assert!(found.is_empty(), "{found:?}");
        let reported = reported.unwrap();
        assert_eq!(stop.header_checksum, reported.header_checksum);
        assert!(stop.page_lists.len() > 1);
        assert_eq!(stop.take_page_lists().unwrap().len(), reported.page_lists.len());
    }

    #[test]
    fn a_checksum_mismatch_stops_or_is_reported_and_loading_goes_on() {
        let (root, key) = open("bad/header_checksum_mismatch.root");
        let e =
            load_envelopes(&root, &key, &mut Checks::Stop { verify_checksums: true }, crate::DEFAULT_MAX_ENVELOPE_SIZE)
                .unwrap_err();
        assert_eq!(e.check, "envelope");
        assert!(matches!(e.error, Error::ChecksumMismatch { .. }), "{}", e.error);
        assert!(load_envelopes(
            &root,
            &key,
            &mut Checks::Stop { verify_checksums: false },
            crate::DEFAULT_MAX_ENVELOPE_SIZE
        )
        .is_ok());
        let (loaded, found) = report(&root, &key);
        let loaded = loaded.unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0, found[0].1), ("envelope", Some(loaded.anchor.seek_header)));
        assert!(found[0].2.contains("checksum mismatch"), "{}", found[0].2);
        // Everything after the header was still read.
        assert!(loaded.page_lists.iter().all(Option::is_some));
    }

    #[test]
    fn a_wrong_quoted_header_checksum_names_the_page_list() {
        let (root, key) = open("bad/page_list_wrong_header_checksum.root");
        let (loaded, found) = report(&root, &key);
        let loaded = loaded.unwrap();
        let offset = loaded.footer.cluster_groups[0].page_list.locator.offset;
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0, found[0].1), ("checksum", Some(offset)));
        assert!(found[0].2.contains("page list envelope of cluster group 0, which quotes header checksum"));
    }

    #[test]
    fn an_unreadable_header_is_reported_once_and_stops() {
        let (root, key) = open("bad/anchor_len_header_huge.root");
        let (loaded, found) = report(&root, &key);
        assert!(loaded.is_err());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "envelope");
        // 1 TiB claimed: over the envelope cap, refused before anything is read
        let message = &found[0].2;
        assert!(message.contains("header envelope") && message.contains("1099511627776 bytes"), "{message}");
        assert!(message.contains("envelope cap (max_envelope_size)"), "{message}");
    }
}
