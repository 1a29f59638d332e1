//! The in-process task store.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;

use super::store::{Admission, Created, StoredTask, TaskStore, TaskStoreError};

/// Tasks in this process's memory: for one instance (and tests). Expired tasks are dropped
/// when a new task is created.
///
/// ```
/// use mrtr_runtime::server::tasks::{Admission, Created, MemoryTaskStore, StoredTask, TaskStore};
/// let store = MemoryTaskStore::new();
/// let task = StoredTask { id: "t".into(), version: 1, expires_at_ms: 2_000, live: true, body: vec![] };
/// let admission = Admission {
///     owner: None,
///     round: None,
///     max_live: 10,
///     max_live_per_owner: 10,
///     max_kept: 40,
/// };
/// let created = futures::executor::block_on(store.create(&task, &admission, 1_000)).unwrap();
/// assert_eq!(created, Created::Created);
/// let loaded = futures::executor::block_on(store.load("t", 1_500)).unwrap();
/// assert_eq!(loaded, Some(task));
/// assert_eq!(futures::executor::block_on(store.load("t", 2_001)).unwrap(), None);
/// ```
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Tasks by id, with their owners.
    tasks: HashMap<String, (StoredTask, Option<String>)>,
    /// Task ids by the round that created them (expiring with the task).
    rounds: HashMap<String, String>,
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

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves the maps consistent (every write is one
        // insert or removal of a whole entry), so a poisoned lock is still usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Inner {
    fn create(&mut self, task: &StoredTask, admission: &Admission, now_ms: u64) -> Created {
        self.tasks
            .retain(|_, (stored, _)| stored.expires_at_ms > now_ms);
        let tasks = &self.tasks;
        self.rounds.retain(|_, id| tasks.contains_key(id));
        if let Some(existing) = admission.round.as_ref().and_then(|r| self.rounds.get(r)) {
            return Created::Existing(existing.clone());
        }
        if self.tasks.contains_key(&task.id) {
            return Created::Duplicate;
        }
        let live = self.tasks.values().filter(|(stored, _)| stored.live);
        let (mut all, mut owned) = (0, 0);
        for (_, owner) in live {
            all += 1;
            if owner.is_some() && *owner == admission.owner {
                owned += 1;
            }
        }
        if all >= admission.max_live {
            return Created::Full;
        }
        if admission.owner.is_some() && owned >= admission.max_live_per_owner {
            return Created::OwnerFull;
        }
        // Bounded memory: make room by dropping the ended tasks that expire first.
        let excess = (self.tasks.len() + 1).saturating_sub(admission.max_kept.max(1));
        if excess > 0 {
            let mut ended: Vec<(u64, String)> = self
                .tasks
                .values()
                .filter(|(stored, _)| !stored.live)
                .map(|(stored, _)| (stored.expires_at_ms, stored.id.clone()))
                .collect();
            ended.sort_unstable();
            for (_, id) in ended.into_iter().take(excess) {
                self.tasks.remove(&id);
            }
            let tasks = &self.tasks;
            self.rounds.retain(|_, id| tasks.contains_key(id));
        }
        self.tasks
            .insert(task.id.clone(), (task.clone(), admission.owner.clone()));
        if let Some(round) = &admission.round {
            self.rounds.insert(round.clone(), task.id.clone());
        }
        Created::Created
    }
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        admission: &'a Admission,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Created, TaskStoreError>> {
        let created = self.inner().create(task, admission, now_ms);
        Box::pin(std::future::ready(Ok(created)))
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>> {
        let found = self
            .inner()
            .tasks
            .get(id)
            .map(|(stored, _)| stored)
            .filter(|stored| stored.expires_at_ms > now_ms)
            .cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn replace<'a>(
        &'a self,
        task: &'a StoredTask,
        expected_version: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let mut inner = self.inner();
        let replaced = match inner.tasks.get_mut(&task.id) {
            Some((stored, _)) if stored.version == expected_version => {
                let live = stored.live && task.live;
                *stored = task.clone();
                stored.live = live;
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
            live: true,
            body: vec![version as u8],
        }
    }

    fn admission(owner: Option<&str>, round: Option<&str>, max_live: usize) -> Admission {
        Admission {
            owner: owner.map(str::to_owned),
            round: round.map(str::to_owned),
            max_live,
            max_live_per_owner: 2,
            max_kept: 4,
        }
    }

    #[tokio::test]
    async fn the_cap_counts_unexpired_tasks_only() {
        let store = MemoryTaskStore::new();
        let cap = admission(None, None, 2);
        let create = |t: StoredTask, now| {
            let created = store.inner().create(&t, &cap, now);
            async move { created }
        };
        assert_eq!(create(task("a", 1, 100), 0).await, Created::Created);
        assert_eq!(create(task("b", 1, 1000), 0).await, Created::Created);
        assert_eq!(create(task("c", 1, 1000), 50).await, Created::Full);
        // `a` expired at 100: its slot is free again.
        assert_eq!(create(task("c", 1, 1000), 150).await, Created::Created);
        assert_eq!(create(task("c", 1, 1000), 150).await, Created::Duplicate);
    }

    #[tokio::test]
    async fn owners_have_their_quota_ended_tasks_free_slots_and_rounds_are_unique() {
        let store = MemoryTaskStore::new();
        let alice = admission(Some("alice"), None, 3);
        let bob = admission(Some("bob"), None, 3);
        assert_eq!(
            store.create(&task("a1", 1, 1000), &alice, 0).await.unwrap(),
            Created::Created
        );
        assert_eq!(
            store.create(&task("a2", 1, 1000), &alice, 0).await.unwrap(),
            Created::Created
        );
        assert_eq!(
            store.create(&task("a3", 1, 1000), &alice, 0).await.unwrap(),
            Created::OwnerFull
        );
        assert_eq!(
            store.create(&task("b1", 1, 1000), &bob, 0).await.unwrap(),
            Created::Created
        );
        assert_eq!(
            store.create(&task("b2", 1, 1000), &bob, 0).await.unwrap(),
            Created::Full
        );
        // a1 ends: kept for reads, no longer live, and a write cannot make it live again.
        let mut ended = task("a1", 2, 1000);
        ended.live = false;
        assert!(store.replace(&ended, 1).await.unwrap());
        assert!(store.replace(&task("a1", 3, 1000), 2).await.unwrap());
        assert!(!store.load("a1", 0).await.unwrap().unwrap().live);
        assert_eq!(
            store.create(&task("a3", 1, 1000), &alice, 0).await.unwrap(),
            Created::Created
        );
        // A round creates one task.
        let round = admission(Some("bob"), Some("r1"), 5);
        assert_eq!(
            store.create(&task("b2", 1, 900), &round, 0).await.unwrap(),
            Created::Created
        );
        assert_eq!(
            store.create(&task("b3", 1, 900), &round, 0).await.unwrap(),
            Created::Existing("b2".into())
        );
        // Five records over a limit of four kept: the ended a1 made room, so r1 still
        // finds b2 until b2 expires.
        assert_eq!(store.load("a1", 0).await.unwrap(), None);
        assert_eq!(
            store
                .create(&task("b3", 1, 2000), &round, 950)
                .await
                .unwrap(),
            Created::Created
        );
    }

    #[tokio::test]
    async fn replace_is_a_compare_and_swap_on_the_version() {
        let store = MemoryTaskStore::new();
        let cap = admission(None, None, 5);
        assert_eq!(
            store.create(&task("a", 1, 1000), &cap, 0).await.unwrap(),
            Created::Created
        );
        assert!(store.replace(&task("a", 2, 1000), 1).await.unwrap());
        assert!(!store.replace(&task("a", 3, 1000), 1).await.unwrap());
        assert_eq!(store.load("a", 0).await.unwrap().unwrap().version, 2);
        assert!(!store.replace(&task("missing", 2, 1000), 1).await.unwrap());
    }
}
