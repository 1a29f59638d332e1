//! Form elicitation fields read from a `requestedSchema`, with the validation both the
//! interactive prompts and scripted answers go through.

use serde_json::{Map, Value, json};

/// One property of a form, as the user sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Property name in the answer object.
    pub name: String,
    /// Label: the schema `title`, else the name.
    pub label: String,
    /// The schema `description`, shown as help.
    pub description: Option<String>,
    /// Whether the answer must contain it.
    pub required: bool,
    /// The schema `default`.
    pub default: Option<Value>,
    /// What kind of value it takes.
    pub kind: FieldKind,
}

/// The value kinds the 2026-07-28 restricted elicitation schema allows.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// A string, optionally bounded and with a `format`.
    Text {
        /// `minLength`.
        min_length: Option<u64>,
        /// `maxLength`.
        max_length: Option<u64>,
        /// `format` (`email`, `uri`, `date`, `date-time`).
        format: Option<String>,
    },
    /// An integer within optional bounds.
    Integer {
        /// `minimum`.
        minimum: Option<f64>,
        /// `maximum`.
        maximum: Option<f64>,
    },
    /// A number within optional bounds.
    Number {
        /// `minimum`.
        minimum: Option<f64>,
        /// `maximum`.
        maximum: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of several values (`enum`, or titled `oneOf`/`anyOf` consts).
    Choice {
        /// `(value, title)` pairs.
        options: Vec<(Value, String)>,
    },
    /// Several of several values (an array of an enum).
    MultiChoice {
        /// `(value, title)` pairs.
        options: Vec<(Value, String)>,
        /// `minItems`.
        min_items: Option<u64>,
        /// `maxItems`.
        max_items: Option<u64>,
    },
}

/// Reads the fields of a form schema, in schema order.
///
/// ```
/// use mrtr::terminal::form::{FieldKind, fields};
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "ok": {"type": "boolean"}}, "required": ["ok"]});
/// let fields = fields(&schema).unwrap();
/// assert_eq!(fields[0].kind, FieldKind::Boolean);
/// assert!(fields[0].required);
/// ```
pub fn fields(schema: &Value) -> Result<Vec<Field>, String> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Ok(Vec::new());
    };
    properties
        .iter()
        .map(|(name, property)| {
            Ok(Field {
                name: name.clone(),
                label: property["title"].as_str().unwrap_or(name).to_owned(),
                description: property["description"].as_str().map(str::to_owned),
                required: required.contains(&name.as_str()),
                default: property.get("default").cloned(),
                kind: field_kind(name, property)?,
            })
        })
        .collect()
}

fn options(schema: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(values) = schema["enum"].as_array() {
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

fn field_kind(name: &str, property: &Value) -> Result<FieldKind, String> {
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
            None => Err(format!(
                "field `{name}`: arrays must list their allowed values"
            )),
        },
        other => Err(format!("field `{name}`: unsupported type {other:?}")),
    }
}

/// Turns what the user typed into the field's value; `Ok(None)` means "left empty".
///
/// ```
/// use mrtr::terminal::form::{fields, parse_text};
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "n": {"type": "integer", "minimum": 1, "maximum": 5}}});
/// let field = &fields(&schema).unwrap()[0];
/// assert_eq!(parse_text(field, "3").unwrap(), Some(serde_json::json!(3)));
/// assert!(parse_text(field, "9").unwrap_err().contains("at most 5"));
/// ```
pub fn parse_text(field: &Field, input: &str) -> Result<Option<Value>, String> {
    if input.is_empty() {
        return if field.required && field.default.is_none() {
            Err("this field is required".into())
        } else {
            Ok(None)
        };
    }
    let value = match &field.kind {
        FieldKind::Integer { .. } => json!(
            input
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("`{input}` is not a whole number"))?
        ),
        FieldKind::Number { .. } => {
            let number: f64 = input
                .trim()
                .parse()
                .map_err(|_| format!("`{input}` is not a number"))?;
            json!(number)
        }
        _ => json!(input),
    };
    validate(field, &value)?;
    Ok(Some(value))
}

