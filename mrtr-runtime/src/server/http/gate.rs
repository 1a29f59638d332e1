//! The request gate in front of rmcp's Streamable HTTP service: it reads the body under
//! a deadline, refuses what is not one JSON-RPC message with the JSON-RPC error JSON-RPC
//! asks for, and turns rmcp's plain-text HTTP errors into JSON-RPC error bodies. It also
//! drops the `elicitationId` rmcp still writes into URL-mode elicitations (2026-07-28
//! removed the field; rmcp's type always serializes it).
//!
//! For legacy sessions it is also the door: an `initialize` is admitted against the
//! session caps, every request carrying `Mcp-Session-Id` must come from the principal
//! that opened the session (else it is answered exactly as for an unknown session), and
//! long-lived streams (GET streams, pending legacy calls) take a place in their own
//! budget and hand their connection slot back.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use futures::future::{BoxFuture, Either};
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use rmcp::ErrorData;
use rmcp::model::{ErrorCode, JsonRpcError, RequestId};
use serde_json::Value;

use super::budget::{BodyBudget, Reservation, SMALL_BODY_BYTES, SMALL_BODY_GRACE, concatenated};
use super::connections::ConnectionSlot;
use super::endpoint::Next;
use super::inflight::{self, InFlight, Principals};
use super::sessions::{self, Owner, Refusal, Sessions, Streams};
use super::stateless::Stateless;

/// The request-level limits the gate enforces.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) body_timeout: Duration,
    pub(super) max_body_bytes: usize,
}

/// What the gate needs: its limits, the budget bodies are read under and, when legacy
/// sessions are served, their door.
pub(super) struct Gate {
    pub(super) limits: Limits,
    pub(super) bodies: Arc<BodyBudget>,
    pub(super) in_flight: Arc<InFlight>,
    pub(super) legacy: Option<Arc<Legacy>>,
    /// The native path for the stateless requests the server answers itself.
    pub(super) stateless: Arc<Stateless>,
    /// Stateless requests running (their clients may have left): at most `max_connections`,
    /// the bound that held when a request ended with its connection.
    pub(super) detached_work: Arc<tokio::sync::Semaphore>,
}

/// The legacy-session side of the gate.
pub(super) struct Legacy {
    pub(super) sessions: Arc<Sessions>,
    pub(super) streams: Streams,
    pub(super) principals: Arc<Principals>,
}

impl Legacy {
    pub(super) fn new(
        sessions: Arc<Sessions>,
        streams: Streams,
        principals: Arc<Principals>,
    ) -> Self {
        Legacy {
            sessions,
            streams,
            principals,
        }
    }

    /// The principal the server's resolver finds for a request with these parts.
    pub(super) fn owner(&self, parts: &mut http::request::Parts) -> Owner {
        self.principals.owner(parts)
    }
}

/// The header naming a legacy session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Legacy requests that may stay open while the server asks the client something.
const PENDING_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The JSON-RPC error code of a refusal for a bound (the implementation-defined range).
const LIMIT_REACHED: ErrorCode = ErrorCode(-32000);

/// What rmcp writes for an absent elicitation id; only then is there anything to drop.
const EMPTY_ELICITATION_ID: &[u8] = br#""elicitationId":"""#;

/// Answers `request`, or lets rmcp (`next`) answer it.
///
/// The checks on the head run at once; the future is the rest (not an `async fn`, whose
/// future would keep the request twice besides the parts it is split into).
pub(super) fn gate(
    gate: &Gate,
    request: Request,
    next: Next,
) -> impl Future<Output = Response> + Send + '_ {
    let session = match single_headers(&request) {
        Ok(session) => session,
        Err(refusal) => return Either::Left(std::future::ready(refusal)),
    };
    if request.method() != Method::POST {
        // Boxed, as every branch a stateless request does not take: the future of each
        // request is as large as its largest branch.
        let other: BoxFuture<'_, Response> = Box::pin(not_a_post(gate, session, request, next));
        return Either::Right(Either::Left(other));
    }
    if !is_json(request.headers()) {
        return Either::Left(std::future::ready(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorCode::INVALID_REQUEST,
            "Content-Type must be application/json".into(),
        )));
    }
    let (parts, body) = request.into_parts();
    Either::Right(Either::Right(super::posting::posted(
        gate, session, parts, body, next,
    )))
}

