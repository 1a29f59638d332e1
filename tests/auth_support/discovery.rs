//! rmcp's own OAuth client (feature `auth`) against the example server: the `401`, the
//! Protected Resource Metadata, the authorization server's metadata, the authorization
//! code flow with PKCE, the token; then a multi-round tool over the authorized transport.

use mrtr::client::{InputHandlers, MrtrClient};
use mrtr::rmcp::model::{ElicitResult, ElicitationAction};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationRequest, OAuthState};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use super::{serve, whoami};

/// Where the authorization server sends the browser back; nothing listens there: the
/// test reads the redirect's `Location` itself, as a native client's loopback listener would.
const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

#[tokio::test]
async fn rmcp_discovers_the_authorization_server_from_the_401_and_runs_a_multi_round_tool() {
    let setup = serve().await;
    let challenge = whoami(&setup, None)
        .await
        .challenge
        .expect("a 401 challenge");

    // Discovery: challenge → Protected Resource Metadata → RFC 8414 metadata.
    let mut oauth = OAuthState::new(setup.url.as_str(), None).await.unwrap();
    let request = AuthorizationRequest::new(REDIRECT_URI)
        .with_preregistered_client("mrtr-test-client")
        .with_scopes(["read", "deploy"])
        .with_challenge(challenge);
    oauth.start_authorization(request).await.unwrap();
    let authorize = oauth.get_authorization_url().await.unwrap();
    assert!(
        authorize.starts_with(&format!("{}/authorize?", setup.issuer.url)),
        "{authorize}"
    );

    // The person approves (the test server at once); the browser is sent back with a code.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let approved = browser.get(&authorize).send().await.unwrap();
    assert_eq!(approved.status(), 302);
    let callback = approved.headers()["location"].to_str().unwrap().to_string();
    assert!(callback.starts_with(REDIRECT_URI), "{callback}");
    // Code for token, with the PKCE verifier and the resource indicator.
    oauth.handle_callback_url(&callback).await.unwrap();
    let resources = setup.issuer.token_resources.lock().unwrap().clone();
    assert_eq!(resources, vec![setup.url.clone()]);

    let manager = oauth.into_authorization_manager().expect("authorized");
    let client = AuthClient::new(reqwest::Client::new(), manager);
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(setup.url.as_str()),
    );
    let person = InputHandlers::new().on_elicit(|question| async move {
        let answer = if question.message.contains("which environment") {
            json!({"text": "prod"})
        } else {
            json!({"confirm": true})
        };
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(answer))
    });
    let mcp = MrtrClient::connect(transport, person).await.unwrap();
    let arguments = json!({"service": "api"}).as_object().cloned();
    let result = mcp.call_tool("deploy", arguments).await.unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(text, "Deployed api to prod.");
    let who = mcp.call_tool("whoami", None).await.unwrap();
    let who = who.content[0].as_text().unwrap().text.clone();
    assert!(who.ends_with(":alice with [read deploy]"), "{who}");
}
