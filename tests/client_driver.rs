//! The MRTR client driver against a hand-written rmcp server, over real stdio (a child
//! process) and Streamable HTTP on 127.0.0.1.
#![allow(deprecated)]

#[path = "support/bins.rs"]
mod bins;
#[path = "support/server.rs"]
mod server;

use std::{
    sync::{Arc, Mutex, atomic::Ordering},
    time::Duration,
};

use mrtr::client::{
    CallTarget, ClientError, DriverConfig, HandlerError, InputHandlers, InputKind, MrtrClient,
    PendingCall, RoundObserver, RoundOutcome,
};
use rmcp::{
    model::{
        CallToolResult, CreateMessageResult, ElicitResult, ElicitationAction, InputResponses,
        ListRootsResult, ResourceContents, Root, SamplingMessage,
    },
    transport::{StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::json;
use server::TestServer;
use tokio_util::sync::CancellationToken;

fn stdio_transport() -> TokioChildProcess {
    TokioChildProcess::new(tokio::process::Command::new(bins::test_server())).expect("spawn server")
}

fn text_of(result: &CallToolResult) -> String {
    result.content[0]
        .as_text()
        .expect("text content")
        .text
        .clone()
}

fn accept(content: serde_json::Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

/// Answers the wizard: a full deployment, then "go ahead".
fn wizard_answers() -> InputHandlers {
    InputHandlers::new().on_elicit(|form| async move {
        Ok(match form.key.as_str() {
            "service" => accept(json!({"name": "api", "env": "staging", "replicas": 3})),
            "confirm" => accept(json!({"ok": true})),
            other => return Err(HandlerError::failed(format!("unexpected key {other}"))),
        })
    })
}

/// One answered round as the observer saw it.
#[derive(Clone, Debug)]
struct RoundSeen {
    round: u32,
    request_keys: Vec<String>,
    state_len: usize,
    answer_keys: Vec<String>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<RoundSeen>>>);

impl RoundObserver for Recorder {
    fn answered(&self, pending: &PendingCall, responses: &InputResponses) {
        self.0.lock().unwrap().push(RoundSeen {
            round: pending.round,
            request_keys: pending.input_requests.keys().cloned().collect(),
            state_len: pending.request_state_len(),
            answer_keys: responses.keys().cloned().collect(),
        });
    }
}

async fn http_server(server: TestServer) -> (String, CancellationToken) {
    let stop = CancellationToken::new();
    let url = server::serve_http(server, stop.clone()).await;
    (url, stop)
}

async fn http_client(url: &str, handlers: InputHandlers) -> MrtrClient {
    MrtrClient::connect(
        StreamableHttpClientTransport::from_uri(url.to_owned()),
        handlers,
    )
    .await
    .expect("connect over http")
}

#[tokio::test]
async fn multi_round_wizard_over_stdio_echoes_state_exactly() {
    let recorder = Recorder::default();
    let client = MrtrClient::connect(stdio_transport(), wizard_answers())
        .await
        .unwrap()
        .with_observer(recorder.clone());
    let result = client.call_tool("wizard", None).await.unwrap();
    assert_eq!(text_of(&result), "deployed api to staging x3");

    let rounds = recorder.0.lock().unwrap().clone();
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0].round, 1);
    assert_eq!(rounds[0].request_keys, vec!["service"]);
    assert_eq!(
        rounds[0].answer_keys,
        vec!["service"],
        "answers are keyed like the requests"
    );
    assert!(rounds[0].state_len > 0);
    assert_eq!(rounds[1].round, 2);
    assert_eq!(rounds[1].request_keys, vec!["confirm"]);
    assert_eq!(rounds[1].answer_keys, vec!["confirm"]);
    client.close().await;
}

#[tokio::test]
async fn an_altered_state_is_refused_by_the_server() {
    // Control for the echo test: the server does notice a changed byte.
    let client = MrtrClient::connect(stdio_transport(), wizard_answers())
        .await
        .unwrap();
    let RoundOutcome::InputRequired(mut pending) = client
        .start(CallTarget::tool("wizard", None))
        .await
        .unwrap()
    else {
        panic!("the wizard asks first");
    };
    let answers = client.answer(&pending).await.unwrap();
    let state = pending.request_state.take().unwrap();
    pending.request_state = Some(state.replacen(' ', "", 1));
    let error = client.resume(&pending, answers).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::Server(data) if data.message.contains("altered")),
        "{error}"
    );
    client.close().await;
}

#[tokio::test]
async fn absent_state_stays_absent_over_stdio() {
    let handlers = InputHandlers::new().on_elicit(|_| async { Ok(accept(json!({"ok": true}))) });
    let client = MrtrClient::connect(stdio_transport(), handlers)
        .await
        .unwrap();
    let result = client.call_tool("no_state", None).await.unwrap();
    assert_eq!(text_of(&result), "no-state-ok");
    client.close().await;
}

