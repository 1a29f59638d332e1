//! Sending one round: the request that continues a pending call (its params, answers and
//! echoed `requestState`), sent again while the retry policy lets it cure a failure in
//! transit, and the error a failure that is not retried becomes.

use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequest,
        GetPromptRequestParams, InputResponses, ReadResourceRequest, ReadResourceRequestParams,
        ServerResult,
    },
    service::ServiceError,
};

use super::client::MrtrClient;
use super::reply::{Reply, classify};
use crate::client::error::ClientError;
use crate::client::pending::{CallTarget, PendingCall, RoundOutcome};
use crate::client::retry::retry_reason;

impl MrtrClient {
    /// Manual mode: sends the next request of `pending` with `responses` (a new JSON-RPC id,
    /// the same params, `requestState` echoed exactly or left out) and returns what the
    /// server said.
    ///
    /// A request that fails in transit is sent again as the
    /// [`retry`](super::DriverConfig::retry) policy allows, with the same params; when every
    /// attempt failed the error is [`ClientError::RetriesExhausted`].
    ///
    /// When the server answers with a task (tasks extension), the task is followed to its
    /// end here: `tasks/get` polled with backoff (from the server's `pollIntervalMs`), its
    /// questions answered by the handler and sent with `tasks/update`.
    pub async fn resume(
        &self,
        pending: &PendingCall,
        responses: InputResponses,
    ) -> Result<RoundOutcome, ClientError> {
        let request = build_request(pending, &responses);
        let result = self.send_with_retries(pending, &responses, request).await?;
        Ok(match classify(&pending.target, result)? {
            Reply::Complete(output) => RoundOutcome::Complete(output),
            Reply::InputRequired(result) => RoundOutcome::InputRequired(PendingCall {
                target: pending.target.clone(),
                round: pending.round + 1,
                input_requests: result.input_requests.unwrap_or_default(),
                request_state: result.request_state,
                meta: result.meta,
            }),
            Reply::Task(created) => {
                RoundOutcome::Complete(self.follow_task(pending, created).await?)
            }
        })
    }

    /// Sends `request` (the one continuing `pending`), sending the very same request again
    /// while the failures are ones the retry policy lets it cure.
    pub(super) async fn send_with_retries(
        &self,
        pending: &PendingCall,
        responses: &InputResponses,
        request: ClientRequest,
    ) -> Result<ServerResult, ClientError> {
        let policy = &self.config.retry;
        let resumed = pending.request_state.is_some();
        let mut attempt = 1u32;
        loop {
            let error = match self.peer.send_request(request.clone()).await {
                Ok(result) => return Ok(result),
                Err(error) => error,
            };
            let reason = retry_reason(&error).filter(|reason| policy.permits(reason, resumed));
            let failure = connection_error(error, pending, responses.clone());
            let Some(reason) = reason else {
                return Err(failure);
            };
            // A stopped service cannot carry a retry; the caller resumes on a new connection.
            if policy.max_retries == 0 || self.peer.is_transport_closed() {
                return Err(failure);
            }
            if attempt > policy.max_retries {
                return Err(ClientError::RetriesExhausted {
                    attempts: attempt,
                    last: Box::new(failure),
                });
            }
            let pause = policy.backoff(attempt);
            tracing::debug!(round = pending.round + 1, attempt, %reason, ?pause, "retrying the request");
            for observer in &self.observers {
                observer.retrying(pending, attempt, &reason, pause);
            }
            tokio::time::sleep(pause).await;
            attempt += 1;
        }
    }
}

pub(super) fn build_request(pending: &PendingCall, responses: &InputResponses) -> ClientRequest {
    // Absent, not empty: a first call or a state-only retry carries no inputResponses.
    let input_responses = (!responses.is_empty()).then(|| responses.clone());
    let request_state = pending.request_state.clone();
    match &pending.target {
        CallTarget::Tool { name, arguments } => {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = arguments.clone();
            params.input_responses = input_responses;
            params.request_state = request_state;
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        }
        CallTarget::Prompt { name, arguments } => {
            let mut params = GetPromptRequestParams::new(name.clone());
            params.arguments = arguments.clone();
            params.input_responses = input_responses;
            params.request_state = request_state;
            ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
        }
        CallTarget::Resource { uri } => {
            let mut params = ReadResourceRequestParams::new(uri.clone());
            params.input_responses = input_responses;
            params.request_state = request_state;
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
        }
    }
}

fn connection_error(
    error: ServiceError,
    pending: &PendingCall,
    responses: InputResponses,
) -> ClientError {
    match error {
        ServiceError::McpError(data) => ClientError::Server(data),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            ClientError::ConnectionLost {
                pending: Box::new(pending.clone()),
                responses,
                source: error.into(),
            }
        }
        other => ClientError::Protocol(other.into()),
    }
}
