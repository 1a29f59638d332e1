//! The in-process server a test drives ([`Harness`]), what one request gets back
//! ([`Reply`], [`Refused`]) and the record of a driven flow ([`Transcript`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequiredResult, InputResponses, JsonObject,
};
use serde_json::Value;

use crate::machine::Machine;
use crate::server::DEFAULT_MAX_ROUNDS_PER_CALL;
use crate::server::StaleStatePolicy;
use crate::server::mrtr::{Mrtr, MrtrRequest, RoundReply};
use crate::server::round::{Caller, Era};
use crate::token::{Clock, KeyId, KeyRing, ManualClock, SecretKey, StateSealer};

/// The audience every [`Harness`] binds its tokens to.
pub(crate) const HARNESS_AUDIENCE: &str = "test";

/// One request's reply: the finished output, or what the client must answer (see
/// [`Harness::request`]).
#[derive(Debug)]
pub enum Reply<O> {
    /// The machine finished.
    Complete(O),
    /// The machine needs input.
    InputRequired(InputRequiredResult),
}

/// One round of a driven flow (see [`Harness::drive`]).
#[derive(Debug, Clone)]
pub struct RoundRecord {
    /// The keyed requests of the round, in key order.
    pub requests: Vec<(String, InputRequest)>,
    /// The size of the `requestState` issued with them.
    pub token_len: usize,
}

/// A whole flow: every round, then the output (see [`Harness::drive`]).
#[derive(Debug)]
pub struct Transcript<O> {
    /// The rounds, in order.
    pub rounds: Vec<RoundRecord>,
    /// What the machine finished with.
    pub output: O,
}

