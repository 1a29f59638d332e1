//! One node of the scale-out test cluster: the `steps` tool (see `mrtr_bench::cluster`)
//! served over Streamable HTTP on 127.0.0.1, sealing with the keys in `MRTR_KEYS`, with the
//! round ledger in Redis when `--redis` is given.
//!
//! ```sh
//! MRTR_KEYS=1:<key> cluster-node --port 18081 --instance-id a --redis redis://127.0.0.1:16390/ \
//!     --effects /tmp/run/effects.txt
//! ```
//! Prints `listening on http://127.0.0.1:PORT/mcp` once bound; logs (tracing, `RUST_LOG`,
//! default `info,rmcp=warn`) go to stderr. Stops on SIGTERM after finishing in-flight requests.
//! On SIGUSR1 prints `ledger round_trips=N`: the round trips its ledger has made to Redis so
//! far (`RedisLedger::round_trips`; 0 without `--redis`), which `scripts/cluster-measure`
//! reads before and after a run.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::server::ledger::RedisLedger;
use mrtr::token::KeyRing;
use mrtr_bench::cluster::{Node, steps_v1, steps_v2};
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(about = "Serve the cluster test tool `steps` over Streamable HTTP on 127.0.0.1")]
struct Args {
    /// The loopback port to listen on.
    #[arg(long)]
    port: u16,
    /// This instance's name, put in every result's `_meta["io.mrtr/instance"]` and in the
    /// effects file.
    #[arg(long)]
    instance_id: String,
    /// The round ledger's Redis, e.g. redis://127.0.0.1:16390/ (without it: no ledger).
    #[arg(long)]
    redis: Option<String>,
    /// Which body of the tool to serve (2 is a changed body: another fingerprint).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    variant: u8,
    /// The file every round appends `flow round instance variant` to.
    #[arg(long)]
    effects: PathBuf,
    /// Lifetime of a sealed requestState, in seconds.
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..))]
    state_ttl: u64,
    /// How long a claimed round stays claimed before another instance may re-run it, in
    /// seconds (only with --redis).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    round_lease: u64,
}

/// The server, and its Redis ledger when it has one (for its trip count).
type Served = (McpServer, Option<Arc<RedisLedger>>);

fn server(args: &Args) -> Result<Served, Box<dyn std::error::Error>> {
    let node = Node::open(&args.instance_id, args.variant, &args.effects)
        .map_err(|error| format!("cannot open {}: {error}", args.effects.display()))?;
    let mut builder = McpServer::builder("mrtr-cluster-node")
        .keys(KeyRing::from_env_or_generate()?)
        .state_ttl(Duration::from_secs(args.state_ttl))
        .instance_id(args.instance_id.clone())
        .app_state(node);
    let mut ledger = None;
    if let Some(url) = &args.redis {
        // Parses only: the node starts (and keeps serving) while Redis is down.
        let redis = Arc::new(RedisLedger::open(url)?);
        ledger = Some(redis.clone());
        builder = builder
            .round_ledger(redis)
            .round_lease(Duration::from_secs(args.round_lease));
    }
    let builder = match args.variant {
        1 => builder.tool(steps_v1),
        _ => builder.tool(steps_v2),
    };
    Ok((builder.build()?, ledger))
}

/// Prints the ledger's round trips to Redis on each SIGUSR1, for `scripts/cluster-measure`.
fn report_trips_on_sigusr1(ledger: Option<Arc<RedisLedger>>) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut usr1 = signal(SignalKind::user_defined1())?;
    tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            let trips = ledger.as_ref().map_or(0, |ledger| ledger.round_trips());
            println!("ledger round_trips={trips}");
        }
    });
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn")),
        )
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .init();
    let server = match server(&args) {
        Ok((server, ledger)) => {
            if let Err(error) = report_trips_on_sigusr1(ledger) {
                eprintln!("cluster-node: cannot watch SIGUSR1: {error}");
                return ExitCode::FAILURE;
            }
            server
        }
        Err(error) => {
            eprintln!("cluster-node: {error}");
            return ExitCode::FAILURE;
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let bound = match HttpServing::new(server)
        // Behind nginx a request's last hop is on loopback; in-flight rounds get 5 s on
        // SIGTERM so a rolling restart does not wait long.
        .shutdown_grace(Duration::from_secs(5))
        // Legacy session ids start with `{instance}.`: nginx routes them back here.
        .session_node(&args.instance_id)
        // Every request arrives from nginx's address: the per-address cap would be per proxy.
        .max_connections_per_address(usize::MAX)
        .bind(addr)
        .await
    {
        Ok(bound) => bound,
        Err(error) => {
            eprintln!("cluster-node: cannot listen on {addr}: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on http://{}/mcp", bound.local_addr());
    tracing::info!(instance = %args.instance_id, variant = args.variant, port = args.port, "cluster node up");
    match bound.serve().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cluster-node: {error}");
            ExitCode::FAILURE
        }
    }
}
