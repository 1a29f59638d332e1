//! [`McpServer`]: the server's registries, carriers and policies, and how one request for a
//! machine is served — over MRTR, a legacy session, or into a task.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, GetPromptResult, Implementation,
    JsonObject, MetaObject, ReadResourceResult,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::errors;
use super::legacy;
use super::mrtr::{self, Mrtr, MrtrRequest, RoundReply};
use super::principal::PrincipalResolver;
use super::registry::Registry;
use super::round::{self, Caller, Era, RoundLimits};
use super::stamp::WithServerInfo;
use super::tasks::Tasks;
use crate::machine::Machine;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::Instrument as _;

/// A fallback that serves nothing: every request not handled by a machine gets rmcp's
/// default answer (usually `-32601`).
///
/// ```
/// let _ = mrtr_runtime::server::NoFallback;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFallback;

impl ServerHandler for NoFallback {}

/// An rmcp server handler for mrtr machines, optionally in front of another handler.
///
/// Cheap to clone (one `Arc`), so it can be handed to rmcp's Streamable HTTP service
/// factory.
///
/// ```
/// use mrtr_runtime::server::McpServer;
/// use mrtr_runtime::token::KeyRing;
/// let server = McpServer::builder("demo").keys(KeyRing::generate_process_local().unwrap()).build().unwrap();
/// assert_eq!(server.audience(), "demo");
/// ```
pub struct McpServer<F = NoFallback> {
    pub(super) inner: Arc<Inner<F>>,
}

impl<F> Clone for McpServer<F> {
    fn clone(&self) -> Self {
        McpServer {
            inner: Arc::clone(&self.inner),
        }
    }
}

/// How clients that negotiated a protocol before 2026-07-28 are served.
#[derive(Debug, Clone, Copy)]
pub(super) struct LegacyServing {
    pub(super) enabled: bool,
    pub(super) request_timeout: Duration,
}

pub(super) struct Inner<F> {
    pub(super) mrtr: Mrtr,
    pub(super) info: Implementation,
    pub(super) tools: Registry<dyn Machine<Output = CallToolResult>>,
    pub(super) prompts: Registry<dyn Machine<Output = GetPromptResult>>,
    pub(super) resources: Registry<dyn Machine<Output = ReadResourceResult>>,
    pub(super) principal: PrincipalResolver,
    pub(super) legacy: LegacyServing,
    /// The tasks extension, when a tool may run as a task.
    pub(super) tasks: Option<Arc<Tasks>>,
    /// The scopes granted to requests that come without HTTP (stdio).
    pub(super) local_scopes: Option<super::GrantedScopes>,
    pub(super) fallback: F,
}

impl<F> McpServer<F> {
    /// Whether clients that negotiated a protocol before 2026-07-28 are served (see
    /// [`McpServerBuilder::legacy_sessions`](super::McpServerBuilder::legacy_sessions)).
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// assert!(server.serves_legacy_sessions());
    /// ```
    pub fn serves_legacy_sessions(&self) -> bool {
        self.inner.legacy.enabled
    }

    /// The audience bound into this server's tokens.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// assert_eq!(server.audience(), "demo");
    /// ```
    pub fn audience(&self) -> &str {
        &self.inner.mrtr.audience
    }

    /// The handler requests fall back to.
    ///
    /// ```
    /// # let server = mrtr_runtime::server::McpServer::builder("demo").keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap()).build().unwrap();
    /// let _fallback: &mrtr_runtime::server::NoFallback = server.fallback();
    /// ```
    pub fn fallback(&self) -> &F {
        &self.inner.fallback
    }

