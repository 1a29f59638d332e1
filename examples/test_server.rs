//! The hand-written MRTR server the client tests spawn over stdio (`tests/support/server.rs`).
//!
//! ```sh
//! cargo run --example test_server   # speaks MCP 2026-07-28 on stdin/stdout
//! ```

#[path = "../tests/support/server.rs"]
mod server;

#[tokio::main]
async fn main() {
    server::serve_stdio().await;
}
