//! Fair limits on tasks, over real HTTP on 127.0.0.1 (and stdio for malformed params): a
//! malformed `tasks/get`, `tasks/update` or `tasks/cancel` is `-32602` naming the field;
//! one principal cannot take every task slot; a cancelled or finished task frees its slot
//! at once while `tasks/get` still answers for it; and a hand-off round re-sent without a
//! round ledger creates one task, not one per re-send.

#[path = "../examples/showcase/data_export.rs"]
mod data_export;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use data_export::export_dataset;
use mrtr::State;
use mrtr::server::McpServer;
use mrtr::server::tasks::TaskSettings;
use mrtr::token::KeyRing;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;

const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

/// Holds its task working until the test adds permits.
#[mrtr::tool(task = "required")]
async fn gated(State(gate): State<Arc<Semaphore>>) -> String {
    let permit = gate.acquire().await;
    drop(permit);
    "through the gate".to_string()
}

/// An ordinary (not task) tool that waits at the same gate.
#[mrtr::tool]
async fn stuck(State(gate): State<Arc<Semaphore>>) -> String {
    let permit = gate.acquire().await;
    drop(permit);
    "through the gate".to_string()
}

/// Ends its task at once.
#[mrtr::tool(task = "required")]
async fn quick() -> String {
    "done".to_string()
}

fn server(settings: TaskSettings) -> McpServer {
    McpServer::builder("task-limits-test")
        .keys(KeyRing::parse(&format!("1:{KEY}")).expect("a key ring"))
        .app_state(Arc::new(Semaphore::new(0)))
        .task_settings(
            settings
                .poll_interval(Duration::from_millis(20))
                .cancel_check(Duration::from_millis(50)),
        )
        .tool(export_dataset)
        .tool(gated)
        .tool(quick)
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

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "task-limits-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    })
}

/// Posts one JSON-RPC message as `user` (the `Authorization` header, from which the server
/// derives the principal); returns the HTTP status and the JSON-RPC response.
async fn post(url: &str, user: &str, method: &str, message: Value) -> (u16, Value) {
    post_from(url, Some(user), None, method, message).await
}

/// [`post`] as `user` (`None`: anonymous, no `Authorization`) from the loopback address
/// `source` (`None`: 127.0.0.1).
async fn post_from(
    url: &str,
    user: Option<&str>,
    source: Option<IpAddr>,
    method: &str,
    message: Value,
) -> (u16, Value) {
    let client = reqwest::Client::builder()
        .local_address(source)
        .build()
        .unwrap();
    let mut request = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(user) = user {
        request = request.header("Authorization", format!("Bearer {user}"));
    }
    let params = &message["params"];
    if let Some(name) = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
    {
        request = request.header("Mcp-Name", name);
    }
    let response = request
        .body(message.to_string())
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    let json_text = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .map(str::to_owned)
        .unwrap_or(text);
    let parsed = serde_json::from_str(&json_text).unwrap_or_else(|_| panic!("JSON: {json_text}"));
    (status, parsed)
}

/// One 2026-07-28 request with the tasks extension declared, `_meta` added to `params`.
async fn rpc(url: &str, user: &str, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    post(url, user, method, message).await.1
}

fn result(response: Value) -> Value {
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("expected a result: {response}"),
    }
}

/// `tools/call` of a task tool with no arguments: the created task, or the error.
async fn call(url: &str, user: &str, tool: &str) -> Value {
    rpc(
        url,
        user,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    )
    .await
}

fn task_id(created: &Value) -> String {
    let created = result(created.clone());
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().expect("a task id").to_owned()
}

async fn get(url: &str, user: &str, task: &str) -> Value {
    result(rpc(url, user, "tasks/get", json!({"taskId": task})).await)
}

// ------------------------------------------------------------ malformed params

