//! Cost of the round pipeline (open, answers, step, gate, seal) for the hand-written example's
//! three-round `PlanRelease`, in-process through `mrtr::testing::Harness`.
//!
//! `cargo bench --bench rounds`. Figures are recorded in `docs/contributing/performance-lab-notes.md`.

#![allow(deprecated)] // sampling is deprecated by SEP-2577 but still part of 2026-07-28

#[path = "../examples/hand_written/release_wizard.rs"]
#[allow(dead_code)]
mod release_wizard;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mrtr::rmcp::model::{InputRequest, InputResponses};
use mrtr::testing::{Harness, Reply};
use release_wizard::PlanRelease;
use serde_json::{Value, json};

/// What the scripted user answers to each of the three questions.
fn answer(key: &str, _request: &InputRequest) -> Value {
    match key {
        "environment" => json!({"action": "accept", "content": {"choice": "production"}}),
        "confirm" => json!({"action": "accept", "content": {"confirm": true}}),
        _ => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "Ship it carefully."},
            "model": "m"
        }),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime")
}

fn rounds(c: &mut Criterion) {
    let runtime = runtime();
    let harness = Harness::new();
    let tool = PlanRelease::new(Arc::new(AtomicUsize::new(0)));
    let args = json!({"service": "api"});

    let transcript = runtime
        .block_on(harness.drive(&tool, args.clone(), answer))
        .expect("the flow finishes");
    let sizes: Vec<usize> = transcript.rounds.iter().map(|r| r.token_len).collect();
    eprintln!("PlanRelease requestState bytes per round: {sizes:?}");

    // The state and answers a client sends with its first retry.
    let Ok(Reply::InputRequired(first)) =
        runtime.block_on(harness.request(&tool, args.clone(), None, None))
    else {
        panic!("round 1 asks for input");
    };
    let round_one_state = first.request_state.clone();
    let round_one_answers: InputResponses = first
        .input_requests
        .iter()
        .flatten()
        .map(|(key, request)| (key.clone(), answer(key, request)))
        .collect();

    // Check once that the resume benchmarked below is the round-2 step it claims to be.
    let Ok(Reply::InputRequired(second)) = runtime.block_on(harness.request(
        &tool,
        args.clone(),
        round_one_state.clone(),
        Some(round_one_answers.clone()),
    )) else {
        panic!("round 2 asks for input");
    };
    assert!(
        second
            .input_requests
            .as_ref()
            .is_some_and(|requests| requests.contains_key("confirm")),
        "round 2 asks for confirmation"
    );

    let mut group = c.benchmark_group("rounds");
    group.bench_function("plan_release_three_round_flow", |b| {
        b.to_async(&runtime)
            .iter(|| harness.drive(&tool, black_box(args.clone()), answer))
    });
    group.bench_function("plan_release_first_call", |b| {
        b.to_async(&runtime)
            .iter(|| harness.request(&tool, black_box(args.clone()), None, None))
    });
    group.bench_function("plan_release_resume_round_two", |b| {
        b.to_async(&runtime).iter(|| {
            harness.request(
                &tool,
                black_box(args.clone()),
                round_one_state.clone(),
                Some(round_one_answers.clone()),
            )
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = rounds
}
criterion_main!(benches);
