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

use super::MrtrClient;
use crate::client::error::ClientError;
use crate::client::pending::{CallTarget, PendingCall};
use crate::client::retry::retry_reason;

impl MrtrClient {
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
