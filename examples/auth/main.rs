//! An MCP server that requires OAuth 2.1 bearer tokens: every request needs an access token
//! issued by the authorization server for this server's URL; `deploy` needs the `deploy`
//! scope. Clients discover the authorization server from the `401` (Protected Resource
//! Metadata at `/.well-known/oauth-protected-resource/mcp`).
//!
//! ```sh
//! MRTR_ISSUER=https://auth.example.com MRTR_RESOURCE=https://mcp.example.com/mcp \
//!   cargo run --example auth --features auth
//! ```
//!
//! Serves on 127.0.0.1:8080 (`MRTR_ADDR` to change); put your TLS-terminating proxy at
//! `MRTR_RESOURCE` in front of it.

mod server;

use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let issuer = std::env::var("MRTR_ISSUER").unwrap_or_else(|_| "https://auth.example.com".into());
    let resource =
        std::env::var("MRTR_RESOURCE").unwrap_or_else(|_| "http://127.0.0.1:8080/mcp".into());
    let addr = std::env::var("MRTR_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".into());
    let server = server::tools(McpServer::builder("auth-example")).build()?;
    let serving =
        HttpServing::new(server).auth(server::resource_server(resource.parse()?, &issuer));
    println!("serving {resource} (tokens from {issuer}) on {addr}");
    serving.serve(addr.parse()?).await?;
    Ok(())
}
