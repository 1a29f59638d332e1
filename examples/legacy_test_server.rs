//! The server the legacy-client tests spawn over stdio: the counting `tally` tool
//! (`tests/support/tally.rs`) on an [`McpServer`] with legacy sessions on (the default).
//!
//! ```sh
//! cargo run --example legacy_test_server            # stdio, any protocol version
//! cargo run --example legacy_test_server -- 250     # legacy requests time out after 250 ms
//! ```

#[path = "../tests/support/tally.rs"]
mod tally;

use std::sync::Arc;
use std::time::Duration;

use mrtr::rmcp::ServiceExt as _;
use mrtr::server::McpServer;
use mrtr::token::KeyRing;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut builder = McpServer::builder("legacy-test-server")
        .keys(KeyRing::generate_process_local()?)
        .app_state(Arc::new(tally::Runs::default()))
        .tool(tally::tally);
    if let Some(millis) = std::env::args().nth(1) {
        builder = builder.legacy_request_timeout(Duration::from_millis(millis.parse()?));
    }
    let server = builder.build()?;
    server
        .serve(mrtr::rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
