//! Typed answers a test sends ([`Answer`]) and the questions it reads ([`Question`]).

use rmcp::model::InputRequest;
use serde_json::Value;

use crate::machine::InputKind;

/// A typed answer to one input request, as a conforming client would send it in
/// `inputResponses` (see [`Flow::answer`](super::Flow::answer)).
///
/// ```
/// use mrtr_runtime::testing::Answer;
/// use serde_json::json;
/// assert_eq!(Answer::choice("prod").to_json(), json!({"action": "accept", "content": {"choice": "prod"}}));
/// assert_eq!(Answer::decline().to_json(), json!({"action": "decline"}));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Answer(pub(super) Value);

impl Answer {
    /// Accepts an `input::choice(..)` with `option`.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::choice("a").to_json()["content"]["choice"], "a");
    /// ```
    pub fn choice(option: impl Into<String>) -> Self {
        Self::accept(serde_json::json!({"choice": option.into()}))
    }

    /// Accepts an `input::multi_choice(..)` with `options`.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::choices(["a", "b"]).to_json()["content"]["choices"], serde_json::json!(["a", "b"]));
    /// ```
    pub fn choices<S: Into<String>>(options: impl IntoIterator<Item = S>) -> Self {
        let options: Vec<String> = options.into_iter().map(Into::into).collect();
        Self::accept(serde_json::json!({ "choices": options }))
    }

    /// Accepts an `input::text(..)` with `text`.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::text("1.4.2").to_json()["content"]["text"], "1.4.2");
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        Self::accept(serde_json::json!({"text": text.into()}))
    }

    /// Accepts an `input::confirm(..)` with `yes`.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::confirm(true).to_json()["content"]["confirm"], true);
    /// ```
    pub fn confirm(yes: bool) -> Self {
        Self::accept(serde_json::json!({ "confirm": yes }))
    }

    /// Accepts an `input::form::<T>(..)` with `value`'s fields (serialized as the form's
    /// properties). A value serde cannot serialize is sent as `null` content, which the
    /// server answers by asking again.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// #[derive(serde::Serialize)]
    /// struct Confirm { apply: bool }
    /// assert_eq!(Answer::form(&Confirm { apply: true }).to_json()["content"]["apply"], true);
    /// ```
    pub fn form<T: serde::Serialize>(value: &T) -> Self {
        Self::accept(serde_json::to_value(value).unwrap_or(Value::Null))
    }

    /// Accepts with raw form `content` (also a URL elicitation's consent: `accept_url()`).
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::accept(serde_json::json!({"n": 1})).to_json()["action"], "accept");
    /// ```
    pub fn accept(content: Value) -> Self {
        Answer(serde_json::json!({"action": "accept", "content": content}))
    }

    /// Accepts a URL elicitation (the user agreed to open the page).
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::accept_url().to_json(), serde_json::json!({"action": "accept"}));
    /// ```
    pub fn accept_url() -> Self {
        Answer(serde_json::json!({"action": "accept"}))
    }

    /// Declines the elicitation.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::decline().to_json()["action"], "decline");
    /// ```
    pub fn decline() -> Self {
        Answer(serde_json::json!({"action": "decline"}))
    }

    /// Cancels the elicitation.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::cancel().to_json()["action"], "cancel");
    /// ```
    pub fn cancel() -> Self {
        Answer(serde_json::json!({"action": "cancel"}))
    }

    /// Answers a `sample!` with the model's `text`.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::sampled("Done.").to_json()["content"]["text"], "Done.");
    /// ```
    pub fn sampled(text: impl Into<String>) -> Self {
        Answer(serde_json::json!({
            "role": "assistant",
            "content": {"type": "text", "text": text.into()},
            "model": "mrtr-testing"
        }))
    }

    /// Answers a `roots!()` with these root URIs.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::roots(["file:///repo"]).to_json()["roots"][0]["uri"], "file:///repo");
    /// ```
    pub fn roots<S: Into<String>>(uris: impl IntoIterator<Item = S>) -> Self {
        let roots: Vec<Value> = uris
            .into_iter()
            .map(|uri| serde_json::json!({"uri": uri.into()}))
            .collect();
        Answer(serde_json::json!({ "roots": roots }))
    }

    /// Any JSON, sent as is (to test malformed answers).
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert_eq!(Answer::raw(serde_json::json!(7)).to_json(), 7);
    /// ```
    pub fn raw(value: Value) -> Self {
        Answer(value)
    }

    /// The JSON sent in `inputResponses`.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Answer;
    /// assert!(Answer::cancel().to_json().is_object());
    /// ```
    pub fn to_json(&self) -> Value {
        self.0.clone()
    }
}

/// One input request of a round, as a reviewer reads it.
///
/// ```
/// use mrtr_runtime::machine::{InputKind, input};
/// use mrtr_runtime::testing::Question;
/// let question = Question::new("env", input::text("Which environment?").request());
/// assert_eq!((question.key.as_str(), question.kind, question.message.as_str()),
///            ("env", InputKind::FormElicitation, "Which environment?"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Question {
    /// The `inputRequests` key.
    pub key: String,
    /// What kind of input it is.
    pub kind: InputKind,
    /// The elicitation's message, the first sampling message's text, or empty for roots.
    pub message: String,
}

impl Question {
    /// Reads `request` asked under `key`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::input;
    /// # use mrtr_runtime::testing::Question;
    /// assert_eq!(Question::new("r", input::roots().request()).message, "");
    /// ```
    pub fn new(key: impl Into<String>, request: &InputRequest) -> Self {
        let json = serde_json::to_value(request).unwrap_or(Value::Null);
        let params = &json["params"];
        let message = params["message"]
            .as_str()
            .or_else(|| params["messages"][0]["content"]["text"].as_str())
            .unwrap_or_default()
            .to_string();
        Question {
            key: key.into(),
            kind: InputKind::of(request),
            message,
        }
    }
}
