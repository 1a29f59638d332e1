//! The tasks extension over real HTTP on 127.0.0.1: the showcase export picks its dataset
//! as an MRTR round and continues as a task with two more questions, driven end to end by
//! the client driver; the same tool without the extension is three MRTR rounds; a cancel
//! ends a task mid-way (waiting on a question, or running); answers for keys that are not
//! outstanding are ignored; a task is invisible to another principal; and with
//! `RedisTaskStore` (when `redis-server` is on the PATH, required with
//! `MRTR_REQUIRE_REDIS=1`) another instance answers `tasks/get` and `tasks/update`.

#[path = "../examples/showcase/data_export.rs"]
mod data_export;
#[path = "support/renamed.rs"]
mod renamed;

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use data_export::export_dataset;
use futures::future::BoxFuture;
use mrtr::State;
use mrtr::client::{HandlerError, InputHandlers, MrtrClient, PendingCall, RoundObserver};
use mrtr::machine::{Machine, MachineDescriptor, Run, Step, StepFuture, Suspend};
use mrtr::server::McpServer;
use mrtr::server::tasks::{
    Admission, Created, MemoryTaskStore, RedisTaskStore, StoredTask, TaskSettings, TaskStore,
    TaskStoreError,
};
use mrtr::token::KeyRing;
use rmcp::model::{ElicitResult, ElicitationAction, Task, TaskStatus};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

/// What the `gated` tool shares with the test: permits to go on, and how often it went on.
struct Gate {
    open: Semaphore,
    passed: AtomicUsize,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            open: Semaphore::new(0),
            passed: AtomicUsize::new(0),
        }
    }
}

/// Waits until the test opens the gate, then counts.
#[mrtr::tool(task = "required")]
async fn gated(State(gate): State<Arc<Gate>>) -> String {
    let permit = gate.open.acquire().await;
    drop(permit);
    gate.passed.fetch_add(1, Ordering::SeqCst);
    "through the gate".to_string()
}

/// Its code panics once running as a task (an everyday bug: `expect` on `None`).
#[mrtr::tool(task = "required")]
async fn crashing() -> String {
    let missing: Option<String> = None;
    missing.expect("a bug in the task's code")
}

fn settings() -> TaskSettings {
    TaskSettings::default()
        .poll_interval(Duration::from_millis(20))
        .cancel_check(Duration::from_millis(50))
}

