//! Legacy Streamable HTTP sessions (clients that open with `initialize` at 2025-11-25) as
//! `mrtr::server::http` serves them: bound to the principal that opened them, capped,
//! ended when idle, their long-lived streams kept off the connection slots short requests
//! need, their ids kept out of the logs, and their memory given back. Every case runs over
//! real TCP on 127.0.0.1; waits are bounded by a hang guard and never asserted on.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577

#[path = "support/tally.rs"]
mod tally;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::StreamExt as _;
use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::token::KeyRing;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A bound so a broken server fails a test instead of hanging it; never asserted on.
const HANG_GUARD: Duration = Duration::from_secs(30);

const CAPABILITIES: &str = r#"{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}"#;

async fn guarded<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(HANG_GUARD, future)
        .await
        .unwrap_or_else(|_| panic!("hang guard: {what} did not finish"))
}

// ------------------------------------------------------------------ the server

struct Served {
    addr: SocketAddr,
    runs: Arc<tally::Runs>,
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

/// The counting `tally` tool served with `mrtr::server::http`, tuned by `tune`.
async fn serve(tune: impl FnOnce(HttpServing) -> HttpServing) -> Served {
    logs();
    let runs = Arc::new(tally::Runs::default());
    let server = McpServer::builder("legacy-sessions")
        .keys(KeyRing::generate_process_local().unwrap())
        .state(runs.clone())
        .tool(tally::tally)
        .build()
        .expect("server builds");
    let bound = tune(HttpServing::new(server).shutdown_grace(Duration::from_secs(1)))
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind loopback");
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(bound.serve_until(async {
        let _ = stopped.await;
    }));
    Served {
        addr,
        runs,
        stop: Some(stop),
    }
}

// ------------------------------------------------------------------ logs

/// Everything logged at INFO and above by this test process (rmcp included).
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || Sink(sink.clone()))
            .try_init();
        buffer
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn logged() -> String {
    String::from_utf8_lossy(&logs().lock().unwrap()).into_owned()
}

// ------------------------------------------------------------------ a raw legacy client

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A raw 2025-11-25 client: one bearer (or none), its own connections.
#[derive(Clone)]
struct Legacy {
    http: reqwest::Client,
    url: String,
    bearer: Option<&'static str>,
}

impl Legacy {
    fn new(url: &str, bearer: Option<&'static str>) -> Self {
        Legacy {
            http: reqwest::Client::new(),
            url: url.to_string(),
            bearer,
        }
    }

    /// An anonymous client from the loopback address `source`.
    fn anonymous_from(url: &str, source: [u8; 4]) -> Self {
        let http = reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(source))
            .build()
            .unwrap();
        Legacy {
            http,
            url: url.to_string(),
            bearer: None,
        }
    }

    fn post(&self, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2025-11-25")
            .body(body.to_string());
        if let Some(session) = session {
            builder = builder.header("Mcp-Session-Id", session);
        }
        if let Some(bearer) = self.bearer {
            builder = builder.header("Authorization", format!("Bearer {bearer}"));
        }
        builder
    }

    fn request(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> reqwest::RequestBuilder {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.post(
            session,
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
    }

    fn with_session(&self, method: reqwest::Method, session: &str) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .request(method, &self.url)
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Mcp-Session-Id", session);
        if let Some(bearer) = self.bearer {
            builder = builder.header("Authorization", format!("Bearer {bearer}"));
        }
        builder
    }

    /// `initialize` (and `notifications/initialized`): the new session's id, or the
    /// refusal's status and JSON body.
    async fn open(&self) -> Result<String, (u16, Value)> {
        let response = guarded(
            "initialize",
            self.request(
                None,
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": serde_json::from_str::<Value>(CAPABILITIES).unwrap(),
                    "clientInfo": {"name": "legacy-sessions-test", "version": "0"},
                }),
            )
            .send(),
        )
        .await
        .expect("the server answers");
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let text = guarded("the initialize body", response.text())
            .await
            .expect("a body");
        let Some(session) = session else {
            return Err((status, serde_json::from_str(&text).unwrap_or(Value::Null)));
        };
        assert_eq!(status, 200, "{text}");
        let initialized = guarded(
            "notifications/initialized",
            self.post(
                Some(&session),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .send(),
        )
        .await
        .expect("the server answers");
        assert_eq!(initialized.status().as_u16(), 202);
        Ok(session)
    }

    /// Starts `tally` on `session` and returns its open stream once the first question
    /// (an `elicitation/create`) has arrived on it, with that request's id.
    async fn pending_call(&self, session: &str) -> (reqwest::Response, Value) {
        let mut response = guarded(
            "tools/call",
            self.request(
                Some(session),
                "tools/call",
                json!({"name": "tally", "arguments": {"label": "x"}}),
            )
            .send(),
        )
        .await
        .expect("the server answers");
        assert_eq!(response.status().as_u16(), 200);
        let mut seen = String::new();
        loop {
            let chunk = guarded("the first question", response.chunk())
                .await
                .expect("the stream reads")
                .expect("the stream stays open until the question");
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(question) = seen
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["method"] == "elicitation/create")
            {
                return (response, question["id"].clone());
            }
        }
    }
}

