//! A tool whose code panics (an `unwrap` on `None`, an index out of range: the everyday bug)
//! answers its request with an error, over real HTTP on 127.0.0.1, and the server keeps
//! serving: a panic never leaves the client waiting for a reply that will not come.

use std::net::SocketAddr;
use std::time::Duration;

use mrtr::server::McpServer;
use mrtr::server::http::HttpServing;
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};

/// Panics on its first call.
#[mrtr::tool]
async fn boom_at_once() -> String {
    let items: Vec<String> = Vec::new();
    items[3].clone()
}

/// Panics after its question is answered.
#[mrtr::tool]
async fn boom_after_asking() -> String {
    let go = ask!(confirm("Go?")).ok().unwrap_or(false);
    let nothing: Option<String> = None;
    if go {
        nothing.expect("a bug in the tool")
    } else {
        "stopped".to_string()
    }
}

/// Asks and answers: the server still serves after the panics.
#[mrtr::tool]
async fn fine() -> String {
    let go = ask!(confirm("Go?")).ok().unwrap_or(false);
    format!("fine: {go}")
}

async fn serve() -> String {
    let server = McpServer::builder("panics")
        .keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([5; 32])))
        .tool(boom_at_once)
        .tool(boom_after_asking)
        .tool(fine)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let router = HttpServing::new(server).into_router();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}/mcp")
}

/// One `tools/call`; a reply must come within 20 s (the test's bound, not a timing claim).
async fn call(url: &str, name: &str, state: Option<&str>) -> Value {
    let mut params = json!({
        "name": name,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "panic-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        },
    });
    if let Some(state) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] =
            json!({"ask_0": {"action": "accept", "content": {"confirm": true}}});
    }
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .timeout(Duration::from_secs(20))
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", name)
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{name}: no reply: {e}"));
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"))
}

#[tokio::test]
async fn a_panicking_tool_gets_an_internal_error_and_the_server_goes_on() {
    let url = serve().await;

    let at_once = call(&url, "boom_at_once", None).await;
    assert_eq!(at_once["id"], 7, "{at_once}");
    assert_eq!(at_once["error"]["code"], -32603, "{at_once}");

    let asked = call(&url, "boom_after_asking", None).await;
    let state = asked["result"]["requestState"]
        .as_str()
        .expect("a question")
        .to_string();
    let after = call(&url, "boom_after_asking", Some(&state)).await;
    assert_eq!(after["error"]["code"], -32603, "{after}");

    let asked = call(&url, "fine", None).await;
    let state = asked["result"]["requestState"]
        .as_str()
        .expect("a question")
        .to_string();
    let done = call(&url, "fine", Some(&state)).await;
    assert_eq!(done["result"]["content"][0]["text"], "fine: true", "{done}");
}
