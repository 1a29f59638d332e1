//! Runs verified flows in-process (no HTTP) for instruction counts under callgrind.
//!
//! ```sh
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_request*' \
//!     engine-flows --impl mrtr --scenario wizard --flows 200
//! ```
//! Only the server's work is collected; divide the total by the flows (or, with
//! `--request K`, by the flows for the cost of the K-th request of a flow).

use std::process::ExitCode;

use clap::Parser;
use mrtr_bench::engine::{EngineImpl, Measure, run_flows};
use mrtr_bench::scenario::Scenario;

#[derive(Parser)]
#[command(about = "Run verified MRTR flows in-process for callgrind")]
struct Args {
    /// Which implementation.
    #[arg(long = "impl", value_enum)]
    implementation: EngineImpl,
    /// wizard, profile or survey:N.
    #[arg(long)]
    scenario: Scenario,
    /// How many flows.
    #[arg(long, default_value_t = 200)]
    flows: usize,
    /// Measure only the K-th request (from 1) of each flow instead of all of them.
    #[arg(long)]
    request: Option<usize>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let requests = args.scenario.requests_per_flow() as usize;
    if let Some(k) = args.request.filter(|&k| k == 0 || k > requests) {
        eprintln!(
            "engine-flows: --request {k}: a {} flow has requests 1 to {requests}",
            args.scenario
        );
        return ExitCode::FAILURE;
    }
    let measure = args.request.map_or(Measure::All, Measure::Request);
    match run_flows(args.implementation, args.scenario, args.flows, measure) {
        Ok(report) => {
            println!(
                "{}",
                serde_json::to_string(&report).expect("the report serializes")
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("engine-flows: {error}");
            ExitCode::FAILURE
        }
    }
}
