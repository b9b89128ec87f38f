//! Structure-aware mutation of real files: parse a file's first RNTuple
//! (anchor, header, footer, page lists), change one field of the parsed
//! structures or one value inside a re-serialised envelope or page, and
//! write a file whose checksums all match again, so that a reader with
//! checksum verification on meets hostile counts, sizes and offsets.
//!
//! The rewritten envelopes are appended to the end of the file uncompressed
//! (a compressed size equal to the uncompressed size means "not compressed",
//! spec "Compression Block"); the anchor is rewritten in place to point at
//! them, with its xxh3 recomputed (spec "Anchor"), and each envelope's xxh3
//! is recomputed (spec "Envelopes"). A changed header's checksum is copied
//! into the footer and page lists, which repeat it (spec "Footer Envelope",
//! "Page List Envelope"). A page's bytes are changed in place and its xxh3
//! (spec "Page Locations") recomputed.

use std::sync::Arc;

use rntuple_container::{Anchor, MemoryStorage, OpenOptions, RootFile};
use rntuple_format::checksum::xxh3_64;
use rntuple_format::compression::decompress;
use rntuple_format::envelope::{
    parse_footer, parse_header, parse_page_list, write_footer, write_header, write_page_list,
};
use rntuple_format::model::{Footer, Header, Locator, PageList};
use rntuple_format::Location;

/// A small deterministic generator (splitmix64) seeded by libFuzzer.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// A value a careless reader mishandles: 0, 1, the type's maximum and
    /// its neighbours, powers of two, the old value nudged, or random bits.
    pub fn hostile(&mut self, old: u64, max: u64) -> u64 {
        match self.below(9) {
            0 => 0,
            1 => 1,
            2 => max,
            3 => max - 1,
            4 => (1u64 << self.below(64)) & max,
            5 => old.wrapping_add(1) & max,
            6 => old.wrapping_sub(1) & max,
            7 => old.wrapping_mul(2 + self.below(1000) as u64) & max,
            _ => self.next_u64() & max,
        }
    }
}

/// A file's first RNTuple, parsed.
pub struct Parsed {
    pub bytes: Vec<u8>,
    /// Where the anchor's 78 bytes sit in `bytes`.
    pub anchor_at: usize,
    pub anchor: Anchor,
    pub header: Header,
    pub footer: Footer,
    pub page_lists: Vec<PageList>,
}

fn envelope(root: &RootFile, seek: u64, nbytes: u64, len: u64, max_key: u64) -> Option<Vec<u8>> {
    let raw = root.read_payload(seek, nbytes, max_key).ok()?;
    if nbytes == len {
        return Some(raw);
    }
    decompress(&raw, usize::try_from(len).ok()?, &Location::new("envelope", Some(seek))).ok()
}

/// Parses `bytes` (checksums verified); `None` when it is not a readable
/// file with an RNTuple whose anchor has the 78 bytes ROOT 6.34+ writes.
pub fn parse(bytes: &[u8]) -> Option<Parsed> {
    let storage = Arc::new(MemoryStorage::new(bytes.to_vec()));
    let root = RootFile::from_storage_with(storage, OpenOptions::new().verify_checksums(true)).ok()?;
    let key = root.keys().ok()?.into_iter().find(|k| k.is_rntuple())?;
    if key.is_compressed() || key.stored_len() != 78 {
        return None;
    }
    let anchor = root.anchor_of(&key).ok()?;
    let mk = anchor.max_key_size;
    let h = envelope(&root, anchor.seek_header, anchor.nbytes_header, anchor.len_header, mk)?;
    let f = envelope(&root, anchor.seek_footer, anchor.nbytes_footer, anchor.len_footer, mk)?;
    let header = parse_header(&h, true).ok()?;
    let footer = parse_footer(&f, true).ok()?;
    let mut page_lists = Vec::new();
    for g in &footer.cluster_groups {
        let l = &g.page_list;
        let p = envelope(&root, l.locator.offset, l.locator.size, l.length, mk)?;
        page_lists.push(parse_page_list(&p, true).ok()?);
    }
    Some(Parsed {
        bytes: bytes.to_vec(),
        anchor_at: usize::try_from(key.payload_offset()).ok()?,
        anchor,
        header,
        footer,
        page_lists,
    })
}

/// Recomputes an envelope's trailing xxh3 and its length field (spec
/// "Envelopes": the length counts the checksum; the checksum covers the rest).
pub fn fix_envelope(env: &mut [u8]) {
    if env.len() < 16 {
        return;
    }
    let n = env.len();
    let word = u64::from_le_bytes(env[..8].try_into().unwrap_or([0; 8]));
    let word = (word & 0xFFFF) | ((n as u64) << 16);
    env[..8].copy_from_slice(&word.to_le_bytes());
    let sum = xxh3_64(&env[..n - 8]);
    env[n - 8..].copy_from_slice(&sum.to_le_bytes());
}

