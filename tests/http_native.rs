//! The native 2026-07-28 path of `mrtr::server::http`, over real TCP on 127.0.0.1: what a
//! conforming client sends is answered natively (no rmcp service starts for it), with the
//! same answer rmcp's path gives; what needs rmcp (a fallback tool that streams progress)
//! still goes through rmcp and streams; a body too deep for the parser gets the same
//! parse error either way; a JSON-RPC batch gets the gate's refusal either way; and a
//! `Host` is allowed on one path exactly when it is on the other.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr::rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use mrtr::rmcp::model::{ProgressNotificationParam, ServerCapabilities, ServerConfig};
use mrtr::rmcp::service::RequestContext;
use mrtr::rmcp::{ErrorData, RoleServer, ServerHandler};
use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};

/// Asks, then answers with what it was told.
#[mrtr::tool]
async fn confirm_it() -> String {
    let go = ask!(confirm("Go?")).ok().unwrap_or(false);
    format!("confirmed: {go}")
}

/// A hand-written rmcp server behind the machines: its tool reports progress first.
#[derive(Clone)]
struct Progressing;

impl ServerHandler for Progressing {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::default();
        info.capabilities = ServerCapabilities::builder().enable_tools().build();
        info
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(token) = context.meta.get_progress_token() {
            let _ = context
                .peer
                .notify_progress(ProgressNotificationParam::new(token, 0.5))
                .await;
        }
        Ok(
            CallToolResult::success(vec![ContentBlock::text(format!("done: {}", request.name))])
                .into(),
        )
    }
}

fn keys() -> KeyRing {
    KeyRing::new(KeyId(1), SecretKey::from_bytes([9; 32]))
}

async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}/mcp")
}

async fn serve_plain() -> String {
    let server = McpServer::builder("native")
        .keys(keys())
        .tool(confirm_it)
        .build()
        .unwrap();
    serve_router(HttpServing::new(server).into_router()).await
}

/// A 2026-07-28 request as a conforming client sends it; `origin` adds an (allowed)
/// browser `Origin`, which sends the request the rmcp way.
fn post(
    url: &str,
    method: &str,
    mut params: Value,
    origin: Option<&str>,
) -> reqwest::RequestBuilder {
    let meta = params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert(json!({}));
    for (key, value) in client_meta().as_object().unwrap() {
        meta[key] = value.clone();
    }
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
    post_body(url, method, name.as_deref(), body.to_string(), origin)
}

/// The `_meta` a conforming 2026-07-28 client sends.
fn client_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    })
}

/// `body` posted with the headers a conforming 2026-07-28 client sends for `method`.
fn post_body(
    url: &str,
    method: &str,
    name: Option<&str>,
    body: String,
    origin: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut builder = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = name {
        builder = builder.header("Mcp-Name", name);
    }
    if let Some(origin) = origin {
        builder = builder.header("Origin", origin);
    }
    builder.body(body)
}

/// Status, content type and body text.
async fn send(builder: reqwest::RequestBuilder) -> (u16, String, String) {
    let response = builder.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, content_type, response.text().await.unwrap())
}

/// Log lines, written by a test's subscriber.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Log lines written while `work` runs on this (current-thread) runtime.
async fn logged<T>(work: impl std::future::Future<Output = T>) -> (T, String) {
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    let out = work.await;
    let text = String::from_utf8_lossy(&lines.0.lock().unwrap()).into_owned();
    (out, text)
}

/// rmcp's service logs this as each request's service starts (with the request's peer
/// info); the native path starts none.
const RMCP_SERVICE_STARTED: &str = "Service initialized as server peer_info=Some";

#[tokio::test]
async fn native_answers_equal_the_rmcp_paths_and_start_no_rmcp_service() {
    let url = serve_plain().await;
    for (method, params) in [
        ("tools/list", json!({})),
        ("server/discover", json!({})),
        ("prompts/list", json!({})),
        ("ping", json!({})),
        (
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        ),
    ] {
        let (native, native_log) = logged(send(post(&url, method, params.clone(), None))).await;
        let (through_rmcp, rmcp_log) = logged(send(post(
            &url,
            method,
            params,
            Some("http://localhost:3000"),
        )))
        .await;
        assert!(
            !native_log.contains(RMCP_SERVICE_STARTED),
            "{method}: served natively: {native_log}"
        );
        assert!(
            rmcp_log.contains(RMCP_SERVICE_STARTED),
            "{method}: an Origin goes the rmcp way: {rmcp_log}"
        );
        assert_eq!(native.0, through_rmcp.0, "{method}: status");
        assert_eq!(native.1, "application/json", "{method}");
        assert_eq!(native.1, through_rmcp.1, "{method}: content type");
        let native_body: Value = serde_json::from_str(&native.2).unwrap();
        let rmcp_body: Value = serde_json::from_str(&through_rmcp.2).unwrap();
        assert_eq!(native_body, rmcp_body, "{method}: the same answer");
    }
}

#[tokio::test]
async fn a_flow_completes_natively_as_plain_json() {
    let url = serve_plain().await;
    let call = json!({"name": "confirm_it", "arguments": {}});
    let ((status, content_type, text), log) =
        logged(send(post(&url, "tools/call", call.clone(), None))).await;
    assert!(!log.contains(RMCP_SERVICE_STARTED), "{log}");
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    let round1: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(round1["result"]["resultType"], "input_required", "{round1}");
    // Every result names the server, written into its `_meta` as the reply is written.
    let server_info = "io.modelcontextprotocol/serverInfo";
    assert_eq!(
        round1["result"]["_meta"][server_info]["name"], "native",
        "{round1}"
    );
    let state = round1["result"]["requestState"].as_str().unwrap();
    let key = round1["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = call;
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({ key: {"action": "accept", "content": {"confirm": true}} });
    let (status, content_type, text) = send(post(&url, "tools/call", retry, None)).await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    let done: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "confirmed: true",
        "{done}"
    );
    assert_eq!(
        done["result"]["_meta"][server_info]["name"], "native",
        "{done}"
    );
}

