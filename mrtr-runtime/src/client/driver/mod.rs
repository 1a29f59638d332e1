#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

use std::{sync::Arc, time::Duration};

use futures::future::try_join_all;
use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientConfig, ClientRequest,
        CreateMessageRequest, ElicitRequest, ElicitRequestParams, GetPromptRequest,
        GetPromptRequestParams, GetPromptResult, Implementation, InputRequest, InputRequiredResult,
        InputResponses, JsonObject, ListRootsRequest, ProtocolVersion, ReadResourceRequest,
        ReadResourceRequestParams, ReadResourceResult, ResultType, ServerResult,
    },
    model::{
        CreateTaskResult, GetTaskParams, GetTaskRequest, GetTaskResult, Task, TaskPayload,
        UpdateTaskParams, UpdateTaskRequest,
    },
    service::{
        ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService, ServiceError,
    },
    transport::IntoTransport,
};
use serde::Serialize;
use serde_json::Value;
use tokio::time::Instant;

use super::legacy::SessionHandler;
use super::retry::retry_reason;
use super::{
    CallOutput, CallTarget, ClientError, FormElicitation, HandlerError, InputHandler, InputKind,
    InputKinds, PendingCall, RetryPolicy, RetryReason, RootsRequest, RoundOutcome, SamplingRequest,
    UrlElicitation,
};

/// Limits for the automatic round loop.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::client::DriverConfig;
///
/// let config = DriverConfig::default()
///     .with_max_rounds(4)
///     .with_budget(Some(Duration::from_secs(60)))
///     .with_handler_timeout(Some(Duration::from_secs(30)));
/// assert_eq!(config.max_rounds, 4);
/// assert_eq!(DriverConfig::default().max_rounds, 10);
/// // Requests that fail in transit are retried by default; see `RetryPolicy`.
/// assert_eq!(DriverConfig::default().retry.max_retries, 4);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DriverConfig {
    /// Most requests sent for one call, the first one included (default 10).
    pub max_rounds: usize,
    /// Wall-clock budget for one whole call, human think time included (default 15 minutes).
    pub budget: Option<Duration>,
    /// Longest one handler may take for one input request (default: no limit).
    pub handler_timeout: Option<Duration>,
    /// First pause before retrying a state-only `input_required` round; doubles up to 2 s.
    pub state_only_backoff: Duration,
    /// How a request that failed in transit is retried (default: up to 4 retries).
    pub retry: RetryPolicy,
}

impl Default for DriverConfig {
    fn default() -> Self {
        Self {
            max_rounds: rmcp::model::DEFAULT_MRTR_MAX_ROUNDS,
            budget: Some(Duration::from_secs(15 * 60)),
            handler_timeout: None,
            state_only_backoff: Duration::from_millis(100),
            retry: RetryPolicy::default(),
        }
    }
}

impl DriverConfig {
    /// Sets [`max_rounds`](Self::max_rounds).
    pub fn with_max_rounds(mut self, max_rounds: usize) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Sets [`budget`](Self::budget).
    pub fn with_budget(mut self, budget: Option<Duration>) -> Self {
        self.budget = budget;
        self
    }

    /// Sets [`handler_timeout`](Self::handler_timeout).
    pub fn with_handler_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handler_timeout = timeout;
        self
    }

    /// Sets [`state_only_backoff`](Self::state_only_backoff).
    pub fn with_state_only_backoff(mut self, backoff: Duration) -> Self {
        self.state_only_backoff = backoff;
        self
    }

    /// Sets [`retry`](Self::retry).
    ///
    /// ```
    /// use mrtr_runtime::client::{DriverConfig, RetryPolicy};
    /// let config = DriverConfig::default().with_retries(RetryPolicy::default().with_max_retries(8));
    /// assert_eq!(config.retry.max_retries, 8);
    /// ```
    pub fn with_retries(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Turns retrying off: every failure is returned as it happened.
    ///
    /// ```
    /// let config = mrtr_runtime::client::DriverConfig::default().without_retries();
    /// assert_eq!(config.retry, mrtr_runtime::client::RetryPolicy::none());
    /// ```
    pub fn without_retries(self) -> Self {
        self.with_retries(RetryPolicy::none())
    }
}

