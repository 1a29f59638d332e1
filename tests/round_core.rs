//! One round core, three carriers: the same machine behaviours run through MRTR over HTTP,
//! a 2025-11-25 legacy session (rmcp's own client), and a task (2026-07-28 with the tasks
//! extension), all on 127.0.0.1, and each ends the same way — the same result, or the same
//! JSON-RPC code and message — wherever the protocols allow. Where they must differ, the
//! table says why.

#![allow(deprecated)] // sampling is SEP-2577-deprecated but still served

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mrtr::machine::{
    Elicited, Machine, MachineDescriptor, Run, Step, StepFuture, Suspend, TaskSupport, input,
};
use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::token::{KeyId, KeyRing, SecretKey};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ProtocolVersion, Role, SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

/// The cap every server of this test holds calls to.
const CAP: u32 = 3;

/// The deadline on a round's own code every server of this test holds (the rows' other
/// rounds take milliseconds).
const ROUND_TIMEOUT: Duration = Duration::from_millis(250);

#[mrtr::tool]
async fn finishes() -> String {
    "done".to_string()
}

#[mrtr::tool]
async fn asks() -> String {
    match ask!(confirm("Go?")) {
        Elicited::Accept(true) => "yes".to_string(),
        Elicited::Accept(false) => "no".to_string(),
        Elicited::Decline => "declined".to_string(),
        Elicited::Cancel => "cancelled".to_string(),
    }
}

#[mrtr::tool]
async fn panics() -> String {
    let go = ask!(confirm("Go?")).ok().unwrap_or(false);
    let nothing: Option<String> = None;
    if go {
        nothing.expect("a bug in the tool")
    } else {
        "stopped".to_string()
    }
}

/// A state that fails only when it seals: `build()`'s dry read of the state type gives the
/// `NonZeroU32` a made-up `0`, which it refuses, so that read never reaches the JSON value
/// behind it (its blind spot); the seal-time walk of the real value does.
#[mrtr::tool]
async fn keeps_json() -> String {
    let kept = (std::num::NonZeroU32::MIN, serde_json::json!({"a": 1}));
    let _ = ask!(confirm("Go?"));
    kept.1.to_string()
}

#[mrtr::tool]
async fn keeps_a_lot() -> String {
    let kept = "x".repeat(100_000);
    let _ = ask!(confirm("Go?"));
    kept.len().to_string()
}

#[mrtr::tool]
async fn samples() -> String {
    let summary = sample!(prompt("Summarize.")).text().to_string();
    format!("summary: {summary}")
}

#[mrtr::tool]
async fn keeps_asking() -> String {
    let mut rounds = 0u32;
    loop {
        let again = ask!(confirm("Again?")).ok().unwrap_or(false);
        if !again {
            break;
        }
        rounds += 1;
    }
    format!("stopped after {rounds}")
}

/// A step that never returns: it holds its request (and a task's slot) until the server's
/// `round_timeout` drops it.
#[mrtr::tool]
async fn hangs() -> String {
    std::future::pending::<()>().await;
    "never".to_string()
}

/// Asks `a`, then takes an answer to `b`, which it never asked.
struct TakesUnasked(MachineDescriptor);

impl Machine for TakesUnasked {
    type Output = CallToolResult;
    fn descriptor(&self) -> &MachineDescriptor {
        &self.0
    }
    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        Box::pin(async move {
            let Some(mut resume) = run.resume else {
                return Ok(Step::Suspend(
                    Suspend::new(&())?.ask("a", input::confirm("A?"))?,
                ));
            };
            let _: Elicited<bool> = resume.answers().take("b")?;
            Ok(Step::Done(CallToolResult::success(vec![])))
        })
    }
}

fn takes_unasked() -> TakesUnasked {
    let schema = json!({"type": "object"}).as_object().unwrap().clone();
    let tool = rmcp::model::Tool::new("takes_unasked", "Takes b", schema);
    TakesUnasked(MachineDescriptor::tool(
        tool,
        [mrtr::machine::InputKind::FormElicitation],
        7,
    ))
}

