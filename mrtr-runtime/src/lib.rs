//! Runtime for `mrtr`: what compiled tools run on.
//!
//! - [`machine`]: the contract a resumable tool implements and the typed input outcomes.
//! - [`form`]: the [`form::Form`] and [`form::FormChoice`] traits behind form elicitations.
//! - [`token`]: the sealed `requestState` format, key ring and clock.
//! - [`server`]: the rmcp adapter that lists, gates, resumes and seals.
//! - `testing` (feature `testing`): the test kit — step a machine round by round through real
//!   sealing in-process, hop instances, replay and tamper rounds, print transcripts.
//! - [`client`]: a driver that answers `input_required` rounds, by hand or automatically.
#![deny(missing_docs)]

#[doc(hidden)]
pub mod __private;
pub mod client;
pub mod form;
pub mod machine;
pub mod server;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod token;

pub use machine::{AsJson, State};

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