    /// Waits until every round outcome this server has handed to its
    /// [round ledger](super::ledger) so far is written, up to `timeout`; `true` when all
    /// were (or the server has no ledger).
    ///
    /// A reply does not wait for its record: the outcome is written just after, by a
    /// background task. A process that exits right after its last reply would lose the
    /// records still queued, and a client re-sending such a round would wait for its
    /// lease to lapse and run it again (or be refused, when it is `at_most_once`). HTTP
    /// serving ([`BoundHttp::serve_until`](super::http::BoundHttp::serve_until), `serve`)
    /// does this when it stops; over stdio, or when you serve
    /// [`into_router`](super::http::HttpServing::into_router) yourself, call it once the
    /// service has ended and before the process exits.
    ///
    /// ```no_run
    /// # async fn run(server: mrtr_runtime::server::McpServer) -> Result<(), Box<dyn std::error::Error>> {
    /// use rmcp::ServiceExt;
    /// let running = server.clone().serve(rmcp::transport::stdio()).await?;
    /// running.waiting().await?;
    /// server.flush_ledger(std::time::Duration::from_secs(5)).await;
    /// # Ok(()) }
    /// ```
    pub async fn flush_ledger(&self, timeout: Duration) -> bool {
        match self.ledger_flush() {
            Some(records) => records.flush(timeout).await,
            None => true,
        }
    }

    /// What flushes the outcomes queued for the round ledger, when the server has one.
    pub(super) fn ledger_flush(&self) -> Option<super::ledger::recording::RecordFlush> {
        self.inner
            .mrtr
            .rounds
            .as_ref()
            .map(|rounds| rounds.flusher())
    }

    /// Serves one request for `machine` and shapes the answer as the method's response.
    pub(super) async fn run_machine<O, R>(
        &self,
        machine: Arc<dyn Machine<Output = O>>,
        context: &RequestContext<RoleServer>,
        arguments: Option<&JsonObject>,
        input_responses: Option<rmcp::model::InputResponses>,
        request_state: Option<String>,
    ) -> Result<R, ErrorData>
    where
        O: Send + Sync + 'static + WithServerInfo + Serialize + DeserializeOwned,
        R: From<O> + From<rmcp::model::InputRequiredResult>,
    {
        let arguments = arguments.unwrap_or_else(|| empty_arguments());
        let caller = self.caller(context);
        if let Era::Session(_) = caller.era {
            let mut result =
                Box::pin(self.run_legacy(machine.as_ref(), context, arguments, caller)).await?;
            if let Some(meta) = result.meta_mut() {
                self.stamp(meta);
            }
            return Ok(R::from(result));
        }
        let on_write = context.extensions.get::<StampedOnWrite>();
        let request = MrtrRequest {
            arguments,
            input_responses,
            request_state,
            caller,
            task_after: None,
            stamped_on_write: on_write.is_some(),
            record_slot: on_write.and_then(|on_write| on_write.0.clone()),
        };
        let span = Mrtr::span(machine.descriptor(), &request);
        // Boxed: the carrier's future is kilobytes, and every future around it (rmcp's
        // request handling, the spawned task) would otherwise carry and copy it per request.
        // The presentation is opened at once (see `Mrtr::serve`): inside the round's span,
        // as the rest of the round runs, so what the opening records lands on it.
        let serving = span.in_scope(|| self.inner.mrtr.serve(machine.as_ref(), request));
        let served = Box::pin(serving.instrument(span));
        match served.await? {
            RoundReply::Complete(result) => Ok(R::from(result)),
            RoundReply::InputRequired(result) => Ok(R::from(result)),
            RoundReply::Task(_) => Err(errors::internal(
                "a task from a machine that does not run as one",
            )),
        }
    }

    /// Drives a call of a legacy session to its end.
    pub(super) async fn run_legacy<M: Machine + ?Sized>(
        &self,
        machine: &M,
        context: &RequestContext<RoleServer>,
        arguments: &JsonObject,
        caller: Caller,
    ) -> Result<M::Output, ErrorData> {
        let call = legacy::LegacyCall {
            arguments,
            caller,
            states: &self.inner.mrtr.states,
            limits: self.limits(),
        };
        let session = legacy::Session {
            peer: &context.peer,
            ct: &context.ct,
            timeout: self.inner.legacy.request_timeout,
        };
        legacy::drive(machine, call, session).await
    }

