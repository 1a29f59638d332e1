//! A flood of bad input leaves a bounded log: at most one WARN line per minute per kind
//! (with the count of the ones skipped), never the client's own text at WARN or ERROR, and
//! no task id at INFO or above; clients that leave before their reply (closing, resetting,
//! or aborting their body) leave no ERROR line at all; and with
//! `mrtr::server::RMCP_LOG_DIRECTIVES` rmcp's per-request lines (`response error` at WARN
//! for every error reply) stay out. Driven through the real HTTP server on 127.0.0.1, with
//! a global subscriber writing every line at INFO and above into two buffers: one with the
//! directives (asserted on) and one without (printed as figures, with `--nocapture`).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr::machine::Elicited;
use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};

/// What the attacker puts in every bad request; no log line at WARN or ERROR may hold it.
const MARKER: &str = "ZZ-CLIENT-MARKER-7f3a";

/// How many of each bad-input class the flood sends.
const FLOOD: usize = 200;

#[mrtr::tool]
async fn asks() -> String {
    match ask!(confirm("Go?")) {
        Elicited::Accept(true) => "yes".to_string(),
        _ => "no".to_string(),
    }
}

/// Answers after a moment: long enough for a client to leave first.
#[mrtr::tool]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_millis(30)).await;
    "late".to_string()
}

#[mrtr::tool(task = "required")]
async fn background() -> String {
    "done".to_string()
}

/// Every formatted log line, shared with the subscriber.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

