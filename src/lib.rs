#![doc = include_str!("../docs/guide/tour.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use mrtr_macros::*;
pub use mrtr_runtime::*;

pub mod guide;

// The README's examples compile as doctests too.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
