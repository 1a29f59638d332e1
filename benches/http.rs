//! Cost of the hand-written three-round `PlanRelease` over real Streamable HTTP on
//! 127.0.0.1: an rmcp server (`McpServer`, stateless) and rmcp's client in one process.
//!
//! `cargo bench --bench http`. Figures are recorded in `docs/contributing/performance-lab-notes.md`.

#![allow(deprecated)] // sampling is deprecated by SEP-2577 but still part of 2026-07-28

#[path = "../examples/hand_written/release_wizard.rs"]
#[allow(dead_code)]
mod release_wizard;
#[path = "../tests/support/mod.rs"]
mod support;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mrtr::rmcp::model::CallToolResponse;
use mrtr::server::McpServer;
use release_wizard::PlanRelease;
use serde_json::json;
use support::{ScriptedUser, answer_round, call, call_once, expect_input_required, http_client};

fn http(c: &mut Criterion) {
    // Two workers: the machine has two cores, shared by client and server here.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let server = McpServer::builder("mrtr-bench")
        .tool(PlanRelease::new(Arc::new(AtomicUsize::new(0))))
        .build()
        .expect("server builds");
    let running = runtime.block_on(support::serve_http(server));
    let client = runtime.block_on(http_client(&running.url, ScriptedUser::default()));

    // Check once that each benchmarked call does what its name says.
    let finished = runtime
        .block_on(client.call_tool(call("plan_release", json!({"service": "api"}))))
        .expect("the flow finishes");
    assert_eq!(
        support::text_of(&finished),
        format!("api → production: {}", support::SUMMARY)
    );
    let first = expect_input_required(
        runtime
            .block_on(call_once(
                &client,
                call("plan_release", json!({"service": "api"})),
            ))
            .expect("round 1 answers"),
    );
    let round_one_state = first.request_state.clone().expect("sealed state");
    let round_one_answers = answer_round(&first);
    let resume = || {
        call("plan_release", json!({"service": "api"}))
            .with_request_state(round_one_state.clone())
            .with_input_responses(round_one_answers.clone())
    };
    let second = runtime
        .block_on(call_once(&client, resume()))
        .expect("round 2 answers");
    assert!(
        matches!(&second, CallToolResponse::InputRequired(r) if r.input_requests.as_ref().is_some_and(|q| q.contains_key("confirm"))),
        "round 2 asks for confirmation: {second:?}"
    );

    let mut group = c.benchmark_group("http");
    group.bench_function("plan_release_three_round_flow", |b| {
        b.to_async(&runtime)
            .iter(|| client.call_tool(black_box(call("plan_release", json!({"service": "api"})))))
    });
    group.bench_function("plan_release_first_call", |b| {
        b.to_async(&runtime).iter(|| {
            call_once(
                &client,
                black_box(call("plan_release", json!({"service": "api"}))),
            )
        })
    });
    group.bench_function("plan_release_resume_round_two", |b| {
        b.to_async(&runtime)
            .iter(|| call_once(&client, black_box(resume())))
    });
    group.finish();

    drop(client);
    drop(running);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = http
}
criterion_main!(benches);