/// Watches the automatic round loop, e.g. to show progress in a UI or write a transcript.
///
/// ```no_run
/// # async fn demo(transport: rmcp::transport::TokioChildProcess) -> Result<(), mrtr_runtime::client::ClientError> {
/// use mrtr_runtime::client::{InputHandlers, MrtrClient, PendingCall, RoundObserver};
///
/// struct Log;
/// impl RoundObserver for Log {
///     fn input_required(&self, pending: &PendingCall) {
///         eprintln!("round {}: {} request(s)", pending.round, pending.input_requests.len());
///     }
/// }
///
/// let client = MrtrClient::connect(transport, InputHandlers::new()).await?.with_observer(Log);
/// client.call_tool("deploy", None).await?; // logs every `input_required` round
/// # Ok(()) }
/// ```
pub trait RoundObserver: Send + Sync + 'static {
    /// The server answered round `pending.round` with `input_required`.
    fn input_required(&self, pending: &PendingCall) {
        let _ = pending;
    }

    /// The answers for `pending` are ready and about to be sent.
    fn answered(&self, pending: &PendingCall, responses: &InputResponses) {
        let _ = (pending, responses);
    }

    /// Sending the request that continues `pending` failed on attempt `attempt` (1 for the
    /// first send) for `reason`; the same request is sent again after `pause`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mrtr_runtime::client::{PendingCall, RetryReason, RoundObserver};
    ///
    /// struct LogRetries;
    /// impl RoundObserver for LogRetries {
    ///     fn retrying(&self, pending: &PendingCall, attempt: u32, reason: &RetryReason, pause: Duration) {
    ///         eprintln!("round {}: attempt {attempt} failed ({reason}); retrying in {pause:?}", pending.round + 1);
    ///     }
    /// }
    /// ```
    fn retrying(&self, pending: &PendingCall, attempt: u32, reason: &RetryReason, pause: Duration) {
        let _ = (pending, attempt, reason, pause);
    }

    /// The call runs as a task (tasks extension): called when the task is created and on
    /// every `tasks/get`, with its status (`working`, `input_required`, ...). A task's
    /// questions then go through [`input_required`](Self::input_required) and
    /// [`answered`](Self::answered) like a round's.
    ///
    /// ```
    /// use mrtr_runtime::client::RoundObserver;
    /// struct Progress;
    /// impl RoundObserver for Progress {
    ///     fn task_status(&self, task: &rmcp::model::Task) {
    ///         eprintln!("task {}: {:?}", task.task_id, task.status);
    ///     }
    /// }
    /// ```
    fn task_status(&self, task: &Task) {
        let _ = task;
    }
}

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
    peer: Peer<RoleClient>,
    service: Option<RunningService<RoleClient, SessionHandler>>,
    handler: Arc<dyn InputHandler>,
    config: DriverConfig,
    observers: Vec<Arc<dyn RoundObserver>>,
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
    /// proxy — are retried by the default [`RetryPolicy`] on this same client: rmcp's HTTP
    /// client keeps running after a failed request and opens a new connection for the
    /// next one, so an instance that restarts, or a balancer that moves to another
    /// instance, needs no code of yours.
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

    /// Manual mode: sends the next request of `pending` with `responses` (a new JSON-RPC id,
    /// the same params, `requestState` echoed exactly or left out) and returns what the
    /// server said.
    ///
    /// A request that fails in transit is sent again as the
    /// [`retry`](DriverConfig::retry) policy allows, with the same params; when every
    /// attempt failed the error is [`ClientError::RetriesExhausted`].
    ///
    /// When the server answers with a task (tasks extension), the task is followed to its
    /// end here: `tasks/get` polled with backoff (from the server's `pollIntervalMs`), its
    /// questions answered by the handler and sent with `tasks/update`.
    pub async fn resume(
        &self,
        pending: &PendingCall,
        responses: InputResponses,
    ) -> Result<RoundOutcome, ClientError> {
        let request = build_request(pending, &responses);
        let result = self.send_with_retries(pending, &responses, request).await?;
        Ok(match classify(&pending.target, result)? {
            Reply::Complete(output) => RoundOutcome::Complete(output),
            Reply::InputRequired(result) => RoundOutcome::InputRequired(PendingCall {
                target: pending.target.clone(),
                round: pending.round + 1,
                input_requests: result.input_requests.unwrap_or_default(),
                request_state: result.request_state,
                meta: result.meta,
            }),
            Reply::Task(created) => {
                RoundOutcome::Complete(self.follow_task(pending, created).await?)
            }
        })
    }

    /// Follows a task to its end: polls `tasks/get`, answers its questions once each, and
    /// returns its result (a failed task is the JSON-RPC error it failed with).
    async fn follow_task(
        &self,
        pending: &PendingCall,
        created: CreateTaskResult,
    ) -> Result<CallOutput, ClientError> {
        let task = created.task;
        let id = task.task_id.clone();
        for observer in &self.observers {
            observer.task_status(&task);
        }
        let floor = Duration::from_millis(task.poll_interval_ms.unwrap_or(500).clamp(10, 60_000));
        let mut pause = floor;
        let mut status = task.status;
        let mut answered = std::collections::BTreeSet::new();
        let mut asks = 0u32;
        loop {
            tokio::time::sleep(pause).await;
            let request =
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id.clone())));
            let detailed = match self
                .send_with_retries(pending, &InputResponses::new(), request)
                .await?
            {
                ServerResult::GetTaskResult(GetTaskResult { task, .. }) => task,
                other => {
                    return Err(ClientError::MalformedResult {
                        source: format!("tasks/get answered something else: {other:?}").into(),
                    });
                }
            };
            for observer in &self.observers {
                observer.task_status(&detailed.task);
            }
            // Slow down while nothing changes; poll at the server's pace again once it does.
            pause = if detailed.task.status == status {
                (pause.saturating_mul(3) / 2).min(Duration::from_secs(5))
            } else {
                floor
            };
            status = detailed.task.status;
            match detailed.payload {
                TaskPayload::Completed { result } => {
                    let result: CallToolResult = serde_json::from_value(Value::Object(result))
                        .map_err(|error| ClientError::MalformedResult {
                            source: error.into(),
                        })?;
                    return Ok(CallOutput::Tool(result));
                }
                TaskPayload::Failed { error } => {
                    let error: rmcp::ErrorData = serde_json::from_value(Value::Object(error))
                        .map_err(|error| ClientError::MalformedResult {
                            source: error.into(),
                        })?;
                    return Err(ClientError::Server(error));
                }
                TaskPayload::Cancelled => return Err(ClientError::TaskCancelled { task_id: id }),
                TaskPayload::InputRequired { input_requests } => {
                    // Keys are never reused within a task, so a key answered once is done
                    // even if a poll still shows it before the server applied the update.
                    let fresh: rmcp::model::InputRequests = input_requests
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if fresh.is_empty() {
                        continue;
                    }
                    asks += 1;
                    let ask = PendingCall {
                        target: pending.target.clone(),
                        round: pending.round + asks,
                        input_requests: fresh,
                        request_state: None,
                        meta: None,
                    };
                    for observer in &self.observers {
                        observer.input_required(&ask);
                    }
                    let responses = self.answer(&ask).await?;
                    for observer in &self.observers {
                        observer.answered(&ask, &responses);
                    }
                    answered.extend(responses.keys().cloned());
                    let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
                        UpdateTaskParams::new(id.clone(), responses.clone()),
                    ));
                    self.send_with_retries(&ask, &responses, request).await?;
                    pause = floor;
                }
                _ => {}
            }
        }
    }

    /// Sends `request` (the one continuing `pending`), sending the very same request again
    /// while the failures are ones the retry policy lets it cure.
    async fn send_with_retries(
        &self,
        pending: &PendingCall,
        responses: &InputResponses,
        request: ClientRequest,
    ) -> Result<ServerResult, ClientError> {
        let policy = &self.config.retry;
        let resumed = pending.request_state.is_some();
        let mut attempt = 1u32;
        loop {
            let error = match self.peer.send_request(request.clone()).await {
                Ok(result) => return Ok(result),
                Err(error) => error,
            };
            let reason = retry_reason(&error).filter(|reason| policy.permits(reason, resumed));
            let failure = connection_error(error, pending, responses.clone());
            let Some(reason) = reason else {
                return Err(failure);
            };
            // A stopped service cannot carry a retry; the caller resumes on a new connection.
            if policy.max_retries == 0 || self.peer.is_transport_closed() {
                return Err(failure);
            }
            if attempt > policy.max_retries {
                return Err(ClientError::RetriesExhausted {
                    attempts: attempt,
                    last: Box::new(failure),
                });
            }
            let pause = policy.backoff(attempt);
            tracing::debug!(round = pending.round + 1, attempt, %reason, ?pause, "retrying the request");
            for observer in &self.observers {
                observer.retrying(pending, attempt, &reason, pause);
            }
            tokio::time::sleep(pause).await;
            attempt += 1;
        }
    }

    /// Answers every input request of `pending` concurrently with the handler.
    ///
    /// Fails before calling any handler if one request is of a kind the handler does not
    /// support.
    pub async fn answer(&self, pending: &PendingCall) -> Result<InputResponses, ClientError> {
        let supported = self.handler.supported();
        for (key, request) in &pending.input_requests {
            let Some(kind) = input_kind(request) else {
                return Err(unknown_kind(key));
            };
            if !supported.contains(kind) {
                return Err(ClientError::UnsupportedInputRequest {
                    key: key.clone(),
                    kind,
                });
            }
        }
        let answers = try_join_all(
            pending
                .input_requests
                .iter()
                .map(|(key, request)| self.answer_one(key, request)),
        )
        .await?;
        Ok(answers.into_iter().collect())
    }

    async fn answer_one(
        &self,
        key: &str,
        request: &InputRequest,
    ) -> Result<(String, Value), ClientError> {
        let Some(kind) = input_kind(request) else {
            return Err(unknown_kind(key));
        };
        let key_owned = key.to_owned();
        let answer = async {
            match request {
                InputRequest::Elicitation(ElicitRequest { params, .. }) => match params {
                    ElicitRequestParams::FormElicitationParams {
                        message,
                        requested_schema,
                        ..
                    } => to_json(
                        self.handler
                            .elicit(FormElicitation {
                                key: key_owned,
                                message: message.clone(),
                                requested_schema: requested_schema.clone(),
                            })
                            .await,
                    ),
                    ElicitRequestParams::UrlElicitationParams { message, url, .. } => to_json(
                        self.handler
                            .elicit_url(UrlElicitation {
                                key: key_owned,
                                message: message.clone(),
                                url: url.clone(),
                            })
                            .await,
                    ),
                    _ => Err(HandlerError::Unsupported),
                },
                InputRequest::CreateMessage(CreateMessageRequest { params, .. }) => to_json(
                    self.handler
                        .sample(SamplingRequest {
                            key: key_owned,
                            params: params.clone(),
                        })
                        .await,
                ),
                InputRequest::ListRoots(_) => to_json(
                    self.handler
                        .list_roots(RootsRequest { key: key_owned })
                        .await,
                ),
                _ => Err(HandlerError::Unsupported),
            }
        };
        let outcome = match self.config.handler_timeout {
            Some(timeout) => tokio::time::timeout(timeout, answer).await.map_err(|_| {
                ClientError::HandlerTimedOut {
                    key: key.to_owned(),
                    kind,
                    timeout,
                }
            })?,
            None => answer.await,
        };
        match outcome {
            Ok(value) => Ok((key.to_owned(), value)),
            Err(HandlerError::Unsupported) => Err(ClientError::UnsupportedInputRequest {
                key: key.to_owned(),
                kind,
            }),
            Err(HandlerError::Failed(source)) => Err(ClientError::HandlerFailed {
                key: key.to_owned(),
                kind,
                source,
            }),
        }
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

fn to_json<T: Serialize>(answer: Result<T, HandlerError>) -> Result<Value, HandlerError> {
    answer.and_then(|answer| {
        serde_json::to_value(answer)
            .map_err(|error| HandlerError::failed(format!("answer is not JSON: {error}")))
    })
}

/// Which handler answers `request` (`None` for kinds newer than this client).
fn input_kind(request: &InputRequest) -> Option<InputKind> {
    let known = match request {
        InputRequest::Elicitation(ElicitRequest { params, .. }) => matches!(
            params,
            ElicitRequestParams::FormElicitationParams { .. }
                | ElicitRequestParams::UrlElicitationParams { .. }
        ),
        InputRequest::CreateMessage(_) | InputRequest::ListRoots(_) => true,
        _ => false,
    };
    known.then(|| InputKind::of(request))
}

fn unknown_kind(key: &str) -> ClientError {
    ClientError::MalformedInputRequest {
        key: key.to_owned(),
        source: "a kind of input request this client does not know".into(),
    }
}

fn build_request(pending: &PendingCall, responses: &InputResponses) -> ClientRequest {
    // Absent, not empty: a first call or a state-only retry carries no inputResponses.
    let input_responses = (!responses.is_empty()).then(|| responses.clone());
    let request_state = pending.request_state.clone();
    match &pending.target {
        CallTarget::Tool { name, arguments } => {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = arguments.clone();
            params.input_responses = input_responses;
            params.request_state = request_state;
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        }
        CallTarget::Prompt { name, arguments } => {
            let mut params = GetPromptRequestParams::new(name.clone());
            params.arguments = arguments.clone();
            params.input_responses = input_responses;
            params.request_state = request_state;
            ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
        }
        CallTarget::Resource { uri } => {
            let mut params = ReadResourceRequestParams::new(uri.clone());
            params.input_responses = input_responses;
            params.request_state = request_state;
            ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
        }
    }
}

fn connection_error(
    error: ServiceError,
    pending: &PendingCall,
    responses: InputResponses,
) -> ClientError {
    match error {
        ServiceError::McpError(data) => ClientError::Server(data),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            ClientError::ConnectionLost {
                pending: Box::new(pending.clone()),
                responses,
                source: error.into(),
            }
        }
        other => ClientError::Protocol(other.into()),
    }
}

