//! Legacy Streamable HTTP sessions (clients that open with `initialize`: 2025-11-25 and
//! older), bounded and bound to the caller that opened them.
//!
//! rmcp's `LocalSessionManager` keeps every session until it idles out, for anyone who
//! knows its id, and logs the id at INFO. [`Sessions`] replaces it:
//!
//! - **Ids.** A session id is 128 random bits in hex, prefixed with the node's name
//!   (`n1.…`) when [`HttpServing::session_node`](super::HttpServing::session_node) is set,
//!   so a balancer can send a session's requests back to the node that holds it. rmcp
//!   only ever sees a short hash of the id ([`tag`]), so its logs (INFO "create new
//!   session", the session span) never carry the id a client would need.
//! - **Owner.** Each session remembers the principal that opened it (the server's
//!   principal resolver, run by the gate); a request from anyone else is answered as for
//!   an unknown session (see `gate.rs`).
//! - **Caps.** Live sessions are counted in total and per identified principal; an
//!   `initialize` past either cap is refused before a session exists.
//! - **Memory.** A session is rmcp's session worker and MCP service task with their
//!   channels (each tokio channel allocates its first block of 32 slots up front), about
//!   52 KiB of RSS while idle, as with rmcp's own manager; ours adds an entry of a few dozen
//!   bytes. When sessions end, the allocator is asked to give the freed pages back
//!   ([`trim`]).
//!
//! Long-lived streams (GET streams and pending legacy calls) have their own budget,
//! [`Streams`], so they never hold the connection slots short requests need.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    EventId, LocalSessionHandle, LocalSessionWorker, SessionConfig, SessionError,
    create_local_session,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use sha2::{Digest, Sha256};
use tokio_stream_shim::ReceiverStream;

/// Who opened a session: the principal resolver's answer (`None`: an anonymous caller).
pub(super) type Owner = Option<Arc<str>>;

/// The session bounds (see the knobs on [`HttpServing`](super::HttpServing)).
#[derive(Debug, Clone)]
pub(super) struct SessionLimits {
    pub(super) max_sessions: usize,
    pub(super) max_sessions_per_principal: usize,
    pub(super) idle_timeout: Duration,
    pub(super) node: Option<String>,
}

/// Why a session or stream was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The server-wide cap (`max_sessions` or `max_streams`) is reached: HTTP 503.
    Server { knob: &'static str, limit: usize },
    /// The caller's own cap is reached: HTTP 429.
    Caller { knob: &'static str, limit: usize },
}

/// Counts per key plus a total, each capped.
#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_key: HashMap<Arc<str>, usize>,
}

impl Counts {
    fn add(&mut self, key: Option<&Arc<str>>) {
        self.total += 1;
        if let Some(key) = key {
            *self.per_key.entry(key.clone()).or_default() += 1;
        }
    }

    fn remove(&mut self, key: Option<&Arc<str>>) {
        self.total = self.total.saturating_sub(1);
        if let Some(key) = key
            && let Some(count) = self.per_key.get_mut(key)
        {
            *count -= 1;
            if *count == 0 {
                self.per_key.remove(key);
            }
        }
    }