/// An in-process server pipeline with a real key ring and a manual clock.
///
/// ```
/// # use mrtr_runtime::machine::*;
/// # struct Deploy(MachineDescriptor);
/// # impl Machine for Deploy {
/// #     type Output = String;
/// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
/// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
/// #         let Some(mut resume) = run.resume else {
/// #             let env = input::choice("Which environment?", ["staging", "prod"]);
/// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
/// #         };
/// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
/// #         let who = run.cx.principal().unwrap_or("anonymous");
/// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
/// #     }) }
/// # }
/// # fn deploy(fingerprint: u64) -> Deploy {
/// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
/// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
/// # }
/// use futures::executor::block_on;
/// use mrtr_runtime::testing::{Harness, Reply};
///
/// // Every round seals a real `requestState`.
/// let first = block_on(Harness::new().request(&deploy(1), serde_json::json!({}), None, None));
/// let Ok(Reply::InputRequired(round)) = first else { panic!("expected a question") };
/// assert!(round.request_state.unwrap().starts_with("mrtr3."));
/// ```
pub struct Harness {
    mrtr: Mrtr,
    clock: Arc<ManualClock>,
    capabilities: ClientCapabilities,
    principal: Option<String>,
    max_rounds: usize,
    /// How transcripts name this instance.
    name: String,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    /// A harness with a fixed test key, audience `"test"`, every capability declared, no
    /// principal, and a clock at 1 700 000 000.
    ///
    /// ```
    /// use mrtr_runtime::token::Clock;
    /// let h = mrtr_runtime::testing::Harness::new();
    /// assert_eq!(h.clock().now_unix_seconds(), 1_700_000_000);
    /// ```
    pub fn new() -> Self {
        Self::with_keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([7; 32])))
    }

    /// A harness sealing with `keys` (two harnesses with the same keys continue each
    /// other's flows, like two server instances).
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    /// use mrtr_runtime::testing::{Harness, Reply};
    /// use mrtr_runtime::token::{KeyId, KeyRing, REJECTED_STATE_MESSAGE, SecretKey};
    /// use serde_json::json;
    ///
    /// let keys = KeyRing::new(KeyId(3), SecretKey::from_bytes([1; 32]));
    /// let (one, two) = (Harness::with_keys(keys.clone()), Harness::with_keys(keys));
    /// let deploy = deploy(1);
    /// let Ok(Reply::InputRequired(round)) = block_on(one.request(&deploy, json!({}), None, None)) else {
    ///     panic!("expected a question");
    /// };
    /// let token = round.request_state;
    /// let answers = [("env".into(), json!({"action": "accept", "content": {"choice": "prod"}}))];
    /// let done = block_on(two.request(&deploy, json!({}), token.clone(), Some(answers.into())));
    /// assert!(matches!(done, Ok(Reply::Complete(out)) if out == "anonymous deployed prod"));
    ///
    /// // A harness with other keys cannot open the state.
    /// let error = block_on(Harness::new().request(&deploy, json!({}), token, None)).unwrap_err();
    /// assert_eq!(error.message, REJECTED_STATE_MESSAGE);
    /// ```
    pub fn with_keys(keys: KeyRing) -> Self {
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let shared: Arc<dyn Clock> = clock.clone();
        Harness {
            mrtr: Mrtr {
                sealer: StateSealer::new(keys).with_clock(shared),
                audience: HARNESS_AUDIENCE.into(),
                stale_state: StaleStatePolicy::default(),
                states: Arc::default(),
                rounds: None,
                max_rounds: DEFAULT_MAX_ROUNDS_PER_CALL,
                round_timeout: crate::server::round::RoundTimeouts::new(None),
                stamp: Arc::new(crate::server::stamp::Stamp::new(
                    &rmcp::model::Implementation::new(HARNESS_AUDIENCE, env!("CARGO_PKG_VERSION")),
                    None,
                )),
            },
            clock,
            capabilities: serde_json::from_value(serde_json::json!({
                "elicitation": {"form": {}, "url": {}},
                "sampling": {"tools": {}},
                "roots": {}
            }))
            .expect("valid capabilities"),
            principal: None,
            max_rounds: 100,
            name: "test".into(),
        }
    }

    /// Two server instances, `one` and `two`, sharing the same keys (as instances behind
    /// a load balancer do) and nothing else: a [`Flow`](super::Flow) can hop between them.
    ///
    /// ```
    /// let (one, two) = mrtr_runtime::testing::Harness::pair();
    /// assert_eq!((one.name(), two.name()), ("one", "two"));
    /// ```
    pub fn pair() -> (Harness, Harness) {
        (Harness::new().named("one"), Harness::new().named("two"))
    }

    /// Names this instance in transcripts.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::testing::Harness::new().named("eu-1").name(), "eu-1");
    /// ```
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How transcripts name this instance (`test` unless [`Self::named`]).
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::testing::Harness::new().name(), "test");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Declares these client capabilities on every request.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    ///
    /// // A client that declares nothing cannot be asked for the environment.
    /// let h = mrtr_runtime::testing::Harness::new().capabilities(Default::default());
    /// let error = block_on(h.request(&deploy(1), serde_json::json!({}), None, None)).unwrap_err();
    /// assert_eq!(error.code.0, -32021);
    /// assert!(error.message.ends_with("did not declare: elicitation.form"));
    /// ```
    #[must_use]
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Binds every request to `principal`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    /// use mrtr_runtime::testing::{Harness, Reply};
    /// use mrtr_runtime::token::REJECTED_STATE_MESSAGE;
    /// use serde_json::json;
    ///
    /// let deploy = deploy(1);
    /// let alice = Harness::new().principal("alice");
    /// let accept = |_: &str, _: &_| json!({"action": "accept", "content": {"choice": "prod"}});
    /// let transcript = block_on(alice.drive(&deploy, json!({}), accept)).unwrap();
    /// assert_eq!(transcript.output, "alice deployed prod");
    ///
    /// // The state is bound to alice: nobody else continues her flow.
    /// let Ok(Reply::InputRequired(round)) = block_on(alice.request(&deploy, json!({}), None, None)) else {
    ///     panic!("expected a question");
    /// };
    /// let bob = Harness::new().principal("bob");
    /// let error = block_on(bob.request(&deploy, json!({}), round.request_state, None)).unwrap_err();
    /// assert_eq!(error.message, REJECTED_STATE_MESSAGE);
    /// ```
    #[must_use]
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// Registers application state for `State<T>` parameters, like
    /// `McpServerBuilder::state`.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mrtr_runtime::machine::*;
    /// # struct Lookup(MachineDescriptor);
    /// # impl Machine for Lookup {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> {
    /// #         Box::pin(async move { Ok(Step::Done(run.cx.state::<Arc<String>>()?.to_string())) })
    /// #     }
    /// # }
    /// # let tool = rmcp::model::Tool::new("lookup", "Looks up", serde_json::Map::new());
    /// # let states = [StateRequirement::of::<Arc<String>>()];
    /// # let lookup = Lookup(MachineDescriptor::tool(tool, [], 1).with_states(states));
    /// use futures::executor::block_on;
    /// use mrtr_runtime::testing::Harness;
    /// use serde_json::{Value, json};
    ///
    /// // `lookup` takes a `State<Arc<String>>` and returns it.
    /// let h = Harness::new().app_state(Arc::new(String::from("db")));
    /// let transcript = block_on(h.drive(&lookup, json!({}), |_, _| Value::Null)).unwrap();
    /// assert_eq!(transcript.output, "db");
    ///
    /// let error = block_on(Harness::new().request(&lookup, json!({}), None, None)).unwrap_err();
    /// assert!(error.message.ends_with("add `.app_state(value)` to the Harness"));
    /// ```
    #[must_use]
    pub fn app_state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.mrtr.states).insert(value);
        self
    }

    /// The former name of [`app_state`](Self::app_state).
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let h = mrtr_runtime::testing::Harness::new().state(7u8);
    /// ```
    #[must_use]
    #[deprecated(since = "0.1.0", note = "renamed to `app_state`")]
    pub fn state<T: Clone + Send + Sync + 'static>(self, value: T) -> Self {
        self.app_state(value)
    }

    /// How many rounds one call may take before the harness's server ends it (default
    /// [`DEFAULT_MAX_ROUNDS_PER_CALL`]), as
    /// [`McpServerBuilder::max_rounds_per_call`](crate::server::McpServerBuilder::max_rounds_per_call).
    ///
    /// ```
    /// let h = mrtr_runtime::testing::Harness::new().max_rounds_per_call(3);
    /// ```
    #[must_use]
    pub fn max_rounds_per_call(mut self, rounds: u32) -> Self {
        self.mrtr.max_rounds = rounds.max(1);
        self
    }

    /// How long one round of a machine's own code may run before the harness's server drops
    /// it and ends the call with `-32603` naming the tool and `round_timeout`, as
    /// [`McpServerBuilder::round_timeout`](crate::server::McpServerBuilder::round_timeout)
    /// (whose default is [`DEFAULT_ROUND_TIMEOUT`](crate::server::DEFAULT_ROUND_TIMEOUT)).
    /// The harness has no deadline unless given one, so it runs under any executor; with
    /// one, drive it inside a Tokio runtime (the deadline is a Tokio timer).
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Hangs(MachineDescriptor);
    /// # impl Machine for Hangs {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, _run: Run<'a>) -> StepFuture<'a, String> {
    /// #         Box::pin(std::future::pending())
    /// #     }
    /// # }
    /// # let hangs = Hangs(MachineDescriptor::tool(
    /// #     rmcp::model::Tool::new("hangs", "Never returns", serde_json::Map::new()), [], 1));
    /// use std::time::Duration;
    /// let harness = mrtr_runtime::testing::Harness::new().round_timeout(Duration::from_millis(20));
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let error = runtime
    ///     .block_on(harness.request(&hangs, serde_json::json!({}), None, None))
    ///     .unwrap_err();
    /// assert_eq!(error.code.0, -32603);
    /// assert!(error.message.contains("`hangs`") && error.message.contains("`round_timeout`"));
    /// ```
    #[must_use]
    pub fn round_timeout(mut self, timeout: impl Into<Option<std::time::Duration>>) -> Self {
        self.mrtr.round_timeout = crate::server::round::RoundTimeouts::new(timeout.into());
        self
    }

    /// Uses `policy` for states sealed by another version of a machine.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    /// use mrtr_runtime::server::StaleStatePolicy;
    /// use mrtr_runtime::testing::{Harness, Reply};
    /// use mrtr_runtime::token::REJECTED_STATE_MESSAGE;
    /// use serde_json::json;
    ///
    /// // A state sealed by version 1 of `deploy` comes back to version 2.
    /// let h = Harness::new().stale_state(StaleStatePolicy::Reject);
    /// let Ok(Reply::InputRequired(round)) = block_on(h.request(&deploy(1), json!({}), None, None)) else {
    ///     panic!("expected a question");
    /// };
    /// let token = round.request_state;
    /// let error = block_on(h.request(&deploy(2), json!({}), token.clone(), None)).unwrap_err();
    /// assert_eq!(error.message, REJECTED_STATE_MESSAGE);
    ///
    /// // The default policy starts the flow again instead.
    /// let restarted = block_on(Harness::new().request(&deploy(2), json!({}), token, None));
    /// assert!(matches!(restarted, Ok(Reply::InputRequired(_))));
    /// ```
    #[must_use]
    pub fn stale_state(mut self, policy: StaleStatePolicy) -> Self {
        self.mrtr.stale_state = policy;
        self
    }

    /// The harness's clock, to expire states.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    /// use mrtr_runtime::testing::{Harness, Reply};
    /// use mrtr_runtime::token::REJECTED_STATE_MESSAGE;
    /// use serde_json::json;
    ///
    /// let (h, deploy) = (Harness::new(), deploy(1));
    /// let Ok(Reply::InputRequired(round)) = block_on(h.request(&deploy, json!({}), None, None)) else {
    ///     panic!("expected a question");
    /// };
    /// h.clock().advance(601); // past the 600-second lifetime of a round
    /// let answers = [("env".into(), json!({"action": "accept", "content": {"choice": "prod"}}))];
    /// let late = block_on(h.request(&deploy, json!({}), round.request_state, Some(answers.into())));
    /// assert_eq!(late.unwrap_err().message, REJECTED_STATE_MESSAGE);
    /// ```
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Sends one request, exactly as a retry would arrive.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    /// use mrtr_runtime::testing::{Harness, Reply};
    /// use serde_json::json;
    ///
    /// let (h, deploy) = (Harness::new(), deploy(1));
    /// let Ok(Reply::InputRequired(first)) = block_on(h.request(&deploy, json!({}), None, None)) else {
    ///     panic!("expected a question");
    /// };
    /// assert!(first.input_requests.unwrap().contains_key("env"));
    ///
    /// let answers = [("env".into(), json!({"action": "accept", "content": {"choice": "prod"}}))];
    /// let second = block_on(h.request(&deploy, json!({}), first.request_state, Some(answers.into())));
    /// assert!(matches!(second, Ok(Reply::Complete(out)) if out == "anonymous deployed prod"));
    /// ```
    pub async fn request<M: Machine + ?Sized>(
        &self,
        machine: &M,
        arguments: Value,
        request_state: Option<String>,
        input_responses: Option<InputResponses>,
    ) -> Result<Reply<M::Output>, ErrorData> {
        self.request_explained(machine, arguments, request_state, input_responses)
            .await
            .map_err(|refused| refused.error)
    }

    /// [`Self::request`], saying on refusal exactly why a `requestState` was refused (the
    /// reason the server only logs).
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct T(MachineDescriptor);
    /// # impl Machine for T {
    /// #     type Output = ();
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, _: Run<'a>) -> StepFuture<'a, ()> { Box::pin(async { Ok(Step::Done(())) }) }
    /// # }
    /// # let t = T(MachineDescriptor::tool(rmcp::model::Tool::new("t", "T", serde_json::Map::new()), [], 1));
    /// use futures::executor::block_on;
    /// let h = mrtr_runtime::testing::Harness::new();
    /// let refused = block_on(h.request_explained(&t, serde_json::json!({}), Some("mrtr3.AAAA".into()), None)).unwrap_err();
    /// assert_eq!(refused.rejection, Some("malformed"));
    /// ```
    pub async fn request_explained<M: Machine + ?Sized>(
        &self,
        machine: &M,
        arguments: Value,
        request_state: Option<String>,
        input_responses: Option<InputResponses>,
    ) -> Result<Reply<M::Output>, Refused> {
        let refused = |error| Refused {
            error,
            rejection: None,
        };
        // The check `build()` makes, so a test fails the same way the server would.
        if let Some(missing) = machine
            .descriptor()
            .states
            .iter()
            .find(|s| !self.mrtr.states.satisfies(s))
        {
            return Err(refused(ErrorData::internal_error(
                format!(
                    "`{}` takes `State<{}>`, but the harness has none; add `.app_state(value)` to the Harness",
                    machine.descriptor().name(),
                    missing.type_name()
                ),
                None,
            )));
        }
        if let Some(local) = machine.unreadable_locals().into_iter().next() {
            return Err(refused(ErrorData::internal_error(
                format!("`{}`: {local}", machine.descriptor().name()),
                None,
            )));
        }
        let arguments: JsonObject = match arguments {
            Value::Object(map) => map,
            Value::Null => JsonObject::new(),
            other => {
                return Err(refused(ErrorData::invalid_params(
                    format!("arguments must be an object, not {other}"),
                    None,
                )));
            }
        };
        let request = MrtrRequest {
            arguments: &arguments,
            input_responses,
            request_state,
            caller: Caller {
                capabilities: self.capabilities.clone(),
                principal: self.principal.clone(),
                era: Era::Stateless,
                // The harness has no HTTP request: declared scopes are not checked.
                scopes: crate::server::ScopeCheck::Unchecked,
            },
            task_after: None,
            stamped_on_write: false,
            record_slot: None,
        };
        let (result, rejection) = self.mrtr.serve_explained(machine, request).await;
        match result {
            Ok(RoundReply::Complete(output)) => Ok(Reply::Complete(output)),
            Ok(RoundReply::InputRequired(result)) => Ok(Reply::InputRequired(result)),
            Ok(RoundReply::Task(_)) => Err(refused(ErrorData::internal_error(
                "the test kit does not run tasks",
                None,
            ))),
            Err(error) => Err(Refused { error, rejection }),
        }
    }

    /// Drives a flow to the end: every round's requests are answered by `answer(key,
    /// request)` and sent back with the sealed state, as a conforming client would.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         let who = run.cx.principal().unwrap_or("anonymous");
    /// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # fn deploy(fingerprint: u64) -> Deploy {
    /// #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
    /// #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
    /// # }
    /// use futures::executor::block_on;
    /// use serde_json::json;
    ///
    /// let h = mrtr_runtime::testing::Harness::new();
    /// let decline = |_key: &str, _request: &_| json!({"action": "decline"});
    /// let transcript = block_on(h.drive(&deploy(1), json!({}), decline)).unwrap();
    /// assert_eq!(transcript.rounds.len(), 1);
    /// assert_eq!(transcript.rounds[0].requests[0].0, "env");
    /// assert_eq!(transcript.output, "anonymous deployed nothing");
    /// ```
    pub async fn drive<M: Machine + ?Sized>(
        &self,
        machine: &M,
        arguments: Value,
        mut answer: impl FnMut(&str, &InputRequest) -> Value,
    ) -> Result<Transcript<M::Output>, ErrorData> {
        let mut rounds = Vec::new();
        let mut request_state = None;
        let mut input_responses = None;
        for _ in 0..self.max_rounds {
            match self
                .request(
                    machine,
                    arguments.clone(),
                    request_state.take(),
                    input_responses.take(),
                )
                .await?
            {
                Reply::Complete(output) => return Ok(Transcript { rounds, output }),
                Reply::InputRequired(result) => {
                    let requests: Vec<(String, InputRequest)> = result
                        .input_requests
                        .unwrap_or_default()
                        .into_iter()
                        .collect();
                    let responses: InputResponses = requests
                        .iter()
                        .map(|(key, request)| (key.clone(), answer(key, request)))
                        .collect();
                    rounds.push(RoundRecord {
                        requests,
                        token_len: result.request_state.as_ref().map_or(0, String::len),
                    });
                    request_state = result.request_state;
                    input_responses = Some(responses);
                }
            }
        }
        Err(ErrorData::internal_error(
            format!("the flow did not finish within {} rounds", self.max_rounds),
            None,
        ))
    }
}

/// A request the server refused: the JSON-RPC error the client gets, and — for a refused
/// `requestState` — the exact reason the server logged (the `rejection` field of the
/// `mrtr.round` span: `unauthentic`, `expired`, `unknown_key`, `wrong_prefix`,
/// `malformed`, `too_large`, `issued_in_future`, `fingerprint_mismatch`, `unknown_form`,
/// `undecodable_envelope`, `unsupported_version`, `undecodable_pending_request`,
/// `undecodable_state`, `pending_requests_do_not_match_state`, `round_beyond_cap`).
///
/// ```
/// use mrtr_runtime::testing::Refused;
/// let refused = Refused { error: rmcp::ErrorData::invalid_params("bad", None), rejection: Some("expired") };
/// assert_eq!(refused.to_string(), "-32602 bad (rejection: expired)");
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} {}{}", error.code.0, error.message, rejection.map(|r| format!(" (rejection: {r})")).unwrap_or_default())]
pub struct Refused {
    /// What the client receives.
    pub error: ErrorData,
    /// Why the `requestState` was refused, when it was.
    pub rejection: Option<&'static str>,
}
