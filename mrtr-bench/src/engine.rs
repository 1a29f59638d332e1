//! Flows in-process, without HTTP, for counting instructions with callgrind: `mrtr` through
//! `mrtr::testing::Harness` (the server's round engine: open, answers, step, gate, seal),
//! the hand-written tools through [`HandWritten::call`].
//!
//! Every request the server handles goes through [`measured_request_mrtr`] or
//! [`measured_request_rmcp`] (never inlined), so
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_request*'`
//! counts the server's work and nothing of the scripted client's.

use std::future::Future;

use mrtr::machine::Machine;
use mrtr::rmcp::ErrorData;
use mrtr::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
    InputRequiredResult, InputResponses,
};
use mrtr::testing::{Harness, Reply};
use serde::Serialize;
use serde_json::Value;

use crate::hand_written::HandWritten;
use crate::macro_tools;
use crate::scenario::{Scenario, answer};

/// Which implementation serves the in-process flows.
///
/// ```
/// use clap::ValueEnum;
/// assert!(mrtr_bench::engine::EngineImpl::from_str("mrtr", false).is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineImpl {
    /// The `#[mrtr::tool]` functions through `Harness`.
    Mrtr,
    /// The hand-written rmcp tools.
    Rmcp,
}

/// Which requests of each flow go through the measured functions.
///
/// ```
/// use mrtr_bench::engine::Measure;
/// assert!(Measure::Request(3).includes(3) && !Measure::Request(3).includes(2));
/// assert!(Measure::All.includes(7));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Measure {
    /// Every request of every flow.
    All,
    /// Only the k-th request (from 1) of each flow: the cost of round k.
    Request(usize),
}

impl Measure {
    /// Whether request `number` (from 1) of a flow is measured.
    ///
    /// ```
    /// assert!(mrtr_bench::engine::Measure::Request(1).includes(1));
    /// ```
    pub fn includes(self, number: usize) -> bool {
        match self {
            Measure::All => true,
            Measure::Request(k) => k == number,
        }
    }
}

/// What a run did.
///
/// ```
/// # use mrtr_bench::engine::*;
/// let report = run_flows(EngineImpl::Rmcp, "survey:2".parse().unwrap(), 3, Measure::All).unwrap();
/// assert_eq!((report.flows, report.measured_requests), (3, 9));
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct EngineReport {
    /// The implementation.
    pub implementation: EngineImpl,
    /// The scenario (`survey:5`).
    pub scenario: String,
    /// Flows run, each verified.
    pub flows: usize,
    /// Requests that went through a measured function.
    pub measured_requests: usize,
}

/// The client capabilities every request declares (as `flowload` sends them).
fn declared_capabilities() -> ClientCapabilities {
    serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}, "sampling": {}}))
        .expect("valid capabilities")
}

/// One `mrtr` request, measured.
///
/// ```
/// # use mrtr_bench::engine::measured_request_mrtr;
/// let harness = mrtr::testing::Harness::new();
/// let reply = measured_request_mrtr(&harness, &mrtr_bench::macro_tools::profile, serde_json::json!({}), None, None);
/// assert!(reply.is_ok());
/// ```
#[inline(never)]
pub fn measured_request_mrtr(
    harness: &Harness,
    machine: &dyn Machine<Output = CallToolResult>,
    arguments: Value,
    request_state: Option<String>,
    input_responses: Option<InputResponses>,
) -> Result<Reply<CallToolResult>, ErrorData> {
    block_on(harness.request(machine, arguments, request_state, input_responses))
}

/// One hand-written rmcp request, measured.
///
/// ```
/// # use mrtr_bench::engine::measured_request_rmcp;
/// let server = mrtr_bench::hand_written::HandWritten::new().unwrap();
/// let params = rmcp::model::CallToolRequestParams::new("profile");
/// assert!(measured_request_rmcp(&server, params, &Default::default()).is_err()); // no elicitation declared
/// ```
#[inline(never)]
pub fn measured_request_rmcp(
    server: &HandWritten,
    params: CallToolRequestParams,
    capabilities: &ClientCapabilities,
) -> Result<CallToolResponse, ErrorData> {
    // Through the same executor as the mrtr side, so both pay for it alike.
    block_on(async { server.call(&params, capabilities) })
}