    fn of(&self, key: Option<&Arc<str>>) -> usize {
        key.and_then(|key| self.per_key.get(key))
            .copied()
            .unwrap_or(0)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A place counted against the session caps, from admission until the session ends.
pub(super) struct Seat {
    counts: Arc<Mutex<Counts>>,
    owner: Owner,
}

impl Drop for Seat {
    fn drop(&mut self) {
        lock(&self.counts).remove(self.owner.as_ref());
    }
}

tokio::task_local! {
    /// The seat an `initialize` was admitted with, handed from the gate to
    /// [`Sessions::create_session`] (which rmcp calls within the same request future).
    static OPENING: RefCell<Option<Seat>>;
}

/// Runs `future` (the `initialize` request through rmcp) with `seat` for the session it
/// creates; the seat is released if no session is created.
pub(super) async fn opening<F: Future>(seat: Seat, future: F) -> F::Output {
    OPENING.scope(RefCell::new(Some(seat)), future).await
}

struct Entry {
    handle: LocalSessionHandle,
    owner: Owner,
    _seat: Seat,
}

/// Sessions closed between two allocator trims.
const TRIM_EVERY: usize = 256;

/// The session manager given to rmcp's `StreamableHttpService`.
pub(super) struct Sessions {
    config: SessionConfig,
    limits: SessionLimits,
    live: Mutex<HashMap<SessionId, Entry>>,
    counts: Arc<Mutex<Counts>>,
    closed_since_trim: AtomicUsize,
}

/// What a session operation can fail with; never names the session id (rmcp logs these).
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionsError {
    #[error("session not found")]
    NotFound,
    #[error("session error: {0}")]
    Session(#[from] SessionError),
    #[error("invalid Last-Event-ID")]
    EventId,
}

impl Sessions {
    pub(super) fn new(limits: SessionLimits) -> Self {
        let mut config = SessionConfig::default();
        config.keep_alive = Some(limits.idle_timeout);
        // A session that never sends `initialize` after being created is gone sooner.
        config.init_timeout = Some(limits.idle_timeout.min(SessionConfig::DEFAULT_INIT_TIMEOUT));
        Sessions {
            config,
            limits,
            live: Mutex::new(HashMap::new()),
            counts: Arc::new(Mutex::new(Counts::default())),
            closed_since_trim: AtomicUsize::new(0),
        }
    }

    /// Counts a new session for `owner`, or says which cap refuses it.
    pub(super) fn admit(&self, owner: Owner) -> Result<Seat, Refusal> {
        let mut counts = lock(&self.counts);
        if counts.total >= self.limits.max_sessions {
            return Err(Refusal::Server {
                knob: "max_sessions",
                limit: self.limits.max_sessions,
            });
        }
        if owner.is_some() && counts.of(owner.as_ref()) >= self.limits.max_sessions_per_principal {
            return Err(Refusal::Caller {
                knob: "max_sessions_per_principal",
                limit: self.limits.max_sessions_per_principal,
            });
        }
        counts.add(owner.as_ref());
        drop(counts);
        Ok(Seat {
            counts: self.counts.clone(),
            owner,
        })
    }

    /// The owner of a live session; `None` when there is no such session.
    pub(super) fn owner_of(&self, id: &str) -> Option<Owner> {
        lock(&self.live).get(id).map(|entry| entry.owner.clone())
    }

    /// How many sessions are live.
    pub(super) fn live(&self) -> usize {
        lock(&self.live).len()
    }

    fn new_id(&self) -> SessionId {
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).expect("the OS random source works");
        let hex = hex(&random);
        match &self.limits.node {
            Some(node) => format!("{node}.{hex}").into(),
            None => hex.into(),
        }
    }

    fn handle(&self, id: &SessionId) -> Result<LocalSessionHandle, SessionsError> {
        lock(&self.live)
            .get(id)
            .map(|entry| entry.handle.clone())
            .ok_or(SessionsError::NotFound)
    }

    /// Removes a session (its seat goes back) and returns whether it was there.
    fn forget(&self, id: &SessionId) -> Option<Entry> {
        let (entry, live_now) = {
            let mut live = lock(&self.live);
            let entry = live.remove(id);
            (entry, live.len())
        };
        if entry.is_some() {
            self.ended(live_now);
        }
        entry
    }

    /// A session whose worker has exited (idle timeout, shutdown) is forgotten at once,
    /// before rmcp's own cleanup gets to it, so the next request on it gets `404`.
    fn failed(&self, id: &SessionId, error: SessionError) -> SessionsError {
        if matches!(error, SessionError::SessionServiceTerminated) {
            drop(self.forget(id));
        }
        SessionsError::Session(error)
    }

    /// After a session ended: every [`TRIM_EVERY`] sessions, or when none is left, ask the
    /// allocator to return freed pages.
    fn ended(&self, live_now: usize) {
        let closed = self.closed_since_trim.fetch_add(1, Ordering::Relaxed) + 1;
        if closed >= TRIM_EVERY || live_now == 0 {
            self.closed_since_trim.store(0, Ordering::Relaxed);
            trim();
        }
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let seat = OPENING
            .try_with(|seat| seat.borrow_mut().take())
            .ok()
            .flatten()
            // Reached without the gate (it always admits first): counted, not capped.
            .unwrap_or_else(|| {
                lock(&self.counts).add(None);
                Seat {
                    counts: self.counts.clone(),
                    owner: None,
                }
            });
        let id = self.new_id();
        // rmcp logs the id it is given (INFO "create new session"): give it the tag.
        let (handle, worker) = create_local_session(tag(&id), self.config.clone());
        let owner = seat.owner.clone();
        lock(&self.live).insert(
            id.clone(),
            Entry {
                handle,
                owner,
                _seat: seat,
            },
        );
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.handle(id)?
            .initialize(message)
            .await
            .map_err(|error| self.failed(id, error))
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(lock(&self.live).contains_key(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Some(entry) = self.forget(id) {
            // An error here means the worker already exited: nothing left to close.
            let _ = entry.handle.close().await;
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let handle = self.handle(id)?;
        let receiver = handle
            .establish_request_wise_channel()
            .await
            .map_err(|error| self.failed(id, error))?;
        handle
            .push_message(message, receiver.http_request_id)
            .await
            .map_err(|error| self.failed(id, error))?;
        Ok(ReceiverStream(receiver.inner))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.handle(id)?
            .push_message(message, None)
            .await
            .map_err(|error| self.failed(id, error))?;
        Ok(())
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let receiver = self
            .handle(id)?
            .establish_common_channel()
            .await
            .map_err(|error| self.failed(id, error))?;
        Ok(ReceiverStream(receiver.inner))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let event_id: EventId = after_seen(&last_event_id)
            .parse()
            .map_err(|_| SessionsError::EventId)?;
        let receiver = self
            .handle(id)?
            .resume(event_id)
            .await
            .map_err(|error| self.failed(id, error))?;
        Ok(ReceiverStream(receiver.inner))
    }
}

/// The event id to resume from so that the stream starts *after* the event the client
/// last saw, as SSE's `Last-Event-ID` means. rmcp 3.11's session worker replays from the
/// given index inclusive, so a resumed stream delivered the last event again — for a
/// cancelled legacy call, the question it had already asked. Event ids are
/// `<index>` or `<index>/<request id>`; anything else is passed on as it is (and refused
/// by rmcp's parser). Upstream fix: `CachedTx::sync` should skip the event at `index`.
fn after_seen(last_event_id: &str) -> String {
    let (index, rest) = match last_event_id.split_once('/') {
        Some((index, rest)) => (index, Some(rest)),
        None => (last_event_id, None),
    };
    let Some(next) = index.parse::<usize>().ok().and_then(|i| i.checked_add(1)) else {
        return last_event_id.to_owned();
    };
    match rest {
        Some(rest) => format!("{next}/{rest}"),
        None => next.to_string(),
    }
}

/// What rmcp and our logs may show of a session id: 12 hex digits of its SHA-256, enough
/// to correlate lines, useless to resume the session.
pub(super) fn tag(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    hex(&digest[..6])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Asks glibc to return freed heap pages to the system; elsewhere nothing to do. Runs off
/// the async threads. Without it, after 5,000 abandoned sessions expired the process kept
/// its peak (282 MB, baseline 31 MB); with it, it went back to 23 MB (baseline 22 MB;
/// `abandoned_sessions_give_their_memory_back` in `tests/legacy_sessions.rs`).
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(|| {
                // SAFETY: malloc_trim only walks the allocator's own free lists.
                #[allow(unsafe_code)]
                unsafe {
                    libc::malloc_trim(0);
                }
            });
        }
    }
}

/// `tokio_stream::wrappers::ReceiverStream` without the dependency.
mod tokio_stream_shim {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    pub(super) struct ReceiverStream<T>(pub(super) tokio::sync::mpsc::Receiver<T>);

    impl<T> futures::Stream for ReceiverStream<T> {
        type Item = T;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
            self.0.poll_recv(cx)
        }
    }
}

/// The budget of long-lived streams: GET streams and pending legacy calls, counted apart
/// from the connection slots short requests use.
pub(super) struct Streams {
    max_total: usize,
    max_per_session: usize,
    max_per_principal: usize,
    state: Arc<Mutex<StreamCounts>>,
}

#[derive(Debug, Default)]
struct StreamCounts {
    sessions: Counts,
    principals: Counts,
}

/// One stream's place in the budget, released when the stream's body is dropped.
pub(super) struct StreamPermit {
    state: Arc<Mutex<StreamCounts>>,
    session: Arc<str>,
    owner: Owner,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        state.sessions.remove(Some(&self.session));
        state.principals.remove(self.owner.as_ref());
    }
}

impl Streams {
    pub(super) fn new(max_total: usize, max_per_session: usize, max_per_principal: usize) -> Self {
        Streams {
            max_total,
            max_per_session,
            max_per_principal,
            state: Arc::default(),
        }
    }

