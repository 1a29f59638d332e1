//! Form answers typed or scripted at the terminal, checked with the runtime's validator
//! ([`mrtr_runtime::form::RequestedForm`]), the same one the server applies.

use mrtr_runtime::form::{Field, FieldKind, RequestedForm};
use serde_json::{Map, Value, json};

/// Turns what the user typed into the field's value; `Ok(None)` means "left empty".
///
/// ```
/// use mrtr_cli::form::parse_text;
/// use mrtr_runtime::form::RequestedForm;
/// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
///     "n": {"type": "integer", "minimum": 1, "maximum": 5}}})).unwrap();
/// let field = &form.fields()[0];
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
    field
        .check(&value)
        .map_err(|error| error.problem().to_owned())?;
    Ok(Some(value))
}

/// Checks a scripted answer object against the form: the runtime's verdict (what the server
/// will accept), and then a guard against typos in the answers file, which names only the
/// form's own fields (the server would ignore an unknown one, losing the answer silently).
///
/// ```
/// use mrtr_cli::form::check_scripted;
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "env": {"type": "string", "enum": ["dev", "prod"]}}, "required": ["env"]});
/// assert!(check_scripted(&schema, &serde_json::json!({"env": "dev"})).is_ok());
/// assert_eq!(check_scripted(&schema, &serde_json::json!({})).unwrap_err(), "`env` is required");
/// ```
pub fn check_scripted(schema: &Value, content: &Value) -> Result<(), String> {
    let form = RequestedForm::parse(schema).map_err(|error| error.to_string())?;
    form.check(content).map_err(|error| error.to_string())?;
    let object: &Map<String, Value> = content.as_object().ok_or("the answer must be an object")?;
    if let Some(unknown) = object
        .keys()
        .find(|key| !form.fields().iter().any(|field| &field.name == *key))
    {
        return Err(format!("`{unknown}` is not a field of this form"));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The one field of a form whose only property is `property` (shared with the prompt
    /// module's tests).
    pub(crate) fn field(property: Value, required: bool) -> Field {
        let schema = json!({
            "type": "object",
            "properties": {"f": property},
            "required": if required { json!(["f"]) } else { json!([]) }
        });
        RequestedForm::parse(&schema).unwrap().fields()[0].clone()
    }

    fn validate(field: &Field, value: &Value) -> Result<(), String> {
        field
            .check(value)
            .map_err(|error| error.problem().to_owned())
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
        assert!(check_scripted(&schema, &json!({"ok": false})).is_ok());
        assert!(
            check_scripted(&schema, &json!({}))
                .unwrap_err()
                .contains("required")
        );
        assert!(
            check_scripted(&schema, &json!({"ok": true, "extra": 1}))
                .unwrap_err()
                .contains("extra")
        );
        assert!(
            check_scripted(&schema, &json!({"ok": "yes"}))
                .unwrap_err()
                .contains("true or false")
        );
    }
}
