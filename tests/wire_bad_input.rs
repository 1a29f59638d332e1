//! Bad input at the wire, as a misbehaving client would send it: raw JSON-RPC over real
//! HTTP on 127.0.0.1. Each case gets a clear JSON-RPC error or a re-ask — never a panic,
//! a hang, or a resumed flow.

#[path = "../examples/hand_written/release_wizard.rs"]
mod release_wizard;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr::server::McpServer;
use mrtr::token::{KeyId, KeyRing, REJECTED_STATE_MESSAGE, SecretKey};
use release_wizard::PlanRelease;
use serde_json::{Value, json};
use support::serve_http;

struct Wire {
    http: reqwest::Client,
    url: String,
    next_id: std::sync::atomic::AtomicU64,
}

impl Wire {
    /// Posts one stateless 2026-07-28 request and returns the JSON-RPC response object.
    async fn post(&self, method: &str, params: Value, capabilities: Value) -> Value {
        self.post_as(None, method, params, capabilities).await
    }

    /// Like `post`, with an `Authorization` header when `bearer` is given.
    async fn post_as(
        &self,
        bearer: Option<&str>,
        method: &str,
        mut params: Value,
        capabilities: Value,
    ) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        let mut request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method);
        if let Some(name) = params.get("name").and_then(Value::as_str) {
            request = request.header("Mcp-Name", name);
        }
        if let Some(bearer) = bearer {
            request = request.header("Authorization", format!("Bearer {bearer}"));
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = request.json(&body).send().await.expect("server answers");
        let text = response.text().await.expect("a body");
        // Either a JSON body or an SSE stream whose last data line is the response.
        let json_text = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .map(str::to_owned)
            .unwrap_or(text);
        let message: Value = serde_json::from_str(&json_text).expect("a JSON-RPC message");
        assert_eq!(
            message["id"],
            json!(id),
            "the response echoes the request id: {message}"
        );
        message
    }

    async fn call(&self, extra: Value) -> Value {
        let mut params = json!({"name": "plan_release", "arguments": {"service": "api"}});
        for (key, value) in extra.as_object().cloned().unwrap_or_default() {
            params[key] = value;
        }
        self.post(
            "tools/call",
            params,
            json!({"elicitation": {}, "sampling": {}}),
        )
        .await
    }
}

async fn wire() -> (Wire, support::HttpServer, Arc<AtomicUsize>) {
    let plans = Arc::new(AtomicUsize::new(0));
    let server = McpServer::builder("wire-server")
        .keys(KeyRing::new(KeyId(9), SecretKey::from_bytes([9; 32])))
        .tool(PlanRelease::new(plans.clone()))
        .build()
        .expect("server builds");
    let running = serve_http(server).await;
    let wire = Wire {
        http: reqwest::Client::new(),
        url: running.url.clone(),
        next_id: 1.into(),
    };
    (wire, running, plans)
}

fn error_code(message: &Value) -> i64 {
    message["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {message}"))
}

