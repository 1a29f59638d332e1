//! A JSON POST once the gate has checked its head: its body read within the budgets, its
//! envelope checked, then routed (natively, to rmcp statelessly, or to a legacy session)
//! and served.

use std::future::Future;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use futures::future::BoxFuture;
use rmcp::model::RequestId;

use super::budget::{Reservation, held_body};
use super::detach::detached;
use super::endpoint::Next;
use super::envelope::Envelope;
use super::gate::{Gate, Legacy, check_envelope, jsonrpc_errors, on_session, read_body, refused};
use super::inflight::InFlightPermit;
use super::sessions;

/// A JSON POST: its body read, its envelope checked, then served. An `async` block, not
/// an `async fn`: those keep each parameter twice.
#[allow(clippy::manual_async_fn)]
pub(super) fn posted(
    gate: &Gate,
    session: Option<String>,
    parts: http::request::Parts,
    body: Body,
    next: Next,
) -> impl Future<Output = Response> + Send + '_ {
    async move {
        let (body, held) = match read_body(gate.limits, &gate.bodies, &parts.headers, body).await {
            Ok(read) => read,
            Err(refusal) => return refusal,
        };
        match routed(gate, session.is_some(), parts, body, held, &next) {
            Routed::Answered(response) => response,
            Routed::Native { serving, in_flight } => {
                detached(&gate.detached_work, serving, in_flight).await
            }
            Routed::Rmcp {
                serving,
                in_flight,
                id,
            } => {
                let response = detached(&gate.detached_work, serving, in_flight).await;
                Box::pin(jsonrpc_errors(response, id)).await
            }
            Routed::Legacy {
                legacy,
                request,
                id,
                method,
                in_flight,
            } => {
                let response = match &session {
                    Some(session) => {
                        Box::pin(on_session(legacy, session, request, next, id, method)).await
                    }
                    None => Box::pin(opening_session(legacy, request, next, id)).await,
                };
                drop(in_flight);
                response
            }
        }
    }
}

/// Where a POST goes once its body is read, decided at once: its envelope and the request
/// read from it end here, before anything is awaited, so no request's future keeps them.
enum Routed<'g> {
    /// Refused.
    Answered(Response),
    /// Served natively.
    Native {
        serving: BoxFuture<'static, Response>,
        in_flight: Option<InFlightPermit>,
    },
    /// Served statelessly by rmcp, its errors then worded as JSON-RPC (for `id`).
    Rmcp {
        serving: BoxFuture<'static, Response>,
        in_flight: Option<InFlightPermit>,
        id: Option<RequestId>,
    },
    /// A legacy session's request, or one that opens a session.
    Legacy {
        legacy: &'g Legacy,
        request: Request,
        id: Option<RequestId>,
        method: Option<String>,
        in_flight: Option<InFlightPermit>,
    },
}

/// Where the POST with `parts` and `body` goes (see [`Routed`]).
fn routed<'g>(
    gate: &'g Gate,
    in_session: bool,
    mut parts: http::request::Parts,
    body: Bytes,
    held: Reservation,
    next: &Next,
) -> Routed<'g> {
    // The one parse of the body; what it does not understand, the envelope check words. A
    // request that may be served natively has its round-trip params read with it.
    let read_params = !in_session && gate.stateless.may_serve(&parts.headers);
    let envelope = Envelope::parse(&body, read_params);
    let (id, method) = match envelope.as_ref().and_then(Envelope::id_and_method) {
        Some(checked) => checked,
        None => match check_envelope(&body) {
            Ok(checked) => checked,
            Err(refusal) => return Routed::Answered(refusal),
        },
    };
    // Held until the response is made: the caller's place under its in-flight cap.
    let in_flight = match gate.in_flight.admit(&mut parts) {
        Ok(permit) => permit,
        Err(refusal) => return Routed::Answered(refused(refusal, id)),
    };
    let legacy = gate
        .legacy
        .as_deref()
        .filter(|_| in_session || method.as_deref() == Some("initialize"));
    let Some(legacy) = legacy else {
        // Stateless: natively when the server answers it itself, else through rmcp.
        let native = envelope.and_then(|envelope| gate.stateless.prepare(&parts, envelope));
        if let Some(prepared) = native {
            // The request is read into its own types: the body's bytes go now, not when
            // the round ends (the reservation stays with the request until its answer).
            drop(body);
            let serving = gate.stateless.serve(prepared, parts, held);
            return Routed::Native { serving, in_flight };
        }
        // The bytes stay in the budget until rmcp has read and dropped the body.
        let request = Request::from_parts(parts, held_body(body, held));
        let serving = Box::pin(next.clone().run(request));
        return Routed::Rmcp {
            serving,
            in_flight,
            id,
        };
    };
    drop(envelope);
    Routed::Legacy {
        legacy,
        request: Request::from_parts(parts, held_body(body, held)),
        id,
        method,
        in_flight,
    }
}

/// A request that opens a legacy session: its seat first, then rmcp's answer.
async fn opening_session(
    legacy: &Legacy,
    request: Request,
    next: Next,
    id: Option<RequestId>,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let seat = match legacy.sessions.admit(legacy.owner(&mut parts)) {
        Ok(seat) => seat,
        Err(refusal) => return refused(refusal, id),
    };
    let request = Request::from_parts(parts, body);
    let response = sessions::opening(seat, next.run(request)).await;
    jsonrpc_errors(response, id).await
}
