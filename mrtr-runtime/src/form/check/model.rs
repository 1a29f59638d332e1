//! What a parsed `requestedSchema` is made of, and what can be wrong with a schema or an
//! answer: the types the readers ([`json`](super::json), [`typed`](super::typed)) build and
//! the value checks ([`value`](super::value)) use.

use serde_json::Value;

/// A parsed `requestedSchema`: its fields in schema order.
///
/// ```
/// use mrtr_runtime::form::{FieldKind, RequestedForm};
/// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
///     "ok": {"type": "boolean", "title": "Proceed?"}}, "required": ["ok"]})).unwrap();
/// assert_eq!(form.fields()[0].label, "Proceed?");
/// assert_eq!(form.fields()[0].kind, FieldKind::Boolean);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RequestedForm {
    pub(super) fields: Vec<Field>,
}

/// One property of a form.
///
/// ```
/// use mrtr_runtime::form::RequestedForm;
/// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
///     "n": {"type": "integer", "maximum": 5}}})).unwrap();
/// let field = &form.fields()[0];
/// assert!(!field.required);
/// assert_eq!(field.check(&serde_json::json!(9)).unwrap_err().problem(), "must be at most 5");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Field {
    /// Property name in the answer object.
    pub name: String,
    /// Label: the schema `title`, else the name.
    pub label: String,
    /// The schema `description`.
    pub description: Option<String>,
    /// Whether the answer must contain it.
    pub required: bool,
    /// The schema `default`.
    pub default: Option<Value>,
    /// What kind of value it takes.
    pub kind: FieldKind,
}

/// The value kinds the 2026-07-28 restricted elicitation schema allows.
///
/// ```
/// use mrtr_runtime::form::{FieldKind, RequestedForm};
/// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
///     "env": {"type": "string", "enum": ["dev", "prod"]}}})).unwrap();
/// assert!(matches!(form.fields()[0].kind, FieldKind::Choice { .. }));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldKind {
    /// A string, optionally bounded and with a `format`.
    Text {
        /// `minLength`.
        min_length: Option<u64>,
        /// `maxLength`.
        max_length: Option<u64>,
        /// `format` (`email`, `uri`, `date`, `date-time`; others are annotations).
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

/// Why an answer does not match its form: which field, and what is wrong with it.
///
/// ```
/// use mrtr_runtime::form::RequestedForm;
/// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
///     "env": {"type": "string"}}, "required": ["env"]})).unwrap();
/// let error = form.check(&serde_json::json!({})).unwrap_err();
/// assert_eq!((error.field(), error.problem()), (Some("env"), "is required"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", match field { Some(field) => format!("`{field}` {problem}"), None => problem.clone() })]
pub struct InvalidAnswer {
    pub(super) field: Option<String>,
    pub(super) problem: String,
}

impl InvalidAnswer {
    pub(super) fn of(field: &str, problem: impl Into<String>) -> Self {
        Self {
            field: Some(field.to_owned()),
            problem: problem.into(),
        }
    }

    /// The field at fault, or `None` when the answer as a whole is wrong (not an object).
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {}})).unwrap();
    /// assert_eq!(form.check(&serde_json::json!("yes")).unwrap_err().field(), None);
    /// ```
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref()
    }

    /// What is wrong, phrased to follow the field's name (`"must be at least 2 characters"`).
    ///
    /// ```
    /// # use mrtr_runtime::form::RequestedForm;
    /// let form = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
    ///     "name": {"type": "string", "minLength": 2}}})).unwrap();
    /// let error = form.check(&serde_json::json!({"name": "a"})).unwrap_err();
    /// assert_eq!(error.problem(), "must be at least 2 characters");
    /// ```
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// A `requestedSchema` outside the restricted elicitation schema (a nested object, an array
/// that does not list its values, an unknown type).
///
/// ```
/// use mrtr_runtime::form::RequestedForm;
/// let error = RequestedForm::parse(&serde_json::json!({"type": "object", "properties": {
///     "nested": {"type": "object"}}})).unwrap_err();
/// assert!(error.to_string().contains("nested"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnsupportedSchema(pub(super) String);
