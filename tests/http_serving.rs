//! The production HTTP entry point (`mrtr::server::http`) against the findings of the
//! HTTP review, each over real TCP on 127.0.0.1: in-process servers for request-level
//! behaviour, the showcase binary as a child process where the outcome is about the
//! process (memory, file descriptors, stderr, signals). Load-style cases are bounded in
//! count and time and assert outcomes (connection closed, request refused, RSS bound),
//! never durations.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

#[path = "support/bins.rs"]
mod bins;
#[path = "../examples/showcase/data_export.rs"]
mod data_export;
#[path = "../examples/showcase/deploy_wizard.rs"]
mod deploy_wizard;
#[path = "../examples/showcase/explain_prompt.rs"]
mod explain_prompt;
#[path = "../examples/showcase/file_organiser.rs"]
mod file_organiser;
#[path = "../examples/showcase/order_flow.rs"]
mod order_flow;
#[path = "../examples/showcase/server.rs"]
mod server;
#[path = "../examples/showcase/vault_resource.rs"]
mod vault_resource;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const ALL_CAPABILITIES: &str = r#"{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}"#;

// ------------------------------------------------------------------ helpers

/// An in-process showcase server with the production defaults.
async fn showcase() -> String {
    let (addr, _task) = server::serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .expect("serve the showcase");
    format!("http://{addr}/mcp")
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A 2026-07-28 request as a conforming client sends it.
fn request(
    client: &reqwest::Client,
    url: &str,
    method: &str,
    mut params: Value,
) -> reqwest::RequestBuilder {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "http-serving-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(ALL_CAPABILITIES).unwrap(),
    });
    let mut builder = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = params
        .get("name")
        .or(params.get("uri"))
        .and_then(Value::as_str)
    {
        builder = builder.header("Mcp-Name", name);
    }
    builder
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
}

/// Sends and returns the status, the content type and the JSON body.
async fn send(builder: reqwest::RequestBuilder) -> (u16, String, Value) {
    let response = builder.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = response.text().await.expect("a body");
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("a JSON body, got {status} {content_type}: {text}"));
    (status, content_type, body)
}

async fn call(url: &str, method: &str, params: Value) -> (u16, String, Value) {
    send(request(&reqwest::Client::new(), url, method, params)).await
}

fn error_code(body: &Value) -> i64 {
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error: {body}"))
}

/// The showcase binary, rebuilt if stale.
fn showcase_binary() -> PathBuf {
    bins::example("showcase")
}

/// The showcase serving HTTP in a child process; killed (by its PID) when dropped.
struct ChildServer {
    child: Child,
    port: u16,
    stderr: PathBuf,
    _scratch: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("mrtr-http-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

impl ChildServer {
    /// Starts `sh -c "{prefix} exec showcase serve-http 127.0.0.1:0 --port-file F {args}"`
    /// and waits until it reports its port (or exits: then `Err` with its stderr).
    fn start(
        name: &str,
        shell_prefix: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<Self, String> {
        let scratch = scratch_dir(name);
        let port_file = scratch.0.join("port");
        let stderr = scratch.0.join("stderr");
        let script = format!(
            "{shell_prefix} exec '{}' serve-http 127.0.0.1:0 --port-file '{}' {}",
            showcase_binary().display(),
            port_file.display(),
            args.join(" ")
        );
        let mut command = Command::new("sh");
        command
            .args(["-c", &script])
            .env_remove("MRTR_KEYS")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn the showcase");
        for _ in 0..600 {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                return Ok(ChildServer {
                    child,
                    port,
                    stderr,
                    _scratch: scratch,
                });
            }
            if let Some(status) = child.try_wait().unwrap() {
                return Err(format!(
                    "exited with {status}: {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        Err("the showcase did not report a port within 60 s".into())
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or(0)
}

/// Reads until the server closes the connection (or `bound` passes: then `None`).
async fn read_until_closed(stream: &mut TcpStream, bound: Duration) -> Option<String> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(bound, async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&received).into_owned())
}

fn discover_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}})
    .to_string()
}

fn raw_post_head(port: u16, content_length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: server/discover\r\nContent-Length: {content_length}\r\n\r\n"
    )
}