/// The same machine, run as a task for clients that declare the extension.
struct AsTask<M>(M, MachineDescriptor);

impl<M: Machine<Output = CallToolResult>> Machine for AsTask<M> {
    type Output = CallToolResult;
    fn descriptor(&self) -> &MachineDescriptor {
        &self.1
    }
    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        self.0.step(run)
    }
}

fn as_task<M: Machine<Output = CallToolResult>>(machine: M) -> AsTask<M> {
    let descriptor = machine
        .descriptor()
        .clone()
        .with_task(TaskSupport::required());
    AsTask(machine, descriptor)
}

async fn serve(tasks: bool) -> SocketAddr {
    serve_with(tasks, mrtr::server::tasks::TaskSettings::default()).await
}

async fn serve_with(tasks: bool, settings: mrtr::server::tasks::TaskSettings) -> SocketAddr {
    let mut builder = McpServer::builder("round-core")
        .task_settings(settings)
        .keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([9; 32])))
        .max_rounds_per_call(CAP)
        .round_timeout(ROUND_TIMEOUT);
    builder = if tasks {
        builder
            .tool(as_task(finishes))
            .tool(as_task(asks))
            .tool(as_task(panics))
            .tool(as_task(keeps_json))
            .tool(as_task(keeps_a_lot))
            .tool(as_task(samples))
            .tool(as_task(keeps_asking))
            .tool(as_task(takes_unasked()))
            .tool(as_task(hangs))
    } else {
        builder
            .tool(finishes)
            .tool(asks)
            .tool(panics)
            .tool(keeps_json)
            .tool(keeps_a_lot)
            .tool(samples)
            .tool(keeps_asking)
            .tool(takes_unasked())
            .tool(hangs)
    };
    let bound = HttpServing::new(builder.build().unwrap())
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("bind");
    let addr = bound.local_addr();
    tokio::spawn(bound.serve());
    addr
}

/// How the scripted user answers every form question.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Answer {
    Yes,
    Decline,
    Cancel,
    Malformed,
}

impl Answer {
    fn response(self) -> Value {
        match self {
            Answer::Yes => json!({"action": "accept", "content": {"confirm": true}}),
            Answer::Decline => json!({"action": "decline"}),
            Answer::Cancel => json!({"action": "cancel"}),
            Answer::Malformed => json!({"action": "accept", "content": {"confirm": "maybe"}}),
        }
    }
}

/// How a call ended: its text, or its JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
enum Ended {
    Text(String),
    Error(i32, String),
}

#[derive(Debug, Clone, Copy)]
enum Carrier {
    Mrtr,
    Legacy,
    Task,
}

/// Where the carriers must differ, and why.
struct Row {
    tool: &'static str,
    answer: Answer,
    expected: Ended,
    /// The legacy session's ending, when it must differ from `expected`.
    legacy: Option<Ended>,
    /// The MRTR ending, when it must differ from `expected`.
    mrtr: Option<Ended>,
}

fn text(s: &str) -> Ended {
    Ended::Text(s.to_string())
}

fn error(code: i32, message: &str) -> Ended {
    Ended::Error(code, message.to_string())
}

