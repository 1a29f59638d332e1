//! The server and the terminal client judge form answers the same way: every case of the
//! table goes through the server's path (`Elicited::from_response`, what a resumed round
//! does with an accepted form) and the terminal client's path (its `InputHandler` answering
//! from a script), and both verdicts must equal the expected one.

use mrtr_cli::{AnswerOptions, AnswerScript, TerminalAnswers};
use mrtr_runtime::client::{FormElicitation, InputHandler};
use mrtr_runtime::machine::{Elicited, Outcome};
use rmcp::model::{ElicitationSchema, InputRequest};
use serde_json::{Value, json};

const VALID: bool = true;
const INVALID: bool = false;

/// (what is checked, the property's schema, whether it is required, the answer content, verdict)
fn cases() -> Vec<(&'static str, Value, bool, Value, bool)> {
    let text = json!({"type": "string"});
    let email = json!({"type": "string", "format": "email"});
    let uri = json!({"type": "string", "format": "uri"});
    let date = json!({"type": "string", "format": "date"});
    let date_time = json!({"type": "string", "format": "date-time"});
    let lengths = json!({"type": "string", "minLength": 2, "maxLength": 4});
    let integer = json!({"type": "integer", "minimum": 1, "maximum": 5});
    let number = json!({"type": "number", "minimum": 0.5, "maximum": 1.5});
    let boolean = json!({"type": "boolean"});
    let choice = json!({"type": "string", "enum": ["dev", "prod"]});
    let titled = json!({"type": "string", "oneOf": [{"const": "s", "title": "Staging"}, {"const": "p", "title": "Production"}]});
    let multi = json!({"type": "array", "minItems": 1, "maxItems": 2,
        "items": {"type": "string", "enum": ["a", "b", "c"]}});
    vec![
        // email: RFC 5321 mailbox syntax (a single-label domain is valid).
        (
            "email plain",
            email.clone(),
            true,
            json!("ada@example.org"),
            VALID,
        ),
        (
            "email single-label domain",
            email.clone(),
            true,
            json!("a@b"),
            VALID,
        ),
        (
            "email quoted local part",
            email.clone(),
            true,
            json!("\"a b\"@example.org"),
            VALID,
        ),
        (
            "email address literal",
            email.clone(),
            true,
            json!("a@[192.0.2.1]"),
            VALID,
        ),
        (
            "email without @",
            email.clone(),
            true,
            json!("ada"),
            INVALID,
        ),
        (
            "email empty domain",
            email.clone(),
            true,
            json!("a@"),
            INVALID,
        ),
        (
            "email space",
            email.clone(),
            true,
            json!("a b@example.org"),
            INVALID,
        ),
        (
            "email empty label",
            email.clone(),
            true,
            json!("a@example..org"),
            INVALID,
        ),
        (
            "email trailing dot",
            email.clone(),
            true,
            json!("a@example.org."),
            INVALID,
        ),
        // uri: absolute.
        (
            "uri https",
            uri.clone(),
            true,
            json!("https://example.org/x?y=1"),
            VALID,
        ),
        (
            "uri urn",
            uri.clone(),
            true,
            json!("urn:isbn:0451450523"),
            VALID,
        ),
        (
            "uri relative",
            uri.clone(),
            true,
            json!("/relative/path"),
            INVALID,
        ),
        (
            "uri with space",
            uri.clone(),
            true,
            json!("https://example.org/a b"),
            INVALID,
        ),
        ("uri words", uri.clone(), true, json!("not a uri"), INVALID),
        // date: RFC 3339 full-date that exists.
        ("date", date.clone(), true, json!("2026-02-28"), VALID),
        (
            "date leap day",
            date.clone(),
            true,
            json!("2024-02-29"),
            VALID,
        ),
        (
            "date 31 February",
            date.clone(),
            true,
            json!("2026-02-31"),
            INVALID,
        ),
        (
            "date 29 February, not a leap year",
            date.clone(),
            true,
            json!("2026-02-29"),
            INVALID,
        ),
        (
            "date unpadded",
            date.clone(),
            true,
            json!("2026-7-28"),
            INVALID,
        ),
        (
            "date other order",
            date.clone(),
            true,
            json!("28/07/2026"),
            INVALID,
        ),
        // date-time: RFC 3339.
        (
            "date-time Z",
            date_time.clone(),
            true,
            json!("2026-12-02T12:38:28Z"),
            VALID,
        ),
        (
            "date-time offset",
            date_time.clone(),
            true,
            json!("2026-12-02T12:38:28.25+01:00"),
            VALID,
        ),
        (
            "date-time without offset",
            date_time.clone(),
            true,
            json!("2026-12-02T12:38:28"),
            INVALID,
        ),
        (
            "date-time with space",
            date_time.clone(),
            true,
            json!("2026-12-02 12:38:28Z"),
            INVALID,
        ),
        (
            "date-time impossible day",
            date_time.clone(),
            true,
            json!("2026-02-31T00:00:00Z"),
            INVALID,
        ),
        // string lengths count characters.
        ("minLength met", lengths.clone(), true, json!("ab"), VALID),
        (
            "maxLength met by characters",
            lengths.clone(),
            true,
            json!("éééé"),
            VALID,
        ),
        (
            "below minLength",
            lengths.clone(),
            true,
            json!("a"),
            INVALID,
        ),
        (
            "above maxLength",
            lengths.clone(),
            true,
            json!("abcde"),
            INVALID,
        ),
        // numbers.
        ("integer", integer.clone(), true, json!(3), VALID),
        (
            "integer written 2.0",
            integer.clone(),
            true,
            json!(2.0),
            VALID,
        ),
        ("integer at minimum", integer.clone(), true, json!(1), VALID),
        (
            "integer below minimum",
            integer.clone(),
            true,
            json!(0),
            INVALID,
        ),
        (
            "integer above maximum",
            integer.clone(),
            true,
            json!(6),
            INVALID,
        ),
        (
            "integer with a fraction",
            integer.clone(),
            true,
            json!(2.5),
            INVALID,
        ),
        (
            "integer as a string",
            integer.clone(),
            true,
            json!("3"),
            INVALID,
        ),
        ("number", number.clone(), true, json!(0.75), VALID),
        ("number at maximum", number.clone(), true, json!(1.5), VALID),
        (
            "number below minimum",
            number.clone(),
            true,
            json!(0.25),
            INVALID,
        ),
        (
            "number above maximum",
            number.clone(),
            true,
            json!(1.51),
            INVALID,
        ),
        // boolean.
        ("boolean", boolean.clone(), true, json!(false), VALID),
        (
            "boolean as a string",
            boolean.clone(),
            true,
            json!("yes"),
            INVALID,
        ),
        // enums.
        ("enum value", choice.clone(), true, json!("prod"), VALID),
        (
            "enum other value",
            choice.clone(),
            true,
            json!("qa"),
            INVALID,
        ),
        ("titled enum value", titled.clone(), true, json!("p"), VALID),
        (
            "titled enum by title",
            titled.clone(),
            true,
            json!("Production"),
            INVALID,
        ),
        (
            "multi-select",
            multi.clone(),
            true,
            json!(["a", "c"]),
            VALID,
        ),
        (
            "multi-select below minItems",
            multi.clone(),
            true,
            json!([]),
            INVALID,
        ),
        (
            "multi-select above maxItems",
            multi.clone(),
            true,
            json!(["a", "b", "c"]),
            INVALID,
        ),
        (
            "multi-select value not offered",
            multi.clone(),
            true,
            json!(["z"]),
            INVALID,
        ),
        (
            "multi-select not a list",
            multi.clone(),
            true,
            json!("a"),
            INVALID,
        ),
        // required and type.
        ("required present", text.clone(), true, json!("x"), VALID),
        ("required missing", text.clone(), true, Value::Null, INVALID),
        ("optional missing", text.clone(), false, Value::Null, VALID),
        (
            "null is not a string",
            text.clone(),
            false,
            json!(null),
            INVALID,
        ),
        (
            "number is not a string",
            text.clone(),
            true,
            json!(5),
            INVALID,
        ),
    ]
}