// ------------------------------------------------ finding 1: stalled bodies

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_bodies_are_cut_off_at_the_deadline_and_memory_stays_bounded() {
    const CONNECTIONS: usize = 100;
    const SENT: usize = 1_000_000; // just under the 1 MiB default cap
    // The deadline alone: the body budget and the per-address cap (which would refuse
    // most of these 100 uploads from one address; tests/http_budget.rs) are raised.
    let server = ChildServer::start(
        "stall",
        "",
        &[
            "--body-timeout",
            "1",
            "--max-buffered-body-bytes",
            "1000000000",
            "--max-connections-per-address",
            "1000",
        ],
        &[],
    )
    .expect("starts");
    let baseline = server.rss_kib();
    let mut streams = Vec::new();
    let chunk = vec![b' '; SENT];
    for _ in 0..CONNECTIONS {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        stream
            .write_all(raw_post_head(server.port, SENT + 1).as_bytes())
            .await
            .unwrap();
        stream.write_all(&chunk).await.unwrap();
        streams.push(stream); // one byte short: the server waits for it
    }
    let mut peak = server.rss_kib();
    let mut refused = 0;
    for stream in &mut streams {
        peak = peak.max(server.rss_kib());
        let answer = read_until_closed(stream, Duration::from_secs(20))
            .await
            .expect("the server closes a stalled upload instead of holding it");
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("-32600"), "{answer}");
        refused += 1;
    }
    assert_eq!(refused, CONNECTIONS);
    // Each stalled body is held (at most twice: read buffer and collected copy) until its
    // deadline; ~1 MB x 100 stays under 200 MiB, far from the
    // 4 MiB-per-connection growth the old serving showed (9 MB → 461 MB).
    let growth_mib = peak.saturating_sub(baseline) / 1024;
    eprintln!("RSS baseline {baseline} KiB, peak {peak} KiB, growth {growth_mib} MiB");
    assert!(
        growth_mib < 200,
        "RSS grew by {growth_mib} MiB for {CONNECTIONS} stalled uploads"
    );
    // The server still serves.
    let (status, _, body) = send(
        reqwest::Client::new()
            .post(server.url())
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "server/discover")
            .body(discover_body()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

// ------------------------------------- finding 2: slow headers and idle sockets

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_and_idle_connections_are_closed_and_cannot_exhaust_descriptors() {
    // 128 descriptors for the server; 300 client sockets, a third with partial headers.
    let server = ChildServer::start(
        "idle",
        "ulimit -n 128 &&",
        &["--header-read-timeout", "1"],
        &[("RUST_LOG", "warn")],
    )
    .expect("starts");
    let mut partial = Vec::new();
    let mut idle = Vec::new();
    for index in 0..300 {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        if index % 3 == 0 {
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                .await
                .unwrap();
            partial.push(stream);
        } else {
            idle.push(stream);
        }
    }
    // A normal request is served while all 300 are held open by the client.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let response = client
        .post(server.url())
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "server/discover")
        .body(discover_body())
        .send()
        .await
        .expect("a normal request is served despite 300 stalled sockets");
    assert_eq!(response.status(), 200);
    // The server closed the partial-header connections it accepted.
    let mut closed = 0;
    for stream in &mut partial {
        if read_until_closed(stream, Duration::from_secs(15))
            .await
            .is_some()
        {
            closed += 1;
        }
    }
    assert_eq!(
        closed,
        partial.len(),
        "every partial-header connection is closed by the server"
    );
    let stderr = server.stderr();
    assert!(!stderr.contains("Too many open files"), "{stderr}");
}

// -------------------------------------------------------------- finding 3: Origin

#[tokio::test]
async fn foreign_origins_are_refused_and_loopback_ones_served() {
    let url = showcase().await;
    let client = reqwest::Client::new();
    let (status, _, body) = send(
        request(&client, &url, "tools/list", json!({})).header("Origin", "https://evil.example"),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(error_code(&body), -32600);
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1:8080",
        "http://[::1]:3000",
    ] {
        let (status, _, body) =
            send(request(&client, &url, "tools/list", json!({})).header("Origin", origin)).await;
        assert_eq!(status, 200, "{origin}: {body}");
    }
    let (status, _, _) = send(request(&client, &url, "tools/list", json!({}))).await;
    assert_eq!(status, 200, "no Origin (a non-browser client) is served");
}

// ------------------------------------------ finding 4: advertise what is served

