//! The native path's response: the server's answer to one request, written as one JSON
//! body (an internal error if the server stops first), with the HTTP status the transport
//! gives it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use rmcp::ErrorData;
use rmcp::model::{
    ErrorCode, JsonRpcMessage, JsonRpcResponse, MetaObject, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::budget::Reservation;
use super::gate::{error_response, is_request_level, json_response, without_empty_elicitation_ids};
use super::stateless::RMCP_SERVICE;
use crate::server::asking::AskingReply;
use crate::server::mcp_server::RecordSlot;
use crate::server::stamp::Stamp;

/// What a request's response needs besides the server's answer.
pub(super) struct Answering {
    pub(super) id: RequestId,
    /// The body's bytes in the buffered-bytes budget, given back once the answer is made.
    pub(super) held: Reservation,
    /// Cancelled when the server stops: the request ends with an internal error.
    pub(super) cancel: CancellationToken,
}

impl Answering {
    /// The response to `handled` (the server's answer), as one JSON body with `stamp` in
    /// its result's `_meta` (written from the record a recorded round leaves in
    /// `record_slot`); an internal error if the server stops first.
    pub(super) fn respond<H>(
        self,
        handled: H,
        stamp: Arc<Stamp>,
        record_slot: Option<RecordSlot>,
    ) -> Responding<H>
    where
        H: Future<Output = Result<ServerResult, ErrorData>>,
    {
        let Answering { id, held, cancel } = self;
        Responding {
            handled,
            stopped: cancel.cancelled_owned(),
            waiting: Some((id, held)),
            stamp,
            record_slot,
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
        // What the result's `_meta` carries, added as the result is written.
        stamp: Arc<Stamp>,
        // Where a round the ledger recorded leaves its record.
        record_slot: Option<RecordSlot>,
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
                let record = this.record_slot.as_ref().and_then(|slot| slot.get());
                answered(id, result, this.stamp, record.map(Vec::as_slice))
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

/// The response to the server's answer to request `id`, as one JSON body, its result
/// stamped; written from `record` when the ledger recorded it.
fn answered(
    id: RequestId,
    mut result: Result<ServerResult, ErrorData>,
    stamp: &Stamp,
    record: Option<&[u8]>,
) -> Response {
    if let (Ok(result), Some(record)) = (&result, record)
        && let Some(body) = from_record(&id, result, record)
    {
        tracing::debug!(target: RMCP_SERVICE, %id, ?result, "response message");
        return json_response(StatusCode::OK, body);
    }
    // A round's result with a `_meta` of its own is stamped into it; one without has the
    // stamp written as its `_meta` (no copy of the stamp's values).
    let mut unstamped = false;
    if let Ok(result) = &mut result
        && let Some(meta) = stamped_meta(result)
    {
        match meta {
            Some(_) => stamp.apply(meta),
            None => unstamped = true,
        }
    }
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
    written(&message, unstamped.then_some(stamp))
}

/// The `_meta` of a result a round makes (the results every reply stamps), if `result`
/// is one; the others are stamped where they are made.
fn stamped_meta(result: &mut ServerResult) -> Option<&mut Option<MetaObject>> {
    match result {
        ServerResult::CallToolResult(result) => Some(&mut result.meta),
        ServerResult::GetPromptResult(result) => Some(&mut result.meta),
        ServerResult::ReadResourceResult(result) => Some(&mut result.meta),
        ServerResult::InputRequiredResult(result) => Some(&mut result.meta),
        _ => None,
    }
}

/// The reply carrying `result` (a round's result without `_meta`, unstamped) written from
/// its `record` (the ledger's, made with the stamp as text): the bytes [`written`] would
/// write, without encoding the result again. `None` when `record` is not the record of
/// such a result.
fn from_record(id: &RequestId, result: &ServerResult, record: &[u8]) -> Option<Bytes> {
    let variant: &[u8] = match result {
        ServerResult::InputRequiredResult(result) if result.meta.is_none() => b"InputRequired",
        ServerResult::CallToolResult(result) if result.meta.is_none() => b"Complete",
        ServerResult::GetPromptResult(result) if result.meta.is_none() => b"Complete",
        ServerResult::ReadResourceResult(result) if result.meta.is_none() => b"Complete",
        _ => return None,
    };
    // `{"<variant>":<result>}`
    let inner = record
        .strip_prefix(b"{\"")?
        .strip_prefix(variant)?
        .strip_prefix(b"\":")?
        .strip_suffix(b"}")?;
    let mut body = Vec::with_capacity(inner.len() + 48);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut body, id).ok()?;
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(inner);
    body.push(b'}');
    let body = Bytes::from(body);
    Some(match result {
        // As `written` does for a reply that asks.
        ServerResult::InputRequiredResult(_) => without_empty_elicitation_ids(body),
        _ => body,
    })
}

/// The reply as one JSON body, with the HTTP status the transport gives it, and `stamp`,
/// when given, written as its result's `_meta` (a round's result that has none).
fn written(message: &ServerJsonRpcMessage, stamp: Option<&Stamp>) -> Response {
    let status = match message {
        JsonRpcMessage::Error(error) => match error.error.code {
            code if is_request_level(code) => StatusCode::BAD_REQUEST,
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
            let stamp = stamp.map(Stamp::written);
            serde_json::to_writer(&mut body, &AskingReply { id, result, stamp })
                .map(|()| without_empty_elicitation_ids(Bytes::from(body)))
        }
        JsonRpcMessage::Response(JsonRpcResponse { id, result, .. }) if let Some(stamp) = stamp => {
            with_meta(id, result, stamp).map(Bytes::from)
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

/// The JSON-RPC response carrying `result`, as rmcp writes it, with `stamp` written as the
/// result's `_meta` (which it does not have).
fn with_meta(id: &RequestId, result: &ServerResult, stamp: &Stamp) -> serde_json::Result<Vec<u8>> {
    let mut body = Vec::with_capacity(REPLY_BYTES);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut body, id)?;
    body.extend_from_slice(br#","result":"#);
    let start = body.len();
    serde_json::to_writer(&mut body, result)?;
    if !stamp.write_into(&mut body, start) {
        return Err(serde::ser::Error::custom("a result that is not an object"));
    }
    body.push(b'}');
    Ok(body)
}

/// What a reply's buffer starts with (besides the `requestState` it carries): a typical
/// reply fits, and a larger one grows it. Under a kilobyte: glibc's allocator serves
/// smaller blocks from its per-thread cache, and sorts its free lists for larger ones.
const REPLY_BYTES: usize = 640;

#[cfg(test)]
mod tests {
    use rmcp::model::Implementation;

    use super::*;

    /// The request's answer, then its response: the body's bytes go back to the budget
    /// once the answer is made; a server that stops first answers an internal error; a
    /// response made is made once.
    #[tokio::test]
    async fn a_response_follows_its_answer_or_the_servers_stop() {
        use super::super::budget::BodyBudget;
        use futures::FutureExt as _;
        let budget = BodyBudget::new(1024);
        let stamp = Arc::new(Stamp::new(&Implementation::new("demo", "1"), None));
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
        let mut responding = Box::pin(answering(&cancel).respond(handled, stamp.clone(), None));
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
        let mut responding = Box::pin(answering(&cancel).respond(never, stamp.clone(), None));
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

    /// A round's result is written with the stamp in its `_meta`: what rmcp writes for the
    /// result stamped beforehand, and a `_meta` of its own keeps its entries.
    #[test]
    fn a_rounds_result_is_written_stamped() {
        use rmcp::model::{
            CallToolResult, ContentBlock, GetPromptResult, InputRequiredResult, ReadResourceResult,
        };
        let stamp = Stamp::new(&Implementation::new("demo", "1"), Some("node-a".into()));
        let id = RequestId::Number(3);
        let mut own = MetaObject::default();
        own.0.insert("trace".into(), serde_json::json!("t"));
        let mut with_own = CallToolResult::success(vec![ContentBlock::text("hi")]);
        with_own.meta = Some(own);
        let results = [
            ServerResult::CallToolResult(CallToolResult::success(vec![ContentBlock::text("hi")])),
            ServerResult::CallToolResult(with_own),
            ServerResult::GetPromptResult(GetPromptResult::new(Vec::new())),
            ServerResult::ReadResourceResult(ReadResourceResult::new(Vec::new())),
            ServerResult::InputRequiredResult(InputRequiredResult::new(None, Some("s".into()))),
            ServerResult::empty(()),
        ];
        for result in results {
            let mut expected = result.clone();
            if let Some(meta) = stamped_meta(&mut expected) {
                stamp.apply(meta);
            }
            let expected = serde_json::to_value(JsonRpcMessage::<
                rmcp::model::ServerRequest,
                ServerResult,
                rmcp::model::ServerNotification,
            >::response(expected, id.clone()))
            .unwrap();
            let response = answered(id.clone(), Ok(result), &stamp, None);
            let bytes =
                futures::executor::block_on(axum::body::to_bytes(response.into_body(), usize::MAX))
                    .unwrap();
            let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(json, expected);
        }
        // An empty object takes the entry without a comma.
        let empty = with_meta(&id, &ServerResult::empty(()), &stamp).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(json["result"]["_meta"]["io.mrtr/instance"], "node-a");
    }

    /// A recorded round's reply written from its record is, byte for byte, the reply
    /// written from the result, for every result a round makes (a reply that asks with
    /// elicitations, whose empty ids the writer drops, included); anything else, or a record
    /// of another kind of reply, is written from the result.
    #[test]
    fn a_recorded_reply_is_written_from_its_record_as_from_its_result() {
        use rmcp::model::{
            CallToolResult, ContentBlock, GetPromptResult, InputRequiredResult, ReadResourceResult,
        };

        use crate::server::mrtr::{RoundReply, a_form_question, encode_reply};

        let stamp = Stamp::new(&Implementation::new("demo", "1"), Some("node-a".into()));
        let id = RequestId::String("req-7".into());
        let body = |response: Response| {
            futures::executor::block_on(axum::body::to_bytes(response.into_body(), usize::MAX))
                .unwrap()
        };
        let asking = a_form_question();
        let complete = |result: ServerResult| match result {
            ServerResult::CallToolResult(result) => {
                encode_reply(&Ok(RoundReply::Complete(result)), Some(&stamp))
            }
            ServerResult::GetPromptResult(result) => {
                encode_reply(&Ok(RoundReply::Complete(result)), Some(&stamp))
            }
            ServerResult::ReadResourceResult(result) => {
                encode_reply(&Ok(RoundReply::Complete(result)), Some(&stamp))
            }
            ServerResult::InputRequiredResult(result) => {
                encode_reply::<CallToolResult>(&Ok(RoundReply::InputRequired(result)), Some(&stamp))
            }
            _ => unreachable!(),
        };
        let results = [
            ServerResult::CallToolResult(CallToolResult::success(vec![ContentBlock::text("hi")])),
            ServerResult::GetPromptResult(GetPromptResult::new(Vec::new())),
            ServerResult::ReadResourceResult(ReadResourceResult::new(Vec::new())),
            ServerResult::InputRequiredResult(InputRequiredResult::new(None, Some("s".into()))),
            ServerResult::InputRequiredResult(asking),
        ];
        for result in results {
            let record = complete(result.clone()).unwrap();
            let from_result = body(answered(id.clone(), Ok(result.clone()), &stamp, None));
            assert!(from_record(&id, &result, &record).is_some());
            let from_record = body(answered(id.clone(), Ok(result), &stamp, Some(&record)));
            assert_eq!(
                String::from_utf8(from_record.to_vec()).unwrap(),
                String::from_utf8(from_result.to_vec()).unwrap()
            );
        }
        // A record of another kind of reply, or a result with a `_meta` of its own: the
        // result is written.
        let tool = CallToolResult::success(vec![ContentBlock::text("hi")]);
        let record = complete(ServerResult::CallToolResult(tool.clone())).unwrap();
        let asking =
            ServerResult::InputRequiredResult(InputRequiredResult::new(None, Some("s".into())));
        assert!(from_record(&id, &asking, &record).is_none());
        let mut with_own = tool;
        with_own.meta = Some(MetaObject::default());
        assert!(from_record(&id, &ServerResult::CallToolResult(with_own), &record).is_none());
        assert!(from_record(&id, &ServerResult::empty(()), &record).is_none());
        assert!(
            from_record(
                &id,
                &ServerResult::CallToolResult(CallToolResult::default()),
                b"{}"
            )
            .is_none()
        );
    }
}
