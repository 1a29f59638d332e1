//! Reading what the server answered a round with: complete, input required or a task,
//! and for anything else an error that says exactly what is wrong with it.

use rmcp::model::{
    CreateMessageRequest, CreateTaskResult, ElicitRequest, InputRequiredResult, ListRootsRequest,
    ResultType, ServerResult,
};
use serde_json::Value;

use crate::client::error::ClientError;
use crate::client::pending::{CallOutput, CallTarget};

pub(super) enum Reply {
    Complete(CallOutput),
    InputRequired(InputRequiredResult),
    Task(CreateTaskResult),
}

/// Sorts a server result into "complete" or "input required", with a precise error for
/// anything else.
pub(super) fn classify(target: &CallTarget, result: ServerResult) -> Result<Reply, ClientError> {
    match (target, result) {
        (_, ServerResult::InputRequiredResult(result)) => check_input_required(result),
        (CallTarget::Tool { .. }, ServerResult::CreateTaskResult(created)) => {
            Ok(Reply::Task(created))
        }
        (CallTarget::Tool { .. }, ServerResult::CallToolResult(result)) => {
            check_complete(result.result_type.as_ref())?;
            Ok(Reply::Complete(CallOutput::Tool(result)))
        }
        (CallTarget::Prompt { .. }, ServerResult::GetPromptResult(result)) => {
            check_complete(result.result_type.as_ref())?;
            Ok(Reply::Complete(CallOutput::Prompt(result)))
        }
        (CallTarget::Resource { .. }, ServerResult::ReadResourceResult(result)) => {
            check_complete(result.result_type.as_ref())?;
            Ok(Reply::Complete(CallOutput::Resource(result)))
        }
        (target, other) => {
            let raw =
                serde_json::to_value(&other).map_err(|error| ClientError::MalformedResult {
                    source: error.into(),
                })?;
            classify_raw(target, raw)
        }
    }
}

fn check_complete(result_type: Option<&ResultType>) -> Result<(), ClientError> {
    match result_type {
        // An absent resultType means complete.
        None => Ok(()),
        Some(result_type) if result_type.is_complete() => Ok(()),
        Some(other) => Err(ClientError::UnknownResultType {
            result_type: other.as_str().to_owned(),
        }),
    }
}

fn check_input_required(result: InputRequiredResult) -> Result<Reply, ClientError> {
    let no_requests = result.input_requests.as_ref().is_none_or(|r| r.is_empty());
    if no_requests && result.request_state.is_none() {
        return Err(ClientError::MalformedResult {
            source: "input_required result with neither inputRequests nor requestState".into(),
        });
    }
    Ok(Reply::InputRequired(result))
}

/// Classifies a result rmcp could not type, to say exactly what is wrong with it.
fn classify_raw(target: &CallTarget, raw: Value) -> Result<Reply, ClientError> {
    let Some(object) = raw.as_object() else {
        return Err(ClientError::MalformedResult {
            source: "the result is not a JSON object".into(),
        });
    };
    match object.get("resultType") {
        None => parse_complete(target, raw),
        Some(Value::String(kind)) if kind == "complete" => parse_complete(target, raw),
        Some(Value::String(kind)) if kind == "input_required" => {
            match object.get("inputRequests") {
                None | Some(Value::Null) => {}
                Some(Value::Object(requests)) => {
                    for (key, entry) in requests {
                        if let Some(reason) = malformed_input_request(entry) {
                            return Err(ClientError::MalformedInputRequest {
                                key: key.clone(),
                                source: reason.into(),
                            });
                        }
                    }
                }
                Some(_) => {
                    return Err(ClientError::MalformedResult {
                        source: "inputRequests is not an object".into(),
                    });
                }
            }
            match object.get("requestState") {
                None | Some(Value::String(_)) => {}
                Some(_) => {
                    return Err(ClientError::MalformedResult {
                        source: "requestState is not a string".into(),
                    });
                }
            }
            serde_json::from_value::<InputRequiredResult>(raw)
                .map_err(|error| ClientError::MalformedResult {
                    source: error.into(),
                })
                .and_then(check_input_required)
        }
        Some(Value::String(kind)) => Err(ClientError::UnknownResultType {
            result_type: kind.clone(),
        }),
        Some(_) => Err(ClientError::MalformedResult {
            source: "resultType is not a string".into(),
        }),
    }
}

fn parse_complete(target: &CallTarget, raw: Value) -> Result<Reply, ClientError> {
    let malformed = |error: serde_json::Error| ClientError::MalformedResult {
        source: format!("not a valid {} result: {error}", target.method()).into(),
    };
    let output = match target {
        CallTarget::Tool { .. } => {
            CallOutput::Tool(serde_json::from_value(raw).map_err(malformed)?)
        }
        CallTarget::Prompt { .. } => {
            CallOutput::Prompt(serde_json::from_value(raw).map_err(malformed)?)
        }
        CallTarget::Resource { .. } => {
            CallOutput::Resource(serde_json::from_value(raw).map_err(malformed)?)
        }
    };
    Ok(Reply::Complete(output))
}

/// The first required param absent from an input request, for a readable error.
fn missing_param(method: &str, params: Option<&Value>) -> Option<&'static str> {
    let required: &[&'static str] = match method {
        "elicitation/create" => match params.and_then(|p| p.get("mode")).and_then(Value::as_str) {
            Some("url") => &["message", "url"],
            _ => &["message", "requestedSchema"],
        },
        "sampling/createMessage" => &["messages", "maxTokens"],
        _ => return None,
    };
    let Some(params) = params.and_then(Value::as_object) else {
        return Some("params");
    };
    required
        .iter()
        .copied()
        .find(|field| !params.contains_key(*field))
}

/// Why one `inputRequests` entry is invalid, or `None` when it is valid.
fn malformed_input_request(entry: &Value) -> Option<String> {
    let method = match entry.get("method") {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => return Some("`method` is not a string".into()),
        None => return Some("missing `method`".into()),
    };
    if let Some(field) = missing_param(method, entry.get("params")) {
        return Some(format!("invalid {method} request: missing `{field}`"));
    }
    let parsed = match method {
        "elicitation/create" => serde_json::from_value::<ElicitRequest>(entry.clone()).err(),
        "sampling/createMessage" => {
            serde_json::from_value::<CreateMessageRequest>(entry.clone()).err()
        }
        "roots/list" => serde_json::from_value::<ListRootsRequest>(entry.clone()).err(),
        other => {
            return Some(format!(
                "unknown method `{other}` (expected elicitation/create, sampling/createMessage or roots/list)"
            ));
        }
    };
    parsed.map(|error| format!("invalid {method} request: {error}"))
}