#[tokio::test]
async fn only_served_versions_are_advertised_and_legacy_requests_get_json_rpc_errors() {
    // Legacy sessions on (the default): every version is served and advertised, and a
    // legacy `initialize` opens a session.
    let url = showcase().await;
    let (status, _, body) = call(&url, "server/discover", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let versions = body["result"]["supportedVersions"].clone();
    assert!(
        versions
            .as_array()
            .is_some_and(|v| v.contains(&json!("2025-11-25")) && v.contains(&json!("2026-07-28"))),
        "{body}"
    );
    let client = reqwest::Client::new();
    let legacy = |url: &str, body: Value| {
        client
            .post(url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body.to_string())
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}
    }});
    let response = legacy(&url, initialize.clone())
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response.headers().contains_key("mcp-session-id"),
        "a legacy session was opened: {:?}",
        response.headers()
    );
    // A legacy request outside any session is refused as JSON-RPC.
    let (status, _, body) = send(legacy(
        &url,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "deploy_wizard", "arguments": {"service": "api"}
        }}),
    ))
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["code"].is_i64(), "{body}");

    // Legacy sessions off: only 2026-07-28 is advertised and a legacy `initialize` gets
    // the spec's answer for a modern-only server, the versions it does support.
    let modern_only = mrtr::server::McpServer::builder("modern-only")
        .keys(mrtr::token::KeyRing::generate_process_local().unwrap())
        .legacy_sessions(false)
        .tool(deploy_wizard::deploy_wizard)
        .build()
        .unwrap();
    let bound = mrtr::server::http::HttpServing::new(modern_only)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("http://{}/mcp", bound.local_addr());
    tokio::spawn(bound.serve_until(std::future::pending()));
    let (status, _, body) = call(&url, "server/discover", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["supportedVersions"],
        json!(["2026-07-28"]),
        "{body}"
    );
    let (status, _, body) = send(legacy(&url, initialize)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_code(&body), -32022, "{body}");
    assert_eq!(
        body["error"]["data"]["supported"],
        json!(["2026-07-28"]),
        "{body}"
    );
    let (status, _, body) = send(legacy(
        &url,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "deploy_wizard", "arguments": {"service": "api"}
        }}),
    ))
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["code"].is_i64(), "{body}");
}

// ------------------------------------------------- finding 5: malformed messages

#[tokio::test]
async fn malformed_messages_get_parse_and_invalid_request_errors() {
    let url = showcase().await;
    let client = reqwest::Client::new();
    let cases: [(&[u8], i64); 9] = [
        (b"{\"jsonrpc\":\"2.0\",\"id\":1,", -32700),
        (b"\xff\xfe{}", -32700),
        (
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            -32600,
        ),
        (br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#, -32600),
        (
            br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
            -32600,
        ),
    ];
    for (bytes, code) in cases {
        let (status, content_type, body) = send(
            client
                .post(&url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/list")
                .body(bytes.to_vec()),
        )
        .await;
        let shown = String::from_utf8_lossy(bytes);
        assert_eq!(status, 400, "{shown}: {body}");
        assert!(
            content_type.starts_with("application/json"),
            "{shown}: {content_type}"
        );
        assert_eq!(error_code(&body), code, "{shown}: {body}");
        assert_eq!(body["jsonrpc"], "2.0");
    }
}

// --------------------------------------------------- finding 6: unknown names

#[tokio::test]
async fn unknown_tools_prompts_and_resources_are_invalid_params() {
    let url = showcase().await;
    let unknown = [
        (
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
            "no_such_tool",
        ),
        (
            "prompts/get",
            json!({"name": "no_such_prompt"}),
            "no_such_prompt",
        ),
        (
            "resources/read",
            json!({"uri": "vault://nothing/here"}),
            "vault://nothing/here",
        ),
    ];
    for (method, params, name) in unknown {
        let (status, content_type, body) = call(&url, method, params).await;
        assert_eq!(status, 200, "{method}: {body}");
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        assert_eq!(error_code(&body), -32602, "{method}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(name),
            "{body}"
        );
    }
}

// ------------------------------------------------ request bodies over the cap, or cut short

/// A body over `max_body_bytes` gets `413` as a JSON-RPC error whether its size is announced
/// (`Content-Length`, refused before it is read) or only found while reading (chunked); a
/// body that ends early (the client shuts its side before `Content-Length` bytes) is a
/// `400` "could not be read", not a `413`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_bodies_get_413_and_truncated_ones_400() {
    let server =
        ChildServer::start("bodies", "", &["--max-body-bytes", "1000"], &[]).expect("starts");
    let head = |framing: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: server/discover\r\n{framing}\r\n\r\n",
            server.port
        )
    };
    let exchange = |request: Vec<u8>, half_close: bool| async move {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        stream.write_all(&request).await.unwrap();
        if half_close {
            stream.shutdown().await.unwrap();
        }
        read_until_closed(&mut stream, Duration::from_secs(20))
            .await
            .expect("the server answers and closes")
    };

    let announced = exchange(head("Content-Length: 5000").into_bytes(), false).await;
    assert!(announced.starts_with("HTTP/1.1 413"), "{announced}");
    assert!(announced.contains("-32600"), "{announced}");

    let mut chunked = head("Transfer-Encoding: chunked").into_bytes();
    for _ in 0..5 {
        chunked.extend_from_slice(format!("{:x}\r\n{}\r\n", 500, " ".repeat(500)).as_bytes());
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let streamed = exchange(chunked, false).await;
    assert!(streamed.starts_with("HTTP/1.1 413"), "{streamed}");
    assert!(
        streamed.contains("exceeds this server's 1000 bytes"),
        "{streamed}"
    );

    let mut truncated = head("Content-Length: 500").into_bytes();
    truncated.extend_from_slice(b"{\"jsonrpc\": \"2.0\"");
    let cut = exchange(truncated, true).await;
    assert!(cut.starts_with("HTTP/1.1 400"), "{cut}");
    assert!(cut.contains("the request body could not be read"), "{cut}");
}

