//! `mrtr::server::http`'s process-wide budgets against one client holding the server:
//! stalled uploads cannot hold more than `max_buffered_body_bytes` (a further large upload
//! gets `503` naming the knob while small requests are still served), and one client
//! address cannot hold more than `max_connections_per_address` connections, and one caller
//! (a principal, or an anonymous address) cannot have more than
//! `max_in_flight_per_principal` requests in flight. Every case
//! runs over real TCP on 127.0.0.1 with small knobs; waits are bounded by a hang guard and
//! never asserted on.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577

#[path = "support/tally.rs"]
mod tally;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mrtr::server::McpServer;
use mrtr::server::http::{HttpServing, HttpStats};
use mrtr::token::KeyRing;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A bound so a broken server fails a test instead of hanging it; never asserted on.
const HANG_GUARD: Duration = Duration::from_secs(20);

const BODY_CAP: usize = 256 * 1024;
const BUDGET: usize = 1024 * 1024;

struct Served {
    addr: SocketAddr,
    stats: HttpStats,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Served {
    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The `tally` tool served with `mrtr::server::http`, tuned by `tune`.
async fn serve(tune: impl FnOnce(HttpServing) -> HttpServing) -> Served {
    let server = McpServer::builder("http-budget")
        .keys(KeyRing::generate_process_local().unwrap())
        .state(Arc::new(tally::Runs::default()))
        .tool(tally::tally)
        .build()
        .expect("server builds");
    let bound = tune(HttpServing::new(server).shutdown_grace(Duration::from_secs(1)))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind loopback");
    let addr = bound.local_addr();
    let stats = bound.stats();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    Served {
        addr,
        stats,
        stop: Some(stop),
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A 2026-07-28 request body as a conforming client sends it.
fn message(method: &str, mut params: Value) -> String {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "http-budget-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Sends `method` with reqwest (a generous timeout: a hang is a failure, not a figure) and
/// returns the status and the JSON body.
async fn call(url: &str, method: &str, params: Value) -> (u16, Value) {
    try_call(url, method, params)
        .await
        .expect("the server answers")
}

/// [`call`], or `None` when the connection failed.
async fn try_call(url: &str, method: &str, params: Value) -> Option<(u16, Value)> {
    let mut builder = reqwest::Client::builder()
        .timeout(HANG_GUARD)
        .build()
        .unwrap()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        builder = builder.header("Mcp-Name", name);
    }
    let response = builder.body(message(method, params)).send().await.ok()?;
    let status = response.status().as_u16();
    let text = response.text().await.ok()?;
    let body =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("a JSON body, got {status}: {text}"));
    Some((status, body))
}

/// The head of a raw `tools/list` POST declaring `content_length` body bytes.
fn raw_head(addr: SocketAddr, content_length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/list\r\nContent-Length: {content_length}\r\n\r\n"
    )
}

/// Everything the server sends until it closes the connection (a reset ends it too).
async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    tokio::time::timeout(HANG_GUARD, async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .expect("hang guard: the server neither answered nor closed the connection");
    String::from_utf8_lossy(&received).into_owned()
}

/// Polls `done` until it holds (bounded by the hang guard).
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    tokio::time::timeout(HANG_GUARD, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("hang guard: {what}"));
}

/// `tools/list` params padded so the body is about `bytes` long.
fn padded(bytes: usize) -> Value {
    json!({"padding": "x".repeat(bytes)})
}

// ------------------------------------------------------ the body-bytes budget

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_uploads_cannot_hold_more_than_the_body_budget() {
    let served = serve(|http| {
        http.max_body_bytes(BODY_CAP)
            .max_buffered_body_bytes(BUDGET)
            // Longer than the test: the stalled uploads stay open until they disconnect.
            .body_timeout(Duration::from_secs(120))
    })
    .await;

    // Four uploads each declare the body cap, send a few bytes, and stall: together they
    // claim the whole budget.
    let mut stalled = Vec::new();
    for _ in 0..BUDGET / BODY_CAP {
        let mut stream = TcpStream::connect(served.addr).await.unwrap();
        stream
            .write_all(raw_head(served.addr, BODY_CAP).as_bytes())
            .await
            .unwrap();
        stream.write_all(b"{\"jsonrpc\":").await.unwrap();
        stalled.push(stream);
    }
    let stats = served.stats.clone();
    eventually("the stalled uploads hold the budget", || {
        stats.buffered_body_bytes() >= BUDGET
    })
    .await;

    // A further large upload is refused at once, naming the knob, instead of waiting.
    let mut late = TcpStream::connect(served.addr).await.unwrap();
    late.write_all(raw_head(served.addr, 200_000).as_bytes())
        .await
        .unwrap();
    let answer = read_until_closed(&mut late).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("max_buffered_body_bytes"), "{answer}");
    assert!(answer.contains("-32000"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after"),
        "{answer}"
    );

    // Small ordinary requests are still served while the stalled uploads are open.
    let (status, body) = call(&served.url(), "tools/list", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["tools"][0]["name"], "tally", "{body}");
    let (status, body) = call(
        &served.url(),
        "tools/call",
        json!({"name": "tally", "arguments": {"label": "cups"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("result").is_some(), "{body}");

    // The stalled clients leave: the budget is all given back, and a large upload fits again.
    drop(stalled);
    let stats = served.stats.clone();
    eventually(
        "the budget returns to 0 once the stalled clients are gone",
        || stats.buffered_body_bytes() == 0,
    )
    .await;
    assert_eq!(served.stats.buffered_body_bytes(), 0);
    let (status, body) = call(&served.url(), "tools/list", padded(200_000)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["tools"][0]["name"], "tally", "{body}");
    assert_eq!(served.stats.buffered_body_bytes(), 0);
}

// ------------------------------------------------ connections per client address

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_more_than_its_connections() {
    const PER_ADDRESS: usize = 4;
    let served = serve(|http| {
        http.max_connections_per_address(PER_ADDRESS)
            .per_address_includes_loopback(true)
            .max_connections(64)
            // Idle connections stay open for the whole test.
            .header_read_timeout(Duration::from_secs(120))
    })
    .await;

    let mut held = Vec::new();
    for _ in 0..PER_ADDRESS {
        held.push(TcpStream::connect(served.addr).await.unwrap());
    }
    // The fifth is answered 503 naming the knob and closed, without a request being read.
    let mut fifth = TcpStream::connect(served.addr).await.unwrap();
    let answer = read_until_closed(&mut fifth).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(answer.contains("max_connections_per_address"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after"),
        "{answer}"
    );

    // A request on one of the held connections still works.
    let body = message("tools/list", json!({}));
    let stream = &mut held[0];
    stream
        .write_all(raw_head(served.addr, body.len()).as_bytes())
        .await
        .unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    tokio::time::timeout(HANG_GUARD, async {
        while !String::from_utf8_lossy(&received).contains("\"tally\"") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .expect("hang guard: no answer on a held connection");
    let answer = String::from_utf8_lossy(&received);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"tally\""), "{answer}");

    // Once one held connection closes, the address may open another.
    drop(held.pop());
    let mut replacement = None;
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            // Until the server has seen the close, a new connection is refused (503 or reset).
            if let Some((200, body)) = try_call(&served.url(), "tools/list", json!({})).await {
                replacement = Some(body);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("hang guard: the address never got a connection back");
    assert!(replacement.is_some());
}

// ------------------------------------------------ requests in flight per caller

/// Waits at the gate until the test adds permits.
#[mrtr::tool]
async fn waits(mrtr::State(gate): mrtr::State<Arc<tokio::sync::Semaphore>>) -> String {
    let permit = gate.acquire().await;
    drop(permit);
    "released".to_string()
}

/// `tools/call` of `waits` as `who` (`Bearer who`; `None`: anonymous) from `source`.
/// A server whose `waits` tool holds every call at `gate` (closed), with two requests in
/// flight per caller, loopback sources counted, and `resolver` deciding the principal
/// (the default resolver when `None`); its URL and live counts.
async fn serve_waiting(
    resolver: Option<Resolver>,
) -> (Arc<tokio::sync::Semaphore>, String, HttpStats) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let mut builder = McpServer::builder("http-budget")
        .keys(KeyRing::generate_process_local().unwrap())
        .app_state(gate.clone())
        .tool(waits);
    if let Some(resolver) = resolver {
        builder = builder.principal(resolver);
    }
    let bound = HttpServing::new(builder.build().expect("server builds"))
        .max_in_flight_per_principal(2)
        .per_address_includes_loopback(true)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind loopback");
    let (url, stats) = (format!("http://{}/mcp", bound.local_addr()), bound.stats());
    tokio::spawn(bound.serve());
    (gate, url, stats)
}

type Resolver = fn(&mrtr::rmcp::service::RequestContext<mrtr::rmcp::RoleServer>) -> Option<String>;

/// A principal resolver standing for real authentication: the bearer is the subject.
fn verified_bearer(
    context: &mrtr::rmcp::service::RequestContext<mrtr::rmcp::RoleServer>,
) -> Option<String> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    let bearer = parts.headers.get("authorization")?.to_str().ok()?;
    Some(format!("verified:{}", bearer.trim_start_matches("Bearer ")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unverified_bearers_from_one_address_share_its_in_flight_cap() {
    // The default resolver: a bearer nobody verified binds the state, but a client could
    // send a fresh one per request, so for fairness it counts by its address.
    let (gate, url, stats) = serve_waiting(None).await;

    let mut waiting = Vec::new();
    for who in ["rotating-1", "rotating-2"] {
        let url = url.clone();
        waiting.push(tokio::spawn(async move {
            call_held(&url, Some(who), [127, 0, 0, 5]).await
        }));
    }
    let live = stats.clone();
    eventually("two calls in flight", || live.in_flight_requests() == 2).await;
    // A third bearer from the same address is refused; the same bearer elsewhere is not.
    let (status, body) = call_held(&url, Some("rotating-3"), [127, 0, 0, 5]).await;
    assert_eq!(status, 429, "{body}");
    let url_elsewhere = url.clone();
    waiting.push(tokio::spawn(async move {
        call_held(&url_elsewhere, Some("rotating-3"), [127, 0, 0, 6]).await
    }));
    let live = stats.clone();
    eventually("three calls in flight", || live.in_flight_requests() == 3).await;
    gate.add_permits(1);
    for call in waiting {
        let (status, body) = call.await.unwrap();
        assert_eq!(status, 200, "{body}");
    }
}

async fn call_held(url: &str, who: Option<&str>, source: [u8; 4]) -> (u16, Value) {
    let client = reqwest::Client::builder()
        .timeout(HANG_GUARD)
        .local_address(std::net::IpAddr::from(source))
        .build()
        .unwrap();
    let params = json!({"name": "waits", "arguments": {}});
    let mut request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "waits");
    if let Some(who) = who {
        request = request.header("Authorization", format!("Bearer {who}"));
    }
    let response = request
        .body(message("tools/call", params))
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let retry_after = response.headers().contains_key("retry-after");
    let mut body: Value = response.json().await.expect("a JSON body");
    body["retryAfterHeader"] = json!(retry_after);
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_caller_cannot_have_more_than_its_requests_in_flight() {
    // Alice and Bob are principals an authentication layer vouched for (here: a resolver
    // that takes the bearer as the subject), not headers any client could vary.
    let (gate, url, stats) = serve_waiting(Some(verified_bearer)).await;

    // Alice and an anonymous address each have two calls waiting at the gate.
    let mut waiting = Vec::new();
    for who in [Some("alice"), None] {
        for _ in 0..2 {
            let url = url.clone();
            waiting.push(tokio::spawn(async move {
                call_held(&url, who, [127, 0, 0, 2]).await
            }));
        }
    }
    let live = stats.clone();
    eventually("four calls in flight", || live.in_flight_requests() == 4).await;

    // A third is refused at once, naming the knob; from another address too for alice.
    for (who, source) in [(Some("alice"), [127, 0, 0, 3]), (None, [127, 0, 0, 2])] {
        let (status, body) = call_held(&url, who, source).await;
        assert_eq!(status, 429, "{body}");
        assert_eq!(body["error"]["code"], -32000, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("max_in_flight_per_principal"), "{body}");
        assert_eq!(body["retryAfterHeader"], true, "{body}");
    }
    // Bob, and another anonymous address, are not affected: admitted while the others wait.
    for (who, source) in [(Some("bob"), [127, 0, 0, 2]), (None, [127, 0, 0, 4])] {
        let url = url.clone();
        waiting.push(tokio::spawn(
            async move { call_held(&url, who, source).await },
        ));
    }
    let live = stats.clone();
    eventually("six calls in flight", || live.in_flight_requests() == 6).await;
    // One permit opens the gate for all (each call gives it back); every call ends, and
    // the callers' places come back.
    gate.add_permits(1);
    for call in waiting {
        let (status, body) = call.await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["content"][0]["text"], "released", "{body}");
    }
    assert_eq!(stats.in_flight_requests(), 0);
    let (status, body) = call_held(&url, Some("alice"), [127, 0, 0, 2]).await;
    assert_eq!(status, 200, "{body}");
}

// ------------------------------------------- a client that leaves mid-round

/// A gate the test opens, and how many calls got past it.
struct Held {
    gate: tokio::sync::Semaphore,
    finished: AtomicU64,
}

/// Waits at the gate, then counts itself finished.
#[mrtr::tool]
async fn held_then_counted(mrtr::State(held): mrtr::State<Arc<Held>>) -> String {
    drop(held.gate.acquire().await);
    held.finished.fetch_add(1, Ordering::SeqCst);
    "counted".to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_round_does_not_cut_the_round_off_nor_keep_its_place() {
    let held = Arc::new(Held {
        gate: tokio::sync::Semaphore::new(0),
        finished: AtomicU64::new(0),
    });
    let server = McpServer::builder("http-budget")
        .keys(KeyRing::generate_process_local().unwrap())
        .app_state(held.clone())
        .tool(held_then_counted)
        .build()
        .expect("server builds");
    let bound = HttpServing::new(server)
        .per_address_includes_loopback(true)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind loopback");
    let (url, stats) = (format!("http://{}/mcp", bound.local_addr()), bound.stats());
    tokio::spawn(bound.serve());

    let source = std::net::IpAddr::from([127, 0, 0, 7]);
    let client = reqwest::Client::builder()
        .local_address(source)
        .build()
        .unwrap();
    let call = client
        .post(&url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "held_then_counted")
        .body(message("tools/call", json!({"name": "held_then_counted"})))
        .send();
    let leaving = tokio::spawn(call);
    let live = stats.clone();
    eventually("the call in flight", || live.in_flight_requests() == 1).await;

    // The client leaves (its connection closes) while the round waits at the gate.
    leaving.abort();
    drop(client);
    let live = stats.clone();
    eventually("the connection closed", || {
        live.connections_from(source) == 0
    })
    .await;
    assert_eq!(held.finished.load(Ordering::SeqCst), 0);
    // The round still holds the caller's place, and runs to its end once it can.
    assert_eq!(stats.in_flight_requests(), 1);
    held.gate.add_permits(1);
    let live = stats.clone();
    eventually("the place given back", || live.in_flight_requests() == 0).await;
    assert_eq!(held.finished.load(Ordering::SeqCst), 1);
}
