//! The round ledger shared by every instance, in Redis.

use std::time::Duration;

use futures::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Script, Value};
use tokio::sync::OnceCell;

use super::contract::{Claim, ClaimOutcome, LedgerError, Owner, Recorded, RoundId, RoundLedger};

/// A round ledger in Redis (feature `redis`), for several instances behind a load balancer.
///
/// Each round is one hash, `<prefix>round:<id>`, expiring with its token. Claims, renewals
/// and records are Lua scripts, so each is atomic; leases are measured on the Redis
/// server's clock, so the instances' clocks do not need to agree. One claim costs one
/// round trip; a round that runs costs two (claim, record) plus a renewal every third of
/// the lease while it runs.
///
/// The connection is made on first use and re-made by the `redis` crate's
/// `ConnectionManager` after a failure, so an instance starts, and keeps serving its
/// unprotected machines, while Redis is down.
///
/// ```no_run
/// use mrtr_runtime::server::McpServer;
/// use mrtr_runtime::server::ledger::RedisLedger;
///
/// let ledger = RedisLedger::open("redis://127.0.0.1:6379/").unwrap();
/// let server = McpServer::builder("shop").round_ledger(ledger).build().unwrap();
/// # let _ = server;
/// ```
pub struct RedisLedger {
    client: redis::Client,
    connection: OnceCell<ConnectionManager>,
    prefix: String,
    timeout: Duration,
    /// The scripts, hashed once (each call sends only the SHA-1: `EVALSHA`).
    scripts: Scripts,
}

struct Scripts {
    claim: Script,
    renew: Script,
    record: Script,
}

impl std::fmt::Debug for RedisLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLedger")
            .field("server", &self.client.get_connection_info().addr())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Claims a round. KEYS[1] the round; ARGV: owner, lease ms, expiry (Unix s), answers,
/// take over an expired lease (1/0).
const CLAIM: &str = r#"
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local state = redis.call('HGET', KEYS[1], 's')
if not state then
  redis.call('HSET', KEYS[1], 's', 'r', 'o', ARGV[1], 'l', now + tonumber(ARGV[2]), 'a', ARGV[4])
  redis.call('EXPIREAT', KEYS[1], ARGV[3])
  return {'claimed'}
end
if state == 'd' then
  return {'recorded', redis.call('HGET', KEYS[1], 'a'), redis.call('HGET', KEYS[1], 'v')}
end
if tonumber(redis.call('HGET', KEYS[1], 'l')) > now then
  return {'in_progress'}
end
if ARGV[5] == '1' then
  redis.call('HSET', KEYS[1], 'o', ARGV[1], 'l', now + tonumber(ARGV[2]), 'a', ARGV[4])
  return {'taken_over'}
end
return {'abandoned'}
"#;

/// Extends a lease if `owner` still holds it. KEYS[1] the round; ARGV: owner, lease ms.
const RENEW: &str = r#"
if redis.call('HGET', KEYS[1], 's') ~= 'r' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
  return 0
end
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[1], 'l', now + tonumber(ARGV[2]))
return 1
"#;

/// Records an outcome if `owner` still holds the round. KEYS[1]; ARGV: owner, response.
const RECORD: &str = r#"
if redis.call('HGET', KEYS[1], 's') ~= 'r' or redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 's', 'd', 'v', ARGV[2])
redis.call('HDEL', KEYS[1], 'o', 'l')
return 1
"#;

impl RedisLedger {
    /// A ledger on the Redis server at `url` (`redis://host:port/db`). Only parses the URL:
    /// the connection is made on first use.
    ///
    /// ```
    /// use mrtr_runtime::server::ledger::RedisLedger;
    /// assert!(RedisLedger::open("redis://127.0.0.1:6379/").is_ok());
    /// assert!(RedisLedger::open("not a url").is_err());
    /// ```
    pub fn open(url: &str) -> Result<Self, LedgerError> {
        let client = redis::Client::open(url)
            .map_err(|e| LedgerError::new(format!("bad Redis URL `{url}`: {e}")))?;
        Ok(RedisLedger {
            client,
            connection: OnceCell::new(),
            prefix: "mrtr:".to_owned(),
            timeout: Duration::from_secs(1),
            scripts: Scripts {
                claim: Script::new(CLAIM),
                renew: Script::new(RENEW),
                record: Script::new(RECORD),
            },
        })
    }

