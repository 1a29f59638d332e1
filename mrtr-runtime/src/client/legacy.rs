//! Answering a server that asks the pre-2026 way: on a session opened with `initialize`
//! (2025-11-25 and older), the server sends `elicitation/create`, `sampling/createMessage`
//! and `roots/list` to the client in the middle of a call. The same [`InputHandler`] that
//! answers `input_required` rounds answers them.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but part of 2025-11-25

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::ErrorData;
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ListRootsResult,
};
use rmcp::service::{RequestContext, RoleClient};

use super::handler::{
    FormElicitation, HandlerError, InputHandler, RootsRequest, SamplingRequest, UrlElicitation,
};

/// The rmcp client handler of an [`MrtrClient`](super::MrtrClient): declares the
/// handler's capabilities and routes server-initiated requests to it.
pub(crate) struct SessionHandler {
    pub(crate) config: ClientConfig,
    pub(crate) handler: Arc<dyn InputHandler>,
    /// Server-initiated requests carry no key; number them for the handler.
    asked: AtomicUsize,
}

impl SessionHandler {
    pub(crate) fn new(config: ClientConfig, handler: Arc<dyn InputHandler>) -> Self {
        SessionHandler {
            config,
            handler,
            asked: AtomicUsize::new(0),
        }
    }

    fn key(&self, kind: &str) -> String {
        format!("{kind}_{}", self.asked.fetch_add(1, Ordering::Relaxed))
    }
}

fn to_error(error: HandlerError) -> ErrorData {
    match error {
        HandlerError::Unsupported => {
            ErrorData::invalid_request("this client does not answer this kind of request", None)
        }
        HandlerError::Failed(cause) => {
            ErrorData::internal_error(crate::error::ErrorChain(&*cause).to_string(), None)
        }
    }
}

impl rmcp::ClientHandler for SessionHandler {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let key = self.key("ask");
        match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => self.handler.elicit(FormElicitation {
                key,
                message,
                requested_schema,
            }),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => self
                .handler
                .elicit_url(UrlElicitation { key, message, url }),
            _ => return Err(to_error(HandlerError::Unsupported)),
        }
        .await
        .map_err(to_error)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let key = self.key("sample");
        self.handler
            .sample(SamplingRequest { key, params })
            .await
            .map_err(to_error)
    }

    async fn list_roots(
        &self,
        _: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let key = self.key("roots");
        self.handler
            .list_roots(RootsRequest { key })
            .await
            .map_err(to_error)
    }
}
