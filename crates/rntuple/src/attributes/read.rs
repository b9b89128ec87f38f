//! Reading an attribute set: its anchor through the footer's locator, its
//! meta schema checked as ROOT 6.40's `RNTupleAttrSetReader` checks it, its
//! ranges read at once (as ROOT does), its user fields as an RNTuple.

use arrow_array::{Array, RecordBatch, UInt64Array};
use rntuple_container::{Anchor, RootFile};
use rntuple_format::{Error, Location, Result};

use super::{AttributeSetLink, RANGE_LEN, RANGE_START, SCHEMA_VERSION, USER_DATA};
use crate::schema::FieldKind;
use crate::{read_envelope, RNTuple};

/// The main entries one attribute entry refers to: `[start, start + length)`
/// (ROOT's `RNTupleAttrRange`). A length of 0 is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AttributeRange {
    pub start: u64,
    pub length: u64,
}

impl AttributeRange {
    pub fn new(start: u64, length: u64) -> Self {
        AttributeRange { start, length }
    }

    /// One past the last entry (saturating).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.length)
    }
}

/// One attribute set, read (see [the module](super)).
#[derive(Debug, Clone)]
pub struct AttributeSet {
    link: AttributeSetLink,
    rntuple: RNTuple,
    values: RNTuple,
    ranges: Vec<AttributeRange>,
}

impl RNTuple {
    /// Opens the attribute set `name` of this RNTuple (ROOT 6.40's
    /// `RNTupleReader::OpenAttributeSet`).
    pub fn attribute_set(&self, name: &str) -> Result<AttributeSet> {
        let Some(link) = self.attribute_sets.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = self.attribute_sets.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::NotFound {
                what: format!("attribute set '{name}' of RNTuple '{}' (it has {names:?})", self.path),
            });
        };
        AttributeSet::open(self, link.clone())
    }
}

/// Reads and parses the anchor a footer's `link` locates (spec "Linked
/// Attribute Set Record Frame": the locator of the anchor object and its
/// uncompressed length); `what` names the set in errors.
pub fn read_anchor(
    root: &RootFile,
    link: &AttributeSetLink,
    max_key_size: u64,
    verify_checksums: bool,
    what: &str,
) -> Result<Anchor> {
    let loc = link.anchor_locator;
    let bytes =
        read_envelope(root, loc.offset, loc.size, u64::from(link.anchor_length), max_key_size, "attribute set anchor")
            .map_err(|e| e.within(what))?;
    Anchor::parse(&bytes, verify_checksums, &Location::new(format!("anchor of {what}"), Some(loc.offset)))
}

impl AttributeSet {
    fn open(main: &RNTuple, link: AttributeSetLink) -> Result<Self> {
        let what = format!("attribute set '{}' of RNTuple '{}'", link.name, main.path);
        let within = |e: Error| e.within(&what);
        let at = |offset: Option<u64>| Location::new(what.clone(), offset);
        if link.schema_version_major != SCHEMA_VERSION.0 {
            return Err(Error::unsupported(
                format!(
                    "attribute schema version {}.{} (only {}.x is read)",
                    link.schema_version_major, link.schema_version_minor, SCHEMA_VERSION.0
                ),
                at(None),
            ));
        }
        let root = &main.source.file;
        let anchor = read_anchor(root, &link, main.anchor.max_key_size, main.options.verify_checksums, &what)?;
        let rntuple = RNTuple::open_anchor(root.clone(), &link.name, anchor, main.options).map_err(within)?;
        let names: Vec<&str> = rntuple.schema.fields.iter().map(|f| f.name.as_str()).collect();
        let user_index = meta_fields(&names, link.schema_version_minor)
            .map_err(|why| Error::out_of_spec(why, at(Some(rntuple.anchor.seek_header))))?;
        let user = &rntuple.schema.fields[user_index];
        if !matches!(user.kind, FieldKind::Record) {
            return Err(Error::out_of_spec(
                format!("its field {USER_DATA} is a {:?}, not a record", user.kind),
                at(Some(rntuple.anchor.seek_header)),
            ));
        }
        let mut values = rntuple.clone();
        values.schema.fields = user.children.clone();
        values.attribute_sets = Vec::new();
        let batch = rntuple.read(Some(&[RANGE_START, RANGE_LEN]), 0, u64::MAX).map_err(within)?;
        let starts = u64_column(&batch, 0, &what)?;
        let lengths = u64_column(&batch, 1, &what)?;
        let ranges = starts.values().iter().zip(lengths.values()).map(|(&s, &l)| AttributeRange::new(s, l)).collect();
        Ok(AttributeSet { link, rntuple, values, ranges })
    }

    pub fn name(&self) -> &str {
        &self.link.name
    }

    /// The footer's record of this set (schema version, anchor locator).
    pub fn link(&self) -> &AttributeSetLink {
        &self.link
    }

    /// Number of attribute entries.
    pub fn num_entries(&self) -> u64 {
        self.ranges.len() as u64
    }

