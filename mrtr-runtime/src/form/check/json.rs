//! Reading a `requestedSchema` given as JSON into field kinds, the path
//! [`RequestedForm::parse`](super::RequestedForm::parse) takes and the one every schema
//! shape can take.

use serde_json::Value;

use super::model::{FieldKind, UnsupportedSchema};

fn options(schema: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(values) = schema["enum"].as_array() {
        // `enumNames` is the legacy way to title enum values.
        let titles = schema["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(index, value)| {
                    let title = titles
                        .and_then(|titles| titles.get(index))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| plain(value));
                    (value.clone(), title)
                })
                .collect(),
        );
    }
    let titled = schema["oneOf"]
        .as_array()
        .or_else(|| schema["anyOf"].as_array())?;
    Some(
        titled
            .iter()
            .map(|option| {
                let value = option["const"].clone();
                let title = option["title"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| plain(&value));
                (value, title)
            })
            .collect(),
    )
}

fn plain(value: &Value) -> String {
    value
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| value.to_string())
}

pub(super) fn field_kind(name: &str, property: &Value) -> Result<FieldKind, UnsupportedSchema> {
    let number = |key: &str| property[key].as_f64();
    let count = |key: &str| property[key].as_u64();
    match property["type"].as_str() {
        Some("string") => Ok(match options(property) {
            Some(options) => FieldKind::Choice { options },
            None => FieldKind::Text {
                min_length: count("minLength"),
                max_length: count("maxLength"),
                format: property["format"].as_str().map(str::to_owned),
            },
        }),
        Some("integer") => Ok(FieldKind::Integer {
            minimum: number("minimum"),
            maximum: number("maximum"),
        }),
        Some("number") => Ok(FieldKind::Number {
            minimum: number("minimum"),
            maximum: number("maximum"),
        }),
        Some("boolean") => Ok(FieldKind::Boolean),
        Some("array") => match options(&property["items"]) {
            Some(options) => Ok(FieldKind::MultiChoice {
                options,
                min_items: count("minItems"),
                max_items: count("maxItems"),
            }),
            None => Err(UnsupportedSchema(format!(
                "field `{name}`: arrays must list their allowed values"
            ))),
        },
        other => Err(UnsupportedSchema(format!(
            "field `{name}`: unsupported type {other:?}"
        ))),
    }
}
