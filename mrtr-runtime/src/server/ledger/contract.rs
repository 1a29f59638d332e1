//! What a round ledger is: the id of a sealed round, who owns a claim on it, what a
//! claim finds, and the [`RoundLedger`] trait every ledger implements.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

/// Identifies one sealed round: the first 16 bytes of the SHA-256 of its `requestState`.
///
/// ```
/// use mrtr_runtime::server::ledger::RoundId;
/// let id = RoundId::of_token("mrtr3.abc");
/// assert_eq!(id, RoundId::of_token("mrtr3.abc"));
/// assert_ne!(id, RoundId::of_token("mrtr3.abd"));
/// assert_eq!(id.to_string().len(), 32);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoundId(pub [u8; 16]);

impl RoundId {
    /// The id of the round sealed in `token`.
    pub fn of_token(token: &str) -> Self {
        RoundId(digest16(token.as_bytes()))
    }
}

impl fmt::Display for RoundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&hex32(self.0)).map_err(|_| fmt::Error)?)
    }
}

/// 16 bytes in 32 lowercase hex digits (as `{:02x}` writes each byte).
pub(crate) fn hex32(bytes: [u8; 16]) -> [u8; 32] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 32];
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0xf)];
    }
    out
}

impl fmt::Debug for RoundId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RoundId({self})")
    }
}

/// The first 16 bytes of a SHA-256.
pub(crate) fn digest16(bytes: &[u8]) -> [u8; 16] {
    let digest = Sha256::digest(bytes);
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// Who is running a round: random per presentation, so a renewal or record from an
/// instance that lost its lease is refused.
///
/// ```
/// use mrtr_runtime::server::ledger::Owner;
/// assert_ne!(Owner::random(), Owner::random());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owner(pub u128);

impl Owner {
    /// A fresh random owner id, unique as a 128-bit random draw. It is drawn from the
    /// thread's ChaCha20 keystream that sealing's nonces come from (keyed from the OS and
    /// rekeyed, and after a fork), not from a system call per claim: an owner needs to be
    /// unique, not secret.
    pub fn random() -> Self {
        // The stream fails only if the OS random source does when it takes a key; zero is
        // still a valid (if weak) id, and that source does not fail on the platforms we
        // serve from.
        Owner(u128::from_le_bytes(
            crate::token::nonce::unique().unwrap_or_default(),
        ))
    }
}

/// One presentation of a round, asking to run it.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::server::ledger::{Claim, Owner, RoundId};
/// let claim = Claim {
///     round: RoundId::of_token("mrtr3.abc"),
///     owner: Owner::random(),
///     lease: Duration::from_secs(30),
///     expires_at: 1_900_000_000,
///     answers: [0; 16],
///     take_over_expired: true,
/// };
/// assert!(claim.take_over_expired);
/// ```
#[derive(Debug, Clone)]
pub struct Claim {
    /// The round.
    pub round: RoundId,
    /// Who would run it.
    pub owner: Owner,
    /// How long the claim holds without a renewal.
    pub lease: Duration,
    /// Unix seconds at which the token expires: the record may go then.
    pub expires_at: u64,
    /// Digest of the presentation's `inputResponses`: a replay with other answers is
    /// refused rather than answered with the first answers' outcome.
    pub answers: [u8; 16],
    /// Whether a claim whose lease expired (its instance died) may be taken over.
    pub take_over_expired: bool,
}

/// What the ledger says about a claim.
///
/// ```
/// use mrtr_runtime::server::ledger::ClaimOutcome;
/// assert_ne!(ClaimOutcome::Claimed, ClaimOutcome::InProgress);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// First presentation: run the round.
    Claimed,
    /// The previous owner's lease expired without an outcome: run the round again.
    TakenOver,
    /// Another presentation holds a live lease.
    InProgress,
    /// The outcome is recorded: answer with it.
    Recorded(Recorded),
    /// The previous owner's lease expired without an outcome and taking over was not
    /// allowed.
    Abandoned,
}

/// A round's recorded outcome.
///
/// ```
/// use mrtr_runtime::server::ledger::Recorded;
/// let recorded = Recorded { answers: [0; 16], response: b"{}".to_vec() };
/// assert_eq!(recorded.response, b"{}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Digest of the `inputResponses` the round ran with.
    pub answers: [u8; 16],
    /// The response, as the server encoded it.
    pub response: Vec<u8>,
}