    /// The main entries of each attribute entry, in attribute entry order.
    pub fn ranges(&self) -> &[AttributeRange] {
        &self.ranges
    }

    /// The user's fields as top-level fields of an RNTuple with one entry
    /// per attribute entry: read them with [`RNTuple::read`] and the rest of
    /// the RNTuple API.
    pub fn values(&self) -> &RNTuple {
        &self.values
    }

    /// The attribute set's RNTuple as stored (meta fields `_rangeStart`,
    /// `_rangeLen` and the record `_userData`).
    pub fn rntuple(&self) -> &RNTuple {
        &self.rntuple
    }

    /// Reads user fields (all when `None`) of attribute entries `[start, stop)`.
    pub fn read(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<RecordBatch> {
        self.values.read(fields, start, stop)
    }

    /// Every attribute entry, ordered by the start of its range (ties in
    /// entry order), as ROOT's `GetAttributes()`.
    pub fn entries(&self) -> Vec<u64> {
        self.select(|_| true, true)
    }

    /// Attribute entries whose range contains main entry `entry`
    /// (`GetAttributes(entry)`); empty ranges never do.
    pub fn entries_containing(&self, entry: u64) -> Vec<u64> {
        self.entries_containing_range(entry, entry.saturating_add(1))
    }

    /// Attribute entries whose range contains all of `[start, end)`
    /// (`GetAttributesContainingRange`); none when `end <= start`.
    pub fn entries_containing_range(&self, start: u64, end: u64) -> Vec<u64> {
        if end <= start {
            return Vec::new();
        }
        self.select(|r| r.start <= start && end <= r.end(), false)
    }

    /// Attribute entries whose range lies within `[start, end)`
    /// (`GetAttributesInRange`); none when `end <= start`.
    pub fn entries_in_range(&self, start: u64, end: u64) -> Vec<u64> {
        if end <= start {
            return Vec::new();
        }
        self.select(|r| start <= r.start && r.end() <= end, false)
    }

    fn select(&self, keep: impl Fn(&AttributeRange) -> bool, with_empty: bool) -> Vec<u64> {
        let mut order: Vec<u64> = (0..self.ranges.len() as u64).collect();
        order.sort_by_key(|&i| self.ranges[i as usize].start);
        order.retain(|&i| {
            let r = &self.ranges[i as usize];
            (with_empty || r.length > 0) && keep(r)
        });
        order
    }
}

/// Checks the top-level fields of an attribute set's RNTuple and returns
/// the index of `_userData`. Schema 1.0 has exactly the three meta fields
/// in order. A later minor version may add fields (the spec's "Attribute
/// sets": a minor version adds optional content older readers ignore), so
/// with a minor version above 0 the three must be there, in any order, and
/// every other field is ignored.
fn meta_fields(names: &[&str], minor: u16) -> std::result::Result<usize, String> {
    const META: [&str; 3] = [RANGE_START, RANGE_LEN, USER_DATA];
    if minor == 0 {
        return if names == META {
            Ok(2)
        } else {
            Err(format!("its top-level fields are {names:?}, not {META:?} (attribute schema 1.0)"))
        };
    }
    let missing: Vec<&str> = META.iter().copied().filter(|m| !names.contains(m)).collect();
    if !missing.is_empty() {
        return Err(format!("its top-level fields {names:?} lack {missing:?} (attribute schema 1.{minor})"));
    }
    names.iter().position(|n| *n == USER_DATA).ok_or_else(|| format!("no {USER_DATA} field"))
}

fn u64_column<'a>(batch: &'a RecordBatch, i: usize, what: &str) -> Result<&'a UInt64Array> {
    let col = batch.column(i);
    col.as_any().downcast_ref::<UInt64Array>().ok_or_else(|| {
        Error::out_of_spec(
            format!(
                "its field {} is read as {}, not as std::uint64_t",
                batch.schema().field(i).name(),
                col.data_type()
            ),
            Location::new(what.to_string(), None),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::meta_fields;

    #[test]
    fn schema_1_0_has_exactly_the_meta_fields() {
        assert_eq!(meta_fields(&["_rangeStart", "_rangeLen", "_userData"], 0), Ok(2));
        let e = meta_fields(&["_rangeStart", "_rangeLen", "_userData", "_extra"], 0).unwrap_err();
        assert!(e.contains("_extra") && e.contains("attribute schema 1.0"), "{e}");
    }

    #[test]
    fn a_later_minor_version_may_add_fields_which_are_ignored() {
        assert_eq!(meta_fields(&["_rangeStart", "_rangeLen", "_userData", "_extra"], 1), Ok(2));
        assert_eq!(meta_fields(&["_weight", "_rangeStart", "_userData", "_rangeLen"], 3), Ok(2));
        let e = meta_fields(&["_rangeStart", "_userData", "_extra"], 1).unwrap_err();
        assert!(e.contains("_rangeLen") && e.contains("attribute schema 1.1"), "{e}");
    }
}
