//! The directories and anchors of a file being written, in ROOT's key-list order.
//!
//! Order of a directory's keys, as `TDirectoryFile` lists them (seen in files
//! ROOT writes): in creation order, except that a new cycle of an existing name
//! goes right before the older cycles (highest cycle first). Subdirectories are
//! created on first use; like `TDirectoryFile::mkdir`, a directory may not share
//! its name with another key of its parent.

use rntuple_format::{Error, Result};

use crate::anchor::Anchor;

/// Index of the top directory in [`Tree::dirs`].
pub(crate) const TOP: usize = 0;

#[derive(Debug, Clone)]
pub(crate) struct Dir {
    /// Name of the directory (empty for the top directory).
    pub(crate) name: String,
    /// `/`-separated path from the top (empty for the top directory).
    pub(crate) path: String,
    pub(crate) parent: Option<usize>,
    pub(crate) entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
pub(crate) enum Entry {
    /// A subdirectory, by index in [`Tree::dirs`].
    Dir(usize),
    /// An anchor; `seq` counts the anchors in the order they were added.
    Anchor { name: String, cycle: i16, seq: usize, anchor: Anchor },
}

#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub(crate) dirs: Vec<Dir>,
    /// Anchors added so far.
    pub(crate) n_anchors: usize,
}

impl Default for Tree {
    fn default() -> Self {
        Self {
            dirs: vec![Dir { name: String::new(), path: String::new(), parent: None, entries: Vec::new() }],
            n_anchors: 0,
        }
    }
}

impl Tree {
    /// Adds an anchor at `path` (`"name"` or `"dir/sub/name"`, an optional
    /// leading `/`), creating the directories on the way. Returns its cycle.
    pub(crate) fn add_anchor(&mut self, path: &str, anchor: Anchor) -> Result<i16> {
        let trimmed = path.strip_prefix('/').unwrap_or(path);
        let parts: Vec<&str> = trimmed.split('/').collect();
        let bad = |why: &str| Error::invalid(format!("bad RNTuple path '{path}': {why}"));
        if parts.iter().any(|p| p.is_empty()) {
            return Err(bad("empty name or directory name"));
        }
        if parts.iter().any(|p| p.contains(';')) {
            return Err(bad("';' separates a cycle number in ROOT object paths"));
        }
        let (name, dirs) = parts.split_last().ok_or_else(|| bad("empty"))?;
        let mut dir = TOP;
        for part in dirs {
            dir = self.subdirectory(dir, part).map_err(|e| bad(&e))?;
        }
        let mut same_name = None;
        for (i, e) in self.dirs[dir].entries.iter().enumerate() {
            match e {
                Entry::Dir(d) if self.dirs[*d].name == *name => {
                    return Err(bad(&format!("'{}' is a directory", self.dirs[*d].path)));
                }
                Entry::Anchor { name: n, cycle, .. } if n == name => {
                    same_name = Some((i, *cycle));
                    break;
                }
                _ => {}
            }
        }
        let seq = self.n_anchors;
        self.n_anchors += 1;
        let entry = |cycle| Entry::Anchor { name: name.to_string(), cycle, seq, anchor };
        let entries = &mut self.dirs[dir].entries;
        match same_name {
            None => {
                entries.push(entry(1));
                Ok(1)
            }
            Some((i, highest)) => {
                let cycle = highest.checked_add(1).ok_or_else(|| bad("too many cycles"))?;
                entries.insert(i, entry(cycle));
                Ok(cycle)
            }
        }
    }

    /// The subdirectory `name` of `parent`, created if missing.
    fn subdirectory(&mut self, parent: usize, name: &str) -> std::result::Result<usize, String> {
        for e in &self.dirs[parent].entries {
            match e {
                Entry::Dir(d) if self.dirs[*d].name == name => return Ok(*d),
                Entry::Anchor { name: n, .. } if n == name => {
                    return Err(format!("'{name}' in '{}' is an RNTuple, not a directory", self.dirs[parent].path));
                }
                _ => {}
            }
        }
        let path = if parent == TOP { name.to_string() } else { format!("{}/{name}", self.dirs[parent].path) };
        let index = self.dirs.len();
        self.dirs.push(Dir { name: name.to_string(), path, parent: Some(parent), entries: Vec::new() });
        self.dirs[parent].entries.push(Entry::Dir(index));
        Ok(index)
    }

    /// Every directory, the top first, each before its subdirectories, in
    /// key-list order (depth first).
    pub(crate) fn preorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.dirs.len());
        let mut stack = vec![TOP];
        while let Some(d) = stack.pop() {
            out.push(d);
            let subs = self.dirs[d].entries.iter().filter_map(|e| if let Entry::Dir(s) = e { Some(*s) } else { None });
            let subs: Vec<usize> = subs.collect();
            stack.extend(subs.into_iter().rev());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(seek: u64) -> Anchor {
        Anchor {
            version_epoch: 1,
            version_major: 0,
            version_minor: 2,
            version_patch: 0,
            seek_header: seek,
            nbytes_header: 1,
            len_header: 1,
            seek_footer: seek,
            nbytes_footer: 1,
            len_footer: 1,
            max_key_size: 1 << 30,
        }
    }

    fn listing(t: &Tree) -> Vec<String> {
        let mut out = Vec::new();
        for d in t.preorder() {
            for e in &t.dirs[d].entries {
                match e {
                    Entry::Dir(s) => out.push(format!("{}/", t.dirs[*s].path)),
                    Entry::Anchor { name, cycle, .. } => out.push(format!("{}:{name};{cycle}", t.dirs[d].path)),
                }
            }
        }
        out
    }

    #[test]
    fn directories_and_cycles_in_roots_order() {
        let mut t = Tree::default();
        assert_eq!(t.add_anchor("dir/sub/Events", anchor(1)).unwrap(), 1);
        assert_eq!(t.add_anchor("top", anchor(2)).unwrap(), 1);
        assert_eq!(t.add_anchor("/dir/Events", anchor(3)).unwrap(), 1);
        assert_eq!(t.add_anchor("dir/Events", anchor(4)).unwrap(), 2);
        assert_eq!(t.add_anchor("dir/x", anchor(5)).unwrap(), 1);
        assert_eq!(t.add_anchor("dir/Events", anchor(6)).unwrap(), 3);
        assert_eq!(
            listing(&t),
            [
                "dir/",
                ":top;1",
                "dir/sub/",
                "dir:Events;3",
                "dir:Events;2",
                "dir:Events;1",
                "dir:x;1",
                "dir/sub:Events;1"
            ]
        );
        assert_eq!(t.preorder(), [0, 1, 2]);
        assert_eq!(t.dirs[2].path, "dir/sub");
        assert_eq!(t.dirs[2].parent, Some(1));
    }

    #[test]
    fn rejects_bad_paths_and_name_clashes() {
        let mut t = Tree::default();
        t.add_anchor("a/b", anchor(1)).unwrap();
        for bad in ["", "/", "a//b", "a/", "x;1", "a/b/c", "a"] {
            assert!(matches!(t.add_anchor(bad, anchor(1)), Err(Error::InvalidArgument { .. })), "{bad}");
        }
        assert_eq!(t.dirs.len(), 2, "a failed call creates no directory");
    }
}