enum Reply {
    Complete(CallOutput),
    InputRequired(InputRequiredResult),
    Task(CreateTaskResult),
}

/// Sorts a server result into "complete" or "input required", with a precise error for
/// anything else.
fn classify(target: &CallTarget, result: ServerResult) -> Result<Reply, ClientError> {
    match (target, result) {
        (_, ServerResult::InputRequiredResult(result)) => check_input_required(result),
        (CallTarget::Tool { .. }, ServerResult::CreateTaskResult(created)) => {
            Ok(Reply::Task(created))
        }
        (CallTarget::Tool { .. }, ServerResult::CallToolResult(result)) => {
            check_complete(result.result_type.as_ref())?;
            Ok(Reply::Complete(CallOutput::Tool(result)))
        }
        (CallTarget::Prompt { .. }, ServerResult::GetPromptResult(result)) => {
            check_complete(result.result_type.as_ref())?;
            Ok(Reply::Complete(CallOutput::Prompt(result)))
        }
        (CallTarget::Resource { .. }, ServerResult::ReadResourceResult(result)) => {
            check_complete(result.result_type.as_ref())?;
            Ok(Reply::Complete(CallOutput::Resource(result)))
        }
        (target, other) => {
            let raw =
                serde_json::to_value(&other).map_err(|error| ClientError::MalformedResult {
                    source: error.into(),
                })?;
            classify_raw(target, raw)
        }
    }
}

