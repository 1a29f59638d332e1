//! The round ledger shared by every instance, in Redis.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Script, Value};
use tokio::sync::OnceCell;

use super::contract::{
    Claim, ClaimAndRecords, ClaimOutcome, LedgerError, Outcome, Owner, Recorded, RoundId,
    RoundLedger, hex32,
};

/// A round ledger in Redis (feature `redis`), for several instances behind a load balancer.
///
/// A round costs one awaited round trip on its way, a plain `SET … NX PX`, and its record
/// one plain `PSETEX`, written after the reply has gone out, batched with the other rounds
/// that finished meanwhile, and sent in the same pipeline as the next claim that goes out
/// ([`claim_with_records`](RoundLedger::claim_with_records)), so that under load a round
/// costs Redis one round trip in all; records no claim carried within a few milliseconds
/// go out on their own trip. Scripts run only on the rare paths: a round presented again (a
/// retry, a concurrent presentation, a take-over) and a lease renewal. The layout, and why
/// each guarantee of the [ledger](super) holds with it:
///
/// - `<prefix>round:<id>` is the **claim**: `r`, the owner (32 hex digits), the digest of
///   the answers (16 bytes) and the lease's *floor* in decimal; it expires with the token.
///   A claim is `SET key value NX PX <ms until the token expires>`: of concurrent claims
///   exactly one finds the key missing and sets it (Redis runs commands one at a time), so
///   exactly one runs. The lease is measured on the Redis server's clock without asking
///   for it: the lease holds while the key's remaining time to live (`PTTL`, counted down
///   by Redis) is above the floor, set at claim time to the key's initial time to live
///   minus the lease, and by each renewal to the then remaining time to live minus the
///   lease. The instances' clocks do not need to agree (they only say when the token
///   expires, as before).
/// - `<prefix>round:<id>:<owner>` is the **record** of that owner's run: the response.
///   Written without a check (`PSETEX`, expiring with the token), it is served only while
///   the claim still names that owner: a record written by an instance that lost its lease
///   (another presentation took the round over) lands under its own name and is never
///   read, as the scripted record refused it before.
/// - A claim that finds the key present runs the claim script, which reads the claim and
///   the holder's record in one step: the record (with the answers it ran with) if there
///   is one, else in progress while the lease holds, else taken over or abandoned per the
///   round's [`ReplayPolicy`](crate::machine::ReplayPolicy). A key that expired (its token
///   did too) is claimed afresh.
///
/// Records go out after their replies; until one lands, presentations of its round are
/// told it is in progress and wait for it (or, past the round wait, get `-32050`), as
/// while the round ran. A record that fails (Redis down) or is lost with its instance
/// leaves the claim to expire with its lease, as a failed record did before. A record that
/// rides in a claim's pipeline is written before the claim, and each command of the
/// pipeline answers on its own: a record Redis refuses does not fail the claim, nor a
/// refused claim the records. Writing a record twice (a claim that carried it was dropped
/// before it could say whether it went out) writes the same bytes under the same key.
///
/// The connection is made on first use and re-made by the `redis` crate's
/// `ConnectionManager` after a failure, so an instance starts, and keeps serving its
/// unprotected machines, while Redis is down. All commands of an instance share its one
/// multiplexed connection. Needs Redis 6.0 or later (`KEEPTTL` in the scripts).
///
/// Upgrading from the earlier layout (a round was one hash, claimed and recorded by
/// scripts): a round claimed by an earlier instance and presented again to this one is
/// refused with `-32051` (fail closed) until its token expires, so a rolling upgrade
/// never runs such a round twice.
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
    /// Requests sent to Redis: see [`round_trips`](Self::round_trips).
    trips: AtomicU64,
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

/// Where a claim's fields are: `r`, the owner in hex, the answers' digest, the floor.
const OWNER_AT: usize = 1;
const ANSWERS_AT: usize = OWNER_AT + 32;
const FLOOR_AT: usize = ANSWERS_AT + 16;

/// A claim that found its key present (the rare path). KEYS[1] the claim; ARGV: the claim
/// to set on a missing key, its time to live (ms), the lease (ms), take over an expired
/// lease (1/0), the claim without its floor (for a take-over).
const CLAIM: &str = r#"
local claim = redis.call('GET', KEYS[1])
if not claim then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {'claimed'}
end
local owner = string.sub(claim, 2, 33)
local recorded = redis.call('GET', KEYS[1] .. ':' .. owner)
if recorded then
  return {'recorded', string.sub(claim, 34, 49), recorded}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > tonumber(string.sub(claim, 50)) then
  return {'in_progress'}
