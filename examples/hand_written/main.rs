//! A server with one three-round tool written by hand against the machine contract (see
//! `release_wizard.rs`), and a scripted client that calls it.
//!
//! ```sh
//! cargo run --example hand_written                     # server on 127.0.0.1 + scripted client, prints each round
//! cargo run --example hand_written -- serve-stdio       # just the server, over stdio
//! cargo run --example hand_written -- serve-http 127.0.0.1:8080
//! ```

#![allow(deprecated)] // sampling is deprecated by SEP-2577 but still part of 2026-07-28

mod release_wizard;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use clap::{Parser, Subcommand};
use mrtr::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ProtocolVersion, Role, SamplingMessage, SamplingMessageContentBlock,
};
use mrtr::rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext};
use mrtr::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use mrtr::server::McpServer;
use release_wizard::PlanRelease;

#[derive(Parser)]
#[command(
    about = "a three-round tool written by hand against the machine contract, and a scripted client"
)]
struct Cli {
    #[command(subcommand)]
    mode: Option<Mode>,
}

#[derive(Subcommand)]
enum Mode {
    /// Serve the tool over stdio.
    ServeStdio,
    /// Serve the tool over Streamable HTTP at ADDR (a loopback address).
    ServeHttp { addr: SocketAddr },
}

fn server() -> anyhow::Result<McpServer> {
    Ok(McpServer::builder("mrtr-hand-written")
        .tool(PlanRelease::new(Arc::new(AtomicUsize::new(0))))
        .build()?)
}

/// Answers like a person would, and prints what it was asked.
struct ScriptedUser;

impl ClientHandler for ScriptedUser {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"elicitation": {}, "sampling": {}}))
                .expect("valid capabilities");
        ClientConfig::new(
            capabilities,
            Implementation::new("hand-written-client", "0.1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let field = requested_schema
            .properties
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        let content = match field.as_str() {
            "choice" => serde_json::json!({"choice": "production"}),
            _ => serde_json::json!({ field.clone(): true }),
        };
        println!("  server asks: {message}\n  user answers: {content}");
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        println!(
            "  server asks the model: {} message(s), max {} tokens",
            params.messages.len(),
            params.max_tokens
        );
        let reply = "Build, test, canary and ship the api to production.";
        println!("  model answers: {reply}");
        Ok(CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(reply)),
            "scripted-model".into(),
        ))
    }
}

/// Serves over Streamable HTTP with the production defaults (timeouts, connection cap,
/// body cap, Origin check, graceful shutdown on SIGTERM/ctrl-c) in a background task.
async fn serve_http(addr: SocketAddr) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let bound = mrtr::server::http::HttpServing::new(server()?)
        .bind(addr)
        .await?;
    let address = bound.local_addr();
    let handle = tokio::spawn(async move {
        if let Err(error) = bound.serve().await {
            eprintln!("server stopped: {error}");
        }
    });
    Ok((address, handle))
}

async fn scripted_call() -> anyhow::Result<()> {
    let (addr, server_task) = serve_http("127.0.0.1:0".parse()?).await?;
    let url = format!("http://{addr}/mcp");
    println!("server listening on {url}");
    let transport = mrtr::rmcp::transport::StreamableHttpClientTransport::from_uri(url);
    let client = ScriptedUser
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await?;
    println!("calling plan_release {{\"service\": \"api\"}}");
    let arguments = serde_json::json!({"service": "api"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new("plan_release").with_arguments(arguments))
        .await?;
    for block in &result.content {
        if let Some(text) = block.as_text() {
            println!("result: {}", text.text);
        }
    }
    client.cancel().await?;
    server_task.abort();
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // rmcp's per-request lines stay out unless RUST_LOG names rmcp or asks for debug.
    let mut filter = tracing_subscriber::EnvFilter::from_default_env();
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
    match Cli::parse().mode {
        None => scripted_call().await,
        Some(Mode::ServeStdio) => {
            let running = server()?.serve(mrtr::rmcp::transport::stdio()).await?;
            running.waiting().await?;
            Ok(())
        }
        Some(Mode::ServeHttp { addr }) => {
            let (bound, task) = serve_http(addr).await?;
            eprintln!("serving on http://{bound}/mcp");
            task.await?;
            Ok(())
        }
    }
}
