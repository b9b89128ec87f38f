//! What the bytes mean: the field tree and the mapping of C++ types to
//! fields, columns and Arrow types (spec "Mapping of C++ Types to Fields and
//! Columns").
//!
//! * [`arrow`]: the one mapping of composite C++ types to Arrow types
//!   (reader and writer);
//! * [`fundamental`]: the one table of fundamental types (C++ names,
//!   [`Primitive`], Arrow types, default and allowed column types);
//! * [`cpp`]: C++ type names parsed into [`CppType`] and re-spelled normalized;
//! * [`FieldNode`] / [`Schema`]: the field tree with its [`FieldKind`]s and
//!   columns, built from a header's fields and columns (the reader's
//!   [`Schema::from_descriptor`], the writer's plan through
//!   [`Schema::from_description`]);
//! * [`projection`]: projected fields (alias columns) over such a tree.

pub mod arrow;
pub mod cpp;
pub mod fundamental;
mod kind;
pub mod projection;
mod tree;
pub mod typename;

pub use cpp::CppType;
pub use fundamental::{Fundamental, Primitive, FUNDAMENTALS};
pub use kind::FieldKind;
pub use tree::{FieldAt, FieldNode, Schema};