end
if ARGV[4] == '1' then
  redis.call('SET', KEYS[1], ARGV[5] .. math.max(ttl - tonumber(ARGV[3]), 0), 'KEEPTTL')
  return {'taken_over'}
end
return {'abandoned'}
"#;

/// Extends a lease if `owner` still holds it. KEYS[1] the claim; ARGV: owner, lease ms.
const RENEW: &str = r#"
local claim = redis.call('GET', KEYS[1])
if not claim or string.sub(claim, 2, 33) ~= ARGV[1] then
  return 0
end
local floor = math.max(redis.call('PTTL', KEYS[1]) - tonumber(ARGV[2]), 0)
redis.call('SET', KEYS[1], string.sub(claim, 1, 49) .. floor, 'KEEPTTL')
return 1
"#;

/// Records an outcome if `owner` still holds the round and has not recorded it: the
/// checked record of [`RoundLedger::record`]. KEYS[1] the claim; ARGV: owner, response.
const RECORD: &str = r#"
local claim = redis.call('GET', KEYS[1])
if not claim or string.sub(claim, 2, 33) ~= ARGV[1] then
  return 0
end
local key = KEYS[1] .. ':' .. ARGV[1]
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 or redis.call('EXISTS', key) == 1 then
  return 0
end
redis.call('SET', key, ARGV[2], 'PX', ttl)
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
            trips: AtomicU64::new(0),
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

    /// The round trips to Redis this ledger has made: each command or pipeline it sent and
    /// waited for the answer of (a script's call counts once, even the first after a
    /// Redis restart, when the `redis` crate loads the script and calls it again). What a
    /// round costs Redis is mostly its wake-ups, one per trip: `scripts/cluster-measure`
    /// reports this per round.
    ///
    /// ```
    /// use mrtr_runtime::server::ledger::RedisLedger;
    /// let ledger = RedisLedger::open("redis://127.0.0.1:6379/").unwrap();
    /// assert_eq!(ledger.round_trips(), 0);
    /// ```
    pub fn round_trips(&self) -> u64 {
        self.trips.load(Ordering::Relaxed)
    }

    /// `<prefix>round:<id>`: the claim's key.
    fn key<'a>(&'a self, round: &'a RoundId) -> Key<'a> {
        Key {
            prefix: &self.prefix,
            round,
            owner: None,
        }
    }

    /// `<prefix>round:<id>:<owner>`: the key of `owner`'s record.
    fn record_key<'a>(&'a self, round: &'a RoundId, owner: Owner) -> Key<'a> {
        Key {
            prefix: &self.prefix,
            round,
            owner: Some(owner),
        }
    }

    /// The plain claim: `SET key value NX PX ttl`.
    fn claim_command(&self, claim: &Claim, value: &[u8], ttl: u64) -> redis::Cmd {
        let key = self.key(&claim.round);
        // Sized for its arguments: not grown as they are written.
        let mut set = redis::Cmd::with_capacity(6, 3 + key.len() + value.len() + 4 + 20);
        set.arg("SET")
            .arg(key)
            .arg(value)
            .arg("NX")
            .arg("PX")
            .arg(ttl);
        set
    }

    /// What a claim found, from the plain claim's answer: set, or present (then the claim
    /// script says what it holds).
    async fn claim_answer(
        &self,
        claim: &Claim,
        value: &[u8],
        ttl: u64,
        answer: Value,
    ) -> Result<ClaimOutcome, LedgerError> {
        match answer {
            Value::Okay => Ok(ClaimOutcome::Claimed),
            Value::Nil => self.claim_present(claim, value, ttl).await,
            other => Err(LedgerError::new(format!(
                "unexpected answer to a claim: {other:?}"
            ))),
        }
    }

    /// One `PSETEX` per outcome, under its owner's name, expiring with its token.
    fn push_records(&self, pipe: &mut redis::Pipeline, outcomes: &[Outcome]) {
        for outcome in outcomes {
            let key = self.record_key(&outcome.round, outcome.owner);
            let size = 6 + key.len() + 20 + outcome.response.len();
            let mut psetex = redis::Cmd::with_capacity(4, size);
            psetex
                .arg("PSETEX")
                .arg(key)
                .arg(ttl_ms(outcome.expires_at))
                .arg(&outcome.response[..]);
            pipe.add_command(psetex);
        }
    }

    async fn connection(&self) -> Result<ConnectionManager, LedgerError> {
        self.connection
            .get_or_try_init(|| async {
                // No response timeout of the `redis` crate's: `bounded` puts the one bound
                // on each trip (connecting included), so a trip arms one timer, not two. The
                // crate's would not re-make the connection either (it reconnects when a
                // connection drops, not when an answer is late).
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(self.timeout))
                    .set_response_timeout(None)
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(500));
                ConnectionManager::new_lazy_with_config(self.client.clone(), config).map_err(|e| {
                    LedgerError::new(format!("cannot set up the Redis connection: {e}"))
                })
            })
            .await
            .cloned()
    }

    /// Bounds `request` (one round trip) by the timeout and words its errors.
    async fn bounded<T>(
        &self,
        request: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, LedgerError> {
        self.trips.fetch_add(1, Ordering::Relaxed);
        tokio::time::timeout(self.timeout, request)
            .await
            .map_err(|_| {
                LedgerError::new(format!("Redis did not answer within {:?}", self.timeout))
            })?
            .map_err(|e| LedgerError::new(format!("Redis: {e}")))
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
        self.bounded(invocation.invoke_async(&mut connection)).await
    }

    /// The rare path of a claim: its key was present when the plain `SET NX` tried.
    async fn claim_present(
        &self,
        claim: &Claim,
        value: &[u8],
        ttl: u64,
    ) -> Result<ClaimOutcome, LedgerError> {
        let lease = claim.lease.as_millis().max(1).to_string();
        let ttl = ttl.to_string();
        let take_over = if claim.take_over_expired { "1" } else { "0" };
        let unfloored = &value[..FLOOR_AT];
        let answer = self
            .run(
                &self.scripts.claim,
                &claim.round,
                &[
                    value,
                    ttl.as_bytes(),
                    lease.as_bytes(),
                    take_over.as_bytes(),
                    unfloored,
                ],
            )
            .await?;
        claim_outcome(answer)
    }
}

