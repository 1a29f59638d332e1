//! Clients that negotiated 2025-11-25 through `initialize` drive the same compiled
//! machines: rmcp's own client in legacy mode answers real `elicitation/create`,
//! `sampling/createMessage` and `roots/list` requests over real stdio pipes (child
//! processes) and real Streamable HTTP sessions on 127.0.0.1, while 2026-07-28 clients of
//! the same server keep getting `input_required`.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577

#[path = "../examples/showcase/deploy_wizard.rs"]
#[allow(dead_code)]
mod deploy_wizard;
#[path = "../examples/showcase/order_flow.rs"]
mod order_flow;
#[path = "support/renamed.rs"]
mod renamed;
mod support;
#[path = "support/tally.rs"]
mod tally;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mrtr::machine::{Machine, MachineDescriptor, Run, Step, StepFuture, Suspend};
use mrtr::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ListRootsResult, ProtocolVersion, Role, Root,
    SamplingMessage, SamplingMessageContentBlock, ServerResult,
};
use mrtr::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RequestContext, RunningService,
    ServiceError,
};
use mrtr::rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use mrtr::rmcp::{ClientHandler, ErrorData, RoleClient};
use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::token::KeyRing;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A bound so a broken server fails a test instead of hanging it; never asserted on.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// How the scripted person answers.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Answer everything (confirmations with yes).
    Answer,
    /// Decline confirmations.
    DeclineConfirm,
    /// Cancel the first form.
    Cancel,
    /// Never answer an elicitation (until the server cancels it).
    Never,
    /// Answer every text question with a number.
    Malformed,
    /// Answer sampling and roots requests with a JSON-RPC error.
    Refuse,
}

/// A client user that answers the showcase and tally questions, and records what it was
/// asked.
#[derive(Clone)]
struct Person {
    version: Option<ProtocolVersion>,
    capabilities: Value,
    mode: Mode,
    /// Every request received, as `method field`.
    asked: Arc<Mutex<Vec<String>>>,
    /// Answer the first text question with the wrong type.
    malformed_first: Arc<AtomicBool>,
    /// Signalled when a request arrives / when the server cancels one.
    arrived: Arc<Notify>,
    cancelled: Arc<Notify>,
    /// A confirmation waits for the roots request of its round when set.
    join_gate: Option<Arc<Notify>>,
}

impl Person {
    fn legacy(mode: Mode) -> Self {
        Person {
            version: Some(ProtocolVersion::V_2025_11_25),
            capabilities: json!({"elicitation": {}, "sampling": {}, "roots": {}}),
            mode,
            asked: Arc::default(),
            malformed_first: Arc::default(),
            arrived: Arc::default(),
            cancelled: Arc::default(),
            join_gate: None,
        }
    }

    fn modern() -> Self {
        Person {
            version: None,
            ..Person::legacy(Mode::Answer)
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    fn record(&self, what: String) {
        self.asked.lock().unwrap().push(what);
        self.arrived.notify_one();
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(self.capabilities.clone()).expect("valid capabilities");
        let config = ClientConfig::new(capabilities, Implementation::new("legacy-tests", "0.0.0"));
        match &self.version {
            Some(version) => config.with_protocol_version(version.clone()),
            None => config,
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let field = requested_schema
            .properties
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        self.record(format!("elicitation/create {field}"));
        if self.mode == Mode::Never {
            context.ct.cancelled().await;
            self.cancelled.notify_one();
            return Err(ErrorData::internal_error("cancelled by the server", None));
        }
        let accept =
            |content: Value| Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content));
        match field.as_str() {
            "text"
                if self.mode == Mode::Malformed
                    || self.malformed_first.swap(false, Ordering::SeqCst) =>
            {
                accept(json!({"text": 42}))
            }
            "text" => accept(json!({"text": "Ada"})),
            "confirm" => {
                if let Some(gate) = &self.join_gate {
                    gate.notified().await;
                }
                if self.mode == Mode::DeclineConfirm {
                    Ok(ElicitResult::new(ElicitationAction::Decline))
                } else {
                    accept(json!({"confirm": true}))
                }
            }
            "dish" if self.mode == Mode::Cancel => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            "dish" => {
                // Two dishes: the loop suspends twice.
                let first = self.asked().iter().filter(|a| a.ends_with(" dish")).count() == 1;
                accept(json!({"dish": "pad-thai", "quantity": 2, "more": first}))
            }
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.record("sampling/createMessage".into());
        if self.mode == Mode::Refuse {
            return Err(ErrorData::invalid_request("no model here", None));
        }
        Ok(CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text("Brisk")),
            "scripted-model".into(),
        ))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.record("roots/list".into());
        if self.mode == Mode::Refuse {
            return Err(ErrorData::invalid_request("no roots here", None));
        }
        if let Some(gate) = &self.join_gate {
            gate.notify_one();
        }
        Ok(ListRootsResult::new(vec![
            Root::new("file:///work/a"),
            Root::new("file:///work/b"),
        ]))
    }
}

