//! Writing ROOT files that hold RNTuples: [`FileWriter`].
//!
//! The file has the layout ROOT gives it when an RNTuple is written with
//! `RNTupleWriter` (`tree/ntuple/src/RMiniFile.cxx`, `RNTupleFileWriter`), with
//! `TDirectoryFile` subdirectories as `TFile::mkdir` makes them
//! (`io/io/src/TDirectoryFile.cxx`). All keys use the 64-bit key header
//! (version 1004), as ROOT's RNTuple writer does; the file header, directory
//! records and free segments switch to their 64-bit forms past
//! `TFile::kStartBigFile` (2·10⁹ bytes), as `TFile` does.
//!
//! ```text
//! offset
//!      0  file header ("root", fVersion 64000 or 1064000, ..., fUUID)   written last
//!    100  TFile key: TNamed (file name, "") + top directory record (60)  record rewritten last
//!         RBlob keys: pages and envelopes, in the order written;
//!           a payload larger than max_key_size spans several keys (crate::blob)
//!         TDirectory keys: one per subdirectory, record of 60 bytes      ┐
//!         ROOT::RNTuple keys: the anchors (compressed like ROOT does)    │ written
//!         key lists: one per directory                                   │ by finish()
//!         StreamerInfo key: TList with ROOT::RNTuple's TStreamerInfo     │
//!         free-segments key: one TFree from fEND on                      ┘
//!   fEND
//! ```
//!
//! Payloads: [`FileWriter::write_blob`] (and `_parts`, `_parts_with_len`)
//! splits a payload larger than the max key size over several keys exactly as
//! ROOT does; [`FileWriter::write_single_key_blob`] never splits, so that
//! several pages can share one key at known offsets, as ROOT packs the pages
//! of a cluster. The returned offset is what goes into a locator or the anchor.
//!
//! Until [`FileWriter::finish`] has written the file header, the file starts
//! with a placeholder ([`crate::constants::INCOMPLETE_FILE_MAGIC`]): a writer
//! that fails, is dropped, or dies with its process leaves a file that ROOT and
//! uproot do not open and that [`crate::RootFile`] reports as "not completed
//! by its writer".
//!
//! ```no_run
//! use rntuple_container::{Anchor, FileWriter, WriterOptions};
//! let mut w = FileWriter::create("out.root", WriterOptions::default())?;
//! let header_envelope: Vec<u8> = vec![]; // built by the RNTuple write engine
//! let footer_envelope: Vec<u8> = vec![];
//! let seek_header = w.write_blob(&header_envelope)?;
//! // ... pages (w.write_blob_parts(&[page, &checksum])), page lists ...
//! let seek_footer = w.write_blob(&footer_envelope)?;
//! let anchor = Anchor {
//!     version_epoch: 1, version_major: 0, version_minor: 2, version_patch: 0,
//!     seek_header, nbytes_header: header_envelope.len() as u64, len_header: 0,
//!     seek_footer, nbytes_footer: footer_envelope.len() as u64, len_footer: 0,
//!     max_key_size: w.max_key_size(),
//! };
//! w.write_anchor("Events", &anchor)?;
//! w.finish()?;
//! # Ok::<(), rntuple_format::Error>(())
//! ```

mod close;
mod crash;
mod file_writer;
pub mod journal;
mod options;
mod payload;
pub(crate) mod records;
mod stamp;
mod streamer_info;
mod tree;

pub use crash::{crash_point, CrashPoint, CRASH_ENV};
pub use file_writer::{FileWriter, COPY_PIECE};
pub use options::{WriterOptions, DEFAULT_COMPRESSION, DEFAULT_MAX_KEY_SIZE};
pub use payload::{Parts, PayloadSource};
