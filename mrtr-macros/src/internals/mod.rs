//! What `machine/` (the attribute macros) and `form/` (the derives) share, modelled on
//! serde_derive's `internals/`:
//!
//! - [`errors`]: the error accumulator every stage records into, and span helpers;
//! - [`attr`]: every attribute the macros read — `#[mrtr::tool(..)]` and its siblings,
//!   `#[form(..)]`, and the serde attributes that decide wire names;
//! - [`case`]: serde's `rename_all` rules;
//! - [`crate_path`]: the `crate = "..."` option, for a renamed or re-exported `mrtr`;
//! - [`doc`]: doc-comment text as listings and schemas show it.

pub(crate) mod attr;
pub(crate) mod case;
pub(crate) mod crate_path;
pub(crate) mod doc;
pub(crate) mod errors;
