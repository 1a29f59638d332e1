//! The showcase examples driven through every round: in-process through `Harness` (real
//! sealing, every decline and early exit), and through the real client driver over real
//! Streamable HTTP on 127.0.0.1 (the path the demo and users take).
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

#[path = "../examples/showcase/data_export.rs"]
mod data_export;
#[path = "../examples/showcase/deploy_wizard.rs"]
mod deploy_wizard;
#[path = "../examples/showcase/explain_prompt.rs"]
mod explain_prompt;
#[path = "../examples/showcase/file_organiser.rs"]
mod file_organiser;
#[path = "../examples/showcase/order_flow.rs"]
mod order_flow;
#[path = "../examples/showcase/server.rs"]
mod server;
#[path = "../examples/showcase/vault_resource.rs"]
mod vault_resource;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use deploy_wizard::{check_version, deploy_wizard as deploy_wizard_tool};
use explain_prompt::explain_prompt as explain_prompt_tool;
use file_organiser::{AllowedRoots, organise_files};
use mrtr::client::{
    CallOutput, CallTarget, HandlerError, InputHandlers, MrtrClient, PendingCall, RoundObserver,
};
use mrtr::testing::{Harness, Transcript};
use order_flow::{Kitchen, order_food};
use rmcp::model::{
    CallToolResult, CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, ListRootsResult, Role, Root, SamplingMessage,
    SamplingMessageContentBlock,
};
use serde_json::{Value, json};
use vault_resource::{record_approval, request_id_of, vault_keys};

// ---------------------------------------------------------------- in-process (Harness)

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn decline() -> Value {
    json!({"action": "decline"})
}

fn cancel() -> Value {
    json!({"action": "cancel"})
}

fn message_of(request: &InputRequest) -> String {
    match request {
        InputRequest::Elicitation(ElicitRequest {
            params:
                ElicitRequestParams::FormElicitationParams { message, .. }
                | ElicitRequestParams::UrlElicitationParams { message, .. },
            ..
        }) => message.clone(),
        _ => String::new(),
    }
}

