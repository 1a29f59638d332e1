//! What an `#[mrtr::tool]`, `#[mrtr::prompt]` or `#[mrtr::resource]` function may return,
//! and the [`ToolError`] type tools use with `?`.

use std::fmt;

use rmcp::handler::server::wrapper::Json;
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, PromptMessage, ReadResourceResult,
    ResourceContents, Role,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::step_error::StepError;

/// A tool failure reported to the client as a result with `isError: true`.
///
/// Any `std::error::Error` converts into it, so `?` works on most results; build one from
/// a message with [`ToolError::new`].
///
/// ```
/// use mrtr_runtime::machine::{Elicited, ToolError};
/// fn pick(answer: Elicited<String>) -> Result<String, ToolError> {
///     let env = answer.accepted()?; // a decline or cancel becomes a tool error
///     if env.is_empty() {
///         return Err(ToolError::new("no environment given"));
///     }
///     Ok(env)
/// }
/// assert_eq!(pick(Elicited::Decline).unwrap_err().message(), "the user declined");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A tool error with `message` as its text.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::ToolError::new("boom").message(), "boom");
    /// ```
    pub fn new(message: impl fmt::Display) -> Self {
        ToolError {
            message: message.to_string(),
        }
    }

    /// The text sent to the client.
    ///
    /// ```
    /// let e: mrtr_runtime::machine::ToolError = "x".parse::<u8>().unwrap_err().into();
    /// assert!(e.message().contains("invalid digit"));
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

// Not `std::error::Error` on purpose: that keeps this blanket conversion coherent.
impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        ToolError::new(error)
    }
}

/// Converts a tool function's return value into the `tools/call` result.
///
/// Implemented for text (`String`, `&'static str`), content (`ContentBlock`, `Vec<ContentBlock>`),
/// `CallToolResult`, structured output (`rmcp::handler::server::wrapper::Json<T>`), `()`,
/// `Option<T>` (`None` is an error result), and `Result<T, E>` where an `Err` becomes a result with `isError: true` and the error's
/// text.
///
/// ```
/// use mrtr_runtime::machine::{IntoToolResult, ToolError};
/// let ok = "done".into_tool_result().unwrap();
/// assert_eq!(ok.is_error, Some(false));
/// let failed = Err::<String, _>(ToolError::new("no")).into_tool_result().unwrap();
/// assert_eq!(failed.is_error, Some(true));
/// ```
pub trait IntoToolResult {
    /// The result sent to the client.
    fn into_tool_result(self) -> Result<CallToolResult, StepError>;

    /// The `outputSchema` listed for a tool returning this type: `Some` for structured
    /// output (`Json<T>`, also inside `Option`/`Result`), `None` otherwise.
    ///
    /// ```
    /// use mrtr_runtime::machine::IntoToolResult;
    /// use rmcp::handler::server::wrapper::Json;
    /// #[derive(serde::Serialize, schemars::JsonSchema)] struct Report { passed: u32 }
    /// assert!(<Json<Report> as IntoToolResult>::output_schema().is_some());
    /// assert!(<Result<Json<Report>, String> as IntoToolResult>::output_schema().is_some());
    /// assert!(<String as IntoToolResult>::output_schema().is_none());
    /// ```
    fn output_schema() -> Option<std::sync::Arc<rmcp::model::JsonObject>> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(self)]))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        self.to_string().into_tool_result()
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        Ok(CallToolResult::success(Vec::new()))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: Serialize + schemars::JsonSchema + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| StepError::Internal(format!("structured output: {e}").into()))?;
        Ok(CallToolResult::structured(value))
    }

    fn output_schema() -> Option<std::sync::Arc<rmcp::model::JsonObject>> {
        Some(rmcp::handler::server::common::schema_for_output::<T>())
    }
}

/// `None` is a tool error ("no result").
impl<T: IntoToolResult> IntoToolResult for Option<T> {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        match self {
            Some(value) => value.into_tool_result(),
            None => Ok(CallToolResult::error(vec![ContentBlock::text("no result")])),
        }
    }

    fn output_schema() -> Option<std::sync::Arc<rmcp::model::JsonObject>> {
        T::output_schema()
    }
}

impl<T: IntoToolResult, E: fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, StepError> {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => Ok(CallToolResult::error(vec![ContentBlock::text(
                error.to_string(),
            )])),
        }
    }

    fn output_schema() -> Option<std::sync::Arc<rmcp::model::JsonObject>> {
        T::output_schema()
    }
}

