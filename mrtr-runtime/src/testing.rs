//! Drive a machine in-process through the real server pipeline — sealing and opening a
//! real token every round — with scripted answers. For tests of your own tools.
//!
//! ```
//! # async fn demo(my_tool: impl mrtr_runtime::machine::Machine<Output = rmcp::model::CallToolResult>) {
//! use mrtr_runtime::testing::Harness;
//! let harness = Harness::new();
//! let transcript = harness
//!     .drive(&my_tool, serde_json::json!({"service": "api"}), |key, _request| {
//!         serde_json::json!({"action": "accept", "content": {"choice": "staging"}})
//!     })
//!     .await
//!     .unwrap();
//! println!("{} rounds", transcript.rounds.len());
//! # }
//! ```

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequiredResult, InputResponses, JsonObject,
};
use serde_json::Value;

use crate::machine::Machine;
use crate::server::StaleStatePolicy;
use crate::server::engine::{Answer, Engine, Incoming};
use crate::token::{Clock, KeyId, KeyRing, ManualClock, SecretKey, StateSealer};

/// One request's reply: the finished output, or what the client must answer.
///
/// ```
/// let reply: mrtr_runtime::testing::Reply<u8> = mrtr_runtime::testing::Reply::Complete(1);
/// assert!(matches!(reply, mrtr_runtime::testing::Reply::Complete(1)));
/// ```
#[derive(Debug)]
pub enum Reply<O> {
    /// The machine finished.
    Complete(O),
    /// The machine needs input.
    InputRequired(InputRequiredResult),
}

/// One round of a driven flow.
///
/// ```
/// let round = mrtr_runtime::testing::RoundRecord { requests: vec![], token_len: 120 };
/// assert_eq!(round.token_len, 120);
/// ```
#[derive(Debug, Clone)]
pub struct RoundRecord {
    /// The keyed requests of the round, in key order.
    pub requests: Vec<(String, InputRequest)>,
    /// The size of the `requestState` issued with them.
    pub token_len: usize,
}

/// A whole flow: every round, then the output.
///
/// ```
/// let t = mrtr_runtime::testing::Transcript { rounds: vec![], output: "done" };
/// assert_eq!(t.output, "done");
/// ```
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
/// let harness = mrtr_runtime::testing::Harness::new();
/// harness.clock().advance(30);
/// ```
pub struct Harness {
    engine: Engine,
    clock: Arc<ManualClock>,
    capabilities: ClientCapabilities,
    principal: Option<String>,
    max_rounds: usize,
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
    /// let h = mrtr_runtime::testing::Harness::new();
    /// ```
    pub fn new() -> Self {
        Self::with_keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([7; 32])))
    }

    /// A harness sealing with `keys` (two harnesses with the same keys continue each
    /// other's flows, like two server instances).
    ///
    /// ```
    /// use mrtr_runtime::token::{KeyId, KeyRing, SecretKey};
    /// let h = mrtr_runtime::testing::Harness::with_keys(KeyRing::new(KeyId(3), SecretKey::from_bytes([1; 32])));
    /// ```
    pub fn with_keys(keys: KeyRing) -> Self {
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let shared: Arc<dyn Clock> = clock.clone();
        Harness {
            engine: Engine {
                sealer: StateSealer::new(keys).with_clock(shared),
                audience: "test".into(),
                stale_state: StaleStatePolicy::default(),
                states: Arc::default(),
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
        }
    }

    /// Declares these client capabilities on every request.
    ///
    /// ```
    /// let h = mrtr_runtime::testing::Harness::new().capabilities(Default::default());
    /// ```
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Binds every request to `principal`.
    ///
    /// ```
    /// let h = mrtr_runtime::testing::Harness::new().principal("alice");
    /// ```
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// Registers application state for `State<T>` parameters, like
    /// `McpServerBuilder::state`.
    ///
    /// ```
    /// let h = mrtr_runtime::testing::Harness::new().state(std::sync::Arc::new(String::from("db")));
    /// ```
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.engine.states).insert(value);
        self
    }

    /// Uses `policy` for states sealed by another version of a machine.
    ///
    /// ```
    /// use mrtr_runtime::server::StaleStatePolicy;
    /// let h = mrtr_runtime::testing::Harness::new().stale_state(StaleStatePolicy::Reject);
    /// ```
    pub fn stale_state(mut self, policy: StaleStatePolicy) -> Self {
        self.engine.stale_state = policy;
        self
    }

    /// The harness's clock, to expire states.
    ///
    /// ```
    /// mrtr_runtime::testing::Harness::new().clock().advance(601);
    /// ```
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }

    /// Sends one request, exactly as a retry would arrive.
    ///
    /// ```
    /// # async fn demo(tool: impl mrtr_runtime::machine::Machine<Output = rmcp::model::CallToolResult>) {
    /// let h = mrtr_runtime::testing::Harness::new();
    /// let first = h.request(&tool, serde_json::json!({}), None, None).await;
    /// # }
    /// ```
    pub async fn request<M: Machine + ?Sized>(
        &self,
        machine: &M,
        arguments: Value,
        request_state: Option<String>,
        input_responses: Option<InputResponses>,
    ) -> Result<Reply<M::Output>, ErrorData> {
        // The check `build()` makes, so a test fails the same way the server would.
        if let Some(missing) = machine
            .descriptor()
            .states
            .iter()
            .find(|s| !self.engine.states.satisfies(s))
        {
            return Err(ErrorData::internal_error(
                format!(
                    "`{}` takes `State<{}>`, but the harness has none; add `.state(value)` to the Harness",
                    machine.descriptor().name(),
                    missing.type_name()
                ),
                None,
            ));
        }
        let arguments: JsonObject = match arguments {
            Value::Object(map) => map,
            Value::Null => JsonObject::new(),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("arguments must be an object, not {other}"),
                    None,
                ));
            }
        };
        let incoming = Incoming {
            arguments: &arguments,
            input_responses,
            request_state,
            capabilities: self.capabilities.clone(),
            principal: self.principal.clone(),
        };
        Ok(match self.engine.serve(machine, incoming).await? {
            Answer::Complete(output) => Reply::Complete(output),
            Answer::InputRequired(result) => Reply::InputRequired(result),
        })
    }

    /// Drives a flow to the end: every round's requests are answered by `answer(key,
    /// request)` and sent back with the sealed state, as a conforming client would.
    ///
    /// ```
    /// # async fn demo(tool: impl mrtr_runtime::machine::Machine<Output = rmcp::model::CallToolResult>) {
    /// let h = mrtr_runtime::testing::Harness::new();
    /// let t = h.drive(&tool, serde_json::json!({}), |_key, _request| serde_json::json!({"action": "decline"})).await;
    /// # }
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
