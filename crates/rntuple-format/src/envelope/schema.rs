//! The schema description: four list frames shared by the header and the
//! footer's schema extension record frame (RNTuple binary format 1.0,
//! sections "Header Envelope", "Field Description", "Column Description",
//! "Alias columns", "Extra type information").
//!
//! Field record frame:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         Field Version                         |
//! |                          Type Version                         |
//! |                        Parent Field ID                        |
//! |        Structural Role        |             Flags             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! String: name, type name, type alias, description
//! [u64 array size if flag 0x01] [u32 source field id if 0x02] [u32 type checksum if 0x04]
//! ```
//!
//! Column record frame:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |              Type             |        Bits on Storage        |
//! |                            Field ID                           |
//! |             Flags             |      Representation Index     |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! [i64 first element index if flag 0x01] [f64 min, f64 max if flag 0x02]
//! ```
//!
//! Alias column record frame: u32 physical column id, u32 field id.
//! Extra type information record frame: u32 content id, u32 type version,
//! string type name, string content (the last as ROOT writes it; the spec
//! text names only the type name).

use crate::constants::*;
use crate::error::Result;
use crate::frame::{Reader, Writer};
use crate::model::*;

/// Reads the four list frames of a schema description.
pub fn parse_schema_description(r: &mut Reader<'_>) -> Result<SchemaDescription> {
    let (n, mut list) = r.list_frame(RECORD_FRAME_PREAMBLE_SIZE, "field list frame")?;
    let mut unknown_trailing_bytes = Vec::new();
    let mut trailing = |what: String, rest: usize| {
        if rest > 0 {
            unknown_trailing_bytes.push((what, rest));
        }
    };
    let mut fields = Vec::with_capacity(n as usize);
    for i in 0..n {
        let (f, rest) = parse_field(&mut list).map_err(|e| e.within(&format!("field {i}")))?;
        trailing(format!("field {i} '{}'", f.name), rest);
        fields.push(f);
    }

    let (n, mut list) = r.list_frame(RECORD_FRAME_PREAMBLE_SIZE, "column list frame")?;
    let mut columns = Vec::with_capacity(n as usize);
    for i in 0..n {
        let (c, rest) = parse_column(&mut list).map_err(|e| e.within(&format!("column {i}")))?;
        trailing(format!("column {i}"), rest);
        columns.push(c);
    }

    let (n, mut list) = r.list_frame(RECORD_FRAME_PREAMBLE_SIZE, "alias column list frame")?;
    let mut alias_columns = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut f =
            list.record_frame("alias column record frame").map_err(|e| e.within(&format!("alias column {i}")))?;
        let physical_column_id = f.u32("alias column: physical column id")?;
        let field_id = f.u32("alias column: field id")?;
        trailing(format!("alias column {i}"), f.remaining());
        alias_columns.push(AliasColumnDescriptor { physical_column_id, field_id });
    }

    let (n, mut list) = r.list_frame(RECORD_FRAME_PREAMBLE_SIZE, "extra type information list frame")?;
    let mut extra_type_info = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut f = list
            .record_frame("extra type information record frame")
            .map_err(|e| e.within(&format!("extra type information {i}")))?;
        let content_id = f.u32("extra type information: content id")?;
        let type_version = f.u32("extra type information: type version")?;
        let type_name = f.string("extra type information: type name")?;
        let content = if f.is_empty() {
            Vec::new()
        } else {
            let len = f.u32("extra type information: content length")? as usize;
            f.bytes(len, "extra type information: content")?.to_vec()
        };
        trailing(format!("extra type information {i}"), f.remaining());
        extra_type_info.push(ExtraTypeInfo { content_id, type_version, type_name, content });
    }

    Ok(SchemaDescription { fields, columns, alias_columns, extra_type_info, unknown_trailing_bytes })
}

/// One field record and the number of bytes left in its frame after it.
fn parse_field(list: &mut Reader<'_>) -> Result<(FieldDescriptor, usize)> {
    let mut f = list.record_frame("field record frame")?;
    let field_version = f.u32("field version")?;
    let type_version = f.u32("type version")?;
    let parent_id = f.u32("parent field id")?;
    let role = match f.u16("structural role")? {
        ROLE_LEAF => StructuralRole::Leaf,
        ROLE_COLLECTION => StructuralRole::Collection,
        ROLE_RECORD => StructuralRole::Record,
        ROLE_VARIANT => StructuralRole::Variant,
        ROLE_STREAMER => StructuralRole::Streamer,
        other => StructuralRole::Unknown(other),
    };
    let flags = f.u16("field flags")?;
    let name = f.string("field name")?;
    let type_name = f.string("type name")?;
    let type_alias = f.string("type alias")?;
    let description = f.string("field description")?;
    let array_size = if flags & FIELD_FLAG_REPETITIVE != 0 { Some(f.u64("array size")?) } else { None };
    let source_field_id =
        if flags & FIELD_FLAG_PROJECTED != 0 { Some(f.u32("projection source field id")?) } else { None };
    let type_checksum = if flags & FIELD_FLAG_TYPE_CHECKSUM != 0 { Some(f.u32("ROOT type checksum")?) } else { None };
    let field = FieldDescriptor {
        field_version,
        type_version,
        parent_id,
        role,
        flags,
        name,
        type_name,
        type_alias,
        description,
        array_size,
        source_field_id,
        type_checksum,
    };
    Ok((field, f.remaining()))
}