type Client = RunningService<RoleClient, Person>;

fn lifecycle(person: &Person) -> ClientLifecycleMode {
    match person.version {
        Some(_) => ClientLifecycleMode::Initialize,
        None => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    }
}

async fn http_client(addr: SocketAddr, person: Person) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let mode = lifecycle(&person);
    person
        .serve_with_lifecycle(transport, mode)
        .await
        .expect("client connects over HTTP")
}

async fn stdio_client(binary: &str, args: &[&str], person: Person) -> Client {
    let mut command = tokio::process::Command::new(support::bins::example(binary));
    command.args(args);
    let transport = TokioChildProcess::new(command).expect("spawn the stdio server");
    let mode = lifecycle(&person);
    person
        .serve_with_lifecycle(transport, mode)
        .await
        .expect("client connects over stdio")
}

fn call(name: &'static str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(args.as_object().cloned().unwrap())
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn call_tool(
    client: &Client,
    params: CallToolRequestParams,
) -> Result<CallToolResult, ServiceError> {
    tokio::time::timeout(HANG_GUARD, client.call_tool(params))
        .await
        .expect("the call ends")
}

fn error_of(result: Result<CallToolResult, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The showcase's order flow and deploy wizard plus the counting tool, served over
/// Streamable HTTP with `mrtr::server::http` on 127.0.0.1.
struct Served {
    addr: SocketAddr,
    kitchen: Arc<order_flow::Kitchen>,
    runs: Arc<tally::Runs>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve(
    tune: impl FnOnce(mrtr::server::McpServerBuilder) -> mrtr::server::McpServerBuilder,
) -> Served {
    let kitchen = Arc::new(order_flow::Kitchen::default());
    let runs = Arc::new(tally::Runs::default());
    let builder = McpServer::builder("legacy-tests")
        .keys(KeyRing::generate_process_local().unwrap())
        .app_state(kitchen.clone())
        .app_state(runs.clone())
        .tool(order_flow::order_food)
        .tool(deploy_wizard::deploy_wizard)
        .tool(tally::tally);
    let server = tune(builder).build().expect("server builds");
    let bound = HttpServing::new(server)
        .shutdown_grace(Duration::from_secs(1))
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
        kitchen,
        runs,
        stop: Some(stop),
    }
}

#[tokio::test]
async fn stdio_legacy_client_drives_the_tally_and_code_between_suspensions_runs_once() {
    let person = Person::legacy(Mode::Answer);
    person.malformed_first.store(true, Ordering::SeqCst);
    let client = stdio_client("legacy_test_server", &[], person.clone()).await;
    assert_eq!(
        client.peer_info().map(|info| info.protocol_version.clone()),
        Some(ProtocolVersion::V_2025_11_25),
        "the server accepted the legacy initialize"
    );
    let result = call_tool(&client, call("tally", json!({"label": "votes"})))
        .await
        .expect("the flow completes");
    // The malformed first answer was asked again; no stretch of code ran twice.
    assert_eq!(
        text_of(&result),
        "votes for Ada: 2 root(s), note `Brisk` | runs 1/1/1"
    );
    let mut asked = person.asked();
    asked[2..4].sort();
    assert_eq!(
        asked,
        [
            "elicitation/create text",
            "elicitation/create text",
            "elicitation/create confirm",
            "roots/list",
            "sampling/createMessage",
        ]
    );
    client.cancel().await.expect("client shuts down");
}

/// Answers that stay unusable are asked for again until the call reaches the server's cap
/// on rounds per call (9 here: the question and 8 more), then the call ends with `-32602`
/// naming the key, the tool and the cap; no code after the question ran.
#[tokio::test]
async fn answers_that_stay_malformed_are_asked_again_up_to_the_round_cap_then_end_the_call() {
    let served = serve(|b| b.max_rounds_per_call(9)).await;
    let person = Person::legacy(Mode::Malformed);
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("tally", json!({"label": "votes"}))).await);
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert_eq!(
        error.message,
        "the answer to `ask_0` was unusable (malformed: `text` must be a string) and `tally` \
         reached this server's limit of 9 rounds per call asking for it again; the call is ended"
    );
    assert_eq!(
        error.data,
        Some(json!({"key": "ask_0", "maxRoundsPerCall": 9}))
    );
    assert_eq!(person.asked(), vec!["elicitation/create text"; 9]);
    assert_eq!(served.runs.snapshot(), [1, 0, 0]);
    client.cancel().await.expect("client shuts down");
}

