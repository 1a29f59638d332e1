//! The recording side of a server's ledger: the outcomes of finished rounds, written after
//! their replies have gone out.
//!
//! [`Recorder::queue`] hands an outcome to one recording task per server, which writes
//! every outcome that arrived while its previous write was out in one call
//! ([`RoundLedger::record_all`]). The outcomes waiting are bounded by count and by bytes,
//! one that waited half a lease (or whose lease has passed) is not written (it would land
//! after its lease), and a server that stops flushes the queue ([`RecordFlush::flush`]) so
//! that what was replied is recorded.
//!
//! **Records ride with claims.** With a ledger whose claims can carry records
//! ([`RoundLedger::claims_carry_records`]: `RedisLedger`), the task does not send a batch
//! on a round trip of its own at once: it *parks* it for the next claim this server sends,
//! which writes it in its own round trip ([`RoundLedger::claim_with_records`]), and tells
//! the task how that went. A batch no claim took within [`CARRY_WAIT`] goes out on its own,
//! so an idle server still records promptly; when the server flushes (or goes), parked
//! records go out at once, and a flush waits for the ones a claim has taken. A claim that is
//! dropped before it answered hands its records back, and they are written again on their
//! own (a record written twice is the same bytes under the same key).
//!
//! This lives here, in the server, and not inside `RedisLedger`: holding records back is
//! only right while the server knows it is not stopping (a flush must not wait out the
//! delay), and the server alone sees both its claims and its records, its queue's bounds
//! and its outcomes' leases. A ledger only says whether one trip can carry both, through two
//! provided trait methods, so every other ledger (`MemoryLedger`, a user's) keeps being
//! called exactly as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

// tokio's clock, not std's: the same instants in production, and a test can pause it.
use tokio::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::contract::{LedgerError, Outcome, RoundId, RoundLedger};
use crate::server::ratelimit::log_limited;

/// Outcomes the recording task writes in one call, at most.
const RECORD_BATCH: usize = 64;

/// Outcomes waiting for the recording task, at most: when the ledger is slower than the
/// rounds for long, further outcomes are not recorded (their rounds are left to their
/// leases, as when a record fails) rather than held in memory without bound.
pub(super) const RECORD_QUEUE: usize = 16 * 1024;

/// Bytes of recorded responses waiting for (or being written by) the recording task, at
/// most: the same bound as [`RECORD_QUEUE`], by size, for large replies (a sealed
/// `requestState` alone may be tens of KiB).
pub(super) const RECORD_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// How long a stopping server waits for the outcomes already queued to be written, by
/// default (a Redis write takes milliseconds; this is for a ledger that stalls).
#[cfg(feature = "server-http")]
pub(crate) const DEFAULT_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a batch of records waits for a claim to carry it before it goes out on its own.
///
/// Long enough that a server taking a few hundred rounds a second or more (where a trip
/// saved counts) nearly always has a claim go out meanwhile; short enough to stay well
/// inside what a record's delay can cost: a presentation of the same round on another
/// instance finds it in progress and waits, first 10 ms, then tries again, and by then the
/// record has landed; the shortest lease (30 ms) leaves records half of it (15 ms) before
/// they are too late to write. tokio's timer counts whole milliseconds, so this waits 5 to
/// 6 ms.
pub(crate) const CARRY_WAIT: Duration = Duration::from_millis(5);

/// An outcome waiting for the recording task.
pub(super) struct Queued {
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
    /// Where a batch waits for a claim to carry it; `None` when the ledger's claims cannot.
    dock: Option<Arc<Dock>>,
}

/// The recording task and the way to it.
struct Queue {
    sender: mpsc::Sender<Queued>,
    task: JoinHandle<()>,
    /// Dropped when the server flushes (or goes): the task then parks nothing more and
    /// writes at once what it had parked.
    flushing: DropGuard,
}

/// The batch parked for the next claim, if any.
#[derive(Default)]
pub(super) struct Dock {
    slot: std::sync::Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    parcel: Option<Parcel>,
    /// The number the next parcel gets, so a task knows its own.
    next: u64,
}

/// A batch parked for a claim, and where to say how its write went.
struct Parcel {
    number: u64,
    outcomes: Vec<Outcome>,
    sent: oneshot::Sender<Carriage>,
}

