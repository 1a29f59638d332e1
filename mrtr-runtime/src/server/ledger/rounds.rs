//! The server's side of the ledger: claim a round before it runs, keep its lease while it
//! runs, record its outcome, and answer duplicates.
//!
//! A reply does not wait for its record: [`Rounds::record`] hands the outcome to one
//! recording task per server, which writes every outcome that arrived while its previous
//! write was out in one call ([`RoundLedger::record_all`]). Until a record lands, a
//! presentation of its round finds it in progress and waits, as while the round ran.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::InputResponses;
// tokio's clock, not std's: the same instants in production, and a test can pause it.
use tokio::time::Instant;

use tokio::sync::mpsc;

use super::contract::{
    Claim, ClaimOutcome, LedgerError, Outcome, Owner, RoundId, RoundLedger, digest16,
};
use crate::machine::ReplayPolicy;
use crate::server::errors;
use crate::server::ratelimit::log_limited;
use crate::token::canonical_json;

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
    /// Where finished rounds go to be recorded: the recording task, started on first use
    /// (and again if the runtime it ran on has gone).
    recorder: std::sync::Mutex<Option<mpsc::Sender<Outcome>>>,
}

/// Outcomes the recording task writes in one call, at most.
const RECORD_BATCH: usize = 64;

/// Outcomes waiting for the recording task, at most: when the ledger is slower than the
/// rounds for long, further outcomes are not recorded (their rounds are left to their
/// leases, as when a record fails) rather than held in memory without bound.
const RECORD_QUEUE: usize = 16 * 1024;

/// A round this presentation holds.
pub(crate) struct Held {
    round: RoundId,
    owner: Owner,
    expires_at: u64,
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
        Rounds {
            ledger,
            lease,
            wait,
            down: Arc::new(AtomicBool::new(false)),
            recorder: std::sync::Mutex::new(None),
        }
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
            let outcome = match self.ledger.claim(&claim).await {
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
            });
        }
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
            match self.ledger.renew(&held.round, held.owner, self.lease).await {
                Ok(true) => self.reachable(),
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

    /// Hands the outcome of a round this presentation ran to the recording task; the
    /// reply goes out without waiting for it.
    pub(crate) fn record(&self, held: Held, response: Option<Vec<u8>>) {
        let Some(response) = response else {
            tracing::warn!(round = %held.round, "a round's outcome does not encode; not recorded");
            return;
        };
        let mut outcome = Outcome {
            round: held.round,
            owner: held.owner,
            expires_at: held.expires_at,
            response,
        };
        let mut recorder = self
            .recorder
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(sender) = &*recorder {
            match sender.try_send(outcome) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(outcome)) => {
                    log_limited!(warn, round = %outcome.round, "round outcome not recorded: {RECORD_QUEUE} outcomes are already waiting for the ledger; the round is left to its lease");
                    return;
                }
                // The task's runtime has gone (a server used from another runtime).
                Err(mpsc::error::TrySendError::Closed(back)) => outcome = back,
            }
        }
        let (sender, receiver) = mpsc::channel(RECORD_QUEUE);
        tokio::spawn(recording(self.ledger.clone(), self.down.clone(), receiver));
        // The receiver lives until the task ends and the queue is empty: this send does not
        // fail.
        let _ = sender.try_send(outcome);
        *recorder = Some(sender);
    }

    fn unreachable(&self, error: &LedgerError) {
        unreachable(&self.down, error);
    }

    fn reachable(&self) {
        reachable(&self.down);
    }
}

fn unreachable(down: &AtomicBool, error: &LedgerError) {
    if !down.swap(true, Ordering::Relaxed) {
        tracing::warn!(%error, "round ledger unavailable; protected rounds fail closed until it is back");
    }
}

fn reachable(down: &AtomicBool) {
    if down.swap(false, Ordering::Relaxed) {
        tracing::info!("round ledger reachable again");
    }
}

/// The recording task: writes what has arrived, up to [`RECORD_BATCH`] outcomes in one
/// call, until every sender is gone. A failed write is logged (as an outage) and not
/// retried: its rounds' claims expire with their leases, as when a record failed before.
async fn recording(
    ledger: Arc<dyn RoundLedger>,
    down: Arc<AtomicBool>,
    mut receiver: mpsc::Receiver<Outcome>,
) {
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    while receiver.recv_many(&mut batch, RECORD_BATCH).await > 0 {
        match ledger.record_all(&batch).await {
            Ok(recorded) => {
                reachable(&down);
                for (outcome, recorded) in batch.iter().zip(recorded) {
                    if !recorded {
                        tracing::warn!(round = %outcome.round, "round outcome not recorded: its lease had passed to another request");
                    }
                }
            }
            Err(error) => {
                unreachable(&down, &error);
                tracing::warn!(%error, rounds = batch.len(), "round outcomes not recorded; their rounds run again once their leases expire");
            }
        }
        batch.clear();
    }
}

/// Digest of the answers a round is presented with.
fn answers_digest(responses: Option<&InputResponses>) -> [u8; 16] {
    let json =
        serde_json::to_value(responses).map_or_else(|_| String::new(), |v| canonical_json(&v));
    digest16(json.as_bytes())
}

#[cfg(test)]
mod tests {
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
    }

    /// A ledger that answers claims from a script, then `InProgress`; counts the claims.
    #[derive(Default)]
    struct Scripted {
        claims: std::sync::Mutex<std::collections::VecDeque<Result<ClaimOutcome, LedgerError>>>,
        claimed: std::sync::atomic::AtomicUsize,
    }

    impl Scripted {
        fn new(script: impl IntoIterator<Item = Result<ClaimOutcome, LedgerError>>) -> Arc<Self> {
            Arc::new(Scripted {
                claims: std::sync::Mutex::new(script.into_iter().collect()),
                claimed: Default::default(),
            })
        }
    }

    impl RoundLedger for Scripted {
        fn claim<'a>(
            &'a self,
            _: &'a Claim,
        ) -> futures::future::BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
            let n = self.claimed.fetch_add(1, Ordering::Relaxed);
            let next = self.claims.lock().unwrap().pop_front();
            // Past 100 claims, let the round run: a backoff that never grows ends the test
            // with a count rather than hanging it.
            let next = next.unwrap_or(Ok(if n >= 100 {
                ClaimOutcome::Claimed
            } else {
                ClaimOutcome::InProgress
            }));
            Box::pin(async move { next })
        }
        fn renew<'a>(
            &'a self,
            _: &'a RoundId,
            _: Owner,
            _: Duration,
        ) -> futures::future::BoxFuture<'a, Result<bool, LedgerError>> {
            Box::pin(async { Ok(true) })
        }
        fn record<'a>(
            &'a self,
            _: &'a RoundId,
            _: Owner,
            _: &'a [u8],
        ) -> futures::future::BoxFuture<'a, Result<bool, LedgerError>> {
            Box::pin(async { Ok(true) })
        }
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
        let ledger = Scripted::new([]);
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
        let ledger = Scripted::new([
            down(),
            down(),
            Ok(ClaimOutcome::Claimed),
            Ok(ClaimOutcome::Claimed),
            down(),
        ]);
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