    /// The limits every round of this server is held to.
    pub(super) fn limits(&self) -> RoundLimits {
        self.inner.mrtr.limits()
    }

    /// Serves a `tools/call` of a task tool for a client that declared the tasks
    /// extension: its MRTR rounds as usual, then a task for the rest.
    #[allow(clippy::too_many_arguments)] // the call's parts, as `call_tool` splits them
    pub(super) async fn run_task_tool(
        &self,
        tasks: &Arc<Tasks>,
        machine: Arc<dyn Machine<Output = CallToolResult>>,
        context: &RequestContext<RoleServer>,
        arguments: Option<JsonObject>,
        input_responses: Option<rmcp::model::InputResponses>,
        request_state: Option<String>,
        task_after: u32,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = arguments.unwrap_or_default();
        let caller = self.caller(context);
        let task_caller = caller.clone();
        // The round a hand-off continues: a re-sent round finds the task it created.
        let round = request_state
            .as_deref()
            .map(|token| crate::server::ledger::RoundId::of_token(token).to_string());
        let request = MrtrRequest {
            arguments: &arguments,
            input_responses,
            request_state,
            caller,
            task_after: Some(task_after),
            stamped_on_write: false,
            record_slot: None,
        };
        let span = Mrtr::span(machine.descriptor(), &request);
        let mrtr = &self.inner.mrtr;
        let served = async {
            let mut pass = match mrtr.begin(machine.descriptor(), request).await {
                Ok(mrtr::Begun::Run(pass)) => pass,
                Ok(mrtr::Begun::Replayed(recorded)) => return Mrtr::replayed(&recorded),
                Err((error, _)) => return Err(error),
            };
            let (input, held) = pass.round_input(&mrtr.states, mrtr.limits());
            // The task is created inside the claimed round, so the round ledger records it as
            // the round's reply: a re-sent round gets the same task back.
            let stepped = mrtr
                .renewing(held, async {
                    match round::step_round(machine.as_ref(), input).await {
                        round::RoundOutcome::HandOff(handoff) => {
                            let created = tasks
                                .create(
                                    machine.clone(),
                                    handoff,
                                    arguments.clone(),
                                    task_caller,
                                    super::principal::client_address(context),
                                    round.clone(),
                                )
                                .await;
                            Err(created.map(RoundReply::Task))
                        }
                        outcome => Ok(outcome),
                    }
                })
                .await;
            let reply = match stepped {
                Ok(outcome) => mrtr.reply(&mut pass, outcome),
                Err(created) => created,
            };
            mrtr.conclude(pass, reply)
        };
        // Boxed for the reason given in `run_machine`.
        match Box::pin(served.instrument(span)).await? {
            RoundReply::Complete(result) => Ok(result.into()),
            RoundReply::InputRequired(result) => Ok(result.into()),
            RoundReply::Task(created) => Ok(CallToolResponse::Task(created)),
        }
    }

    /// Stamps `serverInfo` and the instance id into a result's `_meta`.
    pub(super) fn stamp(&self, meta: &mut Option<MetaObject>) {
        self.inner.mrtr.stamp.apply(meta);
    }

    /// The protocol version of a legacy session this request belongs to, when such
    /// sessions are served: negotiated through `initialize` before 2026-07-28 and not
    /// overridden by a modern version in this request's own `_meta`.
    pub(super) fn legacy_version(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::ProtocolVersion> {
        // A request the native path checked (it left its capabilities) is 2026-07-28+.
        if !self.inner.legacy.enabled || context.extensions.get::<DeclaredCapabilities>().is_some()
        {
            return None;
        }
        context.protocol_version().filter(|version| {
            version.as_str() < rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
        })
    }

    /// The request's principal (resolved once per HTTP request).
    pub(super) fn principal(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        super::principal::principal_of(&self.inner.principal, context)
    }

    /// Who asks: the request's declared capabilities, its principal, and its era.
    pub(super) fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        Caller {
            capabilities: declared_capabilities(context).unwrap_or_default(),
            principal: self.principal(context),
            era: match self.legacy_version(context) {
                Some(version) => Era::Session(version),
                None => Era::Stateless,
            },
            scopes: super::ScopeCheck::of(context, self.inner.local_scopes.as_ref()),
        }
    }

