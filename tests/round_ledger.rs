//! The round ledger over real HTTP on 127.0.0.1: a resumed round runs once however often it
//! is presented (sequentially, concurrently, on two instances), replays answer the same
//! response, other answers are refused, an at-most-once round abandoned by a dead instance
//! fails closed, and an unreachable ledger fails protected rounds closed while unprotected
//! ones keep working. With `redis-server` on the PATH (required when
//! `MRTR_REQUIRE_REDIS=1`, as `.ci/run` sets), the same contract runs against
//! `RedisLedger`, including Redis going away and coming back.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mrtr::State;
use mrtr::server::ledger::{
    Claim, ClaimOutcome, LedgerError, MemoryLedger, Owner, RedisLedger, RoundId, RoundLedger,
};
use mrtr::server::{BuildError, McpServer, McpServerBuilder};
use mrtr::token::KeyRing;
use serde_json::{Value, json};

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
    // The round's effect. The pause lets concurrent presentations overlap.
    let n = bank.charged.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let email = match ask!(
        key = "email",
        text(format!("Charge #{n} done. Receipt to?"))
    ) {
        mrtr::machine::Elicited::Accept(email) => email,
        _ => String::new(),
    };
    format!("receipt for charge #{n} to {email:?}")
}

/// The same flow, run at most once per round.
#[mrtr::tool(replay = "at_most_once")]
async fn pay(State(bank): State<Arc<Bank>>) -> String {
    let go = ask!(key = "go", confirm("Pay?"));
    bank.charged.fetch_add(1, Ordering::SeqCst);
    format!("paid: {go:?}")
}

/// A read-only lookup: no ledger round trip.
#[mrtr::tool(rounds = "unprotected")]
// The old name of `replay`, kept for one release: still accepted (deprecated).
#[allow(deprecated)]
async fn lookup(State(bank): State<Arc<Bank>>) -> String {
    let what = match ask!(key = "what", text("Look up what?")) {
        mrtr::machine::Elicited::Accept(what) => what,
        _ => String::new(),
    };
    format!(
        "{what} after {} charges",
        bank.charged.load(Ordering::SeqCst)
    )
}

const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

fn keys() -> KeyRing {
    KeyRing::parse(&format!("1:{KEY}")).expect("a key ring")
}

fn builder(bank: &Arc<Bank>, instance: &str) -> McpServerBuilder {
    McpServer::builder("ledger-test")
        .keys(keys())
        .instance_id(instance)
        .app_state(bank.clone())
        .tool(charge)
        .tool(lookup)
}

/// [`builder`] with the at-most-once tool, which needs a ledger.
fn with_ledger(bank: &Arc<Bank>, instance: &str, ledger: Arc<dyn RoundLedger>) -> McpServer {
    builder(bank, instance)
        .tool(pay)
        .round_ledger(ledger)
        .build()
        .unwrap()
}

/// Serves `server` on a free loopback port.
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

/// Posts a `tools/call` as a 2026-07-28 client does; returns the JSON-RPC body with its
/// `id` removed, so two responses to the same round compare equal.
async fn call(url: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "ledger-test", "version": "0"},
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

fn accept(key: &str, content: Value) -> Value {
    json!({ key: {"action": "accept", "content": content} })
}

/// The `charge` flow up to its charging round: the request that runs it.
async fn charging_round(url: &str) -> Value {
    let first = call(url, json!({"name": "charge", "arguments": {"cents": 250}})).await;
    json!({
        "name": "charge",
        "arguments": {"cents": 250},
        "requestState": state_of(&first),
        "inputResponses": accept("go", json!({"confirm": true})),
    })
}

fn error_code(body: &Value) -> i64 {
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error: {body}"))
}

// ------------------------------------------------------------------ the contract

