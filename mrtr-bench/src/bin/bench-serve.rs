//! Serves the benchmarked tools over Streamable HTTP on a loopback address until killed.
//!
//! ```sh
//! bench-serve --impl rmcp --addr 127.0.0.1:18081
//! ```
//! Prints `listening on http://ADDR/mcp` on stdout once bound (`--addr 127.0.0.1:0`
//! picks a free port).

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
            // Serve until the process is stopped (the script kills it by PID).
            std::future::pending::<()>().await;
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bench-serve: {error}");
            ExitCode::FAILURE
        }
    }
}
