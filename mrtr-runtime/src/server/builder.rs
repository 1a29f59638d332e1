//! Configuring a server: [`McpServerBuilder`] collects machines, keys, policies and
//! limits, and `build()` checks them and assembles the carriers.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, GetPromptResult, Implementation, ReadResourceResult};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};

use super::build_error::BuildError;
use super::ledger::{self, RoundLedger};
use super::legacy;
use super::mcp_server::{Inner, LegacyServing, McpServer, NoFallback};
use super::mrtr::{Mrtr, StaleStatePolicy};
use super::principal::{self, PrincipalResolver};
use super::registry::{PromptMachine, Registry, ResourceMachine, ToolMachine};
use super::round::{
    DEFAULT_MAX_ROUNDS_PER_CALL, DEFAULT_ROUND_TIMEOUT, RoundLimits, RoundTimeouts,
};
use super::stamp::Stamp;
use super::tasks::{MemoryTaskStore, TaskSettings, TaskStore, Tasks};
use crate::machine::{AppStates, Machine, MachineDescriptor};
use crate::token::{Clock, KeyRing, StateSealer, SystemClock};
/// Every `State<T>` a machine takes must be registered.
pub(super) fn check_states<'a>(
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

/// No machine keeps a local whose type the state could never read back (see
/// [`Machine::unreadable_locals`]): refused here, before any round's side effects.
pub(super) fn check_storable<O: Send + 'static>(
    machines: &Registry<dyn Machine<Output = O>>,
) -> Result<(), BuildError> {
    for machine in machines.iter() {
        if let Some(local) = machine.unreadable_locals().into_iter().next() {
            return Err(BuildError::UnreadableLocal {
                machine: machine.descriptor().name().to_string(),
                local,
            });
        }
    }
    Ok(())
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
    round_timeout: Option<Duration>,
    round_timeouts: std::collections::HashMap<String, Option<Duration>>,
    local_scopes: Option<super::GrantedScopes>,
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
            round_timeout: Some(DEFAULT_ROUND_TIMEOUT),
            round_timeouts: std::collections::HashMap::new(),
            local_scopes: None,
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
    /// `MRTR_KEYS` environment variable, or a process-local key is generated (said at
    /// INFO: other instances cannot continue its flows).
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

    /// Replaces how the principal of a request is found (default: a [`Principal`](super::Principal) HTTP
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

    /// The OAuth scopes granted to every request that comes without HTTP — over stdio, or
    /// any other transport that carries no HTTP request. Such a request has no access
    /// token, so by default it is granted no scope, and a tool that declares scopes
    /// (`#[mrtr::tool(scopes = ["deploy"])]`) is refused for it (`-32600` naming them), as
    /// over HTTP without a token. A server run over stdio by its one local user can grant
    /// them here; tools read them through
    /// [`RequestCx::scopes`](crate::machine::RequestCx::scopes). Over HTTP this has no
    /// effect: scopes come from the request's token only.
    ///
    /// ```
    /// let b = mrtr_runtime::server::McpServer::builder("demo").local_scopes(["deploy"]);
    /// ```
    pub fn local_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.local_scopes = Some(super::GrantedScopes::new(scopes));
        self
    }

    /// Where tasks live (see [`tasks`](super::tasks)): shared by every instance that serves the same
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
    /// (default [`DEFAULT_LEGACY_REQUEST_TIMEOUT`](super::DEFAULT_LEGACY_REQUEST_TIMEOUT), 240 s, under the HTTP session idle
    /// timeout). Past it the request is
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

    /// How long one round of a machine's own code may run — from a call or an answer to its
    /// next question or its result (default [`DEFAULT_ROUND_TIMEOUT`], 60 s; `None` turns
    /// the deadline off). Past it the round's future is dropped and the call ends with
    /// `-32603` naming the tool and `round_timeout` (`data.roundTimeoutMs`), on every
    /// carrier: an MRTR request or a legacy session's call gets the error; a task ends
    /// `failed` with it and frees its slot. Time a client takes to answer does not count.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = mrtr_runtime::server::McpServer::builder("demo").round_timeout(Duration::from_secs(300));
    /// let unbounded = mrtr_runtime::server::McpServer::builder("demo").round_timeout(None);
    /// ```
    pub fn round_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.round_timeout = timeout.into();
        self
    }

    /// Overrides [`round_timeout`](Self::round_timeout) for one tool: its rounds may run for
    /// `timeout` (`None`: no deadline), on every carrier, and past it the call ends with
    /// the same `-32603` naming the tool and `round_timeout` (its task ends `failed`). The
    /// name must be a tool registered on this builder by the time
    /// [`build`](Self::build) runs, else `build` fails with
    /// [`BuildError::UnknownTool`]. Set it again to replace it.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Export(MachineDescriptor);
    /// # impl Machine for Export {
    /// #     type Output = rmcp::model::CallToolResult;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, _run: Run<'a>) -> StepFuture<'a, Self::Output> {
    /// #         Box::pin(std::future::pending())
    /// #     }
    /// # }
    /// # let export = || Export(MachineDescriptor::tool(
    /// #     rmcp::model::Tool::new("export", "Exports", serde_json::Map::new()), [], 1));
    /// use std::time::Duration;
    /// let server = mrtr_runtime::server::McpServer::builder("demo")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .round_timeout(Duration::from_secs(30))
    ///     .tool(export())
    ///     .round_timeout_for("export", Duration::from_secs(600))
    ///     .build();
    /// assert!(server.is_ok());
    /// let typo = mrtr_runtime::server::McpServer::builder("demo")
    ///     .keys(mrtr_runtime::token::KeyRing::generate_process_local().unwrap())
    ///     .tool(export())
    ///     .round_timeout_for("exprot", None)
    ///     .build();
    /// assert!(typo.err().unwrap().to_string().contains("`exprot`"));
    /// ```
    pub fn round_timeout_for(
        mut self,
        tool: impl Into<String>,
        timeout: impl Into<Option<Duration>>,
    ) -> Self {
        self.round_timeouts.insert(tool.into(), timeout.into());
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
        check_storable(&self.tools)?;
        check_storable(&self.prompts)?;
        check_storable(&self.resources)?;
        let mut overridden: Vec<&String> = self.round_timeouts.keys().collect();
        overridden.sort();
        if let Some(tool) = overridden
            .iter()
            .find(|name| self.tools.get(name).is_none())
        {
            return Err(BuildError::UnknownTool {
                tool: tool.to_string(),
                knob: "round_timeout_for",
            });
        }
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
        let round_timeout = RoundTimeouts {
            per_tool: Arc::new(self.round_timeouts),
            ..RoundTimeouts::new(self.round_timeout)
        };
        let limits = RoundLimits {
            max_rounds: self.max_rounds,
            max_state_bytes: sealer.max_token_bytes(),
            round_timeout: round_timeout.clone(),
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
                    round_timeout,
                    stamp,
                },
                info: self.info,
                tools: self.tools,
                prompts: self.prompts,
                resources: self.resources,
                principal: self.principal.unwrap_or_else(principal::default_resolver),
                legacy: self.legacy,
                tasks,
                local_scopes: self.local_scopes,
                fallback,
            }),
        })
    }
}