#[tokio::test]
async fn malformed_entry_and_unknown_result_type_are_clear_errors() {
    let handlers = InputHandlers::new().on_elicit(|_| async { Ok(accept(json!({}))) });
    let client = MrtrClient::connect(stdio_transport(), handlers)
        .await
        .unwrap();
    let error = client.call_tool("malformed", None).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::MalformedInputRequest { key, source } if key == "ask" && source.to_string().contains("message")),
        "{error}"
    );
    let error = client.call_tool("unknown_type", None).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::UnknownResultType { result_type } if result_type == "streaming"),
        "{error}"
    );
    client.close().await;
}

#[tokio::test]
async fn server_killed_between_rounds_then_pending_call_resumes_on_a_fresh_server() {
    let transport = stdio_transport();
    let pid = transport.id().expect("child pid");
    let client = MrtrClient::connect(transport, wizard_answers())
        .await
        .unwrap();
    let RoundOutcome::InputRequired(pending) = client
        .start(CallTarget::tool("wizard", None))
        .await
        .unwrap()
    else {
        panic!("the wizard asks first");
    };
    let answers = client.answer(&pending).await.unwrap();

    let killed = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    let error = client.resume(&pending, answers.clone()).await.unwrap_err();
    let ClientError::ConnectionLost {
        pending: lost,
        responses,
        ..
    } = error
    else {
        panic!("expected ConnectionLost, got {error}");
    };
    assert_eq!(*lost, pending);
    assert_eq!(responses, answers);

    // Another process could do this: the pending call is plain JSON.
    let stored = serde_json::to_string(&*lost).unwrap();
    let restored: PendingCall = serde_json::from_str(&stored).unwrap();
    let fresh = MrtrClient::connect(stdio_transport(), wizard_answers())
        .await
        .unwrap();
    let output = fresh.continue_call(restored, responses).await.unwrap();
    let mrtr::client::CallOutput::Tool(result) = output else {
        panic!("tool output")
    };
    assert_eq!(text_of(&result), "deployed api to staging x3");
    fresh.close().await;
}

#[tokio::test]
async fn multi_round_wizard_prompt_and_resource_over_http() {
    let (url, stop) = http_server(TestServer::default()).await;
    let handlers = InputHandlers::new()
        .on_elicit(|form| async move {
            Ok(match form.key.as_str() {
                "service" => accept(json!({"name": "web", "env": "production", "replicas": 1})),
                "confirm" => ElicitResult::new(ElicitationAction::Decline),
                "topic" => accept(json!({"topic": "tides"})),
                "ok" => accept(json!({"ok": true})),
                other => return Err(HandlerError::failed(format!("unexpected key {other}"))),
            })
        })
        .on_elicit_url(|request| async move {
            assert_eq!(request.url, "https://example.com/consent");
            Ok(ElicitResult::new(ElicitationAction::Accept))
        });
    let client = http_client(&url, handlers).await;

    let result = client.call_tool("wizard", None).await.unwrap();
    assert_eq!(text_of(&result), "not deployed: web to production x1");

    let prompt = client.get_prompt("topic", None).await.unwrap();
    let message = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(message["content"]["text"], "Write about tides");

    let resource = client.read_resource("secret://doc").await.unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &resource.contents[0] else {
        panic!("text resource");
    };
    assert_eq!(text, "the secret");

    let result = client.call_tool("no_state", None).await.unwrap();
    assert_eq!(text_of(&result), "no-state-ok");
    client.close().await;
    stop.cancel();
}

#[tokio::test]
async fn endless_input_required_stops_at_the_round_cap() {
    let server = TestServer::default();
    let calls = server.tool_calls.clone();
    let (url, stop) = http_server(server).await;
    let handlers = InputHandlers::new().on_elicit(|_| async { Ok(accept(json!({"ok": true}))) });
    let client = http_client(&url, handlers).await;
    let error = client.call_tool("forever", None).await.unwrap_err();
    let ClientError::RoundLimit {
        max_rounds,
        pending,
    } = &error
    else {
        panic!("expected RoundLimit, got {error}");
    };
    assert_eq!(*max_rounds, 10);
    assert_eq!(pending.round, 10);
    assert_eq!(calls.load(Ordering::SeqCst), 10);

    let client = client.with_config(DriverConfig::default().with_max_rounds(3));
    let before = calls.load(Ordering::SeqCst);
    let error = client.call_tool("forever", None).await.unwrap_err();
    assert!(
        matches!(error, ClientError::RoundLimit { max_rounds: 3, .. }),
        "{error}"
    );
    assert_eq!(calls.load(Ordering::SeqCst) - before, 3);
    client.close().await;
    stop.cancel();
}