/// Changes one integer of a serialised envelope (a 1, 2, 4 or 8-byte value
/// at any position after the preamble, e.g. a frame size or list count).
fn poke(env: &mut [u8], rng: &mut Rng) {
    if env.len() <= 16 {
        return;
    }
    let width = [1usize, 2, 4, 8][rng.below(4)];
    let body = env.len() - 8;
    if body <= 8 + width {
        return;
    }
    let at = 8 + rng.below(body - 8 - width);
    let mut old = [0u8; 8];
    old[..width].copy_from_slice(&env[at..at + width]);
    let max = if width == 8 { u64::MAX } else { (1u64 << (8 * width)) - 1 };
    let v = rng.hostile(u64::from_le_bytes(old), max);
    env[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

/// One field of the parsed structures that [`mutate`] may change.
enum Slot<'a> {
    U64(&'a mut u64),
    U32(&'a mut u32),
    I64(&'a mut i64),
}

fn locator<'a>(l: &'a mut Locator, out: &mut Vec<Slot<'a>>) {
    out.push(Slot::U64(&mut l.offset));
    out.push(Slot::U64(&mut l.size));
}

fn footer_slots(f: &mut Footer) -> Vec<Slot<'_>> {
    let mut out = Vec::new();
    for g in &mut f.cluster_groups {
        out.push(Slot::U64(&mut g.min_entry));
        out.push(Slot::U64(&mut g.entry_span));
        out.push(Slot::U32(&mut g.num_clusters));
        out.push(Slot::U64(&mut g.page_list.length));
        locator(&mut g.page_list.locator, &mut out);
    }
    for c in &mut f.schema_extension.columns {
        out.push(Slot::U32(&mut c.field_id));
    }
    out
}

fn page_list_slots(p: &mut PageList) -> Vec<Slot<'_>> {
    let mut out = Vec::new();
    for c in &mut p.clusters {
        out.push(Slot::U64(&mut c.first_entry));
        out.push(Slot::U64(&mut c.num_entries));
    }
    for cluster in &mut p.page_locations {
        for col in cluster {
            out.push(Slot::I64(&mut col.element_offset));
            for page in &mut col.pages {
                out.push(Slot::U32(&mut page.num_elements));
                locator(&mut page.locator, &mut out);
            }
        }
    }
    out
}

fn header_slots(h: &mut Header) -> Vec<Slot<'_>> {
    let mut out = Vec::new();
    for f in &mut h.schema.fields {
        out.push(Slot::U32(&mut f.parent_id));
        if let Some(a) = f.array_size.as_mut() {
            out.push(Slot::U64(a));
        }
        if let Some(s) = f.source_field_id.as_mut() {
            out.push(Slot::U32(s));
        }
    }
    for c in &mut h.schema.columns {
        out.push(Slot::U32(&mut c.field_id));
        if let Some(e) = c.first_element_index.as_mut() {
            out.push(Slot::I64(e));
        }
    }
    for a in &mut h.schema.alias_columns {
        out.push(Slot::U32(&mut a.physical_column_id));
        out.push(Slot::U32(&mut a.field_id));
    }
    out
}

fn change(slots: Vec<Slot<'_>>, rng: &mut Rng) {
    let n = slots.len();
    if let Some(slot) = slots.into_iter().nth(rng.below(n)) {
        match slot {
            Slot::U64(v) => *v = rng.hostile(*v, u64::MAX),
            Slot::U32(v) => *v = rng.hostile(u64::from(*v), u64::from(u32::MAX)) as u32,
            Slot::I64(v) => *v = rng.hostile(*v as u64, u64::MAX) as i64,
        }
    }
}

/// Drops or repeats one element of a list, so that counts disagree with
/// what they count (e.g. a cluster without its page locations).
fn resize_list(p: &mut Parsed, rng: &mut Rng) {
    let k = rng.below(p.page_lists.len().max(1));
    match (rng.below(5), p.page_lists.get_mut(k)) {
        (0, Some(pl)) if !pl.clusters.is_empty() => {
            let i = rng.below(pl.clusters.len());
            pl.clusters.remove(i);
        }
        (1, Some(pl)) => {
            if let Some(cluster) = pl.page_locations.first_mut() {
                if let Some(col) = cluster.first_mut() {
                    if let Some(page) = col.pages.first().cloned() {
                        col.pages.push(page);
                    }
                }
            }
        }
        (2, Some(pl)) => {
            if let Some(cluster) = pl.page_locations.last_mut() {
                cluster.pop();
            }
        }
        (3, _) => {
            if let Some(c) = p.header.schema.columns.first().cloned() {
                p.header.schema.columns.push(c);
            }
        }
        _ => {
            if let Some(f) = p.header.schema.fields.last().cloned() {
                p.header.schema.fields.push(f);
            }
        }
    }
}

