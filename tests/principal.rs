//! Who a flow belongs to, over real HTTP on 127.0.0.1: the principal set by authentication
//! middleware (a `Principal` request extension) and the one a custom resolver returns are
//! bound into the sealed state, so only that principal can continue the flow.

use std::net::SocketAddr;

use mrtr::machine::RequestCx;
use mrtr::server::http::HttpServing;
use mrtr::server::{McpServer, Principal};
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};

/// Asks once, then says whose flow it was.
#[mrtr::tool]
async fn whoami(cx: &RequestCx) -> String {
    let _ = ask!(confirm("Continue?"));
    cx.principal().unwrap_or("nobody").to_string()
}

fn keys() -> KeyRing {
    KeyRing::new(KeyId(1), SecretKey::from_bytes([9; 32]))
}

/// Serves `router` on an ephemeral loopback port until the test ends.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}/mcp")
}

/// Authentication middleware as an application writes it: `x-user` stands for a verified
/// identity and becomes the `Principal` extension.
async fn authenticate(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if let Some(user) = request
        .headers()
        .get("x-user")
        .and_then(|v| v.to_str().ok())
    {
        let user = user.to_string();
        request.extensions_mut().insert(Principal(user));
    }
    next.run(request).await
}

/// One `tools/call` of `whoami` as `user` (none: anonymous), optionally continuing a flow.
async fn call_whoami(url: &str, user: Option<&str>, state: Option<&str>) -> Value {
    let mut params = json!({
        "name": "whoami",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "principal-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let Some(state) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] =
            json!({"ask_0": {"action": "accept", "content": {"confirm": true}}});
    }
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "whoami");
    if let Some(user) = user {
        request = request.header("x-user", user).header("x-tenant", user);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

/// Alice starts and finishes; Bob and an anonymous caller holding Alice's state are refused.
async fn only_the_same_principal_continues(url: &str, expected_principal: &str) {
    let first = call_whoami(url, Some("alice"), None).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();

    for intruder in [Some("bob"), None] {
        let refused = call_whoami(url, intruder, Some(&state)).await;
        assert_eq!(refused["error"]["code"], -32602, "{intruder:?}: {refused}");
    }

    let done = call_whoami(url, Some("alice"), Some(&state)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], expected_principal,
        "{done}"
    );
}

#[tokio::test]
async fn the_principal_set_by_auth_middleware_is_bound_into_the_state() {
    let server = McpServer::builder("principal-test")
        .keys(keys())
        .tool(whoami)
        .build()
        .unwrap();
    let router = HttpServing::new(server)
        .into_router()
        .layer(axum::middleware::from_fn(authenticate));
    let url = serve(router).await;
    only_the_same_principal_continues(&url, "subject:alice").await;
}

/// A custom resolver: the principal is the request's `x-tenant` header.
fn tenant_of(
    context: &mrtr::rmcp::service::RequestContext<mrtr::rmcp::RoleServer>,
) -> Option<String> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    let tenant = parts.headers.get("x-tenant")?.to_str().ok()?;
    Some(format!("tenant:{tenant}"))
}

#[tokio::test]
async fn a_custom_resolver_decides_the_principal() {
    let server = McpServer::builder("principal-test")
        .keys(keys())
        .principal(tenant_of)
        .tool(whoami)
        .build()
        .unwrap();
    let url = serve(HttpServing::new(server).into_router()).await;
    only_the_same_principal_continues(&url, "tenant:alice").await;
}

/// The resolver runs once per HTTP request: the gate's per-caller limits and the round's
/// binding share its answer.
#[tokio::test]
async fn the_resolver_runs_once_per_request() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let server = McpServer::builder("principal-test")
        .keys(keys())
        .principal(move |context| {
            counted.fetch_add(1, Ordering::SeqCst);
            tenant_of(context)
        })
        .tool(whoami)
        .build()
        .unwrap();
    let url = serve(HttpServing::new(server).into_router()).await;
    only_the_same_principal_continues(&url, "tenant:alice").await;
    // Alice's two calls, Bob's and the anonymous one: four requests.
    assert_eq!(runs.load(Ordering::SeqCst), 4);
}