/// The `Mcp-Session-Id` the request names; refused when it sends more than one of it or of
/// `Authorization` (which one is meant would be ambiguous: refuse, do not pick).
// The refusal is the response itself, returned at once: boxing it would only add an allocation.
#[allow(clippy::result_large_err)]
fn single_headers(request: &Request) -> Result<Option<String>, Response> {
    let ambiguous = |what: &str| {
        error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("more than one {what} header; send exactly one"),
        )
    };
    let headers = request.headers();
    if headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .nth(1)
        .is_some()
    {
        return Err(ambiguous("Authorization"));
    }
    let mut session_ids = headers.get_all(SESSION_HEADER).iter();
    let session = session_ids
        .next()
        .map(|value| value.to_str().unwrap_or_default().to_owned());
    if session_ids.next().is_some() {
        return Err(ambiguous("Mcp-Session-Id"));
    }
    Ok(session)
}

/// GET (a session's stream) and DELETE (its end), and any other non-POST method.
async fn not_a_post(
    gate: &Gate,
    session: Option<String>,
    request: Request,
    next: Next,
) -> Response {
    let (Some(legacy), Some(session)) = (&gate.legacy, &session) else {
        // rmcp answers 405 for anything but POST; its body becomes JSON below.
        return jsonrpc_errors(next.run(request).await, None).await;
    };
    let (mut parts, body) = request.into_parts();
    let owner = legacy.owner(&mut parts);
    if legacy.sessions.owner_of(session) != Some(owner.clone()) {
        return jsonrpc_errors(session_not_found(), None).await;
    }
    let mut stream = None;
    if parts.method == Method::GET {
        match legacy
            .streams
            .admit(session, inflight::caller(owner, &parts))
        {
            Ok(permit) => stream = Some(permit),
            Err(refusal) => return refused(refusal, None),
        }
    }
    let is_delete = parts.method == Method::DELETE;
    let slot = parts.extensions.get::<ConnectionSlot>().cloned();
    let response = next.run(Request::from_parts(parts, body)).await;
    let response = ended_meanwhile(&legacy.sessions, session, response);
    if is_delete && response.status() == StatusCode::ACCEPTED {
        // python-sdk 1.x logs "Session termination failed: 202" for anything but 200 or
        // 204; the TypeScript SDK accepts any 2xx.
        return empty(StatusCode::NO_CONTENT);
    }
    held(jsonrpc_errors(response, None).await, stream, slot)
}

/// Why a body was not read whole.
enum Unread {
    Body(axum::Error),
    Budget,
}

