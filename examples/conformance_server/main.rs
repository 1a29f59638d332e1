//! Fixture server for the official MCP conformance suite at revision 2026-07-28.
//!
//! Serves [`OrdinaryFixtures`] over rmcp's Streamable HTTP transport on a loopback address,
//! statelessly, at `/mcp`. `scripts/conformance` starts it with `--port 0 --port-file FILE`
//! and points `conformance server --requirements 2026-07-28` at the address it reports.
//!
//! ```text
//! cargo run --example conformance_server -- --port 3000
//! ```

mod fixtures;
mod mrtr_fixtures;

use std::{net::SocketAddr, path::PathBuf};

use axum::serve::ListenerExt;
use clap::Parser;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};

use crate::fixtures::OrdinaryFixtures;
use mrtr::server::McpServer;

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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let options = Options::parse();

    let listener =
        tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], options.port))).await?;
    let address = listener.local_addr()?;
    let router = axum::Router::new().nest_service("/mcp", mcp_service());

    if let Some(port_file) = &options.port_file {
        // Rename so a poller never reads a half-written number.
        let partial = port_file.with_extension("partial");
        std::fs::write(&partial, address.port().to_string())?;
        std::fs::rename(&partial, port_file)?;
    }
    println!("conformance fixture server listening on http://{address}/mcp");

    // Without TCP_NODELAY a streamed reply's last small write waits for the client's delayed
    // ACK (~40 ms per request; see docs/performance.md).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// rmcp's Streamable HTTP service, configured for the stateless 2026-07-28 wire.
fn mcp_service() -> StreamableHttpService<McpServer<OrdinaryFixtures>, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        // 2026-07-28 has no sessions; every POST stands alone.
        .with_legacy_session_mode(false)
        // Plain JSON unless a handler streams notifications first (progress), then SSE.
        .with_json_response(true)
        // Reject requests that lack MCP-Protocol-Version / `_meta` protocolVersion up front.
        .with_stateless_protocol_metadata_required(true);
    let server = mrtr_fixtures::register(McpServer::builder("mrtr-conformance-fixtures"))
        .build_with(OrdinaryFixtures::new())
        .expect("MRTR_KEYS, when set, is well formed");
    StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config)
}