/// Arguments that do not match the tool's schema get the same `-32602` in a legacy session
/// as over MRTR, before anything is asked.
#[tokio::test]
async fn a_legacy_call_with_invalid_arguments_is_invalid_params() {
    let served = serve(|b| b).await;
    let person = Person::legacy(Mode::Answer);
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("tally", json!({"label": 5}))).await);
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert!(
        error.message.starts_with("invalid arguments: "),
        "{}",
        error.message
    );
    assert!(person.asked().is_empty());
    assert_eq!(served.runs.snapshot(), [0, 0, 0]);
    client.cancel().await.expect("client shuts down");
}

/// Form elicitation arrived in 2025-06-18: a session of exactly that revision is asked, one
/// of 2025-03-26 gets `-32600` naming both revisions and is sent nothing.
#[tokio::test]
async fn form_questions_need_a_session_of_2025_06_18_or_later() {
    let served = serve(|b| b).await;
    let mut person = Person::legacy(Mode::Answer);
    person.version = Some(ProtocolVersion::V_2025_06_18);
    let client = http_client(served.addr, person.clone()).await;
    let result = call_tool(&client, call("tally", json!({"label": "votes"})))
        .await
        .expect("2025-06-18 has form elicitation");
    assert_eq!(
        text_of(&result),
        "votes for Ada: 2 root(s), note `Brisk` | runs 1/1/1"
    );
    client.cancel().await.expect("client shuts down");

    let mut person = Person::legacy(Mode::Answer);
    person.version = Some(ProtocolVersion::V_2025_03_26);
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("tally", json!({"label": "votes"}))).await);
    assert_eq!(error.code.0, -32600, "{error:?}");
    assert!(
        error
            .message
            .contains("protocol 2025-03-26 does not have (it arrived in 2025-06-18)"),
        "{}",
        error.message
    );
    assert!(person.asked().is_empty());
    client.cancel().await.expect("client shuts down");
}

/// Picks several toppings: a multi-select form, which elicitation schemas have only since
/// 2025-11-25.
#[mrtr::tool]
async fn toppings() -> String {
    let picked = ask!(multi_choice("Toppings?", ["basil", "olives", "chili"]))
        .ok()
        .unwrap_or_default();
    picked.join(", ")
}

