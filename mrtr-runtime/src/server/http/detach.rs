//! A stateless request's work outlives its client: a client that leaves does not cut a
//! round off halfway. The work runs in the connection's task while the client waits (no
//! task, no allocation and no wake-up of its own per request) and moves to a task of its
//! own only if the client goes first, holding its places until it ends.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::response::Response;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use http::StatusCode;
use rmcp::model::ErrorCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tracing::Instrument as _;

use super::gate::error_response;
use super::inflight::InFlightPermit;

/// Runs a stateless request (natively or through rmcp), holding the caller's in-flight
/// place until the response is made: a client that leaves does not cut the round off
/// halfway (it runs to its end, bounded by `round_timeout`, into a response nobody reads)
/// nor escape its cap; all such work holds at most `max_connections` places. A panic in the
/// request's code is answered `-32603`, never a dropped connection.
pub(super) async fn detached(
    work: &Arc<Semaphore>,
    serving: BoxFuture<'static, Response>,
    in_flight: Option<InFlightPermit>,
) -> Response {
    // Waits, as a connection waits in the backlog, while `max_connections` requests run.
    // A client that leaves while waiting here has had nothing run for it.
    let Ok(place) = work.clone().acquire_owned().await else {
        return failed();
    };
    Detached {
        serving: Some(serving),
        places: Some((in_flight, place)),
        span: tracing::Span::current(),
    }
    .await
}

/// The work and the places it holds; both go to a task of their own if this is dropped
/// before the work ends.
struct Detached {
    serving: Option<BoxFuture<'static, Response>>,
    places: Option<(Option<InFlightPermit>, OwnedSemaphorePermit)>,
    /// The request's span, for the work's logs once it runs on its own.
    span: tracing::Span,
}

impl Future for Detached {
    type Output = Response;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let Some(serving) = self.serving.as_mut() else {
            return Poll::Ready(failed());
        };
        // A panic is caught here as a task of its own would have caught it; the work that
        // panicked is dropped, never polled again.
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| serving.poll_unpin(cx)));
        let response = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(response)) => response,
            Err(_) => failed(),
        };
        self.serving = None;
        self.places = None;
        Poll::Ready(response)
    }
}

impl Drop for Detached {
    fn drop(&mut self) {
        let Some(serving) = self.serving.take() else {
            return;
        };
        let places = self.places.take();
        let rest = async move {
            // A panic is caught (the panic hook has reported it); the places go back either way.
            let _ = AssertUnwindSafe(serving).catch_unwind().await;
            drop(places);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(rest.instrument(self.span.clone()));
            }
            // No runtime to run it on (it is shutting down): the work stops here.
            Err(_) => tracing::debug!("a request's work was dropped with its runtime"),
        }
    }
}

fn failed() -> Response {
    error_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
        ErrorCode::INTERNAL_ERROR,
        "the request could not be served".into(),
    )
}
