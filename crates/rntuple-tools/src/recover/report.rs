//! The text and JSON forms of a [`RecoveryReport`].

use std::fmt;

use serde_json::json;

use super::{FileState, RecoveryReport};

impl RecoveryReport {
    /// Entries kept over all RNTuples.
    pub fn entries(&self) -> u64 {
        self.rntuples.iter().map(|t| t.entries).sum()
    }

    /// The report as JSON (schema in docs/recover.md).
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "file": self.file.display().to_string(),
            "state": match self.state { FileState::Complete => "complete", FileState::Unfinished => "unfinished" },
            "file_bytes": self.file_bytes,
            "kept_bytes": self.kept_bytes,
            "torn_journal": self.torn_journal,
            "output": self.output.as_ref().map(|p| p.display().to_string()),
            "rntuples": self.rntuples.iter().map(|t| json!({
                "name": t.name,
                "entries": t.entries,
                "clusters": t.clusters,
                "dropped": t.dropped,
                "unverified_pages": t.unverified_pages,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        if self.state == FileState::Complete {
            return writeln!(f, "{file}: a complete file; nothing to recover");
        }
        writeln!(f, "{file}: unfinished by its writer")?;
        for t in &self.rntuples {
            writeln!(f, "  RNTuple '{}': {} entries in {} committed clusters kept", t.name, t.entries, t.clusters)?;
            if t.unverified_pages > 0 {
                writeln!(f, "    {} pages kept without a checksum to verify", t.unverified_pages)?;
            }
            for d in &t.dropped {
                writeln!(f, "    dropped {d}")?;
            }
        }
        if let Some(t) = &self.torn_journal {
            writeln!(f, "  journal: {t} (the commit under way when the writer died), ignored")?;
        }
        writeln!(
            f,
            "  kept {} of {} bytes; {} bytes written after the last commit kept are dropped (entries not committed)",
            self.kept_bytes,
            self.file_bytes,
            self.file_bytes.saturating_sub(self.kept_bytes)
        )?;
        match &self.output {
            Some(o) => writeln!(f, "wrote {} ({} entries)", o.display(), self.entries()),
            None => writeln!(f, "report only: give OUT to write the recovered file"),
        }
    }
}