/// Converts a prompt function's return value into the `prompts/get` result.
///
/// Implemented for `GetPromptResult`, `Vec<PromptMessage>`, `PromptMessage`, `String` (one
/// user message) and `Result<T, E>` (an `Err` is an internal error carrying its text).
///
/// ```
/// use mrtr_runtime::machine::IntoPromptResult;
/// let result = String::from("Write a haiku").into_prompt_result().unwrap();
/// assert_eq!(result.messages.len(), 1);
/// ```
pub trait IntoPromptResult {
    /// The result sent to the client.
    fn into_prompt_result(self) -> Result<GetPromptResult, StepError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, StepError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, StepError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, StepError> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, StepError> {
        PromptMessage::new_text(Role::User, self).into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: fmt::Display> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, StepError> {
        match self {
            Ok(value) => value.into_prompt_result(),
            Err(error) => Err(StepError::Internal(error.to_string().into())),
        }
    }
}

/// Converts a resource function's return value into the `resources/read` result.
///
/// `uri` is the resource's URI, used for text contents. Implemented for
/// `ReadResourceResult`, `Vec<ResourceContents>`, `ResourceContents`, `String` (plain text)
/// and `Result<T, E>` (an `Err` is an internal error carrying its text).
///
/// ```
/// use mrtr_runtime::machine::IntoResourceResult;
/// let result = String::from("hello").into_resource_result("test://greeting").unwrap();
/// assert_eq!(result.contents.len(), 1);
/// ```
pub trait IntoResourceResult {
    /// The result sent to the client.
    fn into_resource_result(self, uri: &str) -> Result<ReadResourceResult, StepError>;
}

impl IntoResourceResult for ReadResourceResult {
    fn into_resource_result(self, _uri: &str) -> Result<ReadResourceResult, StepError> {
        Ok(self)
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_result(self, _uri: &str) -> Result<ReadResourceResult, StepError> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource_result(self, _uri: &str) -> Result<ReadResourceResult, StepError> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

impl IntoResourceResult for String {
    fn into_resource_result(self, uri: &str) -> Result<ReadResourceResult, StepError> {
        ResourceContents::text(self, uri).into_resource_result(uri)
    }
}

impl<T: IntoResourceResult, E: fmt::Display> IntoResourceResult for Result<T, E> {
    fn into_resource_result(self, uri: &str) -> Result<ReadResourceResult, StepError> {
        match self {
            Ok(value) => value.into_resource_result(uri),
            Err(error) => Err(StepError::Internal(error.to_string().into())),
        }
    }
}

/// Keeps a value that postcard cannot carry (a `serde_json::Value`, an rmcp protocol type)
/// as JSON text, so it can live across a suspension.
///
/// ```
/// use mrtr_runtime::machine::JsonText;
/// let kept = JsonText::new(&serde_json::json!({"a": [1, 2]})).unwrap();
/// let bytes = postcard::to_allocvec(&kept).unwrap();
/// let back: JsonText<serde_json::Value> = postcard::from_bytes(&bytes).unwrap();
/// assert_eq!(back.get().unwrap()["a"][1], 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct JsonText<T> {
    json: String,
    #[serde(skip)]
    kind: std::marker::PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> JsonText<T> {
    /// Encodes `value` as JSON text.
    ///
    /// ```
    /// let kept = mrtr_runtime::machine::JsonText::new(&vec![1, 2]).unwrap();
    /// assert_eq!(kept.as_str(), "[1,2]");
    /// ```
    pub fn new(value: &T) -> Result<Self, serde_json::Error> {
        Ok(JsonText {
            json: serde_json::to_string(value)?,
            kind: std::marker::PhantomData,
        })
    }

    /// Decodes the value again.
    ///
    /// ```
    /// let kept = mrtr_runtime::machine::JsonText::new(&7u8).unwrap();
    /// assert_eq!(kept.get().unwrap(), 7);
    /// ```
    pub fn get(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.json)
    }
}

impl<T> JsonText<T> {
    /// The JSON text.
    ///
    /// ```
    /// let kept = mrtr_runtime::machine::JsonText::new(&"hi".to_string()).unwrap();
    /// assert_eq!(kept.as_str(), "\"hi\"");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.json
    }
}
