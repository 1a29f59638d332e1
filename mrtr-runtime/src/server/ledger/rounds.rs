//! The server's side of the ledger: claim a round before it runs, keep its lease while it
//! runs, record its outcome, and answer duplicates.
//!
//! A reply does not wait for its record: [`Rounds::record`] queues the outcome (see
//! [`recording`](super::recording)), to be written after the reply, in a claim's round trip
//! when the ledger's claims can carry records ([`Rounds::claim`] takes the records
//! waiting), else by the server's recording task. Until a record
//! lands, a presentation of its round finds it in progress and waits, as while the round
//! ran.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::InputResponses;
// tokio's clock, not std's: the same instants in production, and a test can pause it.
use tokio::time::Instant;

use super::contract::{
    Claim, ClaimOutcome, LedgerError, Outcome, Owner, RoundId, RoundLedger, digest16,
};
use super::recording::{RECORD_QUEUE_BYTES, RecordFlush, Recorder, reachable, unreachable};
use crate::machine::ReplayPolicy;
use crate::server::errors;
use crate::token::canonical_json_sorted;

/// The default lease of a running round.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// How long a duplicate presentation waits for the first one's outcome by default.
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// The ledger and its timings, as the engine uses them.
pub(crate) struct Rounds {
    pub(crate) ledger: Arc<dyn RoundLedger>,
    pub(crate) lease: Duration,
    pub(crate) wait: Duration,
    /// Set while the ledger is unreachable, so an outage is logged once, not per request.
    down: Arc<AtomicBool>,
    /// Where finished rounds go to be recorded.
    pub(super) recorder: Arc<Recorder>,
}

/// A round this presentation holds.
pub(crate) struct Held {
    round: RoundId,
    owner: Owner,
    expires_at: u64,
    /// When the claim was sent.
    claimed_at: Instant,
    /// When the last renewal that held was sent, in ms after `claimed_at` (0: none).
    renewed_after_ms: AtomicU64,
}

impl Held {
    /// When the lease in force was set: the claim, or the last renewal that held (the
    /// instant its request left, so never later than the ledger's).
    fn leased_at(&self) -> Instant {
        self.claimed_at + Duration::from_millis(self.renewed_after_ms.load(Ordering::Relaxed))
    }
}

/// What a claim decided.
pub(crate) enum Claimed {
    /// Run the round (and record it).
    Run(Held),
    /// Answer with this recorded response.
    Answered(Vec<u8>),
    /// Answer with this error; nothing runs.
    Refused(ErrorData),
}

impl Rounds {
    pub(crate) fn new(ledger: Arc<dyn RoundLedger>, lease: Duration, wait: Duration) -> Self {
        let down = Arc::new(AtomicBool::new(false));
        Rounds {
            ledger: ledger.clone(),
            lease,
            wait,
            recorder: Arc::new(Recorder::new(
                ledger,
                down.clone(),
                lease,
                RECORD_QUEUE_BYTES,
            )),
            down,
        }
    }

    /// The same, with the queued outcomes bounded to `max_bytes`.
    #[cfg(test)]
    pub(super) fn with_record_bytes(mut self, max_bytes: usize) -> Self {
        self.recorder = Arc::new(Recorder::new(
            self.ledger.clone(),
            self.down.clone(),
            self.lease,
            max_bytes,
        ));
        self
    }

    /// What flushes this server's queued outcomes when it stops.
    pub(crate) fn flusher(&self) -> RecordFlush {
        RecordFlush(self.recorder.clone())
    }

