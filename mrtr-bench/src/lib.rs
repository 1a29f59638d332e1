//! Side-by-side benchmark of `mrtr` against the same tools written by hand on rmcp.
//!
//! The tools — `wizard(service)`, `survey(n)`, `profile()` — are written three times: with
//! `#[mrtr::tool]` ([`macro_tools`]), by hand on rmcp with its `RequestStateCodec`
//! ([`hand_written`]) and with FlyMCPRust ([`fly_tools`]); [`floor`] answers the same flows
//! with precomputed bytes. Each is served the way its users serve it ([`serve`]); `flowload` ([`load`]) drives
//! complete, verified flows over HTTP and reads the server's CPU time and peak RSS from
//! `/proc`; `engine-flows` ([`engine`]) runs the same flows in-process for callgrind;
//! `bench-report` ([`report`]) prints the tables. `scripts/bench-vs-rmcp` runs it all.
//!
//! ```
//! use mrtr_bench::engine::{EngineImpl, Measure, run_flows};
//! for implementation in [EngineImpl::Mrtr, EngineImpl::Rmcp] {
//!     run_flows(implementation, "wizard".parse().unwrap(), 1, Measure::All).unwrap();
//! }
//! ```
#![deny(missing_docs)]
// One line needs `unsafe` (sysconf in `proc_stats`), allowed there with a SAFETY note.
#![deny(unsafe_code)]
#![allow(deprecated)] // sampling is deprecated by SEP-2577 but still part of 2026-07-28

pub mod cluster;
pub mod engine;
pub mod floor;
pub mod fly_tools;
pub mod hand_written;
pub mod load;
pub mod macro_tools;
pub mod proc_stats;
pub mod profile;
pub mod report;
pub mod scenario;
pub mod serve;
