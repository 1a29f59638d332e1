//! The recording side of a server's ledger: the outcomes of finished rounds, written after
//! their replies have gone out.
//!
//! [`Recorder::queue`] puts an outcome in the server's **dock**, a queue under a lock: no
//! task is woken and no channel crossed per round. With a ledger whose claims can carry
//! records ([`RoundLedger::claims_carry_records`]: `RedisLedger`), the next claim this
//! server sends takes what waits there ([`Recorder::carry`]) and writes it in its own round
//! trip ([`RoundLedger::claim_with_records`]), then logs how that went itself. One
//! recording task per server writes, with [`RoundLedger::record_all`], the records no claim
//! took within [`CARRY_WAIT`] (so an idle server still records promptly), the records a
//! claim dropped before it answered gave back, and everything while the server flushes;
//! with any other ledger it writes every outcome as soon as it is queued, batching those
//! that arrived while its previous write was out. The task sleeps while the dock is empty,
//! and under load wakes about once a [`CARRY_WAIT`], not once a round.
//!
//! The outcomes waiting are bounded by count and by bytes, one that waited half a lease (or
//! whose lease has passed) is not written (it would land after its lease), and a server that
//! stops flushes ([`RecordFlush::flush`]) so that what was replied is recorded.
//!
//! This lives here, in the server, and not inside `RedisLedger`: holding records back is
//! only right while the server knows it is not stopping (a flush must not wait out the
//! delay), and the server alone sees both its claims and its records, its queue's bounds
//! and its outcomes' leases. A ledger only says whether one trip can carry both, through two
//! provided trait methods, so every other ledger (`MemoryLedger`, a user's) keeps being
//! called exactly as before.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

// tokio's clock, not std's: the same instants in production, and a test can pause it.
use tokio::time::Instant;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::contract::{LedgerError, Outcome, RoundLedger};
use crate::server::ratelimit::log_limited;

/// Outcomes one write (a claim's, or the recording task's) takes at most.
const RECORD_BATCH: usize = 64;

/// Outcomes waiting in the dock, at most: when the ledger is slower than the rounds for
/// long, further outcomes are not recorded (their rounds are left to their leases, as when
/// a record fails) rather than held in memory without bound.
pub(super) const RECORD_QUEUE: usize = 16 * 1024;

/// Bytes of recorded responses waiting (or being written), at most: the same bound as
/// [`RECORD_QUEUE`], by size, for large replies (a sealed `requestState` alone may be tens
/// of KiB).
pub(super) const RECORD_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// How long a stopping server waits for the outcomes already queued to be written, by
/// default (a Redis write takes milliseconds; this is for a ledger that stalls).
#[cfg(feature = "server-http")]
pub(crate) const DEFAULT_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a record waits for a claim to carry it before it goes out on its own.
///
/// Long enough that a server taking a few hundred rounds a second or more (where a trip
/// saved counts) nearly always has a claim go out meanwhile; short enough to stay well
/// inside what a record's delay can cost: a presentation of the same round on another
/// instance finds it in progress and waits, first 10 ms, then tries again, and by then the
/// record has landed; the shortest lease (30 ms) leaves records half of it (15 ms) before
/// they are too late to write. tokio's timer counts whole milliseconds, so this waits 5 to
/// 6 ms.
pub(crate) const CARRY_WAIT: Duration = Duration::from_millis(5);

/// An outcome waiting in the dock.
pub(super) struct Queued {
    outcome: Outcome,
    /// Its bookkeeping, kept apart so a claim can lend the outcomes alone to the ledger.
    note: Note,
}

/// When an outcome's lease was set and it was queued, and its share of the byte bound.
struct Note {
    /// When its lease was set (the claim or the last renewal that held).
    leased_at: Instant,
    /// When its round ended and it was queued.
    queued_at: Instant,
    /// Given back by a claim dropped before it answered: written at once, not carried.
    returned: bool,
    /// Its share of [`RECORD_QUEUE_BYTES`], given back once it is written or dropped.
    _bytes: OwnedSemaphorePermit,
}