fn check_complete(result_type: Option<&ResultType>) -> Result<(), ClientError> {
    match result_type {
        // An absent resultType means complete.
        None => Ok(()),
        Some(result_type) if result_type.is_complete() => Ok(()),
        Some(other) => Err(ClientError::UnknownResultType {
            result_type: other.as_str().to_owned(),
        }),
    }
}

fn check_input_required(result: InputRequiredResult) -> Result<Reply, ClientError> {
    let no_requests = result.input_requests.as_ref().is_none_or(|r| r.is_empty());
    if no_requests && result.request_state.is_none() {
        return Err(ClientError::MalformedResult {
            source: "input_required result with neither inputRequests nor requestState".into(),
        });
    }
    Ok(Reply::InputRequired(result))
}

/// Classifies a result rmcp could not type, to say exactly what is wrong with it.
fn classify_raw(target: &CallTarget, raw: Value) -> Result<Reply, ClientError> {
    let Some(object) = raw.as_object() else {
        return Err(ClientError::MalformedResult {
            source: "the result is not a JSON object".into(),
        });
    };
    match object.get("resultType") {
        None => parse_complete(target, raw),
        Some(Value::String(kind)) if kind == "complete" => parse_complete(target, raw),
        Some(Value::String(kind)) if kind == "input_required" => {
            match object.get("inputRequests") {
                None | Some(Value::Null) => {}
                Some(Value::Object(requests)) => {
                    for (key, entry) in requests {
                        if let Some(reason) = malformed_input_request(entry) {
                            return Err(ClientError::MalformedInputRequest {
                                key: key.clone(),
                                source: reason.into(),
                            });
                        }
                    }
                }
                Some(_) => {
                    return Err(ClientError::MalformedResult {
                        source: "inputRequests is not an object".into(),
                    });
                }
            }
            match object.get("requestState") {
                None | Some(Value::String(_)) => {}
                Some(_) => {
                    return Err(ClientError::MalformedResult {
                        source: "requestState is not a string".into(),
                    });
                }
            }
            serde_json::from_value::<InputRequiredResult>(raw)
                .map_err(|error| ClientError::MalformedResult {
                    source: error.into(),
                })
                .and_then(check_input_required)
        }
        Some(Value::String(kind)) => Err(ClientError::UnknownResultType {
            result_type: kind.clone(),
        }),
        Some(_) => Err(ClientError::MalformedResult {
            source: "resultType is not a string".into(),
        }),
    }
}

