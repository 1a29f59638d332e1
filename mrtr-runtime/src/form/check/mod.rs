//! The one validator for form answers against the `requestedSchema` they answer.
//!
//! The server checks every accepted form with it before decoding (content that does not
//! match is a malformed answer: the question is asked again), and the terminal client
//! (`mrtr-cli`) checks what the user typed or scripted with it before sending, so a user is
//! never re-asked for an answer the client let through.
//!
//! What counts as valid follows JSON Schema (2020-12) over the 2026-07-28 restricted
//! elicitation schema, a flat object of primitives:
//!
//! | keyword | rule |
//! | --- | --- |
//! | `required` | the property is present (`null` is present, and then fails its type) |
//! | `type: string` | a JSON string; `minLength`/`maxLength` count Unicode scalar values |
//! | `type: integer` | a JSON number with no fractional part (`2.0` is an integer, as in JSON Schema) |
//! | `type: number` | a JSON number; `minimum`/`maximum` are inclusive |
//! | `type: boolean` | `true` or `false` |
//! | `enum`, titled `oneOf`/`anyOf` | the value equals one offered value |
//! | `type: array` of an enum | every item was offered; `minItems`/`maxItems` count items |
//! | properties the schema does not name | ignored, as JSON Schema does without `additionalProperties` |
//!
//! and the four formats the specification allows:
//!
//! | `format` | valid when |
//! | --- | --- |
//! | `email` | an RFC 5321 mailbox, ASCII only: a dot-atom or quoted local part of at most 64 characters, `@`, and a domain of letter/digit/hyphen labels (one label is enough: `a@b`, like `root@localhost`, is valid) or an address literal (`[192.0.2.1]`) |
//! | `uri` | an RFC 3986 `URI`: a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`), `:`, then only the characters of `hier-part`, query and fragment (an authority's host is a registered name, an IPv6 address or an `IPvFuture` in brackets; a port is digits), ASCII only, every `%` followed by two hex digits |
//! | `date` | an RFC 3339 `full-date`, `YYYY-MM-DD`, that exists in the calendar (`2026-02-31` does not) |
//! | `date-time` | an RFC 3339 `date-time` with `T` between date and time and an offset (`Z` or `±hh:mm`) |
//!
//! Other formats are annotations and pass.
//!
//! ```
//! use mrtr_runtime::form::RequestedForm;
//! use serde_json::json;
//!
//! let form = RequestedForm::parse(&json!({"type": "object", "properties": {
//!     "when": {"type": "string", "format": "date"}}, "required": ["when"]})).unwrap();
//! assert!(form.check(&json!({"when": "2026-02-28"})).is_ok());
//! let error = form.check(&json!({"when": "2026-02-31"})).unwrap_err();
//! assert_eq!(error.field(), Some("when"));
//! assert_eq!(error.to_string(), "`when` must be a calendar date (YYYY-MM-DD)");
//! ```

use rmcp::model::{ElicitationSchema, PrimitiveSchemaDefinition};
use serde_json::{Map, Value};

mod formats;
mod json;
mod model;
#[cfg(test)]
mod tests;
mod typed;
mod value;

pub use model::{Field, FieldKind, InvalidAnswer, RequestedForm, UnsupportedSchema};

impl RequestedForm {
    /// Reads a `requestedSchema` given as JSON.
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let form = RequestedForm::parse(&serde_json::json!({"type": "object"})).unwrap();
    /// assert!(form.fields().is_empty());
    /// ```
    pub fn parse(schema: &Value) -> Result<Self, UnsupportedSchema> {
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(properties) = schema["properties"].as_object() else {
            return Ok(Self { fields: Vec::new() });
        };
        let fields = properties
            .iter()
            .map(|(name, property)| {
                Ok(Field {
                    name: name.clone(),
                    label: property["title"].as_str().unwrap_or(name).to_owned(),
                    description: property["description"].as_str().map(str::to_owned),
                    required: required.contains(&name.as_str()),
                    default: property.get("default").cloned(),
                    kind: json::field_kind(name, property)?,
                })
            })
            .collect::<Result<_, UnsupportedSchema>>()?;
        Ok(Self { fields })
    }

    /// Reads rmcp's typed `requestedSchema`.
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let schema: rmcp::model::ElicitationSchema = serde_json::from_value(serde_json::json!({
    ///     "type": "object", "properties": {"name": {"type": "string"}}})).unwrap();
    /// assert_eq!(RequestedForm::from_schema(&schema).unwrap().fields()[0].name, "name");
    /// ```
    pub fn from_schema(schema: &ElicitationSchema) -> Result<Self, UnsupportedSchema> {
        // Read the typed schema directly: the server does this for every answer it checks,
        // and going through its JSON cost more than the rest of the check. A property shape
        // this version does not know (rmcp's enums are non-exhaustive) takes the JSON path,
        // which gives the same result for every shape (`typed_and_json_readings_agree`).
        match typed::form(schema) {
            Some(form) => Ok(form),
            None => {
                let schema = serde_json::to_value(schema)
                    .map_err(|error| UnsupportedSchema(error.to_string()))?;
                Self::parse(&schema)
            }
        }
    }

    /// The form of a one-field question (`input::text` and the like) asking `name` with
    /// `property`, required: what [`from_schema`](Self::from_schema) reads from that
    /// schema, without building it. `None` for a property shape only the JSON path reads.
    pub(crate) fn single_field(name: &str, property: &PrimitiveSchemaDefinition) -> Option<Self> {
        typed::single_field_form(name, property)
    }

    /// The fields, in schema order.
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
    ///     "a": {"type": "string"}, "b": {"type": "number"}}})).unwrap();
    /// assert_eq!(form.fields().len(), 2);
    /// ```
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// Checks a whole answer: an object, every required field present, every present field
    /// valid. Properties the form does not name are ignored.
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
    ///     "env": {"type": "string", "enum": ["dev", "prod"]}}, "required": ["env"]})).unwrap();
    /// assert!(form.check(&serde_json::json!({"env": "dev", "other": 1})).is_ok());
    /// assert_eq!(form.check(&serde_json::json!({"env": "qa"})).unwrap_err().to_string(),
    ///            "`env` must be one of: dev, prod");
    /// ```
    pub fn check(&self, content: &Value) -> Result<(), InvalidAnswer> {
        let object: &Map<String, Value> = content.as_object().ok_or_else(|| InvalidAnswer {
            field: None,
            problem: "the answer must be an object".into(),
        })?;
        for field in &self.fields {
            match object.get(&field.name) {
                Some(value) => field.check(value)?,
                None if field.required => {
                    return Err(InvalidAnswer::of(&field.name, "is required"));
                }
                None => {}
            }
        }
        Ok(())
    }
}

impl Field {
    /// Checks one value against this field.
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
    ///     "mail": {"type": "string", "format": "email"}}})).unwrap();
    /// let mail = &form.fields()[0];
    /// assert!(mail.check(&serde_json::json!("ada@example.org")).is_ok());
    /// assert!(mail.check(&serde_json::json!("ada@")).is_err());
    /// ```
    pub fn check(&self, value: &Value) -> Result<(), InvalidAnswer> {
        self.problem_with(value)
            .map_err(|problem| InvalidAnswer::of(&self.name, problem))
    }
}