    /// How many streams are open.
    pub(super) fn open(&self) -> usize {
        lock(&self.state).sessions.total
    }

    /// A place for one more stream on `session`, opened by `owner`.
    pub(super) fn admit(&self, session: &str, owner: Owner) -> Result<StreamPermit, Refusal> {
        let session: Arc<str> = session.into();
        let mut state = lock(&self.state);
        if state.sessions.total >= self.max_total {
            return Err(Refusal::Server {
                knob: "max_streams",
                limit: self.max_total,
            });
        }
        if state.sessions.of(Some(&session)) >= self.max_per_session {
            return Err(Refusal::Caller {
                knob: "max_streams_per_session",
                limit: self.max_per_session,
            });
        }
        if owner.is_some() && state.principals.of(owner.as_ref()) >= self.max_per_principal {
            return Err(Refusal::Caller {
                knob: "max_streams_per_principal",
                limit: self.max_per_principal,
            });
        }
        state.sessions.add(Some(&session));
        state.principals.add(owner.as_ref());
        drop(state);
        Ok(StreamPermit {
            state: self.state.clone(),
            session,
            owner,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> SessionLimits {
        SessionLimits {
            max_sessions: 3,
            max_sessions_per_principal: 2,
            idle_timeout: Duration::from_secs(60),
            node: Some("n2".into()),
        }
    }

    #[test]
    fn sessions_are_capped_in_total_and_per_principal_and_seats_come_back() {
        let sessions = Sessions::new(limits());
        let alice: Owner = Some("alice".into());
        let a1 = sessions.admit(alice.clone()).unwrap();
        let _a2 = sessions.admit(alice.clone()).unwrap();
        assert_eq!(
            sessions.admit(alice.clone()).err(),
            Some(Refusal::Caller {
                knob: "max_sessions_per_principal",
                limit: 2
            })
        );
        let _anonymous = sessions.admit(None).unwrap();
        assert_eq!(
            sessions.admit(Some("bob".into())).err(),
            Some(Refusal::Server {
                knob: "max_sessions",
                limit: 3
            })
        );
        drop(a1);
        assert!(sessions.admit(Some("bob".into())).is_ok());
    }

    #[test]
    fn a_stream_resumes_after_the_last_event_seen() {
        assert_eq!(after_seen("0"), "1");
        assert_eq!(after_seen("4/17"), "5/17");
        assert_eq!(after_seen("x/17"), "x/17");
        assert_eq!(after_seen(&usize::MAX.to_string()), usize::MAX.to_string());
    }

    #[test]
    fn ids_name_their_node_and_tags_hide_them() {
        let sessions = Sessions::new(limits());
        let id = sessions.new_id();
        let (node, random) = id.split_once('.').unwrap();
        assert_eq!(node, "n2");
        assert_eq!(random.len(), 32);
        assert_ne!(sessions.new_id(), id);
        let tag = tag(&id);
        assert_eq!(tag.len(), 12);
        assert!(!id.contains(&tag));
    }

    #[test]
    fn streams_are_capped_per_session_per_principal_and_in_total() {
        let streams = Streams::new(4, 2, 3);
        let alice: Owner = Some("alice".into());
        let s1 = streams.admit("s1", alice.clone()).unwrap();
        let _s1b = streams.admit("s1", alice.clone()).unwrap();
        assert_eq!(
            streams.admit("s1", alice.clone()).err(),
            Some(Refusal::Caller {
                knob: "max_streams_per_session",
                limit: 2
            })
        );
        let _s2 = streams.admit("s2", alice.clone()).unwrap();
        assert_eq!(
            streams.admit("s3", alice.clone()).err(),
            Some(Refusal::Caller {
                knob: "max_streams_per_principal",
                limit: 3
            })
        );
        let _anonymous = streams.admit("s4", None).unwrap();
        assert_eq!(
            streams.admit("s5", None).err(),
            Some(Refusal::Server {
                knob: "max_streams",
                limit: 4
            })
        );
        drop(s1);
        assert!(streams.admit("s1", None).is_ok());
    }
}
