//! The round ledger's paths one at a time, on `MemoryLedger` and on `RedisLedger` over a
//! real `redis-server` on 127.0.0.1 (required when `MRTR_REQUIRE_REDIS=1`, as `.ci/run`
//! sets): the same sequence of claims, renewals and records must get the same answers from
//! both. Then, over HTTP, what the one-trip ledger changed: a reply does not wait for its
//! record, a presentation while the record is in flight waits for it and answers the same,
//! a record that fails leaves the round to its lease (re-run, or refused when at most once),
//! a server that stops writes the records still queued before it returns, and a round
//! costs Redis exactly one `SET` (the claim, awaited) and one `PSETEX` (the record, after
//! the reply), with no script. A `RedisLedger` claim carries records in its one round trip,
//! and a refused record does not fail the claim it rides with, nor the other way round.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mrtr::State;
use mrtr::server::McpServer;
use mrtr::server::ledger::{
    Claim, ClaimOutcome, LedgerError, MemoryLedger, Outcome, Owner, RedisLedger, RoundId,
    RoundLedger,
};
use mrtr::token::KeyRing;
use serde_json::{Value, json};
use tokio::sync::Notify;

// ------------------------------------------------------------------ the ledger alone

fn claim(token: &str, owner: u128, lease: Duration, take_over_expired: bool) -> Claim {
    Claim {
        round: RoundId::of_token(token),
        owner: Owner(owner),
        lease,
        expires_at: u64::from(u32::MAX),
        answers: [owner as u8; 16],
        take_over_expired,
    }
}

fn outcome(claim: &Claim, response: &[u8]) -> Outcome {
    Outcome {
        round: claim.round,
        owner: claim.owner,
        expires_at: claim.expires_at,
        response: response.to_vec(),
    }
}

fn recorded(outcome: ClaimOutcome) -> (Vec<u8>, [u8; 16]) {
    match outcome {
        ClaimOutcome::Recorded(recorded) => (recorded.response, recorded.answers),
        other => panic!("expected a record, got {other:?}"),
    }
}

const MINUTE: Duration = Duration::from_secs(60);

/// Lets a 1 ms lease run out (the ledger's clock, not an assertion on time).
async fn past_a_short_lease() {
    tokio::time::sleep(Duration::from_millis(30)).await;
}

/// Claims, a record batch, and the checked record: fresh, in progress, recorded.
async fn claim_and_record(ledger: &dyn RoundLedger, tag: &str) {
    let first = claim(&format!("{tag}-a"), 1, MINUTE, true);
    assert_eq!(ledger.claim(&first).await.unwrap(), ClaimOutcome::Claimed);
    // Presented again before the record lands (it is in flight): in progress.
    let again = claim(&format!("{tag}-a"), 2, MINUTE, true);
    assert_eq!(
        ledger.claim(&again).await.unwrap(),
        ClaimOutcome::InProgress
    );
    let written = ledger
        .record_all(&[outcome(&first, b"reply a")])
        .await
        .unwrap();
    assert_eq!(written, [true]);
    // Every later presentation gets the record and the answers it ran with.
    assert_eq!(
        recorded(ledger.claim(&again).await.unwrap()),
        (b"reply a".to_vec(), [1; 16])
    );

    // The checked record: only the holder, only once.
    let second = claim(&format!("{tag}-b"), 3, MINUTE, true);
    assert_eq!(ledger.claim(&second).await.unwrap(), ClaimOutcome::Claimed);
    assert!(!ledger.record(&second.round, Owner(4), b"x").await.unwrap());
    assert!(ledger.record(&second.round, Owner(3), b"b").await.unwrap());
    assert!(!ledger.record(&second.round, Owner(3), b"b2").await.unwrap());
    assert_eq!(
        recorded(ledger.claim(&second).await.unwrap()).0,
        b"b".to_vec()
    );
    // A round never claimed has nothing to record or renew.
    let stray = RoundId::of_token(&format!("{tag}-never"));
    assert!(!ledger.record(&stray, Owner(5), b"x").await.unwrap());
    assert!(!ledger.renew(&stray, Owner(5), MINUTE).await.unwrap());
}