/// Runs every claim of the contract against `ledger` shared by two instances.
async fn contract(ledger: Arc<dyn RoundLedger>) {
    let bank = Arc::new(Bank::default());
    let a = serve(with_ledger(&bank, "a", ledger.clone())).await;
    let b = serve(with_ledger(&bank, "b", ledger.clone())).await;

    // Sequential: the round runs once; the replay (on the other instance) is the same
    // response, with the same next requestState and the instance that ran it.
    let round = charging_round(&a).await;
    let ran = call(&a, round.clone()).await;
    let replayed = call(&b, round.clone()).await;
    assert_eq!(ran, replayed);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
    assert_eq!(ran["result"]["_meta"]["io.mrtr/instance"], "a");
    assert!(state_of(&ran).starts_with("mrtr3."));

    // The flow continues from the replayed response.
    let done = call(
        &b,
        json!({
            "name": "charge",
            "arguments": {"cents": 250},
            "requestState": state_of(&replayed),
            "inputResponses": accept("email", json!({"text": "a@example.com"})),
        }),
    )
    .await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("charge #1"), "{done}");

    // Concurrent, on both instances: one runs, every other presentation waits for its
    // outcome and answers the same.
    let round = charging_round(&a).await;
    let presentations = (0..6).map(|i| {
        let url = if i % 2 == 0 { a.clone() } else { b.clone() };
        let round = round.clone();
        tokio::spawn(async move { call(&url, round).await })
    });
    let answers: Vec<Value> = futures::future::join_all(presentations)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(bank.charged.load(Ordering::SeqCst), 2);
    assert!(
        answers.iter().all(|answer| *answer == answers[0]),
        "{answers:#?}"
    );
    assert!(answers[0]["result"]["requestState"].is_string());

    // Other answers for a recorded round: refused, nothing runs.
    let mut other = round.clone();
    other["inputResponses"] = accept("go", json!({"confirm": false}));
    assert_eq!(error_code(&call(&b, other).await), -32602);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 2);

    // An instance died mid-round (its claim's lease has passed): a rerun-after-lease round
    // runs again, an at-most-once round fails closed.
    let round = charging_round(&a).await;
    dead_claim(&*ledger, &round).await;
    let rerun = call(&b, round).await;
    assert!(rerun["result"]["requestState"].is_string(), "{rerun}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 3);

    let first = call(&a, json!({"name": "pay", "arguments": {}})).await;
    let round = json!({
        "name": "pay",
        "arguments": {},
        "requestState": state_of(&first),
        "inputResponses": accept("go", json!({"confirm": true})),
    });
    dead_claim(&*ledger, &round).await;
    let refused = call(&b, round.clone()).await;
    assert_eq!(error_code(&refused), -32052, "{refused}");
    assert_eq!(refused["error"]["data"]["retryable"], false);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 3);
}

