//! The client driver retries a request that failed in transit, over real TCP on 127.0.0.1:
//! behind a front that answers 502/503 or JSON-RPC errors before forwarding to a real mrtr
//! server, and against a server stopped and restarted on the same port mid-flow.
#![allow(deprecated)]

#[path = "../examples/showcase/deploy_wizard.rs"]
mod deploy_wizard;

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use mrtr::client::{
    ClientError, DriverConfig, FormElicitation, HandlerError, InputHandlers, MrtrClient,
    PendingCall, RetryPolicy, RetryReason, RoundObserver,
};
use mrtr::server::{McpServer, http::HttpServing};
use mrtr::token::KeyRing;
use rmcp::{
    model::{CallToolResult, ElicitResult, ElicitationAction},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};
use tokio::{sync::oneshot, task::JoinHandle};

const DONE: &str = "Deploying api 1.4.2 to staging (1 version attempt(s)).";

fn keys() -> KeyRing {
    KeyRing::generate_process_local().expect("generate a key")
}

fn wizard_server(keys: KeyRing) -> McpServer {
    McpServer::builder("retries")
        .keys(keys)
        .tool(deploy_wizard::deploy_wizard)
        .build()
        .expect("build the server")
}

fn answer(form: &FormElicitation) -> Result<ElicitResult, HandlerError> {
    let content = match form.key.as_str() {
        "environment" => json!({"choice": "staging"}),
        "confirm" => json!({"confirm": true}),
        "version" => json!({"text": "1.4.2"}),
        other => return Err(HandlerError::failed(format!("unexpected key {other}"))),
    };
    Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
}

fn wizard_answers() -> InputHandlers {
    InputHandlers::new().on_elicit(|form| async move { answer(&form) })
}

fn text_of(result: &CallToolResult) -> String {
    result.content[0].as_text().expect("text").text.clone()
}

fn arguments() -> Option<rmcp::model::JsonObject> {
    json!({"service": "api"}).as_object().cloned()
}

/// A running mrtr server; `stop` shuts it down and waits until its port is free.
struct Backend {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Backend {
    fn serve(listener: tokio::net::TcpListener, keys: KeyRing) -> Self {
        let bound = HttpServing::new(wizard_server(keys))
            .shutdown_grace(Duration::from_secs(5))
            .with_listener(listener)
            .expect("serve on the listener");
        let addr = bound.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            bound
                .serve_until(async {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
        });
        Backend {
            addr,
            stop: Some(stop),
            task,
        }
    }

    async fn start(keys: KeyRing) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        Self::serve(listener, keys)
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    async fn stop(mut self) {
        let _ = self.stop.take().expect("running").send(());
        self.task.await.expect("the server task ends");
    }
}

// ------------------------------------------------------------------ the failing front

/// What the front does with one `tools/call` instead of forwarding it.
#[derive(Clone, Debug)]
enum Fault {
    /// Answer this HTTP status with a plain-text body, like a proxy whose upstream is down.
    Status(u16),
    /// Answer this JSON-RPC error (HTTP 200).
    RpcError { code: i32, data: Value },
}

#[derive(Default)]
struct FrontState {
    backend: String,
    http: reqwest::Client,
    /// Faults for calls without a `requestState`, then for calls with one, in order.
    first_call_faults: Mutex<VecDeque<Fault>>,
    resumed_faults: Mutex<VecDeque<Fault>>,
    /// The params of every `tools/call` that reached the front.
    calls: Mutex<Vec<Value>>,
}

/// An HTTP front on 127.0.0.1 that injects faults, then forwards to `backend`.
struct Front {
    url: String,
    state: Arc<FrontState>,
}

impl Front {
    async fn start(backend: &str) -> Self {
        let state = Arc::new(FrontState {
            backend: backend.to_owned(),
            ..FrontState::default()
        });
        let router = axum::Router::new()
            .route("/mcp", axum::routing::any(front))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.expect("front") });
        Front { url, state }
    }

    fn fail_first_calls(&self, faults: impl IntoIterator<Item = Fault>) {
        self.state.first_call_faults.lock().unwrap().extend(faults);
    }

    fn fail_resumed_calls(&self, faults: impl IntoIterator<Item = Fault>) {
        self.state.resumed_faults.lock().unwrap().extend(faults);
    }

    fn calls(&self) -> Vec<Value> {
        self.state.calls.lock().unwrap().clone()
    }
}

