//! Serves the benchmarked tools over Streamable HTTP on a loopback address until killed.
//!
//! ```sh
//! bench-serve --impl rmcp --addr 127.0.0.1:18081
//! ```
//! Prints `listening on http://ADDR/mcp` on stdout once bound (`--addr 127.0.0.1:0`
//! picks a free port). SIGTERM or Ctrl-C ends it with a normal exit (so a profiler
//! running it, e.g. callgrind, writes its output).

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Parser;
use mrtr_bench::serve::{Implementation, start};

#[derive(Parser)]
#[command(about = "Serve the mrtr-vs-rmcp benchmark tools over Streamable HTTP")]
struct Args {
    /// Which implementation of the tools.
    #[arg(long = "impl", value_enum)]
    implementation: Implementation,
    /// Where to listen; must be a loopback address.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match start(args.implementation, args.addr).await {
        Ok(running) => {
            println!("listening on {}", running.url);
            // Serve until the script stops it by PID (SIGTERM), then exit normally.
            if let Err(error) = stopped().await {
                eprintln!("bench-serve: {error}");
                return ExitCode::FAILURE;
            }
            drop(running);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bench-serve: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Waits for SIGTERM or Ctrl-C.
async fn stopped() -> std::io::Result<()> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = terminate.recv() => Ok(()),
        interrupted = tokio::signal::ctrl_c() => interrupted,
    }
}