fn parse_complete(target: &CallTarget, raw: Value) -> Result<Reply, ClientError> {
    let malformed = |error: serde_json::Error| ClientError::MalformedResult {
        source: format!("not a valid {} result: {error}", target.method()).into(),
    };
    let output = match target {
        CallTarget::Tool { .. } => {
            CallOutput::Tool(serde_json::from_value(raw).map_err(malformed)?)
        }
        CallTarget::Prompt { .. } => {
            CallOutput::Prompt(serde_json::from_value(raw).map_err(malformed)?)
        }
        CallTarget::Resource { .. } => {
            CallOutput::Resource(serde_json::from_value(raw).map_err(malformed)?)
        }
    };
    Ok(Reply::Complete(output))
}

/// The first required param absent from an input request, for a readable error.
fn missing_param(method: &str, params: Option<&Value>) -> Option<&'static str> {
    let required: &[&'static str] = match method {
        "elicitation/create" => match params.and_then(|p| p.get("mode")).and_then(Value::as_str) {
            Some("url") => &["message", "url"],
            _ => &["message", "requestedSchema"],
        },
        "sampling/createMessage" => &["messages", "maxTokens"],
        _ => return None,
    };
    let Some(params) = params.and_then(Value::as_object) else {
        return Some("params");
    };
    required
        .iter()
        .copied()
        .find(|field| !params.contains_key(*field))
}

