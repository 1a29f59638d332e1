//! The round ledger of one process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;

use super::contract::{Claim, ClaimOutcome, LedgerError, Owner, Recorded, RoundId, RoundLedger};

/// A ledger in this process's memory: exactly-once rounds for a single instance, and the
/// ledger of tests. Records are dropped when their token expires.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use mrtr_runtime::server::ledger::{Claim, ClaimOutcome, MemoryLedger, Owner, RoundId, RoundLedger};
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
/// assert_eq!(ledger.claim(&claim).await.unwrap(), ClaimOutcome::InProgress);
/// assert!(ledger.record(&claim.round, claim.owner, b"done").await.unwrap());
/// assert!(matches!(ledger.claim(&claim).await.unwrap(), ClaimOutcome::Recorded(r) if r.response == b"done"));
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryLedger {
    rounds: Mutex<Rounds>,
}

#[derive(Debug, Default)]
struct Rounds {
    entries: HashMap<RoundId, Entry>,
    /// Claims since the last sweep of expired entries.
    since_sweep: usize,
}

#[derive(Debug)]
struct Entry {
    expires_at: u64,
    answers: [u8; 16],
    state: EntryState,
}

#[derive(Debug)]
enum EntryState {
    Running { owner: Owner, lease_until: Instant },
    Done(Vec<u8>),
}

/// Expired entries are swept after this many claims (amortized O(1) per claim).
const SWEEP_EVERY: usize = 1024;

impl MemoryLedger {
    /// An empty ledger.
    ///
    /// ```
    /// let ledger = mrtr_runtime::server::ledger::MemoryLedger::new();
    /// # let _ = ledger;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    fn with_rounds<T>(&self, f: impl FnOnce(&mut Rounds) -> T) -> Result<T, LedgerError> {
        let mut rounds = self
            .rounds
            .lock()
            .map_err(|_| LedgerError::new("the in-memory ledger's lock is poisoned"))?;
        Ok(f(&mut rounds))
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

impl Rounds {
    fn claim(&mut self, claim: &Claim) -> ClaimOutcome {
        let now = Instant::now();
        let unix = unix_now();
        self.since_sweep += 1;
        if self.since_sweep >= SWEEP_EVERY {
            self.since_sweep = 0;
            self.entries.retain(|_, entry| entry.expires_at >= unix);
        }
        let running = || EntryState::Running {
            owner: claim.owner,
            lease_until: now + claim.lease,
        };
        match self.entries.get_mut(&claim.round) {
            Some(entry) if entry.expires_at >= unix => match &entry.state {
                EntryState::Done(response) => ClaimOutcome::Recorded(Recorded {
                    answers: entry.answers,
                    response: response.clone(),
                }),
                EntryState::Running { lease_until, .. } if *lease_until > now => {
                    ClaimOutcome::InProgress
                }
                EntryState::Running { .. } if claim.take_over_expired => {
                    entry.state = running();
                    entry.answers = claim.answers;
                    ClaimOutcome::TakenOver
                }
                EntryState::Running { .. } => ClaimOutcome::Abandoned,
            },
            _ => {
                self.entries.insert(
                    claim.round,
                    Entry {
                        expires_at: claim.expires_at,
                        answers: claim.answers,
                        state: running(),
                    },
                );
                ClaimOutcome::Claimed
            }
        }
    }

    fn holder(&mut self, round: &RoundId, owner: Owner) -> Option<&mut Entry> {
        self.entries.get_mut(round).filter(
            |entry| matches!(entry.state, EntryState::Running { owner: held, .. } if held == owner),
        )
    }
}

impl RoundLedger for MemoryLedger {
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
        Box::pin(async move { self.with_rounds(|rounds| rounds.claim(claim)) })
    }

