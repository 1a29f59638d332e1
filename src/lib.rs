//! `mrtr`: write MCP tools that ask the user, the user's LLM or the user's workspace for
//! input mid-call as straight-line Rust, served over MCP 2026-07-28 Multi Round-Trip Requests.
#![deny(missing_docs)]

pub use mrtr_macros::*;
pub use mrtr_runtime::*;