/// Every malformed shape of the three methods' params, with the field it must name.
fn malformed_cases() -> Vec<(&'static str, Option<Value>, &'static str)> {
    let mut cases = Vec::new();
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        cases.push((method, None, "_meta"));
        cases.push((method, Some(json!({"_meta": meta()})), "taskId"));
        cases.push((
            method,
            Some(json!({"_meta": meta(), "taskId": 5})),
            "taskId",
        ));
        cases.push((
            method,
            Some(json!({"_meta": meta(), "taskId": null})),
            "taskId",
        ));
        cases.push((
            method,
            Some(json!({"_meta": meta(), "taskId": {"id": "x"}, "inputResponses": {}})),
            "taskId",
        ));
    }
    let update = |extra: Value| {
        let mut params = json!({"_meta": meta(), "taskId": "0".repeat(32)});
        for (key, value) in extra.as_object().cloned().unwrap_or_default() {
            params[key] = value;
        }
        Some(params)
    };
    cases.push(("tasks/update", update(json!({})), "inputResponses"));
    cases.push((
        "tasks/update",
        update(json!({"inputResponses": [1]})),
        "inputResponses",
    ));
    cases.push((
        "tasks/update",
        update(json!({"inputResponses": "yes"})),
        "inputResponses",
    ));
    cases.push((
        "tasks/update",
        update(json!({"inputResponses": null})),
        "inputResponses",
    ));
    cases
}

fn message(method: &str, params: &Option<Value>) -> Value {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        message["params"] = params.clone();
    }
    message
}

fn assert_names_the_field(method: &str, field: &str, response: &Value) {
    let error = &response["error"];
    assert_eq!(error["code"], -32602, "{method} ({field}): {response}");
    if field == "_meta" {
        // No params, or params that are not an object, have no `_meta` either: a
        // 2026-07-28 request is refused for that before any method sees it.
        let text = error["message"].as_str().unwrap_or_default();
        assert!(text.contains("_meta"), "{method}: {response}");
        return;
    }
    let text = error["message"].as_str().unwrap_or_default();
    assert!(
        text.contains(method) && text.contains(&format!("`{field}`")),
        "{method}: the message names `{field}`: {response}"
    );
    assert_eq!(error["data"]["field"], field, "{method}: {response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_task_params_are_invalid_params_naming_the_field_over_http() {
    let url = serve(server(TaskSettings::default())).await;
    for (method, params, field) in malformed_cases() {
        let message = message(method, &params);
        let (status, response) = post(&url, "alice", method, message.clone()).await;
        assert_eq!(response["id"], message["id"], "{response}");
        assert_names_the_field(method, field, &response);
        if field == "_meta" {
            assert_ne!(status, 404, "{method} ({field}): {response}");
        } else {
            assert_eq!(status, 200, "{method} ({field}): not a 404: {response}");
        }
    }
    // Well-formed params still reach the method: an unknown task, not a parse error.
    let unknown = rpc(
        &url,
        "alice",
        "tasks/get",
        json!({"taskId": "0".repeat(32)}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown task"),
        "{unknown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_task_params_are_invalid_params_naming_the_field_over_stdio() {
    use rmcp::ServiceExt;
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let running = tokio::spawn(async move {
        let service = server(TaskSettings::default())
            .serve((server_read, server_write))
            .await
            .expect("serves");
        let _ = service.waiting().await;
    });
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    // Without an object of params there is no `_meta`, and the stdio transport refuses the
    // message itself (`-32600`, then the connection): not a method's params to check.
    let cases = malformed_cases()
        .into_iter()
        .filter(|(_, _, field)| *field != "_meta");
    for (method, params, field) in cases {
        let message = message(method, &params);
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer")
            .unwrap()
            .expect("a line");
        let response: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(response["id"], message["id"], "{response}");
        assert_names_the_field(method, field, &response);
    }
    running.abort();
}

// ------------------------------------------------------------ per-principal quota

/// One principal fills its own quota (100 by default), not the server's cap (150 here):
/// its next task is refused naming `max_live_tasks_per_principal`, while another principal
/// still creates tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_principal_cannot_take_every_task_slot() {
    let url = serve(server(TaskSettings::default().max_live_tasks(150))).await;
    let mut created = 0;
    let refused = loop {
        let response = call(&url, "alice", "gated").await;
        if response.get("error").is_some() {
            break response;
        }
        task_id(&response);
        created += 1;
        assert!(created <= 150, "alice took every slot of the server");
    };
    assert_eq!(created, 100, "alice's quota: {refused}");
    let error = &refused["error"];
    assert_eq!(error["code"], -32053, "{refused}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("max_live_tasks_per_principal"),
        "{refused}"
    );
    assert_eq!(error["data"]["maxLiveTasksPerPrincipal"], 100, "{refused}");
    // Bob is not locked out by alice.
    for _ in 0..3 {
        task_id(&call(&url, "bob", "gated").await);
    }
    // Alice stays at her quota while her tasks are live.
    let again = call(&url, "alice", "gated").await;
    assert_eq!(again["error"]["code"], -32053, "{again}");
}

/// Anonymous callers (no principal) are counted by their client address: one address
/// stops at the quota (naming `max_live_tasks_per_principal`) while another address is
/// not affected. Loopback addresses are counted here because the test serves with
/// `per_address_includes_loopback(true)`; by default they share the server-wide cap only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_anonymous_address_cannot_take_every_task_slot() {
    let settings = TaskSettings::default()
        .max_live_tasks(40)
        .max_live_tasks_per_principal(5);
    let bound = mrtr::server::http::HttpServing::new(server(settings))
        .per_address_includes_loopback(true)
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", bound.local_addr());
    tokio::spawn(bound.serve());
    let anonymous = |source: [u8; 4]| {
        let url = url.clone();
        async move {
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            let params = json!({"name": "gated", "arguments": {}, "_meta": meta()});
            let message =
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
            let source = Some(IpAddr::from(source));
            post_from(&url, None, source, "tools/call", message).await.1
        }
    };
    let mut created = 0;
    let refused = loop {
        let response = anonymous([127, 0, 0, 2]).await;
        if response.get("error").is_some() {
            break response;
        }
        task_id(&response);
        created += 1;
        assert!(created <= 40, "one anonymous address took every slot");
    };
    assert_eq!(created, 5, "the address's quota: {refused}");
    assert_eq!(refused["error"]["code"], -32053, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("max_live_tasks_per_principal"),
        "{refused}"
    );
    assert!(message.contains("anonymous client address"), "{refused}");
    // Another anonymous address is not locked out by the first.
    for _ in 0..3 {
        task_id(&anonymous([127, 0, 0, 3]).await);
    }
}

/// By default loopback peers are not counted per address: anonymous local callers are
/// held to the server-wide cap only, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_loopback_callers_share_the_server_cap_by_default() {
    let settings = TaskSettings::default()
        .max_live_tasks(8)
        .max_live_tasks_per_principal(2);
    let url = serve(server(settings)).await;
    for _ in 0..8 {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let params = json!({"name": "gated", "arguments": {}, "_meta": meta()});
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        task_id(&post_from(&url, None, None, "tools/call", message).await.1);
    }
}