/// The same requests, not measured (rounds outside a [`Measure::Request`]).
fn unmeasured<T>(future: impl Future<Output = T>) -> T {
    block_on(future)
}

fn block_on<T>(future: impl Future<Output = T>) -> T {
    futures::executor::block_on(future)
}

/// The next request's retry part: the answers to `asked` and its state.
fn answer_round(
    asked: InputRequiredResult,
    round: usize,
) -> Result<(Option<String>, Option<InputResponses>), String> {
    let mut responses = InputResponses::new();
    for (key, request) in asked.input_requests.unwrap_or_default() {
        let request = serde_json::to_value(&request).map_err(|e| e.to_string())?;
        responses.insert(key, answer(&request, round)?);
    }
    Ok((asked.request_state, Some(responses)))
}

fn check_final(scenario: Scenario, result: &CallToolResult) -> Result<(), String> {
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.as_str());
    if result.is_error == Some(true) || text != Some(scenario.expected_text().as_str()) {
        return Err(format!(
            "expected {:?}, got {result:?}",
            scenario.expected_text()
        ));
    }
    Ok(())
}

/// Runs `flows` complete, verified flows of `scenario` in-process.
///
/// ```
/// # use mrtr_bench::engine::*;
/// let report = run_flows(EngineImpl::Mrtr, "wizard".parse().unwrap(), 2, Measure::Request(1)).unwrap();
/// assert_eq!(report.measured_requests, 2);
/// ```
pub fn run_flows(
    implementation: EngineImpl,
    scenario: Scenario,
    flows: usize,
    measure: Measure,
) -> Result<EngineReport, String> {
    let capabilities = declared_capabilities();
    let harness = Harness::new().capabilities(capabilities.clone());
    let server = HandWritten::new().map_err(|e| e.to_string())?;
    let machine: &dyn Machine<Output = CallToolResult> = match scenario {
        Scenario::Wizard => &macro_tools::wizard,
        Scenario::Survey(_) => &macro_tools::survey,
        Scenario::Profile => &macro_tools::profile,
    };
    let arguments = scenario.arguments();
    let mut measured_requests = 0;
    for _ in 0..flows {
        let (mut state, mut responses) = (None, None);
        let mut number = 1;
        let result = loop {
            let measured = measure.includes(number);
            measured_requests += usize::from(measured);
            let asked = match implementation {
                EngineImpl::Mrtr => {
                    let arguments = Value::Object(arguments.clone());
                    let reply = if measured {
                        measured_request_mrtr(&harness, machine, arguments, state, responses)
                    } else {
                        unmeasured(harness.request(machine, arguments, state, responses))
                    };
                    match reply.map_err(|e| format!("request {number}: {e}"))? {
                        Reply::Complete(result) => break result,
                        Reply::InputRequired(asked) => asked,
                    }
                }
                EngineImpl::Rmcp => {
                    let mut params = CallToolRequestParams::new(scenario.tool())
                        .with_arguments(arguments.clone());
                    params.request_state = state;
                    params.input_responses = responses;
                    let reply = if measured {
                        measured_request_rmcp(&server, params, &capabilities)
                    } else {
                        unmeasured(async { server.call(&params, &capabilities) })
                    };
                    match reply.map_err(|e| format!("request {number}: {e}"))? {
                        CallToolResponse::Complete(result) => break result,
                        CallToolResponse::InputRequired(asked) => asked,
                        other => return Err(format!("request {number}: unexpected {other:?}")),
                    }
                }
            };
            (state, responses) = answer_round(asked, number)?;
            number += 1;
            if number > scenario.requests_per_flow() as usize {
                return Err(format!("{scenario} asked more rounds than it should"));
            }
        };
        check_final(scenario, &result)?;
    }
    Ok(EngineReport {
        implementation,
        scenario: scenario.to_string(),
        flows,
        measured_requests,
    })
}
