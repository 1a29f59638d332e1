//! OAuth 2.1 bearer tokens verified by `mrtr::server::http::auth`, over real HTTP on
//! 127.0.0.1 against a small test authorization server (keys generated per test): rmcp's
//! own OAuth client discovers it from the `401` and runs a multi-round tool; bad tokens are
//! each refused with the status and challenge the MCP authorization spec words; Bob's valid
//! token cannot resume Alice's state nor read her task; a tool's missing scope is `403`
//! before its code runs; a JWKS endpoint that is down lets nobody in.

#[path = "../examples/auth/server.rs"]
mod example;
#[path = "auth_support/issuer.rs"]
mod issuer;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use issuer::{Issuer, SigningKey};
use mrtr::server::http::HttpServing;
use mrtr::server::http::auth::ResourceServer;
use mrtr::server::ledger::MemoryLedger;
use mrtr::server::{McpServer, McpServerBuilder};
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};

#[path = "auth_support/discovery.rs"]
mod discovery;

/// How many times `guarded`'s code started.
static GUARDED_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Needs `admin`; counts every start of its code.
#[mrtr::tool(scopes = ["admin"])]
async fn guarded() -> String {
    GUARDED_RUNS.fetch_add(1, Ordering::SeqCst);
    let _ = ask!(confirm("Really?"));
    "done".to_string()
}

/// How many times `resumable`'s code started (its own count: tests run in parallel).
static RESUMABLE_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Needs `admin`; asks once, then finishes.
#[mrtr::tool(scopes = ["admin"])]
async fn resumable() -> String {
    RESUMABLE_RUNS.fetch_add(1, Ordering::SeqCst);
    let go = ask!(confirm("Go on?"));
    format!("resumed: {go:?}")
}

/// A served example server and the authorization server it trusts.
struct Setup {
    issuer: Arc<Issuer>,
    /// The MCP endpoint (also the resource identifier, the tokens' audience).
    url: String,
}

/// Serves the example (plus `guarded`) on loopback behind `configure(ResourceServer)`.
async fn serve_with(configure: impl FnOnce(ResourceServer) -> ResourceServer) -> Setup {
    serve_built(|builder| builder, configure).await
}

/// The same, with the server's builder configured by `build` too.
async fn serve_built(
    build: impl FnOnce(McpServerBuilder) -> McpServerBuilder,
    configure: impl FnOnce(ResourceServer) -> ResourceServer,
) -> Setup {
    let issuer = Issuer::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = build(example::tools(McpServer::builder("auth-test")))
        .keys(KeyRing::new(KeyId(1), SecretKey::from_bytes([7; 32])))
        .tool(guarded)
        .tool(resumable)
        .build()
        .unwrap();
    // Exactly the example's configuration; the test authorization server speaks plain
    // HTTP on loopback.
    let resource =
        example::resource_server(url.parse().unwrap(), &issuer.url).allow_insecure_http(true);
    let bound = HttpServing::new(server)
        .auth(configure(resource))
        .with_listener(listener)
        .unwrap();
    tokio::spawn(bound.serve());
    Setup { issuer, url }
}

async fn serve() -> Setup {
    serve_with(|resource| resource).await
}

/// What a raw request got: status, `WWW-Authenticate`, JSON body.
struct Answer {
    status: u16,
    challenge: Option<String>,
    body: Value,
}

