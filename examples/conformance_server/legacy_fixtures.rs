//! The fixtures of the suite's 2025-11-25 server requirements that ask the client mid-call
//! (`tools-call-sampling`, `tools-call-elicitation`, `elicitation-sep1034-defaults`,
//! `elicitation-sep1330-enums`), written with `#[mrtr::tool]` like every other multi-round
//! fixture: a 2025-11-25 session gets real `sampling/createMessage` / `elicitation/create`
//! requests from the in-process driver, a 2026-07-28 client gets `input_required`.

use mrtr::machine::{Elicited, Input};
use mrtr::rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitationSchema, InputRequest, JsonObject,
};
use mrtr::server::McpServerBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

/// Who the user is (`tools-call-elicitation`).
#[derive(mrtr::Form, Deserialize)]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Asks the client's model the given prompt.
#[mrtr::tool]
async fn test_sampling(
    /// The prompt to send to the LLM.
    prompt: String,
) -> String {
    let answer = sample!(mrtr::machine::input::prompt(prompt).max_tokens(100));
    format!("LLM response: {}", answer.text())
}

/// Asks the user for a username and an email address.
#[mrtr::tool]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
) -> String {
    match ask!(form::<UserInfo>(message)) {
        Elicited::Accept(UserInfo { username, email }) => format!(
            "User response: action=accept, content={}",
            json!({ "username": username, "email": email })
        ),
        Elicited::Decline => "User response: action=decline".to_string(),
        Elicited::Cancel => "User response: action=cancel".to_string(),
    }
}

/// A form question with a hand-written schema: the answer is the accepted object.
fn raw_form(message: &str, schema: Value) -> Input<Elicited<JsonObject>> {
    let requested_schema: ElicitationSchema =
        serde_json::from_value(schema).expect("a valid elicitation schema");
    Input::from_request(InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema,
        },
    )))
}

fn completed(answer: Elicited<JsonObject>) -> String {
    match answer {
        Elicited::Accept(content) => format!(
            "Elicitation completed: action=accept, content={}",
            Value::Object(content)
        ),
        Elicited::Decline => "Elicitation completed: action=decline".to_string(),
        Elicited::Cancel => "Elicitation completed: action=cancel".to_string(),
    }
}

/// Asks with a default for every primitive type (SEP-1034).
#[mrtr::tool]
async fn test_elicitation_sep1034_defaults() -> String {
    let answer = ask!(raw_form(
        "Please review your details",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}
            }
        })
    ));
    completed(answer)
}

/// Asks with all five enum shapes (SEP-1330).
#[mrtr::tool]
async fn test_elicitation_sep1330_enums() -> String {
    let answer = ask!(raw_form(
        "Please pick your options",
        json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}}
            }
        })
    ));
    completed(answer)
}

/// Registers every 2025-11-25 fixture that asks the client.
pub fn register(builder: McpServerBuilder) -> McpServerBuilder {
    builder
        .tool(test_sampling)
        .tool(test_elicitation)
        .tool(test_elicitation_sep1034_defaults)
        .tool(test_elicitation_sep1330_enums)
}
