//! Legacy sessions: a client that negotiated 2025-11-25 or older through `initialize`
//! cannot answer `input_required`, so the same machine is driven in-process instead. Each
//! suspension's requests go to the client as real server→client requests on the session
//! (one round's requests concurrently), the replies become the round's [`Answers`] exactly
//! as `inputResponses` would on the MRTR path, and the machine resumes from the state it
//! just encoded — kept in memory, never sealed, and no code before the suspension re-runs.

#![allow(deprecated)] // sampling and roots are SEP-2577-deprecated but still served here

use std::time::Duration;

use std::sync::Arc;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequestParams, InputRequest, JsonObject,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::errors;
use super::round::{Caller, Resumed, RoundInput, RoundLimits, RoundOutcome, Start, step_round};
use crate::machine::{Answers, AppStates, Machine, Resume};

/// How long a legacy client may take to answer one server→client request, unless
/// [`McpServerBuilder::legacy_request_timeout`](super::McpServerBuilder::legacy_request_timeout)
/// says otherwise: 4 minutes, time for a person to read and fill in a form, and shorter than
/// the HTTP session idle timeout (5 minutes), so a question left unanswered ends its call
/// with an error naming the request before the idle session is closed under it.
///
/// ```
/// assert_eq!(mrtr_runtime::server::DEFAULT_LEGACY_REQUEST_TIMEOUT.as_secs(), 240);
/// ```
pub const DEFAULT_LEGACY_REQUEST_TIMEOUT: Duration = Duration::from_secs(240);

/// Where a legacy call's requests go, and the limits that apply.
pub(crate) struct Session<'a> {
    pub(crate) peer: &'a Peer<RoleServer>,
    /// Cancelled on `notifications/cancelled` for the call, or when the session ends.
    pub(crate) ct: &'a CancellationToken,
    pub(crate) timeout: Duration,
}

/// One legacy call: what the round core needs besides the session.
pub(crate) struct LegacyCall<'a> {
    pub(crate) arguments: &'a JsonObject,
    /// Its era is the session's revision.
    pub(crate) caller: Caller,
    pub(crate) states: &'a Arc<AppStates>,
    pub(crate) limits: RoundLimits,
}

/// Why one server→client request produced no answer.
enum AskFailure {
    /// The call was cancelled (or a sibling request of the round failed first).
    Cancelled,
    /// The call cannot continue; this is its error.
    Failed(ErrorData),
}

/// Runs `machine` to completion over a legacy session: each round's questions go to the
/// client as server→client requests, and the replies resume the machine.
pub(crate) async fn drive<M: Machine + ?Sized>(
    machine: &M,
    call: LegacyCall<'_>,
    session: Session<'_>,
) -> Result<M::Output, ErrorData> {
    let descriptor = machine.descriptor();
    let version = match &call.caller.era {
        super::round::Era::Session(version) => version.as_str().to_owned(),
        super::round::Era::Stateless => String::new(),
    };
    let span = tracing::info_span!(
        "mrtr.legacy",
        method = descriptor.method().as_str(),
        target = descriptor.name(),
        version = version.as_str(),
        rounds = tracing::field::Empty,
        outcome = tracing::field::Empty,
    );
    drive_in_span(machine, call, session).instrument(span).await
}

async fn drive_in_span<M: Machine + ?Sized>(
    machine: &M,
    call: LegacyCall<'_>,
    session: Session<'_>,
) -> Result<M::Output, ErrorData> {
    let span = tracing::Span::current();
    let descriptor = machine.descriptor();
    let mut start = Start::Fresh {
        early_answers: Default::default(),
    };
    loop {
        if session.ct.is_cancelled() {
            span.record("outcome", "cancelled");
            return Err(errors::legacy_cancelled());
        }
        let input = RoundInput {
            arguments: call.arguments,
            caller: &call.caller,
            states: call.states,
            limits: call.limits.clone(),
            task_after: None,
            start,
            literals: descriptor.literals,
        };
        let outcome = step_round(machine, input).await;
        span.record("outcome", outcome.label());
        let ask = match outcome {
            RoundOutcome::Done(output) => return Ok(output),
            RoundOutcome::Ask(ask) => ask,
            RoundOutcome::Failed(error) => {
                return Err(error.to_error(descriptor.name(), &call.caller.era));
            }
            RoundOutcome::HandOff(_) => {
                return Err(errors::internal("a legacy call handed off to a task"));
            }
        };
        span.record("rounds", ask.round);
        let responses = match ask_round(&ask.requests, &session).await {
            Ok(responses) => responses,
            Err(AskFailure::Cancelled) => {
                span.record("outcome", "cancelled");
                return Err(errors::legacy_cancelled());
            }
            Err(AskFailure::Failed(error)) => {
                span.record("outcome", "client failed");
                return Err(error);
            }
        };
        let asked = ask.asked();
        start = Start::Resumed(Resumed {
            resume: Resume::new(ask.state, Answers::new(ask.requests, responses)),
            asked,
            round: ask.round,
            through_client: false,
        });
    }
}

