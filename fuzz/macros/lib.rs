//! The expander of `mrtr-macros` as an ordinary library for libFuzzer, which cannot link a
//! proc-macro crate: the crate's `internals` and `machine` modules, compiled unchanged
//! (they use only `crate::internals`, `crate::machine` and `proc_macro2`). `cfg(fuzzing)`
//! compiles the body generator, `machine::body_gen`.
#![forbid(unsafe_code)]
// Only the generator is used here; the rest is the attribute macros' code.
#![allow(dead_code)]

#[path = "../../mrtr-macros/src/internals/mod.rs"]
mod internals;
#[path = "../../mrtr-macros/src/machine/mod.rs"]
mod machine;

pub use machine::body_gen;