/// Arguments nested `depth` objects deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!({ "a": inner }))
}

#[tokio::test]
async fn a_body_deeper_than_the_parser_takes_gets_the_parse_error_a_shallow_one_is_served() {
    let url = serve_plain().await;
    let deep = json!({"name": "confirm_it", "arguments": nested(200)});
    let (status, _, text) = send(post(&url, "tools/call", deep, None)).await;
    let refused: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (status, refused["error"]["code"].as_i64()),
        (400, Some(-32700)),
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("recursion limit")),
        "{refused}"
    );
    let shallow = json!({"name": "confirm_it", "arguments": nested(20)});
    let (status, _, text) = send(post(&url, "tools/call", shallow, None)).await;
    let served: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(status, 200, "{served}");
    assert_eq!(served["result"]["resultType"], "input_required", "{served}");
}

#[tokio::test]
async fn a_batch_gets_the_gates_refusal_on_both_paths_never_a_native_answer() {
    let url = serve_plain().await;
    let params = json!({"_meta": client_meta()});
    for batch in [
        // serde reads a struct from an array's elements in order: this one would pass for
        // a `tools/list` request if arrays were read as envelopes.
        json!(["2.0", 5, "tools/list", params]),
        json!([{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": params}]),
    ] {
        for origin in [None, Some("http://localhost:3000")] {
            let body = format!(" \n{batch}");
            let (status, _, text) = send(post_body(&url, "tools/list", None, body, origin)).await;
            let answer: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                (status, answer["error"]["code"].as_i64()),
                (400, Some(-32600)),
                "{batch} (origin {origin:?}): {answer}"
            );
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .is_some_and(|message| message.contains("batches are not supported")),
                "{answer}"
            );
        }
    }
}

#[tokio::test]
async fn allowed_hosts_of_blank_entries_allow_no_host_on_either_path() {
    let server = McpServer::builder("native-hosts")
        .keys(keys())
        .tool(confirm_it)
        .build()
        .unwrap();
    // rmcp skips blank entries and, its list not being empty, allows no host.
    let url = serve_router(
        HttpServing::new(server)
            .allowed_hosts(["", " "])
            .into_router(),
    )
    .await;
    let native = send(post(&url, "tools/list", json!({}), None)).await;
    let through_rmcp = send(post(
        &url,
        "tools/list",
        json!({}),
        Some("http://localhost:3000"),
    ))
    .await;
    assert_eq!(native.0, 403, "{}", native.2);
    assert_eq!(native, through_rmcp);
}

#[tokio::test]
async fn a_fallback_tool_that_reports_progress_streams_through_rmcp() {
    let server = McpServer::builder("native-fallback")
        .keys(keys())
        .tool(confirm_it)
        .build_with(Progressing)
        .unwrap();
    let url = serve_router(HttpServing::new(server).into_router()).await;
    let call = json!({"name": "hand_written", "arguments": {}, "_meta": {"progressToken": "p1"}});
    let (status, content_type, text) = send(post(&url, "tools/call", call, None)).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}: {text}"
    );
    assert!(text.contains("notifications/progress"), "{text}");
    assert!(text.contains("done: hand_written"), "{text}");
    // Its machine tool is still served natively.
    let (machine, log) = logged(send(post(
        &url,
        "tools/call",
        json!({"name": "confirm_it", "arguments": {}}),
        None,
    )))
    .await;
    assert_eq!((machine.0, machine.1.as_str()), (200, "application/json"));
    assert!(!log.contains(RMCP_SERVICE_STARTED), "{log}");
}

/// On the native path, as on every other, a rejected `requestState` is explained on the
/// round's `mrtr.round` span (its outcome and the specific reason), and only there: the
/// presentation is opened before the round's future first runs, inside that span.
#[tokio::test]
async fn a_rejected_state_is_explained_on_the_rounds_span_on_the_native_path() {
    let url = serve_plain().await;
    let params = json!({"name": "confirm_it", "arguments": {}});
    let (status, _, body) = send(post(&url, "tools/call", params, None)).await;
    assert_eq!(status, 200, "{body}");
    let asked: Value = serde_json::from_str(&body).unwrap();
    let token = asked["result"]["requestState"]
        .as_str()
        .expect("a requestState");

    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let tampered = json!({
        "name": "confirm_it",
        "arguments": {},
        "requestState": format!("{token}x"),
        "inputResponses": {},
    });
    let (status, _, body) = {
        let _default = tracing::subscriber::set_default(subscriber);
        send(post(&url, "tools/call", tampered, None)).await
    };
    assert_eq!(status, 200, "{body}");
    let refused: Value = serde_json::from_str(&body).unwrap();
    assert!(refused["error"]["code"].is_i64(), "refused: {body}");
    let log = String::from_utf8_lossy(&lines.0.lock().unwrap()).into_owned();
    let round = log
        .lines()
        .find(|line| line.contains("mrtr.round") && line.contains("close"))
        .unwrap_or_else(|| panic!("no closed mrtr.round span in:\n{log}"));
    assert!(round.contains("outcome=\"rejected\""), "{round}");
    assert!(
        round.contains("rejection=\"malformed\"") || round.contains("rejection=\"unauthentic\""),
        "{round}"
    );
    // The client is told only that its state was refused.
    assert!(
        !body.contains("malformed") && !body.contains("unauthentic"),
        "{body}"
    );
}