// ------------------------------------------------------------ ended tasks free their slot

/// With a cap of two live tasks: two waiting tasks fill it; cancelling them frees both
/// slots at once while `tasks/get` still answers `cancelled`; a task that completes frees
/// its slot too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_or_finished_task_frees_its_slot_at_once() {
    let url = serve(server(TaskSettings::default().max_live_tasks(2))).await;
    let a = task_id(&call(&url, "alice", "gated").await);
    let b = task_id(&call(&url, "alice", "gated").await);
    let full = call(&url, "alice", "gated").await;
    assert_eq!(full["error"]["code"], -32053, "{full}");
    for task in [&a, &b] {
        result(rpc(&url, "alice", "tasks/cancel", json!({"taskId": task})).await);
    }
    // Both records stay for tasks/get.
    for task in [&a, &b] {
        assert_eq!(get(&url, "alice", task).await["status"], "cancelled");
    }
    // Both slots are free.
    let finishing = task_id(&call(&url, "alice", "quick").await);
    let c = task_id(&call(&url, "alice", "gated").await);
    loop {
        let got = get(&url, "alice", &finishing).await;
        if got["status"] == "completed" {
            break;
        }
        assert_eq!(got["status"], "working", "{got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The completed task's slot is free; `c` still holds the other.
    task_id(&call(&url, "alice", "quick").await);
    assert_eq!(get(&url, "alice", &c).await["status"], "working");
    assert_eq!(get(&url, "alice", &finishing).await["status"], "completed");
}

// ------------------------------------------------------------ re-sent hand-off round

/// Without a round ledger, the round that hands off to a task re-sent 20 times (one after
/// the other and at once) gets the same task every time; a new first round of the same
/// arguments is another call and gets another task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_handoff_round_creates_one_task_without_a_ledger() {
    let url = serve(server(TaskSettings::default())).await;
    let handoff = || async {
        let call = json!({"name": "export_dataset", "arguments": {"account": "acme"}});
        let first = result(rpc(&url, "alice", "tools/call", call.clone()).await);
        assert_eq!(first["resultType"], "input_required", "{first}");
        let mut retry = call;
        retry["inputResponses"] =
            json!({"dataset": {"action": "accept", "content": {"choice": "orders"}}});
        retry["requestState"] = first["requestState"].clone();
        retry
    };
    let retry = handoff().await;
    let created = task_id(&rpc(&url, "alice", "tools/call", retry.clone()).await);
    let mut ids = Vec::new();
    for _ in 0..15 {
        ids.push(task_id(
            &rpc(&url, "alice", "tools/call", retry.clone()).await,
        ));
    }
    let at_once =
        futures::future::join_all((0..4).map(|_| rpc(&url, "alice", "tools/call", retry.clone())))
            .await;
    ids.extend(at_once.iter().map(task_id));
    assert_eq!(ids.len(), 19);
    for id in &ids {
        assert_eq!(id, &created, "every re-send gets the first task");
    }
    // The one task goes on as usual.
    loop {
        let got = get(&url, "alice", &created).await;
        if got["status"] != "working" {
            assert_eq!(got["status"], "input_required", "{got}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Another call (a new first round) is another task.
    let other = task_id(&rpc(&url, "alice", "tools/call", handoff().await).await);
    assert_ne!(other, created);
}

// ------------------------------------------------------------ per-tool round deadline

/// `round_timeout_for` gives one tool its own deadline while the server has none: a task
/// of that tool whose code never returns ends `failed` with `-32603` naming the tool and
/// `round_timeout` (and frees its slot); the same for an ordinary call; other tools are
/// not held to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_s_own_round_timeout_ends_its_never_returning_step() {
    let server = McpServer::builder("task-limits-test")
        .keys(KeyRing::parse(&format!("1:{KEY}")).expect("a key ring"))
        .app_state(Arc::new(Semaphore::new(0)))
        .task_settings(
            TaskSettings::default()
                .max_live_tasks_per_principal(1)
                .poll_interval(Duration::from_millis(20)),
        )
        .round_timeout(None)
        .tool(gated)
        .tool(stuck)
        .tool(quick)
        .round_timeout_for("gated", Duration::from_millis(200))
        .round_timeout_for("stuck", Duration::from_millis(200))
        .build()
        .unwrap();
    let url = serve(server).await;
    let task = task_id(&call(&url, "alice", "gated").await);
    // Bounded so a task that never ends fails the test instead of hanging it.
    let mut polls = 0..1000;
    let failed = loop {
        let got = get(&url, "alice", &task).await;
        if got["status"] != "working" {
            break got;
        }
        assert!(polls.next().is_some(), "the task never ended: {got}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(failed["status"], "failed", "{failed}");
    let error = &failed["error"];
    assert_eq!(error["code"], -32603, "{failed}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`gated`") && message.contains("round_timeout"),
        "{failed}"
    );
    assert_eq!(error["data"]["roundTimeoutMs"], 200, "{failed}");
    // Its slot is free again (the quota is one), and a quick task completes.
    task_id(&call(&url, "alice", "quick").await);
    // An ordinary call of a tool with its own deadline gets the error itself.
    let ended = tokio::time::timeout(Duration::from_secs(20), call(&url, "alice", "stuck"))
        .await
        .expect("hang guard: the call never ended");
    assert_eq!(ended["error"]["code"], -32603, "{ended}");
    let message = ended["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`stuck`") && message.contains("round_timeout"),
        "{ended}"
    );
}

/// A deadline for a tool the server does not have is a build error naming it.
#[test]
fn a_round_timeout_for_an_unknown_tool_fails_the_build() {
    let built = McpServer::builder("task-limits-test")
        .keys(KeyRing::parse(&format!("1:{KEY}")).expect("a key ring"))
        .app_state(Arc::new(Semaphore::new(0)))
        .tool(gated)
        .round_timeout_for("gatde", Duration::from_secs(1))
        .build();
    let error = built
        .err()
        .expect("an unknown tool fails the build")
        .to_string();
    assert!(
        error.contains("`gatde`") && error.contains("round_timeout_for"),
        "{error}"
    );
}
