//! Runtime for `mrtr`: what compiled tools run on.
//!
//! - [`machine`]: the contract a resumable tool implements and the typed input outcomes.
//! - [`form`]: the [`form::Form`] and [`form::FormChoice`] traits behind form elicitations.
//! - [`token`]: the sealed `requestState` format, key ring and clock.
//! - [`server`]: the rmcp adapter that lists, gates, resumes and seals.
//! - `testing` (feature `testing`): the test kit — step a machine round by round through real
//!   sealing in-process, hop instances, replay and tamper rounds, print transcripts.
//! - `client` (feature `client`): a driver that answers `input_required` rounds, by hand or
//!   automatically.
//! - [`error`]: what the error types share: boxed causes and [`error::ErrorChain`].
//!
//! # Features
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `stdio` | yes | rmcp's stdio transport (`rmcp::transport::stdio()`) to serve over stdin/stdout |
//! | `server-http` | yes | `server::http`: production Streamable HTTP serving (axum, hyper) |
//! | `client` | no | `client`: the MRTR client driver, over any rmcp client transport |
//! | `client-http` | no | `client` plus rmcp's Streamable HTTP client (reqwest, rustls) |
//! | `client-child-process` | no | `client` plus rmcp's child-process transport |
#![deny(missing_docs)]
// One line needs `unsafe` (getrlimit in `server::http`), allowed there with a SAFETY note.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
pub mod __private;
#[cfg(test)]
mod captured_logs;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
pub mod error;
pub mod form;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz_api;
pub mod machine;
mod method;
pub mod server;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod token;

pub use machine::{AsJson, State};

/// The trait behind `#[derive(Form)]`; through `mrtr`, `mrtr::Form` names both the trait and
/// the derive, as `serde::Serialize` does.
///
/// ```
/// fn schema_of<T: mrtr_runtime::Form>() -> rmcp::model::ElicitationSchema {
///     T::requested_schema()
/// }
/// ```
pub use form::Form;
/// The trait behind `#[derive(FormChoice)]`; `mrtr::FormChoice` names both.
///
/// ```
/// fn options_of<T: mrtr_runtime::FormChoice>() -> usize {
///     T::OPTIONS.len()
/// }
/// ```
pub use form::FormChoice;

/// What a tool module usually needs: `use mrtr::prelude::*;`.
///
/// ```
/// use mrtr_runtime::prelude::*;
/// let kept: AsJson<u8> = AsJson(1);
/// assert_eq!(*kept, 1);
/// ```
pub mod prelude {
    pub use crate::machine::{AsJson, Elicited, NotAccepted, Roots, Sampled, State, ToolError};
    pub use crate::{ask, join, roots, sample};
}
pub use rmcp;