/// Checks one value against its field.
pub fn validate(field: &Field, value: &Value) -> Result<(), String> {
    let bounds = |number: f64, minimum: &Option<f64>, maximum: &Option<f64>| {
        if let Some(minimum) = minimum
            && number < *minimum
        {
            return Err(format!("must be at least {minimum}"));
        }
        if let Some(maximum) = maximum
            && number > *maximum
        {
            return Err(format!("must be at most {maximum}"));
        }
        Ok(())
    };
    match &field.kind {
        FieldKind::Text {
            min_length,
            max_length,
            format,
        } => {
            let text = value.as_str().ok_or("must be text")?;
            let length = text.chars().count() as u64;
            if let Some(min) = min_length
                && length < *min
            {
                return Err(format!("must be at least {min} characters"));
            }
            if let Some(max) = max_length
                && length > *max
            {
                return Err(format!("must be at most {max} characters"));
            }
            match format.as_deref() {
                Some("email") if !looks_like_email(text) => Err("must be an email address".into()),
                Some("uri") if !text.contains(':') => Err("must be a URI (scheme:...)".into()),
                Some("date") if !looks_like_date(text) => Err("must be a date (YYYY-MM-DD)".into()),
                Some("date-time")
                    if !(text.len() > 10
                        && looks_like_date(&text[..10])
                        && text[10..].starts_with('T')) =>
                {
                    Err("must be a date-time (YYYY-MM-DDThh:mm:ssZ)".into())
                }
                _ => Ok(()),
            }
        }
        FieldKind::Integer { minimum, maximum } => {
            let number = value.as_i64().ok_or("must be a whole number")?;
            bounds(number as f64, minimum, maximum)
        }
        FieldKind::Number { minimum, maximum } => {
            let number = value.as_f64().ok_or("must be a number")?;
            bounds(number, minimum, maximum)
        }
        FieldKind::Boolean => value
            .as_bool()
            .map(|_| ())
            .ok_or_else(|| "must be true or false".into()),
        FieldKind::Choice { options } => {
            if options.iter().any(|(allowed, _)| allowed == value) {
                Ok(())
            } else {
                Err(format!("must be one of {}", titles(options)))
            }
        }
        FieldKind::MultiChoice {
            options,
            min_items,
            max_items,
        } => {
            let items = value.as_array().ok_or("must be a list")?;
            if let Some(bad) = items
                .iter()
                .find(|item| !options.iter().any(|(allowed, _)| allowed == *item))
            {
                return Err(format!("{bad} is not one of {}", titles(options)));
            }
            let count = items.len() as u64;
            if let Some(min) = min_items
                && count < *min
            {
                return Err(format!("pick at least {min}"));
            }
            if let Some(max) = max_items
                && count > *max
            {
                return Err(format!("pick at most {max}"));
            }
            Ok(())
        }
    }
}

