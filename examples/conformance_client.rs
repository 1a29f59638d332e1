//! The client for the official MCP conformance suite's client mode.
//!
//! The suite runs `conformance_client <server-url>` with `MCP_CONFORMANCE_SCENARIO` set and
//! checks what arrives on the wire. Every scenario goes through [`mrtr::client::MrtrClient`]
//! on the stateless 2026-07-28 lifecycle.
//!
//! ```sh
//! cargo build --example conformance_client
//! npx conformance client --command "$PWD/target/debug/examples/conformance_client" \
//!     --scenario sep-2322-client-request-state
//! ```
#![allow(deprecated)]

use mrtr::client::{CallTarget, ClientError, InputHandlers, MrtrClient, RoundOutcome};
use mrtr::error::ErrorChain;
use rmcp::{
    model::ProtocolVersion,
    model::{
        CreateMessageResult, ElicitResult, ElicitationAction, ListRootsResult, SamplingMessage,
    },
    service::ClientLifecycleMode,
    transport::StreamableHttpClientTransport,
};
use serde_json::{Map, Value, json};

/// Accepts every elicitation with each field's default, or a plausible value of its type.
fn answer_everything() -> InputHandlers {
    InputHandlers::new()
        .on_elicit(|form| async move {
            let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
            let mut content = Map::new();
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    content.insert(name.clone(), plausible_value(property));
                }
            }
            Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
        })
        .on_elicit_url(|_| async { Ok(ElicitResult::new(ElicitationAction::Accept)) })
        .on_sample(|_| async {
            Ok(CreateMessageResult::new(
                SamplingMessage::assistant_text("conformance reply"),
                "mrtr-conformance".into(),
            ))
        })
        .on_list_roots(|_| async { Ok(ListRootsResult::new(vec![])) })
}

fn plausible_value(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property["enum"]
        .as_array()
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    match property["type"].as_str() {
        Some("boolean") => json!(true),
        Some("integer") | Some("number") => property.get("minimum").cloned().unwrap_or(json!(1)),
        Some("array") => json!([]),
        _ => json!("conformance"),
    }
}

/// SEP-2322: exact state echo, new ids, no invented state, isolation, absent resultType.
async fn request_state(client: &MrtrClient) -> Result<(), ClientError> {
    let RoundOutcome::InputRequired(pending) = client
        .start(CallTarget::tool("test_mrtr_echo_state", None))
        .await?
    else {
        return Err(ClientError::Protocol(
            "test_mrtr_echo_state did not ask for input".into(),
        ));
    };
    // An unrelated call while the first one is pending must carry no MRTR fields.
    client.call_tool("test_mrtr_unrelated", None).await?;
    let answers = client.answer(&pending).await?;
    client.continue_call(pending, answers).await?;
    client.call_tool("test_mrtr_no_state", None).await?;
    client.call_tool("test_mrtr_no_result_type", None).await?;
    Ok(())
}

/// Lists everything and calls, reads and gets each item once. Tool calls come from the
/// scenario's `MCP_CONFORMANCE_CONTEXT.toolCalls` when it has them, else each listed tool is
/// called with arguments made up from its input schema. Failures of single items are
/// reported but do not stop the run: these scenarios judge the requests, not the replies.
async fn exercise_everything(client: &MrtrClient) -> Result<(), ClientError> {
    let peer = client.peer();
    let protocol = |error: rmcp::service::ServiceError| ClientError::Protocol(error.into());
    let tools = peer.list_all_tools().await.map_err(protocol)?;
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let calls: Vec<(String, Option<Map<String, Value>>)> = match context["toolCalls"].as_array() {
        Some(calls) => calls
            .iter()
            .map(|call| {
                let name = call["name"].as_str().unwrap_or_default().to_owned();
                (name, call["arguments"].as_object().cloned())
            })
            .collect(),
        None => tools
            .iter()
            .map(|tool| {
                let arguments = tool
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|properties| {
                        properties
                            .iter()
                            .map(|(name, property)| (name.clone(), plausible_value(property)))
                            .collect()
                    });
                (tool.name.to_string(), arguments)
            })
            .collect(),
    };
    for (name, arguments) in calls {
        if let Err(error) = client.call_tool(name.clone(), arguments).await {
            eprintln!("tools/call {name}: {}", ErrorChain(&error));
        }
    }
    if let Ok(resources) = peer.list_all_resources().await {
        for resource in resources {
            if let Err(error) = client.read_resource(resource.uri.clone()).await {
                eprintln!("resources/read {}: {}", resource.uri, ErrorChain(&error));
            }
        }
    }
    if let Ok(prompts) = peer.list_all_prompts().await {
        for prompt in prompts {
            if let Err(error) = client.get_prompt(prompt.name.clone(), None).await {
                eprintln!("prompts/get {}: {}", prompt.name, ErrorChain(&error));
            }
        }
    }
    Ok(())
}

async fn run(scenario: &str, url: String) -> Result<(), ClientError> {
    let transport = StreamableHttpClientTransport::from_uri(url);
    // Scenarios from before 2026-07-28 run against servers that only know `initialize`.
    let client = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(version) if version != "2026-07-28" => {
            let lifecycle = ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: serde_json::from_value(Value::String(version)).ok(),
            };
            MrtrClient::connect_with_lifecycle(transport, answer_everything(), lifecycle).await?
        }
        _ => MrtrClient::connect(transport, answer_everything()).await?,
    };
    match scenario {
        "sep-2322-client-request-state" => request_state(&client).await?,
        "tools_call" => {
            let arguments = json!({"a": 5, "b": 3}).as_object().cloned();
            client.call_tool("add_numbers", arguments).await?;
        }
        _ => exercise_everything(&client).await?,
    }
    client.close().await;
    Ok(())
}

#[tokio::main]
async fn main() {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client <server-url>  (scenario in MCP_CONFORMANCE_SCENARIO)");
        std::process::exit(2);
    };
    if let Err(error) = run(&scenario, url).await {
        eprintln!("scenario {scenario}: {}", ErrorChain(&error));
        std::process::exit(1);
    }
}