/// The owner in 32 hex digits (as `{:032x}` writes it).
fn owner_arg(owner: Owner) -> [u8; 32] {
    hex32(owner.0.to_be_bytes())
}

/// A ledger key, written straight into the command that names it (no buffer of its own):
/// `<prefix>round:<id>`, and `:<owner>` for a record.
struct Key<'a> {
    prefix: &'a str,
    round: &'a RoundId,
    owner: Option<Owner>,
}

impl Key<'_> {
    fn len(&self) -> usize {
        self.prefix.len() + 6 + 32 + if self.owner.is_some() { 33 } else { 0 }
    }
}

impl redis::ToRedisArgs for Key<'_> {
    fn write_redis_args<W>(&self, out: &mut W)
    where
        W: ?Sized + redis::RedisWrite,
    {
        use std::io::Write as _;
        let mut arg = out.writer_for_next_arg();
        // Writing into the command's own buffer does not fail.
        let _ = arg.write_all(self.prefix.as_bytes());
        let _ = arg.write_all(b"round:");
        let _ = arg.write_all(&hex32(self.round.0));
        if let Some(owner) = self.owner {
            let _ = arg.write_all(b":");
            let _ = arg.write_all(&owner_arg(owner));
        }
    }
}

/// Milliseconds until `expires_at` (Unix seconds) plus one second, at least 1: a claim and
/// its record are kept one second past the token's expiry, so a record never outlives the
/// token by less than clock skew between instances and Redis.
fn ttl_ms(expires_at: u64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    let until = u128::from(expires_at.saturating_add(1)) * 1000;
    u64::try_from(until.saturating_sub(now))
        .unwrap_or(u64::MAX)
        .max(1)
}

