//! The tools of the `auth` example and how it requires a token: shared with `tests/auth.rs`,
//! which serves exactly this against a test authorization server.

use mrtr::machine::{Elicited, RequestCx, ToolError};
use mrtr::server::McpServerBuilder;
use mrtr::server::http::auth::ResourceServer;

/// Says who is calling and what the token grants (any valid token).
#[mrtr::tool]
async fn whoami(cx: &RequestCx) -> String {
    let scopes: Vec<&str> = cx.scopes().map(|s| s.iter().collect()).unwrap_or_default();
    format!(
        "{} with [{}]",
        cx.principal().unwrap_or("nobody"),
        scopes.join(" ")
    )
}

/// Deploys a service after asking where and confirming: needs the `deploy` scope, checked
/// before any of this code runs.
#[mrtr::tool(scopes = ["deploy"])]
async fn deploy(
    /// The service to deploy.
    service: String,
) -> Result<String, ToolError> {
    let target = ask!(text(format!("Deploy {service} to which environment?")).title("Environment"))
        .accepted()?;
    if ask!(confirm(format!("Deploy {service} to {target} now?"))) != Elicited::Accept(true) {
        return Ok(format!("{service} was not deployed."));
    }
    Ok(format!("Deployed {service} to {target}."))
}

/// Builds a report as a task, for clients that declare the tasks extension.
#[mrtr::tool(task = "optional")]
async fn report() -> String {
    "The report is ready.".to_string()
}

/// The example's tools on `builder`.
pub fn tools(builder: McpServerBuilder) -> McpServerBuilder {
    builder.tool(whoami).tool(deploy).tool(report)
}

/// What a server author writes to require OAuth: the endpoint's public URL (the audience
/// tokens must name) and the authorization server that issues them.
pub fn resource_server(resource: url::Url, issuer: &str) -> ResourceServer {
    ResourceServer::new(resource)
        .authorization_server(issuer)
        .scopes_supported(["read", "deploy"])
}
