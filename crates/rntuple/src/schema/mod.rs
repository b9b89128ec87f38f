//! What the bytes mean: the field tree and the mapping of C++ types to
//! fields, columns and Arrow types (spec "Mapping of C++ Types to Fields and
//! Columns").

mod kind;
mod tree;
pub mod typename;

pub use kind::{FieldKind, Primitive};
pub use tree::{FieldNode, Schema};
