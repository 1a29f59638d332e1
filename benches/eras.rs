//! The same three-round `PlanRelease` for the two eras of clients, over an in-process pipe
//! (`tokio::io::duplex`, so the figure is the server's and rmcp's work, not a network's):
//! a 2026-07-28 client (rounds are `input_required` results it retries, each state sealed
//! and opened) against a 2025-11-25 client in an `initialize` session (rounds are
//! server→client requests inside one call, the state kept in memory).
//!
//! `cargo bench --bench eras`. Figures are recorded in `docs/contributing/performance-lab-notes.md`.

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
use mrtr::rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ProtocolVersion,
};
use mrtr::rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext};
use mrtr::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use mrtr::server::McpServer;
use release_wizard::PlanRelease;
use serde_json::json;
use support::{ScriptedUser, call};

/// The scripted user, opening with `initialize` at 2025-11-25.
#[derive(Clone, Default)]
struct LegacyUser(ScriptedUser);

impl ClientHandler for LegacyUser {
    fn get_info(&self) -> ClientConfig {
        self.0
            .get_info()
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.0.create_elicitation(request, context).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.0.create_message(params, context).await
    }
}

fn server() -> McpServer {
    McpServer::builder("mrtr-bench")
        .keys(mrtr::token::KeyRing::generate_process_local().expect("a key"))
        .tool(PlanRelease::new(Arc::new(AtomicUsize::new(0))))
        .build()
        .expect("server builds")
}

fn eras(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (modern, legacy) = runtime.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let running = server().serve(server_io).await.expect("serves");
            let _ = running.waiting().await;
        });
        let modern = ScriptedUser::default()
            .serve_with_lifecycle(
                client_io,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("2026 client connects");
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let running = server().serve(server_io).await.expect("serves");
            let _ = running.waiting().await;
        });
        let legacy = LegacyUser::default()
            .serve_with_lifecycle(client_io, ClientLifecycleMode::Initialize)
            .await
            .expect("legacy client connects");
        (modern, legacy)
    });
    // Check once that both flows finish the same way.
    let expected = format!("api → production: {}", support::SUMMARY);
    for result in [
        runtime.block_on(modern.call_tool(call("plan_release", json!({"service": "api"})))),
        runtime.block_on(legacy.call_tool(call("plan_release", json!({"service": "api"})))),
    ] {
        assert_eq!(
            support::text_of(&result.expect("the flow finishes")),
            expected
        );
    }

    let mut group = c.benchmark_group("eras");
    group.bench_function("mrtr_2026_three_rounds", |b| {
        b.to_async(&runtime)
            .iter(|| modern.call_tool(black_box(call("plan_release", json!({"service": "api"})))))
    });
    group.bench_function("legacy_2025_three_rounds", |b| {
        b.to_async(&runtime)
            .iter(|| legacy.call_tool(black_box(call("plan_release", json!({"service": "api"})))))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = eras
}
criterion_main!(benches);
