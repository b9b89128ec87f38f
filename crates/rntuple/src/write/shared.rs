//! [`SharedFileWriter`]: one [`FileWriter`] for several [`super::RNTupleWriter`]s
//! that own their handle to it, e.g. writers kept in Python objects or moved
//! to other threads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rntuple_container::write::{FileWriter, WriterOptions};
use rntuple_container::Anchor;
use rntuple_format::{Error, Result};

use super::BlobSink;

/// A [`FileWriter`] behind a lock, cloned into every
/// [`super::RNTupleWriter::new_shared`]. Each payload is written under the
/// lock, so writers on different threads interleave whole keys.
///
/// The file is complete only after [`SharedFileWriter::finish`]. After
/// [`SharedFileWriter::abandon`] (or when the last handle is dropped without
/// `finish`) it keeps its placeholder header: ROOT, uproot and this crate
/// refuse it as "not completed by its writer". RNTuple writers still open
/// when the file is finished or abandoned fail from then on.
#[derive(Debug, Clone)]
pub struct SharedFileWriter {
    file: Arc<Mutex<Option<FileWriter>>>,
    path: PathBuf,
    max_key_size: u64,
}

impl SharedFileWriter {
    /// Creates (or truncates) the file at `path`, like [`FileWriter::create`].
    pub fn create(path: impl AsRef<Path>, options: WriterOptions) -> Result<Self> {
        Ok(Self::new(FileWriter::create(path, options)?))
    }

    /// Shares `file`.
    pub fn new(file: FileWriter) -> Self {
        SharedFileWriter {
            path: file.path().to_path_buf(),
            max_key_size: file.max_key_size(),
            file: Arc::new(Mutex::new(Some(file))),
        }
    }

    /// The path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file is neither finished nor abandoned.
    pub fn is_open(&self) -> bool {
        self.file.lock().map(|f| f.is_some()).unwrap_or(false)
    }

    /// Completes the file ([`FileWriter::finish`]) with the anchors written so
    /// far. Fails when it was finished or abandoned before.
    pub fn finish(&self) -> Result<()> {
        let file = self.lock()?.take();
        match file {
            Some(f) => f.finish(),
            None => Err(self.closed()),
        }
    }

    /// Gives the file up: it stays marked incomplete. No-op when it was
    /// finished or abandoned before.
    pub fn abandon(&self) {
        // A poisoned lock: the writer panicked mid-write; dropping it still
        // leaves the placeholder header.
        let file = match self.file.lock() {
            Ok(mut g) => g.take(),
            Err(p) => p.into_inner().take(),
        };
        drop(file);
    }

    fn closed(&self) -> Error {
        Error::state(format!("the file {} has been closed", self.path.display()))
    }

    fn lock(&self) -> Result<MutexGuard<'_, Option<FileWriter>>> {
        self.file
            .lock()
            .map_err(|_| Error::state(format!("a writer of {} panicked; the file is incomplete", self.path.display())))
    }

    fn with<T>(&self, f: impl FnOnce(&mut FileWriter) -> Result<T>) -> Result<T> {
        let mut guard = self.lock()?;
        match guard.as_mut() {
            Some(w) => f(w),
            None => Err(self.closed()),
        }
    }
}

impl BlobSink for SharedFileWriter {
    fn write_blob(&mut self, parts: &[&[u8]], uncompressed_len: u64) -> Result<u64> {
        self.with(|w| w.write_blob_parts_with_len(parts, uncompressed_len))
    }
    fn write_blob_from(&mut self, src: &mut dyn rntuple_container::write::PayloadSource, len: u64) -> Result<u64> {
        self.with(|w| w.write_blob_from(src, len))
    }
    fn scratch_dir(&self) -> Option<std::path::PathBuf> {
        self.with(|w| Ok(w.local_dir().map(std::path::Path::to_path_buf))).ok().flatten()
    }
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        self.with(|w| w.write_anchor(name, anchor))
    }
    fn max_key_size(&self) -> u64 {
        self.max_key_size
    }
    fn write_hidden_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<u64> {
        self.with(|w| w.write_hidden_anchor(name, anchor))
    }
    fn commit(&mut self, record: &[u8]) -> Result<()> {
        self.with(|w| w.commit(record))
    }
    fn add_class_streamer_info(&mut self, object: &[u8]) {
        // A closed file has no record to add to; its writers fail elsewhere.
        let _ = self.with(|w| {
            w.add_class_streamer_info(object);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::{Array, Int32Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::write::{RNTupleWriter, WriteOptions};
    use crate::RNTupleFile;

    fn batch(values: Vec<i32>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(values))]).unwrap()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rntuple-shared-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn shared_writers_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<SharedFileWriter>();
        send::<RNTupleWriter<'static>>();
    }

    #[test]
    fn owned_writers_share_a_file_on_other_threads() {
        let path = scratch("shared.root");
        let file = SharedFileWriter::create(&path, WriterOptions::default()).unwrap();
        let b = batch(vec![1, 2, 3]);
        let open = |name: &str| {
            RNTupleWriter::new_shared(&file, name, &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap()
        };
        let dropped = open("dropped");
        let threads: Vec<_> = [(open("a"), 10), (open("dir/c"), 20)]
            .into_iter()
            .map(|(mut w, k)| {
                let b = batch(vec![k; 100]);
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        w.write_batch(&b).unwrap();
                        w.commit_cluster().unwrap();
                    }
                    w.close().unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        drop(dropped); // never closed: no anchor
        file.finish().unwrap();
        assert!(!file.is_open());
        assert!(file.finish().is_err());
        let f = RNTupleFile::open(&path).unwrap();
        let mut names = f.rntuple_names().unwrap();
        names.sort();
        assert_eq!(names, ["a", "dir/c"]);
        let c = f.rntuple("dir/c").unwrap();
        assert_eq!(c.num_entries(), 500);
        let read = c.read(None, 0, 500).unwrap();
        let x = read.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
        assert!(x.len() == 500 && x.values().iter().all(|&v| v == 20));
    }

    #[test]
    fn an_abandoned_file_is_not_completed() {
        let path = scratch("abandoned.root");
        let file = SharedFileWriter::create(&path, WriterOptions::default()).unwrap();
        let b = batch(vec![1]);
        let mut w =
            RNTupleWriter::new_shared(&file, "t", &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap();
        w.write_batch(&b).unwrap();
        file.abandon();
        let e = w.close().unwrap_err().to_string();
        assert!(e.contains("closed"), "{e}");
        let e = RNTupleFile::open(&path).unwrap_err().to_string();
        assert!(e.contains("not completed"), "{e}");
    }
}
