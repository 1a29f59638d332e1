//! Drives complete flows against a benchmark server and prints one JSON line of results.
//!
//! ```sh
//! flowload --url http://127.0.0.1:18081/mcp --scenario survey:5 --flows 2000 --concurrency 8 --server-pid 1234
//! ```
//! Exits non-zero when any flow failed or did not end with the expected text.
//!
//! With `--replay-request K` it sends the K-th request of one flow `--flows` times instead
//! and prints the server's CPU per request (exits non-zero when a reply differs).

use std::process::ExitCode;

use clap::Parser;
use mrtr_bench::load::{LoadConfig, replay, run};
use mrtr_bench::scenario::Scenario;

#[derive(Parser)]
#[command(about = "Drive verified MRTR flows over Streamable HTTP and measure the server")]
struct Args {
    /// The MCP endpoint, e.g. http://127.0.0.1:18081/mcp.
    #[arg(long)]
    url: String,
    /// wizard, profile or survey:N.
    #[arg(long)]
    scenario: Scenario,
    /// Measured flows.
    #[arg(long, default_value_t = 1000)]
    flows: usize,
    /// Flows in flight at once.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Unmeasured flows first (default: a tenth of --flows, at least --concurrency).
    #[arg(long)]
    warmup: Option<usize>,
    /// The server's PID, for its CPU time and peak RSS from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// A label copied into the output line (e.g. the implementation).
    #[arg(long)]
    label: Option<String>,
    /// Instead of whole flows: drive one flow up to its K-th request (from 1) and send that
    /// same request --flows times, measuring the server's CPU per request (the cost of
    /// round K-1 at its real state size).
    #[arg(long, value_name = "K")]
    replay_request: Option<usize>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.flows == 0 || args.concurrency == 0 {
        eprintln!("flowload: --flows and --concurrency must be at least 1");
        return ExitCode::FAILURE;
    }
    let config = LoadConfig {
        url: args.url,
        scenario: args.scenario,
        flows: args.flows,
        warmup: args
            .warmup
            .unwrap_or((args.flows / 10).max(args.concurrency)),
        concurrency: args.concurrency,
        server_pid: args.server_pid,
    };
    if let Some(request) = args.replay_request {
        return replay_request(&config, request, args.label).await;
    }
    let report = run(&config).await;
    finish(report, args.label, config.flows, "flow", |report| {
        (
            report.verified_flows,
            report.failed_flows,
            report.first_failure.clone(),
        )
    })
}

async fn replay_request(config: &LoadConfig, request: usize, label: Option<String>) -> ExitCode {
    if request == 0 {
        eprintln!("flowload: --replay-request counts from 1");
        return ExitCode::FAILURE;
    }
    let report = replay(config, request).await;
    finish(report, label, config.flows, "replay", |report| {
        (
            report.verified_replays,
            report.failed_replays,
            report.first_failure.clone(),
        )
    })
}

/// Prints the report as one JSON line (labelled) and exits non-zero unless all `wanted`
/// runs were verified; `outcome` reads (verified, failed, first failure) from the report.
fn finish<R: serde::Serialize>(
    report: std::io::Result<R>,
    label: Option<String>,
    wanted: usize,
    what: &str,
    outcome: impl Fn(&R) -> (usize, usize, Option<String>),
) -> ExitCode {
    let report = match report {
        Ok(report) => report,
        Err(error) => {
            eprintln!("flowload: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut line = serde_json::to_value(&report).expect("the report serializes");
    if let Some(label) = label {
        line["label"] = label.into();
    }
    println!("{line}");
    let (verified, failed, first_failure) = outcome(&report);
    if failed > 0 || verified != wanted {
        eprintln!(
            "flowload: {failed} {what}(s) failed; first: {}",
            first_failure.as_deref().unwrap_or("-")
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