/// The whole body, within the body deadline, the size limit and the buffered-bytes budget,
/// with the bytes it holds in that budget; a refusal otherwise (and the connection closes,
/// since what is left of the body is unread). A declared `Content-Length` is reserved
/// before anything is read, a chunked body as it grows. A body that does not fit gets `503`
/// at once instead of waiting for room, unless it is small and already arriving
/// ([`SMALL_BODY_BYTES`](super::budget::SMALL_BODY_BYTES)).
#[allow(clippy::result_large_err)] // as `single_headers`
pub(super) async fn read_body(
    limits: Limits,
    bodies: &Arc<BodyBudget>,
    headers: &http::HeaderMap,
    mut body: Body,
) -> Result<(Bytes, Reservation), Response> {
    let busy = || {
        closing(refused(
            Refusal::Server {
                knob: "max_buffered_body_bytes",
                limit: bodies.max(),
            },
            None,
        ))
    };
    let mut held = bodies.reservation();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0)
        .min(limits.max_body_bytes);
    // Once the budget is spent: the instant by which the (small) rest must have arrived.
    let mut small_only = None;
    if !held.cover(declared) {
        if declared > SMALL_BODY_BYTES {
            return Err(busy());
        }
        held.overdraw(declared);
        small_only = Some(tokio::time::Instant::now() + SMALL_BODY_GRACE);
    }
    let read = async {
        let mut chunks = Vec::new();
        let mut total = 0usize;
        loop {
            let frame = match small_only {
                None => body.frame().await,
                Some(deadline) => tokio::time::timeout_at(deadline, body.frame())
                    .await
                    .map_err(|_| Unread::Budget)?,
            };
            let Some(frame) = frame else { break };
            if let Ok(data) = frame.map_err(Unread::Body)?.into_data() {
                total += data.len();
                if !held.cover(total) {
                    if total > SMALL_BODY_BYTES {
                        return Err(Unread::Budget);
                    }
                    held.overdraw(total);
                    small_only.get_or_insert(tokio::time::Instant::now() + SMALL_BODY_GRACE);
                }
                chunks.push(data);
            }
        }
        Ok(concatenated(chunks, total))
    };
    match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok((bytes, held)),
        Ok(Err(Unread::Budget)) => Err(busy()),
        Ok(Err(Unread::Body(error))) if is_length_limit(&error) => Err(closing(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "the request body exceeds this server's {} bytes",
                limits.max_body_bytes
            ),
        ))),
        Ok(Err(Unread::Body(_))) => Err(closing(error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::INVALID_REQUEST,
            "the request body could not be read".into(),
        ))),
        Err(_elapsed) => Err(closing(error_response(
            StatusCode::REQUEST_TIMEOUT,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "the request body did not arrive within {} ms",
                limits.body_timeout.as_millis()
            ),
        ))),
    }
}

/// A POST on an existing session: only its owner gets through, and a call that may wait on
/// the client (a pending legacy call) takes a place in the stream budget.
pub(super) async fn on_session(
    legacy: &Legacy,
    session: &str,
    request: Request,
    next: Next,
    id: Option<RequestId>,
    method: Option<String>,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let owner = legacy.owner(&mut parts);
    if legacy.sessions.owner_of(session) != Some(owner.clone()) {
        return jsonrpc_errors(session_not_found(), id).await;
    }
    let stream = if method
        .as_deref()
        .is_some_and(|method| PENDING_METHODS.contains(&method))
    {
        match legacy
            .streams
            .admit(session, inflight::caller(owner, &parts))
        {
            Ok(permit) => Some(permit),
            Err(refusal) => return refused(refusal, id),
        }
    } else {
        None
    };
    let slot = parts.extensions.get::<ConnectionSlot>().cloned();
    let response = next.run(Request::from_parts(parts, body)).await;
    let response = ended_meanwhile(&legacy.sessions, session, response);
    held(jsonrpc_errors(response, id).await, stream, slot)
}

