//! Serving machines through rmcp: an [`McpServer`] is an rmcp `ServerHandler` that lists
//! and runs `#[mrtr::tool]`/`prompt`/`resource` machines and hands every other request to
//! an optional fallback handler (your existing rmcp server), so both mix in one server.
//!
//! Per request it resolves the principal, reads the capabilities from that request's
//! `_meta`, opens the `requestState`, resumes the machine, gates what it asks on the
//! declared capabilities (`-32021` otherwise), and seals the next state.
//!
//! ```no_run
//! # async fn run(my_tool: impl mrtr_runtime::machine::Machine<Output = rmcp::model::CallToolResult>) -> Result<(), Box<dyn std::error::Error>> {
//! use mrtr_runtime::server::McpServer;
//! use rmcp::ServiceExt;
//!
//! let server = McpServer::builder("deploy-server").tool(my_tool).build().unwrap();
//! server.serve(rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(()) }
//! ```

mod build_error;
mod errors;
#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub mod http;
pub mod ledger;
mod legacy;
pub(crate) mod mrtr;
pub(crate) mod payload;
mod principal;
mod ratelimit;
mod registry;
pub(crate) mod round;
pub(crate) mod stamp;
pub mod tasks;
mod unwind;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::Either;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    Cursor, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    MetaObject, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

pub use build_error::BuildError;
pub use legacy::DEFAULT_LEGACY_REQUEST_TIMEOUT;
pub use mrtr::StaleStatePolicy;
pub use round::DEFAULT_MAX_ROUNDS_PER_CALL;
pub use principal::{Principal, PrincipalResolver};

use crate::machine::{AppStates, Listing, Machine, MachineDescriptor};
use crate::token::{Clock, KeyRing, StateSealer, SystemClock};
use mrtr::{Mrtr, MrtrRequest, RoundReply};
use round::{Caller, Era, RoundLimits};
use stamp::{Stamp, WithServerInfo};
use tracing::Instrument as _;
use ledger::RoundLedger;
use registry::{PromptMachine, Registry, ResourceMachine, ToolMachine};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tasks::{MemoryTaskStore, TaskSettings, TaskStore, Tasks};

/// Every `State<T>` a machine takes must be registered.
fn check_states<'a>(
    descriptors: impl Iterator<Item = &'a MachineDescriptor>,
    states: &AppStates,
) -> Result<(), BuildError> {
    for descriptor in descriptors {
        if let Some(missing) = descriptor.states.iter().find(|s| !states.satisfies(s)) {
            return Err(BuildError::MissingState {
                machine: descriptor.name().to_string(),
                state: missing.type_name(),
            });
        }
    }
    Ok(())
}

/// The `_meta` key under which a listed tool, prompt or resource names the input kinds it
/// may ask for (e.g. `["elicitation.form", "sampling"]`).
///
/// ```
/// assert_eq!(mrtr_runtime::server::INPUT_KINDS_META_KEY, "io.github.mrtr/inputKinds");
/// ```
pub const INPUT_KINDS_META_KEY: &str = "io.github.mrtr/inputKinds";

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
    inner: Arc<Inner<F>>,
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
struct LegacyServing {
    enabled: bool,
    request_timeout: Duration,
}

struct Inner<F> {
    mrtr: Mrtr,
    info: Implementation,
    tools: Registry<dyn Machine<Output = CallToolResult>>,
    prompts: Registry<dyn Machine<Output = GetPromptResult>>,
    resources: Registry<dyn Machine<Output = ReadResourceResult>>,
    principal: PrincipalResolver,
    legacy: LegacyServing,
    /// The tasks extension, when a tool may run as a task.
    tasks: Option<Arc<Tasks>>,
    fallback: F,
}

/// Configures an [`McpServer`].
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::server::{McpServer, StaleStatePolicy};
/// use mrtr_runtime::token::KeyRing;
/// let server = McpServer::builder("demo")
///     .version("1.2.3")
///     .keys(KeyRing::generate_process_local().unwrap())
///     .state_ttl(Duration::from_secs(300))
///     .max_state_bytes(32 * 1024)
///     .stale_state(StaleStatePolicy::Reject)
///     .build().unwrap();
/// ```
pub struct McpServerBuilder {
    info: Implementation,
    audience: Option<String>,
    keys: Option<KeyRing>,
    clock: Option<Arc<dyn Clock>>,
    ttl: Option<Duration>,
    max_state_bytes: Option<usize>,
    stale_state: StaleStatePolicy,
    tools: Registry<dyn Machine<Output = CallToolResult>>,
    prompts: Registry<dyn Machine<Output = GetPromptResult>>,
    resources: Registry<dyn Machine<Output = ReadResourceResult>>,
    principal: Option<PrincipalResolver>,
    states: AppStates,
    legacy: LegacyServing,
    ledger: Option<Arc<dyn RoundLedger>>,
    round_lease: Duration,
    round_wait: Duration,
    instance: Option<String>,
    task_store: Option<Arc<dyn TaskStore>>,
    task_settings: TaskSettings,
    max_rounds: u32,
}

