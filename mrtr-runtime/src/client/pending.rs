use rmcp::model::{
    CallToolResult, GetPromptResult, InputRequests, JsonObject, MetaObject, ReadResourceResult,
};
use serde::{Deserialize, Serialize};

/// What is being called: the method plus the params that stay the same in every round.
///
/// ```
/// use mrtr_runtime::client::CallTarget;
///
/// let target = CallTarget::tool("deploy", serde_json::json!({"env": "staging"}).as_object().cloned());
/// let wire = serde_json::to_value(&target).unwrap();
/// assert_eq!(wire["method"], "tools/call");
/// assert_eq!(wire["name"], "deploy");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method")]
pub enum CallTarget {
    /// `tools/call`.
    #[serde(rename = "tools/call")]
    Tool {
        /// Tool name.
        name: String,
        /// Tool arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<JsonObject>,
    },
    /// `prompts/get`.
    #[serde(rename = "prompts/get")]
    Prompt {
        /// Prompt name.
        name: String,
        /// Prompt arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<JsonObject>,
    },
    /// `resources/read`.
    #[serde(rename = "resources/read")]
    Resource {
        /// Resource URI.
        uri: String,
    },
}

impl CallTarget {
    /// A `tools/call` target.
    pub fn tool(name: impl Into<String>, arguments: Option<JsonObject>) -> Self {
        CallTarget::Tool {
            name: name.into(),
            arguments,
        }
    }

    /// A `prompts/get` target.
    pub fn prompt(name: impl Into<String>, arguments: Option<JsonObject>) -> Self {
        CallTarget::Prompt {
            name: name.into(),
            arguments,
        }
    }

    /// A `resources/read` target.
    pub fn resource(uri: impl Into<String>) -> Self {
        CallTarget::Resource { uri: uri.into() }
    }

    /// The JSON-RPC method name.
    pub fn method(&self) -> &'static str {
        match self {
            CallTarget::Tool { .. } => "tools/call",
            CallTarget::Prompt { .. } => "prompts/get",
            CallTarget::Resource { .. } => "resources/read",
        }
    }

    /// The tool or prompt name, or the resource URI.
    pub fn name(&self) -> &str {
        match self {
            CallTarget::Tool { name, .. } | CallTarget::Prompt { name, .. } => name,
            CallTarget::Resource { uri } => uri,
        }
    }
}

/// A call waiting for answers: everything needed to continue it, in any process.
///
/// It serializes to plain JSON, so a host can store it, answer its
/// [`input_requests`](Self::input_requests) later and continue with
/// [`MrtrClient::resume`](super::MrtrClient::resume). `request_state` is kept exactly as
/// the server sent it.
///
/// ```
/// use mrtr_runtime::client::{CallTarget, PendingCall};
///
/// let pending = PendingCall::new(CallTarget::resource("file:///report"));
/// let stored = serde_json::to_string(&pending).unwrap();
/// let restored: PendingCall = serde_json::from_str(&stored).unwrap();
/// assert_eq!(restored, pending);
/// assert_eq!(restored.round, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    /// The method and its unchanging params.
    #[serde(flatten)]
    pub target: CallTarget,
    /// How many requests were already sent for this call (0 before the first one).
    pub round: u32,
    /// What the server asked for in its last answer, keyed as the server keyed it.
    #[serde(default, skip_serializing_if = "InputRequests::is_empty")]
    pub input_requests: InputRequests,
    /// The server's opaque state, to echo byte-exact; `None` when the server sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The `_meta` of the server's last answer (e.g. which instance served the round);
    /// never sent back.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl PendingCall {
    /// A call that has not been sent yet.
    pub fn new(target: CallTarget) -> Self {
        Self {
            target,
            round: 0,
            input_requests: InputRequests::new(),
            request_state: None,
            meta: None,
        }
    }

    /// Size in bytes of the `requestState` to echo (0 when absent).
    pub fn request_state_len(&self) -> usize {
        self.request_state.as_ref().map_or(0, String::len)
    }
}

/// The final result of a call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CallOutput {
    /// A `tools/call` result.
    Tool(CallToolResult),
    /// A `prompts/get` result.
    Prompt(GetPromptResult),
    /// A `resources/read` result.
    Resource(ReadResourceResult),
}

/// What one round of a call came to, in manual mode (`start`, `resume`): the result, or the
/// server's questions. (A machine's own step on the server is [`crate::machine::Step`].)
///
/// ```
/// use mrtr_runtime::client::{CallOutput, RoundOutcome};
/// let done = RoundOutcome::Complete(CallOutput::Tool(rmcp::model::CallToolResult::success(vec![])));
/// assert!(matches!(done, RoundOutcome::Complete(CallOutput::Tool(_))));
/// ```
#[derive(Debug, Clone)]
pub enum RoundOutcome {
    /// The call is done.
    Complete(CallOutput),
    /// The server asks for input; answer it and resume.
    InputRequired(PendingCall),
}