    fn renew<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        lease: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async move {
            self.with_rounds(|rounds| match rounds.holder(round, owner) {
                Some(entry) => {
                    entry.state = EntryState::Running {
                        owner,
                        lease_until: Instant::now() + lease,
                    };
                    true
                }
                None => false,
            })
        })
    }

    fn record<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        response: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async move {
            self.with_rounds(|rounds| match rounds.holder(round, owner) {
                Some(entry) => {
                    entry.state = EntryState::Done(response.to_vec());
                    true
                }
                None => false,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(owner: Owner, lease: Duration, take_over_expired: bool) -> Claim {
        Claim {
            round: RoundId::of_token("t"),
            owner,
            lease,
            expires_at: u64::from(u32::MAX),
            answers: [7; 16],
            take_over_expired,
        }
    }

    #[tokio::test]
    async fn an_expired_lease_is_taken_over_or_abandoned_per_policy() {
        let ledger = MemoryLedger::new();
        let first = Owner(1);
        assert_eq!(
            ledger
                .claim(&claim(first, Duration::ZERO, true))
                .await
                .unwrap(),
            ClaimOutcome::Claimed
        );
        // The lease (zero) has expired: the dead owner's round.
        assert_eq!(
            ledger
                .claim(&claim(Owner(2), Duration::from_secs(60), false))
                .await
                .unwrap(),
            ClaimOutcome::Abandoned
        );
        assert_eq!(
            ledger
                .claim(&claim(Owner(3), Duration::from_secs(60), true))
                .await
                .unwrap(),
            ClaimOutcome::TakenOver
        );
        // The first owner lost the round: its renewal and record are refused.
        assert!(
            !ledger
                .renew(&RoundId::of_token("t"), first, Duration::from_secs(1))
                .await
                .unwrap()
        );
        assert!(
            !ledger
                .record(&RoundId::of_token("t"), first, b"late")
                .await
                .unwrap()
        );
        assert!(
            ledger
                .record(&RoundId::of_token("t"), Owner(3), b"won")
                .await
                .unwrap()
        );
        match ledger
            .claim(&claim(Owner(4), Duration::ZERO, true))
            .await
            .unwrap()
        {
            ClaimOutcome::Recorded(recorded) => {
                assert_eq!(recorded.response, b"won");
                assert_eq!(recorded.answers, [7; 16]);
            }
            other => panic!("expected the record, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_expired_record_is_forgotten() {
        let ledger = MemoryLedger::new();
        let mut old = claim(Owner(1), Duration::from_secs(60), true);
        old.expires_at = 1; // 1970: the token can no longer open either
        assert_eq!(ledger.claim(&old).await.unwrap(), ClaimOutcome::Claimed);
        assert!(ledger.record(&old.round, old.owner, b"x").await.unwrap());
        assert_eq!(
            ledger
                .claim(&claim(Owner(2), Duration::from_secs(60), true))
                .await
                .unwrap(),
            ClaimOutcome::Claimed
        );
    }

    #[tokio::test]
    async fn expired_entries_are_swept_every_sweep_every_claims_and_live_ones_kept() {
        let ledger = MemoryLedger::new();
        let entries = || ledger.rounds.lock().unwrap().entries.len();
        let round = |token: &str, expires_at: u64| Claim {
            round: RoundId::of_token(token),
            expires_at,
            ..claim(Owner(1), Duration::from_secs(600), false)
        };
        let (expired, recorded, running) = (
            round("expired", 1),
            round("recorded", u64::from(u32::MAX)),
            round("running", u64::from(u32::MAX)),
        );
        for claim in [&expired, &recorded, &running] {
            assert_eq!(ledger.claim(claim).await.unwrap(), ClaimOutcome::Claimed);
        }
        assert!(
            ledger
                .record(&recorded.round, Owner(1), b"kept")
                .await
                .unwrap()
        );
        // Claims 4 .. SWEEP_EVERY - 1: the expired entry is still held (no sweep yet).
        for _ in 4..SWEEP_EVERY {
            assert_eq!(
                ledger.claim(&running).await.unwrap(),
                ClaimOutcome::InProgress
            );
        }
        assert_eq!(entries(), 3);
        assert_eq!(ledger.rounds.lock().unwrap().since_sweep, SWEEP_EVERY - 1);
        // The SWEEP_EVERY-th claim sweeps: only the expired entry goes.
        assert_eq!(
            ledger.claim(&running).await.unwrap(),
            ClaimOutcome::InProgress
        );
        assert_eq!(entries(), 2);
        assert_eq!(ledger.rounds.lock().unwrap().since_sweep, 0);
        match ledger.claim(&recorded).await.unwrap() {
            ClaimOutcome::Recorded(record) => assert_eq!(record.response, b"kept"),
            other => panic!("the recorded round was swept: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_renewal_extends_the_lease_from_now() {
        let ledger = MemoryLedger::new();
        let holder = Owner(1);
        let first = claim(holder, Duration::ZERO, true);
        assert_eq!(ledger.claim(&first).await.unwrap(), ClaimOutcome::Claimed);
        // The zero lease has run out; renewed for a minute, the round is held again.
        assert!(
            ledger
                .renew(&first.round, holder, Duration::from_secs(60))
                .await
                .unwrap()
        );
        assert_eq!(
            ledger
                .claim(&claim(Owner(2), Duration::from_secs(60), true))
                .await
                .unwrap(),
            ClaimOutcome::InProgress
        );
    }
}
