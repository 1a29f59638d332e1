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
//! | `uri` | an absolute URI: a scheme, no whitespace, and accepted by the `url` crate |
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
    fields: Vec<Field>,
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
    field: Option<String>,
    problem: String,
}

impl InvalidAnswer {
    fn of(field: &str, problem: impl Into<String>) -> Self {
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
pub struct UnsupportedSchema(String);

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
                    kind: field_kind(name, property)?,
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

    fn problem_with(&self, value: &Value) -> Result<(), String> {
        match &self.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
            } => {
                let text = value.as_str().ok_or("must be a string")?;
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
                    Some(format) => check_format(format, text),
                    None => Ok(()),
                }
            }
            FieldKind::Integer { minimum, maximum } => {
                let number = value.as_f64().ok_or("must be a whole number")?;
                if number.fract() != 0.0 {
                    return Err("must be a whole number".into());
                }
                bounds(number, minimum, maximum)
            }
            FieldKind::Number { minimum, maximum } => {
                bounds(value.as_f64().ok_or("must be a number")?, minimum, maximum)
            }
            FieldKind::Boolean => value
                .as_bool()
                .map(|_| ())
                .ok_or_else(|| "must be true or false".into()),
            FieldKind::Choice { options } => {
                if options.iter().any(|(allowed, _)| allowed == value) {
                    Ok(())
                } else {
                    Err(format!("must be one of: {}", titles(options)))
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
                    return Err(format!(
                        "holds {bad}, which is not one of: {}",
                        titles(options)
                    ));
                }
                let count = items.len() as u64;
                if let Some(min) = min_items
                    && count < *min
                {
                    return Err(format!("must have at least {min} item(s)"));
                }
                if let Some(max) = max_items
                    && count > *max
                {
                    return Err(format!("must have at most {max} item(s)"));
                }
                Ok(())
            }
        }
    }
}

fn bounds(number: f64, minimum: &Option<f64>, maximum: &Option<f64>) -> Result<(), String> {
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
}

fn titles(options: &[(Value, String)]) -> String {
    options
        .iter()
        .map(|(_, title)| title.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

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

fn field_kind(name: &str, property: &Value) -> Result<FieldKind, UnsupportedSchema> {
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

fn check_format(format: &str, text: &str) -> Result<(), String> {
    let (valid, expected) = match format {
        "email" => (is_email(text), "an email address (local@domain)"),
        "uri" => (is_absolute_uri(text), "an absolute URI (scheme:...)"),
        "date" => (is_full_date(text), "a calendar date (YYYY-MM-DD)"),
        "date-time" => (
            is_date_time(text),
            "a date-time (YYYY-MM-DDThh:mm:ss with Z or an offset)",
        ),
        _ => (true, ""),
    };
    if valid {
        Ok(())
    } else {
        Err(format!("must be {expected}"))
    }
}

/// RFC 5321 `Mailbox` (section 4.1.2), ASCII: `Local-part "@" ( Domain / address-literal )`.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    is_local_part(local) && (is_domain(domain) || is_address_literal(domain))
}

fn is_local_part(local: &str) -> bool {
    if local.is_empty() || local.len() > 64 {
        return false;
    }
    if let Some(quoted) = local
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        // Quoted-string: printable ASCII, with `\` escaping one printable character.
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if !chars.next().is_some_and(|e| (' '..='~').contains(&e)) {
                        return false;
                    }
                }
                '"' => return false,
                ' '..='~' => {}
                _ => return false,
            }
        }
        return true;
    }
    // Dot-string: atext runs separated by single dots.
    let atext = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    local
        .split('.')
        .all(|atom| !atom.is_empty() && atom.chars().all(atext))
}