/// A 2025-06-18 session is never sent a multi-select form (that revision's schemas have no
/// arrays): the call ends with `-32600` naming the revision that has it, and nothing is
/// sent; a 2025-11-25 session is asked it.
#[tokio::test]
async fn multi_select_is_not_sent_to_a_2025_06_18_session() {
    let served = serve(|b| b.tool(toppings)).await;
    let mut person = Person::legacy(Mode::Answer);
    person.version = Some(ProtocolVersion::V_2025_06_18);
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("toppings", json!({}))).await);
    assert_eq!(error.code.0, -32600, "{error:?}");
    assert!(
        error.message.contains(
            "multi-select question, which protocol 2025-06-18 does not have (it arrived in 2025-11-25)"
        ),
        "{}",
        error.message
    );
    assert!(person.asked().is_empty(), "{:?}", person.asked());
    client.cancel().await.expect("client shuts down");

    let person = Person::legacy(Mode::Answer);
    let client = http_client(served.addr, person.clone()).await;
    let _ = call_tool(&client, call("toppings", json!({}))).await;
    assert_eq!(person.asked(), vec!["elicitation/create choices"]);
    client.cancel().await.expect("client shuts down");
}

/// A 2025 session's `initialize` does not advertise the tasks extension (its client never
/// gets tasks); a 2026-07-28 discovery does when the server has task tools.
#[tokio::test]
async fn the_tasks_extension_is_advertised_only_to_2026_clients() {
    let served = serve(|b| b.tool(task_tool())).await;
    let client = http_client(served.addr, Person::legacy(Mode::Answer)).await;
    let info = client.peer_info().expect("initialized").clone();
    let advertised = info
        .capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(mrtr::rmcp::model::TASKS_EXTENSION_ID));
    assert!(!advertised, "{:?}", info.capabilities);
    client.cancel().await.expect("client shuts down");
    let server = McpServer::builder("t")
        .keys(KeyRing::generate_process_local().unwrap())
        .tool(task_tool())
        .build()
        .unwrap();
    let info = mrtr::rmcp::ServerHandler::get_info(&server);
    assert!(
        info.capabilities
            .extensions
            .is_some_and(|e| e.contains_key(mrtr::rmcp::model::TASKS_EXTENSION_ID))
    );
}

fn task_tool() -> impl Machine<Output = mrtr::rmcp::model::CallToolResult> {
    struct AsTask<M>(M, MachineDescriptor);
    impl<M: Machine<Output = mrtr::rmcp::model::CallToolResult>> Machine for AsTask<M> {
        type Output = mrtr::rmcp::model::CallToolResult;
        fn descriptor(&self) -> &MachineDescriptor {
            &self.1
        }
        fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, Self::Output> {
            self.0.step(run)
        }
    }
    let descriptor = toppings
        .descriptor()
        .clone()
        .with_task(mrtr::machine::TaskSupport::optional());
    AsTask(toppings, descriptor)
}

/// A client that answers a request with an error ends the call with `-32603` naming the
/// request's method and key, and what the client said.
#[tokio::test]
async fn a_client_error_ends_the_call_naming_the_method_it_refused() {
    let served = serve(|b| b).await;
    let person = Person::legacy(Mode::Refuse);
    let client = http_client(served.addr, person.clone()).await;

    let error = error_of(call_tool(&client, call("tally", json!({"label": "x"}))).await);
    assert_eq!(error.code.0, -32603, "{error:?}");
    assert!(
        error
            .message
            .starts_with("the client did not answer roots/list `"),
        "{}",
        error.message
    );
    assert!(error.message.contains("no roots here"), "{}", error.message);
    assert_eq!(error.data.as_ref().unwrap()["method"], "roots/list");

    let error = error_of(call_tool(&client, call("order_food", json!({"customer": "Ada"}))).await);
    assert_eq!(error.code.0, -32603, "{error:?}");
    assert!(
        error
            .message
            .starts_with("the client did not answer sampling/createMessage `"),
        "{}",
        error.message
    );
    assert!(error.message.contains("no model here"), "{}", error.message);
    // The ticket is placed after the kitchen note, which never came.
    assert!(served.kitchen.tickets().is_empty());
    client.cancel().await.expect("client shuts down");
}

