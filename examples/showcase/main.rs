//! The showcase server: a deploy wizard, an order flow, a file organiser, a prompt that
//! asks for its topic and a resource behind URL consent — all written with `#[mrtr::tool]`,
//! `#[mrtr::prompt]` and `#[mrtr::resource]`.
//!
//! ```sh
//! cargo run --example showcase -- serve-stdio
//! cargo run --example showcase -- serve-http 127.0.0.1:8080
//! cargo run --bin mrtr -- stdio --call deploy_wizard --args '{"service":"api"}' -- target/debug/examples/showcase serve-stdio
//! ```

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

mod deploy_wizard;
mod explain_prompt;
mod file_organiser;
mod order_flow;
mod server;
mod vault_resource;

use std::net::SocketAddr;

use clap::{Parser, Subcommand};
use mrtr::rmcp::ServiceExt as _;

#[derive(Parser)]
#[command(about = "mrtr showcase: example MRTR tools, a prompt and a resource")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Serve over stdio.
    ServeStdio,
    /// Serve over Streamable HTTP at ADDR (a loopback address), path /mcp.
    ServeHttp { addr: SocketAddr },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().mode {
        Mode::ServeStdio => {
            let running = server::showcase_server()?
                .serve(mrtr::rmcp::transport::stdio())
                .await?;
            running.waiting().await?;
        }
        Mode::ServeHttp { addr } => {
            let (bound, task) = server::serve_http(addr).await?;
            eprintln!("serving on http://{bound}/mcp");
            task.await?;
        }
    }
    Ok(())
}