/// Status and JSON body.
async fn answer(builder: reqwest::RequestBuilder) -> (u16, Value) {
    let response = guarded("a request", builder.send())
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let text = guarded("a body", response.text()).await.expect("a body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn message_of(body: &Value) -> &str {
    body["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("a JSON-RPC error: {body}"))
}

/// What our logs may show of a session id (12 hex digits of its SHA-256).
fn tag(id: &str) -> String {
    Sha256::digest(id.as_bytes())[..6]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

// ------------------------------------------------------------------ bound to the caller

#[tokio::test]
async fn bob_is_refused_on_alices_session_exactly_as_on_an_unknown_one() {
    let served = serve(|http| http).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let bob = Legacy::new(&served.url(), Some("bob-token"));
    let anonymous = Legacy::new(&served.url(), None);
    let session = alice.open().await.expect("alice opens a session");
    let (_stream, question) = alice.pending_call(&session).await;

    // Bob answers Alice's pending question on her session id: refused as for a session
    // that does not exist, byte for byte.
    let forged = json!({"jsonrpc": "2.0", "id": question, "result": {"action": "accept", "content": {"value": "Mallory"}}});
    let on_hers = answer(bob.post(Some(&session), forged.clone())).await;
    let unknown = "0123456789abcdef0123456789abcdef";
    let on_none = answer(bob.post(Some(unknown), forged)).await;
    assert_eq!(on_hers.0, 404, "{}", on_hers.1);
    assert_eq!(on_hers, on_none);
    assert_eq!(message_of(&on_hers.1), "Not Found: Session not found");
    // Her flow did not move on.
    assert_eq!(served.runs.snapshot(), [1, 0, 0]);

    // Nor may Bob, or a caller without credentials, list, listen or end it.
    for who in [&bob, &anonymous] {
        let list = |session: &str| {
            who.post(
                Some(session),
                json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
            )
        };
        assert_eq!(answer(list(&session)).await, answer(list(unknown)).await);
        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let theirs = answer(who.with_session(method.clone(), &session)).await;
            assert_eq!(theirs.0, 404, "{method} {}", theirs.1);
            assert_eq!(theirs, answer(who.with_session(method, unknown)).await);
        }
    }

    // Alice still has her session.
    let (status, body) = answer(alice.request(Some(&session), "tools/list", json!({}))).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn two_session_id_headers_are_refused() {
    let served = serve(|http| http).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let first = alice.open().await.unwrap();
    let second = alice.open().await.unwrap();
    let (status, body) = answer(
        alice
            .request(Some(&first), "tools/list", json!({}))
            .header("Mcp-Session-Id", &second),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], -32600);
    assert!(message_of(&body).contains("more than one Mcp-Session-Id header"));
}

#[tokio::test]
async fn session_ids_never_reach_the_logs_at_info() {
    let served = serve(|http| http).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let session = alice.open().await.unwrap();
    let (status, _) = answer(alice.request(Some(&session), "tools/list", json!({}))).await;
    assert_eq!(status, 200);
    let (status, _) = answer(alice.with_session(reqwest::Method::DELETE, &session)).await;
    assert!(status < 300);
    let logged = logged();
    // rmcp's INFO "create new session" was captured, and names only the tag.
    assert!(logged.contains(&tag(&session)), "{logged}");
    assert!(!logged.contains(&session), "{logged}");
}

// ------------------------------------------------------------------ bounds

#[tokio::test]
async fn sessions_are_capped_in_total_and_per_principal_with_a_clear_error() {
    let served = serve(|http| http.max_sessions(3).max_sessions_per_principal(2)).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let bob = Legacy::new(&served.url(), Some("bob-token"));
    let carol = Legacy::new(&served.url(), Some("carol-token"));
    let first = alice.open().await.unwrap();
    alice.open().await.unwrap();
    let (status, body) = alice.open().await.expect_err("alice is at her cap");
    assert_eq!(status, 429, "{body}");
    assert!(
        message_of(&body).contains("max_sessions_per_principal"),
        "{body}"
    );
    bob.open().await.unwrap();
    let (status, body) = carol.open().await.expect_err("the server is at its cap");
    assert_eq!(status, 503, "{body}");
    assert!(message_of(&body).contains("max_sessions"), "{body}");
    // An ended session gives its place back.
    let (status, _) = answer(alice.with_session(reqwest::Method::DELETE, &first)).await;
    assert!(status < 300);
    carol.open().await.expect("a place came back");
}

#[tokio::test]
async fn delete_answers_204_and_the_session_is_gone() {
    let served = serve(|http| http).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let session = alice.open().await.unwrap();
    let response = guarded(
        "DELETE",
        alice.with_session(reqwest::Method::DELETE, &session).send(),
    )
    .await
    .unwrap();
    // python-sdk 1.x accepts 200 or 204 (else "Session termination failed: 202").
    assert_eq!(response.status().as_u16(), 204);
    let (status, body) = answer(alice.request(Some(&session), "tools/list", json!({}))).await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = answer(alice.with_session(reqwest::Method::DELETE, &session)).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_idle_session_ends_with_its_pending_call() {
    let served = serve(|http| http.session_idle_timeout(Duration::from_secs(2))).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let session = alice.open().await.unwrap();
    let (mut stream, _question) = alice.pending_call(&session).await;
    // Nobody answers: the session idles out, and the pending call's stream ends.
    guarded("the pending call's stream to end", async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await;
    let (status, body) = answer(alice.request(Some(&session), "tools/list", json!({}))).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(served.runs.snapshot(), [1, 0, 0]);
}

#[tokio::test]
async fn long_lived_streams_have_their_own_budget_and_leave_slots_for_short_requests() {
    const CONNECTIONS: usize = 4;
    let served = serve(|http| http.max_connections(CONNECTIONS)).await;
    let legacy = Legacy::new(&served.url(), Some("holder-token"));
    // Two sessions, each with eight pending calls and a GET stream: 18 long-lived streams
    // over a server with 4 connection slots.
    let mut held = Vec::new();
    for _ in 0..2 {
        let session = legacy.open().await.unwrap();
        let calls = (0..8).map(|_| {
            let legacy = legacy.clone();
            let session = session.clone();
            async move { legacy.pending_call(&session).await.0 }
        });
        held.extend(futures::future::join_all(calls).await);
        let get = guarded(
            "a GET stream",
            legacy.with_session(reqwest::Method::GET, &session).send(),
        )
        .await
        .unwrap();
        assert_eq!(get.status().as_u16(), 200);
        held.push(get);
    }
    assert_eq!(held.len(), 18);

    // A 2026-07-28 client still gets its answer (here: the tool's first round).
    let modern = reqwest::Client::new();
    let mut params = json!({"name": "tally", "arguments": {"label": "y"}});
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "legacy-sessions-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(CAPABILITIES).unwrap(),
    });
    let asked = std::time::Instant::now();
    let (status, body) = answer(
        modern
            .post(served.url())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "tally")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
                    .to_string(),
            ),
    )
    .await;
    // Reported, not asserted.
    eprintln!(
        "a 2026-07-28 call beside 18 long-lived legacy streams on {CONNECTIONS} slots: {:?}",
        asked.elapsed()
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");
    drop(held);
}

#[tokio::test]
async fn streams_past_a_sessions_budget_are_refused_naming_the_limit() {
    let served = serve(|http| http.max_streams_per_session(2)).await;
    let legacy = Legacy::new(&served.url(), Some("holder-token"));
    let session = legacy.open().await.unwrap();
    let _first = legacy.pending_call(&session).await;
    let _second = legacy.pending_call(&session).await;
    let (status, body) = answer(legacy.request(
        Some(&session),
        "tools/call",
        json!({"name": "tally", "arguments": {"label": "z"}}),
    ))
    .await;
    assert_eq!(status, 429, "{body}");
    assert!(
        message_of(&body).contains("max_streams_per_session"),
        "{body}"
    );
    // Short requests on the same session still pass.
    let (status, _) = answer(legacy.request(Some(&session), "tools/list", json!({}))).await;
    assert_eq!(status, 200);
}

/// Anonymous callers' pending calls are counted per client address: one address stops at
/// `max_streams_per_principal` across its sessions while another address is not affected.
#[tokio::test]
async fn an_anonymous_address_has_its_own_budget_of_pending_calls() {
    let served = serve(|http| {
        http.max_streams_per_principal(2)
            .per_address_includes_loopback(true)
    })
    .await;
    let first = Legacy::anonymous_from(&served.url(), [127, 0, 0, 2]);
    let mut held = Vec::new();
    for _ in 0..2 {
        let session = first.open().await.unwrap();
        held.push(first.pending_call(&session).await);
    }
    let session = first.open().await.unwrap();
    let (status, body) = answer(first.request(
        Some(&session),
        "tools/call",
        json!({"name": "tally", "arguments": {"label": "z"}}),
    ))
    .await;
    assert_eq!(status, 429, "{body}");
    assert!(
        message_of(&body).contains("max_streams_per_principal"),
        "{body}"
    );
    let other = Legacy::anonymous_from(&served.url(), [127, 0, 0, 3]);
    let session = other.open().await.unwrap();
    let _pending = other.pending_call(&session).await;
}

// ------------------------------------------------------------------ memory

/// Set in the child process [`abandoned_sessions_give_their_memory_back`] starts: the
/// serving mode (`mrtr`, or `rmcp` for rmcp's own `LocalSessionManager`, the "before").
const CHILD: &str = "MRTR_SESSION_MEMORY_CHILD";
/// How long the child's sessions may idle, in milliseconds.
const CHILD_IDLE: &str = "MRTR_SESSION_MEMORY_IDLE_MS";
const WAVE: usize = 5_000;

/// The server of the memory test, in its own process: this test binary started again
/// with [`CHILD`] set. Without it (a normal run) it does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_memory_child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    let idle = Duration::from_millis(
        std::env::var(CHILD_IDLE)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(3_000),
    );
    let runs = Arc::new(tally::Runs::default());
    let server = McpServer::builder("session-memory")
        .keys(KeyRing::generate_process_local().unwrap())
        .state(runs)
        .tool(tally::tally)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    if mode == "rmcp" {
        use mrtr::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use mrtr::rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(idle);
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(sessions),
            StreamableHttpServerConfig::default()
                .with_legacy_session_mode(true)
                .with_json_response(true),
        );
        let router = axum::Router::new().route_service("/mcp", service);
        println!("\nport={port}");
        axum::serve(listener, router).await.unwrap();
    } else {
        let bound = HttpServing::new(server)
            .max_sessions(2 * WAVE)
            .session_idle_timeout(idle)
            .with_listener(listener)
            .unwrap();
        let stats = bound.stats();
        println!("\nport={port}");
        tokio::spawn(async move {
            // Reports the live count as it changes, for the parent to wait on.
            let mut last = usize::MAX;
            loop {
                let live = stats.live_sessions();
                if live != last {
                    println!("\nlive={live}");
                    last = live;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        bound.serve_until(std::future::pending()).await.unwrap();
    }
}

/// A child process's resident set, from /proc.
fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Opens `count` sessions, 32 at a time, and abandons them.
async fn abandon(url: &str, count: usize) {
    let legacy = Legacy::new(url, None);
    let ids = futures::stream::iter(0..count)
        .map(|_| {
            let legacy = legacy.clone();
            async move { legacy.open().await.expect("a session opens") }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;
    assert_eq!(ids.len(), count);
}

/// The child's `live=N` reports, line by line.
struct LiveReports {
    reports: std::sync::mpsc::Receiver<usize>,
    last: std::cell::Cell<usize>,
    had: std::cell::Cell<bool>,
}

impl LiveReports {
    fn new(reports: std::sync::mpsc::Receiver<usize>) -> Self {
        LiveReports {
            reports,
            last: std::cell::Cell::new(0),
            had: std::cell::Cell::new(false),
        }
    }

    fn seen(&self, live: usize) {
        self.last.set(live);
        if live > 0 {
            self.had.set(true);
        }
    }

    /// The live count last reported (rmcp's manager reports nothing: `None`).
    fn now(&self, mode: &str) -> Option<usize> {
        while let Ok(live) = self.reports.try_recv() {
            self.seen(live);
        }
        (mode != "rmcp").then(|| self.last.get())
    }

    /// Waits until the child reports no live session after having some (for rmcp's
    /// manager the idle timeout and a margin are waited out instead).
    async fn until_empty(&self, mode: &str, idle: Duration) {
        if mode == "rmcp" {
            tokio::time::sleep(idle + Duration::from_secs(3)).await;
            return;
        }
        while !(self.had.get() && self.last.get() == 0) {
            let live = self
                .reports
                .recv_timeout(HANG_GUARD)
                .expect("hang guard: the sessions to expire");
            self.seen(live);
        }
        self.had.set(false);
    }
}

#[tokio::test]
async fn abandoned_sessions_give_their_memory_back() {
    let mode = std::env::var("MRTR_SESSION_MEMORY_MODE").unwrap_or_else(|_| "mrtr".into());
    let idle_ms: u64 = 6_000;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "session_memory_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &mode)
        .env(CHILD_IDLE, idle_ms.to_string())
        .env("RUST_LOG", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the server process");
    let stdout = child.stdout.take().expect("piped stdout");
    let child = Child(child);
    let pid = child.0.id();
    let (ports, port) = std::sync::mpsc::channel();
    let (lives, live) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Some((_, port)) = line.split_once("port=") {
                let _ = ports.send(port.trim().to_owned());
            } else if let Some((_, count)) = line.split_once("live=") {
                let _ = lives.send(count.trim().parse::<usize>().unwrap_or(0));
            }
        }
    });
    let port = port
        .recv_timeout(HANG_GUARD)
        .expect("the child reports its port");
    let live = LiveReports::new(live);
    let idle = Duration::from_millis(idle_ms);
    let url = format!("http://127.0.0.1:{port}/mcp");

    // Warm up (allocator arenas, lazy statics), let it expire: the baseline.
    abandon(&url, 200).await;
    live.until_empty(&mode, idle).await;
    let baseline = resident_kib(pid);

    abandon(&url, WAVE).await;
    let peak = resident_kib(pid);
    // Sessions opened early in the wave may have expired already: count those live.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let live_at_peak = live.now(&mode).unwrap_or(WAVE).max(1);
    live.until_empty(&mode, idle).await;
    // The allocator trim runs off the async threads: give it its moment, bounded.
    let mut after = resident_kib(pid);
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = resident_kib(pid);
    }
    let per_session = (peak.saturating_sub(baseline)) as f64 / live_at_peak as f64;
    eprintln!(
        "session memory ({mode}): baseline {baseline} KiB, {live_at_peak} of {WAVE} sessions live: {peak} KiB ({per_session:.1} KiB each), after expiry {after} KiB"
    );
    if mode == "mrtr" {
        let grown = peak.saturating_sub(baseline);
        assert!(
            after <= baseline + (grown / 4).max(8 * 1024),
            "RSS did not come back: baseline {baseline} KiB, peak {peak} KiB, after {after} KiB"
        );
    }
}

// ------------------------------------------------------------------ cancel stays cancelled

/// SSE events read so far: `(id, JSON message)` per event that carries data.
fn sse_events(text: &str) -> Vec<(Option<String>, Value)> {
    text.split("\n\n")
        .filter_map(|event| {
            let id = event
                .lines()
                .find_map(|line| line.strip_prefix("id:"))
                .map(|id| id.trim().to_owned());
            let data: String = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            serde_json::from_str(&data)
                .ok()
                .map(|message| (id, message))
        })
        .collect()
}

/// Reads `response` until an event satisfies `done`; returns every event read.
async fn read_until(
    response: &mut reqwest::Response,
    done: impl Fn(&Value) -> bool,
) -> Vec<(Option<String>, Value)> {
    let mut seen = String::new();
    guarded("an event on the stream", async {
        loop {
            let events = sse_events(&seen);
            if events.iter().any(|(_, message)| done(message)) {
                return events;
            }
            match response.chunk().await {
                Ok(Some(chunk)) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                _ => panic!("the stream ended before the awaited event: {seen}"),
            }
        }
    })
    .await
}

/// A legacy call cancelled by its client stays cancelled when the client resumes its
/// stream: the question the call had asked is not delivered again (rmcp 3.11 resumed
/// from the last event seen *inclusive*; the server now resumes after it).
#[tokio::test]
async fn a_cancelled_calls_question_is_not_delivered_again_on_resume() {
    let served = serve(|http| http).await;
    let alice = Legacy::new(&served.url(), Some("alice-token"));
    let session = alice.open().await.unwrap();
    let call_id = 900_001;
    let mut stream = guarded(
        "tools/call",
        alice
            .post(
                Some(&session),
                json!({"jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                       "params": {"name": "tally", "arguments": {"label": "x"}}}),
            )
            .send(),
    )
    .await
    .expect("the server answers");
    let events = read_until(&mut stream, |m| m["method"] == "elicitation/create").await;
    let (event_id, _question) = events
        .iter()
        .find(|(_, m)| m["method"] == "elicitation/create")
        .cloned()
        .unwrap();
    let event_id = event_id.expect("the question's event has an id");
    drop(stream);

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": call_id, "reason": "the user pressed Ctrl-C"}});
    let (status, _) = answer(alice.post(Some(&session), cancel)).await;
    assert_eq!(status, 202);

    let mut resumed = guarded(
        "the resumed stream",
        alice
            .with_session(reqwest::Method::GET, &session)
            .header("Last-Event-ID", &event_id)
            .send(),
    )
    .await
    .expect("the server answers");
    assert_eq!(resumed.status().as_u16(), 200);
    // The call has ended, so the resumed stream replays what came after the question and
    // ends; the question must not be among it.
    let mut replayed = String::new();
    guarded("the resumed stream to end", async {
        while let Ok(Some(chunk)) = resumed.chunk().await {
            replayed.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    let again: Vec<_> = sse_events(&replayed)
        .into_iter()
        .filter(|(_, m)| m["method"] == "elicitation/create")
        .collect();
    assert!(
        again.is_empty(),
        "the cancelled call's question came back: {again:?}"
    );
    assert_eq!(served.runs.snapshot(), [1, 0, 0]);
}
