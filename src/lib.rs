//! `mrtr`: write MCP tools that ask the user, the user's LLM or the user's workspace for
//! input mid-call as straight-line Rust, served over MCP 2026-07-28 Multi Round-Trip Requests.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `stdio` | yes | rmcp's stdio transport (`mrtr::rmcp::transport::stdio()`) to serve over stdin/stdout |
//! | `server-http` | yes | `mrtr::server::http`: production Streamable HTTP serving (axum, hyper) |
//! | `client` | no | `mrtr::client`: the MRTR client driver, over any rmcp client transport |
//! | `client-http` | no | `client` plus rmcp's Streamable HTTP client (reqwest, rustls) |
//! | `client-child-process` | no | `client` plus rmcp's child-process transport |
//!
//! The terminal client (the `mrtr` binary) is its own package: `cargo install mrtr-cli`.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use mrtr_macros::*;
pub use mrtr_runtime::*;