/// A lease that runs out: abandoned or taken over per policy; the first owner's renewal
/// and record are refused, and its late record, if written, is never served.
async fn lease_expiry(ledger: &dyn RoundLedger, tag: &str) {
    let token = format!("{tag}-lease");
    let dead = claim(&token, 1, Duration::from_millis(1), true);
    assert_eq!(ledger.claim(&dead).await.unwrap(), ClaimOutcome::Claimed);
    past_a_short_lease().await;
    assert_eq!(
        ledger
            .claim(&claim(&token, 2, MINUTE, false))
            .await
            .unwrap(),
        ClaimOutcome::Abandoned
    );
    let taker = claim(&token, 3, MINUTE, true);
    assert_eq!(ledger.claim(&taker).await.unwrap(), ClaimOutcome::TakenOver);
    assert!(!ledger.renew(&dead.round, dead.owner, MINUTE).await.unwrap());
    // The dead owner's record arrives late. Redis writes it under the dead owner's name
    // (answering true without a check), the memory ledger refuses it: either way it is
    // not what the round answers.
    ledger.record_all(&[outcome(&dead, b"late")]).await.unwrap();
    let waiting = claim(&token, 4, MINUTE, true);
    assert_eq!(
        ledger.claim(&waiting).await.unwrap(),
        ClaimOutcome::InProgress
    );
    assert!(
        !ledger
            .record(&dead.round, dead.owner, b"late")
            .await
            .unwrap()
    );
    assert!(
        ledger
            .renew(&taker.round, taker.owner, MINUTE)
            .await
            .unwrap()
    );
    assert_eq!(
        ledger.record_all(&[outcome(&taker, b"won")]).await.unwrap(),
        [true]
    );
    assert_eq!(
        recorded(ledger.claim(&waiting).await.unwrap()),
        (b"won".to_vec(), [3; 16])
    );
}

