use rmcp::model::{InputResponses, ServerResult};
use serde_json::{Value, json};

use super::reply::{Reply, classify};
use super::send::build_request;
use crate::client::error::ClientError;
use crate::client::pending::{CallOutput, CallTarget, PendingCall};

fn tool() -> CallTarget {
    CallTarget::tool("t", None)
}

fn classify_json(value: Value) -> Result<Reply, ClientError> {
    let result: ServerResult = serde_json::from_value(value).unwrap();
    classify(&tool(), result)
}

#[test]
fn absent_result_type_is_complete() {
    let reply = classify_json(json!({"content": [{"type": "text", "text": "ok"}]})).unwrap();
    assert!(matches!(reply, Reply::Complete(CallOutput::Tool(_))));
}

#[test]
fn unknown_result_type_is_named() {
    let error = classify_json(json!({"resultType": "streaming", "content": []}))
        .err()
        .unwrap();
    assert!(
        matches!(&error, ClientError::UnknownResultType { result_type } if result_type == "streaming"),
        "{error}"
    );
}

#[test]
fn malformed_entry_names_its_key() {
    let error = classify_json(json!({
        "resultType": "input_required",
        "inputRequests": {
            "good": {"method": "roots/list"},
            "bad": {"method": "elicitation/create", "params": {"requestedSchema": {"type": "object", "properties": {}}}}
        }
    }))
    .err()
    .unwrap();
    assert!(
        matches!(&error, ClientError::MalformedInputRequest { key, source } if key == "bad" && source.to_string().contains("message")),
        "{error}"
    );
}

#[test]
fn unknown_input_method_is_malformed() {
    let error = classify_json(json!({
        "resultType": "input_required",
        "inputRequests": {"p": {"method": "ping"}}
    }))
    .err()
    .unwrap();
    assert!(
        matches!(&error, ClientError::MalformedInputRequest { key, source } if key == "p" && source.to_string().contains("ping")),
        "{error}"
    );
}

#[test]
fn empty_input_required_is_malformed() {
    let error = classify_json(json!({"resultType": "input_required", "inputRequests": {}}))
        .err()
        .unwrap();
    assert!(
        matches!(error, ClientError::MalformedResult { .. }),
        "{error}"
    );
}

#[test]
fn state_only_result_is_input_required() {
    let reply =
        classify_json(json!({"resultType": "input_required", "requestState": "s"})).unwrap();
    assert!(matches!(reply, Reply::InputRequired(r) if r.request_state.as_deref() == Some("s")));
}

#[test]
fn retry_without_answers_or_state_leaves_both_fields_out() {
    let pending = PendingCall::new(tool());
    let request = build_request(&pending, &InputResponses::new());
    let wire = serde_json::to_value(&request).unwrap();
    let params = &wire["params"];
    assert!(params.get("inputResponses").is_none(), "{wire}");
    assert!(params.get("requestState").is_none(), "{wire}");
}

#[test]
fn pending_call_round_trips_through_json() {
    let pending = PendingCall {
        target: CallTarget::prompt("p", json!({"a": 1}).as_object().cloned()),
        round: 2,
        input_requests: serde_json::from_value(json!({"r": {"method": "roots/list"}})).unwrap(),
        request_state: Some("{\"nonce\": 1}".into()),
        meta: serde_json::from_value(json!({"io.mrtr/instance": "a"})).unwrap(),
    };
    let text = serde_json::to_string(&pending).unwrap();
    let back: PendingCall = serde_json::from_str(&text).unwrap();
    assert_eq!(back, pending);
    let wire: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(wire["method"], "prompts/get");
    assert_eq!(wire["requestState"], "{\"nonce\": 1}");
    assert_eq!(wire["_meta"]["io.mrtr/instance"], "a");
}