/// A finished round's outcome, handed to [`RoundLedger::record_all`].
///
/// ```
/// use mrtr_runtime::server::ledger::{Outcome, Owner, RoundId};
/// let outcome = Outcome {
///     round: RoundId::of_token("mrtr3.abc"),
///     owner: Owner::random(),
///     expires_at: 1_900_000_000,
///     response: b"{}".to_vec(),
/// };
/// assert_eq!(outcome.response, b"{}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The round.
    pub round: RoundId,
    /// Who ran it (the owner of its claim).
    pub owner: Owner,
    /// Unix seconds at which the round's token expires: the record may go then.
    pub expires_at: u64,
    /// The response, as the server encoded it.
    pub response: Vec<u8>,
}

/// The ledger could not be reached or answered nonsense.
///
/// ```
/// use mrtr_runtime::server::ledger::LedgerError;
/// let error = LedgerError::new("connection refused");
/// assert!(error.to_string().contains("connection refused"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("round ledger: {detail}")]
pub struct LedgerError {
    detail: String,
}

impl LedgerError {
    /// An error with a description.
    pub fn new(detail: impl Into<String>) -> Self {
        LedgerError {
            detail: detail.into(),
        }
    }

    /// The same error again (for two answers that failed of one cause).
    #[cfg(feature = "redis")]
    pub(crate) fn duplicate(&self) -> Self {
        LedgerError::new(self.detail.clone())
    }
}

/// What [`RoundLedger::claim_with_records`] answers: the claim's outcome and the records',
/// each on its own (a failed record does not fail the claim, nor the other way round).
///
/// ```
/// use mrtr_runtime::server::ledger::{ClaimAndRecords, ClaimOutcome, LedgerError};
/// let answer = ClaimAndRecords {
///     claim: Ok(ClaimOutcome::Claimed),
///     records: Err(LedgerError::new("NOPERM")),
/// };
/// assert!(answer.claim.is_ok() && answer.records.is_err());
/// ```
#[derive(Debug)]
pub struct ClaimAndRecords {
    /// What the claim found, as [`RoundLedger::claim`] answers.
    pub claim: Result<ClaimOutcome, LedgerError>,
    /// Whether the records were written, as [`RoundLedger::record_all`] answers.
    pub records: Result<Vec<bool>, LedgerError>,
}

