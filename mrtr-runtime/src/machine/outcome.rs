//! Typed outcomes of input requests, decoded from the client's `inputResponses`.
//!
//! Every outcome is plain serializable data (postcard-safe: no `serde_json::Value` inside),
//! so a tool may keep it in a local across later suspensions.

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

use std::borrow::Cow;

use rmcp::model::{
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest,
    ListRootsResult, Role,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::answer_error::{AnswerError, AnswerProblem, StoredQuestion};
use crate::form::{RequestedForm, UnsupportedSchema};

/// Decodes one answer. Implemented by [`Elicited`], [`Sampled`] and [`Roots`].
///
/// ```
/// use mrtr_runtime::machine::{input, Outcome, Roots};
/// let request = input::roots().into_request();
/// let roots = Roots::from_response("r", &request, serde_json::json!({"roots": [{"uri": "file:///w"}]})).unwrap();
/// assert_eq!(roots[0].uri, "file:///w");
/// ```
pub trait Outcome: Sized {
    /// Decodes the client's answer to `request` (asked under `key`).
    fn from_response(
        key: &str,
        request: &InputRequest,
        response: Value,
    ) -> Result<Self, AnswerError>;

    /// Decodes the answer to a question restored from `requestState`, where the server
    /// keeps the builder's arguments instead of the request. The default rebuilds the
    /// request and calls [`from_response`](Self::from_response); [`Elicited`] checks a
    /// one-field question's answer against its field without building the request.
    #[doc(hidden)]
    fn from_stored(
        key: &str,
        question: StoredQuestion<'_>,
        response: Value,
    ) -> Result<Self, AnswerError> {
        from_rebuilt(key, question, response)
    }
}

/// [`Outcome::from_stored`]'s default: the rebuilt request, then `from_response`.
fn from_rebuilt<O: Outcome>(
    key: &str,
    question: StoredQuestion<'_>,
    response: Value,
) -> Result<O, AnswerError> {
    let request = question
        .request()
        .map_err(|e| malformed(key, format!("the question does not rebuild: {e}")))?;
    O::from_response(key, &request, response)
}

/// The user's answer to an elicitation: accepted with content, declined, or cancelled.
///
/// A decline or cancel is a real answer, never mistaken for a missing one.
///
/// ```
/// use mrtr_runtime::machine::{Elicited, NotAccepted};
/// let answer: Elicited<String> = Elicited::Accept("prod".into());
/// assert_eq!(answer.accepted().unwrap(), "prod");
/// assert_eq!(Elicited::<String>::Decline.accepted(), Err(NotAccepted::Declined));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Elicited<T> {
    /// The user submitted the form (or, in URL mode, consented to open the URL).
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

/// Returned by [`Elicited::accepted`] when the user declined or cancelled.
///
/// ```
/// use mrtr_runtime::machine::{Elicited, NotAccepted};
/// assert_eq!(Elicited::<u8>::Cancel.accepted(), Err(NotAccepted::Cancelled));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotAccepted {
    /// The user declined.
    #[error("the user declined")]
    Declined,
    /// The user cancelled.
    #[error("the user cancelled")]
    Cancelled,
}

impl<T> Elicited<T> {
    /// The accepted content, or why there is none.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::Elicited::Accept(3).accepted(), Ok(3));
    /// ```
    pub fn accepted(self) -> Result<T, NotAccepted> {
        match self {
            Elicited::Accept(value) => Ok(value),
            Elicited::Decline => Err(NotAccepted::Declined),
            Elicited::Cancel => Err(NotAccepted::Cancelled),
        }
    }

    /// The accepted content, if any.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::Elicited::<u8>::Decline.ok(), None);
    /// ```
    pub fn ok(self) -> Option<T> {
        match self {
            Elicited::Accept(value) => Some(value),
            _ => None,
        }
    }

    /// Whether the user accepted.
    ///
    /// ```
    /// assert!(mrtr_runtime::machine::Elicited::Accept(()).is_accepted());
    /// ```
    pub fn is_accepted(&self) -> bool {
        matches!(self, Elicited::Accept(_))
    }
}

fn malformed(key: &str, reason: impl Into<String>) -> AnswerError {
    AnswerError::new(key, AnswerProblem::Malformed(reason.into()))
}

