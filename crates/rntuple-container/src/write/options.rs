//! [`WriterOptions`]: how a [`super::FileWriter`] lays out its file.

use rntuple_format::{Error, Result};

use super::records::key_len;
use crate::constants::BLOB_CLASS_NAME;

/// ROOT's default largest payload of one key (`RNTupleWriteOptions::kDefaultMaxKeySize`,
/// 1 GiB); larger payloads are split over several keys.
pub const DEFAULT_MAX_KEY_SIZE: u64 = 0x4000_0000;

/// ROOT's default compression setting (`RCompressionSetting::EDefaults::kUseGeneralPurpose`):
/// zstd, level 5.
pub const DEFAULT_COMPRESSION: u32 = 505;

/// Options of a [`super::FileWriter`].
///
/// Build them from the default so that fields added later keep their defaults:
/// `WriterOptions { max_key_size: 1 << 20, ..Default::default() }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Largest payload of one `RBlob` key; bigger payloads are split over
    /// several keys. Must be copied into every anchor written to the file
    /// (`Anchor::max_key_size`). Default [`DEFAULT_MAX_KEY_SIZE`]; at most
    /// [`WriterOptions::MAX_KEY_SIZE_LIMIT`].
    pub max_key_size: u64,
    /// The file's compression setting (`fCompress`, algorithm × 100 + level),
    /// also used for the anchor keys and the streamer-info record. RNTuple
    /// pages and envelopes are compressed by the caller, with their own setting.
    /// Default [`DEFAULT_COMPRESSION`].
    pub compression: u32,
    /// Unix time (seconds) stamped on every record. `None`: the value of the
    /// `SOURCE_DATE_EPOCH` environment variable if set, else the current time.
    /// With a fixed time the file is reproducible byte for byte (its UUIDs are
    /// derived from the file name and the time).
    pub timestamp: Option<u64>,
    /// `fsync` the file in [`super::FileWriter::finish`] (before and after the
    /// file header is written) and, with the journal, the file and its
    /// journal at every [`super::FileWriter::commit`], so that committed
    /// clusters survive a power cut too. Default false, as ROOT.
    pub sync: bool,
    /// Keep a commit journal beside a local file while it is written
    /// ([`super::journal`]): `rntuple recover` rebuilds the committed
    /// clusters of a file whose writer died. Deleted when the file is
    /// finished; the finished file is the same with or without it. Default true.
    pub journal: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            max_key_size: DEFAULT_MAX_KEY_SIZE,
            compression: DEFAULT_COMPRESSION,
            timestamp: None,
            sync: false,
            journal: true,
        }
    }
}

impl WriterOptions {
    /// The largest `max_key_size`: one key's `fNbytes` (header plus payload) is
    /// a 32-bit signed integer.
    pub const MAX_KEY_SIZE_LIMIT: u64 = i32::MAX as u64 - 42;

    pub fn new() -> Self {
        Self::default()
    }

    pub fn max_key_size(mut self, max_key_size: u64) -> Self {
        self.max_key_size = max_key_size;
        self
    }

    pub fn compression(mut self, compression: u32) -> Self {
        self.compression = compression;
        self
    }

    pub fn timestamp(mut self, unix_seconds: u64) -> Self {
        self.timestamp = Some(unix_seconds);
        self
    }

    pub fn sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    pub fn journal(mut self, journal: bool) -> Self {
        self.journal = journal;
        self
    }

    /// Checks the options; [`Error::InvalidArgument`] names the bad one.
    pub(crate) fn validate(&self) -> Result<()> {
        debug_assert_eq!(Self::MAX_KEY_SIZE_LIMIT, i32::MAX as u64 - key_len(BLOB_CLASS_NAME, "", "") as u64);
        if self.max_key_size == 0 || self.max_key_size > Self::MAX_KEY_SIZE_LIMIT {
            return Err(Error::invalid(format!(
                "max key size {} is not between 1 and {} bytes",
                self.max_key_size,
                Self::MAX_KEY_SIZE_LIMIT
            )));
        }
        // Compressing a small compressible buffer exercises the setting's
        // algorithm and level.
        rntuple_format::compression::compress(&[0u8; 256], self.compression)
            .map_err(|e| Error::invalid(format!("compression setting {}: {e}", self.compression)))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_roots() {
        let o = WriterOptions::default();
        assert_eq!((o.max_key_size, o.compression, o.timestamp, o.sync), (1 << 30, 505, None, false));
        assert!(o.validate().is_ok());
    }

    #[test]
    fn rejects_bad_values() {
        for bad in [
            WriterOptions::new().max_key_size(0),
            WriterOptions::new().max_key_size(WriterOptions::MAX_KEY_SIZE_LIMIT + 1),
            WriterOptions::new().compression(301),
            WriterOptions::new().compression(901),
        ] {
            assert!(matches!(bad.validate(), Err(Error::InvalidArgument { .. })), "{bad:?}");
        }
        for good in [0, 1, 101, 207, 404, 505, 509] {
            assert!(WriterOptions::new().compression(good).validate().is_ok(), "{good}");
        }
        assert!(WriterOptions::new().max_key_size(WriterOptions::MAX_KEY_SIZE_LIMIT).validate().is_ok());
    }
}