    /// The server's tasks, when the request may use them: the server has task tools and
    /// this request declared the extension (never a legacy session's request).
    pub(super) fn tasks_for(&self, context: &RequestContext<RoleServer>) -> Option<&Arc<Tasks>> {
        let declared = declares_tasks(context);
        self.inner
            .tasks
            .as_ref()
            .filter(|_| declared && self.legacy_version(context).is_none())
    }
}

/// The client capabilities a request's `_meta` declares, as the native HTTP path decoded
/// them when it checked the request: kept in the request's extensions so that a request
/// decodes them once, not at every place that asks. Only the native path leaves them, and
/// only on a 2026-07-28+ request (its version checked against the header and `_meta`).
#[derive(Clone)]
pub(crate) struct DeclaredCapabilities(pub(crate) ClientCapabilities);

/// Left in a request's extensions by a path whose writer stamps the reply as it writes it
/// (the native HTTP path; see [`MrtrRequest::stamped_on_write`](super::mrtr::MrtrRequest)).
/// With a round ledger it holds where a recorded round leaves its record's bytes, from which
/// that writer writes the reply instead of encoding the same result a second time.
#[derive(Clone)]
pub(crate) struct StampedOnWrite(pub(crate) Option<RecordSlot>);

/// Where a round the ledger records leaves its record's bytes for the reply's writer (see
/// [`StampedOnWrite`]).
pub(crate) type RecordSlot = Arc<std::sync::OnceLock<Vec<u8>>>;

/// The client capabilities `context` declares, as rmcp's
/// [`RequestContext::client_capabilities`] reads them (decoded once on the native path).
pub(crate) fn declared_capabilities(
    context: &RequestContext<RoleServer>,
) -> Option<ClientCapabilities> {
    match context.extensions.get::<DeclaredCapabilities>() {
        Some(declared) => Some(declared.0.clone()),
        None => context.client_capabilities(),
    }
}

/// Whether `context` declares the tasks extension (read in place on the native path, not
/// cloned).
pub(crate) fn declares_tasks(context: &RequestContext<RoleServer>) -> bool {
    match context.extensions.get::<DeclaredCapabilities>() {
        Some(declared) => declared.0.supports_tasks(),
        None => context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks()),
    }
}

impl<F> McpServer<F> {
    /// Stamps `serverInfo` into a result's `_meta` (2026-07-28 asks it of every result).
    pub(super) fn stamped<R: WithServerInfo>(&self, mut result: R) -> R {
        if let Some(meta) = result.meta_mut() {
            self.stamp(meta);
        }
        result
    }

    /// A fallback's answer to a tools/call, prompts/get or resources/read: stamped when it
    /// completed; `-32601` (the fallback serves no such method) becomes `-32602` naming the
    /// unknown item when this server advertises the method's capability.
    pub(super) fn fallback_answer<T>(
        &self,
        advertised: bool,
        answer: Result<T, ErrorData>,
        unknown: impl FnOnce() -> ErrorData,
        stamp: impl FnOnce(&Self, T) -> T,
    ) -> Result<T, ErrorData> {
        match answer {
            Ok(answer) => Ok(stamp(self, answer)),
            Err(error) if advertised && error.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => {
                Err(unknown())
            }
            Err(error) => Err(error),
        }
    }
}

pub(super) fn empty_arguments() -> &'static JsonObject {
    static EMPTY: std::sync::OnceLock<JsonObject> = std::sync::OnceLock::new();
    EMPTY.get_or_init(JsonObject::new)
}
