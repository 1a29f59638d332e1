//! Serving the benchmarked tools over Streamable HTTP on 127.0.0.1.
//!
//! `mrtr` and `rmcp` go through one function, [`serve_handler`]: rmcp's
//! `StreamableHttpService` with `NeverSessionManager`, JSON responses, stateless, on axum
//! with `TCP_NODELAY` — so only the tool implementation differs. `mrtr-prod` serves the
//! `mrtr` tools through `mrtr::server::http::HttpServing` instead, for information.

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
    /// `#[mrtr::tool]` functions behind `McpServer`, served like `rmcp`.
    Mrtr,
    /// The hand-written rmcp `ServerHandler`.
    Rmcp,
    /// The hand-written rmcp `ServerHandler`, also putting `serverInfo` in every result's
    /// `_meta` as `mrtr` does (2026-07-28's SHOULD): the same wire obligations.
    RmcpMeta,
    /// `#[mrtr::tool]` functions behind `mrtr::server::http::HttpServing` (its production
    /// defaults: body limits, Origin/Host checks, legacy sessions).
    MrtrProd,
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
        Implementation::Mrtr => serve_handler(macro_tools_server()?, addr).await?,
        Implementation::Rmcp => {
            serve_handler(HandWritten::new().map_err(io::Error::other)?, addr).await?
        }
        Implementation::RmcpMeta => {
            let handler = HandWritten::new().map_err(io::Error::other)?;
            serve_handler(handler.stamping_server_info(), addr).await?
        }
        Implementation::MrtrProd => {
            let bound = mrtr::server::http::HttpServing::new(macro_tools_server()?)
                // The load generator is one client address opening `concurrency` connections.
                .max_connections_per_address(usize::MAX)
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
