//! Exactly-once rounds across instances: the round ledger.
//!
//! A sealed `requestState` is valid until it expires, so without a shared record a client
//! (or an attacker holding a leaked token) can present the same round again and its code
//! runs again: an order placed twice. With a ledger, every resumed round is **claimed**
//! atomically before any of its code runs, and its outcome is **recorded**:
//!
//! - a second presentation of a recorded round gets the same response again, byte for byte
//!   (the same next `requestState`), so a client that lost the reply can retry safely, like
//!   an idempotency key; the record expires with the token;
//! - a presentation while the first is still running waits up to
//!   [`round_wait`](super::McpServerBuilder::round_wait) for its outcome, then gets the
//!   retryable error `-32050`;
//! - the instance running a round renews its lease; if it dies, the lease expires and a later
//!   presentation runs the round again, unless the machine is
//!   [`ReplayPolicy::AtMostOnce`](crate::machine::ReplayPolicy::AtMostOnce), which then fails closed with `-32052`;
//! - when the ledger cannot be reached, protected rounds fail closed with the retryable
//!   `-32051` and nothing runs; machines marked [`ReplayPolicy::Unprotected`](crate::machine::ReplayPolicy::Unprotected) are unaffected.
//!
//! The round id is the first 16 bytes of the SHA-256 of the token: the token is
//! authenticated (its random 192-bit nonce included), so the id is unique and bound to it.
//! Only tokens that open are claimed, so forged tokens cannot fill the ledger.
//!
//! [`MemoryLedger`] serves one process (and tests); `RedisLedger` (feature `redis`) is
//! shared by every instance behind a load balancer.
//!
//! ```
//! use mrtr_runtime::server::McpServer;
//! use mrtr_runtime::server::ledger::MemoryLedger;
//! use mrtr_runtime::token::KeyRing;
//!
//! let server = McpServer::builder("shop")
//!     .keys(KeyRing::generate_process_local().unwrap())
//!     .round_ledger(MemoryLedger::new())
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

mod contract;
mod memory;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
mod redis;
pub(crate) mod rounds;

pub use contract::{
    Claim, ClaimOutcome, LedgerError, Outcome, Owner, Recorded, RoundId, RoundLedger,
};
pub use memory::MemoryLedger;
#[cfg(feature = "redis")]
pub use redis::RedisLedger;

/// The former name of [`ReplayPolicy`](crate::machine::ReplayPolicy).
///
/// ```
/// # #![allow(deprecated)]
/// use mrtr_runtime::server::ledger::RoundPolicy;
/// assert_eq!(RoundPolicy::default(), RoundPolicy::RerunAfterLease);
/// ```
#[deprecated(
    since = "0.1.0",
    note = "renamed to `mrtr_runtime::machine::ReplayPolicy`"
)]
pub type RoundPolicy = crate::machine::ReplayPolicy;
