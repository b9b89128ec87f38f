//! Where RNTuple bytes live: the ROOT file (`TFile`) container.
//!
//! This crate reads the ROOT file header, directories and their key lists,
//! the `ROOT::RNTuple` anchor, and RNTuple payloads (envelopes and pages)
//! stored in `RBlob` keys, including payloads split over several keys. It
//! reads through the [`ReadAt`] storage trait (local files, memory; remote
//! stores plug in by URL scheme, [`storage::url`]). [`FileWriter`] writes
//! such files, as ROOT lays them out, into a [`WriteSink`] (a local file,
//! memory, later remote or crash-safe sinks).
//!
//! Sources of the layouts: ROOT `io/io/src/TFile.cxx`, `TKey.cxx`,
//! `TDirectoryFile.cxx`, `tree/ntuple/src/RMiniFile.cxx`, and the RNTuple
//! specification 1.0 (`tree/ntuple/doc/BinaryFormatSpecification.md`, "ROOT
//! File embedding", "Anchor schema"). Every structure's module draws it.
//!
//! Untrusted input: nothing here panics on malformed files, and every size
//! read from a file is checked against the file size before it is allocated.
//!
//! ```no_run
//! use rntuple_container::RootFile;
//! let file = RootFile::open("data.root")?;
//! for name in file.rntuple_names()? {
//!     let anchor = file.anchor(&name)?;
//!     let header = file.read_payload(anchor.seek_header, anchor.nbytes_header, anchor.max_key_size)?;
//!     println!("{name}: header envelope of {} bytes on disk", header.len());
//! }
//! # Ok::<(), rntuple_format::Error>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

pub mod anchor;
pub mod blob;
mod bytes;
mod compression;
pub mod constants;
pub mod directory;
pub mod file;
pub mod header;
pub mod key;
pub mod storage;
pub mod write;

pub use anchor::Anchor;
pub use blob::ChunkLayout;
pub use directory::DirectoryRecord;
pub use file::{OpenOptions, RootFile};
pub use header::FileHeader;
pub use key::KeyInfo;
pub use storage::{
    open_storage, open_storage_with, CacheConfig, CachedStorage, Identity, IoHints, LocalFile, LocalSink, MemorySink,
    MemoryStorage, ReadAt, TransportCounters, TransportStats, WriteSink,
};
pub use write::{FileWriter, WriterOptions};