/// What rmcp answers for an unknown session (the gate then makes it JSON-RPC), so a
/// session that is someone else's cannot be told from one that does not exist.
fn session_not_found() -> Response {
    let mut response = Response::new(Body::from("Not Found: Session not found"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A session whose worker exited (idle timeout) just before or during the request makes
/// rmcp answer 500; by then it is forgotten, and the client gets what an unknown session
/// gets, so it knows to start over.
fn ended_meanwhile(sessions: &Sessions, session: &str, response: Response) -> Response {
    if response.status() == StatusCode::INTERNAL_SERVER_ERROR
        && sessions.owner_of(session).is_none()
    {
        session_not_found()
    } else {
        response
    }
}

/// A refusal for a bound: 503 for the server's cap, 429 for the caller's own.
pub(super) fn refused(refusal: Refusal, id: Option<RequestId>) -> Response {
    let (status, message) = match refusal {
        Refusal::Server { knob, limit } => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("this server is at its limit of {limit} ({knob}); retry later"),
        ),
        Refusal::Caller { knob, limit } => (
            StatusCode::TOO_MANY_REQUESTS,
            format!("this caller is at its limit of {limit} ({knob}); close some first"),
        ),
    };
    let mut response = error_response(status, id, LIMIT_REACHED, message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// A long-lived stream keeps its place in the stream budget while its body lives, and
/// gives its connection's slot back to short requests: the connection closes when the
/// stream ends. Anything that is not a stream releases the place at once.
fn held(
    response: Response,
    permit: Option<sessions::StreamPermit>,
    slot: Option<ConnectionSlot>,
) -> Response {
    let Some(permit) = permit else {
        return response;
    };
    let is_stream = response.status() == StatusCode::OK
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
    if !is_stream {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    if let Some(slot) = slot {
        slot.release();
    }
    parts
        .headers
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    let body = body.into_data_stream().map(move |frame| {
        let _held = &permit;
        frame
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// For responses made outside the gate (the body limit's 413): plain-text errors become
/// JSON-RPC errors.
pub(super) async fn outer_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value.starts_with("application/json") || value.starts_with("text/event-stream")
        });
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let json = jsonrpc_errors(response, None).await;
    // An oversized body was not read: the connection cannot carry another request.
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        closing(json)
    } else {
        json
    }
}

fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

fn is_length_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = source {
        if error.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// Checks that `body` is one JSON-RPC 2.0 message and returns its id (if it has a valid
/// one), or the error response to send instead.
#[cfg(test)]
#[allow(clippy::result_large_err)] // the refusal is the response itself
fn check_message(body: &[u8]) -> Result<Option<RequestId>, Response> {
    check_envelope(body).map(|(id, _method)| id)
}

/// [`check_message`], also returning the method of a request or notification.
#[allow(clippy::result_large_err)] // the refusal is the response itself
pub(super) fn check_envelope(body: &[u8]) -> Result<(Option<RequestId>, Option<String>), Response> {
    let message: Value = serde_json::from_slice(body).map_err(|error| {
        error_response(
            StatusCode::BAD_REQUEST,
            None,
            ErrorCode::PARSE_ERROR,
            format!("the body is not JSON (or not UTF-8): {error}"),
        )
    })?;
    let object = match message {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(invalid_request(
                None,
                "batches are not supported: send one JSON-RPC message per POST",
            ));
        }
        _ => {
            return Err(invalid_request(
                None,
                "a JSON-RPC message must be an object",
            ));
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(id @ Value::String(_)) => serde_json::from_value(id.clone()).ok(),
        Some(Value::Number(number)) if number.is_i64() || number.is_u64() => {
            serde_json::from_value(Value::Number(number.clone())).ok()
        }
        Some(_) => {
            return Err(invalid_request(
                None,
                "the id must be a string or an integer",
            ));
        }
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid_request(id, r#""jsonrpc" must be "2.0""#));
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => Some(method.clone()),
        Some(_) => return Err(invalid_request(id, "the method must be a string")),
        None if object.contains_key("result") || object.contains_key("error") => None,
        None => return Err(invalid_request(id, "the message has no method")),
    };
    Ok((id, method))
}

fn invalid_request(id: Option<RequestId>, message: &str) -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        id,
        ErrorCode::INVALID_REQUEST,
        message.into(),
    )
}

/// A JSON-RPC error response (`"id": null` when the request's id is unknown).
pub(super) fn error_response(
    status: StatusCode,
    id: Option<RequestId>,
    code: ErrorCode,
    message: String,
) -> Response {
    let error = JsonRpcError::new(id, ErrorData::new(code, message, None));
    json_response(
        status,
        serde_json::to_vec(&error).unwrap_or_default().into(),
    )
}

/// A response with a JSON body.
pub(super) fn json_response(status: StatusCode, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Asks hyper to close the connection after this response (its body was not read whole).
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// rmcp's plain-text error responses become JSON-RPC errors; JSON replies lose an empty
/// `elicitationId`. Streams pass untouched.
pub(super) async fn jsonrpc_errors(response: Response, id: Option<RequestId>) -> Response {
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        return response;
    }
    let status = response.status();
    let is_json = content_type.starts_with("application/json");
    if !is_json && !status.is_client_error() && !status.is_server_error() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // Only rmcp's own bodies reach here: a JSON-RPC message or a short error text.
    let Ok(collected) = body.collect().await else {
        return error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            id,
            ErrorCode::INTERNAL_ERROR,
            "the response could not be produced".into(),
        );
    };
    let bytes = collected.to_bytes();
    if is_json {
        parts.headers.remove(header::CONTENT_LENGTH);
        if parts.status == StatusCode::OK && is_request_level_error(&bytes) {
            // rmcp answers a non-negotiated request (e.g. a legacy `initialize`) with 200;
            // the transport spec says these errors are HTTP 400.
            parts.status = StatusCode::BAD_REQUEST;
        }
        let bytes = without_empty_elicitation_ids(bytes);
        return Response::from_parts(parts, Body::from(bytes));
    }
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    let (status, code) = match status {
        // The gate checked Content-Type, so rmcp's 415 means the message did not
        // deserialize as any MCP message.
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (StatusCode::BAD_REQUEST, ErrorCode::INVALID_REQUEST),
        status if status.is_server_error() => (status, ErrorCode::INTERNAL_ERROR),
        status => (status, ErrorCode::INVALID_REQUEST),
    };
    let mut json = error_response(status, id, code, text);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            json.headers_mut().append(name.clone(), value.clone());
        }
    }
    json
}

/// Whether `bytes` is a JSON-RPC error the transport maps to HTTP 400: header mismatch
/// (`-32020`), missing capability (`-32021`), unsupported version (`-32022`).
fn is_request_level_error(bytes: &[u8]) -> bool {
    const NEEDLE: &[u8] = br#""code":-3202"#;
    if !bytes.windows(NEEDLE.len()).any(|window| window == NEEDLE) {
        return false;
    }
    serde_json::from_slice::<Value>(bytes).is_ok_and(|message| {
        message
            .pointer("/error/code")
            .and_then(Value::as_i64)
            .and_then(|code| i32::try_from(code).ok())
            .is_some_and(|code| is_request_level(ErrorCode(code)))
    })
}

/// Whether `code` refuses the request itself (its protocol version, its declared
/// capabilities, its headers against its body): such errors are HTTP 400 (the transport
/// spec), on either path.
pub(super) fn is_request_level(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH
    )
}