/// A renewal restarts the lease from now; a claim whose token has expired is gone.
async fn renewal_and_expiry(ledger: &dyn RoundLedger, tag: &str) {
    let token = format!("{tag}-renew");
    let holder = claim(&token, 1, Duration::from_millis(1), true);
    assert_eq!(ledger.claim(&holder).await.unwrap(), ClaimOutcome::Claimed);
    past_a_short_lease().await;
    assert!(
        ledger
            .renew(&holder.round, holder.owner, MINUTE)
            .await
            .unwrap()
    );
    assert_eq!(
        ledger.claim(&claim(&token, 2, MINUTE, true)).await.unwrap(),
        ClaimOutcome::InProgress
    );

    let token = format!("{tag}-expired");
    let mut old = claim(&token, 1, MINUTE, true);
    // Its token expired a second ago: Redis keeps the claim for the second of margin,
    // which has passed too; the memory ledger ignores entries whose token expired.
    old.expires_at = unix_now() - 1;
    assert_eq!(ledger.claim(&old).await.unwrap(), ClaimOutcome::Claimed);
    past_a_short_lease().await;
    let mut fresh = claim(&token, 2, MINUTE, true);
    fresh.expires_at = unix_now() - 1;
    assert_eq!(ledger.claim(&fresh).await.unwrap(), ClaimOutcome::Claimed);
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Records carried by a claim: written first, so a claim of their own round finds them.
async fn claims_carrying_records(ledger: &dyn RoundLedger, tag: &str) {
    let first = claim(&format!("{tag}-carried"), 1, MINUTE, true);
    assert_eq!(ledger.claim(&first).await.unwrap(), ClaimOutcome::Claimed);
    let next = claim(&format!("{tag}-carrier"), 2, MINUTE, true);
    let answer = ledger
        .claim_with_records(&next, &[outcome(&first, b"carried")])
        .await;
    assert_eq!(answer.claim.unwrap(), ClaimOutcome::Claimed);
    assert_eq!(answer.records.unwrap(), [true]);
    assert_eq!(
        recorded(
            ledger
                .claim(&claim(&format!("{tag}-carried"), 3, MINUTE, true))
                .await
                .unwrap()
        ),
        (b"carried".to_vec(), [1; 16])
    );
    // A retry of `next` carrying `next`'s own record finds it.
    let retry = claim(&format!("{tag}-carrier"), 2, MINUTE, true);
    let answer = ledger
        .claim_with_records(&retry, &[outcome(&next, b"next")])
        .await;
    assert_eq!(recorded(answer.claim.unwrap()), (b"next".to_vec(), [2; 16]));
    assert_eq!(answer.records.unwrap(), [true]);
}

async fn every_path(ledger: &dyn RoundLedger, tag: &str) {
    claim_and_record(ledger, tag).await;
    lease_expiry(ledger, tag).await;
    renewal_and_expiry(ledger, tag).await;
    claims_carrying_records(ledger, tag).await;
}

#[tokio::test]
async fn memory_ledger_paths() {
    every_path(&MemoryLedger::new(), "memory").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_ledger_paths_answer_as_the_memory_ledger_does() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let ledger = RedisLedger::open(&redis.url()).unwrap();
    every_path(&ledger, "redis").await;
    // A record's key names its owner: only the claim's holder is served, and a prefix
    // keeps servers sharing one database apart.
    let other = RedisLedger::open(&redis.url())
        .unwrap()
        .with_prefix("other:");
    let round = claim("redis-a", 9, MINUTE, true);
    assert_eq!(other.claim(&round).await.unwrap(), ClaimOutcome::Claimed);
    let keys = redis.query(&["KEYS", "*redis-*"]);
    assert!(keys.trim().is_empty(), "ids are hashes, not tokens: {keys}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_claim_carries_records_in_its_one_round_trip() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let ledger = RedisLedger::open(&redis.url()).unwrap();
    assert!(ledger.claims_carry_records());
    let first = claim("trip-a", 1, MINUTE, true);
    let second = claim("trip-b", 2, MINUTE, true);
    assert_eq!(ledger.claim(&first).await.unwrap(), ClaimOutcome::Claimed);
    assert_eq!(ledger.claim(&second).await.unwrap(), ClaimOutcome::Claimed);
    redis.query(&["CONFIG", "RESETSTAT"]);
    let trips = ledger.round_trips();
    let next = claim("trip-c", 3, MINUTE, true);
    let answer = ledger
        .claim_with_records(&next, &[outcome(&first, b"a"), outcome(&second, b"b")])
        .await;
    assert_eq!(answer.claim.unwrap(), ClaimOutcome::Claimed);
    assert_eq!(answer.records.unwrap(), [true, true]);
    // One request sent: the two records and the claim in one pipeline.
    assert_eq!(ledger.round_trips(), trips + 1);
    assert_eq!(redis.calls("psetex"), 2, "{}", redis.stats());
    assert_eq!(redis.calls("set"), 1, "{}", redis.stats());
    for (token, owner, reply) in [("trip-a", 1, b"a"), ("trip-b", 2, b"b")] {
        let again = ledger.claim(&claim(token, 9, MINUTE, true)).await.unwrap();
        assert_eq!(recorded(again), (reply.to_vec(), [owner; 16]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_record_does_not_fail_the_claim_it_rides_with_nor_the_other_way() {
    let Some(redis) = Redis::start() else {
        return;
    };
    // Two users: one may not write records (PSETEX), the other may not claim (SET).
    for (user, denied) in [("norecords", "-psetex"), ("noclaims", "-set")] {
        let ok = redis.query(&["ACL", "SETUSER", user, "on", ">pw", "~*", "+@all", denied]);
        assert_eq!(ok.trim(), "OK", "{ok}");
    }
    let as_user =
        |user: &str| RedisLedger::open(&format!("redis://{user}:pw@127.0.0.1:{}/", redis.port));
    let ledger = RedisLedger::open(&redis.url()).unwrap();
    let first = claim("acl-a", 1, MINUTE, true);
    let second = claim("acl-b", 2, MINUTE, true);
    assert_eq!(ledger.claim(&first).await.unwrap(), ClaimOutcome::Claimed);
    assert_eq!(ledger.claim(&second).await.unwrap(), ClaimOutcome::Claimed);

    // The record is refused; the claim riding with it is made all the same.
    let answer = as_user("norecords")
        .unwrap()
        .claim_with_records(&claim("acl-c", 3, MINUTE, true), &[outcome(&first, b"a")])
        .await;
    assert_eq!(answer.claim.unwrap(), ClaimOutcome::Claimed);
    let refused = answer.records.unwrap_err().to_string();
    assert!(
        refused.contains("NOPERM") || refused.contains("permission"),
        "{refused}"
    );
    assert_eq!(
        ledger
            .claim(&claim("acl-a", 9, MINUTE, true))
            .await
            .unwrap(),
        ClaimOutcome::InProgress
    );
    assert_eq!(
        ledger
            .claim(&claim("acl-c", 9, MINUTE, true))
            .await
            .unwrap(),
        ClaimOutcome::InProgress
    );

    // The claim is refused; the record riding with it is written all the same.
    let answer = as_user("noclaims")
        .unwrap()
        .claim_with_records(&claim("acl-d", 4, MINUTE, true), &[outcome(&second, b"b")])
        .await;
    let refused = answer.claim.unwrap_err().to_string();
    assert!(
        refused.contains("NOPERM") || refused.contains("permission"),
        "{refused}"
    );
    assert_eq!(answer.records.unwrap(), [true]);
    assert_eq!(
        recorded(
            ledger
                .claim(&claim("acl-b", 9, MINUTE, true))
                .await
                .unwrap()
        ),
        (b"b".to_vec(), [2; 16])
    );
    // The refused claim left nothing: the round is claimed afresh.
    assert_eq!(
        ledger
            .claim(&claim("acl-d", 9, MINUTE, true))
            .await
            .unwrap(),
        ClaimOutcome::Claimed
    );
}

// ------------------------------------------------------------------ over HTTP

/// Side effects by round: `charged` counts how often the charging round's code ran.
#[derive(Debug, Default)]
struct Bank {
    charged: AtomicUsize,
}

/// Charge a card after a confirmation, then ask for a receipt address.
#[mrtr::tool]
async fn charge(State(bank): State<Arc<Bank>>, cents: u32) -> String {
    let go = ask!(key = "go", confirm(format!("Charge {cents} cents?")));
    if go != mrtr::machine::Elicited::Accept(true) {
        return "not charged".to_string();
    }
    let n = bank.charged.fetch_add(1, Ordering::SeqCst) + 1;
    let email = match ask!(
        key = "email",
        text(format!("Charge #{n} done. Receipt to?"))
    ) {
        mrtr::machine::Elicited::Accept(email) => email,
        _ => String::new(),
    };
    format!("receipt for charge #{n} to {email:?}")
}

/// The same, run at most once per round.
#[mrtr::tool(replay = "at_most_once")]
async fn pay(State(bank): State<Arc<Bank>>) -> String {
    let go = ask!(key = "go", confirm("Pay?"));
    bank.charged.fetch_add(1, Ordering::SeqCst);
    format!("paid: {go:?}")
}

/// A ledger in front of another whose records can be held back (`gate`) or failed
/// (`fail_records`); counts claims, and wakes `claimed` on each.
struct Gated {
    inner: Arc<dyn RoundLedger>,
    gate: Notify,
    hold_records: std::sync::atomic::AtomicBool,
    fail_records: std::sync::atomic::AtomicBool,
    claims: AtomicUsize,
    claimed: Notify,
    records_held: Notify,
}

impl Gated {
    fn new(inner: Arc<dyn RoundLedger>) -> Arc<Gated> {
        Arc::new(Gated {
            inner,
            gate: Notify::new(),
            hold_records: false.into(),
            fail_records: false.into(),
            claims: AtomicUsize::new(0),
            claimed: Notify::new(),
            records_held: Notify::new(),
        })
    }

    /// Waits until at least `n` claims have been made.
    async fn claims_reach(&self, n: usize) {
        loop {
            let notified = self.claimed.notified();
            if self.claims.load(Ordering::SeqCst) >= n {
                return;
            }
            notified.await;
        }
    }
}

impl RoundLedger for Gated {
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
        Box::pin(async move {
            let outcome = self.inner.claim(claim).await;
            self.claims.fetch_add(1, Ordering::SeqCst);
            self.claimed.notify_waiters();
            outcome
        })
    }
    fn renew<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        lease: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        self.inner.renew(round, owner, lease)
    }
    fn record<'a>(
        &'a self,
        round: &'a RoundId,
        owner: Owner,
        response: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        self.inner.record(round, owner, response)
    }
    fn record_all<'a>(
        &'a self,
        outcomes: &'a [Outcome],
    ) -> BoxFuture<'a, Result<Vec<bool>, LedgerError>> {
        Box::pin(async move {
            if self.hold_records.load(Ordering::SeqCst) {
                self.records_held.notify_one();
                self.gate.notified().await;
            }
            if self.fail_records.load(Ordering::SeqCst) {
                return Err(LedgerError::new("connection reset"));
            }
            self.inner.record_all(outcomes).await
        })
    }
}

const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

fn server(bank: &Arc<Bank>, ledger: Arc<dyn RoundLedger>, lease: Duration) -> McpServer {
    McpServer::builder("ledger-paths")
        .keys(KeyRing::parse(&format!("1:{KEY}")).unwrap())
        .instance_id("a")
        .app_state(bank.clone())
        .tool(charge)
        .tool(pay)
        .round_ledger(ledger)
        .round_lease(lease)
        .build()
        .unwrap()
}

async fn serve(server: McpServer) -> String {
    let bound = mrtr::server::http::HttpServing::new(server)
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .await
        .expect("bind");
    let addr = bound.local_addr();
    tokio::spawn(bound.serve());
    format!("http://{addr}/mcp")
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Posts a 2026-07-28 `tools/call`; returns the body without its `id`.
async fn call(url: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "ledger-paths", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let text = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", name)
        .body(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string(),
        )
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    let mut body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}"));
    body.as_object_mut().unwrap().remove("id");
    body
}

fn state_of(body: &Value) -> String {
    body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("expected input_required: {body}"))
        .to_owned()
}