/// Why one `inputRequests` entry is invalid, or `None` when it is valid.
fn malformed_input_request(entry: &Value) -> Option<String> {
    let method = match entry.get("method") {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => return Some("`method` is not a string".into()),
        None => return Some("missing `method`".into()),
    };
    if let Some(field) = missing_param(method, entry.get("params")) {
        return Some(format!("invalid {method} request: missing `{field}`"));
    }
    let parsed = match method {
        "elicitation/create" => serde_json::from_value::<ElicitRequest>(entry.clone()).err(),
        "sampling/createMessage" => {
            serde_json::from_value::<CreateMessageRequest>(entry.clone()).err()
        }
        "roots/list" => serde_json::from_value::<ListRootsRequest>(entry.clone()).err(),
        other => {
            return Some(format!(
                "unknown method `{other}` (expected elicitation/create, sampling/createMessage or roots/list)"
            ));
        }
    };
    parsed.map(|error| format!("invalid {method} request: {error}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool() -> CallTarget {
        CallTarget::tool("t", None)
    }

    fn classify_json(value: Value) -> Result<Reply, ClientError> {
        let result: ServerResult = serde_json::from_value(value).unwrap();
        classify(&tool(), result)
    }

    #[test]
    fn absent_result_type_is_complete() {
        let reply = classify_json(json!({"content": [{"type": "text", "text": "ok"}]})).unwrap();
        assert!(matches!(reply, Reply::Complete(CallOutput::Tool(_))));
    }

    #[test]
    fn unknown_result_type_is_named() {
        let error = classify_json(json!({"resultType": "streaming", "content": []}))
            .err()
            .unwrap();
        assert!(
            matches!(&error, ClientError::UnknownResultType { result_type } if result_type == "streaming"),
            "{error}"
        );
    }

    #[test]
    fn malformed_entry_names_its_key() {
        let error = classify_json(json!({
            "resultType": "input_required",
            "inputRequests": {
                "good": {"method": "roots/list"},
                "bad": {"method": "elicitation/create", "params": {"requestedSchema": {"type": "object", "properties": {}}}}
            }
        }))
        .err()
        .unwrap();
        assert!(
            matches!(&error, ClientError::MalformedInputRequest { key, source } if key == "bad" && source.to_string().contains("message")),
            "{error}"
        );
    }

    #[test]
    fn unknown_input_method_is_malformed() {
        let error = classify_json(json!({
            "resultType": "input_required",
            "inputRequests": {"p": {"method": "ping"}}
        }))
        .err()
        .unwrap();
        assert!(
            matches!(&error, ClientError::MalformedInputRequest { key, source } if key == "p" && source.to_string().contains("ping")),
            "{error}"
        );
    }

    #[test]
    fn empty_input_required_is_malformed() {
        let error = classify_json(json!({"resultType": "input_required", "inputRequests": {}}))
            .err()
            .unwrap();
        assert!(
            matches!(error, ClientError::MalformedResult { .. }),
            "{error}"
        );
    }

    #[test]
    fn state_only_result_is_input_required() {
        let reply =
            classify_json(json!({"resultType": "input_required", "requestState": "s"})).unwrap();
        assert!(
            matches!(reply, Reply::InputRequired(r) if r.request_state.as_deref() == Some("s"))
        );
    }

    #[test]
    fn retry_without_answers_or_state_leaves_both_fields_out() {
        let pending = PendingCall::new(tool());
        let request = build_request(&pending, &InputResponses::new());
        let wire = serde_json::to_value(&request).unwrap();
        let params = &wire["params"];
        assert!(params.get("inputResponses").is_none(), "{wire}");
        assert!(params.get("requestState").is_none(), "{wire}");
    }

    #[test]
    fn pending_call_round_trips_through_json() {
        let pending = PendingCall {
            target: CallTarget::prompt("p", json!({"a": 1}).as_object().cloned()),
            round: 2,
            input_requests: serde_json::from_value(json!({"r": {"method": "roots/list"}})).unwrap(),
            request_state: Some("{\"nonce\": 1}".into()),
            meta: serde_json::from_value(json!({"io.mrtr/instance": "a"})).unwrap(),
        };
        let text = serde_json::to_string(&pending).unwrap();
        let back: PendingCall = serde_json::from_str(&text).unwrap();
        assert_eq!(back, pending);
        let wire: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(wire["method"], "prompts/get");
        assert_eq!(wire["requestState"], "{\"nonce\": 1}");
        assert_eq!(wire["_meta"]["io.mrtr/instance"], "a");
    }
}