async fn serve() -> SocketAddr {
    let server = McpServer::builder("log-flood")
        .keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([5; 32])))
        .tool(asks)
        .tool(slow)
        .tool(background)
        .build()
        .unwrap();
    let bound = HttpServing::new(server)
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind");
    let addr = bound.local_addr();
    tokio::spawn(bound.serve());
    addr
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn meta(tasks: bool) -> Value {
    let mut capabilities = json!({"elicitation": {"form": {}}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "log-flood", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// Posts `body` as a 2026-07-28 request and returns the response body.
async fn post(
    http: &reqwest::Client,
    addr: SocketAddr,
    method: &str,
    name: Option<&str>,
    body: String,
) -> String {
    let mut request = http.post(format!("http://{addr}/mcp"));
    if let Some(name) = name {
        request = request.header("Mcp-Name", name);
    }
    request
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .body(body)
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body")
}

/// How a client leaves before its reply.
#[derive(Clone, Copy)]
enum Leave {
    /// Sends a whole request, then closes (FIN) before the reply.
    Closes,
    /// Sends a whole request, then resets the connection (RST).
    Resets,
    /// Declares a body, sends part of it, then closes.
    AbortsTheBody,
}

/// One raw request of `slow` on a fresh connection, left as `leave` says after `after`
/// (spread around the moment `slow` answers); waits for the server to notice.
async fn leave_early(addr: SocketAddr, leave: Leave, after: Duration) {
    use tokio::io::AsyncWriteExt;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let params = json!({"name": "slow", "arguments": {"note": MARKER}, "_meta": meta(false)});
    let body =
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: slow\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    match leave {
        Leave::Closes | Leave::Resets => stream.write_all(body.as_bytes()).await.unwrap(),
        Leave::AbortsTheBody => stream.write_all(&body.as_bytes()[..10]).await.unwrap(),
    }
    tokio::time::sleep(after).await;
    if let Leave::Resets = leave {
        stream.set_zero_linger().unwrap();
    } else {
        let _ = stream.shutdown().await;
    }
    drop(stream);
    // Long enough for `slow` to answer into the closed connection.
    tokio::time::sleep(Duration::from_millis(40)).await;
}

async fn rpc(http: &reqwest::Client, addr: SocketAddr, method: &str, params: Value) -> Value {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str);
    let text = post(http, addr, method, name, body.to_string()).await;
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_bad_input_leaves_a_bounded_log_without_client_text() {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // `lines`: what a server logging at INFO with `RMCP_LOG_DIRECTIVES` shows, asserted on;
    // `raw`: everything at INFO, for the figures.
    let (lines, raw) = (Lines::default(), Lines::default());
    let (writer, raw_writer) = (lines.clone(), raw.clone());
    let directives = format!("info,{}", mrtr::server::RMCP_LOG_DIRECTIVES);
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .with_filter(tracing_subscriber::EnvFilter::new(directives)),
        )
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(move || raw_writer.clone())
                .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
        )
        .init();
    let addr = serve().await;
    let http = reqwest::Client::new();

    // A real round, whose token the flood then tampers with.
    let first = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "asks", "arguments": {}, "_meta": meta(false)}),
    )
    .await;
    let token = first["result"]["requestState"]
        .as_str()
        .expect("a token")
        .to_string();

    // 200 bad requestStates: garbage, a real token with the marker appended, and a
    // token-shaped forgery.
    for i in 0..FLOOD {
        let state = match i % 3 {
            0 => format!("{MARKER}-{i}"),
            1 => format!("{token}{MARKER}"),
            _ => format!("mrtr3.{MARKER}.{MARKER}.{i}"),
        };
        let params = json!({
            "name": "asks",
            "arguments": {},
            "requestState": state,
            "inputResponses": {"ask_0": {"action": "accept", "content": {"confirm": MARKER}}},
            "_meta": meta(false),
        });
        let reply = rpc(&http, addr, "tools/call", params).await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }

    // 200 malformed requests: params of the wrong shape, and bodies that are not JSON.
    for i in 0..FLOOD {
        match i % 4 {
            0 => {
                let params = json!({"name": "asks", "arguments": MARKER, "_meta": meta(false)});
                let reply = rpc(&http, addr, "tools/call", params).await;
                assert!(reply.get("error").is_some(), "{reply}");
            }
            1 => {
                let params = json!({"taskId": [MARKER], "_meta": meta(true)});
                let reply = rpc(&http, addr, "tasks/get", params).await;
                assert!(reply.get("error").is_some(), "{reply}");
            }
            2 => {
                let params = json!({"name": "asks", "arguments": {}, "requestState": 7, "_meta": meta(false)});
                let reply = rpc(&http, addr, "tools/call", params).await;
                assert!(reply.get("error").is_some(), "{reply}");
            }
            _ => {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{MARKER}}}"#
                );
                let _ = post(&http, addr, "tools/call", Some("asks"), body).await;
            }
        }
    }

    // 600 clients that leave before their reply: they close, reset, or abort the body.
    for leave in [Leave::Closes, Leave::Resets, Leave::AbortsTheBody] {
        let after = |i: usize| Duration::from_millis((i % 40) as u64);
        futures::future::join_all((0..FLOOD).map(|i| leave_early(addr, leave, after(i)))).await;
    }

    // One task: its id must not reach INFO or above.
    let created = rpc(
        &http,
        addr,
        "tools/call",
        json!({"name": "background", "arguments": {}, "_meta": meta(true)}),
    )
    .await;
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_string();
    for _ in 0..500 {
        let got = rpc(
            &http,
            addr,
            "tasks/get",
            json!({"taskId": task, "_meta": meta(true)}),
        )
        .await;
        if got["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = rpc(
        &http,
        addr,
        "tasks/cancel",
        json!({"taskId": task, "_meta": meta(true)}),
    )
    .await;

    let text = lines.text();
    let at = |level: &str| -> Vec<&str> {
        text.lines()
            .filter(|line| line.contains(&format!(" {level} ")))
            .collect()
    };
    let (warn, error, info) = (at("WARN"), at("ERROR"), at("INFO"));
    let ours: Vec<&&str> = warn
        .iter()
        .chain(&error)
        .filter(|line| line.contains(" mrtr"))
        .collect();
    let echoing: Vec<&&str> = warn
        .iter()
        .chain(&error)
        .filter(|line| line.contains(MARKER))
        .collect();
    let naming_the_task: Vec<&&str> = warn
        .iter()
        .chain(&error)
        .chain(&info)
        .filter(|line| line.contains(&task))
        .collect();
    let summary = format!(
        "WARN {}, ERROR {}, INFO {}; ours at WARN/ERROR {}:\n{}\nechoing the client:\n{}\nnaming the task:\n{}",
        warn.len(),
        error.len(),
        info.len(),
        ours.len(),
        ours.iter()
            .take(10)
            .map(|l| **l)
            .collect::<Vec<_>>()
            .join("\n"),
        echoing
            .iter()
            .take(5)
            .map(|l| **l)
            .collect::<Vec<_>>()
            .join("\n"),
        naming_the_task
            .iter()
            .take(5)
            .map(|l| **l)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    eprintln!("{summary}");
    if let Some(path) = std::env::var_os("LOG_FLOOD_DUMP") {
        let _ = std::fs::write(path, raw.text());
    }
    // Lines per level for the 1,000 bad requests (and the few good ones), with and
    // without the directives.
    let raw_text = raw.text();
    let per_level = |text: &str| {
        ["ERROR", "WARN", "INFO"]
            .map(|level| {
                let n = text
                    .lines()
                    .filter(|line| line.contains(&format!(" {level} ")))
                    .count();
                format!("{level} {n}")
            })
            .join(", ")
    };
    eprintln!(
        "log lines: everything at INFO: {}; at INFO with RMCP_LOG_DIRECTIVES: {}",
        per_level(&raw_text),
        per_level(&text)
    );
    // Clients that leave early are not errors: not one ERROR line, from us or from rmcp.
    assert!(error.is_empty(), "{summary}");
    let raw_errors: Vec<&str> = raw_text
        .lines()
        .filter(|line| line.contains(" ERROR "))
        .take(5)
        .collect();
    assert!(raw_errors.is_empty(), "{raw_errors:#?}");
    // rmcp's per-request lines are demoted by the directives: no "response error" WARN.
    assert!(
        !text.contains("response error"),
        "{}",
        warn.iter().take(5).copied().collect::<Vec<_>>().join("\n")
    );
    assert!(ours.len() <= 3, "{summary}");
    assert!(echoing.is_empty(), "{summary}");
    assert!(naming_the_task.is_empty(), "{summary}");
}
