//! The task store shared by every instance, in Redis.

use std::time::Duration;

use futures::future::BoxFuture;
use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

use super::store::{Admission, Created, StoredTask, TaskStore, TaskStoreError};

/// A task store in Redis (feature `redis`): any instance answers `tasks/get`,
/// `tasks/update` and `tasks/cancel` for a task another instance created, and resumes its
/// machine when its answers arrive.
///
/// Each task is one hash, `<prefix>task:<id>` (version, expiry, liveness, owner, body),
/// expiring with the task. Sorted sets by expiry index the live tasks (`<prefix>tasks`),
/// each owner's live tasks (`<prefix>tasks:owner:<owner>`) and the ended tasks still kept
/// (`<prefix>tasks:ended`); `<prefix>round:<round id>` names the task a round created.
/// Creating and replacing are Lua scripts, so each is atomic (the scripts name keys from
/// the prefix, so the store wants a single Redis node, not a cluster).
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

/// KEYS: the task, the live index, the owner's live index, the ended index, the round.
/// ARGV: id, version, expiry (Unix ms), body, cap, now (Unix ms), owner ('' for none),
/// owner cap, round ('' for none), most tasks kept, task key prefix, round key prefix.
/// Returns `{code, existing id}`: 1 created, 0 duplicate id, 2 existing round, 3 full,
/// 4 owner full.
const CREATE: &str = r#"
local now = ARGV[6]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if ARGV[7] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
end
if ARGV[9] ~= '' then
  local existing = redis.call('GET', KEYS[5])
  if existing then
    local expiry = redis.call('HGET', ARGV[11] .. existing, 'e')
    if expiry and tonumber(expiry) > tonumber(now) then
      return {2, existing}
    end
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, ''}
end
local live = redis.call('ZCARD', KEYS[2])
if live >= tonumber(ARGV[5]) then
  return {3, ''}
end
if ARGV[7] ~= '' and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[8]) then
  return {4, ''}
end
local excess = live + redis.call('ZCARD', KEYS[4]) + 1 - math.max(tonumber(ARGV[10]), 1)
if excess > 0 then
  local dropped = redis.call('ZPOPMIN', KEYS[4], excess)
  for i = 1, #dropped, 2 do
    local round = redis.call('HGET', ARGV[11] .. dropped[i], 'r')
    if round and round ~= '' then
      redis.call('DEL', ARGV[12] .. round)
    end
    redis.call('DEL', ARGV[11] .. dropped[i])
  end
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'e', ARGV[3], 'l', '1', 'o', ARGV[7], 'r', ARGV[9], 'b', ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
if ARGV[7] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
  if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[3]) - tonumber(now) then
    redis.call('PEXPIREAT', KEYS[3], ARGV[3])
  end
end
if ARGV[9] ~= '' then
  redis.call('SET', KEYS[5], ARGV[1])
  redis.call('PEXPIREAT', KEYS[5], ARGV[3])
end
return {1, ''}
"#;

/// KEYS: the task, the live index, the ended index. ARGV: expected version, new version,
/// body, liveness ('1' or '0'), id, owner index prefix. A task written not live leaves the
/// live indexes for the ended one, at once.
const REPLACE: &str = r#"
local version = redis.call('HGET', KEYS[1], 'v')
if not version or version ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'b', ARGV[3])
if ARGV[4] == '0' and redis.call('HGET', KEYS[1], 'l') ~= '0' then
  redis.call('HSET', KEYS[1], 'l', '0')
  local expiry = redis.call('HGET', KEYS[1], 'e')
  redis.call('ZREM', KEYS[2], ARGV[5])
  local owner = redis.call('HGET', KEYS[1], 'o')
  if owner and owner ~= '' then
    redis.call('ZREM', ARGV[6] .. owner, ARGV[5])
  end
  redis.call('ZADD', KEYS[3], expiry, ARGV[5])
  if redis.call('PTTL', KEYS[3]) < redis.call('PTTL', KEYS[1]) then
    redis.call('PEXPIREAT', KEYS[3], expiry)
  end
end
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
        admission: &'a Admission,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Created, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.connection().await?;
            let owner = admission.owner.as_deref().unwrap_or("");
            let round = admission.round.as_deref().unwrap_or("");
            let mut invocation = self.create.key(self.key(&task.id));
            invocation
                .key(format!("{}tasks", self.prefix))
                .key(format!("{}tasks:owner:{owner}", self.prefix))
                .key(format!("{}tasks:ended", self.prefix))
                .key(format!("{}round:{round}", self.prefix))
                .arg(&task.id)
                .arg(task.version)
                .arg(task.expires_at_ms)
                .arg(&task.body)
                .arg(admission.max_live)
                .arg(now_ms)
                .arg(owner)
                .arg(admission.max_live_per_owner)
                .arg(round)
                .arg(admission.max_kept)
                .arg(self.key(""))
                .arg(format!("{}round:", self.prefix));
            let (code, existing): (i64, String) = self
                .within(invocation.invoke_async(&mut connection))
                .await?;
            Ok(match code {
                1 => Created::Created,
                2 => Created::Existing(existing),
                3 => Created::Full,
                4 => Created::OwnerFull,
                _ => Created::Duplicate,
            })
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
            command
                .arg(self.key(id))
                .arg("v")
                .arg("e")
                .arg("l")
                .arg("b");
            type Fields = (Option<u64>, Option<u64>, Option<String>, Option<Vec<u8>>);
            let (version, expires, live, body): Fields =
                self.within(command.query_async(&mut connection)).await?;
            let (Some(version), Some(expires_at_ms), Some(body)) = (version, expires, body) else {
                return Ok(None);
            };
            Ok((expires_at_ms > now_ms).then(|| StoredTask {
                id: id.to_owned(),
                version,
                expires_at_ms,
                live: live.as_deref() != Some("0"),
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
                .key(format!("{}tasks", self.prefix))
                .key(format!("{}tasks:ended", self.prefix))
                .arg(expected_version)
                .arg(task.version)
                .arg(&task.body)
                .arg(if task.live { "1" } else { "0" })
                .arg(&task.id)
                .arg(format!("{}tasks:owner:", self.prefix));
            let replaced: i64 = self
                .within(invocation.invoke_async(&mut connection))
                .await?;
            Ok(replaced == 1)
        })
    }
}
