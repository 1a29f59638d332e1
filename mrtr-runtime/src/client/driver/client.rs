//! The client itself: how it connects, what it declares, and the automatic loop that
//! answers rounds until the call completes.

use std::{sync::Arc, time::Duration};

use rmcp::{
    model::{
        CallToolResult, ClientConfig, GetPromptResult, Implementation, InputResponses, JsonObject,
        ProtocolVersion, ReadResourceResult,
    },
    service::{ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService},
    transport::IntoTransport,
};
use tokio::time::Instant;

use crate::client::error::ClientError;
use crate::client::handler::{InputHandler, InputKinds};
use crate::client::legacy::SessionHandler;
use crate::client::pending::{CallOutput, CallTarget, PendingCall, RoundOutcome};

use super::config::{DriverConfig, RoundObserver};

/// Drives `tools/call`, `prompts/get` and `resources/read` through MRTR rounds.
///
/// Build it with [`MrtrClient::connect`] (which declares exactly the capabilities the
/// handler supports and uses the stateless 2026-07-28 lifecycle) or wrap an existing rmcp
/// peer with [`MrtrClient::from_peer`].
///
/// ```no_run
/// # async fn demo(peer: rmcp::service::Peer<rmcp::service::RoleClient>) -> Result<(), mrtr_runtime::client::ClientError> {
/// use mrtr_runtime::client::{CallTarget, InputHandlers, MrtrClient, RoundOutcome};
///
/// // Manual mode: persist each round and answer it whenever (and wherever) you like.
/// let client = MrtrClient::from_peer(peer, InputHandlers::new());
/// let mut step = client.start(CallTarget::tool("deploy", None)).await?;
/// while let RoundOutcome::InputRequired(pending) = step {
///     let saved = serde_json::to_string(&pending).unwrap();
///     let pending: mrtr_runtime::client::PendingCall = serde_json::from_str(&saved).unwrap();
///     let answers = client.answer(&pending).await?;
///     step = client.resume(&pending, answers).await?;
/// }
/// # Ok(()) }
/// ```
pub struct MrtrClient {
    pub(super) peer: Peer<RoleClient>,
    service: Option<RunningService<RoleClient, SessionHandler>>,
    pub(super) handler: Arc<dyn InputHandler>,
    pub(super) config: DriverConfig,
    pub(super) observers: Vec<Arc<dyn RoundObserver>>,
}

impl std::fmt::Debug for MrtrClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MrtrClient")
            .field("supported", &self.handler.supported())
            .field("config", &self.config)
            .finish()
    }
}

/// The rmcp client configuration that declares exactly `kinds` as capabilities.
///
/// ```
/// use mrtr_runtime::client::{InputKinds, client_config};
/// let config = client_config(InputKinds::none());
/// assert!(config.capabilities.elicitation.is_none());
/// // The driver follows tasks to their end, so it declares the tasks extension.
/// assert!(config.capabilities.supports_tasks());
/// ```
pub fn client_config(kinds: InputKinds) -> ClientConfig {
    let mut capabilities = kinds.client_capabilities();
    // The driver drives tasks to their end, so it may declare the tasks extension.
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(
            rmcp::model::TASKS_EXTENSION_ID.to_owned(),
            JsonObject::new(),
        );
    let mut config = ClientConfig::new(
        capabilities,
        Implementation::new("mrtr", env!("CARGO_PKG_VERSION")),
    );
    config.protocol_version = ProtocolVersion::V_2026_07_28;
    config
}

impl MrtrClient {
    /// Connects over `transport` with the stateless 2026-07-28 lifecycle (`server/discover`,
    /// then self-contained per-request `_meta`), declaring the capabilities `handler` supports.
    pub async fn connect<T, E, A>(
        transport: T,
        handler: impl InputHandler,
    ) -> Result<Self, ClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::connect_with_lifecycle(
            transport,
            handler,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
    }