impl McpServer<NoFallback> {
    /// Starts configuring a server named `name` (also the default token audience).
    ///
    /// ```
    /// use rmcp::ServerHandler;
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.get_info().server_info.name, "demo");
    /// assert_eq!(server.audience(), "demo");
    /// ```
    pub fn builder(name: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder {
            info: Implementation::new(name, env!("CARGO_PKG_VERSION")),
            audience: None,
            keys: None,
            clock: None,
            ttl: None,
            max_state_bytes: None,
            stale_state: StaleStatePolicy::default(),
            tools: Registry::default(),
            prompts: Registry::default(),
            resources: Registry::default(),
            principal: None,
            states: AppStates::default(),
            legacy: LegacyServing {
                enabled: true,
                request_timeout: legacy::DEFAULT_LEGACY_REQUEST_TIMEOUT,
            },
            ledger: None,
            round_lease: ledger::rounds::DEFAULT_LEASE,
            round_wait: ledger::rounds::DEFAULT_WAIT,
            instance: None,
            task_store: None,
            task_settings: TaskSettings::default(),
            max_rounds: DEFAULT_MAX_ROUNDS_PER_CALL,
        }
    }
}

impl McpServerBuilder {
    /// The server version reported in `serverInfo`.
    ///
    /// ```
    /// use rmcp::ServerHandler;
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .version("2.0.0")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.get_info().server_info.version, "2.0.0");
    /// ```
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// The audience bound into every token (defaults to the server name). Instances that
    /// continue each other's flows must share it, and their keys.
    ///
    /// ```
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .audience("demo.example.com")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.audience(), "demo.example.com");
    /// ```
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// The key ring that seals and opens states. Without it, keys come from the
    /// `MRTR_KEYS` environment variable, or a process-local key is generated (with a
    /// warning: other instances cannot continue its flows).
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap());
    /// ```
    pub fn keys(mut self, keys: KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }

    /// The clock for issuing and expiring states (tests inject a manual one).
    ///
    /// ```
    /// use std::sync::Arc;
    /// let b = mrtr_runtime::server::McpServer::builder("demo")
    ///     .clock(Arc::new(mrtr_runtime::token::SystemClock));
    /// ```
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// How long a client may take to answer one round (default 600 s; every round
    /// re-seals with a fresh expiry).
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo").state_ttl(std::time::Duration::from_secs(60));
    /// ```
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The largest `requestState` accepted or produced (default 64 KiB); checked before
    /// any decoding.
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo").max_state_bytes(16 * 1024);
    /// ```
    pub fn max_state_bytes(mut self, bytes: usize) -> Self {
        self.max_state_bytes = Some(bytes);
        self
    }

    /// What to do with a state sealed by another version of a machine.
    ///
    /// ```
    /// use mrtr_runtime::server::{McpServer, StaleStatePolicy};
    /// let b = McpServer::builder("demo").stale_state(StaleStatePolicy::Reject);
    /// ```
    pub fn stale_state(mut self, policy: StaleStatePolicy) -> Self {
        self.stale_state = policy;
        self
    }

    /// Replaces how the principal of a request is found (default: a [`Principal`] HTTP
    /// extension, else a salted hash of the `Authorization` header, else none).
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo")
    ///     .principal(|_context| Some("tenant-7".to_string()));
    /// ```
    pub fn principal(
        mut self,
        resolver: impl Fn(&RequestContext<RoleServer>) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.principal = Some(Arc::new(resolver));
        self
    }

    /// Protects resumed rounds with a round ledger (see [`ledger`]): each is claimed before
    /// its code runs and its outcome recorded, so a presented-again round answers the same
    /// response instead of running again. Applies to every machine except those marked
    /// [`ReplayPolicy::Unprotected`](crate::machine::ReplayPolicy::Unprotected).
    ///
    /// ```
    /// use mrtr_runtime::server::ledger::MemoryLedger;
    /// let b = mrtr_runtime::server::McpServer::builder("demo").round_ledger(MemoryLedger::new());
    /// ```
    pub fn round_ledger(mut self, ledger: impl RoundLedger) -> Self {
        self.ledger = Some(Arc::new(ledger));
        self
    }

    /// How long a running round's claim holds without renewal (default 30 s). The instance
    /// running it renews it every third of this; if the instance dies, the round may run
    /// again this long after its last renewal (never, for
    /// [`ReplayPolicy::AtMostOnce`](crate::machine::ReplayPolicy::AtMostOnce) machines).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let b = mrtr_runtime::server::McpServer::builder("demo").round_lease(Duration::from_secs(10));
    /// ```
    pub fn round_lease(mut self, lease: Duration) -> Self {
        self.round_lease = lease.max(Duration::from_millis(30));
        self
    }

    /// How long a second presentation of a running round waits for the first one's
    /// outcome before answering `-32050` (retryable); default 5 s.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let b = mrtr_runtime::server::McpServer::builder("demo").round_wait(Duration::from_secs(2));
    /// ```
    pub fn round_wait(mut self, wait: Duration) -> Self {
        self.round_wait = wait;
        self
    }

    /// Names this instance in every result's `_meta` (`"io.mrtr/instance"`), to see which
    /// instance behind a load balancer ran a round. A response replayed from the round
    /// ledger keeps the name of the instance that ran it.
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo").instance_id("node-a");
    /// ```
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance = Some(id.into());
        self
    }

    /// Where tasks live (see [`tasks`]): shared by every instance that serves the same
    /// tasks. Without it, a server with a task tool keeps them in a [`MemoryTaskStore`].
    ///
    /// ```
    /// use mrtr_runtime::server::tasks::MemoryTaskStore;
    /// let b = mrtr_runtime::server::McpServer::builder("demo").task_store(MemoryTaskStore::new());
    /// ```
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// Task TTL, cap on live tasks and suggested polling interval (see [`TaskSettings`]).
    ///
    /// ```
    /// use mrtr_runtime::server::tasks::TaskSettings;
    /// let b = mrtr_runtime::server::McpServer::builder("demo")
    ///     .task_settings(TaskSettings::default().max_live_tasks(100));
    /// ```
    pub fn task_settings(mut self, settings: TaskSettings) -> Self {
        self.task_settings = settings;
        self
    }

    /// Whether clients that negotiate 2025-11-25 or older through `initialize` are served
    /// (default: yes). They cannot answer `input_required`, so their calls are driven
    /// in-process: each suspension's requests are sent to the client over the session
    /// (`elicitation/create`, `sampling/createMessage`, `roots/list`) and the machine resumes
    /// with the replies, without sealing and without re-running code. Off, only 2026-07-28
    /// and later are advertised and a legacy `initialize` is refused.
    ///
    /// ```
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .legacy_sessions(false)
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .build()
    ///     .unwrap();
    /// assert!(!server.serves_legacy_sessions());
    /// ```
    pub fn legacy_sessions(mut self, enabled: bool) -> Self {
        self.legacy.enabled = enabled;
        self
    }

    /// How long a legacy session's client may take to answer one server→client request
    /// (default [`DEFAULT_LEGACY_REQUEST_TIMEOUT`], 600 s). Past it the request is
    /// cancelled on the client and the call ends with a JSON-RPC error naming the request.
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo")
    ///     .legacy_request_timeout(std::time::Duration::from_secs(120));
    /// ```
    pub fn legacy_request_timeout(mut self, timeout: Duration) -> Self {
        self.legacy.request_timeout = timeout;
        self
    }

    /// Registers application state (a pool, a client, a config) for the machines that
    /// take a `State<T>` parameter. The value is cloned into every round, so register a
    /// cheap handle (an `Arc<..>`, a pool handle); one value per type.
    ///
    /// ```
    /// use std::sync::{Arc, atomic::AtomicU64};
    /// let b = mrtr_runtime::server::McpServer::builder("demo").app_state(Arc::new(AtomicU64::new(0)));
    /// ```
    pub fn app_state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// The former name of [`app_state`](Self::app_state) (`state` read as the sealed
    /// `requestState`, which `state_ttl` and `max_state_bytes` are about).
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let b = mrtr_runtime::server::McpServer::builder("demo").state(7u8);
    /// ```
    #[deprecated(since = "0.1.0", note = "renamed to `app_state`")]
    pub fn state<T: Clone + Send + Sync + 'static>(self, value: T) -> Self {
        self.app_state(value)
    }

    /// How many rounds one call may take (default [`DEFAULT_MAX_ROUNDS_PER_CALL`], 64).
    /// Every time a call asks — a new question, or the same one again after an unusable
    /// answer — is a round, on every carrier (MRTR, legacy sessions, tasks). Past it the
    /// call ends with an error naming the tool and the limit: `-32603` when the tool kept
    /// asking, `-32602` when an answer stayed unusable.
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo").max_rounds_per_call(200);
    /// ```
    pub fn max_rounds_per_call(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Registers a tool machine (e.g. a `#[mrtr::tool]` function).
    ///
    /// ```no_run
    /// # fn f(deploy: impl mrtr_runtime::machine::Machine<Output = rmcp::model::CallToolResult>) {
    /// let b = mrtr_runtime::server::McpServer::builder("demo").tool(deploy);
    /// # }
    /// ```
    pub fn tool(mut self, machine: impl Machine<Output = CallToolResult>) -> Self {
        let machine: ToolMachine = Arc::new(machine);
        self.tools.insert(machine);
        self
    }

    /// Registers a prompt machine (e.g. a `#[mrtr::prompt]` function).
    ///
    /// ```no_run
    /// # fn f(p: impl mrtr_runtime::machine::Machine<Output = rmcp::model::GetPromptResult>) {
    /// let b = mrtr_runtime::server::McpServer::builder("demo").prompt(p);
    /// # }
    /// ```
    pub fn prompt(mut self, machine: impl Machine<Output = GetPromptResult>) -> Self {
        let machine: PromptMachine = Arc::new(machine);
        self.prompts.insert(machine);
        self
    }

    /// Registers a resource machine (e.g. a `#[mrtr::resource]` function).
    ///
    /// ```no_run
    /// # fn f(r: impl mrtr_runtime::machine::Machine<Output = rmcp::model::ReadResourceResult>) {
    /// let b = mrtr_runtime::server::McpServer::builder("demo").resource(r);
    /// # }
    /// ```
    pub fn resource(mut self, machine: impl Machine<Output = ReadResourceResult>) -> Self {
        let machine: ResourceMachine = Arc::new(machine);
        self.resources.insert(machine);
        self
    }

    /// Builds a server that serves only the registered machines.
    ///
    /// ```
    /// use rmcp::ServerHandler;
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .build().unwrap();
    /// // Nothing registered: no tools, prompts or resources capability is advertised.
    /// let capabilities = server.get_info().capabilities;
    /// assert!(capabilities.tools.is_none() && capabilities.prompts.is_none());
    /// ```
    pub fn build(self) -> Result<McpServer<NoFallback>, BuildError> {
        self.build_with(NoFallback)
    }

    /// Builds a server that serves the registered machines and hands everything else
    /// (other tools, prompts, resources, completions, ...) to `fallback`, e.g. an existing
    /// rmcp server with hand-written tools.
    ///
    /// ```
    /// struct Legacy;
    /// impl rmcp::ServerHandler for Legacy {}
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .build_with(Legacy).unwrap();
    /// ```
    pub fn build_with<F: ServerHandler>(self, fallback: F) -> Result<McpServer<F>, BuildError> {
        let descriptors = (self.tools.iter().map(|m| m.descriptor()))
            .chain(self.prompts.iter().map(|m| m.descriptor()))
            .chain(self.resources.iter().map(|m| m.descriptor()));
        let descriptors: Vec<&MachineDescriptor> = descriptors.collect();
        check_states(descriptors.iter().copied(), &self.states)?;
        if self.ledger.is_none()
            && let Some(machine) = descriptors
                .iter()
                .find(|d| d.replay == crate::machine::ReplayPolicy::AtMostOnce)
        {
            return Err(BuildError::AtMostOnceWithoutLedger {
                machine: machine.name().to_owned(),
            });
        }
        let keys = match self.keys {
            Some(keys) => keys,
            None => KeyRing::from_env_or_generate()?,
        };
        let mut sealer =
            StateSealer::new(keys).with_clock(self.clock.unwrap_or_else(|| Arc::new(SystemClock)));
        if let Some(ttl) = self.ttl {
            sealer = sealer.with_ttl(ttl);
        }
        if let Some(bytes) = self.max_state_bytes {
            sealer = sealer.with_max_token_bytes(bytes);
        }
        let audience = self.audience.unwrap_or_else(|| self.info.name.clone());
        let states = Arc::new(self.states);
        let task_tools: Vec<_> = (self.tools.iter())
            .filter(|tool| tool.descriptor().task.is_some())
            .cloned()
            .collect();
        let stamp = Arc::new(Stamp::new(&self.info, self.instance));
        let limits = RoundLimits {
            max_rounds: self.max_rounds,
            max_state_bytes: sealer.max_token_bytes(),
        };
        let tasks = (!task_tools.is_empty() || self.task_store.is_some()).then(|| {
            Tasks::new(
                self.task_store
                    .unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
                self.task_settings,
                Arc::clone(&states),
                task_tools,
                Arc::clone(&stamp),
                limits,
            )
        });
        Ok(McpServer {
            inner: Arc::new(Inner {
                mrtr: Mrtr {
                    sealer,
                    audience,
                    stale_state: self.stale_state,
                    states,
                    rounds: self.ledger.map(|ledger| {
                        ledger::rounds::Rounds::new(ledger, self.round_lease, self.round_wait)
                    }),
                    max_rounds: self.max_rounds,
                    stamp,
                },
                info: self.info,
                tools: self.tools,
                prompts: self.prompts,
                resources: self.resources,
                principal: self
                    .principal
                    .unwrap_or_else(|| Arc::new(principal::default_principal)),
                legacy: self.legacy,
                tasks,
                fallback,
            }),
        })
    }
}

