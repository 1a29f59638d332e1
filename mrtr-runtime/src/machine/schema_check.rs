//! Server-side validation of accepted form content against the `requestedSchema` we sent.
//!
//! Clients SHOULD validate, but a server cannot rely on it: content that does not match is
//! treated as a malformed answer and the question is asked again.

use rmcp::model::ElicitationSchema;
use serde_json::{Map, Value};

/// Checks `content` against the restricted elicitation schema (flat object of primitives).
pub(crate) fn check_form_content(
    schema: &ElicitationSchema,
    content: &Value,
) -> Result<(), String> {
    let schema = serde_json::to_value(schema).map_err(|e| e.to_string())?;
    let Value::Object(content) = content else {
        return Err("accepted content must be an object".into());
    };
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for field in required.iter().filter_map(Value::as_str) {
            if !content.contains_key(field) {
                return Err(format!("required field `{field}` is missing"));
            }
        }
    }
    for (field, value) in content {
        // Unknown fields are ignored, as the spec asks for unexpected data.
        if let Some(Value::Object(property)) = properties.get(field) {
            check_property(field, property, value)?;
        }
    }
    Ok(())
}

fn number(property: &Map<String, Value>, name: &str) -> Option<f64> {
    property.get(name).and_then(Value::as_f64)
}

fn allowed_values(property: &Map<String, Value>) -> Option<Vec<String>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(
            values
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        );
    }
    let titled = property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        titled
            .iter()
            .filter_map(|option| option.get("const").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
    )
}

/// The four formats the spec allows. Unknown formats are annotations and pass.
fn matches_format(format: &str, text: &str) -> bool {
    match format {
        "email" => is_email(text),
        "uri" => url::Url::parse(text).is_ok(),
        "date" => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok(),
        "date-time" => chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        _ => true,
    }
}

/// Structural check of an RFC 5321 mailbox: `local@domain`, no spaces, dotted domain labels.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let printable = |s: &str| s.chars().all(|c| !c.is_whitespace() && !c.is_control());
    !local.is_empty()
        && printable(local)
        && printable(domain)
        && !domain.contains('@')
        && domain.split('.').all(|label| !label.is_empty())
}

