//! The harness cannot silently rot: both implementations (and mrtr's production serving)
//! finish every scenario with the verified text over real HTTP on 127.0.0.1, ask exactly
//! the same questions, and report what the tables are made of.

use mrtr::rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities};
use mrtr::testing::{Harness, Reply};
use mrtr_bench::engine::{EngineImpl, Measure, run_flows};
use mrtr_bench::hand_written::HandWritten;
use mrtr_bench::load::{LoadConfig, run};
use mrtr_bench::macro_tools;
use mrtr_bench::scenario::{Scenario, answer};
use mrtr_bench::serve::{Implementation, start};
use serde_json::Value;

const SCENARIOS: [Scenario; 4] = [
    Scenario::Wizard,
    Scenario::Survey(1),
    Scenario::Survey(5),
    Scenario::Profile,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_is_verified_over_http_on_each_implementation() {
    for implementation in [
        Implementation::Mrtr,
        Implementation::MrtrService,
        Implementation::Rmcp,
        Implementation::Fly,
        Implementation::Floor,
    ] {
        let server = start(implementation, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("the server starts");
        for scenario in SCENARIOS {
            let config = LoadConfig {
                flows: 4,
                warmup: 1,
                concurrency: 2,
                server_pid: Some(std::process::id()),
                ..LoadConfig::new(server.url.clone(), scenario)
            };
            let report = run(&config).await.expect("the run completes");
            let label = format!("{implementation:?} {scenario}");
            assert_eq!(
                report.failed_flows, 0,
                "{label}: {:?}",
                report.first_failure
            );
            assert_eq!(report.verified_flows, 4, "{label}");
            assert_eq!(
                report.requests_per_flow,
                f64::from(scenario.requests_per_flow()),
                "{label}"
            );
            // One sealed state per round, every one of them non-empty.
            let rounds = scenario.requests_per_flow() as usize - 1;
            assert_eq!(report.state_bytes_by_round.len(), rounds, "{label}");
            assert!(
                report.state_bytes_by_round.iter().all(|&b| b > 0),
                "{label}"
            );
            assert!(report.server_cpu_us_per_flow.is_some(), "{label}");
            assert!(
                report.server_peak_rss_kib.is_some_and(|kib| kib > 0),
                "{label}"
            );
        }
    }
}

#[tokio::test]
async fn a_wrong_endpoint_fails_the_flows_instead_of_passing() {
    let server = start(Implementation::Rmcp, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("the server starts");
    let config = LoadConfig {
        flows: 2,
        warmup: 0,
        concurrency: 1,
        ..LoadConfig::new(
            server.url.replace("/mcp", "/nothing-here"),
            Scenario::Wizard,
        )
    };
    let report = run(&config).await.expect("the run completes");
    assert_eq!((report.verified_flows, report.failed_flows), (0, 2));
    assert!(report.first_failure.is_some());
}

fn capabilities() -> ClientCapabilities {
    serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}, "sampling": {}}))
        .unwrap()
}

/// Drives both implementations in lockstep and compares every round's `inputRequests`.
#[tokio::test]
async fn both_implementations_ask_the_same_questions() {
    let harness = Harness::new().capabilities(capabilities());
    let hand = HandWritten::new().unwrap();
    for scenario in SCENARIOS {
        let machine: &dyn mrtr::machine::Machine<Output = _> = match scenario {
            Scenario::Wizard => &macro_tools::wizard,
            Scenario::Survey(_) => &macro_tools::survey,
            Scenario::Profile => &macro_tools::profile,
        };
        let (mut mrtr_retry, mut rmcp_retry) = ((None, None), (None, None));
        for round in 1..scenario.requests_per_flow() as usize {
            let mrtr_reply = harness
                .request(
                    machine,
                    Value::Object(scenario.arguments()),
                    mrtr_retry.0.take(),
                    mrtr_retry.1.take(),
                )
                .await
                .unwrap();
            let mut params =
                CallToolRequestParams::new(scenario.tool()).with_arguments(scenario.arguments());
            (params.request_state, params.input_responses) = rmcp_retry;
            let rmcp_reply = hand.call(&params, &capabilities()).unwrap();
            let (Reply::InputRequired(mrtr_asked), CallToolResponse::InputRequired(rmcp_asked)) =
                (mrtr_reply, rmcp_reply)
            else {
                panic!("{scenario} round {round}: both should ask");
            };
            let questions = serde_json::to_value(&mrtr_asked.input_requests).unwrap();
            assert_eq!(
                questions,
                serde_json::to_value(&rmcp_asked.input_requests).unwrap(),
                "{scenario} round {round}"
            );
            let answers: mrtr::rmcp::model::InputResponses = questions
                .as_object()
                .unwrap()
                .iter()
                .map(|(key, request)| (key.clone(), answer(request, round).unwrap()))
                .collect();
            mrtr_retry = (mrtr_asked.request_state, Some(answers.clone()));
            rmcp_retry = (rmcp_asked.request_state, Some(answers));
        }
    }
}

#[test]
fn in_process_flows_are_verified_and_count_the_measured_requests() {
    for implementation in [EngineImpl::Mrtr, EngineImpl::Rmcp] {
        let all = run_flows(implementation, Scenario::Survey(3), 2, Measure::All).unwrap();
        assert_eq!(all.measured_requests, 8);
        let third = run_flows(implementation, Scenario::Survey(3), 2, Measure::Request(3)).unwrap();
        assert_eq!(third.measured_requests, 2);
    }
}

/// What a host shows of an input request: a form's message and, per field, its type, title,
/// options and bounds; a sampling request's messages and token budget. (FlyMCPRust derives
/// the profile form from a struct, so its schema also carries `format`, `description` and a
/// top-level `title`/`$schema`, which no host shows as the question.)
fn shown(request: &Value) -> Value {
    let params = &request["params"];
    match request["method"].as_str() {
        Some("elicitation/create") => {
            let fields: serde_json::Map<String, Value> = params["requestedSchema"]["properties"]
                .as_object()
                .expect("a form has properties")
                .iter()
                .map(|(name, field)| {
                    let kept = ["type", "title", "enum", "minimum", "maximum"]
                        .iter()
                        .filter_map(|k| field.get(*k).map(|v| (k.to_string(), v.clone())))
                        .collect();
                    (name.clone(), Value::Object(kept))
                })
                .collect();
            serde_json::json!({"message": params["message"], "fields": fields,
                "required": params["requestedSchema"]["required"]})
        }
        _ => serde_json::json!({"method": request["method"], "messages": params["messages"],
            "maxTokens": params["maxTokens"]}),
    }
}

/// FlyMCPRust's twin asks what the hand-written rmcp tool asks, round by round, over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flymcprust_twin_asks_what_the_others_ask() {
    let client = reqwest::Client::new();
    let rmcp = start(Implementation::Rmcp, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("rmcp starts");
    let fly = start(Implementation::Fly, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("fly starts");
    for scenario in SCENARIOS {
        let asked = |url: String| {
            let client = client.clone();
            async move {
                let rounds = mrtr_bench::load::flow_questions(&client, &url, scenario)
                    .await
                    .unwrap_or_else(|e| panic!("{scenario} at {url}: {e}"));
                rounds
                    .iter()
                    .map(|round| round.iter().map(shown).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            }
        };
        let expected = asked(rmcp.url.clone()).await;
        assert_eq!(expected.len(), scenario.requests_per_flow() as usize - 1);
        assert_eq!(asked(fly.url.clone()).await, expected, "{scenario}");
    }
}
