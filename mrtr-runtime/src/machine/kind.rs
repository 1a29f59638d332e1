//! Which kind of input a request asks for, and whether a client declared it.

use rmcp::model::{ClientCapabilities, ElicitRequestParams, InputRequest};
use serde::{Deserialize, Serialize};

/// The kind of an input request, as far as client capabilities are concerned.
///
/// Each kind maps to one capability the client must declare in the `_meta` of the
/// request being answered; [`InputKind::is_declared_by`] checks it.
///
/// ```
/// use mrtr_runtime::machine::InputKind;
/// use rmcp::model::ClientCapabilities;
///
/// let caps: ClientCapabilities = serde_json::from_value(serde_json::json!({"elicitation": {}})).unwrap();
/// assert!(InputKind::FormElicitation.is_declared_by(&caps));
/// assert!(!InputKind::UrlElicitation.is_declared_by(&caps));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum InputKind {
    /// `elicitation/create` in form mode.
    FormElicitation,
    /// `elicitation/create` in URL mode.
    UrlElicitation,
    /// `sampling/createMessage` without tools.
    Sampling,
    /// `sampling/createMessage` offering tools (needs `sampling.tools`).
    SamplingWithTools,
    /// `roots/list`.
    Roots,
}

impl InputKind {
    /// Every kind, in a stable order.
    pub const ALL: [InputKind; 5] = [
        InputKind::FormElicitation,
        InputKind::UrlElicitation,
        InputKind::Sampling,
        InputKind::SamplingWithTools,
        InputKind::Roots,
    ];

    /// Classifies a protocol input request.
    ///
    /// ```
    /// use mrtr_runtime::machine::{InputKind, input};
    /// assert_eq!(input::roots().kind(), InputKind::Roots);
    /// ```
    #[allow(deprecated)]
    pub fn of(request: &InputRequest) -> Self {
        match request {
            InputRequest::Elicitation(elicit) => match &elicit.params {
                ElicitRequestParams::UrlElicitationParams { .. } => InputKind::UrlElicitation,
                _ => InputKind::FormElicitation,
            },
            InputRequest::CreateMessage(create) => {
                if create.params.tools.is_some() || create.params.tool_choice.is_some() {
                    InputKind::SamplingWithTools
                } else {
                    InputKind::Sampling
                }
            }
            _ => InputKind::Roots,
        }
    }

    /// Whether `capabilities` (from one request's `_meta`) allow sending this kind.
    ///
    /// `"elicitation": {}` means form mode only; URL mode needs `elicitation.url`.
    ///
    /// ```
    /// use mrtr_runtime::machine::InputKind;
    /// let caps = serde_json::from_value(serde_json::json!({"sampling": {}})).unwrap();
    /// assert!(InputKind::Sampling.is_declared_by(&caps));
    /// assert!(!InputKind::SamplingWithTools.is_declared_by(&caps));
    /// ```
    pub fn is_declared_by(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            InputKind::FormElicitation => capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            InputKind::UrlElicitation => capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.url.is_some()),
            InputKind::Sampling => capabilities.sampling.is_some(),
            InputKind::SamplingWithTools => capabilities
                .sampling
                .as_ref()
                .is_some_and(|s| s.tools.is_some()),
            InputKind::Roots => capabilities.roots.is_some(),
        }
    }

    /// The smallest capability object that declares this kind, for the
    /// `requiredCapabilities` of a `-32021` error.
    ///
    /// ```
    /// use mrtr_runtime::machine::InputKind;
    /// let caps = InputKind::Roots.required_capability();
    /// assert_eq!(serde_json::to_value(caps).unwrap(), serde_json::json!({"roots": {}}));
    /// ```
    pub fn required_capability(self) -> ClientCapabilities {
        let value = match self {
            InputKind::FormElicitation => serde_json::json!({"elicitation": {}}),
            InputKind::UrlElicitation => serde_json::json!({"elicitation": {"url": {}}}),
            InputKind::Sampling => serde_json::json!({"sampling": {}}),
            InputKind::SamplingWithTools => serde_json::json!({"sampling": {"tools": {}}}),
            InputKind::Roots => serde_json::json!({"roots": {}}),
        };
        serde_json::from_value(value).unwrap_or_default()
    }

    /// A short name for logs and listings (`"elicitation.form"`, `"sampling"`, ...).
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::InputKind::Roots.as_str(), "roots");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::FormElicitation => "elicitation.form",
            InputKind::UrlElicitation => "elicitation.url",
            InputKind::Sampling => "sampling",
            InputKind::SamplingWithTools => "sampling.tools",
            InputKind::Roots => "roots",
        }
    }
}

/// In words, for messages: "form elicitation", "URL elicitation", "sampling", "sampling with
/// tools", "roots" ([`InputKind::as_str`] is the short name for logs).
///
/// ```
/// use mrtr_runtime::machine::InputKind;
/// assert_eq!(InputKind::UrlElicitation.to_string(), "URL elicitation");
/// ```
impl std::fmt::Display for InputKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InputKind::FormElicitation => "form elicitation",
            InputKind::UrlElicitation => "URL elicitation",
            InputKind::Sampling => "sampling",
            InputKind::SamplingWithTools => "sampling with tools",
            InputKind::Roots => "roots",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(value: serde_json::Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn empty_elicitation_object_means_form_only() {
        let c = caps(json!({"elicitation": {}}));
        assert!(InputKind::FormElicitation.is_declared_by(&c));
        assert!(!InputKind::UrlElicitation.is_declared_by(&c));
    }

    #[test]
    fn url_only_elicitation_does_not_declare_form() {
        let c = caps(json!({"elicitation": {"url": {}}}));
        assert!(!InputKind::FormElicitation.is_declared_by(&c));
        assert!(InputKind::UrlElicitation.is_declared_by(&c));
    }

    #[test]
    fn nothing_declared_by_empty_capabilities() {
        let c = caps(json!({}));
        for kind in InputKind::ALL {
            assert!(!kind.is_declared_by(&c), "{kind}");
        }
    }

    #[test]
    fn required_capability_declares_its_own_kind() {
        for kind in InputKind::ALL {
            assert!(kind.is_declared_by(&kind.required_capability()), "{kind}");
        }
    }

    #[test]
    fn roots_with_list_changed_is_declared() {
        let c = caps(json!({"roots": {"listChanged": true}}));
        assert!(InputKind::Roots.is_declared_by(&c));
    }
}
