//! Fixture server for the official MCP conformance suite, revisions 2026-07-28 and
//! 2025-11-25, from one process.
//!
//! Serves the mrtr fixtures in front of [`OrdinaryFixtures`] over rmcp's Streamable HTTP
//! transport on a loopback address at `/mcp`: 2026-07-28 requests statelessly, and an
//! `initialize` (2025-11-25 and older) opens a session in which the same `#[mrtr::tool]`
//! machines send their questions to the client. `scripts/conformance` starts it with
//! `--port 0 --port-file FILE` and points `conformance server --requirements 2026-07-28`,
//! then `--requirements 2025-11-25`, at the address it reports.
//!
//! ```text
//! cargo run --example conformance_server -- --port 3000
//! ```

mod fixtures;
mod legacy_fixtures;
mod mrtr_fixtures;
mod task_fixtures;

use std::{net::SocketAddr, path::PathBuf};

use clap::Parser;
use mrtr::server::http::HttpServing;

use crate::fixtures::OrdinaryFixtures;
use mrtr::server::McpServer;
use mrtr::server::tasks::TaskSettings;

/// Command line of the fixture server.
#[derive(Debug, Parser)]
#[command(about = "Serve the MCP conformance fixtures over Streamable HTTP on 127.0.0.1")]
struct Options {
    /// TCP port to bind on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Once listening, write the bound port to this file (written whole, then renamed).
    #[arg(long)]
    port_file: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // rmcp's per-request lines stay out unless RUST_LOG names rmcp or asks for debug.
    let mut filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let debugging = |log: String| ["rmcp", "debug", "trace"].iter().any(|w| log.contains(w));
    if !std::env::var("RUST_LOG").is_ok_and(debugging) {
        for directive in mrtr::server::RMCP_LOG_DIRECTIVES.split(',') {
            if let Ok(directive) = directive.parse() {
                filter = filter.add_directive(directive);
            }
        }
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let options = Options::parse();

    let builder = McpServer::builder("mrtr-conformance-fixtures").task_settings(
        // The suite polls every 200 ms and waits at most 10 s for a task to end.
        TaskSettings::default().poll_interval(std::time::Duration::from_millis(200)),
    );
    let builder = task_fixtures::register(mrtr_fixtures::register(builder));
    let server = legacy_fixtures::register(builder).build_with(OrdinaryFixtures::new())?;
    // The production entry point: stateless 2026-07-28 beside legacy sessions, JSON
    // responses, TCP_NODELAY, Origin/Host checks, timeouts and caps, graceful shutdown on
    // SIGTERM/ctrl-c.
    let bound = HttpServing::new(server)
        .bind(SocketAddr::from(([127, 0, 0, 1], options.port)))
        .await?;
    let address = bound.local_addr();

    if let Some(port_file) = &options.port_file {
        // Rename so a poller never reads a half-written number.
        let partial = port_file.with_extension("partial");
        std::fs::write(&partial, address.port().to_string())?;
        std::fs::rename(&partial, port_file)?;
    }
    println!("conformance fixture server listening on http://{address}/mcp");
    bound.serve().await?;
    Ok(())
}