    /// Claims the round sealed in `token` (an opened, authentic token).
    pub(crate) async fn claim(
        &self,
        token: &str,
        expires_at: u32,
        responses: Option<&InputResponses>,
        policy: ReplayPolicy,
    ) -> Claimed {
        let claim = Claim {
            round: RoundId::of_token(token),
            owner: Owner::random(),
            lease: self.lease,
            expires_at: u64::from(expires_at),
            answers: answers_digest(responses),
            take_over_expired: policy != ReplayPolicy::AtMostOnce,
        };
        let deadline = Instant::now() + self.wait;
        let mut pause = Duration::from_millis(10);
        loop {
            let claimed_at = Instant::now();
            let outcome = match self.claim_once(&claim).await {
                Ok(outcome) => {
                    self.reachable();
                    outcome
                }
                Err(error) => {
                    self.unreachable(&error);
                    return Claimed::Refused(errors::ledger_unavailable());
                }
            };
            match outcome {
                ClaimOutcome::Claimed => {}
                ClaimOutcome::TakenOver => {
                    tracing::info!(round = %claim.round, "round re-run after its lease expired");
                }
                ClaimOutcome::Recorded(recorded) if recorded.answers == claim.answers => {
                    tracing::info!(round = %claim.round, "round replayed from the ledger");
                    return Claimed::Answered(recorded.response);
                }
                ClaimOutcome::Recorded(_) => {
                    tracing::info!(round = %claim.round, "round presented again with other answers");
                    return Claimed::Refused(errors::answers_conflict());
                }
                ClaimOutcome::Abandoned => {
                    crate::server::ratelimit::log_limited!(warn, round = %claim.round, "at-most-once round abandoned by a stopped instance; refusing to run it again");
                    return Claimed::Refused(errors::round_abandoned());
                }
                ClaimOutcome::InProgress => {
                    let now = Instant::now();
                    if now >= deadline {
                        tracing::info!(round = %claim.round, "round still in progress elsewhere");
                        return Claimed::Refused(errors::round_in_progress());
                    }
                    tokio::time::sleep(pause.min(deadline - now)).await;
                    pause = (pause * 2).min(Duration::from_millis(200));
                    continue;
                }
            }
            return Claimed::Run(Held {
                round: claim.round,
                owner: claim.owner,
                expires_at: claim.expires_at,
                claimed_at,
                renewed_after_ms: AtomicU64::new(0),
            });
        }
    }

    /// One claim, carrying the records parked for it when there are any.
    async fn claim_once(&self, claim: &Claim) -> Result<ClaimOutcome, LedgerError> {
        let Some(carried) = self.recorder.carry() else {
            return self.ledger.claim(claim).await;
        };
        let answer = self
            .ledger
            .claim_with_records(claim, carried.outcomes())
            .await;
        carried.written(answer.records);
        answer.claim
    }

    /// Runs `work` while renewing `held`'s lease every third of it.
    pub(crate) async fn renewing<F: Future>(&self, held: &Held, work: F) -> F::Output {
        let work = std::pin::pin!(work);
        let lease = std::pin::pin!(self.keep_lease(held));
        match futures::future::select(work, lease).await {
            futures::future::Either::Left((output, _)) => output,
            futures::future::Either::Right((never, _)) => match never {},
        }
    }

    /// Renews `held`'s lease every third of it, for as long as it is polled.
    async fn keep_lease(&self, held: &Held) -> Infallible {
        loop {
            tokio::time::sleep(self.lease / 3).await;
            let sent = Instant::now();
            match self.ledger.renew(&held.round, held.owner, self.lease).await {
                Ok(true) => {
                    let after = sent.saturating_duration_since(held.claimed_at).as_millis();
                    held.renewed_after_ms
                        .store(u64::try_from(after).unwrap_or(u64::MAX), Ordering::Relaxed);
                    self.reachable()
                }
                Ok(false) => {
                    self.reachable();
                    tracing::warn!(round = %held.round, "lost the lease of a running round; another request may run it too");
                    // Nothing to hold any more: the work goes on alone.
                    return std::future::pending().await;
                }
                Err(error) => self.unreachable(&error),
            }
        }
    }

    /// Queues the outcome of a round this presentation ran to be recorded; the reply goes
    /// out without waiting for it.
    pub(crate) fn record(&self, held: Held, response: Option<Vec<u8>>) {
        let Some(response) = response else {
            tracing::warn!(round = %held.round, "a round's outcome does not encode; not recorded");
            return;
        };
        let leased_at = held.leased_at();
        let outcome = Outcome {
            round: held.round,
            owner: held.owner,
            expires_at: held.expires_at,
            response,
        };
        self.recorder.queue(outcome, leased_at);
    }

    fn unreachable(&self, error: &LedgerError) {
        unreachable(&self.down, error);
    }

    fn reachable(&self) {
        reachable(&self.down);
    }
}

