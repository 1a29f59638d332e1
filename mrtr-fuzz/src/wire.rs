//! Target 4: the wire. Arbitrary JSON-RPC params for `tools/call`, `prompts/get`,
//! `resources/read` and the list methods, sent as real JSON-RPC lines through rmcp's own
//! byte-stream transport to an in-process [`McpServer`] serving the machines in
//! [`crate::machines`] (fixed keys and a manual clock, so sealed seeds stay valid).
//!
//! Input: one byte picks the method, one decides whether the 2026-07-28 `_meta` is put
//! into the params, the rest is the params as JSON text.
//!
//! Oracle: every request gets exactly one response with its id, and it is a well-formed
//! result of that method, or an error whose code is one the method may answer with:
//! `-32602` (invalid params: malformed params, unknown name, rejected `requestState`,
//! state too large), `-32021` (missing client capability), `-32600`/`-32022` (the request
//! metadata or protocol version is refused). Never `-32603`, never a dropped connection.

use std::sync::{Arc, Mutex, OnceLock};

use mrtr::server::McpServer;
use mrtr_runtime::token::{KeyId, KeyRing, ManualClock, SecretKey};
use rmcp::ServiceExt;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::runtime::Runtime;

use crate::machines;

const METHODS: [&str; 8] = [
    "tools/call",
    "prompts/get",
    "resources/read",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "server/discover",
];

/// The client's end of the connection.
struct Connection {
    runtime: Runtime,
    to_server: WriteHalf<DuplexStream>,
    from_server: BufReader<ReadHalf<DuplexStream>>,
    next_id: u64,
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}
        }
    })
}

fn server() -> McpServer {
    McpServer::builder("fuzz-wire")
        .keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([0x55; 32])))
        .clock(Arc::new(ManualClock::new(1_800_000_000)))
        .tool(machines::tally)
        .tool(machines::literals)
        .tool(machines::snapshot)
        .tool(machines::sizing)
        .prompt(machines::summary)
        .resource(machines::vault)
        .build()
        .expect("the fuzz server builds")
}

impl Connection {
    fn open() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let (client, server_end) = tokio::io::duplex(1 << 20);
        runtime.spawn(async move {
            if let Ok(running) = server().serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        let (from_server, to_server) = tokio::io::split(client);
        let mut connection = Connection {
            runtime,
            to_server,
            from_server: BufReader::new(from_server),
            next_id: 1,
        };
        // The first complete request picks the 2026-07-28 lifecycle.
        let first = connection.send("tools/list", &json!({"_meta": meta()}).to_string());
        assert!(first.get("result").is_some(), "tools/list: {first}");
        connection
    }

    /// Sends one request whose params are `params` (JSON text) and returns its response.
    fn send(&mut self, method: &str, params: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        self.runtime.block_on(async {
            self.to_server
                .write_all(format!("{line}\n").as_bytes())
                .await
                .expect("the server reads");
            loop {
                let mut reply = String::new();
                let read = self
                    .from_server
                    .read_line(&mut reply)
                    .await
                    .expect("the server writes");
                assert!(read > 0, "the server closed the connection after {line}");
                let message: Value = serde_json::from_str(&reply)
                    .unwrap_or_else(|e| panic!("not JSON from the server ({e}): {reply}"));
                // Notifications and server requests are not the response. A message rmcp's
                // transport cannot read as a request is answered `-32600` with a null id
                // (it does not dig the id out of a message it could not parse).
                let unreadable = message["id"].is_null() && message.get("error").is_some();
                if (message.get("id") == Some(&json!(id)) || unreadable)
                    && message.get("method").is_none()
                {
                    return message;
                }
            }
        })
    }
}

fn connection() -> &'static Mutex<Connection> {
    static CONNECTION: OnceLock<Mutex<Connection>> = OnceLock::new();
    CONNECTION.get_or_init(|| Mutex::new(Connection::open()))
}