async fn front(
    State(state): State<Arc<FrontState>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if message["method"] == "tools/call" {
        let params = message["params"].clone();
        let resumed = params.get("requestState").is_some();
        state.calls.lock().unwrap().push(params);
        let queue = if resumed {
            &state.resumed_faults
        } else {
            &state.first_call_faults
        };
        let fault = queue.lock().unwrap().pop_front();
        match fault {
            Some(Fault::Status(status)) => {
                let status = StatusCode::from_u16(status).unwrap();
                return (status, "upstream unavailable").into_response();
            }
            Some(Fault::RpcError { code, data }) => {
                let reply = json!({"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": code, "message": "injected", "data": data}});
                return axum::Json(reply).into_response();
            }
            None => {}
        }
    }
    forward(&state, method, headers, body).await
}

async fn forward(state: &FrontState, method: Method, headers: HeaderMap, body: Bytes) -> Response {
    let mut request = state.http.request(method, &state.backend).body(body);
    for (name, value) in &headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            request = request.header(name, value);
        }
    }
    let Ok(reply) = request.send().await else {
        return (StatusCode::BAD_GATEWAY, "backend unreachable").into_response();
    };
    let status = reply.status();
    let mut kept = HeaderMap::new();
    for (name, value) in reply.headers() {
        if name != header::CONTENT_LENGTH && name != header::TRANSFER_ENCODING {
            kept.insert(name, value.clone());
        }
    }
    let body = reply.bytes().await.unwrap_or_default();
    (status, kept, body).into_response()
}

// ------------------------------------------------------------------ observing retries

#[derive(Clone, Debug, PartialEq)]
struct RetrySeen {
    round: u32,
    attempt: u32,
    reason: RetryReason,
}

#[derive(Clone, Default)]
struct Retries(Arc<Mutex<Vec<RetrySeen>>>);

impl Retries {
    fn seen(&self) -> Vec<RetrySeen> {
        self.0.lock().unwrap().clone()
    }
}

impl RoundObserver for Retries {
    fn retrying(&self, pending: &PendingCall, attempt: u32, reason: &RetryReason, _: Duration) {
        self.0.lock().unwrap().push(RetrySeen {
            round: pending.round,
            attempt,
            reason: reason.clone(),
        });
    }
}

/// Fast retries, so the tests spend little time asleep.
fn quick_retries() -> RetryPolicy {
    RetryPolicy::default()
        .with_initial_backoff(Duration::from_millis(10))
        .with_max_backoff(Duration::from_millis(50))
}

async fn client_for(url: &str, policy: RetryPolicy, retries: &Retries) -> MrtrClient {
    MrtrClient::connect_http(url, wizard_answers())
        .await
        .expect("connect")
        .with_config(DriverConfig::default().with_retries(policy))
        .with_observer(retries.clone())
}

/// The `tools/call` params that carried `requestState`s, grouped: the state and answers of
/// every presentation, in order.
fn resumed(calls: &[Value]) -> Vec<(Value, Value)> {
    calls
        .iter()
        .filter(|params| params.get("requestState").is_some())
        .map(|params| {
            (
                params["requestState"].clone(),
                params["inputResponses"].clone(),
            )
        })
        .collect()
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn a_resumed_round_behind_a_502_503_front_is_sent_again_unchanged() {
    let backend = Backend::start(keys()).await;
    let front = Front::start(&backend.url()).await;
    let retries = Retries::default();
    let client = client_for(&front.url, quick_retries(), &retries).await;
    front.fail_resumed_calls([Fault::Status(502), Fault::Status(503)]);

    let result = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap();
    assert_eq!(text_of(&result), DONE);

    assert_eq!(
        retries.seen(),
        vec![
            RetrySeen {
                round: 1,
                attempt: 1,
                reason: RetryReason::HttpStatus(502)
            },
            RetrySeen {
                round: 1,
                attempt: 2,
                reason: RetryReason::HttpStatus(503)
            },
        ]
    );
    // 1 first call + 3 presentations of round 2 + 1 each of rounds 3 and 4.
    let calls = front.calls();
    assert_eq!(calls.len(), 6, "{calls:#?}");
    let presented = resumed(&calls);
    assert_eq!(
        presented[0], presented[1],
        "the retry carried the same state and answers"
    );
    assert_eq!(
        presented[0], presented[2],
        "the retry carried the same state and answers"
    );
    assert_eq!(
        presented[0].1,
        json!({"environment": {"action": "accept", "content": {"choice": "staging"}}})
    );
    assert_ne!(presented[2], presented[3], "the next round moved on");
    client.close().await;
    backend.stop().await;
}

#[tokio::test]
async fn an_error_the_server_marks_retryable_is_retried_and_others_are_not() {
    let backend = Backend::start(keys()).await;
    let front = Front::start(&backend.url()).await;
    let retries = Retries::default();
    let client = client_for(&front.url, quick_retries(), &retries).await;

    front.fail_resumed_calls([
        Fault::RpcError {
            code: -32050,
            data: json!({"retryable": true}),
        },
        Fault::RpcError {
            code: -32051,
            data: json!({"retryable": true}),
        },
    ]);
    let result = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap();
    assert_eq!(text_of(&result), DONE);
    let codes: Vec<_> = retries
        .seen()
        .into_iter()
        .map(|seen| match seen.reason {
            RetryReason::RetryableError { code, .. } => code,
            other => panic!("unexpected reason {other:?}"),
        })
        .collect();
    assert_eq!(codes, vec![-32050, -32051]);

    // -32602 (and an error marked not retryable) are sent once and returned as they are.
    for (code, data) in [(-32602, Value::Null), (-32052, json!({"retryable": false}))] {
        let before = front.calls().len();
        let seen_before = retries.seen().len();
        front.fail_resumed_calls([Fault::RpcError { code, data }]);
        let error = client
            .call_tool("deploy_wizard", arguments())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ClientError::Server(data) if data.code.0 == code),
            "{error}"
        );
        assert_eq!(
            front.calls().len() - before,
            2,
            "the first call, then round 2 once"
        );
        assert_eq!(retries.seen().len(), seen_before, "no retry for {code}");
    }
    client.close().await;
    backend.stop().await;
}