/// One JSON-RPC request to `url` with `token` (none: no Authorization header).
async fn rpc(url: &str, token: Option<&str>, method: &str, mut params: Value) -> Answer {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
    {
        request = request.header("Mcp-Name", name.to_string());
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = request.body(body.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON: {text}"));
    Answer {
        status,
        challenge,
        body,
    }
}

async fn whoami(setup: &Setup, token: Option<&str>) -> Answer {
    rpc(
        &setup.url,
        token,
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    )
    .await
}

fn metadata_url(setup: &Setup) -> String {
    setup
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
}

/// A `401` whose challenge names the metadata and, for a refused token, `invalid_token`.
fn assert_unauthorized(setup: &Setup, answer: &Answer, invalid_token: bool) {
    assert_eq!(answer.status, 401, "{}", answer.body);
    let challenge = answer
        .challenge
        .as_deref()
        .expect("a WWW-Authenticate header");
    let metadata = format!("resource_metadata=\"{}\"", metadata_url(setup));
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains(&metadata), "{challenge}");
    assert_eq!(
        challenge.contains("error=\"invalid_token\""),
        invalid_token,
        "{challenge}"
    );
    assert!(
        answer.body["error"]["message"].is_string(),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn the_protected_resource_metadata_names_the_authorization_server() {
    let setup = serve().await;
    for url in [
        metadata_url(&setup),
        setup
            .url
            .replace("/mcp", "/.well-known/oauth-protected-resource"),
    ] {
        let document: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        assert_eq!(document["resource"], setup.url, "{url}: {document}");
        assert_eq!(document["authorization_servers"], json!([setup.issuer.url]));
        assert_eq!(document["scopes_supported"], json!(["read", "deploy"]));
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }
}

#[tokio::test]
async fn a_valid_token_is_let_in_as_its_issuer_and_subject() {
    let setup = serve().await;
    let token = setup.issuer.token("alice", &setup.url, "read deploy", 300);
    let answer = whoami(&setup, Some(&token)).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let text = answer.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let principal = format!(
        "oauth:{}:{}:alice",
        setup.issuer.url.len(),
        setup.issuer.url
    );
    assert_eq!(text, format!("subject:{principal} with [read deploy]"));
}

#[tokio::test]
async fn missing_and_malformed_credentials_get_the_bare_or_invalid_request_challenge() {
    let setup = serve().await;
    let missing = whoami(&setup, None).await;
    assert_unauthorized(&setup, &missing, false);
    assert_eq!(
        missing.challenge.as_deref(),
        Some(format!("Bearer resource_metadata=\"{}\"", metadata_url(&setup)).as_str())
    );
    let garbage = whoami(&setup, Some("not-a-jwt")).await;
    assert_unauthorized(&setup, &garbage, true);
}

#[tokio::test]
async fn bad_tokens_are_each_refused_with_invalid_token() {
    let setup = serve().await;
    let issuer = &setup.issuer;
    let good = issuer.token("alice", &setup.url, "read", 300);
    // Tampered: one character of the signature changed.
    let mut tampered = good.clone().into_bytes();
    let at = tampered.len() - 5;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    // Payload swapped (alice's signature over bob's claims).
    let bob = issuer.token("bob", &setup.url, "read", 300);
    let mut spliced: Vec<&str> = good.split('.').collect();
    spliced[1] = bob.split('.').nth(1).unwrap();
    let spliced = spliced.join(".");
    let expired = issuer.token("alice", &setup.url, "read", -600);
    let wrong_audience = issuer.token("alice", "http://127.0.0.1:1/other", "read", 300);
    // Signed by the trusted key, naming another issuer.
    let mut claims = issuer.claims("alice", &setup.url, "read", 300);
    claims["iss"] = json!("http://127.0.0.1:1");
    let wrong_issuer = issuer.sign(&claims);
    // Another authorization server's token (its own key, same `kid`).
    let other_issuer = Issuer::start().await;
    let foreign = other_issuer.token("alice", &setup.url, "read", 300);
    // Not valid yet (`nbf` past the leeway).
    let mut claims = issuer.claims("alice", &setup.url, "read", 300);
    claims["nbf"] = json!(claims["iat"].as_i64().unwrap() + 600);
    let not_yet = issuer.sign(&claims);
    // No subject.
    let mut claims = issuer.claims("alice", &setup.url, "read", 300);
    claims.as_object_mut().unwrap().remove("sub");
    let no_subject = issuer.sign(&claims);
    let unknown_kid =
        SigningKey::generate("key-unknown").sign(&issuer.claims("alice", &setup.url, "read", 300));
    // `alg: none`: an unsigned token (built by hand; nothing here parses it).
    let payload = good.split('.').nth(1).unwrap();
    let alg_none = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.");
    let cases = [
        ("tampered", tampered, "signature"),
        ("spliced", spliced, "signature"),
        ("expired", expired, "expired"),
        ("wrong audience", wrong_audience, "audience"),
        ("wrong issuer", wrong_issuer, "issuer"),
        ("another issuer's token", foreign, "signature"),
        ("not yet valid", not_yet, "not valid yet"),
        ("no subject", no_subject, "`sub`"),
        ("unknown kid", unknown_kid, "key"),
        ("alg none", alg_none, "JWT"),
    ];
    for (case, token, why) in cases {
        let answer = whoami(&setup, Some(&token)).await;
        assert_unauthorized(&setup, &answer, true);
        let challenge = answer.challenge.unwrap();
        assert!(challenge.contains(why), "{case}: {challenge}");
        assert!(!challenge.contains(&token), "{case}: the token is echoed");
    }
    // The good one still passes.
    assert_eq!(whoami(&setup, Some(&good)).await.status, 200);
}

#[tokio::test]
async fn an_unknown_kid_refreshes_the_keys_at_a_bounded_rate() {
    // Rotation: a key published after the first fetch is picked up on its first use.
    let setup = serve_with(|r| r.min_refresh_interval(Duration::ZERO)).await;
    let first = setup.issuer.token("alice", &setup.url, "", 300);
    assert_eq!(whoami(&setup, Some(&first)).await.status, 200);
    setup
        .issuer
        .keys
        .lock()
        .unwrap()
        .insert(0, SigningKey::generate("key-2"));
    let rotated = setup.issuer.token("alice", &setup.url, "", 300);
    assert_eq!(whoami(&setup, Some(&rotated)).await.status, 200);
    assert_eq!(setup.issuer.jwks_fetches.load(Ordering::SeqCst), 2);

    // A flood of made-up key ids costs the issuer one fetch per interval, not one each.
    let setup = serve_with(|r| r.min_refresh_interval(Duration::from_secs(3600))).await;
    let good = setup.issuer.token("alice", &setup.url, "", 300);
    assert_eq!(whoami(&setup, Some(&good)).await.status, 200);
    for n in 0..20 {
        let forged = SigningKey::generate(&format!("made-up-{n}"))
            .sign(&setup.issuer.claims("alice", &setup.url, "", 300));
        assert_eq!(whoami(&setup, Some(&forged)).await.status, 401);
    }
    assert_eq!(setup.issuer.jwks_fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_jwks_endpoint_that_is_down_lets_nobody_in() {
    let setup = serve().await;
    setup.issuer.jwks_up.store(false, Ordering::SeqCst);
    let token = setup.issuer.token("alice", &setup.url, "read deploy", 300);
    let answer = whoami(&setup, Some(&token)).await;
    assert_eq!(answer.status, 503, "{}", answer.body);
    let message = answer.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("cannot be verified"), "{message}");
    assert!(
        message.contains("signing keys are unavailable"),
        "{message}"
    );
    // Stale keys are not trusted either: a server whose cache expires at once.
    let setup = serve_with(|r| {
        r.jwks_ttl(Duration::ZERO)
            .min_refresh_interval(Duration::ZERO)
    })
    .await;
    let token = setup.issuer.token("alice", &setup.url, "", 300);
    assert_eq!(whoami(&setup, Some(&token)).await.status, 200);
    setup.issuer.jwks_up.store(false, Ordering::SeqCst);
    assert_eq!(whoami(&setup, Some(&token)).await.status, 503);
}

#[tokio::test]
async fn a_missing_scope_is_403_insufficient_scope_before_the_tool_runs() {
    let setup = serve().await;
    let token = setup.issuer.token("alice", &setup.url, "read deploy", 300);
    let before = GUARDED_RUNS.load(Ordering::SeqCst);
    let call = json!({"name": "guarded", "arguments": {}});
    let answer = rpc(&setup.url, Some(&token), "tools/call", call).await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    let challenge = answer.challenge.unwrap();
    assert!(
        challenge.starts_with(
            "Bearer error=\"insufficient_scope\", scope=\"admin\", resource_metadata=\""
        ),
        "{challenge}"
    );
    assert_eq!(
        answer.body["error"]["data"]["requiredScopes"],
        json!(["admin"])
    );
    assert_eq!(
        GUARDED_RUNS.load(Ordering::SeqCst),
        before,
        "the tool's code ran"
    );
    // `tools/list` names the scopes a tool needs.
    let listed = rpc(&setup.url, Some(&token), "tools/list", json!({})).await;
    let tools = listed.body["result"]["tools"].as_array().unwrap().clone();
    let deploy = tools.iter().find(|t| t["name"] == "deploy").unwrap();
    assert_eq!(
        deploy["_meta"]["io.github.mrtr/requiredScopes"],
        json!(["deploy"])
    );
    // With the scope the tool runs.
    let admin = setup.issuer.token("alice", &setup.url, "admin", 300);
    let call = json!({"name": "guarded", "arguments": {}});
    let answer = rpc(&setup.url, Some(&admin), "tools/call", call).await;
    assert_eq!(
        answer.body["result"]["resultType"], "input_required",
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn a_scope_refused_mid_flow_is_not_recorded_and_a_stepped_up_token_resumes() {
    // With a round ledger, which records each resumed round's reply for its retries.
    let setup = serve_built(|builder| builder.round_ledger(MemoryLedger::new()), |r| r).await;
    let admin = setup.issuer.token("alice", &setup.url, "admin", 300);
    let call = json!({"name": "resumable", "arguments": {}});
    let first = rpc(&setup.url, Some(&admin), "tools/call", call.clone()).await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{}",
        first.body
    );
    let key = first.body["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut resumed = call;
    resumed["requestState"] = first.body["result"]["requestState"].clone();
    resumed["inputResponses"] = json!({ key: {"action": "accept", "content": {"confirm": true}} });

    // Alice's next token lacks `admin`: refused before the round is claimed or run.
    let runs = RESUMABLE_RUNS.load(Ordering::SeqCst);
    let narrowed = setup.issuer.token("alice", &setup.url, "read", 300);
    let refused = rpc(&setup.url, Some(&narrowed), "tools/call", resumed.clone()).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused
            .challenge
            .as_deref()
            .is_some_and(|c| c.contains("error=\"insufficient_scope\", scope=\"admin\"")),
        "{:?}",
        refused.challenge
    );
    assert_eq!(refused.body["error"]["code"], -32600, "{}", refused.body);
    assert_eq!(
        RESUMABLE_RUNS.load(Ordering::SeqCst),
        runs,
        "the tool's code ran"
    );

    // Stepped up again, the same round runs: not the refusal replayed from the ledger.
    let stepped_up = rpc(&setup.url, Some(&admin), "tools/call", resumed.clone()).await;
    assert_eq!(stepped_up.status, 200, "{}", stepped_up.body);
    assert_eq!(
        stepped_up.body["result"]["content"][0]["text"], "resumed: Accept(true)",
        "{}",
        stepped_up.body
    );
    // And that reply is what the ledger replays.
    let again = rpc(&setup.url, Some(&admin), "tools/call", resumed).await;
    assert_eq!(again.body["result"], stepped_up.body["result"]);
}

#[tokio::test]
async fn bob_cannot_resume_alices_state_nor_read_her_task() {
    let setup = serve().await;
    let alice = setup.issuer.token("alice", &setup.url, "read deploy", 300);
    let bob = setup.issuer.token("bob", &setup.url, "read deploy", 300);
    let call = json!({"name": "deploy", "arguments": {"service": "api"}});
    let first = rpc(&setup.url, Some(&alice), "tools/call", call.clone()).await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{}",
        first.body
    );
    let mut retry = call;
    retry["requestState"] = first.body["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"ask_0": {"action": "accept", "content": {"text": "prod"}}});
    let stolen = rpc(&setup.url, Some(&bob), "tools/call", retry.clone()).await;
    assert_eq!(stolen.body["error"]["code"], -32602, "{}", stolen.body);
    let own = rpc(&setup.url, Some(&alice), "tools/call", retry).await;
    assert_eq!(
        own.body["result"]["resultType"], "input_required",
        "{}",
        own.body
    );

    let created = rpc(
        &setup.url,
        Some(&alice),
        "tools/call",
        json!({"name": "report", "arguments": {}}),
    )
    .await;
    assert_eq!(
        created.body["result"]["resultType"], "task",
        "{}",
        created.body
    );
    let task = created.body["result"]["taskId"].clone();
    let peek = rpc(&setup.url, Some(&bob), "tasks/get", json!({"taskId": task})).await;
    assert_eq!(peek.body["error"]["code"], -32602, "{}", peek.body);
    let mine = rpc(
        &setup.url,
        Some(&alice),
        "tasks/get",
        json!({"taskId": task}),
    )
    .await;
    assert!(mine.body["result"]["status"].is_string(), "{}", mine.body);
}
