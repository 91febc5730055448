//! Turns TDLib `.tl` schema text into [`Definition`]s and computes each one's constructor id.
//!
//! It knows nothing of Rust code: the generator (`tl-gen`) consumes what this crate produces.
//! It reads the whole upstream `td_api.tl` — `//@` doc comments, builtins such as
//! `vector {t:Type} # [ t ] = Vector t;` and the `---functions---` separator — as well as the
//! project's own comment-free schema.

mod definition;
mod error;
mod parse;

pub use definition::{Category, Definition, Parameter, Type};
pub use error::ParseError;
pub use parse::parse_schema;