fn check_property(field: &str, property: &Map<String, Value>, value: &Value) -> Result<(), String> {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "string" => {
            let text = value
                .as_str()
                .ok_or_else(|| format!("field `{field}` must be a string"))?;
            let length = text.chars().count() as f64;
            if number(property, "minLength").is_some_and(|min| length < min) {
                return Err(format!("field `{field}` is shorter than minLength"));
            }
            if number(property, "maxLength").is_some_and(|max| length > max) {
                return Err(format!("field `{field}` is longer than maxLength"));
            }
            if let Some(allowed) = allowed_values(property)
                && !allowed.iter().any(|a| a == text)
            {
                return Err(format!("field `{field}` is not one of the offered options"));
            }
            if let Some(format) = property.get("format").and_then(Value::as_str)
                && !matches_format(format, text)
            {
                return Err(format!("field `{field}` is not a valid `{format}`"));
            }
        }
        "number" | "integer" => {
            let n = value
                .as_f64()
                .ok_or_else(|| format!("field `{field}` must be a number"))?;
            if kind == "integer" && n.fract() != 0.0 {
                return Err(format!("field `{field}` must be an integer"));
            }
            if number(property, "minimum").is_some_and(|min| n < min) {
                return Err(format!("field `{field}` is below its minimum"));
            }
            if number(property, "maximum").is_some_and(|max| n > max) {
                return Err(format!("field `{field}` is above its maximum"));
            }
        }
        "boolean" if !value.is_boolean() => {
            return Err(format!("field `{field}` must be a boolean"));
        }
        "array" => {
            let items = value
                .as_array()
                .ok_or_else(|| format!("field `{field}` must be an array"))?;
            let count = items.len() as f64;
            if number(property, "minItems").is_some_and(|min| count < min) {
                return Err(format!("field `{field}` has fewer items than minItems"));
            }
            if number(property, "maxItems").is_some_and(|max| count > max) {
                return Err(format!("field `{field}` has more items than maxItems"));
            }
            let allowed = property
                .get("items")
                .and_then(Value::as_object)
                .and_then(allowed_values);
            for item in items {
                let text = item
                    .as_str()
                    .ok_or_else(|| format!("field `{field}` must hold strings"))?;
                if let Some(allowed) = &allowed
                    && !allowed.iter().any(|a| a == text)
                {
                    return Err(format!(
                        "field `{field}` holds a value that was not offered"
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> ElicitationSchema {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn accepts_matching_content_and_ignores_unknown_fields() {
        let s = schema(
            json!({"type":"object","properties":{"name":{"type":"string","maxLength":5}},"required":["name"]}),
        );
        assert!(check_form_content(&s, &json!({"name":"Alice","extra":1})).is_ok());
    }

    #[test]
    fn rejects_missing_required_wrong_type_and_bounds() {
        let s = schema(json!({"type":"object","properties":{
            "name":{"type":"string","maxLength":3},
            "age":{"type":"integer","minimum":0},
            "env":{"type":"string","enum":["a","b"]},
            "tags":{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":1}
        },"required":["name"]}));
        // Each violation is reported for the field that has it.
        for (content, field) in [
            (json!({}), "name"),
            (json!({"name": 5}), "name"),
            (json!({"name": "long"}), "name"),
            (json!({"name": "ab", "age": -1}), "age"),
            (json!({"name": "ab", "age": 1.5}), "age"),
            (json!({"name": "ab", "env": "c"}), "env"),
            (json!({"name": "ab", "tags": ["x", "y"]}), "tags"),
            (json!({"name": "ab", "tags": ["z"]}), "tags"),
        ] {
            let error = check_form_content(&s, &content).unwrap_err();
            assert!(error.contains(field), "{content}: {error}");
            for other in ["name", "age", "env", "tags"]
                .iter()
                .filter(|o| **o != field)
            {
                assert!(!error.contains(other), "{content}: {error} names `{other}`");
            }
        }
        assert!(
            check_form_content(&s, &json!("ab"))
                .unwrap_err()
                .contains("object")
        );
        assert!(
            check_form_content(
                &s,
                &json!({"name": "ab", "age": 3, "env": "a", "tags": ["y"]})
            )
            .is_ok()
        );
    }

    #[test]
    fn checks_the_four_string_formats() {
        let s = schema(json!({"type":"object","properties":{
            "email":{"type":"string","format":"email"},
            "uri":{"type":"string","format":"uri"},
            "date":{"type":"string","format":"date"},
            "at":{"type":"string","format":"date-time"}
        }}));
        let good = json!({"email":"a.b@example.org","uri":"https://example.org/x?y=1",
            "date":"2026-02-28","at":"2026-12-02T12:38:28Z"});
        assert!(check_form_content(&s, &good).is_ok());
        for (field, bad) in [
            ("email", "no-at-sign"),
            ("email", "a b@example.org"),
            ("email", "a@"),
            ("email", "a@example..org"),
            ("uri", "not a uri"),
            ("uri", "/relative/path"),
            ("date", "2026-02-30"),
            ("date", "02/12/2026"),
            ("at", "2026-12-02 12:38"),
            ("at", "2026-12-02T12:38:28"),
        ] {
            let error = check_form_content(&s, &json!({ field: bad })).unwrap_err();
            assert!(error.contains(field), "{field}={bad}: {error}");
        }
    }

    #[test]
    fn accepts_floats_for_integer_fields_with_no_fraction() {
        let s = schema(json!({"type":"object","properties":{"n":{"type":"integer"}}}));
        assert!(check_form_content(&s, &json!({"n": 2.0})).is_ok());
    }
}