/// The first call of `tool`, then the request that resumes it with a confirmation.
async fn confirming_round(url: &str, tool: &str, arguments: Value) -> Value {
    let first = call(url, json!({"name": tool, "arguments": arguments})).await;
    json!({
        "name": tool,
        "arguments": arguments,
        "requestState": state_of(&first),
        "inputResponses": {"go": {"action": "accept", "content": {"confirm": true}}},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_does_not_wait_for_its_record_and_a_retry_meanwhile_gets_the_same() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let ledger = Gated::new(Arc::new(RedisLedger::open(&redis.url()).unwrap()));
    let bank = Arc::new(Bank::default());
    let url = serve(server(&bank, ledger.clone(), MINUTE)).await;
    let round = confirming_round(&url, "charge", json!({"cents": 5})).await;

    ledger.hold_records.store(true, Ordering::SeqCst);
    // The reply arrives while its record is held back.
    let ran = call(&url, round.clone()).await;
    assert!(ran["result"]["requestState"].is_string(), "{ran}");
    ledger.records_held.notified().await;
    // A retry now finds the round in progress and waits...
    let claims = ledger.claims.load(Ordering::SeqCst);
    let retry = tokio::spawn({
        let (url, round) = (url.clone(), round.clone());
        async move { call(&url, round).await }
    });
    ledger.claims_reach(claims + 1).await;
    // ... until the record lands: then it answers the same, and nothing ran twice.
    ledger.hold_records.store(false, Ordering::SeqCst);
    ledger.gate.notify_one();
    assert_eq!(retry.await.unwrap(), ran);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_record_leaves_the_round_to_its_lease() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let ledger = Gated::new(Arc::new(RedisLedger::open(&redis.url()).unwrap()));
    ledger.fail_records.store(true, Ordering::SeqCst);
    let bank = Arc::new(Bank::default());
    let url = serve(server(&bank, ledger.clone(), Duration::from_millis(300))).await;

    // The reply still goes out; the record is lost. A retry waits while the lease holds
    // (the round wait, 5 s, outlasts it), then runs the round again: as before this
    // ledger, a failed record costs a re-run after the lease, never a wrong reply.
    let round = confirming_round(&url, "charge", json!({"cents": 7})).await;
    let ran = call(&url, round.clone()).await;
    assert!(ran["result"]["requestState"].is_string(), "{ran}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
    let rerun = call(&url, round).await;
    assert!(rerun["result"]["requestState"].is_string(), "{rerun}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 2);

    // At most once: the retry fails closed once the lease has gone, and nothing reruns.
    let round = confirming_round(&url, "pay", json!({})).await;
    let paid = call(&url, round.clone()).await;
    assert!(paid["result"]["content"].is_array(), "{paid}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 3);
    let refused = call(&url, round).await;
    assert_eq!(refused["error"]["code"], -32052, "{refused}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_writes_the_records_still_queued_before_it_returns() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let ledger = Gated::new(Arc::new(RedisLedger::open(&redis.url()).unwrap()));
    ledger.hold_records.store(true, Ordering::SeqCst);
    let bank = Arc::new(Bank::default());
    let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // The server runs on a runtime of its own, on one thread, dropped as soon as
    // `serve_until` returns, as when a process exits: what serving did not wait for never
    // happens.
    let serving = std::thread::spawn({
        let (bank, ledger) = (bank.clone(), ledger.clone());
        move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let bound =
                    mrtr::server::http::HttpServing::new(server(&bank, ledger.clone(), MINUTE))
                        .per_address_includes_loopback(true)
                        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
                        .await
                        .expect("bind");
                let _ = bound_tx.send((bound.local_addr(), bound.stats()));
                bound
                    .serve_until(async move {
                        let _ = stop_rx.await;
                        // The held record is let go only as serving stops: it lands only
                        // if serving waits for it.
                        ledger.gate.notify_one();
                    })
                    .await
                    .expect("serves");
            });
            drop(runtime);
        }
    });
    let (addr, stats) = bound_rx.await.unwrap();
    let url = format!("http://{addr}/mcp");

    let round = confirming_round(&url, "charge", json!({"cents": 9})).await;
    let ran = call(&url, round.clone()).await;
    assert!(ran["result"]["requestState"].is_string(), "{ran}");
    // Its record is queued, held at the ledger.
    ledger.records_held.notified().await;
    // No connection left open (each call's client has gone): serving stops at once.
    let loopback = "127.0.0.1".parse().unwrap();
    for _ in 0..500 {
        if stats.connections_from(loopback) == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(stats.connections_from(loopback), 0);
    stop_tx.send(()).unwrap();
    tokio::task::spawn_blocking(move || serving.join().unwrap())
        .await
        .unwrap();

    // Another instance on the same Redis replays the round: its record was written.
    let other = server(
        &bank,
        Arc::new(RedisLedger::open(&redis.url()).unwrap()),
        MINUTE,
    );
    let other = serve(other).await;
    assert_eq!(call(&other, round).await, ran);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
}

/// With `RedisLedger` itself (whose claims carry records), a record waits a few
/// milliseconds for a claim to carry it: a flush right after the reply writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_writes_the_records_waiting_for_a_claim() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let bank = Arc::new(Bank::default());
    let ledger: Arc<dyn RoundLedger> = Arc::new(RedisLedger::open(&redis.url()).unwrap());
    let first = server(&bank, ledger, MINUTE);
    let url = serve(first.clone()).await;
    let round = confirming_round(&url, "charge", json!({"cents": 3})).await;
    let ran = call(&url, round.clone()).await;
    assert!(ran["result"]["requestState"].is_string(), "{ran}");
    assert!(first.flush_ledger(MINUTE).await);
    // Written: another instance on the same Redis replays it.
    let other = server(
        &bank,
        Arc::new(RedisLedger::open(&redis.url()).unwrap()),
        MINUTE,
    );
    let other = serve(other).await;
    assert_eq!(call(&other, round).await, ran);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_costs_redis_one_set_and_one_psetex_and_no_script() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let bank = Arc::new(Bank::default());
    let ledger: Arc<dyn RoundLedger> = Arc::new(RedisLedger::open(&redis.url()).unwrap());
    let url = serve(server(&bank, ledger, MINUTE)).await;
    let rounds = 20;
    let mut resumed = Vec::new();
    for cents in 0..rounds {
        resumed.push(confirming_round(&url, "charge", json!({ "cents": cents })).await);
    }
    redis.query(&["CONFIG", "RESETSTAT"]);
    for round in &resumed {
        let ran = call(&url, round.clone()).await;
        assert!(ran["result"]["requestState"].is_string(), "{ran}");
    }
    // The records go out after the replies: wait until all have landed.
    for _ in 0..500 {
        if redis.calls("psetex") >= rounds {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(redis.calls("set"), rounds, "{}", redis.stats());
    assert_eq!(redis.calls("psetex"), rounds, "{}", redis.stats());
    for script in ["evalsha", "eval", "get", "hget", "hset"] {
        assert_eq!(redis.calls(script), 0, "{}", redis.stats());
    }
    assert_eq!(bank.charged.load(Ordering::SeqCst), rounds);
}

// ------------------------------------------------------------------ Redis

/// A `redis-server` of the test's own on a free loopback port; stopped by its PID.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    /// `None` when redis-server is not installed and not required.
    fn start() -> Option<Redis> {
        let required = std::env::var("MRTR_REQUIRE_REDIS").is_ok_and(|v| v == "1");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(error) if !required => {
                eprintln!(
                    "skipping: redis-server does not start: {error} (MRTR_REQUIRE_REDIS=1 requires it)"
                );
                return None;
            }
            Err(error) => panic!("MRTR_REQUIRE_REDIS=1 but redis-server does not start: {error}"),
        };
        let redis = Redis { child, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(redis);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not listen within 5 s");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Runs a command with `redis-cli`; its output.
    fn query(&self, args: &[&str]) -> String {
        let output = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn stats(&self) -> String {
        self.query(&["INFO", "commandstats"])
    }

    /// How often `command` ran since the last `CONFIG RESETSTAT`.
    fn calls(&self, command: &str) -> usize {
        let prefix = format!("cmdstat_{command}:calls=");
        self.stats()
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map_or(0, |rest| rest.split(',').next().unwrap().parse().unwrap())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