#[tokio::test]
async fn retries_stop_at_max_retries_with_an_error_naming_the_attempts() {
    let backend = Backend::start(keys()).await;
    let front = Front::start(&backend.url()).await;
    let retries = Retries::default();
    let client = client_for(&front.url, quick_retries().with_max_retries(2), &retries).await;
    front.fail_resumed_calls(std::iter::repeat_n(Fault::Status(503), 10));

    let error = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap_err();
    let ClientError::RetriesExhausted { attempts, last } = &error else {
        panic!("expected RetriesExhausted, got {error}");
    };
    assert_eq!(*attempts, 3);
    assert!(error.to_string().contains("all 3 attempts"), "{error}");
    assert!(
        matches!(**last, ClientError::ConnectionLost { .. }),
        "the last failure is kept: {last}"
    );
    let pending = error
        .pending()
        .expect("the round is kept for a later retry");
    assert_eq!(pending.round, 1);
    assert_eq!(resumed(&front.calls()).len(), 3);
    assert_eq!(retries.seen().len(), 2);
    client.close().await;
    backend.stop().await;
}

#[tokio::test]
async fn a_first_call_that_may_have_arrived_is_retried_only_when_opted_in() {
    let backend = Backend::start(keys()).await;
    let front = Front::start(&backend.url()).await;

    let retries = Retries::default();
    let client = client_for(&front.url, quick_retries(), &retries).await;
    front.fail_first_calls([Fault::Status(502)]);
    let error = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ClientError::ConnectionLost { .. }),
        "{error}"
    );
    assert_eq!(front.calls().len(), 1, "sent once");
    assert!(retries.seen().is_empty());
    client.close().await;

    let retries = Retries::default();
    let client = client_for(
        &front.url,
        quick_retries().retry_first_calls(true),
        &retries,
    )
    .await;
    front.fail_first_calls([Fault::Status(502), Fault::Status(504)]);
    let result = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap();
    assert_eq!(text_of(&result), DONE);
    let seen = retries.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().all(|seen| seen.round == 0));
    client.close().await;
    backend.stop().await;
}

/// A client whose every request opens a new connection, so a stopped server is seen as
/// "connection refused", never as a stale pooled connection.
async fn unpooled_client(url: &str, retries: &Retries) -> MrtrClient {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    MrtrClient::connect(transport, wizard_answers())
        .await
        .expect("connect")
        .with_config(DriverConfig::default().with_retries(quick_retries()))
        .with_observer(retries.clone())
}

/// Restarts the server on `addr` the moment the driver reports its first retry: the port is
/// bound before the retry's pause, so the next attempt is queued by the kernel and served.
struct RestartOnRetry {
    addr: SocketAddr,
    keys: KeyRing,
    restarted: Arc<Mutex<Option<Backend>>>,
    runtime: tokio::runtime::Handle,
    inner: Retries,
}

impl RoundObserver for RestartOnRetry {
    fn retrying(&self, pending: &PendingCall, attempt: u32, reason: &RetryReason, pause: Duration) {
        self.inner.retrying(pending, attempt, reason, pause);
        let mut restarted = self.restarted.lock().unwrap();
        if restarted.is_none() {
            let listener = std::net::TcpListener::bind(self.addr).expect("rebind the same port");
            listener.set_nonblocking(true).unwrap();
            let _enter = self.runtime.enter();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            *restarted = Some(Backend::serve(listener, self.keys.clone()));
        }
    }
}

