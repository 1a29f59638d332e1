//! The showcase server: a deploy wizard, an order flow, a file organiser, a prompt that
//! asks for its topic and a resource behind URL consent — all written with `#[mrtr::tool]`,
//! `#[mrtr::prompt]` and `#[mrtr::resource]`.
//!
//! ```sh
//! cargo run --example showcase -- serve-stdio
//! cargo run --example showcase -- describe              # what each machine asks and keeps
//! cargo run --example showcase -- describe deploy_wizard
//! cargo run --example showcase -- serve-http 127.0.0.1:8080
//! cargo run --example showcase -- serve-http 127.0.0.1:8080 --body-timeout 10 --max-connections 256
//! cargo run --example showcase -- serve-http 127.0.0.1:8080 --root-allow ~/scratch   # organise_files' reach
//! cargo run -p mrtr-cli -- stdio --call deploy_wizard --args '{"service":"api"}' -- target/debug/examples/showcase serve-stdio
//! ```

#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

mod data_export;
mod deploy_wizard;
mod explain_prompt;
mod file_organiser;
mod order_flow;
mod server;
mod vault_resource;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use mrtr::rmcp::ServiceExt as _;

#[derive(Parser)]
#[command(about = "mrtr showcase: example MRTR tools, a prompt and a resource")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
    /// A directory `organise_files` may look into (repeatable). Roots a client shares
    /// outside every such directory are skipped. Default: a demo directory with a few
    /// sample files, created under the system temp directory.
    #[arg(long, value_name = "DIR", global = true)]
    root_allow: Vec<PathBuf>,
}

impl Cli {
    /// The directories `organise_files` may look into, announced on stderr.
    fn allowed_roots(&self) -> anyhow::Result<file_organiser::AllowedRoots> {
        let allowed = if self.root_allow.is_empty() {
            file_organiser::AllowedRoots::demo()?
        } else {
            file_organiser::AllowedRoots::new(self.root_allow.iter().cloned()).map_err(|error| {
                anyhow::anyhow!("--root-allow: {error} (each must be an existing directory)")
            })?
        };
        for dir in allowed.dirs() {
            eprintln!("organise_files may look inside {}", dir.display());
        }
        Ok(allowed)
    }
}

#[derive(Subcommand)]
enum Mode {
    /// Serve over stdio.
    ServeStdio,
    /// Serve over Streamable HTTP at ADDR (a loopback address), path /mcp, until SIGTERM or ctrl-c.
    ServeHttp {
        addr: SocketAddr,
        #[command(flatten)]
        knobs: Knobs,
    },
    /// Print what each machine asks and keeps in `requestState`, round by round, with a
    /// Mermaid diagram of its rounds (from the macro's own analysis).
    Describe {
        /// Only the machine listed under this name.
        name: Option<String>,
    },
}

/// Serving knobs (`mrtr::server::http::HttpServing`); unset ones keep its defaults.
#[derive(clap::Args)]
struct Knobs {
    /// Once listening, write the bound port to this file (written whole, then renamed).
    #[arg(long)]
    port_file: Option<PathBuf>,
    /// Seconds a connection may take to send a request head (also the idle keep-alive timeout).
    #[arg(long, value_name = "SECS")]
    header_read_timeout: Option<f64>,
    /// Seconds a whole request body may take to arrive.
    #[arg(long, value_name = "SECS")]
    body_timeout: Option<f64>,
    /// Largest request body in bytes.
    #[arg(long, value_name = "BYTES")]
    max_body_bytes: Option<usize>,
    /// Connections served at once.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Bytes all request bodies being read may hold at once.
    #[arg(long, value_name = "BYTES")]
    max_buffered_body_bytes: Option<usize>,
    /// Connections one client IP address may hold (raise it behind a reverse proxy).
    #[arg(long, value_name = "N")]
    max_connections_per_address: Option<usize>,
    /// Seconds in-flight requests get to finish after SIGTERM or ctrl-c.
    #[arg(long, value_name = "SECS")]
    shutdown_grace: Option<f64>,
}

impl Knobs {
    fn apply(
        &self,
        mut serving: mrtr::server::http::HttpServing,
    ) -> mrtr::server::http::HttpServing {
        let seconds = Duration::from_secs_f64;
        if let Some(secs) = self.header_read_timeout {
            serving = serving.header_read_timeout(seconds(secs));
        }
        if let Some(secs) = self.body_timeout {
            serving = serving.body_timeout(seconds(secs));
        }
        if let Some(bytes) = self.max_body_bytes {
            serving = serving.max_body_bytes(bytes);
        }
        if let Some(connections) = self.max_connections {
            serving = serving.max_connections(connections);
        }
        if let Some(bytes) = self.max_buffered_body_bytes {
            serving = serving.max_buffered_body_bytes(bytes);
        }
        if let Some(connections) = self.max_connections_per_address {
            serving = serving.max_connections_per_address(connections);
        }
        if let Some(secs) = self.shutdown_grace {
            serving = serving.shutdown_grace(seconds(secs));
        }
        serving
    }
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
    let cli = Cli::parse();
    match &cli.mode {
        Mode::Describe { name } => match server::describe(name.as_deref()) {
            Some(text) => print!("{text}"),
            None => anyhow::bail!(
                "no showcase machine is listed as `{}`; try `describe` alone to see them all",
                name.as_deref().unwrap_or_default()
            ),
        },
        Mode::ServeStdio => {
            let running = server::showcase_server_allowing(cli.allowed_roots()?)?
                .serve(mrtr::rmcp::transport::stdio())
                .await?;
            running.waiting().await?;
        }
        Mode::ServeHttp { addr, knobs } => {
            let (bound, task) = server::serve_http_with(*addr, cli.allowed_roots()?, |serving| {
                knobs.apply(serving)
            })
            .await?;
            if let Some(port_file) = &knobs.port_file {
                let partial = port_file.with_extension("partial");
                std::fs::write(&partial, bound.port().to_string())?;
                std::fs::rename(&partial, port_file)?;
            }
            eprintln!("serving on http://{bound}/mcp");
            task.await?;
            eprintln!("stopped: in-flight requests finished");
        }
    }
    Ok(())
}
