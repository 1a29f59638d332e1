//! The server's side of the ledger: claim a round before it runs, keep its lease while it
//! runs, record its outcome, and answer duplicates.
//!
//! A reply does not wait for its record: [`Rounds::record`] hands the outcome to one
//! recording task per server, which writes every outcome that arrived while its previous
//! write was out in one call ([`RoundLedger::record_all`]). Until a record lands, a
//! presentation of its round finds it in progress and waits, as while the round ran. The
//! outcomes waiting are bounded by count and by bytes, one that waited half a lease (or
//! whose lease has passed) is not written (it would land after its lease), and a server
//! that stops flushes the queue ([`RecordFlush::flush`]) so that what was replied is
//! recorded.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::InputResponses;
// tokio's clock, not std's: the same instants in production, and a test can pause it.
use tokio::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

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
    /// Where finished rounds go to be recorded.
    recorder: Arc<Recorder>,
}

/// Outcomes the recording task writes in one call, at most.
const RECORD_BATCH: usize = 64;

/// Outcomes waiting for the recording task, at most: when the ledger is slower than the
/// rounds for long, further outcomes are not recorded (their rounds are left to their
/// leases, as when a record fails) rather than held in memory without bound.
const RECORD_QUEUE: usize = 16 * 1024;

/// Bytes of recorded responses waiting for (or being written by) the recording task, at
/// most: the same bound as [`RECORD_QUEUE`], by size, for large replies (a sealed
/// `requestState` alone may be tens of KiB).
const RECORD_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// How long a stopping server waits for the outcomes already queued to be written, by
/// default (a Redis write takes milliseconds; this is for a ledger that stalls).
#[cfg(feature = "server-http")]
pub(crate) const DEFAULT_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

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

/// An outcome waiting for the recording task.
struct Queued {
    outcome: Outcome,
    /// When its lease was set (the claim or the last renewal that held).
    leased_at: Instant,
    /// When its round ended and it was queued.
    queued_at: Instant,
    /// Its share of [`RECORD_QUEUE_BYTES`], given back once it is written or dropped.
    bytes: OwnedSemaphorePermit,
}

impl Queued {
    /// Why it is not worth writing any more, if it is not: written now it would land after
    /// its lease. A round's lease is renewed every third of it while the round runs, so a
    /// fresh outcome has at least two thirds of its lease left; one that waited half a
    /// lease for the ledger has little or none.
    fn stale(&self, lease: Duration) -> Option<&'static str> {
        if self.leased_at.elapsed() >= lease {
            Some("its lease had passed")
        } else if self.queued_at.elapsed() >= lease / 2 {
            Some("it waited half a lease for the ledger")
        } else {
            None
        }
    }
}

/// The recording side of a server: the queue to the recording task (started on first use,
/// and again if the runtime it ran on has gone) and the bound on the bytes it holds.
pub(crate) struct Recorder {
    ledger: Arc<dyn RoundLedger>,
    down: Arc<AtomicBool>,
    lease: Duration,
    queue: std::sync::Mutex<Option<Queue>>,
    bytes: Arc<Semaphore>,
    /// [`RECORD_QUEUE_BYTES`] unless a test says otherwise.
    max_bytes: usize,
}

/// The recording task and the way to it.
struct Queue {
    sender: mpsc::Sender<Queued>,
    task: JoinHandle<()>,
}

/// A handle that flushes a server's queued outcomes when it stops (see [`Rounds::flusher`]).
#[derive(Clone)]
pub(crate) struct RecordFlush(Arc<Recorder>);

