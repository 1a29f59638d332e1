//! The showcase server: every example tool, prompt and resource on one [`McpServer`].

use std::net::SocketAddr;

use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;

use crate::data_export::export_dataset;
use crate::deploy_wizard::deploy_wizard;
use crate::explain_prompt::explain_prompt;
use crate::file_organiser::{AllowedRoots, organise_files};
use std::sync::Arc;

use crate::order_flow::{Kitchen, order_food};
use crate::vault_resource::vault_keys;

/// Builds the server with all the examples registered; `organise_files` may only look
/// inside the demo directory ([`AllowedRoots::demo`]).
#[allow(dead_code)] // tests/http_serving.rs uses it
pub fn showcase_server() -> anyhow::Result<McpServer> {
    showcase_server_allowing(AllowedRoots::demo()?)
}

/// Builds the server with all the examples registered; `organise_files` may only look
/// inside `allowed`.
pub fn showcase_server_allowing(allowed: AllowedRoots) -> anyhow::Result<McpServer> {
    showcase_server_keyed(allowed, None)
}

#[allow(dead_code)] // the demo uses it with a key of its own
/// Like [`showcase_server_allowing`], sealing with `keys` when given (else `MRTR_KEYS`, or
/// a key made for this process).
pub fn showcase_server_keyed(
    allowed: AllowedRoots,
    keys: Option<mrtr::token::KeyRing>,
) -> anyhow::Result<McpServer> {
    let mut builder = McpServer::builder("mrtr-showcase")
        .app_state(Arc::new(Kitchen::default()))
        .app_state(Arc::new(allowed))
        .tool(deploy_wizard)
        .tool(order_food)
        .tool(organise_files)
        .tool(export_dataset)
        .prompt(explain_prompt)
        .resource(vault_keys);
    if let Some(keys) = keys {
        builder = builder.keys(keys);
    }
    Ok(builder.build()?)
}

/// What every showcase machine asks and keeps, round by round, as its macro analysed it:
/// the text form and the Mermaid diagram of each (`showcase describe [NAME]`). `None` when
/// no machine is listed as `name`.
#[allow(dead_code)] // `main.rs` and tests/describe.rs use it; the demo includes this file too
pub fn describe(name: Option<&str>) -> Option<String> {
    use mrtr::machine::Machine;
    let mut out = String::new();
    let all = [
        deploy_wizard.describe(),
        order_food.describe(),
        organise_files.describe(),
        export_dataset.describe(),
        explain_prompt.describe(),
        vault_keys.describe(),
    ];
    for description in all.into_iter().flatten() {
        if name.is_some_and(|name| name != description.name()) {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&description.to_string());
        out.push_str("\n```mermaid\n");
        out.push_str(&description.mermaid());
        out.push_str("```\n");
    }
    (!out.is_empty()).then_some(out)
}

/// Serves the showcase over Streamable HTTP at `addr` with the production defaults (and
/// the demo directory as the only one `organise_files` may look into), in a background task
/// that stops on SIGTERM or ctrl-c; returns the bound address and the task.
#[allow(dead_code)] // `main.rs` uses `serve_http_with`; the demo and tests use this
pub async fn serve_http(
    addr: SocketAddr,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    serve_http_with(addr, AllowedRoots::demo()?, |serving| serving).await
}

/// Like [`serve_http`], with `organise_files` allowed into `allowed` and the serving knobs
/// adjusted by `tune`.
#[allow(dead_code)] // `main.rs` and tests use it; the demo serves a keyed server instead
pub async fn serve_http_with(
    addr: SocketAddr,
    allowed: AllowedRoots,
    tune: impl FnOnce(HttpServing) -> HttpServing,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    serve_server(addr, showcase_server_allowing(allowed)?, tune).await
}

#[allow(dead_code)] // the demo serves its keyed server with it
/// Serves `server` over Streamable HTTP at `addr` in a background task (see
/// [`serve_http`]).
pub async fn serve_server(
    addr: SocketAddr,
    server: McpServer,
    tune: impl FnOnce(HttpServing) -> HttpServing,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let bound = tune(HttpServing::new(server)).bind(addr).await?;
    let address = bound.local_addr();
    let task = tokio::spawn(async move {
        if let Err(error) = bound.serve().await {
            eprintln!("showcase server stopped: {error}");
        }
    });
    Ok((address, task))
}
