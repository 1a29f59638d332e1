//! The contract of a task store: what a task is between requests ([`StoredTask`]), what
//! creating one is held to ([`Admission`], [`Created`]), and the compare-and-swap
//! operations every store implements ([`TaskStore`]).

use futures::future::BoxFuture;

/// One task as a store holds it: an opaque body, versioned for compare-and-swap.
///
/// ```
/// use mrtr_runtime::server::tasks::StoredTask;
/// let task = StoredTask {
///     id: "t1".into(),
///     version: 1,
///     expires_at_ms: 1_900_000_000_000,
///     live: true,
///     body: b"{}".to_vec(),
/// };
/// assert_eq!(task.version, 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTask {
    /// The task id (128 random bits, hex).
    pub id: String,
    /// Incremented by every write; [`TaskStore::replace`] only writes over this version.
    pub version: u64,
    /// Unix milliseconds after which the task is gone.
    pub expires_at_ms: u64,
    /// Whether the task counts against the caps on live tasks: `true` until it ends
    /// (completed, failed or cancelled). An ended task is kept (and loads) until it
    /// expires, but no longer holds a slot; once written `false` it never counts again.
    pub live: bool,
    /// The task as the server encodes it (status, questions, machine state, result).
    pub body: Vec<u8>,
}

/// The task store could not be reached or answered nonsense.
///
/// ```
/// use mrtr_runtime::server::tasks::TaskStoreError;
/// assert!(TaskStoreError::new("refused").to_string().contains("refused"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("task store: {detail}")]
pub struct TaskStoreError {
    detail: String,
}

impl TaskStoreError {
    /// An error with a description.
    ///
    /// ```
    /// let _ = mrtr_runtime::server::tasks::TaskStoreError::new("timeout");
    /// ```
    pub fn new(detail: impl Into<String>) -> Self {
        TaskStoreError {
            detail: detail.into(),
        }
    }
}

/// What creating a task is held to: the caps on live tasks (the server's and its owner's),
/// how many records the store keeps, and the round the task continues (so a re-sent round
/// finds its task instead of creating another).
///
/// ```
/// use mrtr_runtime::server::tasks::Admission;
/// let admission = Admission {
///     owner: Some("a1b2".into()),
///     round: None,
///     max_live: 1000,
///     max_live_per_owner: 100,
///     max_kept: 4000,
/// };
/// assert_eq!(admission.max_live_per_owner, 100);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    /// Whose quota the task counts against (a digest of the principal, or of an anonymous
    /// caller's client address, hex); `None` for an anonymous caller without a counted
    /// address, held to [`max_live`](Self::max_live) only.
    pub owner: Option<String>,
    /// The id of the round that handed off to this task (hex), when it came from a
    /// `requestState`: while a task created for this round is unexpired, creating another
    /// for it answers [`Created::Existing`].
    pub round: Option<String>,
    /// The most live tasks the store may hold.
    pub max_live: usize,
    /// The most live tasks one owner may hold.
    pub max_live_per_owner: usize,
    /// The most tasks, live or ended, the store keeps; past it the ended tasks that expire
    /// first are dropped early to make room.
    pub max_kept: usize,
}

/// What [`TaskStore::create`] did.
///
/// ```
/// use mrtr_runtime::server::tasks::Created;
/// assert_ne!(Created::Created, Created::Full);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// The task is stored.
    Created,
    /// A task with this id exists already; nothing was stored.
    Duplicate,
    /// An unexpired task was created for [`Admission::round`] already: its id. Nothing
    /// was stored.
    Existing(String),
    /// [`Admission::max_live`] live tasks exist already.
    Full,
    /// The owner holds [`Admission::max_live_per_owner`] live tasks already.
    OwnerFull,
}

/// Where tasks live between requests; shared by every instance that serves the same tasks.
///
/// Every write is a compare-and-swap on [`StoredTask::version`], so two instances updating
/// one task (an answer on one, a cancel on the other) never lose each other's write.
/// Creating checks the caps, the round and the id and stores the task in one atomic step.
///
/// ```
/// use mrtr_runtime::server::tasks::{MemoryTaskStore, TaskStore};
/// fn takes(_: impl TaskStore) {}
/// takes(MemoryTaskStore::new());
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, unless a task was created for its round already, its id is
    /// taken, or a cap of `admission` is reached (see [`Created`]). Only unexpired tasks
    /// with [`StoredTask::live`] count against the caps.
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        admission: &'a Admission,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Created, TaskStoreError>>;

    /// The task, unless it does not exist or expired.
    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>>;

    /// Writes `task` over the stored one if that one is still at `expected_version`
    /// (`Ok(false)` otherwise, or when it is gone). Writing [`StoredTask::live`] `false`
    /// frees the task's slot in the same step.
    fn replace<'a>(
        &'a self,
        task: &'a StoredTask,
        expected_version: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>>;
}

impl<S: TaskStore + ?Sized> TaskStore for std::sync::Arc<S> {
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        admission: &'a Admission,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Created, TaskStoreError>> {
        (**self).create(task, admission, now_ms)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>> {
        (**self).load(id, now_ms)
    }
    fn replace<'a>(
        &'a self,
        task: &'a StoredTask,
        expected_version: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        (**self).replace(task, expected_version)
    }
}