    /// Connects to the Streamable HTTP endpoint at `url` (for example
    /// `http://127.0.0.1:8080/mcp`, or a load balancer in front of several instances) with
    /// the stateless 2026-07-28 lifecycle.
    ///
    /// Rounds that fail in transit — a refused or broken connection, a 502/503/504 from a
    /// proxy — are retried by the default [`RetryPolicy`](crate::client::RetryPolicy) on this
    /// same client: rmcp's HTTP client keeps running after a failed request and opens a new
    /// connection for the next one, so an instance that restarts, or a balancer that moves
    /// to another instance, needs no code of yours.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), mrtr_runtime::client::ClientError> {
    /// use mrtr_runtime::client::{InputHandlers, MrtrClient};
    ///
    /// let client = MrtrClient::connect_http("http://127.0.0.1:8080/mcp", InputHandlers::new()).await?;
    /// let result = client.call_tool("deploy", None).await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "client-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-http")))]
    pub async fn connect_http(
        url: impl Into<Arc<str>>,
        handler: impl InputHandler,
    ) -> Result<Self, ClientError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        Self::connect(transport, handler).await
    }

    /// Like [`connect`](Self::connect) with an explicit rmcp lifecycle, e.g.
    /// `ClientLifecycleMode::Auto` to fall back to `initialize` for older servers (which
    /// never send `input_required`).
    pub async fn connect_with_lifecycle<T, E, A>(
        transport: T,
        handler: impl InputHandler,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Self, ClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let handler: Arc<dyn InputHandler> = Arc::new(handler);
        let mut config = client_config(handler.supported());
        match &lifecycle {
            ClientLifecycleMode::Auto {
                legacy_version: Some(version),
                ..
            } => config.protocol_version = version.clone(),
            // A session opened with `initialize` speaks the newest pre-MRTR revision: the
            // server then asks by sending requests, which the handler answers.
            ClientLifecycleMode::Initialize => {
                config.protocol_version = ProtocolVersion::V_2025_11_25
            }
            _ => {}
        }
        let service = SessionHandler::new(config, handler.clone())
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|error| ClientError::Connect(error.into()))?;
        Ok(Self {
            peer: service.peer().clone(),
            service: Some(service),
            handler,
            config: DriverConfig::default(),
            observers: Vec::new(),
        })
    }

    /// Wraps an rmcp peer connected elsewhere. Its declared capabilities are whatever that
    /// connection declared; use [`client_config`] with `handler.supported()` to match them.
    pub fn from_peer(peer: Peer<RoleClient>, handler: impl InputHandler) -> Self {
        Self {
            peer,
            service: None,
            handler: Arc::new(handler),
            config: DriverConfig::default(),
            observers: Vec::new(),
        }
    }

    /// Replaces the round-loop limits.
    pub fn with_config(mut self, config: DriverConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds an observer of the automatic round loop.
    pub fn with_observer(mut self, observer: impl RoundObserver) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// The underlying rmcp peer (for listing tools, prompts and resources).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// The round-loop limits in force.
    pub fn config(&self) -> &DriverConfig {
        &self.config
    }

    /// Closes the connection this client opened, if it opened one.
    pub async fn close(mut self) {
        if let Some(service) = self.service.take() {
            let _ = service.cancel().await;
        }
    }

    /// Calls a tool, answering every round.
    pub async fn call_tool(
        &self,
        name: impl Into<String>,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ClientError> {
        match self.call(CallTarget::tool(name, arguments)).await? {
            CallOutput::Tool(result) => Ok(result),
            _ => unreachable!("a tools/call target completes with a tool result"),
        }
    }

    /// Gets a prompt, answering every round.
    pub async fn get_prompt(
        &self,
        name: impl Into<String>,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, ClientError> {
        match self.call(CallTarget::prompt(name, arguments)).await? {
            CallOutput::Prompt(result) => Ok(result),
            _ => unreachable!("a prompts/get target completes with a prompt result"),
        }
    }

    /// Reads a resource, answering every round.
    pub async fn read_resource(
        &self,
        uri: impl Into<String>,
    ) -> Result<ReadResourceResult, ClientError> {
        match self.call(CallTarget::resource(uri)).await? {
            CallOutput::Resource(result) => Ok(result),
            _ => unreachable!("a resources/read target completes with a resource result"),
        }
    }

    /// Sends `target` and answers every round until it completes or fails.
    pub async fn call(&self, target: CallTarget) -> Result<CallOutput, ClientError> {
        self.continue_call(PendingCall::new(target), InputResponses::new())
            .await
    }

    /// Continues a call from a pending round (for example one restored from storage or left
    /// by [`ClientError::ConnectionLost`]) with its answers, then answers every later round.
    pub async fn continue_call(
        &self,
        mut pending: PendingCall,
        mut responses: InputResponses,
    ) -> Result<CallOutput, ClientError> {
        let deadline = self.config.budget.map(|budget| Instant::now() + budget);
        let mut state_only_streak = 0u32;
        loop {
            let step = self
                .within_budget(deadline, &pending, self.resume(&pending, responses))
                .await?;
            let next = match step {
                RoundOutcome::Complete(output) => return Ok(output),
                RoundOutcome::InputRequired(next) => next,
            };
            if next.round as usize >= self.config.max_rounds {
                return Err(ClientError::RoundLimit {
                    max_rounds: self.config.max_rounds,
                    pending: Box::new(next),
                });
            }
            for observer in &self.observers {
                observer.input_required(&next);
            }
            if next.input_requests.is_empty() {
                // A state-only round means "not yet": pause before asking again.
                let pause = self
                    .config
                    .state_only_backoff
                    .saturating_mul(1 << state_only_streak.min(5))
                    .min(Duration::from_secs(2));
                state_only_streak += 1;
                self.within_budget(deadline, &next, async {
                    tokio::time::sleep(pause).await;
                    Ok(())
                })
                .await?;
                responses = InputResponses::new();
            } else {
                state_only_streak = 0;
                responses = self
                    .within_budget(deadline, &next, self.answer(&next))
                    .await?;
            }
            for observer in &self.observers {
                observer.answered(&next, &responses);
            }
            pending = next;
        }
    }

    /// Manual mode: sends the first request of `target` and returns what the server said.
    pub async fn start(&self, target: CallTarget) -> Result<RoundOutcome, ClientError> {
        self.resume(&PendingCall::new(target), InputResponses::new())
            .await
    }

    async fn within_budget<T>(
        &self,
        deadline: Option<Instant>,
        pending: &PendingCall,
        work: impl Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        match (deadline, self.config.budget) {
            (Some(deadline), Some(budget)) => tokio::time::timeout_at(deadline, work)
                .await
                .unwrap_or_else(|_| {
                    Err(ClientError::BudgetExceeded {
                        budget,
                        pending: Box::new(pending.clone()),
                    })
                }),
            _ => work.await,
        }
    }
}
