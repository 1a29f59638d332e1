//! The in-process task store.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;

use super::store::{StoredTask, TaskStore, TaskStoreError};

/// Tasks in this process's memory: for one instance (and tests). Expired tasks are dropped
/// when a new task is created.
///
/// ```
/// use mrtr_runtime::server::tasks::{MemoryTaskStore, StoredTask, TaskStore};
/// let store = MemoryTaskStore::new();
/// let task = StoredTask { id: "t".into(), version: 1, expires_at_ms: 2_000, body: vec![] };
/// let created = futures::executor::block_on(store.create(&task, 10, 1_000)).unwrap();
/// assert!(created);
/// let loaded = futures::executor::block_on(store.load("t", 1_500)).unwrap();
/// assert_eq!(loaded, Some(task));
/// assert_eq!(futures::executor::block_on(store.load("t", 2_001)).unwrap(), None);
/// ```
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, StoredTask>>,
}

impl MemoryTaskStore {
    /// An empty store.
    ///
    /// ```
    /// let _ = mrtr_runtime::server::tasks::MemoryTaskStore::new();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredTask>> {
        // A panic while holding the lock leaves the map consistent (every write is one
        // insert), so a poisoned lock is still usable.
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        max_live: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let mut tasks = self.tasks();
        tasks.retain(|_, stored| stored.expires_at_ms > now_ms);
        let created = tasks.len() < max_live && !tasks.contains_key(&task.id);
        if created {
            tasks.insert(task.id.clone(), task.clone());
        }
        Box::pin(std::future::ready(Ok(created)))
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>> {
        let found = self
            .tasks()
            .get(id)
            .filter(|stored| stored.expires_at_ms > now_ms)
            .cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn replace<'a>(
        &'a self,
        task: &'a StoredTask,
        expected_version: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let mut tasks = self.tasks();
        let replaced = match tasks.get_mut(&task.id) {
            Some(stored) if stored.version == expected_version => {
                *stored = task.clone();
                true
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(replaced)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, version: u64, expires_at_ms: u64) -> StoredTask {
        StoredTask {
            id: id.into(),
            version,
            expires_at_ms,
            body: vec![version as u8],
        }
    }

    #[tokio::test]
    async fn the_cap_counts_unexpired_tasks_only() {
        let store = MemoryTaskStore::new();
        assert!(store.create(&task("a", 1, 100), 2, 0).await.unwrap());
        assert!(store.create(&task("b", 1, 1000), 2, 0).await.unwrap());
        assert!(!store.create(&task("c", 1, 1000), 2, 50).await.unwrap());
        // `a` expired at 100: its slot is free again.
        assert!(store.create(&task("c", 1, 1000), 2, 150).await.unwrap());
    }

    #[tokio::test]
    async fn replace_is_a_compare_and_swap_on_the_version() {
        let store = MemoryTaskStore::new();
        assert!(store.create(&task("a", 1, 1000), 5, 0).await.unwrap());
        assert!(store.replace(&task("a", 2, 1000), 1).await.unwrap());
        assert!(!store.replace(&task("a", 3, 1000), 1).await.unwrap());
        assert_eq!(store.load("a", 0).await.unwrap().unwrap().version, 2);
        assert!(!store.replace(&task("missing", 2, 1000), 1).await.unwrap());
    }
}