#[tokio::test]
async fn unsupported_request_kind_fails_without_a_retry() {
    let server = TestServer::default();
    let calls = server.tool_calls.clone();
    let (url, stop) = http_server(server).await;
    let handlers = InputHandlers::new().on_elicit(|_| async { Ok(accept(json!({}))) });
    let client = http_client(&url, handlers).await;
    let error = client.call_tool("needs_sampling", None).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::UnsupportedInputRequest { key, kind: InputKind::Sampling } if key == "summary"),
        "{error}"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "no retry after an unsupported request"
    );
    client.close().await;
    stop.cancel();
}

#[tokio::test]
async fn one_round_is_answered_concurrently() {
    let (url, stop) = http_server(TestServer::default()).await;
    // Each handler waits until all three have started: only concurrent answering finishes.
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    let (b1, b2, b3) = (barrier.clone(), barrier.clone(), barrier);
    let handlers = InputHandlers::new()
        .on_list_roots(move |_| {
            let barrier = b1.clone();
            async move {
                barrier.wait().await;
                Ok(ListRootsResult::new(vec![
                    Root::new("file:///a"),
                    Root::new("file:///b"),
                ]))
            }
        })
        .on_sample(move |_| {
            let barrier = b2.clone();
            async move {
                barrier.wait().await;
                Ok(CreateMessageResult::new(
                    SamplingMessage::assistant_text("short"),
                    "test-model".into(),
                ))
            }
        })
        .on_elicit(move |_| {
            let barrier = b3.clone();
            async move {
                barrier.wait().await;
                Ok(ElicitResult::new(ElicitationAction::Cancel))
            }
        });
    let client = http_client(&url, handlers)
        .await
        .with_config(DriverConfig::default().with_handler_timeout(Some(Duration::from_secs(20))));
    let result = client.call_tool("gather", None).await.unwrap();
    assert_eq!(text_of(&result), "2 root(s); summary: short; ok: cancel");
    client.close().await;
    stop.cancel();
}

#[tokio::test]
async fn state_only_round_is_retried_without_answers() {
    let (url, stop) = http_server(TestServer::default()).await;
    let client = http_client(&url, InputHandlers::new()).await;
    let result = client.call_tool("state_only", None).await.unwrap();
    assert_eq!(text_of(&result), "waited");
    client.close().await;
    stop.cancel();
}

#[tokio::test]
async fn failing_and_hanging_handlers_are_clear_errors() {
    let (url, stop) = http_server(TestServer::default()).await;
    let failing =
        InputHandlers::new().on_elicit(|_| async { Err(HandlerError::failed("no keyboard")) });
    let client = http_client(&url, failing).await;
    let error = client.call_tool("wizard", None).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::HandlerFailed { key, kind: InputKind::FormElicitation, source } if key == "service" && source.to_string() == "no keyboard"),
        "{error}"
    );
    client.close().await;

    let hanging = InputHandlers::new().on_elicit(|_| std::future::pending());
    let client = http_client(&url, hanging).await.with_config(
        DriverConfig::default().with_handler_timeout(Some(Duration::from_millis(200))),
    );
    let error = client.call_tool("wizard", None).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::HandlerTimedOut { key, .. } if key == "service"),
        "{error}"
    );

    let client = client.with_config(
        DriverConfig::default()
            .with_handler_timeout(None)
            .with_budget(Some(Duration::from_millis(300))),
    );
    let error = client.call_tool("wizard", None).await.unwrap_err();
    let ClientError::BudgetExceeded { pending, .. } = &error else {
        panic!("expected BudgetExceeded, got {error}");
    };
    assert_eq!(pending.round, 1, "the open round is kept for a later retry");
    client.close().await;
    stop.cancel();
}

#[tokio::test]
async fn http_server_stopped_between_rounds_then_resumed_on_another() {
    let (url, stop) = http_server(TestServer::default()).await;
    let client = http_client(&url, wizard_answers()).await;
    let RoundOutcome::InputRequired(pending) = client
        .start(CallTarget::tool("wizard", None))
        .await
        .unwrap()
    else {
        panic!("the wizard asks first");
    };
    let answers = client.answer(&pending).await.unwrap();
    stop.cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // The default retry policy sends the round again 4 times, then gives up.
    let error = client.resume(&pending, answers).await.unwrap_err();
    let ClientError::RetriesExhausted { attempts: 5, last } = error else {
        panic!("expected RetriesExhausted after 5 attempts, got {error}");
    };
    let ClientError::ConnectionLost {
        pending, responses, ..
    } = *last
    else {
        panic!("expected ConnectionLost, got {last}");
    };

    let (url, stop) = http_server(TestServer::default()).await;
    let fresh = http_client(&url, wizard_answers()).await;
    let output = fresh.continue_call(*pending, responses).await.unwrap();
    let mrtr::client::CallOutput::Tool(result) = output else {
        panic!("tool output")
    };
    assert_eq!(text_of(&result), "deployed api to staging x3");
    fresh.close().await;
    stop.cancel();
}