/// Digest of the answers a round is presented with: of their canonical JSON (`null` for
/// none), written straight from the map (its keys already sorted), as instances before
/// did through a `Value`.
fn answers_digest(responses: Option<&InputResponses>) -> [u8; 16] {
    match responses {
        Some(responses) => digest16(&canonical_json_sorted(responses)),
        None => digest16(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::Fake;
    use super::*;

    #[test]
    fn answers_digest_ignores_key_order_but_not_values() {
        let a: InputResponses =
            serde_json::from_str(r#"{"x": {"action": "accept", "content": {"a": 1, "b": 2}}}"#)
                .unwrap();
        let b: InputResponses =
            serde_json::from_str(r#"{"x": {"content": {"b": 2, "a": 1}, "action": "accept"}}"#)
                .unwrap();
        let c: InputResponses =
            serde_json::from_str(r#"{"x": {"action": "accept", "content": {"a": 1, "b": 3}}}"#)
                .unwrap();
        assert_eq!(answers_digest(Some(&a)), answers_digest(Some(&b)));
        assert_ne!(answers_digest(Some(&a)), answers_digest(Some(&c)));
        assert_ne!(answers_digest(Some(&a)), answers_digest(None));
        // The digest earlier instances stored in their claims: canonical JSON of the
        // answers as a `Value`.
        let before = |responses: Option<&InputResponses>| {
            let value = serde_json::to_value(responses).unwrap();
            digest16(crate::token::canonical_json(&value).as_bytes())
        };
        for responses in [Some(&a), Some(&c), None, Some(&InputResponses::new())] {
            assert_eq!(answers_digest(responses), before(responses));
        }
    }

    async fn held(rounds: &Rounds, token: &str) -> Held {
        match rounds
            .claim(token, u32::MAX, None, ReplayPolicy::RerunAfterLease)
            .await
        {
            Claimed::Run(held) => held,
            _ => panic!("the round is claimed"),
        }
    }

    const LONG: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn outcomes_past_the_byte_bound_are_neither_queued_nor_recorded() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let ledger = Arc::new(Fake::held());
        let rounds =
            Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT).with_record_bytes(100);
        // The ledger holds its writes: the queue keeps every outcome's bytes meanwhile.
        rounds.record(held(&rounds, "a").await, Some(vec![b'a'; 60]));
        rounds.record(held(&rounds, "b").await, Some(vec![b'b'; 60]));
        rounds.record(held(&rounds, "c").await, Some(vec![b'c'; 40]));
        rounds.record(held(&rounds, "d").await, Some(vec![b'd'; 1]));
        ledger.open();
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.alone(), [vec![b'a'; 60], vec![b'c'; 40]]);
        let log = logs.text();
        assert!(
            log.contains("WARN") && log.contains("100 bytes of outcomes are already waiting"),
            "{log}"
        );
        // Written, their bytes are free again; one outcome larger than the bound never fits.
        rounds.record(held(&rounds, "e").await, Some(vec![b'e'; 100]));
        rounds.record(held(&rounds, "f").await, Some(vec![b'f'; 101]));
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.alone().last(), Some(&vec![b'e'; 100]));
        assert_eq!(ledger.alone().len(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn an_outcome_whose_lease_has_passed_is_not_recorded() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let ledger = Arc::new(Fake::held());
        ledger.open();
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        // Its round ran past its lease unrenewed: not queued at all.
        let lapsed = held(&rounds, "lapsed").await;
        tokio::time::advance(DEFAULT_LEASE).await;
        rounds.record(lapsed, Some(b"lapsed".to_vec()));
        // A round that ran twice as long, renewing its lease, is recorded: what counts is
        // the last renewal, not the claim.
        let renewed = held(&rounds, "renewed").await;
        rounds
            .renewing(&renewed, tokio::time::sleep(DEFAULT_LEASE * 2))
            .await;
        rounds.record(renewed, Some(b"renewed".to_vec()));
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.alone(), [b"renewed".to_vec()]);
        let log = logs.text();
        assert!(
            log.contains("its lease had passed when the round ended"),
            "{log}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_outcome_that_waited_half_a_lease_is_dropped_from_the_batch() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let ledger = Arc::new(Fake::held());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "first").await, Some(b"first".to_vec()));
        // The first write is out (and held); the second outcome waits behind it...
        ledger.entered.notified().await;
        rounds.record(held(&rounds, "second").await, Some(b"second".to_vec()));
        // ... for half a lease.
        tokio::time::advance(DEFAULT_LEASE / 2).await;
        ledger.open();
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.alone(), [b"first".to_vec()]);
        let log = logs.text();
        assert!(
            log.contains("it would land after its lease")
                && log.contains("waited half a lease for the ledger"),
            "{log}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_waits_for_the_queued_outcomes_up_to_its_timeout() {
        let ledger = Arc::new(Fake::held());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        // Nothing queued: nothing to wait for.
        assert!(rounds.flusher().flush(Duration::ZERO).await);
        // A ledger that never answers: the flush gives up at its timeout.
        rounds.record(held(&rounds, "stuck").await, Some(b"stuck".to_vec()));
        assert!(!rounds.flusher().flush(Duration::from_secs(5)).await);
        assert!(ledger.alone().is_empty());
        // Once the stuck write ends, the next outcome is written too, and a flush waits for it.
        ledger.open();
        ledger.open();
        rounds.record(held(&rounds, "next").await, Some(b"next".to_vec()));
        assert!(rounds.flusher().flush(LONG).await);
        assert!(ledger.alone().contains(&b"next".to_vec()));
    }

    fn refused_code(claimed: Claimed) -> Option<i32> {
        match claimed {
            Claimed::Refused(error) => Some(error.code.0),
            Claimed::Run(_) | Claimed::Answered(_) => None,
        }
    }

    /// A duplicate waits for the first presentation with a pause that doubles from 10 ms up
    /// to 200 ms: within a 1 s wait, claims at 0, 10, 30, 70, 150, 310, 510, 710, 910 and
    /// 1000 ms, then `-32050`.
    #[tokio::test(start_paused = true)]
    async fn a_duplicate_backs_off_doubling_up_to_200_ms_then_is_told_to_retry() {
        let ledger = Arc::new(Fake::scripted([]));
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, Duration::from_secs(1));
        let claimed = rounds
            .claim("token", u32::MAX, None, ReplayPolicy::RerunAfterLease)
            .await;
        assert_eq!(refused_code(claimed), Some(errors::ROUND_IN_PROGRESS));
        assert_eq!(ledger.claimed.load(Ordering::Relaxed), 10);
    }

    /// An outage is logged once at WARN when it starts (not per request), and its end once
    /// at INFO.
    #[tokio::test]
    async fn an_outage_is_logged_once_when_it_starts_and_once_when_it_ends() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let log = || logs.text();
        let unavailable = "round ledger unavailable";
        let again = "round ledger reachable again";

        let down = || Err(LedgerError::new("connection refused"));
        let ledger = Arc::new(Fake::scripted([
            down(),
            down(),
            Ok(ClaimOutcome::Claimed),
            Ok(ClaimOutcome::Claimed),
            down(),
        ]));
        let rounds = Rounds::new(ledger, DEFAULT_LEASE, DEFAULT_WAIT);
        let claim = async || {
            refused_code(
                rounds
                    .claim("token", u32::MAX, None, ReplayPolicy::RerunAfterLease)
                    .await,
            )
        };

        assert_eq!(claim().await, Some(errors::LEDGER_UNAVAILABLE));
        assert_eq!(log().matches(unavailable).count(), 1, "{}", log());
        assert!(
            log().contains("WARN") && log().contains("connection refused"),
            "{}",
            log()
        );
        assert_eq!(claim().await, Some(errors::LEDGER_UNAVAILABLE));
        assert_eq!(log().matches(unavailable).count(), 1, "{}", log());
        assert_eq!(log().matches(again).count(), 0, "{}", log());

        assert_eq!(claim().await, None);
        assert_eq!(log().matches(again).count(), 1, "{}", log());
        assert_eq!(claim().await, None);
        assert_eq!(log().matches(again).count(), 1, "{}", log());

        // A second outage is logged again.
        assert_eq!(claim().await, Some(errors::LEDGER_UNAVAILABLE));
        assert_eq!(log().matches(unavailable).count(), 2, "{}", log());
    }
}