/// A hand-written machine. `rounds`: asks a name in each of two rounds, then reports the
/// round number its context gave each step. `typo`: takes an answer under a key it never
/// asked (a server-side bug).
struct Handwritten {
    descriptor: MachineDescriptor,
}

impl Handwritten {
    fn new(name: &str) -> Self {
        let descriptor = renamed::renamed(tally::tally.descriptor(), name);
        Handwritten { descriptor }
    }
}

impl Machine for Handwritten {
    type Output = CallToolResult;
    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }
    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        Box::pin(async move {
            let ask = |seen: &Vec<u32>| {
                Ok::<_, mrtr::machine::StepError>(Step::Suspend(
                    Suspend::new(seen)?.ask("name", mrtr::machine::input::text("Name?"))?,
                ))
            };
            let Some(mut resume) = run.resume else {
                return ask(&vec![run.cx.round()]);
            };
            if self.descriptor.name() == "typo" {
                let _: mrtr::machine::Elicited<String> = resume.answers().take("nmae")?;
                unreachable!("a key that was never asked has no answer")
            }
            let _: mrtr::machine::Elicited<String> = resume.answers().take("name")?;
            let mut seen: Vec<u32> = resume.state()?;
            seen.push(run.cx.round());
            if seen.len() < 3 {
                return ask(&seen);
            }
            Ok(Step::Done(CallToolResult::success(vec![
                mrtr::rmcp::model::ContentBlock::text(format!("rounds {seen:?}")),
            ])))
        })
    }
}

/// A legacy session counts its rounds for the machine's context as MRTR does: 0, 1, 2.
#[tokio::test]
async fn a_legacy_session_tells_the_machine_which_round_it_is_in() {
    let served = serve(|b| b.tool(Handwritten::new("rounds"))).await;
    let person = Person::legacy(Mode::Answer);
    let client = http_client(served.addr, person.clone()).await;
    let result = call_tool(&client, call("rounds", json!({"label": "x"})))
        .await
        .expect("the flow completes");
    assert_eq!(text_of(&result), "rounds [0, 1, 2]");
    assert_eq!(person.asked(), vec!["elicitation/create text"; 2]);
    client.cancel().await.expect("client shuts down");
}