/// Changes bytes inside one page and recomputes the page's checksum, when
/// it has one.
pub fn mutate_page(p: &mut Parsed, rng: &mut Rng) {
    let pages: Vec<(Locator, bool)> = p
        .page_lists
        .iter()
        .flat_map(|pl| pl.page_locations.iter().flatten().flat_map(|c| c.pages.iter()))
        .map(|pg| (pg.locator, pg.has_checksum))
        .collect();
    let Some((loc, has_checksum)) = pages.get(rng.below(pages.len())).cloned() else {
        return;
    };
    let (Ok(start), Ok(size)) = (usize::try_from(loc.offset), usize::try_from(loc.size)) else {
        return;
    };
    let Some(end) = start.checked_add(size) else {
        return;
    };
    if size == 0 || end.saturating_add(if has_checksum { 8 } else { 0 }) > p.bytes.len() {
        return;
    }
    for _ in 0..1 + rng.below(4) {
        let at = start + rng.below(size);
        p.bytes[at] = rng.hostile(u64::from(p.bytes[at]), 0xFF) as u8;
    }
    if has_checksum {
        let sum = xxh3_64(&p.bytes[start..end]);
        p.bytes[end..end + 8].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Appends `env` to the file; returns its locator.
fn append(bytes: &mut Vec<u8>, env: &[u8]) -> Locator {
    let offset = bytes.len() as u64;
    bytes.extend_from_slice(env);
    Locator { offset, size: env.len() as u64 }
}

/// One structure-aware mutation of `p`, as a new file.
pub fn mutate(mut p: Parsed, rng: &mut Rng) -> Option<Vec<u8>> {
    // What to change: a parsed field, a list length, a page, or a value
    // inside a serialised envelope (0: header, 1: footer, 2 + k: page list k).
    let mut poke_which = None;
    match rng.below(8) {
        0 => change(header_slots(&mut p.header), rng),
        1 => {
            change(footer_slots(&mut p.footer), rng);
            // Keep the changed page-list link rather than pointing it at the rewritten list.
            if rng.below(2) == 0 {
                return serialise(p, None, false, rng);
            }
        }
        2 | 3 => {
            let k = rng.below(p.page_lists.len().max(1));
            if let Some(pl) = p.page_lists.get_mut(k) {
                change(page_list_slots(pl), rng);
            }
        }
        4 => resize_list(&mut p, rng),
        5 => mutate_page(&mut p, rng),
        _ => poke_which = Some(rng.below(2 + p.page_lists.len())),
    }
    serialise(p, poke_which, true, rng)
}

/// Writes `p` as a file: its envelopes appended uncompressed with valid
/// checksums, the anchor pointing at them. `poke`: the envelope (0 header,
/// 1 footer, 2 + k page list k) in which one serialised value is changed.
/// `relink`: point the footer's page-list links at the rewritten lists.
pub fn serialise(mut p: Parsed, poke_which: Option<usize>, relink: bool, rng: &mut Rng) -> Option<Vec<u8>> {
    // The header first: the others repeat its checksum.
    let (mut header, _) = write_header(&p.header).ok()?;
    if poke_which == Some(0) {
        poke(&mut header, rng);
        fix_envelope(&mut header);
    }
    let header_checksum = u64::from_le_bytes(header[header.len() - 8..].try_into().ok()?);
    p.footer.header_checksum = header_checksum;
    let mut bytes = std::mem::take(&mut p.bytes);
    let h = append(&mut bytes, &header);
    for (k, pl) in p.page_lists.iter_mut().enumerate() {
        pl.header_checksum = header_checksum;
        let (mut env, _) = write_page_list(pl).ok()?;
        if poke_which == Some(2 + k) {
            poke(&mut env, rng);
            fix_envelope(&mut env);
        }
        let loc = append(&mut bytes, &env);
        if let (true, Some(g)) = (relink, p.footer.cluster_groups.get_mut(k)) {
            g.page_list.length = loc.size;
            g.page_list.locator = loc;
        }
    }
    let (mut footer, _) = write_footer(&p.footer).ok()?;
    if poke_which == Some(1) {
        poke(&mut footer, rng);
        fix_envelope(&mut footer);
    }
    let f = append(&mut bytes, &footer);
    let mut a = p.anchor.clone();
    (a.seek_header, a.nbytes_header, a.len_header) = (h.offset, h.size, h.size);
    (a.seek_footer, a.nbytes_footer, a.len_footer) = (f.offset, f.size, f.size);
    let ab = a.to_bytes();
    bytes.get_mut(p.anchor_at..p.anchor_at + ab.len())?.copy_from_slice(&ab);
    Some(bytes)
}
