//! rmcp's `StreamableHttpService` shared behind an `Arc`.
//!
//! rmcp's service copies its whole config (the host and origin lists, string by string)
//! each time it is cloned, and its own `call` clones it for every request. Shared, each
//! request takes a reference count and calls its `handle`.

use std::sync::Arc;

use axum::response::{IntoResponse as _, Response};
use futures::future::BoxFuture;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionManager;

use super::endpoint::RmcpEndpoint;

/// One rmcp service for every request of a router.
pub(super) struct SharedRmcp<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> SharedRmcp<S, M> {
    pub(super) fn new(service: StreamableHttpService<S, M>) -> Self {
        SharedRmcp(Arc::new(service))
    }
}

impl<S, M> RmcpEndpoint for SharedRmcp<S, M>
where
    S: ServerHandler + Send + 'static,
    M: SessionManager,
{
    fn handle(&self, request: axum::extract::Request) -> BoxFuture<'static, Response> {
        let service = self.0.clone();
        Box::pin(async move { service.handle(request).await.into_response() })
    }
}
