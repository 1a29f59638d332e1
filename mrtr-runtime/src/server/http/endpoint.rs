//! The MCP endpoint as one service: the body's size cap, the token check (when the server
//! requires auth) and the gate, in that order, every error worded as JSON-RPC, with rmcp's
//! service behind them for what the gate does not answer itself.
//!
//! One hand-written service instead of a stack of axum middleware: each of those clones
//! the service beneath it for every request, and boxes it.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use futures::FutureExt as _;
use futures::future::{BoxFuture, Either};
use http::{StatusCode, header};
use http_body_util::Limited;

use super::gate::{self, Gate};

/// What serves a request the gate lets through without answering it itself: rmcp's
/// Streamable HTTP service. A clone is a reference count.
#[derive(Clone)]
pub(super) struct Next(Arc<dyn RmcpEndpoint>);

/// rmcp's service, behind [`Next`] (the gate is not generic over the server's type).
pub(super) trait RmcpEndpoint: Send + Sync + 'static {
    /// rmcp's answer to `request`.
    fn handle(&self, request: axum::extract::Request) -> BoxFuture<'static, Response>;
}

impl Next {
    pub(super) fn new(endpoint: impl RmcpEndpoint) -> Self {
        Next(Arc::new(endpoint))
    }

    /// rmcp's answer to `request`.
    pub(super) async fn run(self, request: axum::extract::Request) -> Response {
        self.0.handle(request).await
    }
}

/// The endpoint; cheap to clone.
#[derive(Clone)]
pub(super) struct McpEndpoint(Arc<Inner>);

struct Inner {
    gate: Gate,
    /// A body may not be larger ([`HttpServing::max_body_bytes`](super::HttpServing::max_body_bytes)).
    max_body_bytes: usize,
    next: Next,
    #[cfg(feature = "auth")]
    guard: Option<Arc<super::auth::Guard>>,
}

impl McpEndpoint {
    pub(super) fn new(
        gate: Gate,
        max_body_bytes: usize,
        next: Next,
        #[cfg(feature = "auth")] guard: Option<Arc<super::auth::Guard>>,
    ) -> Self {
        McpEndpoint(Arc::new(Inner {
            gate,
            max_body_bytes,
            next,
            #[cfg(feature = "auth")]
            guard,
        }))
    }

    /// The endpoint at `path` (credentials kept out of logs), with the auth metadata
    /// routes beside it when there are any; any other path gets a JSON-RPC `404`.
    pub(super) fn into_router(self, path: &str, metadata: Option<axum::Router>) -> axum::Router {
        let endpoint = tower::ServiceBuilder::new()
            // Keeps credentials out of any log that prints request headers.
            .layer(
                tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer::new([
                    header::AUTHORIZATION,
                    header::PROXY_AUTHORIZATION,
                    header::COOKIE,
                ]),
            )
            .service(self);
        let router = axum::Router::new()
            .route_service(path, endpoint)
            .fallback(|| gate::outer_errors(StatusCode::NOT_FOUND.into_response()));
        match metadata {
            Some(metadata) => router.merge(metadata),
            None => router,
        }
    }

    /// The token check (when the server requires auth), then the gate. Not an `async fn`:
    /// its future would keep the request once more.
    fn checked(
        &self,
        request: axum::extract::Request,
    ) -> impl Future<Output = Response> + Send + '_ {
        let Inner { gate, next, .. } = &*self.0;
        #[cfg(feature = "auth")]
        if let Some(guard) = &self.0.guard {
            let next = next.clone();
            let authenticated: BoxFuture<'_, Response> =
                Box::pin(super::auth::authenticate(guard, request, |request| {
                    gate::gate(gate, request, next)
                }));
            return Either::Left(authenticated);
        }
        Either::<BoxFuture<'_, Response>, _>::Right(gate::gate(gate, request, next.clone()))
    }
}

/// A response future as tower and hyper take it: one box, its output wrapped without
/// another.
pub(super) type Answering = futures::future::Map<
    BoxFuture<'static, Response>,
    fn(Response) -> Result<Response, Infallible>,
>;

impl<B> tower::Service<http::Request<B>> for McpEndpoint
where
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answering;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        self.answer(request).map(Ok)
    }
}