fn server(gate: &Arc<Gate>) -> mrtr::server::McpServerBuilder {
    McpServer::builder("tasks-test")
        .keys(KeyRing::parse(&format!("1:{KEY}")).expect("a key ring"))
        .app_state(Arc::clone(gate))
        .task_settings(settings())
        .tool(export_dataset)
        .tool(gated)
        .tool(crashing)
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

/// One JSON-RPC request as a 2026-07-28 client sends it, declaring form elicitation and (with
/// `tasks`) the tasks extension; `user` becomes the `Authorization` header, from which the
/// server derives the principal. Returns the whole JSON-RPC response.
async fn rpc(url: &str, user: &str, tasks: bool, method: &str, mut params: Value) -> Value {
    let mut capabilities = json!({"elicitation": {"form": {}}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Authorization", format!("Bearer {user}"));
    if let Some(name) = name {
        request = request.header("Mcp-Name", name);
    }
    let text = request
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}"))
}

fn result(response: Value) -> Value {
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("expected a result: {response}"),
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// Runs the export's MRTR round as `user` and returns the id of the task it continues as.
async fn start_export(url: &str, user: &str) -> String {
    let call = json!({"name": "export_dataset", "arguments": {"account": "acme"}});
    let first = result(rpc(url, user, true, "tools/call", call.clone()).await);
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none());
    let mut retry = call;
    retry["inputResponses"] = json!({"dataset": accept(json!({"choice": "orders"}))});
    retry["requestState"] = first["requestState"].clone();
    let created = result(rpc(url, user, true, "tools/call", retry).await);
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none());
    assert_eq!(created["status"], "working");
    created["taskId"].as_str().expect("a task id").to_owned()
}

/// Answers the task's question `key` with an accepted `content` through `tasks/update`
/// (as alice) and returns the result.
async fn update(url: &str, task: &str, key: &str, content: Value) -> Value {
    let answer = json!({"taskId": task, "inputResponses": {key: accept(content)}});
    result(rpc(url, "alice", true, "tasks/update", answer).await)
}

/// Polls `tasks/get` until the task leaves `working`.
async fn settled(url: &str, user: &str, task: &str) -> Value {
    loop {
        let got = result(rpc(url, user, true, "tasks/get", json!({"taskId": task})).await);
        if got["status"] != "working" {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn only_key(got: &Value) -> String {
    let keys: Vec<&String> = got["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .keys()
        .collect();
    assert_eq!(keys.len(), 1, "{got}");
    keys[0].clone()
}

/// Records what the driver saw.
#[derive(Default)]
struct Seen {
    /// Per question: its keys and whether it came with a `requestState` (an MRTR round).
    asked: Mutex<Vec<(Vec<String>, bool)>>,
    statuses: Mutex<Vec<TaskStatus>>,
}

/// Shares a [`Seen`] with the test.
struct Recorder(Arc<Seen>);

impl RoundObserver for Recorder {
    fn input_required(&self, pending: &PendingCall) {
        let keys = pending.input_requests.keys().cloned().collect();
        let mrtr = pending.request_state.is_some();
        self.0.asked.lock().unwrap().push((keys, mrtr));
    }
    fn task_status(&self, task: &Task) {
        self.0.statuses.lock().unwrap().push(task.status);
    }
}

fn export_answers() -> InputHandlers {
    InputHandlers::new().on_elicit(|form| async move {
        let content = match form.key.split('#').next().unwrap_or_default() {
            "dataset" => json!({"choice": "orders"}),
            "archived" => json!({"confirm": true}),
            "format" => json!({"choice": "parquet"}),
            other => return Err(HandlerError::failed(format!("unexpected key {other}"))),
        };
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_runs_the_export_as_one_mrtr_round_then_a_task_with_two_questions() {
    let url = serve(server(&Arc::default()).build().unwrap()).await;
    let seen = Arc::new(Seen::default());
    let client = MrtrClient::connect_http(url.as_str(), export_answers())
        .await
        .expect("connect")
        .with_observer(Recorder(Arc::clone(&seen)));
    let mut arguments = rmcp::model::JsonObject::new();
    arguments.insert("account".into(), json!("acme"));
    let done = client
        .call_tool("export_dataset", Some(arguments))
        .await
        .expect("the export completes");
    assert_eq!(
        done.content[0].as_text().unwrap().text,
        "Exported 12480 orders rows of acme as parquet, archived included."
    );
    let asked = seen.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert_eq!(asked[0], (vec!["dataset".to_string()], true));
    // The task's questions: no requestState, and keys of their own.
    assert!(!asked[1].1 && !asked[2].1, "{asked:?}");
    assert!(asked[1].0[0].starts_with("archived"), "{asked:?}");
    assert!(asked[2].0[0].starts_with("format"), "{asked:?}");
    assert_ne!(asked[1].0, asked[2].0);
    let statuses = seen.statuses.lock().unwrap().clone();
    assert_eq!(statuses.first(), Some(&TaskStatus::Working), "{statuses:?}");
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last(),
        Some(&TaskStatus::Completed),
        "{statuses:?}"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_extension_the_same_tool_is_three_mrtr_rounds() {
    let url = serve(server(&Arc::default()).build().unwrap()).await;
    let mut call = json!({"name": "export_dataset", "arguments": {"account": "acme"}});
    let answers = [
        ("dataset", json!({"choice": "invoices"})),
        ("archived", json!({"confirm": false})),
        ("format", json!({"choice": "csv"})),
    ];
    for (key, content) in answers {
        let round = result(rpc(&url, "alice", false, "tools/call", call.clone()).await);
        assert_eq!(round["resultType"], "input_required", "{round}");
        assert!(round["inputRequests"].get(key).is_some(), "{round}");
        call["inputResponses"] = json!({ key: accept(content) });
        call["requestState"] = round["requestState"].clone();
    }
    let done = result(rpc(&url, "alice", false, "tools/call", call).await);
    assert_eq!(done["resultType"], "complete");
    assert_eq!(
        done["content"][0]["text"],
        "Exported 3215 invoices rows of acme as csv."
    );
    // A required task tool refuses such a client, naming the extension.
    let refused = rpc(&url, "alice", false, "tools/call", json!({"name": "gated"})).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_ends_a_task_waiting_on_a_question_and_later_answers_change_nothing() {
    let url = serve(server(&Arc::default()).build().unwrap()).await;
    let task = start_export(&url, "alice").await;
    let waiting = settled(&url, "alice", &task).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let key = only_key(&waiting);
    let ack = result(rpc(&url, "alice", true, "tasks/cancel", json!({"taskId": task})).await);
    assert_eq!(ack, json!({"resultType": "complete"}));
    let answer = json!({"taskId": task, "inputResponses": {key: accept(json!({"confirm": true}))}});
    let ack = result(rpc(&url, "alice", true, "tasks/update", answer).await);
    assert_eq!(ack["resultType"], "complete");
    let got = result(rpc(&url, "alice", true, "tasks/get", json!({"taskId": task})).await);
    assert_eq!(got["status"], "cancelled", "{got}");
    assert!(got.get("inputRequests").is_none() && got.get("result").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_running_task_before_its_code_goes_on() {
    let gate = Arc::new(Gate::default());
    let url = serve(server(&gate).build().unwrap()).await;
    let created = result(rpc(&url, "alice", true, "tools/call", json!({"name": "gated"})).await);
    let task = created["taskId"].as_str().expect("a task").to_owned();
    let ack = result(rpc(&url, "alice", true, "tasks/cancel", json!({"taskId": task})).await);
    assert_eq!(ack["resultType"], "complete");
    // The run was aborted where it waited: opening the gate now lets nothing through.
    gate.open.add_permits(1);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(gate.passed.load(Ordering::SeqCst), 0);
    let got = result(rpc(&url, "alice", true, "tasks/get", json!({"taskId": task})).await);
    assert_eq!(got["status"], "cancelled", "{got}");
    // Cancelling an ended task is the same empty ack.
    let again = result(rpc(&url, "alice", true, "tasks/cancel", json!({"taskId": task})).await);
    assert_eq!(again, json!({"resultType": "complete"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_for_keys_that_are_not_outstanding_are_ignored() {
    let store = Arc::new(VersionChecked::default());
    let url = serve(
        server(&Arc::default())
            .task_store(Arc::clone(&store))
            .build()
            .unwrap(),
    )
    .await;
    let writes = || store.writes.lock().unwrap().len();
    let task = start_export(&url, "alice").await;
    let first = settled(&url, "alice", &task).await;
    let archived = only_key(&first);
    assert!(archived.starts_with("archived"), "{first}");
    // A key never asked: acknowledged, nothing changes (not even the stored task).
    let before = writes();
    let stray =
        json!({"taskId": task, "inputResponses": {"format#9": accept(json!({"choice": "csv"}))}});
    assert_eq!(
        result(rpc(&url, "alice", true, "tasks/update", stray).await)["resultType"],
        "complete"
    );
    let still = result(rpc(&url, "alice", true, "tasks/get", json!({"taskId": task})).await);
    assert_eq!(still["status"], "input_required");
    assert_eq!(writes(), before, "nothing was written");
    assert_eq!(only_key(&still), archived);
    // The real answer moves the task to its next question, under a new key.
    update(&url, &task, &archived, json!({"confirm": true})).await;
    let second = settled(&url, "alice", &task).await;
    let format = only_key(&second);
    assert!(
        format.starts_with("format") && format != archived,
        "{second}"
    );
    // Answering the old key again (now not outstanding) changes nothing either.
    let before = writes();
    update(&url, &task, &archived, json!({"confirm": false})).await;
    let after = result(rpc(&url, "alice", true, "tasks/get", json!({"taskId": task})).await);
    assert_eq!(only_key(&after), format);
    assert_eq!(writes(), before, "nothing was written");
    update(&url, &task, &format, json!({"choice": "csv"})).await;
    let done = settled(&url, "alice", &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Exported 12480 orders rows of acme as csv, archived included."
    );
}

/// With a round ledger, the round that hands off is claimed and its outcome is the task: the
/// same round re-sent (a lost reply, a retry after a 502), one after the other or at once,
/// gets the same task back, and only one task runs. Without a ledger each re-send would
/// start another task, as any re-run round runs its code again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_handoff_round_gets_the_same_task_with_a_round_ledger() {
    let server = server(&Arc::default())
        .round_ledger(mrtr::server::ledger::MemoryLedger::new())
        .build()
        .unwrap();
    let url = serve(server).await;
    let call = json!({"name": "export_dataset", "arguments": {"account": "acme"}});
    let first = result(rpc(&url, "alice", true, "tools/call", call.clone()).await);
    let mut retry = call;
    retry["inputResponses"] = json!({"dataset": accept(json!({"choice": "orders"}))});
    retry["requestState"] = first["requestState"].clone();

    let created = result(rpc(&url, "alice", true, "tools/call", retry.clone()).await);
    assert_eq!(created["resultType"], "task", "{created}");
    let again = result(rpc(&url, "alice", true, "tools/call", retry.clone()).await);
    let (a, b) = tokio::join!(
        rpc(&url, "alice", true, "tools/call", retry.clone()),
        rpc(&url, "alice", true, "tools/call", retry.clone()),
    );
    for replay in [again, result(a), result(b)] {
        assert_eq!(replay["resultType"], "task", "{replay}");
        assert_eq!(replay["taskId"], created["taskId"], "{replay}");
    }

    // The one task goes on as usual.
    let task = created["taskId"].as_str().expect("a task id");
    let waiting = settled(&url, "alice", task).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_invisible_to_another_principal() {
    let url = serve(server(&Arc::default()).build().unwrap()).await;
    let task = start_export(&url, "alice").await;
    let waiting = settled(&url, "alice", &task).await;
    let key = only_key(&waiting);
    let unknown = rpc(
        &url,
        "mallory",
        true,
        "tasks/get",
        json!({"taskId": "0".repeat(32)}),
    )
    .await;
    for (method, params) in [
        ("tasks/get", json!({"taskId": task})),
        (
            "tasks/update",
            json!({"taskId": task, "inputResponses": {key.clone(): accept(json!({"confirm": true}))}}),
        ),
        ("tasks/cancel", json!({"taskId": task})),
    ] {
        let refused = rpc(&url, "mallory", true, method, params).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        // The same answer as for an id that never existed: nothing to probe.
        assert_eq!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&task, "ID"),
            unknown["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&"0".repeat(32), "ID")
        );
    }
    let mine = result(rpc(&url, "alice", true, "tasks/get", json!({"taskId": task})).await);
    assert_eq!(mine["status"], "input_required");
    assert_eq!(only_key(&mine), key);
}

#[tokio::test]
async fn a_task_whose_code_panics_ends_failed_with_an_internal_error() {
    let url = serve(server(&Arc::new(Gate::default())).build().unwrap()).await;
    let created = call_crashing(&url).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().expect("a task id").to_owned();
    let ended = settled(&url, "alice", &task).await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(ended["error"]["code"], -32603, "{ended}");
    // The server goes on: the next task runs.
    let next = call_crashing(&url).await;
    assert_eq!(next["resultType"], "task", "{next}");
}

/// Alice's `tools/call` of `crashing`, with the tasks extension.
async fn call_crashing(url: &str) -> Value {
    let call = json!({"name": "crashing", "arguments": {}});
    result(rpc(url, "alice", true, "tools/call", call).await)
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
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(error) if !required => {
                eprintln!(
                    "skipping the Redis task store test: {error} (set MRTR_REQUIRE_REDIS=1 to require it)"
                );
                return None;
            }
            Err(error) => panic!("MRTR_REQUIRE_REDIS=1 but redis-server does not start: {error}"),
        };
        let redis = Redis { child, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(redis);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not listen within 5 s");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_another_instance_serves_get_and_update_and_resumes_the_task() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let instance = |name: &str| {
        let store = RedisTaskStore::open(&redis.url())
            .unwrap()
            .with_prefix("tasks-test:");
        server(&Arc::default())
            .instance_id(name)
            .task_store(store)
            .build()
            .unwrap()
    };
    let a = serve(instance("a")).await;
    let b = serve(instance("b")).await;
    let task = start_export(&a, "alice").await;
    // B sees the task A created, and serves its questions.
    let first = settled(&b, "alice", &task).await;
    assert_eq!(first["status"], "input_required", "{first}");
    let archived = only_key(&first);
    update(&b, &task, &archived, json!({"confirm": false})).await;
    // B resumed the machine; A sees its next question and takes the answer to it.
    let second = settled(&a, "alice", &task).await;
    let format = only_key(&second);
    assert!(format.starts_with("format"), "{second}");
    update(&a, &task, &format, json!({"choice": "csv"})).await;
    let done = settled(&b, "alice", &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Exported 12480 orders rows of acme as csv."
    );
    // The principal binding holds across instances too.
    let refused = rpc(&b, "mallory", true, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // The final result was produced by A's run (A resumed after A's update), stamped by A.
    assert_eq!(done["result"]["_meta"]["io.mrtr/instance"], "a", "{done}");
}

/// What every task store must do, at the edges: a task is gone at its expiry millisecond,
/// the caps count live tasks (the server's and each owner's), an ended task frees its slot
/// but stays readable, a round creates one task, ids do not collide, the ended tasks that
/// expire first make room past the most kept, and `replace` is a compare-and-swap.
async fn store_contract(store: &dyn TaskStore) {
    // Times are offsets from a real instant a minute ahead: Redis expires keys by its clock.
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 60_000;
    let task = |id: &str, version: u64, expires_at_ms: u64| StoredTask {
        id: id.into(),
        version,
        expires_at_ms: base + expires_at_ms,
        live: true,
        body: format!("{id} v{version}").into_bytes(),
    };
    let cap = |owner: Option<&str>, round: Option<&str>| Admission {
        owner: owner.map(str::to_owned),
        round: round.map(str::to_owned),
        max_live: 2,
        max_live_per_owner: 1,
        max_kept: 3,
    };
    let anonymous = cap(None, None);
    let create = |t: StoredTask, admission: Admission, now: u64| async move {
        store.create(&t, &admission, base + now).await.unwrap()
    };
    assert_eq!(
        create(task("a", 1, 1_000), anonymous.clone(), 0).await,
        Created::Created
    );
    assert_eq!(
        create(task("a", 1, 5_000), anonymous.clone(), 0).await,
        Created::Duplicate,
        "same id twice"
    );
    assert_eq!(
        create(task("b", 1, 5_000), anonymous.clone(), 0).await,
        Created::Created
    );
    assert_eq!(
        create(task("c", 1, 5_000), anonymous.clone(), 999).await,
        Created::Full,
        "cap of 2 live tasks"
    );
    // Each id reads back its own task until the millisecond it expires.
    let a = store
        .load("a", base + 999)
        .await
        .unwrap()
        .expect("a is live at 999");
    assert_eq!(a, task("a", 1, 1_000));
    assert_eq!(
        store.load("b", base + 999).await.unwrap().unwrap().body,
        b"b v1"
    );
    assert_eq!(
        store.load("a", base + 1_000).await.unwrap(),
        None,
        "gone at its expiry"
    );
    // At 1000 `a` no longer counts against the cap.
    assert_eq!(
        create(task("c", 1, 5_500), anonymous.clone(), 1_000).await,
        Created::Created
    );
    // Compare-and-swap on the version.
    assert!(store.replace(&task("b", 2, 5_000), 1).await.unwrap());
    assert!(
        !store.replace(&task("b", 3, 5_000), 1).await.unwrap(),
        "stale version"
    );
    assert_eq!(
        store.load("b", base).await.unwrap().unwrap(),
        task("b", 2, 5_000)
    );
    assert!(!store.replace(&task("missing", 2, 5_000), 1).await.unwrap());
    // `b` ends: still readable, no longer live, and its slot is free at once.
    let mut ended = task("b", 3, 5_000);
    ended.live = false;
    assert!(store.replace(&ended, 2).await.unwrap());
    assert!(store.replace(&task("b", 4, 5_000), 3).await.unwrap());
    let b = store.load("b", base + 1_000).await.unwrap().unwrap();
    assert_eq!((b.version, b.live), (4, false), "ended stays ended");
    // One live slot is free (c holds the other): an owner takes it, once.
    assert_eq!(
        create(task("d", 1, 6_000), cap(Some("o1"), Some("r1")), 1_000).await,
        Created::Created
    );
    assert_eq!(
        create(task("e", 1, 6_000), anonymous.clone(), 1_000).await,
        Created::Full
    );
    // The same round gets its task back, whoever asks and whatever the caps.
    assert_eq!(
        create(task("e", 1, 6_000), cap(Some("o1"), Some("r1")), 1_000).await,
        Created::Existing("d".into())
    );
    // `c` ends: o1 is at its own quota, another owner is not.
    let mut c_ended = task("c", 2, 5_500);
    c_ended.live = false;
    assert!(store.replace(&c_ended, 1).await.unwrap());
    assert_eq!(
        create(task("e", 1, 6_000), cap(Some("o1"), None), 1_000).await,
        Created::OwnerFull
    );
    // Three kept (b, c ended; d live): a fourth record drops the ended `b`, which expires
    // before `c`.
    assert_eq!(
        create(task("e", 1, 6_000), cap(Some("o2"), None), 1_000).await,
        Created::Created
    );
    assert_eq!(
        store.load("b", base + 1_000).await.unwrap(),
        None,
        "b dropped"
    );
    assert!(
        store.load("c", base + 1_000).await.unwrap().is_some(),
        "c kept"
    );
    // The round's task expires with it; the round may create a task again.
    assert_eq!(
        create(task("f", 1, 9_000), cap(Some("o3"), Some("r1")), 6_000).await,
        Created::Created
    );
}

#[tokio::test]
async fn the_memory_store_keeps_the_store_contract() {
    store_contract(&MemoryTaskStore::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_keeps_the_store_contract() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let store = RedisTaskStore::open(&redis.url())
        .unwrap()
        .with_prefix("contract:");
    store_contract(&store).await;
    // Another prefix is another store.
    let other = RedisTaskStore::open(&redis.url())
        .unwrap()
        .with_prefix("other:");
    assert_eq!(other.load("b", 0).await.unwrap(), None, "another prefix");
    let debug = format!("{store:?}");
    assert!(debug.starts_with("RedisTaskStore"), "{debug}");
    assert!(
        debug.contains("contract:") && debug.contains(&redis.port.to_string()),
        "{debug}"
    );
}

/// A memory store that checks every write the server makes: the new version is the
/// expected one plus one (the compare-and-swap's guarantee against lost updates).
#[derive(Default)]
struct VersionChecked {
    inner: MemoryTaskStore,
    writes: Mutex<Vec<(u64, u64)>>,
}

impl TaskStore for VersionChecked {
    fn create<'a>(
        &'a self,
        task: &'a StoredTask,
        admission: &'a Admission,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Created, TaskStoreError>> {
        self.inner.create(task, admission, now_ms)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Option<StoredTask>, TaskStoreError>> {
        self.inner.load(id, now_ms)
    }
    fn replace<'a>(
        &'a self,
        task: &'a StoredTask,
        expected_version: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        self.writes
            .lock()
            .unwrap()
            .push((expected_version, task.version));
        self.inner.replace(task, expected_version)
    }
}

/// A malformed answer to a task's question is asked again under a key no earlier question
/// used (a late answer to the old key cannot be taken for the new one), and every write
/// moves the stored version by exactly one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_task_answer_is_asked_again_under_a_new_key() {
    let store = Arc::new(VersionChecked::default());
    let url = serve(
        server(&Arc::default())
            .task_store(Arc::clone(&store))
            .build()
            .unwrap(),
    )
    .await;
    let task = start_export(&url, "alice").await;
    let first = settled(&url, "alice", &task).await;
    let archived = only_key(&first);
    update(&url, &task, &archived, json!({"confirm": "yes"})).await;
    // The update answered every outstanding question, so the task is working until the
    // machine has looked at the answer and parked again.
    let again = settled(&url, "alice", &task).await;
    assert_eq!(again["status"], "input_required", "{again}");
    let asked_again = only_key(&again);
    assert!(
        asked_again.starts_with("archived#") && asked_again != archived,
        "{again}"
    );
    assert_eq!(
        again["inputRequests"][&asked_again], first["inputRequests"][&archived],
        "the same question"
    );
    update(&url, &task, &asked_again, json!({"confirm": true})).await;
    let second = settled(&url, "alice", &task).await;
    let format = only_key(&second);
    assert!(format.starts_with("format#"), "{second}");
    update(&url, &task, &format, json!({"choice": "csv"})).await;
    let done = settled(&url, "alice", &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    let writes = store.writes.lock().unwrap().clone();
    assert!(writes.len() >= 4, "{writes:?}");
    assert!(
        writes.iter().all(|(expected, new)| *new == expected + 1),
        "{writes:?}"
    );
}

/// A hand-written task machine: asks a name in each of two rounds, then reports the round
/// number its context gave each step. Named `typo`, it takes an answer under a key it
/// never asked (a server-side bug).
struct RoundsTask {
    descriptor: MachineDescriptor,
}

impl Machine for RoundsTask {
    type Output = mrtr::rmcp::model::CallToolResult;
    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }
    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, Self::Output> {
        Box::pin(async move {
            let ask = |seen: &Vec<u32>| {
                Ok::<_, mrtr::machine::StepError>(Step::Suspend(
                    Suspend::new(seen)?.ask("name", mrtr::machine::input::text("Name?"))?,
                ))
            };
            let Some(mut resume) = run.resume else {
                return ask(&vec![run.cx.round()]);
            };
            let key = if self.descriptor.name() == "typo" {
                "nmae"
            } else {
                "name"
            };
            let _: mrtr::machine::Elicited<String> = resume.answers().take(key)?;
            let mut seen: Vec<u32> = resume.state()?;
            seen.push(run.cx.round());
            if seen.len() < 3 {
                return ask(&seen);
            }
            Ok(Step::Done(mrtr::rmcp::model::CallToolResult::success(
                vec![mrtr::rmcp::model::ContentBlock::text(format!(
                    "rounds {seen:?}"
                ))],
            )))
        })
    }
}

/// Serves a [`RoundsTask`] named `name` and calls it, which makes a task at once (it has
/// no MRTR rounds before the hand-off); returns the server's URL and the task id.
async fn start_rounds_task(name: &str) -> (String, String) {
    let descriptor = renamed::renamed(gated.descriptor(), name);
    let url = serve(
        server(&Arc::default())
            .tool(RoundsTask { descriptor })
            .build()
            .unwrap(),
    )
    .await;
    let created = result(
        rpc(
            &url,
            "alice",
            true,
            "tools/call",
            json!({"name": name, "arguments": {}}),
        )
        .await,
    );
    assert_eq!(created["resultType"], "task", "{created}");
    (url, created["taskId"].as_str().unwrap().to_owned())
}

/// A task counts its rounds for the machine's context as MRTR does: 0, 1, 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_tells_the_machine_which_round_it_is_in() {
    let (url, task) = start_rounds_task("rounds").await;
    let mut previous = String::new();
    let done = loop {
        let got = settled(&url, "alice", &task).await;
        if got["status"] != "input_required" {
            break got;
        }
        let key = only_key(&got);
        if key != previous {
            update(&url, &task, &key, json!({"text": "Ada"})).await;
            previous = key;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "rounds [0, 1, 2]",
        "{done}"
    );
}

/// A task whose code takes an answer it never asked fails with `-32603`; its question is
/// not asked again (the code would take the same wrong key forever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_takes_a_key_it_never_asked_fails_without_asking_again() {
    let (url, task) = start_rounds_task("typo").await;
    let first = settled(&url, "alice", &task).await;
    let key = only_key(&first);
    update(&url, &task, &key, json!({"text": "Ada"})).await;
    let done = settled(&url, "alice", &task).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["error"]["code"], -32603, "{done}");
}