/// What became of a parcel a claim took.
enum Carriage {
    /// The claim's trip wrote it, or failed to: the records' answer.
    Written(Result<Vec<bool>, LedgerError>),
    /// The claim was dropped before it answered: the outcomes, to be written again.
    Returned(Vec<Outcome>),
}

/// Outcomes a claim took to carry; tells the recording task how their write went, or gives
/// them back when dropped before that.
pub(crate) struct Carried {
    outcomes: Vec<Outcome>,
    sent: Option<oneshot::Sender<Carriage>>,
}

impl Carried {
    pub(crate) fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// Tells the recording task how the records' write went.
    pub(crate) fn written(mut self, answer: Result<Vec<bool>, LedgerError>) {
        if let Some(sent) = self.sent.take() {
            let _ = sent.send(Carriage::Written(answer));
        }
    }
}

impl Drop for Carried {
    fn drop(&mut self) {
        if let Some(sent) = self.sent.take() {
            let _ = sent.send(Carriage::Returned(std::mem::take(&mut self.outcomes)));
        }
    }
}

/// A handle that flushes a server's queued outcomes when it stops (see `Rounds::flusher`).
#[derive(Clone)]
pub(crate) struct RecordFlush(pub(super) Arc<Recorder>);

impl RecordFlush {
    /// Waits until every outcome queued so far has been written (or failed to be), up to
    /// `timeout`; `true` when the queue emptied in time. Parked records go out at once, and
    /// those a claim carries are waited for. The recording task ends; a later outcome
    /// starts another.
    pub(crate) async fn flush(&self, timeout: Duration) -> bool {
        let queue = self
            .0
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(Queue {
            sender,
            task,
            flushing,
        }) = queue
        else {
            return true;
        };
        let waiting = RECORD_QUEUE - sender.capacity();
        // The task writes what is queued, then ends: its receiver sees no sender left.
        drop(sender);
        drop(flushing);
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

impl Recorder {
    pub(super) fn new(
        ledger: Arc<dyn RoundLedger>,
        down: Arc<AtomicBool>,
        lease: Duration,
        max_bytes: usize,
    ) -> Self {
        let dock = ledger
            .claims_carry_records()
            .then(|| Arc::new(Dock::default()));
        Recorder {
            ledger,
            down,
            lease,
            queue: std::sync::Mutex::new(None),
            bytes: Arc::new(Semaphore::new(max_bytes)),
            max_bytes,
            dock,
        }
    }

    /// Whether a batch is parked for a claim.
    #[cfg(test)]
    fn parked(&self) -> bool {
        self.dock
            .as_ref()
            .is_some_and(|dock| lock(&dock.slot).parcel.is_some())
    }

    /// The records parked for a claim, for the claim about to go out to carry.
    pub(crate) fn carry(&self) -> Option<Carried> {
        let mut slot = lock(&self.dock.as_ref()?.slot);
        let parcel = slot.parcel.take()?;
        Some(Carried {
            outcomes: parcel.outcomes,
            sent: Some(parcel.sent),
        })
    }

    /// Queues `outcome` for the recording task, unless its lease has passed or the queue
    /// is full (by count or by bytes): then its round is left to its lease.
    pub(crate) fn queue(&self, outcome: Outcome, leased_at: Instant) {
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
        let mut queue = lock(&self.queue);
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
        let flushing = CancellationToken::new();
        let writer = Writer {
            ledger: self.ledger.clone(),
            down: self.down.clone(),
            lease: self.lease,
            dock: self.dock.clone(),
            flushing: flushing.clone(),
        };
        let task = tokio::spawn(writer.recording(receiver));
        // The receiver lives until the task ends and the queue is empty: this send does not
        // fail.
        let _ = sender.try_send(queued);
        *queue = Some(Queue {
            sender,
            task,
            flushing: flushing.drop_guard(),
        });
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn unreachable(down: &AtomicBool, error: &LedgerError) {
    if !down.swap(true, Ordering::Relaxed) {
        tracing::warn!(%error, "round ledger unavailable; protected rounds fail closed until it is back");
    }
}

pub(super) fn reachable(down: &AtomicBool) {
    if down.swap(false, Ordering::Relaxed) {
        tracing::info!("round ledger reachable again");
    }
}

/// The recording task's side.
struct Writer {
    ledger: Arc<dyn RoundLedger>,
    down: Arc<AtomicBool>,
    lease: Duration,
    dock: Option<Arc<Dock>>,
    flushing: CancellationToken,
}

impl Writer {
    /// The recording task: writes what has arrived, up to [`RECORD_BATCH`] outcomes at a
    /// time, until every sender is gone and the queue is empty. An outcome that waited half
    /// a lease, or whose lease has passed, is dropped, not written. A failed write is
    /// logged (as an outage) and not retried: its rounds' claims expire with their leases,
    /// as when a record failed before. Each outcome's bytes are given back once its write
    /// is done.
    async fn recording(self, mut receiver: mpsc::Receiver<Queued>) {
        let mut queued = Vec::with_capacity(RECORD_BATCH);
        let mut rounds = Vec::with_capacity(RECORD_BATCH);
        let mut held = Vec::with_capacity(RECORD_BATCH);
        while receiver.recv_many(&mut queued, RECORD_BATCH).await > 0 {
            let mut batch = Vec::with_capacity(queued.len());
            for waiting in queued.drain(..) {
                if let Some(why) = waiting.stale(self.lease) {
                    log_limited!(warn, round = %waiting.outcome.round, why, "round outcome not recorded: it would land after its lease; the round is left to it");
                    continue;
                }
                rounds.push(waiting.outcome.round);
                batch.push(waiting.outcome);
                held.push(waiting.bytes);
            }
            if batch.is_empty() {
                continue;
            }
            let written = self.write(batch).await;
            self.report(&rounds, written);
            rounds.clear();
            held.clear();
        }
    }

    /// Writes `batch`: parked for a claim to carry when the ledger's claims can, on its
    /// own otherwise, or when no claim took it within [`CARRY_WAIT`], or when the server
    /// flushes.
    async fn write(&self, batch: Vec<Outcome>) -> Result<Vec<bool>, LedgerError> {
        let Some(dock) = self.dock.as_ref().filter(|_| !self.flushing.is_cancelled()) else {
            return self.ledger.record_all(&batch).await;
        };
        let (sent, mut answer) = oneshot::channel();
        let parked = {
            let mut slot = lock(&dock.slot);
            // Taken: another task's (one a flush gave up waiting for); this one writes alone.
            if slot.parcel.is_some() {
                Err(batch)
            } else {
                let number = slot.next;
                slot.next += 1;
                slot.parcel = Some(Parcel {
                    number,
                    outcomes: batch,
                    sent,
                });
                Ok(number)
            }
        };
        let number = match parked {
            Ok(number) => number,
            Err(batch) => return self.ledger.record_all(&batch).await,
        };
        let carried = tokio::select! {
            carried = &mut answer => carried.ok(),
            () = tokio::time::sleep(CARRY_WAIT) => None,
            () = self.flushing.cancelled() => None,
        };
        let carriage = match carried {
            Some(carriage) => carriage,
            None => {
                // No claim took it (or the server flushes): it goes now, unless a claim
                // took it meanwhile, whose answer is then waited for.
                let mine = {
                    let mut slot = lock(&dock.slot);
                    match &slot.parcel {
                        Some(parcel) if parcel.number == number => slot.parcel.take(),
                        _ => None,
                    }
                };
                match mine {
                    Some(parcel) => return self.ledger.record_all(&parcel.outcomes).await,
                    None => answer.await.map_err(|_| {
                        LedgerError::new("a claim carrying records was lost before it answered")
                    })?,
                }
            }
        };
        match carriage {
            Carriage::Written(written) => written,
            Carriage::Returned(outcomes) => self.ledger.record_all(&outcomes).await,
        }
    }

    /// Logs what a write of `rounds` came to.
    fn report(&self, rounds: &[RoundId], written: Result<Vec<bool>, LedgerError>) {
        match written {
            Ok(recorded) => {
                reachable(&self.down);
                for (round, recorded) in rounds.iter().zip(recorded) {
                    if !recorded {
                        tracing::warn!(round = %round, "round outcome not recorded: its lease had passed to another request");
                    }
                }
            }
            Err(error) => {
                unreachable(&self.down, &error);
                tracing::warn!(%error, rounds = rounds.len(), "round outcomes not recorded; their rounds run again once their leases expire");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures::future::BoxFuture;

    use super::super::contract::{Claim, ClaimAndRecords, ClaimOutcome, Owner};
    use super::super::rounds::{Claimed, DEFAULT_LEASE, DEFAULT_WAIT, Held, Rounds};
    use super::*;
    use crate::machine::ReplayPolicy;

    /// A ledger whose claims carry records: it claims every round and keeps the records
    /// each claim carried and those written alone (with when). While `hold` is set, a
    /// claim with records says so on `entered` and waits for a permit of `gate` (none at
    /// first).
    struct Carrier {
        carried: Mutex<Vec<Vec<Vec<u8>>>>,
        alone: Mutex<Vec<(Vec<u8>, Instant)>>,
        hold: AtomicBool,
        gate: Semaphore,
        entered: tokio::sync::Notify,
        refuse_records: AtomicBool,
    }

    impl Default for Carrier {
        fn default() -> Self {
            Carrier {
                carried: Mutex::default(),
                alone: Mutex::default(),
                hold: AtomicBool::default(),
                gate: Semaphore::new(0),
                entered: tokio::sync::Notify::new(),
                refuse_records: AtomicBool::default(),
            }
        }
    }

    impl Carrier {
        fn carried(&self) -> Vec<Vec<Vec<u8>>> {
            self.carried.lock().unwrap().clone()
        }

        fn alone(&self) -> Vec<Vec<u8>> {
            let alone = self.alone.lock().unwrap();
            alone.iter().map(|(response, _)| response.clone()).collect()
        }
    }

    fn responses(outcomes: &[Outcome]) -> Vec<Vec<u8>> {
        outcomes.iter().map(|o| o.response.clone()).collect()
    }

    impl RoundLedger for Carrier {
        fn claim<'a>(&'a self, _: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
            Box::pin(async { Ok(ClaimOutcome::Claimed) })
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
            Box::pin(async { unreachable!("the recording task writes with record_all") })
        }
        fn record_all<'a>(
            &'a self,
            outcomes: &'a [Outcome],
        ) -> BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
            let now = Instant::now();
            let mut alone = self.alone.lock().unwrap();
            alone.extend(responses(outcomes).into_iter().map(|r| (r, now)));
            Box::pin(async move { Ok(vec![true; outcomes.len()]) })
        }
        fn claims_carry_records(&self) -> bool {
            true
        }
        fn claim_with_records<'a>(
            &'a self,
            _: &'a Claim,
            outcomes: &'a [Outcome],
        ) -> BoxFuture<'a, ClaimAndRecords> {
            Box::pin(async move {
                if self.hold.load(Ordering::SeqCst) {
                    self.entered.notify_one();
                    drop(self.gate.acquire().await.unwrap());
                }
                let records = if self.refuse_records.load(Ordering::SeqCst) {
                    Err(LedgerError::new("NOPERM psetex"))
                } else {
                    self.carried.lock().unwrap().push(responses(outcomes));
                    Ok(vec![true; outcomes.len()])
                };
                ClaimAndRecords {
                    claim: Ok(ClaimOutcome::Claimed),
                    records,
                }
            })
        }
    }

    async fn claimed(rounds: &Rounds, token: &str) -> Claimed {
        rounds
            .claim(token, u32::MAX, None, ReplayPolicy::RerunAfterLease)
            .await
    }

    async fn held(rounds: &Rounds, token: &str) -> Held {
        match claimed(rounds, token).await {
            Claimed::Run(held) => held,
            _ => panic!("the round is claimed"),
        }
    }

    /// Lets the recording task run until it has parked what was queued (the clock does not
    /// move while this task is ready to run).
    async fn until_parked(rounds: &Rounds) {
        for _ in 0..1_000 {
            if rounds.recorder.parked() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("nothing was parked");
    }

    const LONG: Duration = Duration::from_secs(3600);

    #[tokio::test(start_paused = true)]
    async fn a_record_rides_with_the_next_claim() {
        let ledger = Arc::new(Carrier::default());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        rounds.record(held(&rounds, "b").await, Some(b"b".to_vec()));
        until_parked(&rounds).await;
        // The next claim carries both records, and the round it claims runs.
        let c = held(&rounds, "c").await;
        assert_eq!(ledger.carried(), [vec![b"a".to_vec(), b"b".to_vec()]]);
        // Nothing is parked any more: the claim after carries nothing.
        held(&rounds, "d").await;
        assert_eq!(ledger.carried().len(), 1);
        rounds.record(c, Some(b"c".to_vec()));
        until_parked(&rounds).await;
        held(&rounds, "e").await;
        assert_eq!(ledger.carried()[1], [b"c".to_vec()]);
        assert!(rounds.flusher().flush(LONG).await);
        assert!(ledger.alone().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn records_no_claim_takes_go_out_alone_after_the_carry_wait() {
        let ledger = Arc::new(Carrier::default());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        let a = held(&rounds, "a").await;
        let recorded_at = Instant::now();
        rounds.record(a, Some(b"a".to_vec()));
        // No claim comes: the clock moves on to the recording task's timer.
        for _ in 0..1_000 {
            if !ledger.alone().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(ledger.alone(), [b"a".to_vec()]);
        let written_at = ledger.alone.lock().unwrap()[0].1;
        assert!(
            written_at >= recorded_at + CARRY_WAIT,
            "it waited for a claim first"
        );
        assert!(ledger.carried().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_writes_parked_records_at_once() {
        let ledger = Arc::new(Carrier::default());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        until_parked(&rounds).await;
        let before = Instant::now();
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.alone(), [b"a".to_vec()]);
        // The flush did not wait for the carry wait to pass (the paused clock would have
        // moved to it).
        assert_eq!(Instant::now(), before);
        // After a flush, a new outcome is parked for a claim again.
        rounds.record(held(&rounds, "b").await, Some(b"b".to_vec()));
        until_parked(&rounds).await;
        held(&rounds, "c").await;
        assert_eq!(ledger.carried(), [vec![b"b".to_vec()]]);
    }

    #[tokio::test]
    async fn a_flush_waits_for_the_records_a_claim_carries() {
        let ledger = Arc::new(Carrier::default());
        ledger.hold.store(true, Ordering::SeqCst);
        let rounds = Arc::new(Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT));
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        until_parked(&rounds).await;
        let claim = tokio::spawn({
            let rounds = rounds.clone();
            async move { matches!(claimed(&rounds, "b").await, Claimed::Run(_)) }
        });
        ledger.entered.notified().await;
        let flush = tokio::spawn({
            let flusher = rounds.flusher();
            async move { flusher.flush(LONG).await }
        });
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(
            !flush.is_finished(),
            "the flush waits for the carried records"
        );
        ledger.gate.add_permits(1);
        assert!(flush.await.unwrap());
        assert_eq!(ledger.carried(), [vec![b"a".to_vec()]]);
        assert!(ledger.alone().is_empty());
        assert!(claim.await.unwrap());
    }

    #[tokio::test]
    async fn a_claim_dropped_while_carrying_records_gives_them_back() {
        let ledger = Arc::new(Carrier::default());
        ledger.hold.store(true, Ordering::SeqCst);
        let rounds = Arc::new(Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT));
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        until_parked(&rounds).await;
        let claim = tokio::spawn({
            let rounds = rounds.clone();
            async move { claimed(&rounds, "b").await }
        });
        ledger.entered.notified().await;
        claim.abort();
        assert!(claim.await.is_err_and(|error| error.is_cancelled()));
        // The recording task writes them itself.
        assert!(rounds.flusher().flush(LONG).await);
        assert_eq!(ledger.alone(), [b"a".to_vec()]);
        assert!(ledger.carried().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_record_does_not_fail_the_claim_carrying_it() {
        let (logs, _guard) = crate::captured_logs::CapturedLogs::install();
        let ledger = Arc::new(Carrier::default());
        ledger.refuse_records.store(true, Ordering::SeqCst);
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        until_parked(&rounds).await;
        // The round runs; the record's failure is logged, as any failed record.
        held(&rounds, "b").await;
        assert!(rounds.flusher().flush(LONG).await);
        let log = logs.text();
        assert!(
            log.contains("round outcomes not recorded") && log.contains("NOPERM psetex"),
            "{log}"
        );
        assert!(ledger.alone().is_empty() && ledger.carried().is_empty());
    }
}