impl RecordFlush {
    /// Waits until every outcome queued so far has been written (or failed to be), up to
    /// `timeout`; `true` when the queue emptied in time. The recording task ends; a later
    /// outcome starts another.
    pub(crate) async fn flush(&self, timeout: Duration) -> bool {
        let queue = self
            .0
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(Queue { sender, task }) = queue else {
            return true;
        };
        let waiting = RECORD_QUEUE - sender.capacity();
        // The task writes what is queued, then ends: its receiver sees no sender left.
        drop(sender);
        match tokio::time::timeout(timeout, task).await {
            Ok(_) => true,
            Err(_) => {
                tracing::warn!(
                    ?timeout,
                    waiting,
                    "round outcomes still waiting for the ledger after the flush timeout: not recorded; their rounds are left to their leases"
                );
                false
            }
        }
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
            recorder: Arc::new(Recorder {
                ledger: ledger.clone(),
                down: down.clone(),
                lease,
                queue: std::sync::Mutex::new(None),
                bytes: Arc::new(Semaphore::new(RECORD_QUEUE_BYTES)),
                max_bytes: RECORD_QUEUE_BYTES,
            }),
            down,
        }
    }

    /// The same, with the queued outcomes bounded to `max_bytes`.
    #[cfg(test)]
    fn with_record_bytes(mut self, max_bytes: usize) -> Self {
        self.recorder = Arc::new(Recorder {
            ledger: self.ledger.clone(),
            down: self.down.clone(),
            lease: self.lease,
            queue: std::sync::Mutex::new(None),
            bytes: Arc::new(Semaphore::new(max_bytes)),
            max_bytes,
        });
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
                claimed_at,
                renewed_after_ms: AtomicU64::new(0),
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

    /// Hands the outcome of a round this presentation ran to the recording task; the
    /// reply goes out without waiting for it.
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

impl Recorder {
    /// Queues `outcome` for the recording task, unless its lease has passed or the queue
    /// is full (by count or by bytes): then its round is left to its lease.
    fn queue(&self, outcome: Outcome, leased_at: Instant) {
        if leased_at.elapsed() >= self.lease {
            log_limited!(warn, round = %outcome.round, "round outcome not recorded: its lease had passed when the round ended (renewals failed, or another request took the round over); the round is left to its lease");
            return;
        }
        let size = outcome.response.len();
        let bytes = u32::try_from(size)
            .ok()
            .and_then(|size| self.bytes.clone().try_acquire_many_owned(size).ok());
        let Some(bytes) = bytes else {
            log_limited!(warn, round = %outcome.round, size, "round outcome not recorded: {} bytes of outcomes are already waiting for the ledger; the round is left to its lease", self.max_bytes);
            return;
        };
        let mut queued = Queued {
            outcome,
            leased_at,
            queued_at: Instant::now(),
            bytes,
        };
        let mut queue = self
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(Queue { sender, .. }) = &*queue {
            match sender.try_send(queued) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(queued)) => {
                    log_limited!(warn, round = %queued.outcome.round, "round outcome not recorded: {RECORD_QUEUE} outcomes are already waiting for the ledger; the round is left to its lease");
                    return;
                }
                // The task's runtime has gone (a server used from another runtime).
                Err(mpsc::error::TrySendError::Closed(back)) => queued = back,
            }
        }
        let (sender, receiver) = mpsc::channel(RECORD_QUEUE);
        let task = tokio::spawn(recording(
            self.ledger.clone(),
            self.down.clone(),
            self.lease,
            receiver,
        ));
        // The receiver lives until the task ends and the queue is empty: this send does not
        // fail.
        let _ = sender.try_send(queued);
        *queue = Some(Queue { sender, task });
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
/// call, until every sender is gone and the queue is empty. An outcome that waited half a
/// lease, or whose lease has passed, is dropped, not written. A failed write is logged (as
/// an outage) and not retried: its rounds' claims expire with their leases, as when a
/// record failed before. Each outcome's bytes are given back once its write is done.
async fn recording(
    ledger: Arc<dyn RoundLedger>,
    down: Arc<AtomicBool>,
    lease: Duration,
    mut receiver: mpsc::Receiver<Queued>,
) {
    let mut queued = Vec::with_capacity(RECORD_BATCH);
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    let mut held = Vec::with_capacity(RECORD_BATCH);
    while receiver.recv_many(&mut queued, RECORD_BATCH).await > 0 {
        for waiting in queued.drain(..) {
            if let Some(why) = waiting.stale(lease) {
                log_limited!(warn, round = %waiting.outcome.round, why, "round outcome not recorded: it would land after its lease; the round is left to it");
                continue;
            }
            batch.push(waiting.outcome);
            held.push(waiting.bytes);
        }
        if batch.is_empty() {
            continue;
        }
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
        held.clear();
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

    /// A ledger that claims every round and keeps what it is asked to record. Each write
    /// first waits for a permit of `gate` (none at first: writes wait) and says on
    /// `entered` that it started.
    struct Kept {
        gate: Semaphore,
        entered: tokio::sync::Notify,
        written: std::sync::Mutex<Vec<Vec<u8>>>,
    }

    impl Kept {
        fn new() -> Arc<Self> {
            Arc::new(Kept {
                gate: Semaphore::new(0),
                entered: tokio::sync::Notify::new(),
                written: std::sync::Mutex::new(Vec::new()),
            })
        }

        fn open(&self) {
            self.gate.add_permits(1);
        }

        fn written(&self) -> Vec<Vec<u8>> {
            self.written.lock().unwrap().clone()
        }
    }

    impl RoundLedger for Kept {
        fn claim<'a>(
            &'a self,
            _: &'a Claim,
        ) -> futures::future::BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
            Box::pin(async { Ok(ClaimOutcome::Claimed) })
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
            Box::pin(async { unreachable!("the recording task writes with record_all") })
        }
        fn record_all<'a>(
            &'a self,
            outcomes: &'a [Outcome],
        ) -> futures::future::BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
            Box::pin(async move {
                self.entered.notify_one();
                drop(self.gate.acquire().await.unwrap());
                let mut written = self.written.lock().unwrap();
                written.extend(outcomes.iter().map(|o| o.response.clone()));
                Ok(vec![true; outcomes.len()])
            })
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
        let ledger = Kept::new();
        let rounds =
            Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT).with_record_bytes(100);
        // The ledger holds its writes: the queue keeps every outcome's bytes meanwhile.
        rounds.record(held(&rounds, "a").await, Some(vec![b'a'; 60]));
        rounds.record(held(&rounds, "b").await, Some(vec![b'b'; 60]));
        rounds.record(held(&rounds, "c").await, Some(vec![b'c'; 40]));
        rounds.record(held(&rounds, "d").await, Some(vec![b'd'; 1]));
        ledger.open();
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.written(), [vec![b'a'; 60], vec![b'c'; 40]]);
        let log = logs.text();
        assert!(
            log.contains("WARN") && log.contains("100 bytes of outcomes are already waiting"),
            "{log}"
        );
        // Written, their bytes are free again; one outcome larger than the bound never fits.
        rounds.record(held(&rounds, "e").await, Some(vec![b'e'; 100]));
        rounds.record(held(&rounds, "f").await, Some(vec![b'f'; 101]));
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.written().last(), Some(&vec![b'e'; 100]));
        assert_eq!(ledger.written().len(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn an_outcome_whose_lease_has_passed_is_not_recorded() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let ledger = Kept::new();
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
        assert_eq!(ledger.written(), [b"renewed".to_vec()]);
        let log = logs.text();
        assert!(
            log.contains("its lease had passed when the round ended"),
            "{log}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_outcome_that_waited_half_a_lease_is_dropped_from_the_batch() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let ledger = Kept::new();
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "first").await, Some(b"first".to_vec()));
        // The first write is out (and held); the second outcome waits behind it...
        ledger.entered.notified().await;
        rounds.record(held(&rounds, "second").await, Some(b"second".to_vec()));
        // ... for half a lease.
        tokio::time::advance(DEFAULT_LEASE / 2).await;
        ledger.open();
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.written(), [b"first".to_vec()]);
        let log = logs.text();
        assert!(
            log.contains("it would land after its lease")
                && log.contains("waited half a lease for the ledger"),
            "{log}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_waits_for_the_queued_outcomes_up_to_its_timeout() {
        let ledger = Kept::new();
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        // Nothing queued: nothing to wait for.
        assert!(rounds.flusher().flush(Duration::ZERO).await);
        // A ledger that never answers: the flush gives up at its timeout.
        rounds.record(held(&rounds, "stuck").await, Some(b"stuck".to_vec()));
        assert!(!rounds.flusher().flush(Duration::from_secs(5)).await);
        assert!(ledger.written().is_empty());
        // The next outcome starts another recording task, which a flush waits for.
        ledger.open();
        ledger.open();
        rounds.record(held(&rounds, "next").await, Some(b"next".to_vec()));
        assert!(rounds.flusher().flush(LONG).await);
        assert!(ledger.written().contains(&b"next".to_vec()));
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