    /// Prefixes every key (default `mrtr:`), to share one Redis database between servers.
    ///
    /// ```
    /// # use mrtr_runtime::server::ledger::RedisLedger;
    /// let ledger = RedisLedger::open("redis://127.0.0.1/").unwrap().with_prefix("shop:");
    /// # let _ = ledger;
    /// ```
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one ledger command may take (connecting included) before the round fails
    /// closed (default 1 s).
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use mrtr_runtime::server::ledger::RedisLedger;
    /// let ledger = RedisLedger::open("redis://127.0.0.1/").unwrap().with_timeout(Duration::from_millis(500));
    /// # let _ = ledger;
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn key(&self, round: &RoundId) -> String {
        format!("{}round:{round}", self.prefix)
    }

    async fn connection(&self) -> Result<ConnectionManager, LedgerError> {
        self.connection
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(self.timeout))
                    .set_response_timeout(Some(self.timeout))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(500));
                ConnectionManager::new_lazy_with_config(self.client.clone(), config).map_err(|e| {
                    LedgerError::new(format!("cannot set up the Redis connection: {e}"))
                })
            })
            .await
            .cloned()
    }

    async fn run(
        &self,
        script: &Script,
        round: &RoundId,
        args: &[&[u8]],
    ) -> Result<Value, LedgerError> {
        let mut connection = self.connection().await?;
        let mut invocation = script.key(self.key(round));
        for arg in args {
            invocation.arg(*arg);
        }
        tokio::time::timeout(self.timeout, invocation.invoke_async(&mut connection))
            .await
            .map_err(|_| {
                LedgerError::new(format!("Redis did not answer within {:?}", self.timeout))
            })?
            .map_err(|e| LedgerError::new(format!("Redis: {e}")))
    }
}

fn owner_arg(owner: Owner) -> String {
    format!("{:032x}", owner.0)
}

fn bytes_of(value: &Value) -> Option<&[u8]> {
    match value {
        Value::BulkString(bytes) => Some(bytes),
        Value::SimpleString(text) => Some(text.as_bytes()),
        _ => None,
    }
}

fn claim_outcome(value: Value) -> Result<ClaimOutcome, LedgerError> {
    let unexpected = || LedgerError::new(format!("unexpected answer to a claim: {value:?}"));
    let Value::Array(items) = &value else {
        return Err(unexpected());
    };
    let status = items.first().and_then(bytes_of).ok_or_else(unexpected)?;
    Ok(match status {
        b"claimed" => ClaimOutcome::Claimed,
        b"taken_over" => ClaimOutcome::TakenOver,
        b"in_progress" => ClaimOutcome::InProgress,
        b"abandoned" => ClaimOutcome::Abandoned,
        b"recorded" => {
            let answers = items.get(1).and_then(bytes_of).ok_or_else(unexpected)?;
            let response = items.get(2).and_then(bytes_of).ok_or_else(unexpected)?;
            ClaimOutcome::Recorded(Recorded {
                answers: answers.try_into().map_err(|_| unexpected())?,
                response: response.to_vec(),
            })
        }
        _ => return Err(unexpected()),
    })
}

fn flag(value: Value) -> Result<bool, LedgerError> {
    match value {
        Value::Int(1) => Ok(true),
        Value::Int(0) => Ok(false),
        other => Err(LedgerError::new(format!("unexpected answer: {other:?}"))),
    }
}