impl Note {
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

/// The recording side of a server: the dock, the recording task (started on first use,
/// and again if the runtime it ran on has gone) and the bound on the bytes waiting.
pub(crate) struct Recorder {
    dock: Arc<Dock>,
    bytes: Arc<Semaphore>,
    /// [`RECORD_QUEUE_BYTES`] unless a test says otherwise.
    max_bytes: usize,
    task: std::sync::Mutex<Option<Task>>,
}

/// The recording task, told to write what waits and end when the recorder goes.
struct Task {
    handle: JoinHandle<()>,
    _stop: DropGuard,
}

/// What the server's requests and its recording task share.
pub(super) struct Dock {
    ledger: Arc<dyn RoundLedger>,
    down: Arc<AtomicBool>,
    lease: Duration,
    /// Whether claims carry records: records then wait [`CARRY_WAIT`] for one.
    carries: bool,
    slot: std::sync::Mutex<Slot>,
    /// A record arrived while the task was idle.
    arrived: Notify,
    /// Something is to be written at once: a flush, records given back, or (when claims
    /// carry none) any record.
    urgent: Notify,
    /// The dock changed in a way a flush waits for.
    settled: Notify,
}

#[derive(Default)]
struct Slot {
    waiting: VecDeque<Queued>,
    /// Writes out (claims carrying records, and the task's own).
    writing: usize,
    /// Flushes under way: records are then written at once.
    flushes: usize,
    /// The recording task sleeps until a record arrives (on `arrived`): the dock stayed
    /// empty for a whole [`CARRY_WAIT`]. Under load it ticks on its timer instead, so a
    /// record queued does not wake it (a wake-up per round, another thread's at that).
    idle: bool,
    /// Records queued so far: the task idles only after a tick in which none came.
    arrivals: u64,
}

impl Slot {
    fn settled(&self) -> bool {
        self.waiting.is_empty() && self.writing == 0
    }
}

/// Outcomes a claim took to carry; logs how their write went, or gives them back to the
/// dock when dropped before that.
pub(crate) struct Carried {
    dock: Arc<Dock>,
    outcomes: Vec<Outcome>,
    notes: Vec<Note>,
}

impl Carried {
    pub(crate) fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// Logs how the records' write went; their bytes are given back.
    pub(crate) fn written(mut self, answer: Result<Vec<bool>, LedgerError>) {
        self.dock.report(&self.outcomes, answer);
        self.notes.clear();
        self.outcomes.clear();
        // Dropped now, with nothing left to give back: the write is done.
    }
}

impl Drop for Carried {
    fn drop(&mut self) {
        let back = self.outcomes.drain(..).zip(self.notes.drain(..));
        let returned = back.len() > 0;
        {
            let mut slot = lock(&self.dock.slot);
            // In front, as they were queued first; written at once by the recording task.
            for (outcome, mut note) in back.rev() {
                note.returned = true;
                slot.waiting.push_front(Queued { outcome, note });
            }
            slot.writing -= 1;
        }
        if returned {
            self.dock.urgent.notify_one();
        }
        self.dock.settled.notify_waiters();
    }
}

/// A handle that flushes a server's queued outcomes when it stops (see `Rounds::flusher`).
#[derive(Clone)]
pub(crate) struct RecordFlush(pub(super) Arc<Recorder>);

impl RecordFlush {
    /// Waits until every outcome queued so far has been written (or failed to be), up to
    /// `timeout`; `true` when that happened in time. Waiting records go out at once, and
    /// those a claim carries are waited for; after the flush, records wait for claims again.
    pub(crate) async fn flush(&self, timeout: Duration) -> bool {
        let dock = &self.0.dock;
        let waiting = {
            let mut slot = lock(&dock.slot);
            if slot.settled() {
                return true;
            }
            slot.flushes += 1;
            slot.waiting.len()
        };
        self.0.start_task();
        dock.urgent.notify_one();
        let settled = async {
            loop {
                let changed = dock.settled.notified();
                let mut changed = std::pin::pin!(changed);
                changed.as_mut().enable();
                if lock(&dock.slot).settled() {
                    return;
                }
                changed.await;
            }
        };
        let in_time = tokio::time::timeout(timeout, settled).await.is_ok();
        lock(&dock.slot).flushes -= 1;
        if !in_time {
            tracing::warn!(
                ?timeout,
                waiting,
                "round outcomes still waiting for the ledger after the flush timeout: not recorded; their rounds are left to their leases"
            );
        }
        in_time
    }
}

impl Recorder {
    pub(super) fn new(
        ledger: Arc<dyn RoundLedger>,
        down: Arc<AtomicBool>,
        lease: Duration,
        max_bytes: usize,
    ) -> Self {
        let carries = ledger.claims_carry_records();
        Recorder {
            dock: Arc::new(Dock {
                ledger,
                down,
                lease,
                carries,
                slot: std::sync::Mutex::default(),
                arrived: Notify::new(),
                urgent: Notify::new(),
                settled: Notify::new(),
            }),
            bytes: Arc::new(Semaphore::new(max_bytes)),
            max_bytes,
            task: std::sync::Mutex::new(None),
        }
    }

