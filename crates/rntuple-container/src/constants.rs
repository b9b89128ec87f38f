//! Constants of the ROOT file format that must never change.
//!
//! Sources: ROOT `io/io/src/TFile.cxx` (`TFile::Init`), `io/io/src/TKey.cxx`
//! (`TKey::ReadKeyBuffer`), `io/io/src/TDirectoryFile.cxx` (`TDirectoryFile::ReadKeys`),
//! `tree/ntuple/src/RMiniFile.cxx`, and the RNTuple specification
//! (`tree/ntuple/doc/BinaryFormatSpecification.md`, "ROOT File embedding" and
//! "Anchor schema", format 1.0).

/// The first four bytes of every ROOT file.
pub const FILE_MAGIC: [u8; 4] = *b"root";

/// The first bytes of a file whose writer has not finished it: the writer
/// ([`crate::write::FileWriter`]) puts a placeholder starting with them at
/// offset 0 when it creates the file, and replaces it with the ROOT file header
/// as its very last write. Neither ROOT nor uproot take such a file for a ROOT
/// file (magic `"root"`) or an RNTuple bare file (magic `"rntuple"`); the
/// reader recognises it and says so.
pub const INCOMPLETE_FILE_MAGIC: [u8; 16] = *b"INCOMPLETE-FILE\n";

/// `fVersion` at or above this value marks the large file header: `fEND`,
/// `fSeekFree` and `fSeekInfo` are 64-bit (`TFile::Init`: `fVersion < 1000000` is
/// the small form).
pub const BIG_FILE_VERSION: u32 = 1_000_000;

/// A key whose version is above this value stores `fSeekKey` and `fSeekPdir` as
/// 64-bit integers (`TKey::ReadKeyBuffer`: `fVersion > 1000`).
pub const BIG_KEY_VERSION: u16 = 1000;

/// A directory record whose class version is above this value stores `fSeekDir`,
/// `fSeekParent` and `fSeekKeys` as 64-bit integers (`TDirectoryFile::Streamer`,
/// `TFile::Init`: `version > 1000`).
pub const BIG_DIRECTORY_VERSION: u16 = 1000;

/// Class name of an RNTuple anchor key.
pub const RNTUPLE_CLASS_NAME: &str = "ROOT::RNTuple";

/// Class name of the invisible keys holding RNTuple envelopes and pages.
pub const BLOB_CLASS_NAME: &str = "RBlob";

/// Class names of subdirectory keys. ROOT records a `TDirectoryFile` as
/// `"TDirectory"` for the sake of old readers (`TKey::FillBuffer`); accept both.
pub const DIRECTORY_CLASS_NAMES: [&str; 2] = ["TDirectory", "TDirectoryFile"];

/// A streamed `TString` whose first byte is this value has its length in the
/// following 4-byte big-endian integer.
pub const TSTRING_LONG_MARKER: u8 = 255;

/// Smallest possible key header: `fNbytes` (4), `fVersion` (2), `fObjLen` (4),
/// `fDatime` (4), `fKeyLen` (2), `fCycle` (2), 32-bit `fSeekKey` and `fSeekPdir`
/// (4 + 4), and three empty strings (1 + 1 + 1).
pub const MIN_KEY_HEADER_LEN: usize = 29;

/// The anchor object starts with ROOT's 4-byte byte count (with the
/// `0x40000000` flag) and 2-byte class version; neither is checksummed.
pub const ANCHOR_PREFIX_LEN: usize = 6;

/// The fields of the anchor schema: four 16-bit version numbers and seven
/// 64-bit integers.
pub const ANCHOR_FIELDS_LEN: usize = 4 * 2 + 7 * 8;

/// Smallest anchor object: prefix, fields and the 8-byte xxh3 checksum
/// (`kMinNTupleSize` in `RMiniFile.cxx`). Later class versions may append fields;
/// the checksum always is the last 8 bytes.
pub const ANCHOR_MIN_LEN: usize = ANCHOR_PREFIX_LEN + ANCHOR_FIELDS_LEN + 8;

/// The byte-count flag `kByteCountMask` of ROOT's streamer framework.
pub const BYTE_COUNT_FLAG: u32 = 0x4000_0000;

/// The class version of `ROOT::RNTuple` written by ROOT 6.34 and later.
pub const ANCHOR_CLASS_VERSION: u16 = 2;

/// The only anchor version epoch this implementation reads (format 1.x).
pub const SUPPORTED_EPOCH: u16 = 1;

/// Width of one chunk offset at the end of the first key of a multi-key payload.
pub const CHUNK_OFFSET_LEN: u64 = 8;

/// Deepest directory nesting accepted while walking a file.
pub const MAX_DIRECTORY_DEPTH: usize = 64;
