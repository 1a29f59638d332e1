//! The transport floor: a bare hyper 1 server that answers every round of every scenario
//! with precomputed bytes, so a row shows how far above the cost of HTTP itself each real
//! server is.
//!
//! The bodies are the exact results the hand-written rmcp server ([`HandWritten`]) gives
//! for the scripted user's answers — real questions, a real signed `requestState` — worked
//! out once per scenario (at the first request of that scenario, during the load
//! generator's unmeasured warm-up) and kept as bytes. Per request the floor reads the body,
//! finds the JSON-RPC `id` and the `requestState` (or, on a first call, the tool's name and
//! `n`) by scanning the bytes — no JSON parse, no cryptography, no check of the answers —
//! and writes `{"jsonrpc":"2.0","id":ID,"result":PRECOMPUTED}` as `application/json`.
//! It is what any server must at least do per round: accept, read a body, write a reply.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities, ServerResult};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::hand_written::HandWritten;
use crate::scenario::{Scenario, answer};

/// Longest survey the floor will precompute (its bodies grow as n²).
const MAX_SURVEY: u32 = 200;

/// Precomputed results, by what identifies the request: `tool` or `survey:N` for a first
/// call, the `requestState` for a retry.
#[derive(Default)]
pub struct Floor {
    replies: RwLock<HashMap<String, Bytes>>,
}

impl Floor {
    /// The reply body (the `result` only) for a request body, computing the scenario's
    /// replies the first time it is seen; `None` for a request the floor cannot answer.
    ///
    /// ```
    /// let floor = mrtr_bench::floor::Floor::default();
    /// let first = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"survey","arguments":{"n":1}}}"#;
    /// let result = floor.result_for(first).unwrap();
    /// let result: serde_json::Value = serde_json::from_slice(&result).unwrap();
    /// assert_eq!(result["resultType"], "input_required");
    /// assert!(floor.result_for(b"{}").is_none());
    /// ```
    pub fn result_for(&self, body: &[u8]) -> Option<Bytes> {
        let key = match string_after(body, b"\"requestState\":\"") {
            Some(state) => std::str::from_utf8(state).ok()?.to_string(),
            None => first_call_key(body)?,
        };
        if let Some(found) = self.replies.read().ok()?.get(&key) {
            return Some(found.clone());
        }
        let scenario: Scenario = key.parse().ok()?;
        let computed = precompute(scenario).ok()?;
        let mut replies = self.replies.write().ok()?;
        replies.extend(computed);
        replies.get(&key).cloned()
    }
}

/// `wizard`, `profile` or `survey:N` from a first call's tool name and arguments.
fn first_call_key(body: &[u8]) -> Option<String> {
    let tool = std::str::from_utf8(string_after(body, b"\"name\":\"")?).ok()?;
    match tool {
        "survey" => {
            let n = digits_after(body, b"\"n\":")?;
            let n: u32 = std::str::from_utf8(n).ok()?.parse().ok()?;
            (n <= MAX_SURVEY).then(|| format!("survey:{n}"))
        }
        "wizard" | "profile" => Some(tool.to_string()),
        _ => None,
    }
}

/// The bytes of a JSON string value following `marker` (no escapes expected).
fn string_after<'a>(body: &'a [u8], marker: &[u8]) -> Option<&'a [u8]> {
    let start = find(body, marker)? + marker.len();
    let length = body[start..].iter().position(|&b| b == b'"')?;
    Some(&body[start..start + length])
}

/// The bytes of a number (or a quoted id) following `marker`, up to `,` or `}`.
fn digits_after<'a>(body: &'a [u8], marker: &[u8]) -> Option<&'a [u8]> {
    let start = find(body, marker)? + marker.len();
    let length = body[start..].iter().position(|&b| b == b',' || b == b'}')?;
    let value = body[start..start + length].trim_ascii();
    (!value.is_empty()).then_some(value)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Every reply of one flow of `scenario` from the hand-written server, keyed as
/// [`Floor::result_for`] looks them up.
fn precompute(scenario: Scenario) -> Result<Vec<(String, Bytes)>, String> {
    let server = HandWritten::new().map_err(|e| e.to_string())?;
    let capabilities: ClientCapabilities =
        serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}, "sampling": {}}))
            .map_err(|e| e.to_string())?;
    let mut key = scenario.to_string();
    if !matches!(scenario, Scenario::Survey(_)) {
        key = scenario.tool().to_string();
    }
    let mut replies = Vec::new();
    let mut params =
        CallToolRequestParams::new(scenario.tool()).with_arguments(scenario.arguments());
    for round in 1..=scenario.requests_per_flow() as usize {
        let reply = server
            .call(&params, &capabilities)
            .map_err(|e| e.message.to_string())?;
        let bytes =
            serde_json::to_vec(&ServerResult::from(reply.clone())).map_err(|e| e.to_string())?;
        replies.push((key, Bytes::from(bytes)));
        let CallToolResponse::InputRequired(asked) = reply else {
            break;
        };
        let questions = serde_json::to_value(&asked.input_requests).map_err(|e| e.to_string())?;
        let answers = questions
            .as_object()
            .ok_or("inputRequests is not an object")?
            .iter()
            .map(|(key, request)| Ok((key.clone(), answer(request, round)?)))
            .collect::<Result<_, String>>()?;
        key = asked.request_state.clone().ok_or("no requestState")?;
        params.request_state = asked.request_state;
        params.input_responses = Some(answers);
    }
    Ok(replies)
}

async fn handle(
    floor: Arc<Floor>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    let (Some(id), Some(result)) = (digits_after(&body, b"\"id\":"), floor.result_for(&body))
    else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let mut reply = Vec::with_capacity(40 + id.len() + result.len());
    reply.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    reply.extend_from_slice(id);
    reply.extend_from_slice(br#","result":"#);
    reply.extend_from_slice(&result);
    reply.push(b'}');
    let mut response = Response::new(Full::new(Bytes::from(reply)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

/// Serves the floor on `addr` (any path), one task per connection, `TCP_NODELAY` on.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let (addr, _task) = mrtr_bench::floor::serve("127.0.0.1:0".parse().unwrap()).await?;
/// # Ok(()) }
/// ```
pub async fn serve(addr: SocketAddr) -> io::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let floor = Arc::new(Floor::default());
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let floor = floor.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| handle(floor.clone(), request));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((bound, task))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_scan_finds_ids_states_and_first_calls() {
        let body = br#"{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"survey","arguments":{"n":12},"requestState":"rs1.abc"}}"#;
        assert_eq!(digits_after(body, b"\"id\":"), Some(&b"17"[..]));
        assert_eq!(
            string_after(body, b"\"requestState\":\""),
            Some(&b"rs1.abc"[..])
        );
        assert_eq!(first_call_key(body).as_deref(), Some("survey:12"));
        let wizard = br#"{"id":"a","params":{"name":"wizard","arguments":{"service":"api"}}}"#;
        assert_eq!(first_call_key(wizard).as_deref(), Some("wizard"));
        assert_eq!(first_call_key(br#"{"params":{"name":"other"}}"#), None);
    }

    #[test]
    fn a_flow_walks_through_its_precomputed_replies() {
        let replies = precompute(Scenario::Survey(3)).unwrap();
        assert_eq!(replies.len(), 4);
        assert_eq!(replies[0].0, "survey:3");
        let last: Value = serde_json::from_slice(&replies[3].1).unwrap();
        assert_eq!(last["content"][0]["text"], "answer1,answer2,answer3");
    }
}
