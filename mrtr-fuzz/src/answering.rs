//! A conforming client's answer to any input request, built from the request itself, so
//! the targets can carry a flow past its suspensions.

use rmcp::model::InputRequest;
use serde_json::{Map, Value, json};

/// A valid answer to `request`: an accepted form filled within its schema, an accepted URL
/// elicitation, an assistant text for sampling, one root for `roots/list`.
///
/// ```
/// use mrtr::machine::input;
/// let answer = mrtr_fuzz::answering::valid_answer(&input::confirm("Sure?").into_request());
/// assert_eq!(answer["action"], "accept");
/// ```
pub fn valid_answer(request: &InputRequest) -> Value {
    let wire = serde_json::to_value(request).unwrap_or(Value::Null);
    match wire["method"].as_str() {
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "sampled"},
            "model": "fuzz-model",
            "stopReason": "endTurn"
        }),
        Some("roots/list") => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
        _ => match wire["params"].get("requestedSchema") {
            Some(schema) => json!({"action": "accept", "content": fill(schema)}),
            None => json!({"action": "accept"}),
        },
    }
}

/// Content that satisfies a restricted elicitation schema.
fn fill(schema: &Value) -> Value {
    let mut content = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        content.insert(name.clone(), fill_property(property));
    }
    Value::Object(content)
}

fn first_option(schema: &Value) -> Option<Value> {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return Some(first.clone());
    }
    ["oneOf", "anyOf"]
        .iter()
        .find_map(|key| schema[*key].as_array()?.first()?.get("const").cloned())
}

fn fill_property(property: &Value) -> Value {
    match property["type"].as_str() {
        Some("boolean") => json!(true),
        Some("integer") => json!(
            property["minimum"]
                .as_f64()
                .map_or(1, |min| min.ceil() as i64)
        ),
        Some("number") => json!(property["minimum"].as_f64().unwrap_or(0.5)),
        Some("array") => {
            let min = property["minItems"].as_u64().unwrap_or(0);
            let option = first_option(&property["items"]);
            match option {
                Some(option) if min > 0 => json!([option]),
                _ => json!([]),
            }
        }
        _ => first_option(property).unwrap_or_else(|| match property["format"].as_str() {
            Some("email") => json!("fuzz@example.org"),
            Some("uri") => json!("https://example.org/"),
            Some("date") => json!("2026-01-02"),
            Some("date-time") => json!("2026-01-02T03:04:05Z"),
            _ => {
                let min = property["minLength"].as_u64().unwrap_or(1).max(1);
                json!("a".repeat(min as usize))
            }
        }),
    }
}