fn is_domain(domain: &str) -> bool {
    !domain.is_empty()
        && domain.len() <= 253
        && domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn is_address_literal(domain: &str) -> bool {
    let Some(inner) = domain
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    else {
        return false;
    };
    match inner.strip_prefix("IPv6:") {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => inner.parse::<std::net::Ipv4Addr>().is_ok(),
    }
}

fn is_absolute_uri(text: &str) -> bool {
    // The url crate follows WHATWG and would percent-encode spaces; RFC 3986 has none.
    !text.chars().any(|c| c.is_whitespace() || c.is_control()) && url::Url::parse(text).is_ok()
}

/// RFC 3339 `full-date`: exactly four, two and two digits, and a real calendar day.
fn is_full_date(text: &str) -> bool {
    // Byte by byte: slicing the text could cut a multi-byte character (a panic).
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, byte)| match i {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        })
        && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

/// RFC 3339 `date-time`: a `full-date`, `T` (or `t`), and a time with an offset.
fn is_date_time(text: &str) -> bool {
    // chrono also takes a space between date and time; RFC 3339's grammar does not.
    text.get(..10).is_some_and(is_full_date)
        && matches!(text.get(10..11), Some("T" | "t"))
        && chrono::DateTime::parse_from_rfc3339(text).is_ok()
}

/// [`RequestedForm::from_schema`] over rmcp's typed schema, field for field what
/// [`RequestedForm::parse`] reads from its JSON.
mod typed {
    use rmcp::model::{
        ElicitationSchema, EnumSchema, MultiSelectEnumSchema, PrimitiveSchemaDefinition,
        SingleSelectEnumSchema, StringFormat,
    };
    use serde_json::Value;

    use super::{Field, FieldKind, RequestedForm};

    /// `None` when a property has a shape added to rmcp after this was written.
    pub(super) fn form(schema: &ElicitationSchema) -> Option<RequestedForm> {
        let required = schema.required.as_deref().unwrap_or_default();
        // The wire order, as rmcp writes it: `property_order` first (each property once),
        // then the properties it does not name.
        let mut names: Vec<&String> = Vec::with_capacity(schema.properties.len());
        for name in schema.property_order.iter().flatten() {
            if schema.properties.contains_key(name) && !names.contains(&name) {
                names.push(name);
            }
        }
        let listed = names.len();
        for name in schema.properties.keys() {
            if !names[..listed].contains(&name) {
                names.push(name);
            }
        }
        let fields = names
            .into_iter()
            .map(|name| {
                let is_required = required.iter().any(|r| r == name);
                field(name, &schema.properties[name], is_required)
            })
            .collect::<Option<_>>()?;
        Some(RequestedForm { fields })
    }

    /// The form `{"properties": {name: property}, "required": [name]}`, without building
    /// that schema.
    pub(super) fn single_field_form(
        name: &str,
        property: &PrimitiveSchemaDefinition,
    ) -> Option<RequestedForm> {
        Some(RequestedForm {
            fields: vec![field(name, property, true)?],
        })
    }

    fn field(name: &str, property: &PrimitiveSchemaDefinition, required: bool) -> Option<Field> {
        let (title, description, default, kind) = match property {
            PrimitiveSchemaDefinition::String(s) => (
                &s.title,
                &s.description,
                s.default.clone().map(Value::String),
                FieldKind::Text {
                    min_length: s.min_length.map(u64::from),
                    max_length: s.max_length.map(u64::from),
                    format: match s.format {
                        Some(format) => Some(format_name(format)?.to_owned()),
                        None => None,
                    },
                },
            ),
            PrimitiveSchemaDefinition::Integer(s) => (
                &s.title,
                &s.description,
                s.default.map(Value::from),
                FieldKind::Integer {
                    minimum: s.minimum.map(|n| n as f64),
                    maximum: s.maximum.map(|n| n as f64),
                },
            ),
            PrimitiveSchemaDefinition::Number(s) => (
                &s.title,
                &s.description,
                // A non-finite default is `null` in JSON, which `parse` reads as a value.
                s.default
                    .map(|n| serde_json::to_value(n).unwrap_or(Value::Null)),
                FieldKind::Number {
                    // Non-finite bounds are `null` in JSON: no bound.
                    minimum: s.minimum.filter(|n| n.is_finite()),
                    maximum: s.maximum.filter(|n| n.is_finite()),
                },
            ),
            PrimitiveSchemaDefinition::Boolean(s) => (
                &s.title,
                &s.description,
                s.default.map(Value::Bool),
                FieldKind::Boolean,
            ),
            PrimitiveSchemaDefinition::Enum(schema) => enum_field(schema)?,
            _ => return None,
        };
        Some(Field {
            name: name.to_owned(),
            label: title.as_deref().unwrap_or(name).to_owned(),
            description: description.as_deref().map(str::to_owned),
            required,
            default,
            kind,
        })
    }

