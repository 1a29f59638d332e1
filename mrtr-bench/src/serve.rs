//! Serving the benchmarked tools over Streamable HTTP on 127.0.0.1.
//!
//! Each server is served the way its users serve it:
//!
//! - `mrtr`: the `#[mrtr::tool]` functions behind `mrtr::server::http::HttpServing` with its
//!   documented defaults — the README's server (`mrtr::server::http::serve`), bound to a
//!   port of our choosing;
//! - `rmcp`: the hand-written rmcp handler through rmcp's `StreamableHttpService`
//!   ([`serve_handler`]: `NeverSessionManager`, JSON responses, stateless, axum,
//!   `TCP_NODELAY`), as a careful rmcp author serves a 2026-07-28 server;
//! - `fly`: the FlyMCPRust twin ([`crate::fly_tools`]) on its own hyper transport;
//! - `floor`: precomputed bytes on bare hyper ([`crate::floor`]), the transport's limit.
//!
//! Secondary: `mrtr-service` serves the `mrtr` tools through [`serve_handler`] exactly as
//! `rmcp` is served (what the engine costs with the HTTP layer held equal), and `rmcp-meta`
//! is `rmcp` also stamping `_meta.serverInfo` as `mrtr` does.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::ListenerExt as _;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::hand_written::HandWritten;

/// Which implementation of the tools to serve.
///
/// ```
/// use clap::ValueEnum;
/// use mrtr_bench::serve::Implementation;
/// assert_eq!(Implementation::from_str("rmcp", false), Ok(Implementation::Rmcp));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Implementation {
    /// `#[mrtr::tool]` functions behind `mrtr::server::http::HttpServing` with its
    /// defaults (body and connection budgets, Origin/Host checks, legacy sessions on).
    Mrtr,
    /// `#[mrtr::tool]` functions behind `McpServer`, served through rmcp's service exactly
    /// like `rmcp` (secondary: isolates the engine from mrtr's HTTP layer).
    MrtrService,
    /// The hand-written rmcp `ServerHandler`.
    Rmcp,
    /// The hand-written rmcp `ServerHandler`, also putting `serverInfo` in every result's
    /// `_meta` as `mrtr` does (2026-07-28's SHOULD): the same wire obligations.
    RmcpMeta,
    /// The FlyMCPRust 0.1.1 twin on FlyMCPRust's own HTTP transport and defaults.
    Fly,
    /// Precomputed replies on bare hyper: the transport floor.
    Floor,
}

/// A server running in this process; dropped, it stops.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use mrtr_bench::serve::{Implementation, start};
/// let server = start(Implementation::Rmcp, "127.0.0.1:0".parse().unwrap()).await?;
/// println!("{}", server.url);
/// # Ok(()) }
/// ```
pub struct Running {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    task: JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts serving `implementation` on `addr`, which must be a loopback address.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use mrtr_bench::serve::{Implementation, start};
/// let refused = start(Implementation::Mrtr, "0.0.0.0:0".parse().unwrap()).await;
/// assert!(refused.is_err_and(|e| e.to_string().contains("loopback")));
/// # });
/// ```
pub async fn start(implementation: Implementation, addr: SocketAddr) -> io::Result<Running> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{addr} is not a loopback address; the bench serves on 127.0.0.1 only"),
        ));
    }
    let (bound, task) = match implementation {
        Implementation::MrtrService => serve_handler(macro_tools_server()?, addr).await?,
        Implementation::Rmcp => {
            serve_handler(HandWritten::new().map_err(io::Error::other)?, addr).await?
        }
        Implementation::RmcpMeta => {
            let handler = HandWritten::new().map_err(io::Error::other)?;
            serve_handler(handler.stamping_server_info(), addr).await?
        }
        Implementation::Fly => crate::fly_tools::serve(addr).await?,
        Implementation::Floor => crate::floor::serve(addr).await?,
        Implementation::Mrtr => {
            // The defaults, untouched: loopback clients (the load generator) are not
            // counted against `max_connections_per_address`.
            let bound = mrtr::server::http::HttpServing::new(macro_tools_server()?)
                .bind(addr)
                .await?;
            let local = bound.local_addr();
            let task = tokio::spawn(async move {
                if let Err(error) = bound.serve().await {
                    eprintln!("bench-serve: the server stopped: {error}");
                }
            });
            (local, task)
        }
    };
    Ok(Running {
        url: format!("http://{bound}/mcp"),
        task,
    })
}

fn macro_tools_server() -> io::Result<mrtr::server::McpServer> {
    crate::macro_tools::server().map_err(io::Error::other)
}

/// Serves `handler` at `/mcp` the way both benchmarked implementations are served.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let handler = mrtr_bench::hand_written::HandWritten::new().unwrap();
/// let (addr, _task) = mrtr_bench::serve::serve_handler(handler, "127.0.0.1:0".parse().unwrap()).await?;
/// # Ok(()) }
/// ```
pub async fn serve_handler<S>(
    handler: S,
    addr: SocketAddr,
) -> io::Result<(SocketAddr, JoinHandle<()>)>
where
    S: ServerHandler + Clone + Send + Sync + 'static,
{
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    // Replies are small; without this, Nagle and delayed ACKs add ~40 ms to some.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            eprintln!("bench-serve: the server stopped: {error}");
        }
    });
    Ok((bound, task))
}
