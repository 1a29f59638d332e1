use std::time::Duration;

use rmcp::model::{ErrorData, InputResponses};

use super::pending::PendingCall;
use crate::error::BoxError;
use crate::machine::InputKind;

/// Why an MRTR call did not complete.
///
/// Variants that happen between rounds carry the [`PendingCall`] so a host can persist it
/// and retry later (for example against a fresh connection). Causes are carried as
/// [`source`](std::error::Error::source), not repeated in the message: print the whole chain
/// with [`ErrorChain`](crate::error::ErrorChain).
///
/// ```
/// use mrtr_runtime::client::{ClientError, InputKind};
///
/// let error = ClientError::UnsupportedInputRequest { key: "ask".into(), kind: InputKind::Sampling };
/// assert!(error.to_string().contains("sampling"));
/// assert!(error.pending().is_none());
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server still wanted input after `max_rounds` requests.
    #[error("the server still asks for input after {max_rounds} rounds (round cap reached)")]
    RoundLimit {
        /// The configured cap.
        max_rounds: usize,
        /// The last round, still answerable.
        pending: Box<PendingCall>,
    },
    /// The wall-clock budget for the whole call ran out.
    #[error("the call did not complete within its {budget:?} budget")]
    BudgetExceeded {
        /// The configured budget.
        budget: Duration,
        /// The round that was open when time ran out.
        pending: Box<PendingCall>,
    },
    /// The server asked for a kind of input this client has no handler for; nothing was retried.
    #[error(
        "the server asked for {kind} (input request `{key}`) but this client has no handler for it"
    )]
    UnsupportedInputRequest {
        /// Key of the offending input request.
        key: String,
        /// What was asked.
        kind: InputKind,
    },
    /// An `inputRequests` entry is not a valid elicitation, sampling or roots request.
    #[error("the server sent a malformed input request `{key}`")]
    MalformedInputRequest {
        /// Key of the offending entry.
        key: String,
        /// What is wrong with it.
        source: BoxError,
    },
    /// The call ran as a task (tasks extension) and the task was cancelled before it ended.
    #[error("task `{task_id}` was cancelled before it finished")]
    TaskCancelled {
        /// The task's id.
        task_id: String,
    },
    /// The result carries a `resultType` this client does not know.
    #[error("the server answered with unknown resultType `{result_type}`")]
    UnknownResultType {
        /// The value received.
        result_type: String,
    },
    /// The result is neither a valid final result nor a valid `input_required` result.
    #[error("the server sent a malformed result")]
    MalformedResult {
        /// What is wrong with it.
        source: BoxError,
    },
    /// An input handler failed.
    #[error("the {kind} handler failed for input request `{key}`")]
    HandlerFailed {
        /// Key of the input request.
        key: String,
        /// Which handler.
        kind: InputKind,
        /// The handler's error.
        source: BoxError,
    },
    /// An input handler did not answer in time.
    #[error("the {kind} handler did not answer input request `{key}` within {timeout:?}")]
    HandlerTimedOut {
        /// Key of the input request.
        key: String,
        /// Which handler.
        kind: InputKind,
        /// The configured per-request timeout.
        timeout: Duration,
    },
    /// The connection dropped; `pending` plus `responses` can be resumed on a new connection
    /// with [`MrtrClient::resume`](super::MrtrClient::resume).
    #[error("the connection to the server was lost during round {}", pending.round + 1)]
    ConnectionLost {
        /// The round that was being sent.
        pending: Box<PendingCall>,
        /// The answers that were being sent with it.
        responses: InputResponses,
        /// What the transport said.
        source: BoxError,
    },
    /// A request failed in transit on every attempt the
    /// [`RetryPolicy`](super::RetryPolicy) allowed; `last` is how the last attempt failed.
    ///
    /// ```
    /// use mrtr_runtime::client::ClientError;
    /// let last = ClientError::Protocol("connection refused".into());
    /// let error = ClientError::RetriesExhausted { attempts: 5, last: Box::new(last) };
    /// assert!(error.to_string().contains("5 attempts"));
    /// ```
    #[error("the request failed on all {attempts} attempts (retries exhausted)")]
    RetriesExhausted {
        /// How many times the request was sent (the first send included).
        attempts: u32,
        /// The failure of the last attempt.
        #[source]
        last: Box<ClientError>,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the server returned error {}: {}", .0.code.0, .0.message)]
    Server(ErrorData),
    /// Connecting (or the 2026-07-28 discovery) failed.
    #[error("could not connect to the server")]
    Connect(#[source] BoxError),
    /// Any other protocol-level failure reported by rmcp.
    #[error("protocol error")]
    Protocol(#[source] BoxError),
}

impl ClientError {
    /// The pending call this error left behind, if it can be retried or answered again.
    pub fn pending(&self) -> Option<&PendingCall> {
        match self {
            ClientError::RoundLimit { pending, .. }
            | ClientError::BudgetExceeded { pending, .. }
            | ClientError::ConnectionLost { pending, .. } => Some(pending),
            ClientError::RetriesExhausted { last, .. } => last.pending(),
            _ => None,
        }
    }
}