/// Answers keyed requests from per-key queues, and records every message asked.
struct Answers {
    queues: Vec<(&'static str, VecDeque<Value>)>,
    asked: Vec<(String, String)>,
}

impl Answers {
    fn new(entries: Vec<(&'static str, Vec<Value>)>) -> Self {
        Self {
            queues: entries
                .into_iter()
                .map(|(key, values)| (key, values.into()))
                .collect(),
            asked: Vec::new(),
        }
    }

    fn answer(&mut self, key: &str, request: &InputRequest) -> Value {
        self.asked.push((key.to_string(), message_of(request)));
        self.queues
            .iter_mut()
            .find(|(name, _)| *name == key)
            .and_then(|(_, queue)| queue.pop_front())
            .unwrap_or_else(|| panic!("no scripted answer for `{key}`"))
    }

    fn messages(&self, key: &str) -> Vec<&str> {
        self.asked
            .iter()
            .filter(|(asked, _)| asked == key)
            .map(|(_, message)| message.as_str())
            .collect()
    }
}

fn tool_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn keys_per_round<O>(transcript: &Transcript<O>) -> Vec<Vec<String>> {
    transcript
        .rounds
        .iter()
        .map(|round| round.requests.iter().map(|(key, _)| key.clone()).collect())
        .collect()
}

#[test]
fn version_rules() {
    assert_eq!(check_version("1.4.2"), Ok("1.4.2".into()));
    assert_eq!(check_version("v2.0.0-rc.1"), Ok("2.0.0-rc.1".into()));
    assert!(check_version("1.4").unwrap_err().contains("three numbers"));
    assert!(
        check_version("1.04.2")
            .unwrap_err()
            .contains("leading zero")
    );
    assert!(check_version("1.x.2").unwrap_err().contains("minor"));
    assert!(check_version("1.2.3-").unwrap_err().contains("pre-release"));
}

#[tokio::test]
async fn deploy_wizard_re_asks_the_version_until_it_validates() {
    let mut answers = Answers::new(vec![
        ("environment", vec![accept(json!({"choice": "production"}))]),
        ("confirm", vec![accept(json!({"confirm": true}))]),
        (
            "version",
            vec![
                accept(json!({"text": "1.4"})),
                accept(json!({"text": "1.04.2"})),
                accept(json!({"text": "1.4.2"})),
            ],
        ),
    ]);
    let transcript = Harness::new()
        .drive(
            &deploy_wizard_tool,
            json!({"service": "api"}),
            |key, request| answers.answer(key, request),
        )
        .await
        .unwrap();
    assert_eq!(
        tool_text(&transcript.output),
        "Deploying api 1.4.2 to production (3 version attempt(s))."
    );
    assert_eq!(
        keys_per_round(&transcript),
        [
            vec!["environment"],
            vec!["confirm"],
            vec!["version"],
            vec!["version"],
            vec!["version"]
        ]
    );
    assert!(transcript.rounds.iter().all(|round| round.token_len > 0));
    assert_eq!(
        answers.messages("confirm"),
        ["Deploy api to PRODUCTION? Live users will be affected."]
    );
    let versions = answers.messages("version");
    assert_eq!(
        versions[0],
        "Which version of api? (MAJOR.MINOR.PATCH, e.g. 1.4.2)"
    );
    assert!(versions[1].starts_with("`1.4` is not a version: expected three numbers"));
    assert!(
        versions[2]
            .starts_with("`1.04.2` is not a version: the minor number `04` has a leading zero")
    );
}

#[tokio::test]
async fn deploy_wizard_confirmation_depends_on_the_environment_and_decline_exits() {
    let mut answers = Answers::new(vec![
        ("environment", vec![accept(json!({"choice": "staging"}))]),
        ("confirm", vec![decline()]),
    ]);
    let transcript = Harness::new()
        .drive(
            &deploy_wizard_tool,
            json!({"service": "web"}),
            |key, request| answers.answer(key, request),
        )
        .await
        .unwrap();
    assert_eq!(
        tool_text(&transcript.output),
        "Deployment of web to staging called off."
    );
    assert_eq!(transcript.rounds.len(), 2);
    assert_eq!(
        answers.messages("confirm"),
        ["Deploy web to staging? Nobody outside the team will see it."]
    );
}

#[tokio::test]
async fn deploy_wizard_without_an_environment_is_an_error_result() {
    let transcript = Harness::new()
        .drive(&deploy_wizard_tool, json!({"service": "web"}), |_, _| {
            cancel()
        })
        .await
        .unwrap();
    assert_eq!(transcript.output.is_error, Some(true));
    assert_eq!(transcript.rounds.len(), 1);
}

#[tokio::test]
async fn order_loops_over_dishes_then_confirms_and_samples_a_note() {
    let kitchen = Arc::new(Kitchen::default());
    let mut answers = Answers::new(vec![
        (
            "dish",
            vec![
                accept(json!({"dish": "pad-thai", "quantity": 2, "more": true})),
                accept(json!({"dish": "margherita", "quantity": 1, "more": true})),
                accept(json!({"dish": "tiramisu", "quantity": 3, "more": false})),
            ],
        ),
        ("place", vec![accept(json!({"confirm": true}))]),
    ]);
    let mut sampled_prompt = String::new();
    let transcript = Harness::new()
        .app_state(kitchen.clone())
        .drive(&order_food, json!({"customer": "Ada"}), |key, request| {
            if let InputRequest::CreateMessage(sampling) = request {
                sampled_prompt = serde_json::to_string(&sampling.params.messages).unwrap();
                return json!({"role": "assistant", "content": {"type": "text", "text": "Ada's lunch, extra napkins."}, "model": "scripted"});
            }
            answers.answer(key, request)
        })
        .await
        .unwrap();
    assert_eq!(
        tool_text(&transcript.output),
        "Order placed for Ada: 2 × pad thai, 1 × margherita, 3 × tiramisu — total 48.00. Kitchen note: Ada's lunch, extra napkins."
    );
    let keys = keys_per_round(&transcript);
    assert_eq!(keys.len(), 5);
    assert_eq!(keys[..3], [vec!["dish"], vec!["dish"], vec!["dish"]]);
    assert_eq!(keys[3], vec!["place"]);
    assert_eq!(keys[4].len(), 1);
    assert!(keys[4][0].starts_with("sample"));
    assert!(sampled_prompt.contains("2 × pad thai, 1 × margherita, 3 × tiramisu"));
    // The shared kitchen (application state) got exactly one ticket: the code that places
    // it ran once, in the last round.
    assert_eq!(
        kitchen.tickets(),
        ["Ada: 2 × pad thai, 1 × margherita, 3 × tiramisu — Ada's lunch, extra napkins."]
    );
    assert_eq!(
        answers.messages("dish"),
        [
            "What would Ada like?",
            "So far: 2 × pad thai. What else?",
            "So far: 2 × pad thai, 1 × margherita. What else?"
        ]
    );
    assert_eq!(
        answers.messages("place"),
        ["Place the order 2 × pad thai, 1 × margherita, 3 × tiramisu for 48.00?"]
    );
}

#[tokio::test]
async fn order_declining_the_total_exits_before_sampling() {
    let kitchen = Arc::new(Kitchen::default());
    let mut answers = Answers::new(vec![
        (
            "dish",
            vec![accept(
                json!({"dish": "caesar-salad", "quantity": 1, "more": false}),
            )],
        ),
        ("place", vec![decline()]),
    ]);
    let transcript = Harness::new()
        .app_state(kitchen.clone())
        .drive(&order_food, json!({"customer": "Bo"}), |key, request| {
            answers.answer(key, request)
        })
        .await
        .unwrap();
    assert_eq!(tool_text(&transcript.output), "Order for Bo not placed.");
    assert!(kitchen.tickets().is_empty());
    assert_eq!(keys_per_round(&transcript), [vec!["dish"], vec!["place"]]);
}

#[tokio::test]
async fn order_cancel_abandons_and_decline_with_nothing_orders_nothing() {
    let kitchen = Arc::new(Kitchen::default());
    let transcript = Harness::new()
        .app_state(kitchen.clone())
        .drive(&order_food, json!({"customer": "Cy"}), |_, _| cancel())
        .await
        .unwrap();
    assert_eq!(tool_text(&transcript.output), "Order for Cy abandoned.");
    assert_eq!(transcript.rounds.len(), 1);

    let transcript = Harness::new()
        .app_state(kitchen.clone())
        .drive(&order_food, json!({"customer": "Cy"}), |_, _| decline())
        .await
        .unwrap();
    assert_eq!(tool_text(&transcript.output), "Nothing ordered for Cy.");
    assert_eq!(transcript.rounds.len(), 1);
}

#[tokio::test]
async fn order_re_asks_when_the_quantity_is_out_of_range() {
    let kitchen = Arc::new(Kitchen::default());
    let mut answers = Answers::new(vec![
        (
            "dish",
            vec![
                accept(json!({"dish": "tiramisu", "quantity": 0, "more": false})),
                accept(json!({"dish": "tiramisu", "quantity": 21, "more": false})),
                accept(json!({"dish": "tiramisu", "quantity": 2, "more": false})),
            ],
        ),
        ("place", vec![decline()]),
    ]);
    let transcript = Harness::new()
        .app_state(kitchen.clone())
        .drive(&order_food, json!({"customer": "Di"}), |key, request| {
            answers.answer(key, request)
        })
        .await
        .unwrap();
    // An answer outside the form's bounds is not taken: the same question comes back.
    assert_eq!(
        keys_per_round(&transcript),
        [vec!["dish"], vec!["dish"], vec!["dish"], vec!["place"]]
    );
    assert_eq!(answers.messages("dish"), ["What would Di like?"; 3]);
    assert_eq!(
        answers.messages("place"),
        ["Place the order 2 × tiramisu for 11.00?"]
    );
    assert_eq!(tool_text(&transcript.output), "Order for Di not placed.");
}

/// A throwaway workspace under the system temp dir, removed on drop.
struct Workspace(std::path::PathBuf);

impl Workspace {
    fn new(name: &str, files: &[&str]) -> Self {
        let dir = std::env::temp_dir().join(format!("mrtr-examples-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for file in files {
            std::fs::write(dir.join(file), b"x").unwrap();
        }
        Self(dir)
    }

    fn uri(&self) -> String {
        format!("file://{}", self.0.display())
    }

    fn path(&self, relative: &str) -> String {
        self.0.join(relative).display().to_string()
    }

    /// The server's allowed directories: this workspace alone.
    fn allowed(&self) -> Arc<AllowedRoots> {
        Arc::new(AllowedRoots::new([self.0.clone()]).unwrap())
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn organiser_lists_roots_and_proposes_moves_without_touching_files() {
    let workspace = Workspace::new("organise", &["b.pdf", "a.png", "keep.rs", "c.PDF"]);
    let uri = workspace.uri();
    let mut offered = Vec::new();
    let transcript = Harness::new()
        .app_state(workspace.allowed())
        .drive(&organise_files, json!({}), |key, request| match request {
            InputRequest::ListRoots(_) => json!({"roots": [{"uri": uri, "name": "work"}]}),
            _ => {
                assert_eq!(key, "moves");
                let InputRequest::Elicitation(ElicitRequest {
                    params:
                        ElicitRequestParams::FormElicitationParams {
                            requested_schema, ..
                        },
                    ..
                }) = request
                else {
                    panic!("expected a form")
                };
                offered = serde_json::to_value(requested_schema).unwrap()["properties"]["choices"]
                    ["items"]["enum"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                accept(json!({"choices": [offered[0].clone()]}))
            }
        })
        .await
        .unwrap();
    let expected = [
        format!(
            "{} → {}",
            workspace.path("a.png"),
            workspace.path("images/a.png")
        ),
        format!(
            "{} → {}",
            workspace.path("b.pdf"),
            workspace.path("documents/b.pdf")
        ),
        format!(
            "{} → {}",
            workspace.path("c.PDF"),
            workspace.path("documents/c.PDF")
        ),
    ];
    assert_eq!(
        offered,
        expected.iter().map(|s| json!(s)).collect::<Vec<_>>()
    );
    assert_eq!(
        tool_text(&transcript.output),
        format!(
            "Plan (1 of 3 moves approved, nothing moved yet):\n{}",
            expected[0]
        )
    );
    assert_eq!(transcript.rounds.len(), 2);
    assert!(transcript.rounds[0].requests[0].0.starts_with("roots"));
    // Proposing moved nothing.
    assert!(std::path::Path::new(&workspace.path("a.png")).exists());
    assert!(!std::path::Path::new(&workspace.path("images")).exists());
}

#[tokio::test]
async fn organiser_filters_by_extension_and_handles_no_roots_and_decline() {
    let workspace = Workspace::new("filter", &["b.pdf", "a.png"]);
    let uri = workspace.uri();
    let mut labels = 0;
    let transcript = Harness::new()
        .app_state(workspace.allowed())
        .drive(
            &organise_files,
            json!({"extension": "pdf"}),
            |_, request| match request {
                InputRequest::ListRoots(_) => json!({"roots": [{"uri": uri}]}),
                _ => {
                    labels = message_of(request).matches("1 file(s)").count();
                    decline()
                }
            },
        )
        .await
        .unwrap();
    assert_eq!(labels, 1);
    assert_eq!(
        tool_text(&transcript.output),
        "No moves approved; nothing changes."
    );

    let transcript = Harness::new()
        .app_state(workspace.allowed())
        .drive(&organise_files, json!({}), |_, _| json!({"roots": []}))
        .await
        .unwrap();
    assert_eq!(
        tool_text(&transcript.output),
        "The client shared no roots, so there is nothing to organise."
    );
    assert_eq!(transcript.rounds.len(), 1);
}

fn prompt_text(result: &rmcp::model::GetPromptResult) -> String {
    serde_json::to_value(&result.messages[0]).unwrap()["content"]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn explain_prompt_elicits_its_topic_then_depth() {
    let mut answers = Answers::new(vec![
        ("topic", vec![accept(json!({"text": "  borrow checking "}))]),
        ("depth", vec![accept(json!({"choice": "in depth"}))]),
    ]);
    let transcript = Harness::new()
        .drive(
            &explain_prompt_tool,
            json!({"audience": "a Go developer"}),
            |key, request| answers.answer(key, request),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt_text(&transcript.output),
        "Explain borrow checking to a Go developer. Give an in depth with one concrete example."
    );
    assert_eq!(keys_per_round(&transcript), [vec!["topic"], vec!["depth"]]);
    assert_eq!(answers.messages("depth"), ["How deep on borrow checking?"]);
}

#[tokio::test]
async fn explain_prompt_declined_topic_asks_the_model_to_ask() {
    let transcript = Harness::new()
        .drive(&explain_prompt_tool, json!({}), |_, _| decline())
        .await
        .unwrap();
    assert_eq!(transcript.rounds.len(), 1);
    assert!(prompt_text(&transcript.output).starts_with("Ask me which topic"));
}

#[tokio::test]
async fn vault_resource_needs_approval_recorded_by_its_page() {
    // `accept` without the page's record: asked again, twice, then the page approves.
    let mut urls_seen = Vec::new();
    let transcript = Harness::new()
        .drive(&vault_keys, json!({}), |key, request| {
            assert_eq!(key, "consent");
            if let InputRequest::Elicitation(ElicitRequest {
                params: ElicitRequestParams::UrlElicitationParams { url, .. },
                ..
            }) = request
            {
                urls_seen.push(url.clone());
                if urls_seen.len() == 3 {
                    record_approval(request_id_of(url).expect("an approval URL"));
                }
            }
            json!({"action": "accept"})
        })
        .await
        .unwrap();
    assert_eq!(transcript.rounds.len(), 3);
    assert!(
        urls_seen.iter().all(|url| url == &urls_seen[0]),
        "one request id per flow"
    );
    assert!(
        urls_seen[0].contains("/approve?request="),
        "{}",
        urls_seen[0]
    );
    let contents = serde_json::to_value(&transcript.output.contents[0]).unwrap();
    assert_eq!(contents["uri"], "vault://team/keys");
    assert!(contents["text"].as_str().unwrap().starts_with("deploy-key"));

    let transcript = Harness::new()
        .drive(&vault_keys, json!({}), |_, _| decline())
        .await
        .unwrap();
    let contents = serde_json::to_value(&transcript.output.contents[0]).unwrap();
    assert_eq!(
        contents["text"],
        "Access to vault://team/keys was declined."
    );
}

// ------------------------------------------- the real client driver over real HTTP

/// Records each round's keys and `requestState` size, as the client saw them.
#[derive(Clone, Default)]
struct Rounds(Arc<Mutex<Vec<RoundSeen>>>);

/// One round's input-request keys and `requestState` size.
type RoundSeen = (Vec<String>, usize);

impl RoundObserver for Rounds {
    fn input_required(&self, pending: &PendingCall) {
        self.0.lock().unwrap().push((
            pending.input_requests.keys().cloned().collect(),
            pending.request_state_len(),
        ));
    }
}

/// Scripted form answers per key, shared by the handler closures.
type Script = Arc<Mutex<Vec<(String, ElicitResult)>>>;

fn script(entries: Vec<(&str, ElicitResult)>) -> Script {
    Arc::new(Mutex::new(
        entries
            .into_iter()
            .map(|(key, result)| (key.to_string(), result))
            .collect(),
    ))
}

fn next_answer(script: &Script, key: &str) -> Result<ElicitResult, HandlerError> {
    let mut script = script.lock().unwrap();
    let position = script
        .iter()
        .position(|(name, _)| name == key)
        .ok_or_else(|| HandlerError::failed(format!("no answer for {key}")))?;
    Ok(script.remove(position).1)
}

fn form(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

fn handlers(script: Script, roots: Vec<String>) -> InputHandlers {
    let forms = script.clone();
    InputHandlers::new()
        .on_elicit(move |request| {
            let answer = next_answer(&forms, &request.key);
            async move { answer }
        })
        .on_elicit_url(move |request| {
            let answer = next_answer(&script, &request.key);
            async move {
                // The user's browser: open the approval page and press its button.
                reqwest::Client::new()
                    .post(&request.url)
                    .send()
                    .await
                    .map_err(|error| HandlerError::failed(error.to_string()))?;
                answer
            }
        })
        .on_sample(|_request| async {
            Ok(CreateMessageResult::new(
                SamplingMessage::new(
                    Role::Assistant,
                    SamplingMessageContentBlock::text("Hot and on time."),
                ),
                "scripted".into(),
            ))
        })
        .on_list_roots(move |_request| {
            let roots = roots.iter().map(|uri| Root::new(uri.clone())).collect();
            async move { Ok(ListRootsResult::new(roots)) }
        })
}

async fn call_over_http(
    target: CallTarget,
    handlers: InputHandlers,
) -> (CallOutput, Vec<RoundSeen>) {
    call_over_http_allowing(target, handlers, AllowedRoots::demo().unwrap()).await
}

/// [`call_over_http`] against a showcase whose organiser may look inside `allowed`.
async fn call_over_http_allowing(
    target: CallTarget,
    handlers: InputHandlers,
    allowed: AllowedRoots,
) -> (CallOutput, Vec<RoundSeen>) {
    let (addr, server_task) =
        server::serve_http_with("127.0.0.1:0".parse().unwrap(), allowed, |serving| serving)
            .await
            .unwrap();
    let transport =
        rmcp::transport::StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let rounds = Rounds::default();
    let client = MrtrClient::connect(transport, handlers)
        .await
        .unwrap()
        .with_observer(rounds.clone());
    let output = client.call(target).await.unwrap();
    client.close().await;
    server_task.abort();
    let rounds = rounds.0.lock().unwrap().clone();
    (output, rounds)
}

fn keys(rounds: &[RoundSeen]) -> Vec<Vec<String>> {
    rounds.iter().map(|(keys, _)| keys.clone()).collect()
}

#[tokio::test]
async fn http_deploy_wizard_through_the_client_driver() {
    let answers = script(vec![
        ("environment", form(json!({"choice": "staging"}))),
        ("confirm", form(json!({"confirm": true}))),
        ("version", form(json!({"text": "two"}))),
        ("version", form(json!({"text": "2.0.0"}))),
    ]);
    let (output, rounds) = call_over_http(
        CallTarget::tool(
            "deploy_wizard",
            json!({"service": "api"}).as_object().cloned(),
        ),
        handlers(answers.clone(), vec![]),
    )
    .await;
    let CallOutput::Tool(result) = output else {
        panic!("not a tool result")
    };
    assert_eq!(
        tool_text(&result),
        "Deploying api 2.0.0 to staging (2 version attempt(s))."
    );
    assert_eq!(
        keys(&rounds),
        [
            vec!["environment"],
            vec!["confirm"],
            vec!["version"],
            vec!["version"]
        ]
    );
    assert!(rounds.iter().all(|(_, state_len)| *state_len > 0));
    assert!(answers.lock().unwrap().is_empty());
}

#[tokio::test]
async fn http_order_flow_with_sampling() {
    let answers = script(vec![
        (
            "dish",
            form(json!({"dish": "margherita", "quantity": 2, "more": false})),
        ),
        ("place", form(json!({"confirm": true}))),
    ]);
    let (output, rounds) = call_over_http(
        CallTarget::tool(
            "order_food",
            json!({"customer": "Eve"}).as_object().cloned(),
        ),
        handlers(answers, vec![]),
    )
    .await;
    let CallOutput::Tool(result) = output else {
        panic!("not a tool result")
    };
    assert_eq!(
        tool_text(&result),
        "Order placed for Eve: 2 × margherita — total 19.00. Kitchen note: Hot and on time."
    );
    assert_eq!(rounds.len(), 3);
    assert!(rounds[2].0[0].starts_with("sample"));
}

#[tokio::test]
async fn http_order_flow_declined_total_exits_early() {
    let answers = script(vec![
        (
            "dish",
            form(json!({"dish": "margherita", "quantity": 1, "more": false})),
        ),
        ("place", ElicitResult::new(ElicitationAction::Decline)),
    ]);
    let (output, rounds) = call_over_http(
        CallTarget::tool(
            "order_food",
            json!({"customer": "Eve"}).as_object().cloned(),
        ),
        handlers(answers, vec![]),
    )
    .await;
    let CallOutput::Tool(result) = output else {
        panic!("not a tool result")
    };
    assert_eq!(tool_text(&result), "Order for Eve not placed.");
    assert_eq!(keys(&rounds), [vec!["dish"], vec!["place"]]);
}

#[tokio::test]
async fn http_organiser_uses_the_clients_roots() {
    let workspace = Workspace::new("http", &["report.pdf"]);
    let expected = format!(
        "{} → {}",
        workspace.path("report.pdf"),
        workspace.path("documents/report.pdf")
    );
    let answers = script(vec![(
        "moves",
        form(json!({"choices": [expected.clone()]})),
    )]);
    let (output, rounds) = call_over_http_allowing(
        CallTarget::tool("organise_files", None),
        handlers(answers, vec![workspace.uri()]),
        AllowedRoots::new([workspace.0.clone()]).unwrap(),
    )
    .await;
    let CallOutput::Tool(result) = output else {
        panic!("not a tool result")
    };
    assert_eq!(
        tool_text(&result),
        format!("Plan (1 of 1 moves approved, nothing moved yet):\n{expected}")
    );
    assert_eq!(rounds.len(), 2);
    assert!(rounds[0].0[0].starts_with("roots"));
    assert_eq!(rounds[1].0, ["moves"]);
}

#[tokio::test]
async fn http_prompt_and_resource() {
    let answers = script(vec![
        ("topic", form(json!({"text": "sealing"}))),
        ("depth", ElicitResult::new(ElicitationAction::Cancel)),
        ("consent", ElicitResult::new(ElicitationAction::Accept)),
    ]);
    let (output, rounds) = call_over_http(
        CallTarget::prompt("explain", None),
        handlers(answers.clone(), vec![]),
    )
    .await;
    let CallOutput::Prompt(result) = output else {
        panic!("not a prompt result")
    };
    assert_eq!(
        prompt_text(&result),
        "Explain sealing to a curious beginner. Give an overview with one concrete example."
    );
    assert_eq!(keys(&rounds), [vec!["topic"], vec!["depth"]]);

    let (output, rounds) = call_over_http(
        CallTarget::resource("vault://team/keys"),
        handlers(answers, vec![]),
    )
    .await;
    let CallOutput::Resource(result) = output else {
        panic!("not a resource result")
    };
    let contents = serde_json::to_value(&result.contents[0]).unwrap();
    assert!(contents["text"].as_str().unwrap().starts_with("deploy-key"));
    assert_eq!(keys(&rounds), [vec!["consent"]]);
}

// ------------------------------------------------- safe to serve (issue 35)

/// The probe: a client sends a `file://` root at a directory of the server's that the
/// operator never allowed. Nothing in it is listed or offered; the reply says it was skipped.
#[tokio::test]
async fn http_organiser_skips_roots_outside_the_allowed_directories() {
    let secrets = Workspace::new(
        "probe",
        &["payroll-2026.pdf", "api-keys.json", "customers.csv"],
    );
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = asked.clone();
    let handlers = InputHandlers::new()
        .on_elicit(move |request| {
            let schema = serde_json::to_string(&request.requested_schema).unwrap_or_default();
            seen.lock()
                .unwrap()
                .push(format!("{} {schema}", request.message));
            async { Ok(ElicitResult::new(ElicitationAction::Decline)) }
        })
        .on_list_roots(move |_request| {
            let roots = vec![
                Root::new(secrets.uri()),
                Root::new("file:///etc".to_string()),
            ];
            async move { Ok(ListRootsResult::new(roots)) }
        });
    let (output, rounds) = call_over_http(CallTarget::tool("organise_files", None), handlers).await;
    let CallOutput::Tool(result) = output else {
        panic!("not a tool result")
    };
    let text = tool_text(&result);
    for secret in ["payroll-2026.pdf", "api-keys.json", "customers.csv"] {
        assert!(!text.contains(secret), "{text}");
    }
    assert!(
        asked.lock().unwrap().is_empty(),
        "{:?}",
        asked.lock().unwrap()
    );
    assert_eq!(rounds.len(), 1, "only the roots were asked");
    assert!(text.contains("Skipped 2 root(s)"), "{text}");
    assert!(
        text.contains("outside the directories this server may organise"),
        "{text}"
    );
}

/// Inside an allowed directory, neither a symbolic link nor `..` leads out of it: a root
/// through a link to an outside directory, a root with `..`, a root outside, and a non-file
/// root are skipped with their reasons; a linked file is not offered.
#[cfg(unix)]
#[tokio::test]
async fn organiser_refuses_dot_dot_and_symbolic_links_leading_out() {
    let allowed = Workspace::new("allowed", &["ok.pdf"]);
    let outside = Workspace::new("outside", &["payroll-2026.pdf"]);
    std::os::unix::fs::symlink(&outside.0, allowed.0.join("escape")).unwrap();
    std::os::unix::fs::symlink(
        outside.0.join("payroll-2026.pdf"),
        allowed.0.join("leak.pdf"),
    )
    .unwrap();
    let outside_name = outside.0.file_name().unwrap().to_str().unwrap().to_string();
    let roots = json!({"roots": [
        {"uri": format!("{}/escape", allowed.uri())},
        {"uri": format!("{}/../{outside_name}", allowed.uri())},
        {"uri": outside.uri()},
        {"uri": "https://example.com/"},
        {"uri": allowed.uri()},
    ]});
    let mut offered = String::new();
    let transcript = Harness::new()
        .app_state(allowed.allowed())
        .drive(&organise_files, json!({}), |_, request| match request {
            InputRequest::ListRoots(_) => roots.clone(),
            _ => {
                offered = serde_json::to_string(request).unwrap();
                decline()
            }
        })
        .await
        .unwrap();
    assert!(offered.contains("ok.pdf"), "{offered}");
    assert!(
        !offered.contains("payroll") && !offered.contains("leak.pdf"),
        "{offered}"
    );
    let text = tool_text(&transcript.output);
    assert!(!text.contains("payroll-2026.pdf"), "{text}");
    for expected in [
        "Skipped 4 root(s)",
        "/escape: leads outside the directories this server may organise (a symbolic link)",
        "contains `..`",
        &format!(
            "{}: outside the directories this server may organise",
            outside.uri()
        ),
        "https://example.com/: not a file:// URI",
    ] {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
    assert!(
        text.starts_with("No moves approved; nothing changes."),
        "{text}"
    );
}

/// The probe: the last round of an order replayed 200 times with an oversized kitchen
/// note. The rail keeps at most 100 tickets and 64 KiB, newest first kept; a note is cut.
#[tokio::test]
async fn order_ticket_rail_stays_bounded_under_replays_of_the_last_round() {
    use mrtr::testing::Reply;
    let kitchen = Arc::new(Kitchen::default());
    let harness = Harness::new().app_state(kitchen.clone());
    let args = json!({"customer": "Mallory"});
    let mut state = None;
    let mut responses = None;
    let last = loop {
        match harness
            .request(&order_food, args.clone(), state.clone(), responses.clone())
            .await
            .unwrap()
        {
            Reply::InputRequired(round) => {
                let requests = round.input_requests.clone().unwrap();
                let (key, request) = requests.iter().next().unwrap();
                let answer = match request {
                    InputRequest::CreateMessage(_) => json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "n".repeat(200_000)},
                        "model": "scripted"
                    }),
                    _ if key == "dish" => {
                        accept(json!({"dish": "tiramisu", "quantity": 1, "more": false}))
                    }
                    _ => accept(json!({"confirm": true})),
                };
                state = round.request_state.clone();
                responses = Some([(key.clone(), answer)].into_iter().collect());
            }
            Reply::Complete(result) => break tool_text(&result),
        }
    };
    for _ in 0..200 {
        let replay = harness
            .request(&order_food, args.clone(), state.clone(), responses.clone())
            .await
            .unwrap();
        assert!(matches!(replay, Reply::Complete(_)));
    }
    let tickets = kitchen.tickets();
    let bytes: usize = tickets.iter().map(String::len).sum();
    assert!(tickets.len() <= 100, "{} tickets kept", tickets.len());
    assert!(bytes <= 64 * 1024, "{bytes} bytes kept");
    assert!(!tickets.is_empty());
    assert!(tickets.iter().all(|ticket| ticket.len() <= 1024));
    assert!(
        last.len() < 2_000,
        "the note in the reply is cut: {} bytes",
        last.len()
    );
}

/// The largest order the form allows (every answer "20, and more") completes: the loop
/// stops at the per-order cap, the total is confirmed, the note sampled, the ticket placed,
/// and the sealed state stays far below `max_state_bytes`.
#[tokio::test]
async fn order_the_largest_allowed_order_completes() {
    let kitchen = Arc::new(Kitchen::default());
    let mut dishes = 0;
    let transcript = Harness::new()
        .app_state(kitchen.clone())
        .drive(&order_food, json!({"customer": "Big table"}), |key, request| {
            if let InputRequest::CreateMessage(_) = request {
                return json!({"role": "assistant", "content": {"type": "text", "text": "A feast."}, "model": "scripted"});
            }
            if key == "dish" {
                dishes += 1;
                return accept(json!({"dish": "pad-thai", "quantity": 20, "more": true}));
            }
            accept(json!({"confirm": true}))
        })
        .await
        .expect("the largest order completes");
    let text = tool_text(&transcript.output);
    assert!(
        text.starts_with("Order placed for Big table: 20 × pad thai"),
        "{text}"
    );
    assert_eq!(text.matches("20 × pad thai").count(), 10, "{text}");
    assert!(text.contains("total 2200.00"), "{text}");
    assert_eq!(dishes, 10);
    assert_eq!(kitchen.tickets().len(), 1);
    let largest = transcript
        .rounds
        .iter()
        .map(|round| round.token_len)
        .max()
        .unwrap();
    assert!(largest < 8 * 1024, "largest requestState {largest} bytes");
    let place = transcript.rounds[10].requests[0].1.clone();
    assert!(
        message_of(&place).contains("10 dishes"),
        "{}",
        message_of(&place)
    );
}