/// A machine that takes an answer it never asked for is the server's bug: `-32603`, and
/// its question is not asked again (it would loop: the code takes the same wrong key).
#[tokio::test]
async fn a_machine_that_takes_a_key_it_never_asked_fails_without_asking_again() {
    let served = serve(|b| b.tool(Handwritten::new("typo"))).await;
    let person = Person::legacy(Mode::Answer);
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("typo", json!({"label": "x"}))).await);
    assert_eq!(error.code.0, -32603, "{error:?}");
    assert_eq!(person.asked(), vec!["elicitation/create text"]);
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn stdio_legacy_client_orders_through_the_showcase() {
    let person = Person::legacy(Mode::Answer);
    let client = stdio_client("showcase", &["serve-stdio"], person.clone()).await;
    let result = call_tool(&client, call("order_food", json!({"customer": "Grace"})))
        .await
        .expect("the flow completes");
    assert_eq!(
        text_of(&result),
        "Order placed for Grace: 2 × pad thai, 2 × pad thai — total 44.00. Kitchen note: Brisk"
    );
    assert_eq!(
        person.asked(),
        [
            "elicitation/create dish",
            "elicitation/create dish",
            "elicitation/create confirm",
            "sampling/createMessage",
        ]
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn http_legacy_session_counts_each_stretch_once_and_sends_a_join_concurrently() {
    let served = serve(|b| b).await;
    let mut person = Person::legacy(Mode::Answer);
    // The confirmation is answered only once the roots request of the same round arrived:
    // sent one after the other, this round could never finish.
    person.join_gate = Some(Arc::new(Notify::new()));
    let client = http_client(served.addr, person.clone()).await;
    let result = call_tool(&client, call("tally", json!({"label": "seats"})))
        .await
        .expect("the flow completes");
    assert_eq!(
        text_of(&result),
        "seats for Ada: 2 root(s), note `Brisk` | runs 1/1/1"
    );
    assert_eq!(served.runs.snapshot(), [1, 1, 1]);
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn http_legacy_decline_and_cancel_reach_the_tool() {
    let served = serve(|b| b).await;

    let decliner = http_client(served.addr, Person::legacy(Mode::DeclineConfirm)).await;
    let declined = call_tool(&decliner, call("order_food", json!({"customer": "Linus"})))
        .await
        .expect("a decline is an answer");
    assert_eq!(text_of(&declined), "Order for Linus not placed.");

    let canceller = http_client(served.addr, Person::legacy(Mode::Cancel)).await;
    let cancelled = call_tool(&canceller, call("order_food", json!({"customer": "Ken"})))
        .await
        .expect("a cancel is an answer");
    assert_eq!(text_of(&cancelled), "Order for Ken abandoned.");

    assert!(served.kitchen.tickets().is_empty(), "nothing was placed");
    decliner.cancel().await.expect("client shuts down");
    canceller.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn legacy_and_2026_clients_share_one_server_process() {
    let served = serve(|b| b).await;
    let legacy_person = Person::legacy(Mode::Answer);
    let modern_person = Person::modern();
    let legacy = http_client(served.addr, legacy_person.clone()).await;
    let modern = http_client(served.addr, modern_person.clone()).await;

    let (old, new) = tokio::join!(
        call_tool(&legacy, call("order_food", json!({"customer": "Old"}))),
        call_tool(&modern, call("order_food", json!({"customer": "New"}))),
    );
    assert_eq!(
        text_of(&old.expect("legacy flow completes")),
        "Order placed for Old: 2 × pad thai, 2 × pad thai — total 44.00. Kitchen note: Brisk"
    );
    assert_eq!(
        text_of(&new.expect("2026 flow completes")),
        "Order placed for New: 2 × pad thai, 2 × pad thai — total 44.00. Kitchen note: Brisk"
    );
    let mut tickets = served.kitchen.tickets();
    tickets.sort();
    assert_eq!(tickets.len(), 2, "{tickets:?}");
    assert!(tickets[0].starts_with("New: ") && tickets[1].starts_with("Old: "));

    // The 2026 client got `input_required` rounds (its own driver answered them), not
    // server-to-client requests: a raw call without answers shows the round.
    let raw = modern
        .peer()
        .send_request(ClientRequest::CallToolRequest(
            mrtr::rmcp::model::CallToolRequest::new(call("order_food", json!({"customer": "Raw"}))),
        ))
        .await
        .expect("a round");
    let ServerResult::InputRequiredResult(round) = raw else {
        panic!("a 2026 client gets input_required, got {raw:?}");
    };
    assert!(round.input_requests.is_some_and(|r| r.contains_key("dish")));
    legacy.cancel().await.expect("client shuts down");
    modern.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn a_client_without_elicitation_gets_a_clear_error_and_nothing_is_sent() {
    let served = serve(|b| b).await;
    let mut person = Person::legacy(Mode::Answer);
    person.capabilities = json!({"sampling": {}, "roots": {}});
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("tally", json!({"label": "x"}))).await);
    assert_eq!(error.code.0, -32600, "{error:?}");
    assert!(
        error.message.contains("elicitation.form") && error.message.contains("initialize"),
        "{}",
        error.message
    );
    assert_eq!(
        error
            .data
            .as_ref()
            .map(|d| d["requiredCapabilities"].clone()),
        Some(json!({"elicitation": {}}))
    );
    assert!(
        person.asked().is_empty(),
        "nothing was sent: {:?}",
        person.asked()
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn an_unanswered_request_times_out_with_a_clear_error_and_is_cancelled_on_the_client() {
    let served = serve(|b| b.legacy_request_timeout(Duration::from_millis(300))).await;
    let person = Person::legacy(Mode::Never);
    let client = http_client(served.addr, person.clone()).await;
    let error = error_of(call_tool(&client, call("tally", json!({"label": "x"}))).await);
    assert!(
        error
            .message
            .contains("did not answer elicitation/create `ask_0` within 300 ms"),
        "{}",
        error.message
    );
    tokio::time::timeout(HANG_GUARD, person.cancelled.notified())
        .await
        .expect("the client was told to stop asking");
    assert_eq!(
        served.runs.snapshot(),
        [1, 0, 0],
        "the flow ended at the suspension"
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn stdio_timeout_comes_from_the_server_configuration() {
    let person = Person::legacy(Mode::Never);
    let client = stdio_client("legacy_test_server", &["200"], person.clone()).await;
    let error = error_of(call_tool(&client, call("tally", json!({"label": "x"}))).await);
    assert!(error.message.contains("within 200 ms"), "{}", error.message);
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn a_cancelled_call_ends_the_machine_and_cancels_its_pending_request() {
    let served = serve(|b| b).await;
    let person = Person::legacy(Mode::Never);
    let client = http_client(served.addr, person.clone()).await;
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(mrtr::rmcp::model::CallToolRequest::new(call(
                "tally",
                json!({"label": "x"}),
            ))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("sent");
    tokio::time::timeout(HANG_GUARD, person.arrived.notified())
        .await
        .expect("the server asked");
    handle
        .cancel(Some("user pressed stop".into()))
        .await
        .expect("notifications/cancelled sent");
    tokio::time::timeout(HANG_GUARD, person.cancelled.notified())
        .await
        .expect("the server cancelled its own pending request");
    assert_eq!(
        served.runs.snapshot(),
        [1, 0, 0],
        "nothing after the suspension ran"
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn legacy_initialize_is_refused_when_legacy_sessions_are_off() {
    let served = serve(|b| b.legacy_sessions(false)).await;
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{}/mcp", served.addr));
    let refused = Person::legacy(Mode::Answer)
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await;
    assert!(refused.is_err(), "a legacy initialize must fail");

    // On by default: the same initialize is accepted.
    let on = serve(|b| b).await;
    let client = http_client(on.addr, Person::legacy(Mode::Answer)).await;
    assert_eq!(
        client.peer_info().map(|info| info.protocol_version.clone()),
        Some(ProtocolVersion::V_2025_11_25)
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn many_legacy_sessions_complete_concurrently() {
    const SESSIONS: u32 = 100;
    let served = serve(|b| b).await;
    let mut resident = vec![resident_kib()];
    // Two waves: if the second one leaves the process no bigger than the first did, what
    // stays is the allocator's cache, not sessions or machines that were never freed.
    for wave in 0..2 {
        let calls = (0..SESSIONS).map(|i| {
            let addr = served.addr;
            async move {
                let client = http_client(addr, Person::legacy(Mode::Answer)).await;
                let label = format!("w{wave}n{i}");
                let result = call_tool(
                    &client,
                    CallToolRequestParams::new("tally")
                        .with_arguments(json!({"label": label}).as_object().cloned().unwrap()),
                )
                .await
                .expect("the flow completes");
                client.cancel().await.expect("client shuts down");
                text_of(&result)
            }
        });
        let texts = futures::future::join_all(calls).await;
        assert!(
            texts.iter().all(|t| t.contains("for Ada: 2 root(s)")),
            "{texts:?}"
        );
        resident.push(resident_kib());
    }
    assert_eq!(served.runs.snapshot(), [2 * SESSIONS; 3]);
    // Reported, not asserted (the allocator decides when pages go back to the system).
    eprintln!(
        "{SESSIONS} legacy sessions per wave: test process RSS KiB before, after wave 1, after wave 2: {resident:?}"
    );
}

/// This process's resident set size, from /proc (0 where there is none).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
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
