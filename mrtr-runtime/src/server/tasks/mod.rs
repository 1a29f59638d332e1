//! Persistent tools: the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! A tool marked `#[mrtr::tool(task = "optional")]` (or `"required"`) keeps its
//! straight-line body, but for a client that declares the extension in the request's
//! `_meta` its work continues in the background: `tools/call` answers a `CreateTaskResult`
//! (`resultType: "task"`), and each later `ask!`/`sample!`/`roots!` parks the task in
//! `input_required` with its `inputRequests`, surfaced by `tasks/get` and answered with
//! `tasks/update`. `tasks/cancel` ends it. With `task_after = N`, the first `N` rounds are
//! ordinary MRTR rounds answered before the task is created, as the extension recommends.
//! A client without the extension gets the ephemeral MRTR behaviour of the same tool (or
//! `-32021` when the task is `"required"`).
//!
//! Between suspensions a task is its machine's encoded state plus the questions it asked,
//! held in a [`TaskStore`]: [`MemoryTaskStore`] by default, `RedisTaskStore` (feature
//! `redis`) so any instance answers `tasks/get` and `tasks/update` for any task. Task ids
//! are 128 random bits and bound to the principal that created the task: another principal
//! gets the same `-32602` as for an id that never existed.
//!
//! ```
//! use std::time::Duration;
//! use mrtr_runtime::server::McpServer;
//! use mrtr_runtime::server::tasks::{MemoryTaskStore, TaskSettings};
//! use mrtr_runtime::token::KeyRing;
//!
//! let server = McpServer::builder("reports")
//!     .keys(KeyRing::generate_process_local().unwrap())
//!     .task_store(MemoryTaskStore::new())
//!     .task_settings(TaskSettings::default().ttl(Duration::from_secs(3600)).max_live_tasks(500))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

mod memory;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
mod redis;
mod runner;

use std::time::Duration;

use futures::future::BoxFuture;

pub use memory::MemoryTaskStore;
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;
pub(crate) use runner::Tasks;

pub use crate::machine::TaskSupport;

/// Lifetimes and limits of tasks.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::server::tasks::TaskSettings;
/// let settings = TaskSettings::default().ttl(Duration::from_secs(60)).max_live_tasks(10);
/// assert_eq!(settings.ttl_ms(), 60_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSettings {
    ttl: Duration,
    max_live: usize,
    poll_interval: Duration,
    cancel_check: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            ttl: Duration::from_secs(3600),
            max_live: 1000,
            poll_interval: Duration::from_millis(500),
            cancel_check: Duration::from_secs(1),
        }
    }
}

impl TaskSettings {
    /// How long a task stays readable after it is created (`ttlMs`, default one hour); it is
    /// discarded afterwards, finished or not.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().ttl(std::time::Duration::from_secs(5));
    /// assert_eq!(s.ttl_ms(), 5000);
    /// ```
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The most unexpired tasks (running, waiting or finished) the store may hold for this
    /// server (default 1000); past it `tools/call` answers the retryable `-32053`.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_live_tasks(3).max_live(), 3);
    /// ```
    pub fn max_live_tasks(mut self, max: usize) -> Self {
        self.max_live = max;
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`, default 500 ms).
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().poll_interval(std::time::Duration::from_millis(100));
    /// assert_eq!(s.poll_interval_ms(), 100);
    /// ```
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How often a running task looks in the store for a `tasks/cancel` served by another
    /// instance (default 1 s; a cancel served by this instance stops it at once).
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().cancel_check(std::time::Duration::from_millis(200));
    /// # let _ = s;
    /// ```
    pub fn cancel_check(mut self, interval: Duration) -> Self {
        self.cancel_check = interval.max(Duration::from_millis(10));
        self
    }

    /// The TTL in milliseconds.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().ttl_ms(), 3_600_000);
    /// ```
    pub fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// The cap on live tasks.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_live(), 1000);
    /// ```
    pub fn max_live(&self) -> usize {
        self.max_live
    }

    /// The suggested polling interval in milliseconds.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().poll_interval_ms(), 500);
    /// ```
    pub fn poll_interval_ms(&self) -> u64 {
        u64::try_from(self.poll_interval.as_millis()).unwrap_or(u64::MAX)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_keep_what_they_are_given_within_their_floors() {
        let settings = TaskSettings::default()
            .ttl(Duration::from_secs(5))
            .max_live_tasks(3)
            .poll_interval(Duration::from_millis(100))
            .cancel_check(Duration::from_millis(200));
        assert_eq!(settings.ttl_ms(), 5_000);
        assert_eq!(settings.max_live(), 3);
        assert_eq!(settings.poll_interval_ms(), 100);
        assert_eq!(settings.cancel_check, Duration::from_millis(200));
        // Zero would mean "expired at once" or a busy loop: each has a floor.
        let floors = TaskSettings::default()
            .ttl(Duration::ZERO)
            .poll_interval(Duration::ZERO)
            .cancel_check(Duration::ZERO);
        assert_eq!(floors.ttl_ms(), 1);
        assert_eq!(floors.poll_interval_ms(), 1);
        assert_eq!(floors.cancel_check, Duration::from_millis(10));
        let defaults = TaskSettings::default();
        assert_eq!(
            (
                defaults.ttl_ms(),
                defaults.max_live(),
                defaults.poll_interval_ms()
            ),
            (3_600_000, 1000, 500)
        );
        assert_eq!(defaults.cancel_check, Duration::from_secs(1));
    }
}