/// Sends one round's requests concurrently and collects the replies as `inputResponses`
/// would carry them. The first failure cancels the requests still outstanding.
async fn ask_round(
    requests: &[(String, InputRequest)],
    session: &Session<'_>,
) -> Result<Vec<(String, Value)>, AskFailure> {
    let round_ct = session.ct.child_token();
    let asks = requests.iter().map(|(key, request)| {
        let round_ct = &round_ct;
        async move {
            let answer = ask_one(key, request, session, round_ct).await;
            if answer.is_err() {
                round_ct.cancel();
            }
            answer.map(|value| (key.clone(), value))
        }
    });
    let answers = futures::future::join_all(asks).await;
    let mut responses = Vec::with_capacity(answers.len());
    let mut cancelled = false;
    for answer in answers {
        match answer {
            Ok(response) => responses.push(response),
            // A real failure explains the round better than the cancellations it caused.
            Err(AskFailure::Failed(error)) => return Err(AskFailure::Failed(error)),
            Err(AskFailure::Cancelled) => cancelled = true,
        }
    }
    if cancelled {
        return Err(AskFailure::Cancelled);
    }
    Ok(responses)
}

/// One server→client request: sent with the configured timeout, cancelled on the client
/// too when the call ends first.
async fn ask_one(
    key: &str,
    request: &InputRequest,
    session: &Session<'_>,
    round_ct: &CancellationToken,
) -> Result<Value, AskFailure> {
    let method = method_of(request);
    let request = to_server_request(request.clone())
        .map_err(|detail| AskFailure::Failed(errors::legacy_client_error(key, method, &detail)))?;
    let options = PeerRequestOptions::with_timeout(session.timeout);
    let handle = match session
        .peer
        .send_cancellable_request(request, options)
        .await
    {
        Ok(handle) => handle,
        Err(error) => return Err(failure(key, method, error, session.timeout)),
    };
    let id = handle.id.clone();
    let peer = handle.peer.clone();
    tokio::select! {
        reply = handle.await_response() => match reply {
            Ok(result) => result_value(result).map_err(|detail| {
                AskFailure::Failed(errors::legacy_client_error(key, method, &detail))
            }),
            Err(error) => Err(failure(key, method, error, session.timeout)),
        },
        () = round_ct.cancelled() => {
            // The client should stop asking its user; best effort, the call ends anyway.
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id),
                    Some("the call that asked for this input ended".into()),
                ))
                .await;
            Err(AskFailure::Cancelled)
        }
    }
}

fn failure(key: &str, method: &str, error: ServiceError, timeout: Duration) -> AskFailure {
    match error {
        ServiceError::Timeout { .. } => {
            AskFailure::Failed(errors::legacy_timeout(key, method, timeout))
        }
        ServiceError::Cancelled { .. } => AskFailure::Cancelled,
        ServiceError::TransportClosed => AskFailure::Failed(errors::legacy_client_error(
            key,
            method,
            "the session closed before the client answered",
        )),
        ServiceError::McpError(error) => {
            AskFailure::Failed(errors::legacy_client_error(key, method, &error.message))
        }
        other => AskFailure::Failed(errors::legacy_client_error(key, method, &other.to_string())),
    }
}

fn method_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation/create",
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "input request",
    }
}

/// The request as 2025-11-25 sends it: URL-mode elicitations need an `elicitationId`
/// there (2026-07-28 dropped the field), so one is made up when the machine gave none.
fn to_server_request(request: InputRequest) -> Result<ServerRequest, String> {
    Ok(match request {
        InputRequest::Elicitation(mut elicit) => {
            if let ElicitRequestParams::UrlElicitationParams { elicitation_id, .. } =
                &mut elicit.params
                && elicitation_id.is_empty()
            {
                *elicitation_id = fresh_elicitation_id();
            }
            ServerRequest::ElicitRequest(elicit)
        }
        InputRequest::CreateMessage(create) => ServerRequest::CreateMessageRequest(create),
        InputRequest::ListRoots(list) => ServerRequest::ListRootsRequest(list),
        // A kind newer than this code: both enums share the wire shape.
        other => serde_json::to_value(&other)
            .and_then(serde_json::from_value)
            .map_err(|e| format!("the request cannot be sent over a session: {e}"))?,
    })
}

fn fresh_elicitation_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // Uniqueness within the session is all the id needs.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The reply as the JSON an MRTR client would put in `inputResponses`, so both eras decode
/// answers through the same code.
fn result_value(result: ClientResult) -> Result<Value, String> {
    // The enum is untagged: it serializes as the result itself.
    serde_json::to_value(result).map_err(|e| format!("the reply does not serialize: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::input;

    #[test]
    fn url_elicitations_get_an_id() {
        let request = input::url("Approve", "https://example.com").into_request();
        let Ok(ServerRequest::ElicitRequest(elicit)) = to_server_request(request) else {
            panic!("not an elicitation");
        };
        let value = serde_json::to_value(&elicit.params).unwrap();
        assert_eq!(value["elicitationId"].as_str().map(str::len), Some(32));
    }
}