impl<F> McpServer<F> {
    /// Whether clients that negotiated a protocol before 2026-07-28 are served (see
    /// [`McpServerBuilder::legacy_sessions`]).
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

    /// Serves one request for `machine` and shapes the answer as the method's response.
    async fn run_machine<O, R>(
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
            let mut result = Box::pin(self.run_legacy(machine.as_ref(), context, arguments, caller))
                .await?;
            if let Some(meta) = result.meta_mut() {
                self.stamp(meta);
            }
            return Ok(R::from(result));
        }
        let request = MrtrRequest {
            arguments,
            input_responses,
            request_state,
            caller,
            task_after: None,
        };
        let span = Mrtr::span(machine.descriptor(), &request);
        // Boxed: the carrier's future is kilobytes, and every future around it (rmcp's
        // request handling, the spawned task) would otherwise carry and copy it per request.
        let served = Box::pin(self.inner.mrtr.serve(machine.as_ref(), request).instrument(span));
        match served.await? {
            RoundReply::Complete(result) => Ok(R::from(result)),
            RoundReply::InputRequired(result) => Ok(R::from(result)),
            RoundReply::Task(_) => Err(errors::internal(
                "a task from a machine that does not run as one",
            )),
        }
    }

    /// Drives a call of a legacy session to its end.
    async fn run_legacy<M: Machine + ?Sized>(
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
    fn limits(&self) -> RoundLimits {
        RoundLimits {
            max_rounds: self.inner.mrtr.max_rounds,
            max_state_bytes: self.inner.mrtr.max_state_bytes(),
        }
    }

    /// Serves a `tools/call` of a task tool for a client that declared the tasks
    /// extension: its MRTR rounds as usual, then a task for the rest.
    #[allow(clippy::too_many_arguments)] // the call's parts, as `call_tool` splits them
    async fn run_task_tool(
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
        let request = MrtrRequest {
            arguments: &arguments,
            input_responses,
            request_state,
            caller,
            task_after: Some(task_after),
        };
        let span = Mrtr::span(machine.descriptor(), &request);
        let mrtr = &self.inner.mrtr;
        let served = async {
            let mut pass = match mrtr.begin(machine.descriptor(), request).await {
                Ok(mrtr::Begun::Run(pass)) => pass,
                Ok(mrtr::Begun::Replayed(recorded)) => return Mrtr::replayed(&recorded),
                Err((error, _)) => return Err(error),
            };
            let (input, held) = pass.round_input(&mrtr.states, mrtr.max_rounds, mrtr.max_state_bytes());
            // The task is created inside the claimed round, so the round ledger records it as
            // the round's reply: a re-sent round gets the same task back.
            let stepped = mrtr
                .renewing(held, async {
                    match round::step_round(machine.as_ref(), input).await {
                        round::RoundOutcome::HandOff(handoff) => {
                            let Caller {
                                capabilities,
                                principal,
                                ..
                            } = task_caller;
                            let created = tasks
                                .create(machine.clone(), handoff, arguments.clone(), capabilities, principal)
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
            mrtr.conclude(pass, reply).await
        };
        // Boxed for the reason given in `run_machine`.
        match Box::pin(served.instrument(span)).await? {
            RoundReply::Complete(result) => Ok(result.into()),
            RoundReply::InputRequired(result) => Ok(result.into()),
            RoundReply::Task(created) => Ok(CallToolResponse::Task(created)),
        }
    }

    /// Stamps `serverInfo` and the instance id into a result's `_meta`.
    fn stamp(&self, meta: &mut Option<MetaObject>) {
        self.inner.mrtr.stamp.apply(meta);
    }

    /// The protocol version of a legacy session this request belongs to, when such
    /// sessions are served: negotiated through `initialize` before 2026-07-28 and not
    /// overridden by a modern version in this request's own `_meta`.
    fn legacy_version(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<rmcp::model::ProtocolVersion> {
        if !self.inner.legacy.enabled {
            return None;
        }
        context.protocol_version().filter(|version| {
            version.as_str() < rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
        })
    }

    /// Who asks: the request's declared capabilities, its principal, and its era.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        Caller {
            capabilities: context.client_capabilities().unwrap_or_default(),
            principal: (self.inner.principal)(context),
            era: match self.legacy_version(context) {
                Some(version) => Era::Session(version),
                None => Era::Stateless,
            },
        }
    }

    /// The server's tasks, when the request may use them: the server has task tools and
    /// this request declared the extension (never a legacy session's request).
    fn tasks_for(&self, context: &RequestContext<RoleServer>) -> Option<&Arc<Tasks>> {
        let declared = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        self.inner
            .tasks
            .as_ref()
            .filter(|_| declared && self.legacy_version(context).is_none())
    }
}

impl<F> McpServer<F> {
    /// Stamps `serverInfo` into a result's `_meta` (2026-07-28 asks it of every result).
    fn stamped<R: WithServerInfo>(&self, mut result: R) -> R {
        if let Some(meta) = result.meta_mut() {
            self.stamp(meta);
        }
        result
    }

    /// A fallback's answer to a tools/call, prompts/get or resources/read: stamped when it
    /// completed; `-32601` (the fallback serves no such method) becomes `-32602` naming the
    /// unknown item when this server advertises the method's capability.
    fn fallback_answer<T>(
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

/// Adds the machine's input kinds to its listing's `_meta`.
fn with_input_kinds(
    meta: Option<MetaObject>,
    machine_kinds: &[crate::machine::InputKind],
) -> Option<MetaObject> {
    if machine_kinds.is_empty() {
        return meta;
    }
    let mut meta = meta.unwrap_or_default();
    let kinds: Vec<&str> = machine_kinds.iter().map(|k| k.as_str()).collect();
    meta.0
        .insert(INPUT_KINDS_META_KEY.into(), serde_json::json!(kinds));
    Some(meta)
}

/// What a listing entry needs so one function can list tools, prompts and resources.
trait Listed: Sized {
    fn from_listing(listing: &Listing) -> Option<Self>;
    /// The name requests address it by (tool/prompt name, resource URI).
    fn key(&self) -> &str;
}

impl Listed for Tool {
    fn from_listing(listing: &Listing) -> Option<Self> {
        match listing {
            Listing::Tool(tool) => Some(tool.clone()),
            _ => None,
        }
    }
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for rmcp::model::Prompt {
    fn from_listing(listing: &Listing) -> Option<Self> {
        match listing {
            Listing::Prompt(prompt) => Some(prompt.clone()),
            _ => None,
        }
    }
    fn key(&self) -> &str {
        &self.name
    }
}

impl Listed for rmcp::model::Resource {
    fn from_listing(listing: &Listing) -> Option<Self> {
        match listing {
            Listing::Resource(resource) => Some(resource.clone()),
            _ => None,
        }
    }
    fn key(&self) -> &str {
        &self.uri
    }
}

/// How a machine is listed: its descriptor's listing with its input kinds in `_meta`.
fn listing_with_input_kinds(descriptor: &MachineDescriptor) -> Listing {
    let mut listing = descriptor.listing.clone();
    let meta = match &mut listing {
        Listing::Tool(tool) => &mut tool.meta,
        Listing::Prompt(prompt) => &mut prompt.meta,
        Listing::Resource(resource) => &mut resource.meta,
    };
    *meta = with_input_kinds(meta.take(), &descriptor.input_kinds);
    listing
}

/// One page of a merged listing: the machines (on the first page only; later pages are
/// the fallback's), then the fallback's page without the entries a machine shadows.
fn merged_page<T: Listed, O: Send + 'static>(
    registry: &Registry<dyn Machine<Output = O>>,
    request: Option<&PaginatedRequestParams>,
    fallback_page: Option<(Vec<T>, Option<Cursor>)>,
) -> (Vec<T>, Option<Cursor>) {
    let mut items: Vec<T> = if request.and_then(|r| r.cursor.as_ref()).is_none() {
        registry.listings().filter_map(T::from_listing).collect()
    } else {
        Vec::new()
    };
    let Some((theirs, next_cursor)) = fallback_page else {
        return (items, None);
    };
    items.extend(
        theirs
            .into_iter()
            .filter(|item| registry.get(item.key()).is_none()),
    );
    (items, next_cursor)
}

fn empty_arguments() -> &'static JsonObject {
    static EMPTY: std::sync::OnceLock<JsonObject> = std::sync::OnceLock::new();
    EMPTY.get_or_init(JsonObject::new)
}

/// The halves of `call_tool`, `get_prompt` and `read_resource` (see `call_tool`).
impl<F: ServerHandler> McpServer<F> {
    /// A tool this server does not have: the fallback's answer, stamped.
    async fn call_fallback_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        let answer = self.inner.fallback.call_tool(request, context).await;
        let advertised = self.get_info().capabilities.tools.is_some();
        self.fallback_answer(
            advertised,
            answer,
            || errors::unknown("tool", &name),
            |server, answer| match answer {
                CallToolResponse::Complete(result) => server.stamped(result).into(),
                other => other,
            },
        )
    }

    /// A tool of this server: its rounds, and a task for the rest when it is a task tool
    /// and the client declared tasks.
    fn call_machine_tool(
        &self,
        machine: ToolMachine,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        let CallToolRequestParams {
            arguments,
            input_responses,
            request_state,
            ..
        } = request;
        async move {
            if let Some(support) = machine.descriptor().task {
                if let Some(tasks) = self.tasks_for(&context) {
                    // Boxed so that the common path's future stays small.
                    return Box::pin(self.run_task_tool(
                        tasks,
                        machine,
                        &context,
                        arguments,
                        input_responses,
                        request_state,
                        support.after_rounds,
                    ))
                    .await;
                }
                if support.required {
                    return Err(ErrorData::missing_required_client_capability(
                        rmcp::model::ClientCapabilities::builder()
                            .enable_tasks()
                            .build(),
                    ));
                }
            }
            self.run_machine(
                machine,
                &context,
                arguments.as_ref(),
                input_responses,
                request_state,
            )
            .await
        }
    }

    /// A prompt this server does not have: the fallback's answer, stamped.
    async fn get_fallback_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name.clone();
        let answer = self.inner.fallback.get_prompt(request, context).await;
        let advertised = self.get_info().capabilities.prompts.is_some();
        self.fallback_answer(
            advertised,
            answer,
            || errors::unknown("prompt", &name),
            |server, answer| match answer {
                GetPromptResponse::Complete(result) => server.stamped(result).into(),
                other => other,
            },
        )
    }

    /// A resource this server does not have: the fallback's answer, stamped.
    async fn read_fallback_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let answer = self.inner.fallback.read_resource(request, context).await;
        let advertised = self.get_info().capabilities.resources.is_some();
        self.fallback_answer(
            advertised,
            answer,
            || errors::resource_not_found(&uri),
            |server, answer| match answer {
                ReadResourceResponse::Complete(result) => server.stamped(result).into(),
                other => other,
            },
        )
    }
}

impl<F: ServerHandler> ServerHandler for McpServer<F> {
    fn get_info(&self) -> ServerConfig {
        let mut info = self.inner.fallback.get_info();
        info.server_info = self.inner.info.clone();
        let capabilities: &mut ServerCapabilities = &mut info.capabilities;
        if !self.inner.tools.is_empty() && capabilities.tools.is_none() {
            capabilities.tools = Some(Default::default());
        }
        if !self.inner.prompts.is_empty() && capabilities.prompts.is_none() {
            capabilities.prompts = Some(Default::default());
        }
        if !self.inner.resources.is_empty() && capabilities.resources.is_none() {
            capabilities.resources = Some(Default::default());
        }
        if self.inner.tasks.is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .entry(rmcp::model::TASKS_EXTENSION_ID.to_owned())
                .or_default();
        }
        info
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let Some(tasks) = &self.inner.tasks else {
            return self.inner.fallback.get_task(request, context).await;
        };
        let principal = (self.inner.principal)(&context);
        tasks.get(&request.task_id, &principal).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(tasks) = &self.inner.tasks else {
            return self.inner.fallback.update_task(request, context).await;
        };
        let principal = (self.inner.principal)(&context);
        tasks
            .update(&request.task_id, &principal, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(tasks) = &self.inner.tasks else {
            return self.inner.fallback.cancel_task(request, context).await;
        };
        let principal = (self.inner.principal)(&context);
        tasks.cancel(&request.task_id, &principal).await
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        let versions = self.inner.fallback.supported_protocol_versions();
        if self.inner.legacy.enabled {
            return versions;
        }
        let modern = rmcp::model::ProtocolVersion::V_2026_07_28;
        let served: Vec<_> = versions
            .iter()
            .filter(|version| version.as_str() >= modern.as_str())
            .cloned()
            .collect();
        if served.is_empty() {
            std::borrow::Cow::Owned(vec![modern])
        } else {
            std::borrow::Cow::Owned(served)
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let fallback = &self.inner.fallback;
        let fallback_page = if fallback.get_info().capabilities.tools.is_some() {
            let page = fallback.list_tools(request.clone(), context).await?;
            Some((page.tools, page.next_cursor))
        } else {
            None
        };
        let (items, next_cursor) = merged_page(&self.inner.tools, request.as_ref(), fallback_page);
        let mut result = ListToolsResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(self.stamped(result))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.inner.tools.listing(name) {
            Some(listing) => Tool::from_listing(listing),
            None => self.inner.fallback.get_tool(name),
        }
    }

    // Not `async fn`s: an `async fn`'s future keeps each parameter twice (as the parameter
    // and as the local it is moved into), and rmcp copies this future into every request's
    // task. The machine path keeps the request's parts once; the fallback path is boxed.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        match self.inner.tools.get(&request.name).cloned() {
            None => Either::Left(Box::pin(self.call_fallback_tool(request, context))),
            Some(machine) => Either::Right(self.call_machine_tool(machine, request, context)),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let fallback = &self.inner.fallback;
        let fallback_page = if fallback.get_info().capabilities.prompts.is_some() {
            let page = fallback.list_prompts(request.clone(), context).await?;
            Some((page.prompts, page.next_cursor))
        } else {
            None
        };
        let (items, next_cursor) =
            merged_page(&self.inner.prompts, request.as_ref(), fallback_page);
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(self.stamped(result))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send + '_ {
        match self.inner.prompts.get(&request.name).cloned() {
            None => Either::Left(Box::pin(self.get_fallback_prompt(request, context))),
            Some(machine) => {
                let GetPromptRequestParams {
                    arguments,
                    input_responses,
                    request_state,
                    ..
                } = request;
                Either::Right(async move {
                    self.run_machine(
                        machine,
                        &context,
                        arguments.as_ref(),
                        input_responses,
                        request_state,
                    )
                    .await
                })
            }
        }
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let fallback = &self.inner.fallback;
        let fallback_page = if fallback.get_info().capabilities.resources.is_some() {
            let page = fallback.list_resources(request.clone(), context).await?;
            Some((page.resources, page.next_cursor))
        } else {
            None
        };
        let (items, next_cursor) =
            merged_page(&self.inner.resources, request.as_ref(), fallback_page);
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(self.stamped(result))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send + '_ {
        match self.inner.resources.get(&request.uri).cloned() {
            None => Either::Left(Box::pin(self.read_fallback_resource(request, context))),
            Some(machine) => {
                let ReadResourceRequestParams {
                    input_responses,
                    request_state,
                    ..
                } = request;
                Either::Right(async move {
                    self.run_machine(machine, &context, None, input_responses, request_state)
                        .await
                })
            }
        }
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        // Machines have fixed URIs; answer an empty list when only they provide resources.
        if self
            .inner
            .fallback
            .get_info()
            .capabilities
            .resources
            .is_none()
            && !self.inner.resources.is_empty()
        {
            return Ok(self.stamped(ListResourceTemplatesResult::with_all_items(Vec::new())));
        }
        self.inner
            .fallback
            .list_resource_templates(request, context)
            .await
            .map(|result| self.stamped(result))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.inner
            .fallback
            .complete(request, context)
            .await
            .map(|result| self.stamped(result))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.inner.fallback.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        self.inner.fallback.listen(context).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        // rmcp routes a known method whose params do not parse (e.g. a non-string
        // `requestState`) here; answer it as the invalid-params error it is.
        if let Some(error) = errors::unparsable_params(&request.method, request.params.as_ref()) {
            return Err(error);
        }
        self.inner
            .fallback
            .on_custom_request(request, context)
            .await
    }

    // Logging is SEP-2577-deprecated; legacy sessions still set their level this way.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.fallback.set_level(request, context).await
    }

    // Legacy sessions subscribe this way (rmcp refuses it on 2026-07-28 requests).
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[allow(deprecated)]
        self.inner.fallback.subscribe(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[allow(deprecated)]
        self.inner.fallback.unsubscribe(request, context).await
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.inner.fallback.on_initialized(context).await
    }

    async fn on_roots_list_changed(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.inner.fallback.on_roots_list_changed(context).await
    }

    async fn on_cancelled(
        &self,
        notification: rmcp::model::CancelledNotificationParam,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        self.inner
            .fallback
            .on_cancelled(notification, context)
            .await
    }

    async fn on_progress(
        &self,
        notification: rmcp::model::ProgressNotificationParam,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        self.inner.fallback.on_progress(notification, context).await
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        self.inner
            .fallback
            .on_custom_notification(notification, context)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{MachineDescriptor, StateRequirement};
    use crate::token::KeyRing;

    fn purge_needing_a_u8() -> MachineDescriptor {
        let schema = serde_json::json!({"type": "object"})
            .as_object()
            .unwrap()
            .clone();
        let mut descriptor = MachineDescriptor::tool(Tool::new("purge", "d", schema), [], 1);
        descriptor.states = vec![StateRequirement::of::<u8>()];
        descriptor
    }

    #[test]
    fn a_machine_whose_state_is_not_registered_is_named_in_the_error() {
        let descriptor = purge_needing_a_u8();
        let mut states = AppStates::default();
        states.insert(String::from("not the u8"));
        let error = check_states([&descriptor].into_iter(), &states).unwrap_err();
        assert!(
            matches!(&error, BuildError::MissingState { machine, state } if machine == "purge" && state.contains("u8")),
            "{error:?}"
        );
        states.insert(7u8);
        assert!(check_states([&descriptor].into_iter(), &states).is_ok());
    }

    #[test]
    fn the_audience_is_the_server_name_unless_set() {
        let keys = KeyRing::generate_process_local().unwrap();
        let named = McpServer::builder("billing")
            .keys(keys.clone())
            .build()
            .unwrap();
        assert_eq!(named.audience(), "billing");
        let set = McpServer::builder("billing")
            .audience("billing.example.com")
            .keys(keys)
            .build()
            .unwrap();
        assert_eq!(set.audience(), "billing.example.com");
    }
}
