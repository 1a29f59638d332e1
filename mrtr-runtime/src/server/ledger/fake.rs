//! One ledger for the server-side tests of `rounds` and `recording`: claims answered from a
//! script (then every round claimed), records kept (with when), writes that can be held.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

use super::contract::{
    Claim, ClaimAndRecords, ClaimOutcome, LedgerError, Outcome, Owner, RoundId, RoundLedger,
};

/// A ledger for tests. Claims get the `script`'s answers first, then `InProgress` for the
/// first 100 claims when `in_progress_after` is set (so a backoff that never grows ends the
/// test with a count rather than hanging it), else `Claimed`. Records written alone land in
/// `alone`, those claims carry (when `carries`) in `carried`. While `hold` is set, each
/// write (alone, or a claim carrying records) says so on `entered` and waits for a permit of
/// `gate` (none at first).
pub(super) struct Fake {
    carries: bool,
    script: Mutex<VecDeque<Result<ClaimOutcome, LedgerError>>>,
    in_progress_after: bool,
    /// Claims made so far.
    pub(super) claimed: AtomicUsize,
    pub(super) hold: AtomicBool,
    gate: Semaphore,
    pub(super) entered: Notify,
    pub(super) refuse_records: AtomicBool,
    alone: Mutex<Vec<(Vec<u8>, Instant)>>,
    carried: Mutex<Vec<Vec<Vec<u8>>>>,
}

impl Fake {
    fn with(carries: bool) -> Self {
        Fake {
            carries,
            script: Mutex::default(),
            in_progress_after: false,
            claimed: AtomicUsize::new(0),
            hold: AtomicBool::new(false),
            gate: Semaphore::new(0),
            entered: Notify::new(),
            refuse_records: AtomicBool::new(false),
            alone: Mutex::default(),
            carried: Mutex::default(),
        }
    }

    /// Claims carry records.
    pub(super) fn carrier() -> Self {
        Fake::with(true)
    }

    /// Claims carry no records, and every write is held until [`open`](Self::open).
    pub(super) fn held() -> Self {
        let fake = Fake::with(false);
        fake.hold.store(true, Ordering::SeqCst);
        fake
    }

    /// Claims answered by `script`, then in progress (the first 100 claims).
    pub(super) fn scripted(
        script: impl IntoIterator<Item = Result<ClaimOutcome, LedgerError>>,
    ) -> Self {
        Fake {
            script: Mutex::new(script.into_iter().collect()),
            in_progress_after: true,
            ..Fake::with(false)
        }
    }

    /// Lets one held write through.
    pub(super) fn open(&self) {
        self.gate.add_permits(1);
    }

    /// The responses written alone, in order.
    pub(super) fn alone(&self) -> Vec<Vec<u8>> {
        let alone = self.alone.lock().unwrap();
        alone.iter().map(|(response, _)| response.clone()).collect()
    }

    /// When the first record written alone was.
    pub(super) fn first_alone_at(&self) -> Option<Instant> {
        self.alone.lock().unwrap().first().map(|(_, at)| *at)
    }

    /// The responses each claim carried.
    pub(super) fn carried(&self) -> Vec<Vec<Vec<u8>>> {
        self.carried.lock().unwrap().clone()
    }

    async fn held_here(&self) {
        if self.hold.load(Ordering::SeqCst) {
            self.entered.notify_one();
            drop(self.gate.acquire().await.unwrap());
        }
    }
}

fn responses(outcomes: &[Outcome]) -> Vec<Vec<u8>> {
    outcomes.iter().map(|o| o.response.clone()).collect()
}

impl RoundLedger for Fake {
    fn claim<'a>(&'a self, _: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
        let n = self.claimed.fetch_add(1, Ordering::Relaxed);
        let next = self.script.lock().unwrap().pop_front();
        let next = next.unwrap_or(Ok(if self.in_progress_after && n < 100 {
            ClaimOutcome::InProgress
        } else {
            ClaimOutcome::Claimed
        }));
        Box::pin(async move { next })
    }
    fn renew<'a>(
        &'a self,
        _: &'a RoundId,
        _: Owner,
        _: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async { Ok(true) })
    }
    fn record<'a>(
        &'a self,
        _: &'a RoundId,
        _: Owner,
        _: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async { unreachable!("the server writes with record_all") })
    }
    fn record_all<'a>(
        &'a self,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
        Box::pin(async move {
            // Claims that carry records are held, not these.
            if !self.carries {
                self.held_here().await;
            }
            let now = Instant::now();
            let mut alone = self.alone.lock().unwrap();
            alone.extend(responses(outcomes).into_iter().map(|r| (r, now)));
            Ok(vec![true; outcomes.len()])
        })
    }
    fn claims_carry_records(&self) -> bool {
        self.carries
    }
    fn claim_with_records<'a>(
        &'a self,
        claim: &'a Claim,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, ClaimAndRecords> {
        assert!(
            self.carries,
            "a ledger whose claims carry no records is never asked to"
        );
        Box::pin(async move {
            self.held_here().await;
            let records = if self.refuse_records.load(Ordering::SeqCst) {
                Err(LedgerError::new("NOPERM psetex"))
            } else {
                self.carried.lock().unwrap().push(responses(outcomes));
                Ok(vec![true; outcomes.len()])
            };
            ClaimAndRecords {
                claim: self.claim(claim).await,
                records,
            }
        })
    }
}