impl RoundLedger for RedisLedger {
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
        Box::pin(async move {
            let owner = owner_arg(claim.owner);
            let lease = claim.lease.as_millis().max(1).to_string();
            // Kept one second past the token's expiry, so a record never outlives the
            // token by less than clock skew between instances and Redis.
            let expires = claim.expires_at.saturating_add(1).to_string();
            let take_over = if claim.take_over_expired { "1" } else { "0" };
            let value = self
                .run(
                    &self.scripts.claim,
                    &claim.round,
                    &[
                        owner.as_bytes(),
                        lease.as_bytes(),
                        expires.as_bytes(),
                        &claim.answers,
                        take_over.as_bytes(),
                    ],
                )
                .await?;
            claim_outcome(value)
        })
    }

    fn renew<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        lease: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async move {
            let owner = owner_arg(owner);
            let lease = lease.as_millis().max(1).to_string();
            flag(
                self.run(
                    &self.scripts.renew,
                    round,
                    &[owner.as_bytes(), lease.as_bytes()],
                )
                .await?,
            )
        })
    }

    fn record<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        response: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async move {
            let owner = owner_arg(owner);
            flag(
                self.run(&self.scripts.record, round, &[owner.as_bytes(), response])
                    .await?,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_answers_decode() {
        let status = |s: &str| Value::Array(vec![Value::BulkString(s.as_bytes().to_vec())]);
        assert_eq!(
            claim_outcome(status("claimed")).unwrap(),
            ClaimOutcome::Claimed
        );
        assert_eq!(
            claim_outcome(status("taken_over")).unwrap(),
            ClaimOutcome::TakenOver
        );
        assert_eq!(
            claim_outcome(status("in_progress")).unwrap(),
            ClaimOutcome::InProgress
        );
        assert_eq!(
            claim_outcome(status("abandoned")).unwrap(),
            ClaimOutcome::Abandoned
        );
        let recorded = Value::Array(vec![
            Value::BulkString(b"recorded".to_vec()),
            Value::BulkString(vec![9; 16]),
            Value::BulkString(b"{}".to_vec()),
        ]);
        assert_eq!(
            claim_outcome(recorded).unwrap(),
            ClaimOutcome::Recorded(Recorded {
                answers: [9; 16],
                response: b"{}".to_vec()
            })
        );
        // A record whose answers digest is not 16 bytes is not trusted.
        let short = Value::Array(vec![
            Value::BulkString(b"recorded".to_vec()),
            Value::BulkString(vec![9; 3]),
            Value::BulkString(b"{}".to_vec()),
        ]);
        assert!(claim_outcome(short).is_err());
        assert!(claim_outcome(status("other")).is_err());
        assert!(claim_outcome(Value::Nil).is_err());
    }

    #[test]
    fn owners_are_written_as_fixed_width_hex() {
        assert_eq!(owner_arg(Owner(0xab)), format!("{:0>32}", "ab"));
        assert_eq!(owner_arg(Owner(u128::MAX)), "f".repeat(32));
        assert_ne!(owner_arg(Owner(1)), owner_arg(Owner(2)));
    }

    #[test]
    fn simple_strings_and_flags_decode() {
        let simple = Value::Array(vec![Value::SimpleString("in_progress".into())]);
        assert_eq!(claim_outcome(simple).unwrap(), ClaimOutcome::InProgress);
        assert!(flag(Value::Int(1)).unwrap());
        assert!(!flag(Value::Int(0)).unwrap());
        assert!(flag(Value::Int(2)).is_err());
        assert!(flag(Value::Nil).is_err());
    }

    #[test]
    fn debug_names_the_server_and_the_prefix() {
        let ledger = RedisLedger::open("redis://127.0.0.1:6390/")
            .unwrap()
            .with_prefix("shop:");
        let debug = format!("{ledger:?}");
        assert!(debug.starts_with("RedisLedger"), "{debug}");
        assert!(debug.contains("6390") && debug.contains("shop:"), "{debug}");
    }
}