fn titles(options: &[(Value, String)]) -> String {
    options
        .iter()
        .map(|(_, title)| title.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn looks_like_email(text: &str) -> bool {
    text.split_once('@').is_some_and(|(user, domain)| {
        !user.is_empty() && domain.contains('.') && !domain.ends_with('.')
    })
}

fn looks_like_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    parts.len() == 3
        && [4, 2, 2]
            .iter()
            .zip(&parts)
            .all(|(len, part)| part.len() == *len && part.chars().all(|c| c.is_ascii_digit()))
}

/// Checks a whole answer object against the form: required fields present, each value valid,
/// no unknown fields.
///
/// ```
/// use mrtr::terminal::form::validate_content;
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "env": {"type": "string", "enum": ["dev", "prod"]}}, "required": ["env"]});
/// assert!(validate_content(&schema, &serde_json::json!({"env": "dev"})).is_ok());
/// assert_eq!(validate_content(&schema, &serde_json::json!({})).unwrap_err(), "`env` is required");
/// ```
pub fn validate_content(schema: &Value, content: &Value) -> Result<(), String> {
    let fields = fields(schema)?;
    let object: &Map<String, Value> = content.as_object().ok_or("the answer must be an object")?;
    for field in &fields {
        match object.get(&field.name) {
            Some(value) => {
                validate(field, value).map_err(|error| format!("`{}` {error}", field.name))?
            }
            None if field.required => return Err(format!("`{}` is required", field.name)),
            None => {}
        }
    }
    if let Some(unknown) = object
        .keys()
        .find(|key| !fields.iter().any(|field| &field.name == *key))
    {
        return Err(format!("`{unknown}` is not a field of this form"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(property: Value, required: bool) -> Field {
        let schema = json!({
            "type": "object",
            "properties": {"f": property},
            "required": if required { json!(["f"]) } else { json!([]) }
        });
        fields(&schema).unwrap().remove(0)
    }

    #[test]
    fn titled_one_of_becomes_a_choice_with_titles() {
        let choice = field(
            json!({"type": "string", "oneOf": [{"const": "s", "title": "Staging"}, {"const": "p", "title": "Production"}]}),
            true,
        );
        assert_eq!(
            choice.kind,
            FieldKind::Choice {
                options: vec![
                    (json!("s"), "Staging".into()),
                    (json!("p"), "Production".into())
                ]
            }
        );
        assert!(validate(&choice, &json!("p")).is_ok());
        assert!(
            validate(&choice, &json!("Production"))
                .unwrap_err()
                .contains("Staging, Production")
        );
    }

    #[test]
    fn multi_select_checks_values_and_counts() {
        let multi = field(
            json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"anyOf": [
                {"const": "a", "title": "A"}, {"const": "b", "title": "B"}, {"const": "c", "title": "C"}]}}),
            false,
        );
        assert!(validate(&multi, &json!(["a", "c"])).is_ok());
        assert!(
            validate(&multi, &json!([]))
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(
            validate(&multi, &json!(["a", "b", "c"]))
                .unwrap_err()
                .contains("at most 2")
        );
        assert!(
            validate(&multi, &json!(["z"]))
                .unwrap_err()
                .contains("not one of")
        );
    }

    #[test]
    fn text_lengths_formats_and_required() {
        let email = field(
            json!({"type": "string", "format": "email", "maxLength": 12}),
            true,
        );
        assert_eq!(
            parse_text(&email, "ada@ex.org").unwrap(),
            Some(json!("ada@ex.org"))
        );
        assert!(parse_text(&email, "ada").unwrap_err().contains("email"));
        assert!(
            parse_text(&email, "ada@example.org")
                .unwrap_err()
                .contains("at most 12")
        );
        assert!(parse_text(&email, "").unwrap_err().contains("required"));

        let date = field(json!({"type": "string", "format": "date"}), false);
        assert!(parse_text(&date, "2026-07-28").is_ok());
        assert!(parse_text(&date, "28/07/2026").is_err());
        assert_eq!(
            parse_text(&date, "").unwrap(),
            None,
            "optional fields may stay empty"
        );
    }

    #[test]
    fn numbers_parse_and_respect_bounds() {
        let ratio = field(json!({"type": "number", "minimum": 0.5}), true);
        assert_eq!(parse_text(&ratio, "0.75").unwrap(), Some(json!(0.75)));
        assert!(
            parse_text(&ratio, "0.1")
                .unwrap_err()
                .contains("at least 0.5")
        );
        assert!(
            parse_text(&ratio, "lots")
                .unwrap_err()
                .contains("not a number")
        );
        let count = field(json!({"type": "integer"}), true);
        assert!(
            parse_text(&count, "1.5")
                .unwrap_err()
                .contains("whole number")
        );
    }

    #[test]
    fn whole_answers_reject_missing_and_unknown_fields() {
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
        assert!(validate_content(&schema, &json!({"ok": false})).is_ok());
        assert!(
            validate_content(&schema, &json!({}))
                .unwrap_err()
                .contains("required")
        );
        assert!(
            validate_content(&schema, &json!({"ok": true, "extra": 1}))
                .unwrap_err()
                .contains("extra")
        );
        assert!(
            validate_content(&schema, &json!({"ok": "yes"}))
                .unwrap_err()
                .contains("true or false")
        );
    }
}
