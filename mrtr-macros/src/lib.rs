//! Procedural macros for `mrtr`. Use them through the `mrtr` facade crate.
//!
//! The attribute and derive macros live here as thin shims; the work happens in plain,
//! unit-tested modules (parse → lower → analyze → expand).
#![deny(missing_docs)]
