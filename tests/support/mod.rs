//! Shared pieces of the end-to-end tests: a real Streamable HTTP server on 127.0.0.1, a
//! scripted rmcp client, and raw round driving.
#![allow(dead_code, deprecated)] // each test binary uses a subset; sampling is deprecated by SEP-2577

pub mod bins;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::ListenerExt as _;
use mrtr::rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, InputRequiredResult, InputResponses, ProtocolVersion, Role,
    SamplingMessage, SamplingMessageContentBlock,
};
use mrtr::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService, ServiceError,
};
use mrtr::rmcp::transport::StreamableHttpClientTransport;
use mrtr::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::never::NeverSessionManager,
};
use mrtr::rmcp::{ClientHandler, ErrorData, RoleClient, ServerHandler};

/// A server running on 127.0.0.1; dropped, it stops.
pub struct HttpServer {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn serve_http<S: ServerHandler + Clone>(server: S) -> HttpServer {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr: SocketAddr = listener.local_addr().expect("bound address");
    let router = axum::Router::new().nest_service("/mcp", service);
    // As in the quickstart: no Nagle delay on streamed replies.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    HttpServer {
        url: format!("http://{addr}/mcp"),
        task,
    }
}

/// Answers the release wizard: `production`, yes, and a fixed summary.
#[derive(Clone)]
pub struct ScriptedUser {
    pub capabilities: serde_json::Value,
}

impl Default for ScriptedUser {
    fn default() -> Self {
        ScriptedUser {
            capabilities: serde_json::json!({"elicitation": {}, "sampling": {}}),
        }
    }
}

pub const SUMMARY: &str = "Ship it carefully.";

impl ClientHandler for ScriptedUser {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(self.capabilities.clone()).expect("valid capabilities");
        ClientConfig::new(capabilities, Implementation::new("mrtr-tests", "0.0.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let field = requested_schema
            .properties
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        let content = match field.as_str() {
            "choice" => serde_json::json!({"choice": "production"}),
            _ => serde_json::json!({ field: true }),
        };
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(SUMMARY)),
            "scripted-model".into(),
        ))
    }
}

pub type Client = RunningService<RoleClient, ScriptedUser>;

pub async fn http_client(url: &str, user: ScriptedUser) -> Client {
    let transport = StreamableHttpClientTransport::from_uri(url.to_string());
    user.serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .expect("client connects with the 2026-07-28 lifecycle")
}

pub fn arguments(value: serde_json::Value) -> mrtr::rmcp::model::JsonObject {
    value.as_object().cloned().expect("arguments are an object")
}

pub fn call(name: &'static str, args: serde_json::Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(arguments(args))
}

/// The answers the scripted user gives to one round.
pub fn answer_round(result: &InputRequiredResult) -> InputResponses {
    result
        .input_requests
        .iter()
        .flatten()
        .map(|(key, request)| {
            let value = match key.as_str() {
                "environment" => {
                    serde_json::json!({"action": "accept", "content": {"choice": "production"}})
                }
                "confirm" => serde_json::json!({"action": "accept", "content": {"confirm": true}}),
                "summary" => serde_json::json!({
                    "role": "assistant", "content": {"type": "text", "text": SUMMARY}, "model": "m"
                }),
                other => panic!("unexpected input request {other}: {request:?}"),
            };
            (key.clone(), value)
        })
        .collect()
}

/// One raw `tools/call` (no automatic rounds).
pub async fn call_once(
    client: &Client,
    params: CallToolRequestParams,
) -> Result<CallToolResponse, ErrorData> {
    match client.call_tool_once(params).await {
        Ok(response) => Ok(response),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("transport failure: {other}"),
    }
}

pub fn expect_input_required(response: CallToolResponse) -> InputRequiredResult {
    match response {
        CallToolResponse::InputRequired(result) => result,
        other => panic!("expected input_required, got {other:?}"),
    }
}

pub fn text_of(response: &mrtr::rmcp::model::CallToolResult) -> String {
    response
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}