impl McpEndpoint {
    /// The endpoint's answer to `request`.
    fn answer<B>(&self, request: http::Request<B>) -> BoxFuture<'static, Response>
    where
        B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        let this = self.clone();
        let max = self.0.max_body_bytes;
        // A body announced over the cap is refused unread; any other stops being read
        // at the cap (the gate answers 413 then).
        let announced = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if announced.is_some_and(|length| length > max as u64) {
            return Box::pin(async move {
                let refusal = (StatusCode::PAYLOAD_TOO_LARGE, "length limit exceeded");
                gate::outer_errors(refusal.into_response()).await
            });
        }
        let request = request.map(|body| Body::new(Limited::new(body, max)));
        Box::pin(async move {
            let response = this.checked(request).await;
            gate::outer_errors(response).await
        })
    }
}

/// What a bound server serves: the endpoint at its path, and any other path (the auth
/// metadata routes, else a JSON-RPC `404`) through the router [`McpEndpoint::into_router`]
/// builds. The endpoint's own requests skip the router (its matching, its boxing of every
/// body and every response future): they are most of the traffic.
#[derive(Clone)]
pub(super) struct Routes {
    endpoint: McpEndpoint,
    path: Arc<str>,
    /// The endpoint's path is a plain path, compared as text (else the router matches it).
    literal: bool,
    /// Everything, as a router: for other paths, and for [`Routes::into_router`].
    router: axum::Router,
}

impl Routes {
    pub(super) fn new(endpoint: McpEndpoint, path: &str, metadata: Option<axum::Router>) -> Self {
        Routes {
            router: endpoint.clone().into_router(path, metadata),
            endpoint,
            path: path.into(),
            literal: !path.contains(['{', '}', '*', ':']),
        }
    }

    /// The whole, as an axum router to merge into an application.
    pub(super) fn into_router(self) -> axum::Router {
        self.router
    }

    /// The answer to one request of a connection.
    pub(super) fn answer(&self, mut request: http::Request<hyper::body::Incoming>) -> Answering {
        if self.literal && request.uri().path() == &*self.path {
            credentials_kept_out_of_logs(request.headers_mut());
            return self.endpoint.answer(request).map(Ok);
        }
        let router = self.router.clone();
        let routed: BoxFuture<'static, Response> = Box::pin(async move {
            match tower::ServiceExt::oneshot(router, request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        });
        routed.map(Ok)
    }
}

/// Marks the credential headers sensitive, so that no log printing request headers shows
/// them (what the router's `SetSensitiveRequestHeadersLayer` does for the other paths).
fn credentials_kept_out_of_logs(headers: &mut http::HeaderMap) {
    for name in [
        header::AUTHORIZATION,
        header::PROXY_AUTHORIZATION,
        header::COOKIE,
    ] {
        // Looked up first: most requests carry none of them, and `entry` costs more.
        if !headers.contains_key(&name) {
            continue;
        }
        if let http::header::Entry::Occupied(mut values) = headers.entry(name) {
            values
                .iter_mut()
                .for_each(|value| value.set_sensitive(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn every_credential_value_is_marked_sensitive_and_nothing_else() {
        let mut headers = http::HeaderMap::new();
        headers.append(header::AUTHORIZATION, HeaderValue::from_static("Bearer a"));
        headers.append(header::AUTHORIZATION, HeaderValue::from_static("Bearer b"));
        headers.append(header::COOKIE, HeaderValue::from_static("session=1"));
        headers.append(
            header::PROXY_AUTHORIZATION,
            HeaderValue::from_static("Basic c"),
        );
        headers.append(header::ACCEPT, HeaderValue::from_static("application/json"));
        credentials_kept_out_of_logs(&mut headers);
        for name in [
            header::AUTHORIZATION,
            header::COOKIE,
            header::PROXY_AUTHORIZATION,
        ] {
            assert!(
                headers.get_all(&name).iter().all(HeaderValue::is_sensitive),
                "{name}"
            );
        }
        assert_eq!(headers.get_all(header::AUTHORIZATION).iter().count(), 2);
        assert!(!headers[header::ACCEPT].is_sensitive());
    }
}
