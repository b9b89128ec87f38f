//! What an [`super::RNTupleWriter`] puts into the commit journal of its file
//! after every cluster ([`rntuple_container::write::journal`], docs/recover.md):
//! enough to complete the RNTuple with the clusters committed so far.
//!
//! ```text
//! payload of one journal record           (integers little-endian)
//!   u32      version of this layout (1)
//!   u32 + n  RNTuple name (the anchor's path, UTF-8)
//!   u64 ×4   header envelope: offset, stored size, length, xxh3-64
//!   u32      compression setting of the RNTuple's envelopes
//!   u32 + n  page list envelope of this one cluster (spec "Page List
//!            Envelope"), uncompressed, its checksum included
//!   u32 + n  footer envelope (spec "Footer Envelope") with the schema
//!            extension so far (its extra type information: the streamer
//!            infos of the streamer fields' classes) and no cluster
//!            groups, uncompressed
//! ```
//!
//! The page list holds the cluster's summary (first entry, entries) and the
//! locators of its pages in the file, as the page list written at the end
//! will; the footer carries the fields added since the header. A parallel
//! writer extends its schema and records clusters under one lock, so each
//! record's footer declares exactly the columns its cluster carries (deferred
//! to the entries of the records before the extension), and `recover` keeps
//! the extension with the last cluster it keeps.

use rntuple_format::model::{EnvelopeLink, Locator};
use rntuple_format::{Error, Result};

/// Version of the payload layout.
const VERSION: u32 = 1;

/// One record's payload, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRecord {
    /// The RNTuple's name as given to the writer (`"dir/Events"`).
    pub name: String,
    pub header: EnvelopeLink,
    pub header_checksum: u64,
    /// Compression setting of the RNTuple's envelopes.
    pub compression: u32,
    /// The page list envelope of the committed cluster.
    pub page_list: Vec<u8>,
    /// A footer envelope with the schema extension at the commit.
    pub footer: Vec<u8>,
}

impl ClusterRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.name.len() + self.page_list.len() + self.footer.len());
        out.extend_from_slice(&VERSION.to_le_bytes());
        put_bytes(&mut out, self.name.as_bytes());
        for v in [self.header.locator.offset, self.header.locator.size, self.header.length, self.header_checksum] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.compression.to_le_bytes());
        put_bytes(&mut out, &self.page_list);
        put_bytes(&mut out, &self.footer);
        out
    }

    /// Decodes a payload; `what` names it in errors.
    pub fn decode(bytes: &[u8], what: &str) -> Result<Self> {
        let mut r = Cursor { bytes, at: 0, what };
        let version = r.u32()?;
        if version != VERSION {
            return Err(r.bad(&format!("layout version {version}, expected {VERSION}")));
        }
        let name = String::from_utf8(r.bytes()?.to_vec()).map_err(|_| r.bad("an RNTuple name that is not UTF-8"))?;
        let (offset, size, length, header_checksum) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
        let compression = r.u32()?;
        let page_list = r.bytes()?.to_vec();
        let footer = r.bytes()?.to_vec();
        if r.at != bytes.len() {
            return Err(r.bad("bytes after the footer"));
        }
        Ok(ClusterRecord {
            name,
            header: EnvelopeLink { length, locator: Locator { offset, size } },
            header_checksum,
            compression,
            page_list,
            footer,
        })
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    what: &'a str,
}

impl<'a> Cursor<'a> {
    fn bad(&self, why: &str) -> Error {
        Error::invalid(format!("{}: journal record with {why} (at byte {})", self.what, self.at))
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| self.bad("too few bytes"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| self.bad("too few bytes"))?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| self.bad("too few bytes"))?))
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let r = ClusterRecord {
            name: "dir/Events".into(),
            header: EnvelopeLink { length: 300, locator: Locator { offset: 242, size: 120 } },
            header_checksum: 0x1234_5678_9abc_def0,
            compression: 505,
            page_list: vec![1, 2, 3],
            footer: vec![4, 5],
        };
        let bytes = r.encode();
        assert_eq!(&bytes[..4], &[1, 0, 0, 0]);
        assert_eq!(&bytes[4..18], b"\x0a\x00\x00\x00dir/Events");
        assert_eq!(ClusterRecord::decode(&bytes, "r").unwrap(), r);
        assert!(ClusterRecord::decode(&bytes[..bytes.len() - 1], "r").is_err());
        let mut more = bytes.clone();
        more.push(0);
        assert!(ClusterRecord::decode(&more, "r").unwrap_err().to_string().contains("after the footer"));
    }
}
