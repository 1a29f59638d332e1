//! Tools that declare OAuth scopes, served over rmcp's byte-stream transport (what
//! `rmcp::transport::stdio()` is, here on an in-process pipe): such a request carries no
//! HTTP request and no bearer token, so it is granted only the scopes the server's author
//! names with `local_scopes` — none by default, and a scoped tool is refused (fail closed)
//! before its code runs, with an error naming the scopes and how they are granted.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use mrtr::machine::RequestCx;
use mrtr::rmcp::ServiceExt;
use mrtr::server::McpServer;
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines, ReadHalf, WriteHalf};

/// How many times `purge`'s code started.
static PURGE_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Needs `admin`; says which scopes it was granted.
#[mrtr::tool(scopes = ["admin"])]
async fn purge(cx: &RequestCx) -> String {
    PURGE_RUNS.fetch_add(1, Ordering::SeqCst);
    let granted: Vec<&str> = cx.scopes().map(|g| g.iter().collect()).unwrap_or_default();
    format!("purged with {granted:?}")
}

/// Needs nothing.
#[mrtr::tool]
async fn status() -> String {
    "fine".to_string()
}

/// The client's end of a pipe a server is served on.
struct Pipe {
    lines: Lines<BufReader<ReadHalf<tokio::io::DuplexStream>>>,
    write: WriteHalf<tokio::io::DuplexStream>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Pipe {
    /// Serves `server` over rmcp's byte-stream transport on an in-process pipe.
    fn serve(server: McpServer) -> Pipe {
        let (client, server_side) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let running = server
                .serve(tokio::io::split(server_side))
                .await
                .expect("serves");
            let _ = running.waiting().await;
        });
        let (read, write) = tokio::io::split(client);
        Pipe {
            lines: BufReader::new(read).lines(),
            write,
        }
    }

    /// A 2026-07-28 `tools/call` of `name`; its response.
    async fn call(&mut self, name: &str) -> Value {
        self.request(
            "tools/call",
            json!({
                "name": name, "arguments": {},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "stdio-scopes", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }),
        )
        .await
    }

    /// Opens a 2025-11-25 session on the pipe (`initialize`, then `initialized`).
    async fn initialize(&mut self) {
        let initialized = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "stdio-scopes", "version": "0"},
                }),
            )
            .await;
        assert_eq!(
            initialized["result"]["protocolVersion"], "2025-11-25",
            "{initialized}"
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    async fn send(&mut self, message: Value) {
        self.write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    /// One request; its response.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        // A bound on a hang, not a measurement.
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .expect("a line");
        let response: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(response["id"], id, "{response}");
        response
    }
}

fn server(
    configure: impl FnOnce(mrtr::server::McpServerBuilder) -> mrtr::server::McpServerBuilder,
) -> McpServer {
    configure(
        McpServer::builder("stdio-scopes")
            .keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32])))
            .tool(purge)
            .tool(status),
    )
    .build()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_tool_without_http_is_refused_unless_the_server_grants_its_scopes() {
    // No grant: refused before its code runs, naming the scopes and how to grant them.
    let mut pipe = Pipe::serve(server(|builder| builder));
    let runs = PURGE_RUNS.load(Ordering::SeqCst);
    let refused = pipe.call("purge").await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["data"]["requiredScopes"], json!(["admin"]));
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"admin\"") && message.contains("without HTTP"),
        "{message}"
    );
    assert!(message.contains("local_scopes"), "{message}");
    assert_eq!(
        PURGE_RUNS.load(Ordering::SeqCst),
        runs,
        "the tool's code ran"
    );
    // A tool that declares no scope is served as ever.
    let fine = pipe.call("status").await;
    assert_eq!(fine["result"]["content"][0]["text"], "fine", "{fine}");

    // A legacy session's call is held to the same check.
    let mut pipe = Pipe::serve(server(|builder| builder));
    pipe.initialize().await;
    let refused = pipe
        .request("tools/call", json!({"name": "purge", "arguments": {}}))
        .await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("local_scopes")),
        "{refused}"
    );
    assert_eq!(
        PURGE_RUNS.load(Ordering::SeqCst),
        runs,
        "the tool's code ran"
    );

    // A grant that lacks the scope changes nothing.
    let mut pipe = Pipe::serve(server(|builder| builder.local_scopes(["read"])));
    let refused = pipe.call("purge").await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");

    // The server's author grants it: the tool runs, and sees the grant.
    let mut pipe = Pipe::serve(server(|builder| builder.local_scopes(["read", "admin"])));
    let ran = pipe.call("purge").await;
    assert_eq!(
        ran["result"]["content"][0]["text"], "purged with [\"read\", \"admin\"]",
        "{ran}"
    );
}
