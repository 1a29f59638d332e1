//! Cost of sealing and opening `requestState`, and of rejecting bad tokens.
//!
//! `cargo bench --bench token`. Figures are recorded in `docs/contributing/performance-lab-notes.md`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mrtr::token::internals::{Binding, Method, SealInput, StateSealer};
use mrtr::token::{KeyId, KeyRing, ManualClock, SecretKey};

/// One size of payload the server seals between rounds. The payload (the pending input
/// requests, stored compactly, followed by the tool's state) is opaque to the sealer, so
/// only its length matters here; `benches/rounds.rs` measures whole rounds.
struct Case {
    name: &'static str,
    payload: Vec<u8>,
}

/// Bytes that do not compress into anything special.
fn bytes_of_len(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

fn cases() -> Vec<Case> {
    vec![
        // A text question and a small state: what one survey round seals.
        Case {
            name: "40B_payload",
            payload: bytes_of_len(40),
        },
        Case {
            name: "1KiB_payload",
            payload: bytes_of_len(1024),
        },
        Case {
            name: "16KiB_payload",
            payload: bytes_of_len(16 * 1024),
        },
    ]
}

fn sealer() -> StateSealer {
    StateSealer::new(KeyRing::new(KeyId(1), SecretKey::from_bytes([7; 32])))
        .with_clock(Arc::new(ManualClock::new(1_700_000_000)))
}

fn arguments() -> serde_json::Map<String, serde_json::Value> {
    serde_json::json!({"service": "api"})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn seal_input(case: &Case) -> SealInput {
    SealInput {
        fingerprint: 0x9e1e_a5e0_0000_0001,
        round: 1,
        payload: case.payload.clone(),
    }
}

fn seal_and_open(c: &mut Criterion) {
    let sealer = sealer();
    let args = arguments();
    let binding = Binding::new("bench", Method::CallTool, "plan_release", Some(&args), None);
    let mut group = c.benchmark_group("token");
    for case in cases() {
        let token = sealer
            .seal(&binding, seal_input(&case))
            .expect("case fits the size cap");
        eprintln!("token/{}: {} bytes", case.name, token.len());
        group.throughput(Throughput::Bytes(token.len() as u64));
        // Cloning the input is part of what the engine does too (it owns the state).
        group.bench_with_input(BenchmarkId::new("seal", case.name), &case, |b, case| {
            b.iter(|| sealer.seal(&binding, seal_input(black_box(case))))
        });
        group.bench_with_input(BenchmarkId::new("open", case.name), &token, |b, token| {
            b.iter(|| sealer.open(black_box(token), &binding).expect("opens"))
        });
    }
    group.finish();
}

fn rejections(c: &mut Criterion) {
    let sealer = sealer();
    let args = arguments();
    let binding = Binding::new("bench", Method::CallTool, "plan_release", Some(&args), None);
    let case = &cases()[1];
    let token = sealer.seal(&binding, seal_input(case)).expect("seals");

    // Flip one base64 character in the middle of the ciphertext: decodes, fails the tag.
    let mut tampered = token.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("still ASCII");
    assert!(sealer.open(&tampered, &binding).is_err());

    // 1 MiB of garbage: the size cap must turn it away before any decoding.
    let oversized = "mrtr3.".to_string() + &"A".repeat(1024 * 1024);
    assert!(sealer.open(&oversized, &binding).is_err());

    // A token sealed for other arguments: full decode and AEAD, then the tag fails.
    let other_args = serde_json::json!({"service": "billing"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let other_binding = Binding::new(
        "bench",
        Method::CallTool,
        "plan_release",
        Some(&other_args),
        None,
    );
    assert!(sealer.open(&token, &other_binding).is_err());

    let mut group = c.benchmark_group("token/reject");
    group.bench_function("tampered_1KiB", |b| {
        b.iter(|| sealer.open(black_box(&tampered), &binding).is_err())
    });
    group.bench_function("other_arguments_1KiB", |b| {
        b.iter(|| sealer.open(black_box(&token), &other_binding).is_err())
    });
    group.bench_function("oversized_garbage_1MiB", |b| {
        b.iter(|| sealer.open(black_box(&oversized), &binding).is_err())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = seal_and_open, rejections
}
criterion_main!(benches);