/// The form `{"f": property}`, and the answer object (`Value::Null` leaves `f` out).
fn form(property: &Value, required: bool, value: &Value, missing: bool) -> (Value, Value) {
    let schema = json!({"type": "object", "properties": {"f": property},
        "required": if required { json!(["f"]) } else { json!([]) }});
    let content = if missing {
        json!({})
    } else {
        json!({ "f": value })
    };
    (schema, content)
}

fn server_accepts(schema: &Value, content: &Value) -> bool {
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "q", "requestedSchema": schema}
    }))
    .expect("an elicitation request");
    let response = json!({"action": "accept", "content": content});
    match Elicited::<Value>::from_response("k", &request, response) {
        Ok(Elicited::Accept(_)) => true,
        Ok(other) => panic!("an accept came back as {other:?}"),
        Err(_) => false,
    }
}

async fn terminal_sends(schema: &Value, content: &Value) -> bool {
    let script = AnswerScript::from_json(
        &json!({"inOrder": [{"action": "accept", "content": content}]}).to_string(),
    )
    .expect("a script");
    let answers = TerminalAnswers::scripted(script, AnswerOptions::default());
    let requested_schema: ElicitationSchema =
        serde_json::from_value(schema.clone()).expect("a restricted schema");
    let request = FormElicitation {
        key: "k".into(),
        message: "q".into(),
        requested_schema,
    };
    answers.elicit(request).await.is_ok()
}

#[tokio::test]
async fn server_and_terminal_client_agree_on_every_case() {
    let mut wrong = Vec::new();
    for (case, property, required, value, expected) in cases() {
        // `Value::Null` as the value means "leave the field out"; `json!(null)` in the
        // "null is not a string" row is the same value, so that row sets it explicitly.
        let missing = value.is_null() && case != "null is not a string";
        let (schema, content) = form(&property, required, &value, missing);
        let server = server_accepts(&schema, &content);
        let terminal = terminal_sends(&schema, &content).await;
        if server != expected || terminal != expected {
            wrong.push(format!(
                "{case}: {content} expected {expected}, server {server}, terminal {terminal}"
            ));
        }
    }
    assert!(wrong.is_empty(), "disagreements:\n{}", wrong.join("\n"));
}

/// The terminal also refuses a scripted field the form does not have (a typo in the answers
/// file), which the server would ignore; it never sends such an answer.
#[tokio::test]
async fn the_terminal_refuses_scripted_fields_the_form_does_not_have() {
    let (schema, _) = form(&json!({"type": "string"}), false, &Value::Null, true);
    let content = json!({"f": "x", "typo": 1});
    assert!(server_accepts(&schema, &content));
    assert!(!terminal_sends(&schema, &content).await);
}
