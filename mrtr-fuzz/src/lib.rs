//! The fuzz targets of `mrtr` as plain functions over bytes, one module per boundary that
//! takes hostile input. `fuzz/` runs them under libFuzzer (`cargo +nightly fuzz run NAME`,
//! see `scripts/fuzz`); `tests/bounded.rs` runs each on stable over its committed corpus and
//! a few thousand inputs from a fixed seed, so CI exercises them on every submission.
//!
//! ```
//! for target in mrtr_fuzz::TARGETS {
//!     (target.run)(b"");
//! }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod answering;
pub mod answers;
pub mod hostile_state;
pub mod machines;
pub mod terminal;
pub mod token_open;
pub mod wire;

/// One fuzz target.
///
/// ```
/// let names: Vec<&str> = mrtr_fuzz::TARGETS.iter().map(|t| t.name).collect();
/// assert!(names.contains(&"token_open"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The name of its libFuzzer binary and corpus directory.
    pub name: &'static str,
    /// Runs one input; panics on a finding.
    pub run: fn(&[u8]),
    /// The seed corpus it starts from.
    pub seeds: fn() -> Vec<Vec<u8>>,
}

/// Every runtime target (the macro target lives in `mrtr-macros`, see `fuzz/README.md`).
pub const TARGETS: &[Target] = &[
    Target {
        name: "token_open",
        run: token_open::run,
        seeds: token_open::seeds,
    },
    Target {
        name: "hostile_state",
        run: hostile_state::run,
        seeds: hostile_state::seeds,
    },
    Target {
        name: "wire",
        run: wire::run,
        seeds: wire::seeds,
    },
    Target {
        name: "answers",
        run: answers::run,
        seeds: answers::seeds,
    },
    Target {
        name: "terminal",
        run: terminal::run,
        seeds: terminal::seeds,
    },
];