fn rows() -> Vec<Row> {
    let internal = "the server failed to process this request";
    vec![
        Row {
            tool: "finishes",
            answer: Answer::Yes,
            expected: text("done"),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "asks",
            answer: Answer::Yes,
            expected: text("yes"),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "asks",
            answer: Answer::Decline,
            expected: text("declined"),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "asks",
            answer: Answer::Cancel,
            expected: text("cancelled"),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "asks",
            answer: Answer::Malformed,
            expected: error(
                -32602,
                "the answer to `ask_0` was unusable (malformed: `confirm` must be true or false) and \
                 `asks` reached this server's limit of 3 rounds per call asking for it again; the \
                 call is ended",
            ),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "panics",
            answer: Answer::Yes,
            expected: error(-32603, internal),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "keeps_json",
            answer: Answer::Yes,
            expected: error(-32603, "`keeps_json` cannot continue"),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "keeps_a_lot",
            answer: Answer::Yes,
            expected: error(
                -32602,
                "the state this call keeps between rounds is too large",
            ),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "samples",
            answer: Answer::Yes,
            expected: error(
                -32021,
                "this request needs client capabilities it did not declare: sampling",
            ),
            // 2025 revisions have no -32021 (it arrived with 2026-07-28): the generic
            // invalid request, naming what `initialize` did not declare.
            legacy: Some(error(
                -32600,
                "this call needs input the client did not declare at initialize: sampling \
                 (nothing was sent to the client)",
            )),
            mrtr: None,
        },
        Row {
            tool: "takes_unasked",
            answer: Answer::Yes,
            expected: error(-32603, internal),
            legacy: None,
            // Over MRTR the questions come back sealed through the client: a resume that does
            // not fit them is a forged or incompatible state, refused like any bad state.
            mrtr: Some(error(-32602, mrtr::token::REJECTED_STATE_MESSAGE)),
        },
        Row {
            tool: "keeps_asking",
            answer: Answer::Yes,
            expected: error(
                -32603,
                "`keeps_asking` asked for input more than 3 times in one call, this server's \
                 limit (`max_rounds_per_call`); the call is ended",
            ),
            legacy: None,
            mrtr: None,
        },
        Row {
            tool: "hangs",
            answer: Answer::Yes,
            // The step is dropped at the deadline: the request gets the error, the task
            // ends `failed` with it (and frees its slot).
            expected: error(
                -32603,
                "`hangs` did not finish a round within 250ms, this server's limit \
                 (`round_timeout`); the call is ended",
            ),
            legacy: None,
            mrtr: None,
        },
    ]
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One 2026-07-28 JSON-RPC request (form elicitation declared; `tasks`: the extension too).
async fn rpc(addr: SocketAddr, tasks: bool, method: &str, mut params: Value) -> Value {
    let mut capabilities = json!({"elicitation": {"form": {}}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "round-core", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = params.get("name").or_else(|| params.get("taskId")) {
        request = request.header("Mcp-Name", name.as_str().unwrap_or_default());
    }
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let text = request
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}"))
}

fn ended_by_error(error: &Value) -> Ended {
    Ended::Error(
        error["code"].as_i64().expect("a code") as i32,
        error["message"].as_str().expect("a message").to_string(),
    )
}

fn text_of_result(result: &Value) -> Ended {
    Ended::Text(
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn answers_for(requests: &Value, answer: Answer) -> Value {
    let answers: serde_json::Map<String, Value> = requests
        .as_object()
        .expect("inputRequests")
        .keys()
        .map(|key| (key.clone(), answer.response()))
        .collect();
    Value::Object(answers)
}

async fn over_mrtr(addr: SocketAddr, tool: &str, answer: Answer) -> Ended {
    let mut params = json!({"name": tool, "arguments": {}});
    for _ in 0..20 {
        let response = rpc(addr, false, "tools/call", params.clone()).await;
        if let Some(error) = response.get("error") {
            return ended_by_error(error);
        }
        let result = &response["result"];
        if result["resultType"] != "input_required" {
            return text_of_result(result);
        }
        params["inputResponses"] = answers_for(&result["inputRequests"], answer);
        params["requestState"] = result["requestState"].clone();
    }
    panic!("{tool}: more than 20 rounds over MRTR");
}

async fn as_a_task(addr: SocketAddr, tool: &str, answer: Answer) -> Ended {
    let created = rpc(
        addr,
        true,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    )
    .await;
    if let Some(error) = created.get("error") {
        return ended_by_error(error);
    }
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_string();
    for _ in 0..2_000 {
        let got = rpc(addr, true, "tasks/get", json!({"taskId": task})).await;
        let got = &got["result"];
        match got["status"].as_str() {
            Some("completed") => return text_of_result(&got["result"]),
            Some("failed") => return ended_by_error(&got["error"]),
            Some("input_required") => {
                let answers = answers_for(&got["inputRequests"], answer);
                let update = json!({"taskId": task, "inputResponses": answers});
                let updated = rpc(addr, true, "tasks/update", update).await;
                assert!(updated.get("error").is_none(), "{updated}");
            }
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    panic!("{tool}: the task did not settle");
}

/// A 2025-11-25 user answering every form question the same way.
#[derive(Clone)]
struct LegacyUser(Answer);

impl ClientHandler for LegacyUser {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("round-core", "0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(serde_json::from_value(self.0.response()).expect("an ElicitResult"))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        // Not declared, so never asked: answering would hide a missing gate.
        Ok(CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text("?")),
            "never".into(),
        ))
    }
}

async fn over_legacy(addr: SocketAddr, tool: &'static str, answer: Answer) -> Ended {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = LegacyUser(answer)
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .expect("a legacy session opens");
    let call = client.call_tool(CallToolRequestParams::new(tool));
    let ended = match tokio::time::timeout(Duration::from_secs(30), call).await {
        Ok(Ok(result)) => Ended::Text(
            result.content[0]
                .as_text()
                .map(|t| t.text.clone())
                .unwrap_or_default(),
        ),
        Ok(Err(ServiceError::McpError(error))) => Ended::Error(error.code.0, error.message.into()),
        Ok(Err(other)) => panic!("{tool}: {other}"),
        Err(_) => panic!("{tool}: no reply within 30 s"),
    };
    let _ = client.cancel().await;
    ended
}

/// Error messages that carry a cause (the state type, the sizes) are compared by their
/// fixed beginning, which the table holds.
fn same(got: &Ended, expected: &Ended) -> bool {
    match (got, expected) {
        (Ended::Error(code, message), Ended::Error(want_code, want)) => {
            code == want_code && message.starts_with(want.as_str())
        }
        _ => got == expected,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_behaviour_ends_the_same_on_every_carrier() {
    let plain = serve(false).await;
    let tasks = serve(true).await;
    let mut failures = Vec::new();
    for row in rows() {
        for carrier in [Carrier::Mrtr, Carrier::Legacy, Carrier::Task] {
            let got = match carrier {
                Carrier::Mrtr => over_mrtr(plain, row.tool, row.answer).await,
                Carrier::Legacy => over_legacy(plain, row.tool, row.answer).await,
                Carrier::Task => as_a_task(tasks, row.tool, row.answer).await,
            };
            let expected = match carrier {
                Carrier::Mrtr => row.mrtr.as_ref().unwrap_or(&row.expected),
                Carrier::Legacy => row.legacy.as_ref().unwrap_or(&row.expected),
                Carrier::Task => &row.expected,
            };
            if !same(&got, expected) {
                failures.push(format!(
                    "{} / {:?} over {carrier:?}: got {got:?}, expected {expected:?}",
                    row.tool, row.answer
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A task whose code never returns ends `failed` at the deadline and frees its slot: on a
/// server that holds one live task, the next task is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_never_returning_task_fails_at_the_deadline_and_frees_its_slot() {
    let settings = mrtr::server::tasks::TaskSettings::default().max_live_tasks(1);
    let addr = serve_with(true, settings).await;
    for attempt in 0..3 {
        let ended = as_a_task(addr, "hangs", Answer::Yes).await;
        let Ended::Error(code, message) = &ended else {
            panic!("attempt {attempt}: {ended:?}");
        };
        assert_eq!(*code, -32603, "attempt {attempt}: {message}");
        assert!(
            message.contains("`round_timeout`"),
            "attempt {attempt}: {message}"
        );
    }
}
