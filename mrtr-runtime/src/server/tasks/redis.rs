//! The task store shared by every instance, in Redis.

use std::time::Duration;

use futures::future::BoxFuture;
use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

use super::store::{StoredTask, TaskStore, TaskStoreError};

/// A task store in Redis (feature `redis`): any instance answers `tasks/get`,
/// `tasks/update` and `tasks/cancel` for a task another instance created, and resumes its
/// machine when its answers arrive.
///
/// Each task is one hash, `<prefix>task:<id>` (version, expiry, body), expiring with the
/// task; a sorted set `<prefix>tasks` indexes the unexpired ones for the cap on live tasks.
/// Creating and replacing are Lua scripts, so each is atomic.
///
/// ```no_run
/// use mrtr_runtime::server::McpServer;
/// use mrtr_runtime::server::tasks::RedisTaskStore;
///
/// let store = RedisTaskStore::open("redis://127.0.0.1:6379/").unwrap();
/// let server = McpServer::builder("reports").task_store(store).build().unwrap();
/// # let _ = server;
/// ```
pub struct RedisTaskStore {
    client: redis::Client,
    connection: OnceCell<ConnectionManager>,
    prefix: String,
    timeout: Duration,
    create: Script,
    replace: Script,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("server", &self.client.get_connection_info().addr())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// KEYS: the task, the index. ARGV: id, version, expiry (Unix ms), body, cap, now (Unix ms).
const CREATE: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[6])
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
  return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'e', ARGV[3], 'b', ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
"#;

/// KEYS: the task. ARGV: expected version, new version, body.
const REPLACE: &str = r#"
local version = redis.call('HGET', KEYS[1], 'v')
if not version or version ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'b', ARGV[3])
return 1
"#;

impl RedisTaskStore {
    /// A store on the Redis server at `url`. Only parses the URL: the connection is made on
    /// first use.
    ///
    /// ```
    /// use mrtr_runtime::server::tasks::RedisTaskStore;
    /// assert!(RedisTaskStore::open("redis://127.0.0.1:6379/").is_ok());
    /// assert!(RedisTaskStore::open("not a url").is_err());
    /// ```
    pub fn open(url: &str) -> Result<Self, TaskStoreError> {
        let client = redis::Client::open(url)
            .map_err(|e| TaskStoreError::new(format!("bad Redis URL `{url}`: {e}")))?;
        Ok(RedisTaskStore {
            client,
            connection: OnceCell::new(),
            prefix: "mrtr:".to_owned(),
            timeout: Duration::from_secs(1),
            create: Script::new(CREATE),
            replace: Script::new(REPLACE),
        })
    }

    /// Prefixes every key (default `mrtr:`), to share one Redis database between servers.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::RedisTaskStore;
    /// let store = RedisTaskStore::open("redis://127.0.0.1/").unwrap().with_prefix("reports:");
    /// # let _ = store;
    /// ```
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one command may take, connecting included (default 1 s).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use mrtr_runtime::server::tasks::RedisTaskStore;
    /// let store = RedisTaskStore::open("redis://127.0.0.1/").unwrap().with_timeout(Duration::from_millis(300));
    /// # let _ = store;
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}task:{id}", self.prefix)
    }

    async fn connection(&self) -> Result<ConnectionManager, TaskStoreError> {
        self.connection
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(self.timeout))
                    .set_response_timeout(Some(self.timeout))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(500));
                ConnectionManager::new_lazy_with_config(self.client.clone(), config).map_err(|e| {
                    TaskStoreError::new(format!("cannot set up the Redis connection: {e}"))
                })
            })
            .await
            .cloned()
    }

    async fn within<T>(
        &self,
        request: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, TaskStoreError> {
        tokio::time::timeout(self.timeout, request)
            .await
            .map_err(|_| {
                TaskStoreError::new(format!("Redis did not answer within {:?}", self.timeout))
            })?
            .map_err(|e| TaskStoreError::new(format!("Redis: {e}")))
    }
}

impl TaskStore for RedisTaskStore {
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        max_live: usize,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            let mut invocation = self.create.key(self.key(&task.id));
            invocation
                .key(format!("{}tasks", self.prefix))
                .arg(&task.id)
                .arg(task.version)
                .arg(task.expires_at_ms)
                .arg(&task.body)
                .arg(max_live)
                .arg(now_ms);
            let created: i64 = self
                .within(invocation.invoke_async(&mut connection))
                .await?;
            Ok(created == 1)
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            let mut command = redis::cmd("HMGET");
            command.arg(self.key(id)).arg("v").arg("e").arg("b");
            let (version, expires, body): (Option<u64>, Option<u64>, Option<Vec<u8>>) =
                self.within(command.query_async(&mut connection)).await?;
            let (Some(version), Some(expires_at_ms), Some(body)) = (version, expires, body) else {
                return Ok(None);
            };
            Ok((expires_at_ms > now_ms).then(|| StoredTask {
                id: id.to_owned(),
                version,
                expires_at_ms,
                body,
            }))
        })
    }

    fn replace<'a>(
        &'a self,
        task: &'a StoredTask,
        expected_version: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            let mut invocation = self.replace.key(self.key(&task.id));
            invocation
                .arg(expected_version)
                .arg(task.version)
                .arg(&task.body);
            let replaced: i64 = self
                .within(invocation.invoke_async(&mut connection))
                .await?;
            Ok(replaced == 1)
        })
    }
}