/// Removes `"elicitationId": ""` from the URL-mode elicitations of an `input_required`
/// result; anything else is returned unchanged.
pub(super) fn without_empty_elicitation_ids(bytes: Bytes) -> Bytes {
    // The searcher is made once: making it costs more than searching a reply.
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(EMPTY_ELICITATION_ID));
    if FINDER.find(&bytes).is_none() {
        return bytes;
    }
    let Ok(mut message) = serde_json::from_slice::<Value>(&bytes) else {
        return bytes;
    };
    let Some(requests) = message
        .pointer_mut("/result/inputRequests")
        .and_then(Value::as_object_mut)
    else {
        return bytes;
    };
    let mut changed = false;
    for request in requests.values_mut() {
        if let Some(params) = request.get_mut("params").and_then(Value::as_object_mut)
            && params.get("mode").and_then(Value::as_str) == Some("url")
            && params.get("elicitationId").and_then(Value::as_str) == Some("")
        {
            params.remove("elicitationId");
            changed = true;
        }
    }
    match changed.then(|| serde_json::to_vec(&message)) {
        Some(Ok(rewritten)) => Bytes::from(rewritten),
        _ => bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(response: Response) -> (StatusCode, i32) {
        let status = response.status();
        let body = futures::executor::block_on(response.into_body().collect())
            .unwrap()
            .to_bytes();
        let message: Value = serde_json::from_slice(&body).unwrap();
        (status, message["error"]["code"].as_i64().unwrap() as i32)
    }

    #[test]
    fn envelopes_are_checked_like_json_rpc_asks() {
        let refused = [
            (&b"{not json"[..], -32700),
            (b"\xff\xfe", -32700),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
                -32600,
            ),
            (br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#, -32600),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
                -32600,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
                -32600,
            ),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
                -32600,
            ),
            (
                br#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#,
                -32600,
            ),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"tools/list"}"#,
                -32600,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":7}"#, -32600),
            (br#"{"jsonrpc":"2.0","id":1}"#, -32600),
            (b"42", -32600),
        ];
        for (body, code) in refused {
            let response = check_message(body).expect_err("refused");
            assert_eq!(
                code_of(response),
                (StatusCode::BAD_REQUEST, code),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        assert_eq!(
            check_message(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#).unwrap(),
            Some(RequestId::String("a".into()))
        );
        assert_eq!(
            check_message(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#).unwrap(),
            None
        );
        // A client's answer to a legacy session's request has no method.
        for response in [
            &br#"{"jsonrpc":"2.0","id":4,"result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no"}}"#,
        ] {
            assert!(check_message(response).unwrap().is_some());
        }
    }

    #[test]
    fn only_empty_url_elicitation_ids_are_dropped() {
        let body = Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"consent":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://x","elicitationId":""}}}}}"#,
        );
        let out: Value = serde_json::from_slice(&without_empty_elicitation_ids(body)).unwrap();
        let params = &out["result"]["inputRequests"]["consent"]["params"];
        assert!(params.get("elicitationId").is_none(), "{out}");
        assert_eq!(params["url"], "https://x");

        let untouched = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(without_empty_elicitation_ids(untouched.clone()), untouched);
    }

    fn body_of(response: Response) -> (StatusCode, http::HeaderMap, Vec<u8>) {
        let (parts, body) = response.into_parts();
        let body = futures::executor::block_on(body.collect())
            .unwrap()
            .to_bytes()
            .to_vec();
        (parts.status, parts.headers, body)
    }

    fn message_of(body: &[u8]) -> String {
        let message: Value = serde_json::from_slice(body).unwrap();
        message["error"]["message"].as_str().unwrap().to_string()
    }

    fn plain(
        status: StatusCode,
        content_type: Option<&'static str>,
        text: &'static str,
    ) -> Response {
        let mut response = Response::new(Body::from(text));
        *response.status_mut() = status;
        if let Some(content_type) = content_type {
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        }
        response
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let batch = check_message(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap_err();
        assert!(message_of(&body_of(batch).2).starts_with("batches are not supported"));
        let scalar = check_message(b"42").unwrap_err();
        assert_eq!(
            message_of(&body_of(scalar).2),
            "a JSON-RPC message must be an object"
        );
    }

    #[test]
    fn integer_ids_are_accepted_whatever_their_sign_or_size() {
        assert_eq!(
            check_message(br#"{"jsonrpc":"2.0","id":-3,"method":"ping"}"#).unwrap(),
            Some(RequestId::Number(-3))
        );
        // Beyond i64: still an integer id, so not refused (rmcp decides what it makes of it).
        let huge = format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, u64::MAX);
        assert!(check_message(huge.as_bytes()).is_ok());
    }

    #[test]
    fn json_is_recognised_by_its_media_type_essence() {
        let with = |value: Option<&'static str>| {
            let mut headers = http::HeaderMap::new();
            if let Some(value) = value {
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(value));
            }
            is_json(&headers)
        };
        assert!(with(Some("application/json")));
        assert!(with(Some("Application/JSON ; charset=utf-8")));
        assert!(!with(Some("application/jsonl")));
        assert!(!with(Some("text/plain")));
        assert!(!with(None));
    }

    #[test]
    fn plain_text_errors_become_json_rpc_errors_and_the_rest_passes() {
        let convert =
            |response| body_of(futures::executor::block_on(jsonrpc_errors(response, None)));

        let (status, headers, body) = convert(plain(StatusCode::OK, Some("text/plain"), "fine"));
        assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"fine"[..]));
        assert_eq!(headers[header::CONTENT_TYPE], "text/plain");
        let (status, _, body) = convert(plain(
            StatusCode::OK,
            Some("text/event-stream"),
            "data: x\n\n",
        ));
        assert_eq!(
            (status, body.as_slice()),
            (StatusCode::OK, &b"data: x\n\n"[..])
        );
        let (status, _, body) =
            convert(plain(StatusCode::NOT_FOUND, Some("text/event-stream"), "x"));
        assert_eq!(
            (status, body.as_slice()),
            (StatusCode::NOT_FOUND, &b"x"[..])
        );

        let mut not_found = plain(StatusCode::NOT_FOUND, Some("text/plain"), " Not Found\n");
        not_found
            .headers_mut()
            .insert("x-extra", HeaderValue::from_static("kept"));
        let (status, headers, body) = convert(not_found);
        assert_eq!(
            (status, code_of_body(&body)),
            (StatusCode::NOT_FOUND, -32600)
        );
        assert_eq!(message_of(&body), "Not Found");
        assert_eq!(headers["x-extra"], "kept");
        assert_eq!(headers.get_all(header::CONTENT_TYPE).iter().count(), 1);
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");

        let (status, _, body) = convert(plain(StatusCode::SERVICE_UNAVAILABLE, None, "busy"));
        assert_eq!(
            (status, code_of_body(&body)),
            (StatusCode::SERVICE_UNAVAILABLE, -32603)
        );
        let (status, _, body) = convert(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Some("text/plain"),
            "no",
        ));
        assert_eq!(
            (status, code_of_body(&body)),
            (StatusCode::BAD_REQUEST, -32600)
        );
    }

    #[test]
    fn only_request_level_json_rpc_errors_turn_a_200_into_a_400() {
        let convert = |text: &'static str| {
            let response = plain(StatusCode::OK, Some("application/json"), text);
            body_of(futures::executor::block_on(jsonrpc_errors(response, None)))
        };
        let missing_capability =
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}"#;
        let (status, _, body) = convert(missing_capability);
        assert_eq!(
            (status, body.as_slice()),
            (StatusCode::BAD_REQUEST, missing_capability.as_bytes())
        );
        let not_found = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}"#;
        let (status, _, body) = convert(not_found);
        assert_eq!(
            (status, body.as_slice()),
            (StatusCode::OK, not_found.as_bytes())
        );
    }

    #[test]
    fn outer_errors_convert_plain_text_and_close_after_an_unread_body() {
        let outer = |response| body_of(futures::executor::block_on(outer_errors(response)));

        let (status, headers, body) = outer(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            Some("text/plain"),
            "too big",
        ));
        assert_eq!(
            (status, code_of_body(&body)),
            (StatusCode::PAYLOAD_TOO_LARGE, -32600)
        );
        assert_eq!(headers[header::CONNECTION], "close");

        let (status, headers, body) =
            outer(plain(StatusCode::NOT_FOUND, Some("text/plain"), "gone"));
        assert_eq!(
            (status, code_of_body(&body)),
            (StatusCode::NOT_FOUND, -32600)
        );
        assert!(headers.get(header::CONNECTION).is_none());

        let (status, _, body) = outer(plain(StatusCode::INTERNAL_SERVER_ERROR, None, "boom"));
        assert_eq!(
            (status, code_of_body(&body)),
            (StatusCode::INTERNAL_SERVER_ERROR, -32603)
        );

        let (status, _, body) = outer(plain(StatusCode::OK, Some("text/plain"), "fine"));
        assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"fine"[..]));
    }

    fn code_of_body(body: &[u8]) -> i64 {
        let message: Value = serde_json::from_slice(body).unwrap();
        message["error"]["code"].as_i64().unwrap()
    }
}
