//! Legacy sessions: a client that negotiated 2025-11-25 or older through `initialize`
//! cannot answer `input_required`, so the same machine is driven in-process instead. Each
//! suspension's requests go to the client as real server→client requests on the session
//! (one round's requests concurrently), the replies become the round's [`Answers`] exactly
//! as `inputResponses` would on the MRTR path, and the machine resumes from the state it
//! just encoded — kept in memory, never sealed, and no code before the suspension re-runs.

#![allow(deprecated)] // sampling and roots are SEP-2577-deprecated but still served here

use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ElicitRequestParams,
    InputRequest, ProtocolVersion, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::engine::{Engine, Incoming};
use super::errors;
use crate::error::ErrorChain;
use crate::machine::{AnswerProblem, Answers, InputKind, Machine, Resume, Run, Step, StepError};

/// How long a legacy client may take to answer one server→client request, unless
/// [`McpServerBuilder::legacy_request_timeout`](super::McpServerBuilder::legacy_request_timeout)
/// says otherwise: the same as an MRTR round's default `requestState` lifetime.
///
/// ```
/// assert_eq!(mrtr_runtime::server::DEFAULT_LEGACY_REQUEST_TIMEOUT.as_secs(), 600);
/// ```
pub const DEFAULT_LEGACY_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// How often one round is asked again after malformed answers before the call fails
/// (an MRTR client decides itself whether to retry; a session client cannot, so bound it).
pub(crate) const MAX_REASKS: u32 = 8;

/// Where a legacy call's requests go, and the limits that apply.
pub(crate) struct Session<'a> {
    pub(crate) peer: &'a Peer<RoleServer>,
    /// Cancelled on `notifications/cancelled` for the call, or when the session ends.
    pub(crate) ct: &'a CancellationToken,
    pub(crate) version: ProtocolVersion,
    pub(crate) timeout: Duration,
}

/// One suspension: its requests and the state it encoded.
type Round = (Vec<(String, InputRequest)>, Vec<u8>);

/// Why one server→client request produced no answer.
enum AskFailure {
    /// The call was cancelled (or a sibling request of the round failed first).
    Cancelled,
    /// The call cannot continue; this is its error.
    Failed(ErrorData),
}

