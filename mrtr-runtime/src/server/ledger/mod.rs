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
//! # What it costs, and why the guarantees hold
//!
//! A round waits for one ledger round trip, its claim; its record goes out after the
//! reply. With `RedisLedger` the claim is one plain `SET … NX PX` and the record one plain
//! `PSETEX`, batched with the records of the other rounds that finished meanwhile (they
//! wait in one queue per server) and sent in the pipeline of the next claim the server
//! makes ([`RoundLedger::claim_with_records`]), records first: under load a round costs one
//! round trip in all. Records no claim took within a few milliseconds go out on their own
//! trip ([`RoundLedger::record_all`]), written by one recording task per server. Scripts run only when a round is presented again
//! and for lease renewals. Each guarantee above, with that in mind:
//!
//! - **A presented state runs at most once** (while its claim's lease holds): the claim is
//!   atomic (`SET NX`: one of concurrent claims sets the key, the others find it), and it
//!   is made before any of the round's code runs, as before.
//! - **A retry gets the recorded reply**: once the record has landed, a claim finds the
//!   claim key present and the claim script returns the record of the claim's holder, with
//!   the answers it ran with. A record is written under its owner's name and served only
//!   while the claim names that owner, so a record from an instance that lost its lease is
//!   never served, as when the scripted record refused it.
//! - **Concurrent presentations: one runs, the others wait or get `-32050`**: until the
//!   record lands (the round still runs, or its reply is out and the record on its way), a
//!   claim finds the claim and no record: in progress while the lease holds. The wait for a
//!   record in flight is a few milliseconds (waiting for a claim to carry it) and one write
//!   to Redis, well inside the round wait; a presentation on the instance holding the
//!   record carries it in its own claim, records first, and finds it at once.
//! - **A crashed instance's lease expires**: the lease is the claim's floor against the
//!   key's time to live, counted down by Redis, so it is measured on Redis's clock as
//!   before; renewals move the floor. A record that fails (Redis unreachable, or the
//!   instance dies after replying and before its record went out) leaves the round as a
//!   failed record always did: in progress until the lease expires, then run again, or
//!   refused with `-32052` when it is `at_most_once`. The client that got the reply goes on
//!   with the next round, which has its own claim; only a re-sent copy of the same round
//!   meets the lapsed lease.
//! - **Ledger unreachable: fail closed**: a claim that does not get its answer refuses the
//!   round (`-32051`), as before; a failed record is logged as an outage. A record and the
//!   claim that carries it answer each on its own: a refused record does not refuse the
//!   claim, nor does a refused claim lose the record.
//! - **Records waiting are bounded**, by count (16 Ki) and by the bytes of their responses
//!   (64 MiB); one past either bound, or that waited half a lease for the ledger, or whose
//!   lease has passed (it would land after the lease), is not written: its round is left
//!   to its lease, as a failed record.
//! - **A server that stops** writes the records still waiting first, those waiting for a
//!   claim at once and those a claim carries when it answers: HTTP serving after its
//!   in-flight requests (up to 5 s), others with
//!   [`McpServer::flush_ledger`](crate::server::McpServer::flush_ledger).
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
#[cfg(test)]
mod fake;
mod memory;
pub(crate) mod recording;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
mod redis;
pub(crate) mod rounds;

pub use contract::{
    Claim, ClaimAndRecords, ClaimOutcome, LedgerError, Outcome, Owner, Recorded, RoundId,
    RoundLedger,
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