/// Checks the shape of a successful result of `method`.
fn check_result(method: &str, result: &Value) {
    let field = |name: &str| result.get(name).unwrap_or(&Value::Null);
    if field("resultType") == "input_required" {
        assert!(
            matches!(method, "tools/call" | "prompts/get" | "resources/read"),
            "{method} asked for input: {result}"
        );
        assert!(
            field("inputRequests").is_object(),
            "no inputRequests: {result}"
        );
        assert!(
            field("requestState")
                .as_str()
                .is_some_and(|s| s.starts_with(mrtr_runtime::token::TOKEN_PREFIX)),
            "no requestState: {result}"
        );
        return;
    }
    let list = |name: &str| {
        assert!(
            field(name).is_array(),
            "{method} without `{name}`: {result}"
        )
    };
    match method {
        "tools/call" => list("content"),
        "prompts/get" => list("messages"),
        "resources/read" => list("contents"),
        "tools/list" => list("tools"),
        "prompts/list" => list("prompts"),
        "resources/list" => list("resources"),
        "resources/templates/list" => list("resourceTemplates"),
        _ => assert!(result.is_object(), "{method}: {result}"),
    }
}

/// Runs one input.
///
/// ```
/// mrtr_fuzz::wire::run(b"\x00\x01{\"name\": \"tally\", \"arguments\": {\"rounds\": 1}}");
/// ```
pub fn run(data: &[u8]) {
    let [method, with_meta, rest @ ..] = data else {
        return;
    };
    let method = METHODS[usize::from(*method) % METHODS.len()];
    let Ok(mut params) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    if with_meta % 2 == 1 {
        match &mut params {
            Value::Object(object) => {
                object.insert("_meta".into(), meta());
            }
            Value::Null => params = json!({"_meta": meta()}),
            _ => {}
        }
    }
    let response = connection()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .send(method, &params.to_string());
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    match (response.get("result"), response.get("error")) {
        (Some(result), None) => check_result(method, result),
        (None, Some(error)) => {
            let code = error["code"].as_i64().unwrap_or_default();
            assert!(
                error["message"].as_str().is_some_and(|m| !m.is_empty()),
                "an error without a message: {response}"
            );
            assert!(
                matches!(code, -32602 | -32021 | -32600 | -32022),
                "{method} {params} → unexpected error code {code}: {response}"
            );
        }
        _ => panic!("neither result nor error: {response}"),
    }
}

/// The seed corpus: a valid request for every method and machine, and retries carrying
/// a real `requestState` with answers.
///
/// ```
/// assert!(mrtr_fuzz::wire::seeds().len() > 8);
/// ```
pub fn seeds() -> Vec<Vec<u8>> {
    let seed = |method: usize, params: Value| {
        [&[method as u8, 1][..], params.to_string().as_bytes()].concat()
    };
    let calls = [
        (0, json!({"name": "tally", "arguments": {"rounds": 2}})),
        (0, json!({"name": "literals", "arguments": {"prod": false}})),
        (
            0,
            json!({"name": "snapshot", "arguments": {"items": ["x", "y"]}}),
        ),
        (0, json!({"name": "sizing"})),
        (1, json!({"name": "summary", "arguments": {"topic": "t"}})),
        (2, json!({"uri": "vault://secret"})),
    ];
    let mut seeds = Vec::new();
    let mut connection = connection()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for (method, params) in calls {
        seeds.push(seed(method, params.clone()));
        // The retry with valid answers to the first round.
        let mut first = params.clone();
        first["_meta"] = meta();
        let reply = connection.send(METHODS[method], &first.to_string());
        let result = &reply["result"];
        if let (Some(state), Some(requests)) = (
            result["requestState"].as_str(),
            result["inputRequests"].as_object(),
        ) {
            let answers: Map<String, Value> = requests
                .iter()
                .filter_map(|(key, request)| {
                    let request = serde_json::from_value(request.clone()).ok()?;
                    Some((key.clone(), crate::answering::valid_answer(&request)))
                })
                .collect();
            let mut retry = params;
            retry["requestState"] = json!(state);
            retry["inputResponses"] = Value::Object(answers);
            seeds.push(seed(method, retry));
        }
    }
    for method in 3..METHODS.len() {
        seeds.push(seed(method, json!({})));
    }
    seeds.push(seed(3, json!({"cursor": "x"})));
    seeds
}
