//! Target 6: the terminal client's answers file (`--answers FILE`) and its form input
//! parsing (what the user types for each field of a `requestedSchema`).
//!
//! Input: the first byte picks the mode. Answers file: the rest is the file's text; a parsed
//! script answers a form, a choice, a confirmation and a URL elicitation under every key it
//! names. Form input: the rest is a schema (first line, JSON; otherwise one of the fixed
//! schemas) followed by one typed line per field.
//!
//! Oracle: never a panic, and whatever the terminal accepts — a scripted form answer or a
//! typed field — the server accepts too for the same schema (otherwise the user's answer
//! would be asked again forever).

use std::sync::OnceLock;

use futures::executor::block_on;
use mrtr::client::{FormElicitation, InputHandler, UrlElicitation};
use mrtr::form::RequestedForm;
use mrtr::machine::{Answers, Elicited, input};
use mrtr_cli::form::parse_text;
use mrtr_cli::{AnswerOptions, AnswerScript, TerminalAnswers};
use rmcp::model::{ElicitationAction, ElicitationSchema, InputRequest};
use serde_json::{Value, json};

use crate::answers::Everything;

fn schemas() -> &'static [Value] {
    static SCHEMAS: OnceLock<Vec<Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        [
            input::form::<Everything>("All").into_request(),
            input::choice("Where?", ["staging", "prod"]).into_request(),
            input::multi_choice("Which?", ["a", "b", "c"]).into_request(),
            input::confirm("Sure?").into_request(),
            input::text("Name?").into_request(),
        ]
        .iter()
        .filter_map(|request| {
            let wire = serde_json::to_value(request).ok()?;
            Some(wire["params"]["requestedSchema"].clone())
        })
        .collect()
    })
}

/// The server's verdict on `content` as the accepted answer to a form with `schema`.
fn server_accepts(schema: &Value, content: &Value) -> Result<(), String> {
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "m", "requestedSchema": schema}
    }))
    .map_err(|e| format!("not a request: {e}"))?;
    let answer = json!({"action": "accept", "content": content});
    let mut answers = Answers::new([("k".to_string(), request)], [("k".to_string(), answer)]);
    answers
        .take::<Elicited<Value>>("k")
        .map(drop)
        .map_err(|e| e.to_string())
}

fn answers_file(text: &str) {
    let Ok(script) = AnswerScript::from_json(text) else {
        return;
    };
    let keys: Vec<String> = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|file| {
            file["byKey"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
        })
        .unwrap_or_default();
    let answers = TerminalAnswers::scripted(script, AnswerOptions::default());
    for key in keys.iter().map(String::as_str).chain(["unnamed"]) {
        for schema in schemas() {
            let Ok(requested_schema) = serde_json::from_value::<ElicitationSchema>(schema.clone())
            else {
                continue;
            };
            let request = FormElicitation {
                key: key.into(),
                message: "m".into(),
                requested_schema,
            };
            if let Ok(result) = block_on(answers.elicit(request))
                && result.action == ElicitationAction::Accept
            {
                let content = result.content.unwrap_or(Value::Null);
                if let Err(refusal) = server_accepts(schema, &content) {
                    panic!(
                        "the terminal sent {content} for {schema}; the server refuses: {refusal}"
                    );
                }
            }
        }
        let url = UrlElicitation {
            key: key.into(),
            message: "m".into(),
            url: "https://example.com".into(),
        };
        let _ = block_on(answers.elicit_url(url));
    }
}

fn form_input(text: &str) {
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or_default();
    let schema = match serde_json::from_str::<Value>(first) {
        Ok(schema) => schema,
        Err(_) => {
            let schemas = schemas();
            schemas[first.len() % schemas.len()].clone()
        }
    };
    let Ok(form) = RequestedForm::parse(&schema) else {
        return;
    };
    for (field, typed) in form.fields().iter().zip(lines) {
        let Ok(Some(value)) = parse_text(field, typed) else {
            continue;
        };
        // The same field alone, optional: the server judges just this value.
        let property = schema["properties"][&field.name].clone();
        let alone = json!({"type": "object", "properties": {(field.name.clone()): property}});
        let content = json!({(field.name.clone()): value});
        if let Err(refusal) = server_accepts(&alone, &content) {
            // Only a schema the server itself could send counts.
            if serde_json::from_value::<ElicitationSchema>(alone.clone()).is_ok() {
                panic!(
                    "the terminal took {typed:?} as {value} for {alone}; the server refuses: {refusal}"
                );
            }
        }
    }
}

/// Runs one input.
///
/// ```
/// mrtr_fuzz::terminal::run(b"\x00{\"inOrder\": [\"decline\"]}");
/// ```
pub fn run(data: &[u8]) {
    let [mode, rest @ ..] = data else { return };
    let text = String::from_utf8_lossy(rest);
    if mode % 2 == 0 {
        answers_file(&text);
    } else {
        form_input(&text);
    }
}

/// The seed corpus: answers files in every shape, and typed input for every fixed schema.
///
/// ```
/// assert!(mrtr_fuzz::terminal::seeds().len() > 4);
/// ```
pub fn seeds() -> Vec<Vec<u8>> {
    let files = [
        json!({"inOrder": ["accept", "decline", "cancel"]}),
        json!({"byKey": {"unnamed": {"action": "accept", "content": {"choice": "prod"}}}}),
        json!({"byKey": {"k": [{"action": "accept", "content": {"confirm": true}}, "decline"]},
               "inOrder": [{"action": "accept", "content": {"choices": ["a", "c"]}}]}),
        json!({"byKey": {"unnamed": {"action": "accept", "content": {
            "name": "Zoë", "email": "a@b.c", "day": "2026-02-28", "at": "2026-02-28T10:00:00Z",
            "small": 1, "flag": true, "env": "dev", "tags": ["prod"], "retries": 2}}}}),
    ];
    let mut seeds: Vec<Vec<u8>> = files
        .iter()
        .map(|file| [&[0u8][..], file.to_string().as_bytes()].concat())
        .collect();
    let typed = [
        "\nZoë\na@b.c\nhttps://x\n2026-02-28\n2026-02-28T10:00:00Z\n-5\n7\n1.5\n3\ny\nprod",
        "x\nprod",
        "xx\na, b",
        "xxx\ny",
        "xxxx\nhello",
    ];
    seeds.extend(
        typed
            .iter()
            .map(|text| [&[1u8][..], text.as_bytes()].concat()),
    );
    seeds
}