fn asked_keys(message: &Value) -> Vec<String> {
    assert_eq!(
        message["result"]["resultType"], "input_required",
        "{message}"
    );
    message["result"]["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .keys()
        .cloned()
        .collect()
}

async fn first_state(wire: &Wire) -> String {
    let first = wire.call(json!({})).await;
    assert_eq!(asked_keys(&first), ["environment"]);
    assert_eq!(
        first["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "wire-server"
    );
    first["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string()
}

const STAGING: &str = r#"{"action": "accept", "content": {"choice": "staging"}}"#;

#[tokio::test]
async fn malformed_request_state_values_are_invalid_params() {
    let (wire, _server, plans) = wire().await;
    let state = first_state(&wire).await;
    let answers = json!({"environment": serde_json::from_str::<Value>(STAGING).unwrap()});
    for bad_state in [json!(5), json!({"s": state}), json!(["x"]), json!(true)] {
        let reply = wire
            .call(json!({"requestState": bad_state, "inputResponses": answers}))
            .await;
        assert_eq!(error_code(&reply), -32602, "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState must be a string")
        );
    }
    for bad_state in [
        json!(""),
        json!(format!("{state}-TAMPERED")),
        json!(&state[..state.len() / 2]),
    ] {
        let reply = wire
            .call(json!({"requestState": bad_state, "inputResponses": answers}))
            .await;
        assert_eq!(error_code(&reply), -32602, "{reply}");
        assert_eq!(reply["error"]["message"], REJECTED_STATE_MESSAGE);
    }
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn input_responses_that_are_not_an_object_are_invalid_params() {
    let (wire, _server, plans) = wire().await;
    let state = first_state(&wire).await;
    for bad in [json!("nope"), json!([1, 2]), json!(42)] {
        let reply = wire
            .call(json!({"requestState": state, "inputResponses": bad}))
            .await;
        assert_eq!(error_code(&reply), -32602, "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("inputResponses"),
            "{reply}"
        );
    }
    // `null` is the same as absent: ask again.
    let reply = wire
        .call(json!({"requestState": state, "inputResponses": null}))
        .await;
    assert_eq!(asked_keys(&reply), ["environment"]);
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn missing_and_wrongly_shaped_answers_are_asked_again() {
    let (wire, _server, plans) = wire().await;
    let state = first_state(&wire).await;
    let cases = [
        json!({}),
        json!({"environment": "staging"}),
        json!({"environment": 12345}),
        json!({"environment": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}}),
        json!({"environment": {"roots": []}}),
        json!({"environment": {"action": "accept", "content": {"choice": 3}}}),
        json!({"other_key": serde_json::from_str::<Value>(STAGING).unwrap()}),
    ];
    for answers in cases {
        let reply = wire
            .call(json!({"requestState": state, "inputResponses": answers}))
            .await;
        assert_eq!(asked_keys(&reply), ["environment"], "re-ask for {answers}");
    }
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unknown_answer_keys_are_ignored() {
    let (wire, _server, plans) = wire().await;
    let state = first_state(&wire).await;
    let answers = json!({
        "environment": serde_json::from_str::<Value>(STAGING).unwrap(),
        "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
        "another_unexpected": 7,
    });
    let reply = wire
        .call(json!({"requestState": state, "inputResponses": answers}))
        .await;
    assert_eq!(asked_keys(&reply), ["confirm"]);
    assert_eq!(plans.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_request_state_on_a_first_call_that_never_had_one_is_rejected() {
    let (wire, _server, plans) = wire().await;
    let forged = "mrtr3.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    let reply = wire.call(json!({"requestState": forged})).await;
    assert_eq!(error_code(&reply), -32602);
    assert_eq!(reply["error"]["message"], REJECTED_STATE_MESSAGE);
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn mrtr_fields_on_list_methods_never_produce_input_required() {
    let (wire, _server, _plans) = wire().await;
    let reply = wire
        .post(
            "tools/list",
            json!({"inputResponses": {"environment": {"action": "accept"}}, "requestState": "x"}),
            json!({"elicitation": {}}),
        )
        .await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(reply["result"]["tools"][0]["name"], "plan_release");
    assert_eq!(
        reply["result"]["tools"][0]["_meta"]["io.github.mrtr/inputKinds"],
        json!(["elicitation.form", "sampling"])
    );
}

#[tokio::test]
async fn a_retry_without_the_pending_capability_gets_32021() {
    let (wire, _server, _plans) = wire().await;
    let state = first_state(&wire).await;
    let reply = wire
        .post(
            "tools/call",
            json!({"name": "plan_release", "arguments": {"service": "api"}, "requestState": state}),
            json!({"sampling": {}}),
        )
        .await;
    assert_eq!(error_code(&reply), -32021, "{reply}");
    assert_eq!(
        reply["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
}

#[tokio::test]
async fn a_state_issued_to_one_bearer_does_not_resume_for_another() {
    let (wire, _server, plans) = wire().await;
    let caps = json!({"elicitation": {}, "sampling": {}});
    let call = |state: Option<&str>| {
        let mut params = json!({"name": "plan_release", "arguments": {"service": "api"}});
        if let Some(state) = state {
            params["requestState"] = json!(state);
            params["inputResponses"] =
                json!({"environment": serde_json::from_str::<Value>(STAGING).unwrap()});
        }
        params
    };
    let first = wire
        .post_as(Some("alice-token"), "tools/call", call(None), caps.clone())
        .await;
    let state = first["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_string();

    for other in [Some("mallory-token"), None] {
        let reply = wire
            .post_as(other, "tools/call", call(Some(&state)), caps.clone())
            .await;
        assert_eq!(error_code(&reply), -32602, "{reply}");
        assert_eq!(reply["error"]["message"], REJECTED_STATE_MESSAGE);
    }
    assert_eq!(plans.load(Ordering::SeqCst), 0);
    let reply = wire
        .post_as(Some("alice-token"), "tools/call", call(Some(&state)), caps)
        .await;
    assert_eq!(asked_keys(&reply), ["confirm"]);
    assert_eq!(plans.load(Ordering::SeqCst), 1);
}
