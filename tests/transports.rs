//! The hand-written three-round tool driven end to end by rmcp's own client, over real
//! stdio pipes and real Streamable HTTP on 127.0.0.1, every round sealed and opened for
//! real; and two server instances continuing each other's flows.

#[path = "../examples/hand_written/release_wizard.rs"]
mod release_wizard;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr::rmcp::model::{CallToolResponse, ProtocolVersion};
use mrtr::rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use mrtr::rmcp::transport::TokioChildProcess;
use mrtr::server::McpServer;
use mrtr::token::{KeyId, KeyRing, REJECTED_STATE_MESSAGE, SecretKey};
use release_wizard::PlanRelease;
use support::*;

fn keys(byte: u8) -> KeyRing {
    KeyRing::new(KeyId(1), SecretKey::from_bytes([byte; 32]))
}

fn release_server(keys: KeyRing, plans: Arc<AtomicUsize>) -> McpServer {
    McpServer::builder("release-server")
        .keys(keys)
        .tool(PlanRelease::new(plans))
        .build()
        .expect("server builds")
}

/// The hand-written example server, rebuilt if stale.
fn hand_written_binary() -> std::path::PathBuf {
    support::bins::example("hand_written")
}

#[tokio::test]
async fn three_rounds_over_stdio_with_a_child_process_server() {
    let binary = hand_written_binary();
    assert!(
        binary.exists(),
        "build the example first: {}",
        binary.display()
    );
    let mut command = tokio::process::Command::new(&binary);
    command.arg("serve-stdio");
    let transport = TokioChildProcess::new(command).expect("spawn the stdio server");
    let client = ScriptedUser::default()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("client connects over stdio");

    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools
        .iter()
        .find(|t| t.name == "plan_release")
        .expect("plan_release is listed");
    assert_eq!(tool.input_schema["properties"]["service"]["type"], "string");

    let result = client
        .call_tool(call("plan_release", serde_json::json!({"service": "api"})))
        .await
        .expect("the flow completes");
    assert_eq!(text_of(&result), format!("api → production: {SUMMARY}"));
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn three_rounds_over_streamable_http_each_round_sealed() {
    let plans = Arc::new(AtomicUsize::new(0));
    let server = serve_http(release_server(keys(1), plans.clone())).await;
    let client = http_client(&server.url, ScriptedUser::default()).await;

    // Drive the rounds by hand to see every one of them.
    let params = call("plan_release", serde_json::json!({"service": "api"}));
    let mut states = Vec::new();
    let mut keys_asked = Vec::new();
    let mut retry = params.clone();
    let result = loop {
        match call_once(&client, retry.clone())
            .await
            .expect("no protocol error")
        {
            CallToolResponse::Complete(result) => break result,
            CallToolResponse::InputRequired(round) => {
                let state = round
                    .request_state
                    .clone()
                    .expect("every round carries sealed state");
                assert!(state.starts_with("mrtr3."), "versioned token: {state}");
                keys_asked.push(
                    round
                        .input_requests
                        .iter()
                        .flatten()
                        .map(|(k, _)| k.clone())
                        .collect::<Vec<_>>(),
                );
                retry.input_responses = Some(answer_round(&round));
                retry.request_state = Some(state.clone());
                states.push(state);
            }
            other => panic!("unexpected response {other:?}"),
        }
    };
    assert_eq!(
        keys_asked,
        vec![vec!["environment"], vec!["confirm"], vec!["summary"]]
    );
    assert_eq!(states.len(), 3);
    let server_info = result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get("io.modelcontextprotocol/serverInfo"));
    assert_eq!(
        server_info.and_then(|info| info.get("name")),
        Some(&serde_json::json!("release-server")),
        "complete results identify the server too"
    );
    assert!(
        states.windows(2).all(|w| w[0] != w[1]),
        "a fresh token every round"
    );
    assert_eq!(text_of(&result), format!("api → production: {SUMMARY}"));
    assert_eq!(
        plans.load(Ordering::SeqCst),
        1,
        "the plan is built once per flow"
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn rmcp_client_drives_all_rounds_automatically_over_http() {
    let plans = Arc::new(AtomicUsize::new(0));
    let server = serve_http(release_server(keys(2), plans.clone())).await;
    let client = http_client(&server.url, ScriptedUser::default()).await;
    for service in ["api", "web", "worker"] {
        let result = client
            .call_tool(call(
                "plan_release",
                serde_json::json!({"service": service}),
            ))
            .await
            .expect("the flow completes");
        assert_eq!(
            text_of(&result),
            format!("{service} → production: {SUMMARY}")
        );
    }
    assert_eq!(
        plans.load(Ordering::SeqCst),
        3,
        "one plan per flow, never re-run on retries"
    );
    client.cancel().await.expect("client shuts down");
}

#[tokio::test]
async fn two_instances_sharing_a_key_ring_continue_each_others_flows() {
    let plans = Arc::new(AtomicUsize::new(0));
    let first = serve_http(release_server(keys(3), plans.clone())).await;
    let second = serve_http(release_server(keys(3), plans.clone())).await;
    let clients = [
        http_client(&first.url, ScriptedUser::default()).await,
        http_client(&second.url, ScriptedUser::default()).await,
    ];

    let mut retry = call("plan_release", serde_json::json!({"service": "billing"}));
    let mut round = 0;
    let result = loop {
        // Round n goes to instance n % 2: no round is answered by the instance that asked.
        let client = &clients[round % 2];
        match call_once(client, retry.clone())
            .await
            .expect("every instance accepts the shared state")
        {
            CallToolResponse::Complete(result) => break result,
            CallToolResponse::InputRequired(asked) => {
                retry.input_responses = Some(answer_round(&asked));
                retry.request_state = asked.request_state;
                round += 1;
            }
            other => panic!("unexpected response {other:?}"),
        }
    };
    assert_eq!(round, 3);
    assert_eq!(text_of(&result), format!("billing → production: {SUMMARY}"));
    assert_eq!(
        plans.load(Ordering::SeqCst),
        1,
        "the code between rounds ran once across instances"
    );
    for client in clients {
        client.cancel().await.expect("client shuts down");
    }
}

#[tokio::test]
async fn an_instance_with_other_keys_rejects_the_state() {
    let plans = Arc::new(AtomicUsize::new(0));
    let first = serve_http(release_server(keys(4), plans.clone())).await;
    let stranger = serve_http(release_server(keys(5), plans.clone())).await;
    let first_client = http_client(&first.url, ScriptedUser::default()).await;
    let stranger_client = http_client(&stranger.url, ScriptedUser::default()).await;

    let mut retry = call("plan_release", serde_json::json!({"service": "billing"}));
    let asked = expect_input_required(
        call_once(&first_client, retry.clone())
            .await
            .expect("round 1"),
    );
    retry.input_responses = Some(answer_round(&asked));
    retry.request_state = asked.request_state;

    let error = call_once(&stranger_client, retry)
        .await
        .expect_err("other keys cannot open the state");
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, REJECTED_STATE_MESSAGE);
    assert_eq!(plans.load(Ordering::SeqCst), 0, "no flow resumed");
    first_client.cancel().await.expect("client shuts down");
    stranger_client.cancel().await.expect("client shuts down");
}

/// `cargo run --example quickstart`, as the README tells a newcomer to run it: its server
/// and its client over real HTTP on 127.0.0.1, two questions answered, the result printed.
#[test]
fn the_quickstart_example_runs_its_tool_end_to_end() {
    let output = std::process::Command::new(support::bins::example("quickstart"))
        .env_remove("MRTR_KEYS")
        .output()
        .expect("run the quickstart example");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "quickstart failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "server asks: What is your name?",
            r#"person says: {"text":"Ada"}"#,
            "server asks: Shall I be formal, Ada?",
            r#"person says: {"confirm":true}"#,
            "result: Good morning, dear Ada.",
        ]
    );
}
