//! The contract of a task store: what a task is between requests ([`StoredTask`]) and
//! the compare-and-swap operations every store implements ([`TaskStore`]).

use futures::future::BoxFuture;

/// One task as a store holds it: an opaque body, versioned for compare-and-swap.
///
/// ```
/// use mrtr_runtime::server::tasks::StoredTask;
/// let task = StoredTask { id: "t1".into(), version: 1, expires_at_ms: 1_900_000_000_000, body: b"{}".to_vec() };
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

/// Where tasks live between requests; shared by every instance that serves the same tasks.
///
/// Every write is a compare-and-swap on [`StoredTask::version`], so two instances updating
/// one task (an answer on one, a cancel on the other) never lose each other's write.
///
/// ```
/// use mrtr_runtime::server::tasks::{MemoryTaskStore, TaskStore};
/// fn takes(_: impl TaskStore) {}
/// takes(MemoryTaskStore::new());
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task unless `max_live` unexpired tasks exist already (`Ok(false)`).
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        max_live: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>>;

    /// The task, unless it does not exist or expired.
    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>>;

    /// Writes `task` over the stored one if that one is still at `expected_version`
    /// (`Ok(false)` otherwise, or when it is gone).
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
        max_live: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        (**self).create(task, max_live, now_ms)
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