/// Decodes accepted form content into `T`: the whole object first, then — for
/// single-field questions such as [`choice`](super::input::choice) — the one field's value.
fn decode_content<T: DeserializeOwned>(key: &str, content: Value) -> Result<T, AnswerError> {
    let one_field = |content: &Value| matches!(content, Value::Object(map) if map.len() == 1);
    // A `T` that refuses objects would fail on the whole content: skip that attempt (and
    // the error message it formats) when there is one field to decode instead.
    let whole_error = if one_field(&content) && super::shape::refuses_objects::<T>() {
        None
    } else {
        match T::deserialize(&content) {
            Ok(value) => return Ok(value),
            Err(error) => Some(error),
        }
    };
    match content {
        Value::Object(map) if map.len() == 1 => {
            let field = map
                .into_iter()
                .next()
                .map_or(Value::Null, |(_, field)| field);
            serde_json::from_value(field)
                .map_err(|e| malformed(key, format!("content does not decode: {e}")))
        }
        _ => Err(malformed(
            key,
            format!(
                "content does not decode: {}",
                whole_error.map_or_else(String::new, |e| e.to_string())
            ),
        )),
    }
}

impl<T: DeserializeOwned> Outcome for Elicited<T> {
    fn from_response(
        key: &str,
        request: &InputRequest,
        response: Value,
    ) -> Result<Self, AnswerError> {
        let InputRequest::Elicitation(elicit) = request else {
            return Err(malformed(
                key,
                "an elicitation outcome was expected for a non-elicitation request",
            ));
        };
        match &elicit.params {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => answer_to_form(key, response, || {
                RequestedForm::from_schema(requested_schema).map(Cow::Owned)
            }),
            _ => match elicit_result(key, response)? {
                (ElicitationAction::Decline, _) => Ok(Elicited::Decline),
                (ElicitationAction::Cancel, _) => Ok(Elicited::Cancel),
                _ => serde_json::from_value(Value::Null)
                    .map(Elicited::Accept)
                    .map_err(|e| {
                        malformed(key, format!("URL-mode accept carries no content: {e}"))
                    }),
            },
        }
    }

    fn from_stored(
        key: &str,
        question: StoredQuestion<'_>,
        response: Value,
    ) -> Result<Self, AnswerError> {
        // The form `from_schema` would read from the rebuilt request, without the request.
        match question.form() {
            Some(form) => answer_to_form(key, response, || Ok(form)),
            None => from_rebuilt(key, question, response),
        }
    }
}

/// The client's `ElicitResult`: its action and content.
fn elicit_result(
    key: &str,
    response: Value,
) -> Result<(ElicitationAction, Option<Value>), AnswerError> {
    let result: ElicitResult = serde_json::from_value(response)
        .map_err(|e| malformed(key, format!("not an ElicitResult: {e}")))?;
    Ok((result.action, result.content))
}

/// An answer to a form: declined, cancelled, or content that `form` (read only then)
/// accepts and that decodes as `T`.
fn answer_to_form<T: DeserializeOwned>(
    key: &str,
    response: Value,
    form: impl FnOnce() -> Result<Cow<'static, RequestedForm>, UnsupportedSchema>,
) -> Result<Elicited<T>, AnswerError> {
    match elicit_result(key, response)? {
        (ElicitationAction::Decline, _) => Ok(Elicited::Decline),
        (ElicitationAction::Cancel, _) => Ok(Elicited::Cancel),
        (_, content) => {
            let content =
                content.ok_or_else(|| malformed(key, "accepted form answer has no content"))?;
            form()
                .map_err(|e| malformed(key, format!("unsupported requestedSchema: {e}")))?
                .check(&content)
                .map_err(|e| malformed(key, e.to_string()))?;
            decode_content(key, content).map(Elicited::Accept)
        }
    }
}

/// The client's sampled message (a `CreateMessageResult`), kept as JSON text so it
/// survives postcard inside the sealed state.
///
/// ```
/// use mrtr_runtime::machine::{input, Outcome, Sampled};
/// let request = input::prompt("Capital of France?").into_request();
/// let answer = serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
/// let sampled = Sampled::from_response("q", &request, answer).unwrap();
/// assert_eq!(sampled.text(), "Paris");
/// assert_eq!(sampled.model(), "m");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampled {
    text: String,
    model: String,
    stop_reason: Option<String>,
    json: String,
}

