//! Answering a round: every input request of a pending call handed to the
//! [`InputHandler`](crate::client::InputHandler) concurrently, each within the handler
//! timeout, and each answer turned into the JSON the server reads.

use futures::future::try_join_all;
use rmcp::model::{
    CreateMessageRequest, ElicitRequest, ElicitRequestParams, InputRequest, InputResponses,
};
use serde::Serialize;
use serde_json::Value;

use super::client::MrtrClient;
use crate::client::error::ClientError;
use crate::client::handler::{
    FormElicitation, HandlerError, RootsRequest, SamplingRequest, UrlElicitation,
};
use crate::client::pending::PendingCall;
use crate::machine::InputKind;

impl MrtrClient {
    /// Answers every input request of `pending` concurrently with the handler.
    ///
    /// Fails before calling any handler if one request is of a kind the handler does not
    /// support.
    pub async fn answer(&self, pending: &PendingCall) -> Result<InputResponses, ClientError> {
        let supported = self.handler.supported();
        for (key, request) in &pending.input_requests {
            let Some(kind) = input_kind(request) else {
                return Err(unknown_kind(key));
            };
            if !supported.contains(kind) {
                return Err(ClientError::UnsupportedInputRequest {
                    key: key.clone(),
                    kind,
                });
            }
        }
        let answers = try_join_all(
            pending
                .input_requests
                .iter()
                .map(|(key, request)| self.answer_one(key, request)),
        )
        .await?;
        Ok(answers.into_iter().collect())
    }

    async fn answer_one(
        &self,
        key: &str,
        request: &InputRequest,
    ) -> Result<(String, Value), ClientError> {
        let Some(kind) = input_kind(request) else {
            return Err(unknown_kind(key));
        };
        let key_owned = key.to_owned();
        let answer = async {
            match request {
                InputRequest::Elicitation(ElicitRequest { params, .. }) => match params {
                    ElicitRequestParams::FormElicitationParams {
                        message,
                        requested_schema,
                        ..
                    } => to_json(
                        self.handler
                            .elicit(FormElicitation {
                                key: key_owned,
                                message: message.clone(),
                                requested_schema: requested_schema.clone(),
                            })
                            .await,
                    ),
                    ElicitRequestParams::UrlElicitationParams { message, url, .. } => to_json(
                        self.handler
                            .elicit_url(UrlElicitation {
                                key: key_owned,
                                message: message.clone(),
                                url: url.clone(),
                            })
                            .await,
                    ),
                    _ => Err(HandlerError::Unsupported),
                },
                InputRequest::CreateMessage(CreateMessageRequest { params, .. }) => to_json(
                    self.handler
                        .sample(SamplingRequest {
                            key: key_owned,
                            params: params.clone(),
                        })
                        .await,
                ),
                InputRequest::ListRoots(_) => to_json(
                    self.handler
                        .list_roots(RootsRequest { key: key_owned })
                        .await,
                ),
                _ => Err(HandlerError::Unsupported),
            }
        };
        let outcome = match self.config.handler_timeout {
            Some(timeout) => tokio::time::timeout(timeout, answer).await.map_err(|_| {
                ClientError::HandlerTimedOut {
                    key: key.to_owned(),
                    kind,
                    timeout,
                }
            })?,
            None => answer.await,
        };
        match outcome {
            Ok(value) => Ok((key.to_owned(), value)),
            Err(HandlerError::Unsupported) => Err(ClientError::UnsupportedInputRequest {
                key: key.to_owned(),
                kind,
            }),
            Err(HandlerError::Failed(source)) => Err(ClientError::HandlerFailed {
                key: key.to_owned(),
                kind,
                source,
            }),
        }
    }
}

fn to_json<T: Serialize>(answer: Result<T, HandlerError>) -> Result<Value, HandlerError> {
    answer.and_then(|answer| {
        serde_json::to_value(answer)
            .map_err(|error| HandlerError::failed(format!("answer is not JSON: {error}")))
    })
}

/// Which handler answers `request` (`None` for kinds newer than this client).
fn input_kind(request: &InputRequest) -> Option<InputKind> {
    let known = match request {
        InputRequest::Elicitation(ElicitRequest { params, .. }) => matches!(
            params,
            ElicitRequestParams::FormElicitationParams { .. }
                | ElicitRequestParams::UrlElicitationParams { .. }
        ),
        InputRequest::CreateMessage(_) | InputRequest::ListRoots(_) => true,
        _ => false,
    };
    known.then(|| InputKind::of(request))
}

fn unknown_kind(key: &str) -> ClientError {
    ClientError::MalformedInputRequest {
        key: key.to_owned(),
        source: "a kind of input request this client does not know".into(),
    }
}
