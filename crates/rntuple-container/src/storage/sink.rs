//! [`WriteSink`]: where the bytes of a file being written go.

/// The destination of a file being written, as [`crate::FileWriter`] uses it:
/// bytes are appended in order, and once, when the file is finished, a few
/// bytes near its start (the ROOT file header and the top directory record)
/// are written again in place.
///
/// The contract that lets sinks other than local files exist:
///
/// * [`WriteSink::append`] is the hot path; the sink may buffer.
/// * [`WriteSink::write_at`] only rewrites bytes already appended, and
///   `FileWriter` only rewrites the head of the file (offsets below
///   [`crate::FileWriter::head_len`], about 200 bytes). An object-store sink
///   (S3 multipart upload) can therefore hold its first part back and upload
///   it last; a crash-safe sink can journal the rewrite.
/// * [`WriteSink::finish`] publishes the file; a remote sink dropped before
///   it aborts (no object, or only a temporary name).
/// * [`WriteSink::sync`] is a durability point (`fsync` for local files): a
///   crash-safe writer calls it after each committed cluster.
///
/// Errors are plain I/O errors; the writer adds which file and what it was
/// doing ([`WriteSink::describe`]).
pub trait WriteSink: Send + std::fmt::Debug {
    /// Appends `bytes` at the end.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()>;

    /// Appends `len` zero bytes (by default in pieces of 64 KiB); a local
    /// file may leave a hole instead.
    fn append_zeros(&mut self, mut len: u64) -> std::io::Result<()> {
        let zeros = vec![0u8; 1 << 16];
        while len > 0 {
            let n = len.min(zeros.len() as u64) as usize;
            self.append(&zeros[..n])?;
            len -= n as u64;
        }
        Ok(())
    }

    /// Overwrites `bytes.len()` bytes at `offset`, all inside what has been
    /// appended.
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()>;

    /// Bytes appended so far (the offset of the next appended byte).
    fn len(&self) -> u64;

    /// Whether nothing has been appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Hands buffered bytes to the storage.
    fn flush(&mut self) -> std::io::Result<()>;

    /// Makes every byte written so far durable; by default a flush.
    fn sync(&mut self) -> std::io::Result<()> {
        self.flush()
    }

    /// Makes the file visible as complete at its destination, after every
    /// byte and the final rewrite of the head: the last call on a sink. A
    /// remote sink completes its upload or renames its temporary object
    /// here; a sink dropped without it leaves nothing that looks complete
    /// (see each sink). By default a flush.
    fn finish(&mut self) -> std::io::Result<()> {
        self.flush()
    }

    /// What the sink writes to, for messages: a path, a URL, `"memory"`.
    fn describe(&self) -> String;
}

/// Refuses a [`WriteSink::write_at`] outside the `len` bytes appended.
pub(super) fn check_rewrite(offset: u64, len: usize, appended: u64) -> std::io::Result<()> {
    match offset.checked_add(len as u64) {
        Some(end) if end <= appended => Ok(()),
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("rewriting {len} bytes at offset {offset}, past the {appended} bytes written"),
        )),
    }
}