// ------------------------------------------------ finding 7: oversized state

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_input_that_overflows_the_state_is_invalid_params_logged_rarely() {
    let server = ChildServer::start("oversize", "", &[], &[("RUST_LOG", "warn")]).expect("starts");
    let service = "s".repeat(70_000);
    for _ in 0..20 {
        let (status, _, body) = call(
            &server.url(),
            "tools/call",
            json!({"name": "deploy_wizard", "arguments": {"service": service}}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(error_code(&body), -32602, "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("too large"),
            "{body}"
        );
    }
    let stderr = server.stderr();
    assert!(!stderr.contains("ERROR"), "{stderr}");
    let warnings = stderr
        .lines()
        .filter(|line| line.contains("size limit"))
        .count();
    assert_eq!(warnings, 1, "one WARN for 20 oversized calls: {stderr}");
}

// ------------------------------------------------- finding 8: MRTR_KEYS length

#[test]
fn a_short_key_is_reported_as_the_wrong_length() {
    let failure = ChildServer::start("shortkey", "", &[], &[("MRTR_KEYS", "1:short")])
        .err()
        .expect("the server refuses to start");
    assert!(failure.contains("5 characters"), "{failure}");
    assert!(failure.contains("43 base64url characters"), "{failure}");
    assert!(!failure.contains("not valid base64url"), "{failure}");
}

// ----------------------------------------- finding 9: two Authorization headers

#[tokio::test]
async fn two_authorization_headers_are_refused() {
    let url = showcase().await;
    let client = reqwest::Client::new();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.append("Authorization", "Bearer alice".parse().unwrap());
    headers.append("Authorization", "Bearer mallory".parse().unwrap());
    let (status, _, body) =
        send(request(&client, &url, "tools/list", json!({})).headers(headers)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_code(&body), -32600);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Authorization"),
        "{body}"
    );
    let (status, _, _) = send(
        request(&client, &url, "tools/list", json!({})).header("Authorization", "Bearer alice"),
    )
    .await;
    assert_eq!(status, 200);
}

// --------------------------------------------- finding 10: debug logs and secrets

/// Round 1 and its retry of the deploy wizard; returns the state the server sealed.
async fn deploy_two_rounds(url: &str, marker: &str) -> String {
    let (_, _, round1) = call(
        url,
        "tools/call",
        json!({"name": "deploy_wizard", "arguments": {"service": marker}}),
    )
    .await;
    let state = round1["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_string();
    let (_, _, round2) = call(
        url,
        "tools/call",
        json!({"name": "deploy_wizard", "arguments": {"service": marker}, "requestState": state,
               "inputResponses": {"environment": {"action": "accept", "content": {"choice": "staging"}}}}),
    )
    .await;
    assert_eq!(round2["result"]["resultType"], "input_required", "{round2}");
    state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recommended_log_filter_keeps_payloads_and_tokens_out() {
    let marker = "svc-marker-7f3a";
    // The hazard the README documents: rmcp logs requests and results at debug.
    let noisy = ChildServer::start("debuglog", "", &[], &[("RUST_LOG", "debug")]).expect("starts");
    let state = deploy_two_rounds(&noisy.url(), marker).await;
    let log = noisy.stderr();
    assert!(
        log.contains(marker) && log.contains(&state[..40]),
        "RUST_LOG=debug shows payloads"
    );
    // The recommended filter: debug for everything but rmcp's message dumps.
    let quiet = ChildServer::start("quietlog", "", &[], &[("RUST_LOG", "debug,rmcp=info")])
        .expect("starts");
    let state = deploy_two_rounds(&quiet.url(), marker).await;
    let log = quiet.stderr();
    assert!(log.contains("INFO"), "the log is still on: {log}");
    assert!(!log.contains(marker), "arguments leak: {log}");
    assert!(!log.contains(&state[..40]), "requestState leaks: {log}");
    assert!(!log.contains("staging"), "answers leak: {log}");
}

// ------------------------------------------ finding 11: no elicitationId on the wire
// ---------------------------------------------- finding 13: out-of-band approval

#[tokio::test]
async fn url_elicitations_carry_no_elicitation_id_and_approval_is_checked_out_of_band() {
    let url = showcase().await;
    let read = json!({"uri": "vault://team/keys"});
    let (status, content_type, round1) = call(&url, "resources/read", read.clone()).await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let params = &round1["result"]["inputRequests"]["consent"]["params"];
    assert_eq!(params["mode"], "url", "{round1}");
    assert!(params.get("elicitationId").is_none(), "{round1}");
    let page = params["url"].as_str().unwrap().to_string();
    let state = round1["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let accept = json!({"consent": {"action": "accept"}});

    // An eager `accept` on a first call without state proves nothing.
    let mut eager = read.clone();
    eager["inputResponses"] = accept.clone();
    let (_, _, answer) = call(&url, "resources/read", eager).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");

    // Neither does `accept` on the retry before the page recorded an approval.
    let mut retry = read.clone();
    retry["inputResponses"] = accept.clone();
    retry["requestState"] = json!(state);
    let (_, _, answer) = call(&url, "resources/read", retry).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    let message = answer["result"]["inputRequests"]["consent"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("no approval"), "{message}");
    let state = answer["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();

    // The user approves on the page; now the same answer opens the vault.
    let http = reqwest::Client::new();
    let shown = http.get(&page).send().await.unwrap();
    assert_eq!(shown.status(), 200);
    let approved = http.post(&page).send().await.unwrap();
    assert_eq!(approved.status(), 200);
    let mut retry = read.clone();
    retry["inputResponses"] = accept;
    retry["requestState"] = json!(state);
    let (_, _, answer) = call(&url, "resources/read", retry).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    let text = answer["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("deploy-key"), "{text}");
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mrtr-showcase",
        "finding 12: a completed resources/read names the server"
    );
}

// ------------------------------------------------ finding 12: serverInfo on lists

#[tokio::test]
async fn list_results_carry_server_info() {
    let url = showcase().await;
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        let (status, _, body) = call(&url, method, json!({})).await;
        assert_eq!(status, 200, "{method}: {body}");
        assert_eq!(
            body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mrtr-showcase",
            "{method}: {body}"
        );
    }
}

// ------------------------------------------------------- entry points

/// `http::serve` and `HttpServing::serve` bind the address and answer there until they are
/// stopped (here: until their task is aborted); neither returns on its own.
#[tokio::test]
async fn serve_and_http_serving_serve_answer_until_stopped() {
    for entry in ["http::serve", "HttpServing::serve"] {
        // A port that was free a moment ago: `serve` takes an address, not a listener.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap();
        let showcase = server::showcase_server().unwrap();
        let task = match entry {
            "http::serve" => tokio::spawn(mrtr::server::http::serve(showcase, addr)),
            _ => tokio::spawn(mrtr::server::http::HttpServing::new(showcase).serve(addr)),
        };
        // Wait until it accepts connections, or stops (bounded; never asserted on).
        for _ in 0..250 {
            if task.is_finished() || TcpStream::connect(addr).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            !task.is_finished(),
            "{entry} returned before being stopped: {:?}",
            task.await
        );
        let (status, _, body) = call(&format!("http://{addr}/mcp"), "tools/list", json!({})).await;
        assert_eq!(status, 200, "{entry}: {body}");
        assert_eq!(
            body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mrtr-showcase",
            "{entry}: {body}"
        );
        task.abort();
    }
}

/// `bind` reports the connection cap in effect: the one configured (at least 1), or by
/// default 1024 capped at half the open-file limit.
#[tokio::test]
async fn bind_reports_the_connection_cap_in_effect() {
    async fn cap(
        tune: impl FnOnce(mrtr::server::http::HttpServing) -> mrtr::server::http::HttpServing,
    ) -> usize {
        let serving = tune(mrtr::server::http::HttpServing::new(
            server::showcase_server().unwrap(),
        ));
        serving
            .bind("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap()
            .max_connections()
    }
    assert_eq!(cap(|serving| serving.max_connections(3)).await, 3);
    assert_eq!(cap(|serving| serving.max_connections(0)).await, 1);
    // Any machine that runs this suite allows more than 3 open files.
    let default = cap(|serving| serving).await;
    assert!((2..=1024).contains(&default), "{default}");
}

// ------------------------------------------------------- graceful shutdown

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_accepting_and_finishes_the_request_in_flight() {
    let mut server = ChildServer::start("shutdown", "", &[], &[]).expect("starts");
    let body = discover_body();
    let (head_part, rest) = body.split_at(body.len() / 2);
    let mut in_flight = TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    in_flight
        .write_all(raw_post_head(server.port, body.len()).as_bytes())
        .await
        .unwrap();
    in_flight.write_all(head_part.as_bytes()).await.unwrap();
    // The request is being read when SIGTERM arrives.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // New connections are refused once the listener is closed.
    let mut refused = false;
    for _ in 0..50 {
        if TcpStream::connect(("127.0.0.1", server.port))
            .await
            .is_err()
        {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(refused, "the listener closes on SIGTERM");
    // The request in flight still gets its answer.
    in_flight.write_all(rest.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut in_flight, Duration::from_secs(20))
        .await
        .expect("the connection closes after the answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("supportedVersions"), "{answer}");
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "{exit}");
    assert!(server.stderr().contains("in-flight requests finished"));
}

// ----------------------------------------------------- process-local key warning

#[test]
fn a_server_without_keys_says_so_on_stderr_once_without_a_subscriber() {
    if std::env::var_os("MRTR_HTTP_TEST_CHILD").is_some() {
        // The child: no tracing subscriber at all, two servers without keys.
        for _ in 0..2 {
            let _ = server::showcase_server().expect("builds");
        }
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_server_without_keys_says_so_on_stderr_once_without_a_subscriber",
            "--nocapture",
        ])
        .env("MRTR_HTTP_TEST_CHILD", "1")
        .env_remove("MRTR_KEYS")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("no MRTR_KEYS set").count(), 1, "{stderr}");
}

/// What every host renders: a form's fields in the order the struct declares them, each
/// with a title, the bounds the server checks, a title on the built-in single-field
/// questions, and the tool's name (not a generated type's) as its arguments' title — all on
/// the wire, as a client of any SDK parses it.
#[tokio::test]
async fn questions_reach_the_wire_titled_bounded_and_in_declaration_order() {
    let url = showcase().await;
    let (_, _, body) = call(
        &url,
        "tools/call",
        json!({"name": "order_food", "arguments": {"customer": "Ada"}}),
    )
    .await;
    let schema = &body["result"]["inputRequests"]["dish"]["params"]["requestedSchema"];
    let properties = schema["properties"].as_object().expect("a form schema");
    let order: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(order, ["dish", "quantity", "more"], "{schema}");
    for (name, property) in properties {
        assert!(
            property["title"].is_string(),
            "{name} has no title: {schema}"
        );
    }
    assert_eq!(properties["quantity"]["title"], "How many");
    assert_eq!(
        (
            &properties["quantity"]["minimum"],
            &properties["quantity"]["maximum"]
        ),
        (&json!(1), &json!(20))
    );

    let (_, _, body) = call(
        &url,
        "tools/call",
        json!({"name": "deploy_wizard", "arguments": {"service": "api"}}),
    )
    .await;
    let question = &body["result"]["inputRequests"]["environment"]["params"];
    let field = &question["requestedSchema"]["properties"]["choice"];
    assert_eq!(field["title"], question["message"], "{question}");

    let (_, _, body) = call(&url, "tools/list", json!({})).await;
    let tools = body["result"]["tools"].as_array().expect("a tool list");
    for tool in tools {
        assert_eq!(tool["inputSchema"]["title"], tool["name"], "{tool}");
    }
}