    /// Whether records wait in the dock.
    #[cfg(test)]
    fn parked(&self) -> bool {
        !lock(&self.dock.slot).waiting.is_empty()
    }

    /// The records waiting, for the claim about to go out to carry (when the ledger's
    /// claims can carry records and some wait).
    pub(crate) fn carry(&self) -> Option<Carried> {
        if !self.dock.carries {
            return None;
        }
        let (outcomes, notes) = self.dock.take(|_| true)?;
        Some(Carried {
            dock: self.dock.clone(),
            outcomes,
            notes,
        })
    }

    /// Queues `outcome`, unless its lease has passed or the dock is full (by count or by
    /// bytes): then its round is left to its lease.
    pub(crate) fn queue(&self, outcome: Outcome, leased_at: Instant) {
        if leased_at.elapsed() >= self.dock.lease {
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
        let note = Note {
            leased_at,
            queued_at: Instant::now(),
            returned: false,
            _bytes: bytes,
        };
        let idle = {
            let mut slot = lock(&self.dock.slot);
            if slot.waiting.len() >= RECORD_QUEUE {
                drop(slot);
                log_limited!(warn, round = %outcome.round, "round outcome not recorded: {RECORD_QUEUE} outcomes are already waiting for the ledger; the round is left to its lease");
                return;
            }
            slot.waiting.push_back(Queued { outcome, note });
            slot.arrivals += 1;
            std::mem::take(&mut slot.idle)
        };
        self.start_task();
        if !self.dock.carries {
            self.dock.urgent.notify_one();
        } else if idle {
            self.dock.arrived.notify_one();
        }
    }

    /// Starts the recording task unless it runs.
    fn start_task(&self) {
        let mut task = lock(&self.task);
        // Finished: the runtime it ran on has gone (a server used from another runtime).
        if task.as_ref().is_some_and(|task| !task.handle.is_finished()) {
            return;
        }
        let stop = CancellationToken::new();
        let handle = tokio::spawn(self.dock.clone().recording(stop.clone()));
        *task = Some(Task {
            handle,
            _stop: stop.drop_guard(),
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

impl Dock {
    /// Takes up to [`RECORD_BATCH`] waiting outcomes from the front while `due` says so,
    /// leaving out (and logging) the stale ones; counts the write they go to. `None` when
    /// none is taken.
    fn take(&self, due: impl Fn(&Note) -> bool) -> Option<(Vec<Outcome>, Vec<Note>)> {
        let mut slot = lock(&self.slot);
        let mut outcomes = Vec::new();
        let mut notes = Vec::new();
        while outcomes.len() < RECORD_BATCH {
            match slot.waiting.front() {
                Some(queued) if due(&queued.note) => {}
                _ => break,
            }
            let Some(Queued { outcome, note }) = slot.waiting.pop_front() else {
                break;
            };
            if let Some(why) = note.stale(self.lease) {
                log_limited!(warn, round = %outcome.round, why, "round outcome not recorded: it would land after its lease; the round is left to it");
                continue;
            }
            outcomes.push(outcome);
            notes.push(note);
        }
        let taken = !outcomes.is_empty();
        if taken {
            slot.writing += 1;
        }
        let settled = slot.settled();
        drop(slot);
        if settled {
            // Stale outcomes dropped may have emptied the dock.
            self.settled.notify_waiters();
        }
        taken.then_some((outcomes, notes))
    }

    /// The recording task: writes the outcomes that are due (all of them when claims carry
    /// none or the server flushes; else those given back, or that waited [`CARRY_WAIT`]),
    /// and sleeps until the next is due. Once `stop`ped (the server has gone), it writes
    /// what still waits, as when the server flushes, and ends.
    async fn recording(self: Arc<Self>, stop: CancellationToken) {
        // The records that had arrived at the last tick.
        let mut seen = 0;
        loop {
            let now = Instant::now();
            let stopping = stop.is_cancelled();
            let (at_once, oldest) = {
                let slot = lock(&self.slot);
                let at_once = !self.carries || slot.flushes > 0 || stopping;
                (at_once, slot.waiting.front().map(|q| q.note.queued_at))
            };
            let due = |note: &Note| at_once || note.returned || note.queued_at + CARRY_WAIT <= now;
            if let Some((outcomes, notes)) = self.take(due) {
                let written = self.ledger.record_all(&outcomes).await;
                self.report(&outcomes, written);
                drop(notes);
                lock(&self.slot).writing -= 1;
                self.settled.notify_waiters();
                continue;
            }
            if stopping {
                return;
            }
            let until = match oldest {
                // One waits for a claim: until it is due, unless something is urgent.
                Some(queued_at) => queued_at + CARRY_WAIT,
                None => {
                    // Some: tick again; None: idle. Decided under the lock, awaited after.
                    let tick = {
                        let mut slot = lock(&self.slot);
                        if !slot.waiting.is_empty() {
                            continue;
                        }
                        if slot.arrivals != seen {
                            // Records came (and claims took them) since the last tick:
                            // under load, so tick again rather than be woken per record.
                            seen = slot.arrivals;
                            Some(now + CARRY_WAIT)
                        } else {
                            // None came for a whole tick: idle until one does.
                            slot.idle = true;
                            None
                        }
                    };
                    match tick {
                        Some(until) => until,
                        None => {
                            tokio::select! {
                                () = self.arrived.notified() => {}
                                () = self.urgent.notified() => {}
                                () = stop.cancelled() => {}
                            }
                            continue;
                        }
                    }
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(until) => {}
                () = self.urgent.notified() => {}
                () = stop.cancelled() => {}
            }
        }
    }

    /// Logs what a write of `outcomes` came to.
    fn report(&self, outcomes: &[Outcome], written: Result<Vec<bool>, LedgerError>) {
        match written {
            Ok(recorded) => {
                reachable(&self.down);
                for (outcome, recorded) in outcomes.iter().zip(recorded) {
                    if !recorded {
                        tracing::warn!(round = %outcome.round, "round outcome not recorded: its lease had passed to another request");
                    }
                }
            }
            Err(error) => {
                unreachable(&self.down, &error);
                tracing::warn!(%error, rounds = outcomes.len(), "round outcomes not recorded; their rounds run again once their leases expire");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::Fake;
    use super::super::rounds::{Claimed, DEFAULT_LEASE, DEFAULT_WAIT, Held, Rounds};
    use super::*;
    use crate::machine::ReplayPolicy;

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

    /// Lets the clock move on, a millisecond at a time, until a record has been written alone.
    async fn until_written_alone(ledger: &Fake) {
        for _ in 0..1_000 {
            if !ledger.alone().is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    const LONG: Duration = Duration::from_secs(3600);

    #[tokio::test(start_paused = true)]
    async fn a_record_rides_with_the_next_claim() {
        let ledger = Arc::new(Fake::carrier());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        // Two rounds run at once and end: their records wait together.
        let (a, b) = (held(&rounds, "a").await, held(&rounds, "b").await);
        rounds.record(a, Some(b"a".to_vec()));
        rounds.record(b, Some(b"b".to_vec()));
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
        let ledger = Arc::new(Fake::carrier());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        let a = held(&rounds, "a").await;
        let recorded_at = Instant::now();
        rounds.record(a, Some(b"a".to_vec()));
        // No claim comes: the clock moves on to the recording task's timer.
        until_written_alone(&ledger).await;
        assert_eq!(ledger.alone(), [b"a".to_vec()]);
        let written_at = ledger.first_alone_at().unwrap();
        assert!(
            written_at >= recorded_at + CARRY_WAIT,
            "it waited for a claim first"
        );
        assert!(ledger.carried().is_empty());
    }

    /// Records a claim takes do not go out alone; once the dock stayed empty a whole carry
    /// wait, the recording task idles, and the next record wakes it.
    #[tokio::test(start_paused = true)]
    async fn the_recording_task_idles_when_claims_take_everything_and_wakes_for_the_next() {
        let ledger = Arc::new(Fake::carrier());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        until_parked(&rounds).await;
        held(&rounds, "b").await;
        assert_eq!(ledger.carried(), [vec![b"a".to_vec()]]);
        // The task ticks once more, then idles.
        tokio::time::sleep(CARRY_WAIT * 4).await;
        assert!(lock(&rounds.recorder.dock.slot).idle);
        let c = held(&rounds, "c").await;
        let recorded_at = Instant::now();
        rounds.record(c, Some(b"c".to_vec()));
        assert!(
            !lock(&rounds.recorder.dock.slot).idle,
            "the record wakes it"
        );
        until_written_alone(&ledger).await;
        assert_eq!(ledger.alone(), [b"c".to_vec()]);
        assert!(ledger.first_alone_at().unwrap() >= recorded_at + CARRY_WAIT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_flush_writes_parked_records_at_once() {
        let ledger = Arc::new(Fake::carrier());
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

    #[tokio::test(start_paused = true)]
    async fn a_server_dropped_without_a_flush_still_writes_what_waits() {
        let ledger = Arc::new(Fake::carrier());
        let rounds = Rounds::new(ledger.clone(), DEFAULT_LEASE, DEFAULT_WAIT);
        rounds.record(held(&rounds, "a").await, Some(b"a".to_vec()));
        until_parked(&rounds).await;
        let before = Instant::now();
        drop(rounds);
        for _ in 0..1_000 {
            if !ledger.alone().is_empty() {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(ledger.alone(), [b"a".to_vec()]);
        // At once, not after the carry wait (the paused clock would have moved to it).
        assert_eq!(Instant::now(), before);
    }

    #[tokio::test]
    async fn a_flush_waits_for_the_records_a_claim_carries() {
        let ledger = Arc::new(Fake::carrier());
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
        ledger.open();
        assert!(flush.await.unwrap());
        assert_eq!(ledger.carried(), [vec![b"a".to_vec()]]);
        assert!(ledger.alone().is_empty());
        assert!(claim.await.unwrap());
    }

    #[tokio::test]
    async fn a_claim_dropped_while_carrying_records_gives_them_back() {
        let ledger = Arc::new(Fake::carrier());
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
        let ledger = Arc::new(Fake::carrier());
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