    type Parts<'a> = (
        &'a Option<std::borrow::Cow<'static, str>>,
        &'a Option<std::borrow::Cow<'static, str>>,
        Option<Value>,
        FieldKind,
    );

    fn enum_field(schema: &EnumSchema) -> Option<Parts<'_>> {
        let untitled = |values: &[String]| {
            values
                .iter()
                .map(|v| (Value::String(v.clone()), v.clone()))
                .collect::<Vec<_>>()
        };
        let titled = |options: &[rmcp::model::ConstTitle]| {
            options
                .iter()
                .map(|o| (Value::String(o.const_.clone()), o.title.clone()))
                .collect::<Vec<_>>()
        };
        let strings = |values: &Option<Vec<String>>| {
            values.as_ref().map(|v| {
                Value::from(
                    v.iter()
                        .map(|s| Value::String(s.clone()))
                        .collect::<Vec<_>>(),
                )
            })
        };
        Some(match schema {
            EnumSchema::Single(SingleSelectEnumSchema::Untitled(s)) => (
                &s.title,
                &s.description,
                s.default.clone().map(Value::String),
                FieldKind::Choice {
                    options: untitled(&s.enum_),
                },
            ),
            EnumSchema::Single(SingleSelectEnumSchema::Titled(s)) => (
                &s.title,
                &s.description,
                s.default.clone().map(Value::String),
                FieldKind::Choice {
                    options: titled(&s.one_of),
                },
            ),
            EnumSchema::Multi(MultiSelectEnumSchema::Untitled(s)) => (
                &s.title,
                &s.description,
                strings(&s.default),
                FieldKind::MultiChoice {
                    options: untitled(&s.items.enum_),
                    min_items: s.min_items,
                    max_items: s.max_items,
                },
            ),
            EnumSchema::Multi(MultiSelectEnumSchema::Titled(s)) => (
                &s.title,
                &s.description,
                strings(&s.default),
                FieldKind::MultiChoice {
                    options: titled(&s.items.any_of),
                    min_items: s.min_items,
                    max_items: s.max_items,
                },
            ),
            EnumSchema::Legacy(s) => {
                let names = s.enum_names.as_deref().unwrap_or_default();
                let options = s
                    .enum_
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let title = names.get(i).unwrap_or(v).clone();
                        (Value::String(v.clone()), title)
                    })
                    .collect();
                (
                    &s.title,
                    &s.description,
                    s.default.clone().map(Value::String),
                    FieldKind::Choice { options },
                )
            }
            _ => return None,
        })
    }

    fn format_name(format: StringFormat) -> Option<&'static str> {
        Some(match format {
            StringFormat::Email => "email",
            StringFormat::Uri => "uri",
            StringFormat::Date => "date",
            StringFormat::DateTime => "date-time",
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(value: Value) -> RequestedForm {
        RequestedForm::parse(&value).unwrap()
    }

    #[test]
    fn accepts_matching_content_and_ignores_unknown_fields() {
        let f = form(
            json!({"type":"object","properties":{"name":{"type":"string","maxLength":5}},"required":["name"]}),
        );
        assert!(f.check(&json!({"name":"Alice","extra":1})).is_ok());
    }

    #[test]
    fn each_violation_names_its_own_field() {
        let f = form(json!({"type":"object","properties":{
            "name":{"type":"string","maxLength":3},
            "age":{"type":"integer","minimum":0},
            "env":{"type":"string","enum":["a","b"]},
            "tags":{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":1}
        },"required":["name"]}));
        for (content, field, problem) in [
            (json!({}), "name", "is required"),
            (json!({"name": 5}), "name", "must be a string"),
            (
                json!({"name": "long"}),
                "name",
                "must be at most 3 characters",
            ),
            (
                json!({"name": "ab", "age": -1}),
                "age",
                "must be at least 0",
            ),
            (
                json!({"name": "ab", "age": 1.5}),
                "age",
                "must be a whole number",
            ),
            (
                json!({"name": "ab", "env": "c"}),
                "env",
                "must be one of: a, b",
            ),
            (
                json!({"name": "ab", "tags": ["x", "y"]}),
                "tags",
                "must have at most 1 item(s)",
            ),
            (
                json!({"name": "ab", "tags": ["z"]}),
                "tags",
                "holds \"z\", which is not one of: x, y",
            ),
        ] {
            let error = f.check(&content).unwrap_err();
            assert_eq!(
                (error.field(), error.problem()),
                (Some(field), problem),
                "{content}"
            );
        }
        assert_eq!(
            f.check(&json!("ab")).unwrap_err().to_string(),
            "the answer must be an object"
        );
        assert!(
            f.check(&json!({"name": "ab", "age": 3, "env": "a", "tags": ["y"]}))
                .is_ok()
        );
    }

    #[test]
    fn integers_may_be_written_with_a_zero_fraction() {
        let f = form(json!({"type":"object","properties":{"n":{"type":"integer"}}}));
        assert!(f.check(&json!({"n": 2.0})).is_ok());
    }

    #[test]
    fn email_follows_rfc_5321_mailbox_syntax() {
        for good in [
            "a@b",
            "root@localhost",
            "a.b@example.org",
            "o'hara+tag@ex-ample.co.uk",
            "\"john doe\"@example.org",
            "x@[192.0.2.1]",
            "x@[IPv6:2001:db8::1]",
        ] {
            assert!(is_email(good), "{good}");
        }
        for bad in [
            "no-at-sign",
            "a b@example.org",
            "a@",
            "@b",
            "a@example..org",
            "a..b@example.org",
            ".a@example.org",
            "a@-example.org",
            "a@exa_mple.org",
            "a@[300.0.0.1]",
            "ünï@example.org",
        ] {
            assert!(!is_email(bad), "{bad}");
        }
        assert!(!is_email(&format!("{}@example.org", "a".repeat(65))));
    }

    #[test]
    fn dates_must_exist_and_date_times_need_t_and_an_offset() {
        for good in ["2026-02-28", "2024-02-29", "2026-12-31"] {
            assert!(is_full_date(good), "{good}");
        }
        for bad in [
            "2026-02-31",
            "2026-02-29",
            "2026-13-01",
            "2026-7-28",
            "02/12/2026",
            "+2026-01-01",
            "26-01-02",
            // Ten bytes whose 5th is inside a multi-byte character.
            "2026\u{fffd}-02",
            "20é6-02-28",
        ] {
            assert!(!is_full_date(bad), "{bad}");
        }
        for good in ["2026-12-02T12:38:28Z", "2026-12-02t12:38:28.5+01:00"] {
            assert!(is_date_time(good), "{good}");
        }
        for bad in [
            "2026-12-02 12:38:28Z",
            "2026-12-02T12:38:28",
            "2026-02-31T00:00:00Z",
            "tomorrow",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    #[test]
    fn uris_are_absolute_and_have_no_spaces() {
        assert!(is_absolute_uri("https://example.org/x?y=1"));
        assert!(is_absolute_uri("urn:isbn:0451450523"));
        for bad in ["not a uri", "/relative/path", "https://example.org/a b"] {
            assert!(!is_absolute_uri(bad), "{bad}");
        }
    }

    #[test]
    fn schemas_outside_the_restricted_shape_are_refused_when_parsed() {
        for property in [
            json!({"type": "object"}),
            json!({"type": "array", "items": {"type": "string"}}),
        ] {
            let schema = json!({"type": "object", "properties": {"p": property}});
            assert!(
                RequestedForm::parse(&schema)
                    .unwrap_err()
                    .to_string()
                    .contains("`p`")
            );
        }
    }

    mod typed_reading {
        use proptest::prelude::*;
        use rmcp::model::{ElicitationSchema, NumberSchema, PrimitiveSchemaDefinition};
        use serde_json::{Value, json};

        use super::super::{RequestedForm, typed};

        fn maybe<T: std::fmt::Debug + Clone + 'static>(
            value: impl Strategy<Value = T> + 'static,
        ) -> BoxedStrategy<Option<T>> {
            proptest::option::of(value).boxed()
        }

        fn labels() -> impl Strategy<Value = (Option<String>, Option<String>)> {
            (maybe("[a-z ]{0,6}"), maybe("[a-z ]{0,6}"))
        }

        fn values() -> impl Strategy<Value = Vec<String>> {
            proptest::collection::vec("[a-z]{1,4}", 1..4)
        }

        /// Every property shape of the 2026-07-28 restricted schema, with every keyword
        /// present or absent.
        fn property() -> impl Strategy<Value = Value> {
            let insert = |mut object: Value, entries: Vec<(&str, Option<Value>)>| {
                for (key, value) in entries {
                    if let Some(value) = value {
                        object[key] = value;
                    }
                }
                object
            };
            prop_oneof![
                (labels(), maybe(0u32..9), maybe(0u32..9), maybe(0usize..5), maybe("[a-z]{0,3}"))
                    .prop_map(move |((t, d), min, max, format, default)| insert(json!({"type": "string"}), vec![
                        ("title", t.map(Value::from)), ("description", d.map(Value::from)),
                        ("minLength", min.map(Value::from)), ("maxLength", max.map(Value::from)),
                        ("format", format.and_then(|i| ["email", "uri", "date", "date-time"].get(i)).map(|f| Value::from(*f))),
                        ("default", default.map(Value::from)),
                    ])),
                (labels(), any::<bool>(), maybe(-9i64..9), maybe(-9i64..9), maybe(any::<i64>()))
                    .prop_map(move |((t, d), integer, min, max, default)| insert(json!({"type": if integer { "integer" } else { "number" }}), vec![
                        ("title", t.map(Value::from)), ("description", d.map(Value::from)),
                        ("minimum", min.map(Value::from)), ("maximum", max.map(|m| if integer { Value::from(m) } else { Value::from(m as f64 + 0.5) })),
                        ("default", default.map(Value::from)),
                    ])),
                (labels(), maybe(any::<bool>())).prop_map(move |((t, d), default)| insert(json!({"type": "boolean"}), vec![
                    ("title", t.map(Value::from)), ("description", d.map(Value::from)), ("default", default.map(Value::from)),
                ])),
                (labels(), values(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(move |((t, d), values, titled, legacy, with_default)| {
                    let default = with_default.then(|| Value::from(values[0].clone()));
                    let shape = if legacy {
                        json!({"type": "string", "enum": values, "enumNames": values.iter().skip(1).map(|v| v.to_uppercase()).collect::<Vec<_>>()})
                    } else if titled {
                        json!({"type": "string", "oneOf": values.iter().map(|v| json!({"const": v, "title": v.to_uppercase()})).collect::<Vec<_>>()})
                    } else {
                        json!({"type": "string", "enum": values})
                    };
                    insert(shape, vec![("title", t.map(Value::from)), ("description", d.map(Value::from)), ("default", default)])
                }),
                (labels(), values(), any::<bool>(), maybe(0u64..4), maybe(0u64..4), any::<bool>()).prop_map(move |((t, d), values, titled, min, max, with_default)| {
                    let items = if titled {
                        json!({"anyOf": values.iter().map(|v| json!({"const": v, "title": v.to_uppercase()})).collect::<Vec<_>>()})
                    } else {
                        json!({"type": "string", "enum": values})
                    };
                    let default = with_default.then(|| Value::from(vec![values[0].clone()]));
                    insert(json!({"type": "array", "items": items}), vec![
                        ("title", t.map(Value::from)), ("description", d.map(Value::from)),
                        ("minItems", min.map(Value::from)), ("maxItems", max.map(Value::from)), ("default", default),
                    ])
                }),
            ]
        }

        fn schema() -> impl Strategy<Value = (ElicitationSchema, u8)> {
            (
                proptest::collection::vec(("[a-d]{1,2}", property()), 0..5),
                any::<bool>(),
                0u8..3,
            )
                .prop_map(|(properties, all_required, order)| {
                    let mut object = serde_json::Map::new();
                    for (name, property) in properties {
                        object.insert(name, property);
                    }
                    let required: Vec<&String> = object
                        .keys()
                        .filter(|k| all_required || k.len() == 1)
                        .collect();
                    let value =
                        json!({"type": "object", "properties": object, "required": required});
                    (
                        serde_json::from_value(value).expect("a restricted schema decodes"),
                        order,
                    )
                })
        }

        proptest! {
            /// The server's reading of a typed schema is the terminal client's reading of its
            /// JSON, whatever the property order is (wire order, none, or a partial list).
            #[test]
            fn typed_and_json_readings_agree((mut schema, order) in schema()) {
                match order {
                    0 => {}
                    1 => schema.property_order = None,
                    _ => if let Some(order) = &mut schema.property_order {
                        order.reverse();
                        order.pop();
                        order.push("zz".into());
                        order.extend(order.clone());
                    },
                }
                let typed = typed::form(&schema).expect("every shape is known");
                let json = RequestedForm::parse(&serde_json::to_value(&schema).unwrap()).unwrap();
                // The typed reading keeps the wire order (`property_order`, then the rest);
                // a JSON object read back keeps it only with serde_json's `preserve_order`.
                let names: Vec<&str> = typed.fields.iter().map(|f| f.name.as_str()).collect();
                let mut wire: Vec<&str> = Vec::new();
                for name in schema.property_order.iter().flatten().chain(schema.properties.keys()) {
                    if schema.properties.contains_key(name) && !wire.contains(&name.as_str()) {
                        wire.push(name);
                    }
                }
                prop_assert_eq!(names, wire);
                let by_name = |mut form: RequestedForm| { form.fields.sort_by(|a, b| a.name.cmp(&b.name)); form };
                prop_assert_eq!(by_name(typed), by_name(json));
            }
        }

        /// Values JSON cannot hold (only a typed schema built in code has them) read as JSON
        /// would carry them: no bound, and a `null` default.
        #[test]
        fn non_finite_numbers_read_as_their_json() {
            let mut number = NumberSchema::new();
            (number.minimum, number.maximum, number.default) =
                (Some(f64::NAN), Some(f64::INFINITY), Some(f64::NEG_INFINITY));
            let schema = ElicitationSchema::new(
                [("n".to_string(), PrimitiveSchemaDefinition::Number(number))].into(),
            );
            let json = RequestedForm::parse(&serde_json::to_value(&schema).unwrap()).unwrap();
            assert_eq!(typed::form(&schema).unwrap(), json);
            assert_eq!(RequestedForm::from_schema(&schema).unwrap(), json);
        }
    }
}
