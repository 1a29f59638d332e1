//! The native path's response: the server's answer to one request, written as one JSON
//! body (an internal error if the server stops first), with the HTTP status the transport
//! gives it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use rmcp::ErrorData;
use rmcp::model::{
    ErrorCode, JsonRpcMessage, JsonRpcResponse, RequestId, ServerJsonRpcMessage, ServerResult,
};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::asking::AskingReply;
use super::budget::Reservation;
use super::gate::{error_response, json_response, without_empty_elicitation_ids};
use super::stateless::RMCP_SERVICE;

/// What a request's response needs besides the server's answer.
pub(super) struct Answering {
    pub(super) id: RequestId,
    /// The body's bytes in the buffered-bytes budget, given back once the answer is made.
    pub(super) held: Reservation,
    /// Cancelled when the server stops: the request ends with an internal error.
    pub(super) cancel: CancellationToken,
}

impl Answering {
    /// The response to `handled` (the server's answer), as one JSON body; an internal
    /// error if the server stops first.
    pub(super) fn respond<H>(self, handled: H) -> Responding<H>
    where
        H: Future<Output = Result<ServerResult, ErrorData>>,
    {
        let Answering { id, held, cancel } = self;
        Responding {
            handled,
            stopped: cancel.cancelled_owned(),
            waiting: Some((id, held)),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request's answer, then its response. A future of its own rather than an
    /// `async fn` around `tokio::select!`, which would keep the answer's future twice (as
    /// its parameter and as the local the select moves it into): kilobytes per request.
    pub(super) struct Responding<H> {
        #[pin]
        handled: H,
        #[pin]
        stopped: WaitForCancellationFutureOwned,
        // The request's id and its body's bytes in the budget, until the response is made.
        waiting: Option<(RequestId, Reservation)>,
    }
}

impl<H> Future for Responding<H>
where
    H: Future<Output = Result<ServerResult, ErrorData>>,
{
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = self.project();
        if this.waiting.is_none() {
            // Polled after its response was made: there is nothing more to make.
            return Poll::Pending;
        }
        let response = match this.handled.poll(cx) {
            Poll::Ready(result) => this.waiting.take().map(|(id, held)| {
                drop(held);
                answered(id, result)
            }),
            Poll::Pending => match this.stopped.poll(cx) {
                Poll::Ready(()) => this.waiting.take().map(|(id, _)| {
                    error_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        Some(id),
                        ErrorCode::INTERNAL_ERROR,
                        "the server stopped before the request was answered".into(),
                    )
                }),
                Poll::Pending => return Poll::Pending,
            },
        };
        response.map_or(Poll::Pending, Poll::Ready)
    }
}

/// The response to the server's answer to request `id`, as one JSON body.
fn answered(id: RequestId, result: Result<ServerResult, ErrorData>) -> Response {
    let message: ServerJsonRpcMessage = match result {
        Ok(result) => {
            tracing::debug!(target: RMCP_SERVICE, %id, ?result, "response message");
            JsonRpcMessage::response(result, id)
        }
        Err(error) => {
            tracing::warn!(target: RMCP_SERVICE, %id, ?error, "response error");
            JsonRpcMessage::error(error, Some(id))
        }
    };
    written(&message)
}

/// The reply as one JSON body, with the HTTP status the transport gives it.
fn written(message: &ServerJsonRpcMessage) -> Response {
    let status = match message {
        JsonRpcMessage::Error(error) => match error.error.code {
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
            ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            _ => StatusCode::OK,
        },
        _ => StatusCode::OK,
    };
    // Only a reply that asks carries elicitations, and so absent elicitation ids to drop.
    // The buffer starts at about a reply's size: grown from serde_json's 128 bytes, it
    // would be copied over and again while it is written.
    let body = match message {
        JsonRpcMessage::Response(JsonRpcResponse {
            id,
            result: ServerResult::InputRequiredResult(result),
            ..
        }) => {
            let state = result.request_state.as_ref().map_or(0, String::len);
            let mut body = Vec::with_capacity(REPLY_BYTES + state);
            serde_json::to_writer(&mut body, &AskingReply { id, result })
                .map(|()| without_empty_elicitation_ids(Bytes::from(body)))
        }
        _ => {
            let mut body = Vec::with_capacity(REPLY_BYTES);
            serde_json::to_writer(&mut body, message).map(|()| Bytes::from(body))
        }
    };
    match body {
        Ok(body) => json_response(status, body),
        Err(error) => error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            ErrorCode::INTERNAL_ERROR,
            format!("the response could not be produced: {error}"),
        ),
    }
}

/// What a reply's buffer starts with (besides the `requestState` it carries): a typical
/// reply fits, and a larger one grows it. Under a kilobyte: glibc's allocator serves
/// smaller blocks from its per-thread cache, and sorts its free lists for larger ones.
const REPLY_BYTES: usize = 640;

#[cfg(test)]
mod tests {
    use super::*;

    /// The request's answer, then its response: the body's bytes go back to the budget
    /// once the answer is made; a server that stops first answers an internal error; a
    /// response made is made once.
    #[tokio::test]
    async fn a_response_follows_its_answer_or_the_servers_stop() {
        use super::super::budget::BodyBudget;
        use futures::FutureExt as _;
        let budget = BodyBudget::new(1024);
        let answering = |cancel: &CancellationToken| {
            let mut held = budget.reservation();
            assert!(held.cover(100));
            Answering {
                id: RequestId::Number(7),
                held,
                cancel: cancel.clone(),
            }
        };
        let body = |response: Response| async move {
            let status = response.status();
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            (
                status,
                serde_json::from_slice::<serde_json::Value>(&bytes).unwrap(),
            )
        };

        let cancel = CancellationToken::new();
        let (answer, answered) = futures::channel::oneshot::channel::<()>();
        let handled = async move {
            answered.await.unwrap();
            Ok(ServerResult::empty(()))
        };
        let mut responding = Box::pin(answering(&cancel).respond(handled));
        assert!((&mut responding).now_or_never().is_none());
        assert_eq!(budget.held(), 100, "held while the answer is being made");
        answer.send(()).unwrap();
        let (status, json) = body(responding.as_mut().now_or_never().unwrap()).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(json["id"], 7);
        assert_eq!(json["result"], serde_json::json!({}));
        assert_eq!(budget.held(), 0, "given back once the answer is made");
        // Polled again, it makes nothing more (and does not poll the finished answer).
        assert!(responding.as_mut().now_or_never().is_none());

        let cancel = CancellationToken::new();
        let never = std::future::pending::<Result<ServerResult, ErrorData>>();
        let mut responding = Box::pin(answering(&cancel).respond(never));
        assert!((&mut responding).now_or_never().is_none());
        cancel.cancel();
        let stopped = responding.as_mut().now_or_never();
        let (status, json) = body(stopped.expect("answered once the server stops")).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(json["id"], 7);
        assert_eq!(json["error"]["code"], ErrorCode::INTERNAL_ERROR.0);
        assert_eq!(
            json["error"]["message"],
            "the server stopped before the request was answered"
        );
    }
}
