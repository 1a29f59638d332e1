//! Runtime for `mrtr`: what compiled tools run on.
//!
//! - [`machine`]: the contract a resumable tool implements and the typed input outcomes.
//! - [`token`]: the sealed `requestState` format, key ring and clock.
//! - [`server`]: the rmcp adapter that lists, gates, resumes and seals.
//! - [`client`]: a driver that answers `input_required` rounds.
#![deny(missing_docs)]

pub mod client;
