//! Why a machine's step failed: the one error type every step returns, which the round core
//! maps to its JSON-RPC error.

use super::answers::AnswerError;
use crate::error::BoxError;

/// Why a step could not produce a [`Step`](super::Step).
///
/// ```
/// use mrtr_runtime::machine::{AnswerError, AnswerProblem, StepError};
/// let e: StepError = AnswerError::new("k", AnswerProblem::Missing).into();
/// assert!(matches!(e, StepError::Answer(_)));
/// assert_eq!(e.to_string(), "answer for `k`: missing");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// The arguments do not match the machine's schema (`-32602`, with the cause).
    #[error("invalid arguments")]
    InvalidArguments(#[source] BoxError),
    /// An answer of the resumed round is missing or malformed: the runtime asks again.
    #[error(transparent)]
    Answer(#[from] AnswerError),
    /// The authenticated state does not decode as this machine's state.
    #[error("state does not match this machine")]
    StateMismatch(#[source] BoxError),
    /// A bug in the machine (`-32603`).
    #[error("internal error")]
    Internal(#[source] BoxError),
    /// The locals kept across a suspension cannot be stored in `requestState` (`-32603`,
    /// naming the local that holds the value, or the state type when the state does not
    /// name its locals, with the cause in the message).
    #[error("{}", unstorable_message(*local, state_type))]
    Unstorable {
        /// The Rust type of the state (`std::any::type_name`): names types, never values.
        state_type: &'static str,
        /// The local that holds the value, when the state names its locals (as the state
        /// `#[mrtr::tool]` generates does).
        local: Option<&'static str>,
        /// Why it cannot be stored.
        #[source]
        reason: BoxError,
    },
}

fn unstorable_message(local: Option<&'static str>, state_type: &str) -> String {
    match local {
        Some(local) => format!(
            "the tool's local `{local}` cannot be stored between rounds (it is live across a suspension)"
        ),
        None => format!(
            "the tool's state cannot be stored between rounds. The state type is `{state_type}`. \
             Values that postcard cannot store (serde_json::Value, #[serde(untagged)], #[serde(flatten)], \
             #[serde(skip_serializing_if)], ...) can be kept in `mrtr::machine::AsJson`"
        ),
    }
}

impl StepError {
    pub(super) fn unstorable<S>(local: Option<&'static str>, reason: impl Into<BoxError>) -> Self {
        StepError::Unstorable {
            state_type: std::any::type_name::<S>(),
            local,
            reason: reason.into(),
        }
    }
}

impl From<std::convert::Infallible> for StepError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}
