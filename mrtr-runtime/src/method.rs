//! The three MCP methods that may answer `input_required`: what a machine answers
//! ([`machine::Method`](crate::machine::Method)) and what a sealed state is bound to, one
//! type for both.

/// Which MCP method a machine answers; only these three may return `input_required`.
///
/// ```
/// assert_eq!(mrtr_runtime::machine::Method::CallTool.as_str(), "tools/call");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `tools/call`
    CallTool,
    /// `prompts/get`
    GetPrompt,
    /// `resources/read`
    ReadResource,
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Method {
    type Err = UnknownMethod;

    /// Parses a JSON-RPC method name; only the three that may return `input_required`.
    ///
    /// ```
    /// use mrtr_runtime::machine::Method;
    /// assert_eq!("prompts/get".parse::<Method>(), Ok(Method::GetPrompt));
    /// assert!("tools/list".parse::<Method>().is_err());
    /// ```
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "tools/call" => Ok(Method::CallTool),
            "prompts/get" => Ok(Method::GetPrompt),
            "resources/read" => Ok(Method::ReadResource),
            _ => Err(UnknownMethod),
        }
    }
}

impl Method {
    /// The JSON-RPC method name.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::Method::ReadResource.as_str(), "resources/read");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Method::CallTool => "tools/call",
            Method::GetPrompt => "prompts/get",
            Method::ReadResource => "resources/read",
        }
    }
}

/// The method name is not one that can answer `input_required`.
///
/// ```
/// use mrtr_runtime::machine::Method;
/// assert_eq!("tools/list".parse::<Method>(), Err(mrtr_runtime::token::UnknownMethod));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("method must be one of tools/call, prompts/get, resources/read")]
pub struct UnknownMethod;