/// Where rounds are claimed and their outcomes recorded; shared by every instance that
/// serves the same flows.
///
/// Implementations must make [`claim`](Self::claim) atomic: of concurrent claims of one
/// round, exactly one gets [`ClaimOutcome::Claimed`].
///
/// ```
/// use mrtr_runtime::server::ledger::{MemoryLedger, RoundLedger};
/// fn takes(_: impl RoundLedger) {}
/// takes(MemoryLedger::new());
/// ```
pub trait RoundLedger: Send + Sync + 'static {
    /// Claims a round, or says who has it or what it answered.
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>>;

    /// Extends `owner`'s lease; `false` when `owner` no longer holds the round.
    fn renew<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        lease: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>>;

    /// Records the outcome of `owner`'s run; `false` when `owner` no longer holds the round
    /// (its lease expired and another presentation took over).
    fn record<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        response: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>>;

    /// Records several finished rounds at once: what the server calls, after the replies
    /// have gone out (a reply never waits for its record), unless a claim carries them
    /// ([`claim_with_records`](Self::claim_with_records)). One `bool` per outcome, in
    /// order: `false` when the ledger knows the owner no longer held its round. A ledger
    /// may answer `true` without checking, as long as it then never serves a record
    /// written by an owner that lost its claim (`RedisLedger` does
    /// this, so a record costs no script and no extra read).
    ///
    /// The default records each outcome with [`record`](Self::record), in order.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use mrtr_runtime::server::ledger::{Claim, ClaimOutcome, MemoryLedger, Outcome, Owner, RoundId, RoundLedger};
    ///
    /// let ledger = MemoryLedger::new();
    /// let claim = Claim {
    ///     round: RoundId::of_token("mrtr3.abc"),
    ///     owner: Owner::random(),
    ///     lease: Duration::from_secs(30),
    ///     expires_at: u64::from(u32::MAX),
    ///     answers: [0; 16],
    ///     take_over_expired: true,
    /// };
    /// assert_eq!(ledger.claim(&claim).await.unwrap(), ClaimOutcome::Claimed);
    /// let done = Outcome { round: claim.round, owner: claim.owner, expires_at: claim.expires_at, response: b"done".to_vec() };
    /// let stranger = Outcome { owner: Owner::random(), ..done.clone() };
    /// assert_eq!(ledger.record_all(&[done, stranger]).await.unwrap(), [true, false]);
    /// # });
    /// ```
    fn record_all<'a>(
        &'a self,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
        Box::pin(async move {
            let mut recorded = Vec::with_capacity(outcomes.len());
            for outcome in outcomes {
                recorded.push(
                    self.record(&outcome.round, outcome.owner, &outcome.response)
                        .await?,
                );
            }
            Ok(recorded)
        })
    }

    /// Whether [`claim_with_records`](Self::claim_with_records) sends a claim and records
    /// in one round trip. When it does, a server holds its finished rounds' records back a
    /// few milliseconds for the next claim to carry them, instead of giving them a round
    /// trip of their own (records no claim took in that time, and all records when the
    /// server flushes, are written with [`record_all`](Self::record_all)). `false` by
    /// default: records are written with `record_all` as soon as they are queued.
    /// `RedisLedger` answers `true`.
    ///
    /// ```
    /// use mrtr_runtime::server::ledger::{MemoryLedger, RoundLedger};
    /// assert!(!MemoryLedger::new().claims_carry_records());
    /// ```
    fn claims_carry_records(&self) -> bool {
        false
    }

    /// Records `outcomes`, as [`record_all`](Self::record_all) would, and claims `claim`'s
    /// round, as [`claim`](Self::claim) would: the records first, so a claim of one of
    /// their rounds finds its record. Each answer stands alone: a record that fails does
    /// not fail the claim, nor the other way round. A ledger that
    /// [carries records in its claims](Self::claims_carry_records) sends both in one round
    /// trip; the server calls this only on such a ledger.
    ///
    /// Records may be written again after this was called (when the call was dropped
    /// before it answered): writing a record twice must be harmless.
    ///
    /// The default records with `record_all`, then claims: two calls.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use mrtr_runtime::server::ledger::{Claim, ClaimOutcome, MemoryLedger, Outcome, Owner, RoundId, RoundLedger};
    ///
    /// let ledger = MemoryLedger::new();
    /// let claim = |token: &str| Claim {
    ///     round: RoundId::of_token(token),
    ///     owner: Owner::random(),
    ///     lease: Duration::from_secs(30),
    ///     expires_at: u64::from(u32::MAX),
    ///     answers: [0; 16],
    ///     take_over_expired: true,
    /// };
    /// let first = claim("mrtr3.abc");
    /// assert_eq!(ledger.claim(&first).await.unwrap(), ClaimOutcome::Claimed);
    /// let done = Outcome { round: first.round, owner: first.owner, expires_at: first.expires_at, response: b"done".to_vec() };
    /// let answer = ledger.claim_with_records(&claim("mrtr3.abd"), &[done]).await;
    /// assert_eq!(answer.claim.unwrap(), ClaimOutcome::Claimed);
    /// assert_eq!(answer.records.unwrap(), [true]);
    /// # });
    /// ```
    fn claim_with_records<'a>(
        &'a self,
        claim: &'a Claim,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, ClaimAndRecords> {
        Box::pin(async move {
            let records = self.record_all(outcomes).await;
            let claim = self.claim(claim).await;
            ClaimAndRecords { claim, records }
        })
    }
}

impl<L: RoundLedger + ?Sized> RoundLedger for std::sync::Arc<L> {
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
        (**self).claim(claim)
    }
    fn renew<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        lease: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        (**self).renew(round, owner, lease)
    }
    fn record<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        response: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        (**self).record(round, owner, response)
    }
    fn record_all<'a>(
        &'a self,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
        (**self).record_all(outcomes)
    }
    fn claims_carry_records(&self) -> bool {
        (**self).claims_carry_records()
    }
    fn claim_with_records<'a>(
        &'a self,
        claim: &'a Claim,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, ClaimAndRecords> {
        (**self).claim_with_records(claim, outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_id_shows_as_the_hex_of_its_digest() {
        let id = RoundId([0xab; 16]);
        assert_eq!(id.to_string(), "ab".repeat(16));
        assert_eq!(format!("{id:?}"), format!("RoundId({})", "ab".repeat(16)));
        let id = RoundId(std::array::from_fn(|i| (i as u8) * 17));
        let expected: String = id.0.iter().map(|byte| format!("{byte:02x}")).collect();
        assert_eq!(id.to_string(), expected);
    }
}