/// One column record and the number of bytes left in its frame after it.
fn parse_column(list: &mut Reader<'_>) -> Result<(ColumnDescriptor, usize)> {
    let mut f = list.record_frame("column record frame")?;
    let column_type = ColumnType::from_id(f.u16("column type")?);
    let bits_on_storage = f.u16("bits on storage")?;
    let field_id = f.u32("field id")?;
    let flags = f.u16("column flags")?;
    let representation_index = f.u16("representation index")?;
    let first_element_index =
        if flags & COLUMN_FLAG_DEFERRED != 0 { Some(f.i64("first element index")?) } else { None };
    let value_range = if flags & COLUMN_FLAG_RANGE != 0 {
        let min = f.f64("value range minimum")?;
        let max = f.f64("value range maximum")?;
        Some((min, max))
    } else {
        None
    };
    let column = ColumnDescriptor {
        column_type,
        bits_on_storage,
        field_id,
        flags,
        representation_index,
        first_element_index,
        value_range,
    };
    Ok((column, f.remaining()))
}

/// Writes the four list frames of a schema description. The flags of
/// fields and columns are derived from their optional members.
pub fn write_schema_description(w: &mut Writer, s: &SchemaDescription) -> Result<()> {
    w.record_list(&s.fields, |w, f| {
        w.u32(f.field_version);
        w.u32(f.type_version);
        w.u32(f.parent_id);
        w.u16(match f.role {
            StructuralRole::Leaf => ROLE_LEAF,
            StructuralRole::Collection => ROLE_COLLECTION,
            StructuralRole::Record => ROLE_RECORD,
            StructuralRole::Variant => ROLE_VARIANT,
            StructuralRole::Streamer => ROLE_STREAMER,
            StructuralRole::Unknown(v) => v,
        });
        let mut flags = f.flags & !(FIELD_FLAG_REPETITIVE | FIELD_FLAG_PROJECTED | FIELD_FLAG_TYPE_CHECKSUM);
        if f.array_size.is_some() {
            flags |= FIELD_FLAG_REPETITIVE;
        }
        if f.source_field_id.is_some() {
            flags |= FIELD_FLAG_PROJECTED;
        }
        if f.type_checksum.is_some() {
            flags |= FIELD_FLAG_TYPE_CHECKSUM;
        }
        w.u16(flags);
        w.string(&f.name)?;
        w.string(&f.type_name)?;
        w.string(&f.type_alias)?;
        w.string(&f.description)?;
        if let Some(n) = f.array_size {
            w.u64(n);
        }
        if let Some(id) = f.source_field_id {
            w.u32(id);
        }
        if let Some(c) = f.type_checksum {
            w.u32(c);
        }
        Ok(())
    })?;
    w.record_list(&s.columns, |w, c| {
        w.u16(c.column_type.id());
        w.u16(c.bits_on_storage);
        w.u32(c.field_id);
        let mut flags = c.flags & !(COLUMN_FLAG_DEFERRED | COLUMN_FLAG_RANGE);
        if c.first_element_index.is_some() {
            flags |= COLUMN_FLAG_DEFERRED;
        }
        if c.value_range.is_some() {
            flags |= COLUMN_FLAG_RANGE;
        }
        w.u16(flags);
        w.u16(c.representation_index);
        if let Some(i) = c.first_element_index {
            w.i64(i);
        }
        if let Some((min, max)) = c.value_range {
            w.f64(min);
            w.f64(max);
        }
        Ok(())
    })?;
    w.record_list(&s.alias_columns, |w, a| {
        w.u32(a.physical_column_id);
        w.u32(a.field_id);
        Ok(())
    })?;
    w.record_list(&s.extra_type_info, |w, e| {
        w.u32(e.content_id);
        w.u32(e.type_version);
        w.string(&e.type_name)?;
        let len = u32::try_from(e.content.len())
            .map_err(|_| crate::Error::invalid("extra type information content exceeds 4 GiB"))?;
        w.u32(len);
        w.bytes(&e.content);
        Ok(())
    })
}