#[tokio::test]
async fn a_server_stopped_mid_flow_and_restarted_on_its_port_finishes_the_call() {
    let keys = keys();
    let backend = Backend::start(keys.clone()).await;
    let addr = backend.addr;
    let url = backend.url();
    let running = Arc::new(tokio::sync::Mutex::new(Some(backend)));
    let restarted = Arc::new(Mutex::new(None));
    let retries = Retries::default();

    // The user answers the first question while the server goes down.
    let handlers = InputHandlers::new().on_elicit({
        let running = running.clone();
        move |form| {
            let running = running.clone();
            async move {
                if let Some(backend) = running.lock().await.take() {
                    backend.stop().await;
                }
                answer(&form)
            }
        }
    });
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url.clone()),
    );
    let client = MrtrClient::connect(transport, handlers)
        .await
        .expect("connect")
        .with_config(DriverConfig::default().with_retries(quick_retries()))
        .with_observer(RestartOnRetry {
            addr,
            keys,
            restarted: restarted.clone(),
            runtime: tokio::runtime::Handle::current(),
            inner: retries.clone(),
        });

    let result = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap();
    assert_eq!(text_of(&result), DONE);
    assert_eq!(
        retries.seen(),
        vec![RetrySeen {
            round: 1,
            attempt: 1,
            reason: RetryReason::ConnectFailed
        }],
        "one refused attempt, then the restarted server answered"
    );
    client.close().await;
    let backend = restarted.lock().unwrap().take().expect("restarted");
    backend.stop().await;
}

#[tokio::test]
async fn a_first_call_refused_at_connect_is_retried_because_it_never_arrived() {
    let keys = keys();
    let backend = Backend::start(keys.clone()).await;
    let addr = backend.addr;
    let retries = Retries::default();
    let restarted = Arc::new(Mutex::new(None));
    let client = unpooled_client(&backend.url(), &retries).await;
    let client = client.with_observer(RestartOnRetry {
        addr,
        keys,
        restarted: restarted.clone(),
        runtime: tokio::runtime::Handle::current(),
        inner: Retries::default(),
    });
    backend.stop().await;

    let result = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap();
    assert_eq!(text_of(&result), DONE);
    assert_eq!(
        retries.seen(),
        vec![RetrySeen {
            round: 0,
            attempt: 1,
            reason: RetryReason::ConnectFailed
        }]
    );
    client.close().await;
    let backend = restarted.lock().unwrap().take().expect("restarted");
    backend.stop().await;
}

#[tokio::test]
async fn without_retries_a_stopped_server_fails_the_round_at_once() {
    let backend = Backend::start(keys()).await;
    let retries = Retries::default();
    let client = unpooled_client(&backend.url(), &retries)
        .await
        .with_config(DriverConfig::default().without_retries());
    backend.stop().await;
    let error = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ClientError::ConnectionLost { .. }),
        "{error}"
    );
    assert!(retries.seen().is_empty());
    client.close().await;
}

#[tokio::test]
async fn a_pooled_http_client_rides_out_a_restart_with_no_extra_code() {
    // `connect_http` keeps idle connections: the one to the stopped server is either noticed
    // as closed (the retry then connects afresh) or fails the send as a lost connection.
    let keys = keys();
    let backend = Backend::start(keys.clone()).await;
    let addr = backend.addr;
    let running = Arc::new(tokio::sync::Mutex::new(Some(backend)));
    let restarted = Arc::new(Mutex::new(None));
    let retries = Retries::default();
    let handlers = InputHandlers::new().on_elicit({
        let running = running.clone();
        move |form| {
            let running = running.clone();
            async move {
                if form.key == "confirm"
                    && let Some(backend) = running.lock().await.take()
                {
                    backend.stop().await;
                }
                answer(&form)
            }
        }
    });
    let url = format!("http://{addr}/mcp");
    let client = MrtrClient::connect_http(url, handlers)
        .await
        .expect("connect")
        .with_config(DriverConfig::default().with_retries(quick_retries()))
        .with_observer(RestartOnRetry {
            addr,
            keys,
            restarted: restarted.clone(),
            runtime: tokio::runtime::Handle::current(),
            inner: retries.clone(),
        });

    let result = client
        .call_tool("deploy_wizard", arguments())
        .await
        .unwrap();
    assert_eq!(text_of(&result), DONE);
    let seen = retries.seen();
    assert!(
        !seen.is_empty(),
        "the stopped server cost at least one retry"
    );
    assert!(
        seen.iter().all(|seen| seen.round == 2
            && matches!(
                seen.reason,
                RetryReason::ConnectFailed | RetryReason::ConnectionLost
            )),
        "{seen:?}"
    );
    client.close().await;
    let backend = restarted.lock().unwrap().take().expect("restarted");
    backend.stop().await;
}