/// Claims `round`'s token as an instance that then died: its lease is already over.
async fn dead_claim(ledger: &dyn RoundLedger, round: &Value) {
    let claim = Claim {
        round: RoundId::of_token(round["requestState"].as_str().unwrap()),
        owner: Owner::random(),
        lease: Duration::from_millis(1),
        expires_at: u64::from(u32::MAX),
        answers: [0; 16],
        take_over_expired: true,
    };
    assert_eq!(ledger.claim(&claim).await.unwrap(), ClaimOutcome::Claimed);
    tokio::time::sleep(Duration::from_millis(20)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_ledger_keeps_the_contract() {
    contract(Arc::new(MemoryLedger::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_round_keeps_its_lease_past_the_lease_time() {
    // The charging round takes 150 ms, the lease is 60 ms: only renewals keep the waiting
    // presentations from taking the round over and charging again.
    let bank = Arc::new(Bank::default());
    let server = builder(&bank, "a")
        .tool(pay)
        .round_ledger(MemoryLedger::new())
        .round_lease(Duration::from_millis(60))
        .build()
        .unwrap();
    let url = serve(server).await;
    let round = charging_round(&url).await;
    let presentations = (0..4).map(|_| {
        let (url, round) = (url.clone(), round.clone());
        tokio::spawn(async move { call(&url, round).await })
    });
    let answers: Vec<Value> = futures::future::join_all(presentations)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
    assert!(
        answers.iter().all(|answer| *answer == answers[0]),
        "{answers:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_ledger_a_presented_again_round_runs_again() {
    // The control: what the ledger prevents.
    let bank = Arc::new(Bank::default());
    let url = serve(builder(&bank, "solo").build().unwrap()).await;
    let round = charging_round(&url).await;
    let first = call(&url, round.clone()).await;
    let second = call(&url, round).await;
    assert_eq!(bank.charged.load(Ordering::SeqCst), 2);
    assert_ne!(first, second);
}

#[test]
fn at_most_once_needs_a_ledger() {
    let bank = Arc::new(Bank::default());
    let error = match builder(&bank, "x").tool(pay).build() {
        Err(error) => error,
        Ok(_) => panic!("an at-most-once tool without a ledger must not build"),
    };
    assert!(matches!(&error, BuildError::AtMostOnceWithoutLedger { machine } if machine == "pay"));
    assert!(error.to_string().contains(".round_ledger("), "{error}");
}

/// A ledger that cannot be reached.
struct Unreachable;

impl RoundLedger for Unreachable {
    fn claim<'a>(&'a self, _: &'a Claim) -> BoxFuture<'a, Result<ClaimOutcome, LedgerError>> {
        Box::pin(async { Err(LedgerError::new("connection refused")) })
    }
    fn renew<'a>(
        &'a self,
        _: &'a RoundId,
        _: Owner,
        _: Duration,
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async { Err(LedgerError::new("connection refused")) })
    }
    fn record<'a>(
        &'a self,
        _: &'a RoundId,
        _: Owner,
        _: &'a [u8],
    ) -> BoxFuture<'a, Result<bool, LedgerError>> {
        Box::pin(async { Err(LedgerError::new("connection refused")) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_ledger_fails_protected_rounds_closed_only() {
    let bank = Arc::new(Bank::default());
    let url = serve(with_ledger(&bank, "a", Arc::new(Unreachable))).await;
    // A first call has no round to claim: it runs.
    let round = charging_round(&url).await;
    let refused = call(&url, round).await;
    assert_eq!(error_code(&refused), -32051, "{refused}");
    assert_eq!(refused["error"]["data"]["retryable"], true);
    assert_eq!(bank.charged.load(Ordering::SeqCst), 0);
    // The unprotected tool does not touch the ledger.
    let first = call(&url, json!({"name": "lookup", "arguments": {}})).await;
    let done = call(
        &url,
        json!({
            "name": "lookup",
            "arguments": {},
            "requestState": state_of(&first),
            "inputResponses": accept("what", json!({"text": "balance"})),
        }),
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"], "balance after 0 charges",
        "{done}"
    );
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
        match Self::start_on(port) {
            Ok(redis) => Some(redis),
            Err(error) if !required => {
                eprintln!(
                    "skipping the Redis ledger test: {error} (set MRTR_REQUIRE_REDIS=1 to require it)"
                );
                None
            }
            Err(error) => panic!("MRTR_REQUIRE_REDIS=1 but redis-server does not start: {error}"),
        }
    }

    fn start_on(port: u16) -> std::io::Result<Redis> {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let redis = Redis { child, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(redis);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        Err(std::io::Error::other(
            "redis-server did not listen within 5 s",
        ))
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_ledger_keeps_the_contract_and_survives_an_outage() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    let ledger = RedisLedger::open(&redis.url())
        .unwrap()
        .with_timeout(Duration::from_millis(500));
    let ledger: Arc<dyn RoundLedger> = Arc::new(ledger);
    contract(ledger.clone()).await;

    // Redis goes away: protected rounds fail closed and nothing runs; it comes back on the
    // same port: the same instance serves again, with no restart.
    let bank = Arc::new(Bank::default());
    let url = serve(with_ledger(&bank, "a", ledger)).await;
    let round = charging_round(&url).await;
    let port = redis.port;
    redis.stop();
    let refused = call(&url, round.clone()).await;
    assert_eq!(error_code(&refused), -32051, "{refused}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 0);

    let _redis = Redis::start_on(port).expect("redis-server restarts on its port");
    let mut served = None;
    for _ in 0..40 {
        let body = call(&url, round.clone()).await;
        if body.get("error").is_none() {
            served = Some(body);
            break;
        }
        assert_eq!(error_code(&body), -32051, "{body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let served = served.expect("the round runs once Redis is back");
    assert!(served["result"]["requestState"].is_string(), "{served}");
    assert_eq!(bank.charged.load(Ordering::SeqCst), 1);
}