impl Sampled {
    /// All text blocks of the message, joined.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{input, Outcome, Sampled};
    /// # let s = Sampled::from_response("q", &input::prompt("x").into_request(), serde_json::json!({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"})).unwrap();
    /// assert_eq!(s.text(), "hi");
    /// ```
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The model the client used.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{input, Outcome, Sampled};
    /// # let s = Sampled::from_response("q", &input::prompt("x").into_request(), serde_json::json!({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"})).unwrap();
    /// assert_eq!(s.model(), "m");
    /// ```
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Why generation stopped, when the client said.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{input, Outcome, Sampled};
    /// # let s = Sampled::from_response("q", &input::prompt("x").into_request(), serde_json::json!({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"})).unwrap();
    /// assert_eq!(s.stop_reason(), Some("endTurn"));
    /// ```
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// The full protocol result (tool-use blocks, images, ...).
    ///
    /// ```
    /// # use mrtr_runtime::machine::{input, Outcome, Sampled};
    /// # let s = Sampled::from_response("q", &input::prompt("x").into_request(), serde_json::json!({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"})).unwrap();
    /// let full = s.result();
    /// assert_eq!(full.model, "m");
    /// ```
    pub fn result(&self) -> CreateMessageResult {
        serde_json::from_str(&self.json).expect("Sampled holds a CreateMessageResult it validated")
    }
}

impl Outcome for Sampled {
    fn from_response(
        key: &str,
        request: &InputRequest,
        response: Value,
    ) -> Result<Self, AnswerError> {
        if !matches!(request, InputRequest::CreateMessage(_)) {
            return Err(malformed(
                key,
                "a sampling outcome was expected for a non-sampling request",
            ));
        }
        let result: CreateMessageResult = serde_json::from_value(response)
            .map_err(|e| malformed(key, format!("not a CreateMessageResult: {e}")))?;
        if result.message.role != Role::Assistant {
            return Err(malformed(
                key,
                "a sampled message must have role \"assistant\"",
            ));
        }
        let text = result
            .message
            .content
            .clone()
            .into_vec()
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("");
        let json = serde_json::to_string(&result).map_err(|e| malformed(key, e.to_string()))?;
        Ok(Sampled {
            text,
            model: result.model.clone(),
            stop_reason: result.stop_reason.clone(),
            json,
        })
    }
}

/// One workspace root the client exposed.
///
/// ```
/// use mrtr_runtime::machine::{input, Outcome, Roots, WorkspaceRoot};
/// let answer = serde_json::json!({"roots": [{"uri": "file:///src", "name": "src"}]});
/// let roots = Roots::from_response("r", &input::roots().into_request(), answer).unwrap();
/// assert_eq!(roots[0], WorkspaceRoot { uri: "file:///src".into(), name: Some("src".into()) });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceRoot {
    /// The root's URI (`file://...`).
    pub uri: String,
    /// A human-readable name, if the client gave one.
    pub name: Option<String>,
}

/// The client's answer to `roots/list`.
///
/// ```
/// use mrtr_runtime::machine::{input, Outcome, Roots};
/// let answer = serde_json::json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]});
/// let roots = Roots::from_response("r", &input::roots().into_request(), answer).unwrap();
/// let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
/// assert_eq!(uris, ["file:///a", "file:///b"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Roots(pub Vec<WorkspaceRoot>);

impl std::ops::Deref for Roots {
    type Target = Vec<WorkspaceRoot>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl IntoIterator for Roots {
    type Item = WorkspaceRoot;
    type IntoIter = std::vec::IntoIter<WorkspaceRoot>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl Outcome for Roots {
    fn from_response(
        key: &str,
        request: &InputRequest,
        response: Value,
    ) -> Result<Self, AnswerError> {
        if !matches!(request, InputRequest::ListRoots(_)) {
            return Err(malformed(
                key,
                "a roots outcome was expected for a non-roots request",
            ));
        }
        let result: ListRootsResult = serde_json::from_value(response)
            .map_err(|e| malformed(key, format!("not a ListRootsResult: {e}")))?;
        Ok(Roots(
            result
                .roots
                .into_iter()
                .map(|root| WorkspaceRoot {
                    uri: root.uri,
                    name: root.name,
                })
                .collect(),
        ))
    }
}
