//! The showcase server: every example tool, prompt and resource on one [`McpServer`].

use mrtr::server::McpServer;

use crate::deploy_wizard::deploy_wizard;
use crate::explain_prompt::explain_prompt;
use crate::file_organiser::organise_files;
use crate::order_flow::order_food;
use crate::vault_resource::vault_keys;

/// Builds the server with all the examples registered.
pub fn showcase_server() -> anyhow::Result<McpServer> {
    Ok(McpServer::builder("mrtr-showcase")
        .tool(deploy_wizard)
        .tool(order_food)
        .tool(organise_files)
        .prompt(explain_prompt)
        .resource(vault_keys)
        .build()?)
}

/// Serves the showcase over Streamable HTTP (stateless) at `addr`, in a background task;
/// returns the bound address and the task.
pub async fn serve_http(
    addr: std::net::SocketAddr,
) -> anyhow::Result<(std::net::SocketAddr, tokio::task::JoinHandle<()>)> {
    use axum::serve::ListenerExt as _;
    use mrtr::rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
    };

    let server = showcase_server()?;
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        std::sync::Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let router = axum::Router::new().nest_service("/mcp", service);
    // Without TCP_NODELAY each streamed reply's last write waits for a delayed ACK (~40 ms).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            eprintln!("showcase server stopped: {error}");
        }
    });
    Ok((bound, task))
}