impl Engine {
    /// Runs `machine` to completion over a legacy session.
    pub(crate) async fn drive<M: Machine + ?Sized>(
        &self,
        machine: &M,
        incoming: Incoming<'_>,
        session: Session<'_>,
    ) -> Result<M::Output, ErrorData> {
        let descriptor = machine.descriptor();
        let span = tracing::info_span!(
            "mrtr.legacy",
            method = descriptor.method().as_str(),
            target = descriptor.name(),
            version = session.version.as_str(),
            rounds = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        self.drive_in_span(machine, incoming, session)
            .instrument(span)
            .await
    }

    async fn drive_in_span<M: Machine + ?Sized>(
        &self,
        machine: &M,
        incoming: Incoming<'_>,
        session: Session<'_>,
    ) -> Result<M::Output, ErrorData> {
        let span = tracing::Span::current();
        let name = machine.descriptor().name().to_string();
        let mut resume: Option<Resume> = None;
        // The last suspension: what a malformed answer asks again.
        let mut asked: Option<Round> = None;
        let mut completed_rounds = 0u32;
        let mut reasks = 0u32;
        loop {
            if session.ct.is_cancelled() {
                span.record("outcome", "cancelled");
                return Err(errors::legacy_cancelled());
            }
            span.record("rounds", completed_rounds);
            let cx = self.request_cx(
                &incoming.capabilities,
                &incoming.principal,
                completed_rounds,
            );
            let run = Run {
                arguments: incoming.arguments,
                resume: resume.take(),
                cx: &cx,
            };
            let (requests, state) = match super::unwind::step_catching_panics(machine, run).await {
                Ok(Step::Done(output)) => {
                    span.record("outcome", "complete");
                    return Ok(output);
                }
                Ok(Step::Suspend(suspend)) => {
                    completed_rounds += 1;
                    reasks = 0;
                    suspend.into_parts()
                }
                Err(StepError::Answer(problem))
                    if *problem.problem() != AnswerProblem::NotAsked =>
                {
                    let Some(last) = asked.take() else {
                        return Err(errors::internal(&format!(
                            "machine took an answer on a fresh call: {problem}"
                        )));
                    };
                    reasks += 1;
                    if reasks > MAX_REASKS {
                        span.record("outcome", "too many malformed answers");
                        return Err(errors::legacy_malformed_answers(
                            problem.key(),
                            &problem.problem().to_string(),
                            MAX_REASKS,
                        ));
                    }
                    tracing::info!(key = problem.key(), problem = %problem.problem(), "asking again");
                    last
                }
                Err(error) => {
                    span.record("outcome", "error");
                    return Err(step_error(&name, error));
                }
            };
            if let Err(error) = check_declared(&requests, &incoming.capabilities, &session.version)
            {
                span.record("outcome", "missing capability");
                return Err(error);
            }
            let responses = match ask_round(&requests, &session).await {
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
            let answers = Answers::new(requests.clone(), responses);
            resume = Some(Resume::new(state.clone(), answers));
            asked = Some((requests, state));
        }
    }
}

/// The same mapping the MRTR path uses; a state cannot be tampered with here, so a
/// mismatch is a bug.
fn step_error(name: &str, error: StepError) -> ErrorData {
    match error {
        StepError::InvalidArguments(cause) => errors::invalid_arguments(&*cause),
        error @ StepError::Unstorable { .. } => errors::unstorable_state(name, &error),
        other => errors::internal(&ErrorChain(&other).to_string()),
    }
}

/// The first protocol revision that has `kind`, if it is newer than 2024-11-05.
fn introduced_in(kind: InputKind) -> Option<ProtocolVersion> {
    match kind {
        InputKind::FormElicitation => Some(ProtocolVersion::V_2025_06_18),
        InputKind::UrlElicitation | InputKind::SamplingWithTools => {
            Some(ProtocolVersion::V_2025_11_25)
        }
        InputKind::Sampling | InputKind::Roots => None,
    }
}

/// Refuses a round that asks for something the session's revision lacks or its
/// `initialize` did not declare; nothing of the round is sent then.
fn check_declared(
    requests: &[(String, InputRequest)],
    capabilities: &ClientCapabilities,
    version: &ProtocolVersion,
) -> Result<(), ErrorData> {
    let mut kinds: Vec<InputKind> = requests.iter().map(|(_, r)| InputKind::of(r)).collect();
    kinds.sort();
    kinds.dedup();
    if let Some((kind, since)) = kinds.iter().find_map(|kind| {
        introduced_in(*kind)
            .filter(|since| version.as_str() < since.as_str())
            .map(|since| (*kind, since))
    }) {
        return Err(errors::legacy_not_in_revision(kind, version, &since));
    }
    let undeclared: Vec<InputKind> = kinds
        .into_iter()
        .filter(|kind| !kind.is_declared_by(capabilities))
        .collect();
    if undeclared.is_empty() {
        Ok(())
    } else {
        Err(errors::legacy_missing_capabilities(&undeclared))
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
    use rmcp::model::ErrorCode;
    use serde_json::json;

    fn caps(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn undeclared_kinds_are_refused_before_sending() {
        let requests = vec![("ask_0".to_string(), input::confirm("Sure?").into_request())];
        let error = check_declared(&requests, &caps(json!({})), &ProtocolVersion::V_2025_11_25)
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST, "{error:?}");
        assert!(error.message.contains("elicitation"), "{}", error.message);
        assert!(
            check_declared(
                &requests,
                &caps(json!({"elicitation": {}})),
                &ProtocolVersion::V_2025_11_25
            )
            .is_ok()
        );
    }

    #[test]
    fn revisions_without_elicitation_say_so() {
        let requests = vec![("ask_0".to_string(), input::confirm("Sure?").into_request())];
        let error = check_declared(
            &requests,
            &caps(json!({"elicitation": {}})),
            &ProtocolVersion::V_2025_03_26,
        )
        .unwrap_err();
        assert!(error.message.contains("2025-03-26"), "{}", error.message);
        let roots = vec![("roots_0".to_string(), input::roots().into_request())];
        assert!(
            check_declared(
                &roots,
                &caps(json!({"roots": {}})),
                &ProtocolVersion::V_2024_11_05
            )
            .is_ok()
        );
    }

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