/// A claim's value: `r`, the owner in hex, the answers' digest, the lease's floor.
fn claim_value(claim: &Claim, ttl: u64) -> Vec<u8> {
    use std::io::Write as _;
    let lease = u64::try_from(claim.lease.as_millis().max(1)).unwrap_or(u64::MAX);
    // `r`, 32 hex digits, 16 bytes and at most 20 digits.
    let mut value = Vec::with_capacity(FLOOR_AT + 20);
    value.push(b'r');
    value.extend_from_slice(&owner_arg(claim.owner));
    value.extend_from_slice(&claim.answers);
    // Writing decimal digits into a vector does not fail.
    let _ = write!(value, "{}", ttl.saturating_sub(lease));
    value
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

/// The records' answers: every `PSETEX` said OK.
fn records_answer(answers: &[Value]) -> Result<Vec<bool>, LedgerError> {
    if answers.iter().all(|answer| *answer == Value::Okay) {
        Ok(vec![true; answers.len()])
    } else {
        Err(LedgerError::new(format!(
            "unexpected answer to records: {answers:?}"
        )))
    }
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
            let ttl = ttl_ms(claim.expires_at);
            let value = claim_value(claim, ttl);
            let mut connection = self.connection().await?;
            let set = self.claim_command(claim, &value, ttl);
            let answer = self
                .bounded(set.query_async::<Value>(&mut connection))
                .await?;
            self.claim_answer(claim, &value, ttl, answer).await
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
                self.run(&self.scripts.renew, round, &[&owner, lease.as_bytes()])
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
                self.run(&self.scripts.record, round, &[&owner, response])
                    .await?,
            )
        })
    }

    /// One pipelined `PSETEX` per outcome, all in one round trip; each answers `true`
    /// (written). A record whose owner lost its claim is written too, under its owner's
    /// name, where no claim points: it is never served.
    fn record_all<'a>(
        &'a self,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
        Box::pin(async move {
            if outcomes.is_empty() {
                return Ok(Vec::new());
            }
            let mut pipe = redis::Pipeline::with_capacity(outcomes.len());
            self.push_records(&mut pipe, outcomes);
            let mut connection = self.connection().await?;
            let answers: Vec<Value> = self.bounded(pipe.query_async(&mut connection)).await?;
            if answers.len() != outcomes.len() {
                return Err(LedgerError::new(format!(
                    "unexpected answer to records: {answers:?}"
                )));
            }
            records_answer(&answers)
        })
    }

    /// `true`: [`claim_with_records`](RoundLedger::claim_with_records) is one pipeline.
    fn claims_carry_records(&self) -> bool {
        true
    }

    /// One pipeline: a `PSETEX` per outcome (as [`record_all`](RoundLedger::record_all)),
    /// then the plain claim (as [`claim`](RoundLedger::claim)), its errors answered per
    /// command (`ignore_errors`): a refused record does not fail the claim, nor the other
    /// way round. Only a claim that finds its key present takes a second round trip, its
    /// script, as it would alone.
    fn claim_with_records<'a>(
        &'a self,
        claim: &'a Claim,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, ClaimAndRecords> {
        Box::pin(async move {
            let ttl = ttl_ms(claim.expires_at);
            let value = claim_value(claim, ttl);
            let mut pipe = redis::Pipeline::with_capacity(outcomes.len() + 1);
            pipe.ignore_errors();
            self.push_records(&mut pipe, outcomes);
            pipe.add_command(self.claim_command(claim, &value, ttl));
            let sent = async {
                let mut connection = self.connection().await?;
                self.bounded(pipe.query_async::<Vec<Value>>(&mut connection))
                    .await
            };
            let mut answers = match sent.await {
                Ok(answers) if answers.len() == outcomes.len() + 1 => answers,
                Ok(answers) => {
                    let error = format!("unexpected answer to a claim with records: {answers:?}");
                    return ClaimAndRecords {
                        claim: Err(LedgerError::new(error.clone())),
                        records: Err(LedgerError::new(error)),
                    };
                }
                // The trip failed: neither was written.
                Err(error) => {
                    return ClaimAndRecords {
                        claim: Err(error.duplicate()),
                        records: Err(error),
                    };
                }
            };
            let claimed = answers.pop().unwrap_or(Value::Nil);
            ClaimAndRecords {
                records: records_answer(&answers),
                claim: self.claim_answer(claim, &value, ttl, claimed).await,
            }
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
        assert_eq!(owner_arg(Owner(0xab)), format!("{:0>32}", "ab").as_bytes());
        assert_eq!(owner_arg(Owner(u128::MAX)), "f".repeat(32).as_bytes());
        assert_ne!(owner_arg(Owner(1)), owner_arg(Owner(2)));
        let owner = Owner(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        assert_eq!(owner_arg(owner), format!("{:032x}", owner.0).as_bytes());
    }

    #[test]
    fn keys_name_the_round_and_the_records_owner() {
        let ledger = RedisLedger::open("redis://127.0.0.1/")
            .unwrap()
            .with_prefix("shop:");
        let round = RoundId([0xa5; 16]);
        use redis::ToRedisArgs as _;
        let key = ledger.key(&round);
        assert_eq!(
            key.to_redis_args(),
            [format!("shop:round:{round}").into_bytes()]
        );
        assert_eq!(key.len(), key.to_redis_args()[0].len());
        let record = ledger.record_key(&round, Owner(7));
        assert_eq!(
            record.to_redis_args(),
            [format!("shop:round:{round}:{:032x}", 7).into_bytes()]
        );
        assert_eq!(record.len(), record.to_redis_args()[0].len());
    }

    #[test]
    fn records_answer_ok_only_when_every_record_was_written() {
        assert_eq!(
            records_answer(&[Value::Okay, Value::Okay]).unwrap(),
            [true, true]
        );
        assert!(records_answer(&[]).unwrap().is_empty());
        assert!(records_answer(&[Value::Okay, Value::Nil]).is_err());
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
