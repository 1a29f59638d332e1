//! The MRTR client driver: [`MrtrClient`] sends `tools/call`, `prompts/get` and
//! `resources/read`, answers each `input_required` round with its handler and sends the call
//! again until it completes, or hands each round to the caller in manual mode.
//!
//! Its parts: [`client`] (connecting, and the automatic loop), [`config`] (the loop's limits and observers), [`send`] (one round's request
//! and its retries), [`reply`] (reading what the server answered), [`answer`] (the handler
//! answering a round) and [`tasks`] (following a call the server turned into a task).
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

mod answer;
mod client;
mod config;
mod reply;
mod send;
mod tasks;
#[cfg(test)]
mod tests;

pub use client::{MrtrClient, client_config};
pub use config::{DriverConfig, RoundObserver};
