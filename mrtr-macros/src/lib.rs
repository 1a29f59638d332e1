//! Procedural macros for `mrtr`. Use them through the `mrtr` facade crate.
//!
//! The attribute and derive macros live here as thin shims; the work happens in plain,
//! unit-tested modules (parse → lower → analyze → expand).
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod machine;

/// Compiles an `async fn` (or `fn`) that may suspend with `ask!`, `sample!`, `roots!` and
/// `join!` into a resumable MCP tool: a unit struct of the same name implementing
/// `mrtr::machine::Machine<Output = CallToolResult>`.
///
/// Arguments: `name = "..."` (listed name), `description = "..."` (instead of the doc
/// comment), `compat = "..."` (declare a layout-compatible edit: keeps in-flight flows).
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    machine::expand_attribute(machine::Kind::Tool, attr.into(), item.into()).into()
}

/// Like [`macro@tool`], for `prompts/get`: the function returns prompt messages.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    machine::expand_attribute(machine::Kind::Prompt, attr.into(), item.into()).into()
}

/// Like [`macro@tool`], for `resources/read` of a fixed `uri = "..."`: the function returns
/// the contents.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    machine::expand_attribute(machine::Kind::Resource, attr.into(), item.into()).into()
}
