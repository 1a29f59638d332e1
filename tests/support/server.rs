//! A small hand-written MRTR server for the client tests: an rmcp `ServerHandler` that
//! returns `input_required` results directly, plus a wrapper that can send results rmcp
//! would never type (malformed entries, unknown `resultType`).
//!
//! It keeps no memory between requests: everything it needs rides in `requestState`,
//! which carries a checksum so any altered byte is refused.
#![allow(dead_code, deprecated)]

use std::{
    hash::{DefaultHasher, Hash, Hasher},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use rmcp::{
    ErrorData as McpError, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, ContentBlock,
        CreateMessageRequest, CreateMessageRequestParams, CustomResult, ElicitRequest,
        ElicitRequestParams, ElicitationSchema, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListRootsRequest,
        ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
        Role, SamplingMessage, ServerCapabilities, ServerInfo, ServerResult, Tool,
    },
    service::{NotificationContext, RequestContext, RoleServer, Service},
};
use serde_json::{Value, json};

/// The test server. `tool_calls` counts every `tools/call` it received.
#[derive(Clone, Default)]
pub struct TestServer {
    pub tool_calls: Arc<AtomicUsize>,
}

/// Seals `body` with a checksum; the leading spaces and escapes make any re-serialization
/// by the client visible.
pub fn seal(body: &Value) -> String {
    let text = format!(" {}\t", serde_json::to_string_pretty(body).unwrap());
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    format!("{text}|{:016x}|é\"\\u00e9", hasher.finish())
}

pub fn open(state: &str) -> Result<Value, McpError> {
    let bad = || McpError::invalid_params("requestState was altered", None);
    let rest = state.strip_suffix("|é\"\\u00e9").ok_or_else(bad)?;
    let (text, sum) = rest.rsplit_once('|').ok_or_else(bad)?;
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    if format!("{:016x}", hasher.finish()) != sum {
        return Err(bad());
    }
    serde_json::from_str(text.trim()).map_err(|_| bad())
}

pub fn form(message: &str, schema: Value) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: serde_json::from_value::<ElicitationSchema>(schema).unwrap(),
        },
    ))
}

fn url(message: &str, url: &str) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message.into(),
            url: url.into(),
            elicitation_id: String::new(),
        },
    ))
}

fn sampling(prompt: &str) -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        50,
    )))
}

fn roots() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::default())
}

fn ask(requests: Vec<(&str, InputRequest)>, state: Option<Value>) -> InputRequiredResult {
    let requests: InputRequests = requests
        .into_iter()
        .map(|(key, request)| (key.to_owned(), request))
        .collect();
    InputRequiredResult::new(
        (!requests.is_empty()).then_some(requests),
        state.as_ref().map(seal),
    )
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

/// The `content` of an accepted elicitation, or `None` for decline/cancel.
fn accepted<'a>(
    responses: &'a Option<InputResponses>,
    key: &str,
) -> Result<Option<&'a Value>, McpError> {
    let answer = responses
        .as_ref()
        .and_then(|responses| responses.get(key))
        .ok_or_else(|| McpError::invalid_params(format!("missing answer `{key}`"), None))?;
    Ok(match answer["action"].as_str() {
        Some("accept") => Some(&answer["content"]),
        _ => None,
    })
}

pub fn wizard_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Service name", "minLength": 2, "maxLength": 20},
            "env": {"type": "string", "title": "Environment", "oneOf": [
                {"const": "staging", "title": "Staging"},
                {"const": "production", "title": "Production"}
            ]},
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5, "default": 2},
            "regions": {"type": "array", "title": "Regions", "items": {"type": "string", "enum": ["eu", "us", "ap"]}},
            "notify": {"type": "boolean", "title": "Notify the team", "default": false}
        },
        "required": ["name", "env"]
    })
}

impl TestServer {
    fn wizard(&self, request: &CallToolRequestParams) -> Result<CallToolResponse, McpError> {
        let Some(state) = request.request_state.as_deref() else {
            return Ok(ask(
                vec![("service", form("Describe the deployment", wizard_schema()))],
                Some(json!({"round": 1})),
            )
            .into());
        };
        let state = open(state)?;
        match state["round"].as_u64() {
            Some(1) => {
                let Some(service) = accepted(&request.input_responses, "service")? else {
                    return Ok(text("deploy abandoned"));
                };
                let summary = format!(
                    "{} to {} x{}",
                    service["name"].as_str().unwrap_or("?"),
                    service["env"].as_str().unwrap_or("?"),
                    service["replicas"].as_i64().unwrap_or(0)
                );
                Ok(ask(
                    vec![(
                        "confirm",
                        form(
                            &format!("Deploy {summary}?"),
                            json!({"type": "object", "properties": {"ok": {"type": "boolean", "title": "Go ahead"}}, "required": ["ok"]}),
                        ),
                    )],
                    Some(json!({"round": 2, "summary": summary})),
                )
                .into())
            }
            Some(2) => {
                let summary = state["summary"].as_str().unwrap_or_default();
                Ok(match accepted(&request.input_responses, "confirm")? {
                    Some(answer) if answer["ok"] == true => text(format!("deployed {summary}")),
                    _ => text(format!("not deployed: {summary}")),
                })
            }
            _ => Err(McpError::invalid_params("unknown round", None)),
        }
    }

    fn call(&self, request: CallToolRequestParams) -> Result<CallToolResponse, McpError> {
        self.tool_calls.fetch_add(1, Ordering::SeqCst);
        let confirm = || {
            form(
                "Continue?",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            )
        };
        match request.name.as_ref() {
            "wizard" => self.wizard(&request),
            "no_state" => match (&request.input_responses, &request.request_state) {
                (None, None) => Ok(ask(vec![("ok", confirm())], None).into()),
                (Some(_), None) => Ok(text("no-state-ok")),
                (_, Some(_)) => Err(McpError::invalid_params(
                    "a requestState was invented",
                    None,
                )),
            },
            "forever" => {
                let round = match request.request_state.as_deref() {
                    Some(state) => open(state)?["round"].as_u64().unwrap_or(0),
                    None => 0,
                };
                Ok(ask(vec![("ok", confirm())], Some(json!({"round": round + 1}))).into())
            }
            "state_only" => match request.request_state.as_deref() {
                None => {
                    Ok(InputRequiredResult::from_request_state(seal(&json!({"wait": 1}))).into())
                }
                Some(state) => {
                    open(state)?;
                    if request.input_responses.is_some() {
                        return Err(McpError::invalid_params(
                            "answers on a state-only retry",
                            None,
                        ));
                    }
                    Ok(text("waited"))
                }
            },
            "needs_sampling" => match &request.input_responses {
                None => Ok(ask(vec![("summary", sampling("Summarize"))], None).into()),
                Some(responses) => Ok(text(
                    responses["summary"]["content"]["text"]
                        .as_str()
                        .unwrap_or("?")
                        .to_owned(),
                )),
            },
            "gather" => match &request.input_responses {
                None => Ok(ask(
                    vec![
                        ("roots", roots()),
                        ("summary", sampling("Summarize")),
                        ("ok", confirm()),
                    ],
                    Some(json!({"round": 1})),
                )
                .into()),
                Some(responses) => {
                    open(request.request_state.as_deref().unwrap_or_default())?;
                    Ok(text(format!(
                        "{} root(s); summary: {}; ok: {}",
                        responses["roots"]["roots"].as_array().map_or(0, Vec::len),
                        responses["summary"]["content"]["text"]
                            .as_str()
                            .unwrap_or("?"),
                        responses["ok"]["action"].as_str().unwrap_or("?"),
                    )))
                }
            },
            "plain" => Ok(text("plain-ok")),
            other => Err(McpError::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let schema = Arc::new(
            json!({"type": "object", "properties": {}})
                .as_object()
                .unwrap()
                .clone(),
        );
        let names = [
            "wizard",
            "no_state",
            "forever",
            "state_only",
            "needs_sampling",
            "gather",
            "plain",
            "malformed",
            "unknown_type",
        ];
        Ok(ListToolsResult::with_all_items(
            names
                .iter()
                .map(|name| Tool::new(*name, format!("test tool {name}"), schema.clone()))
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "topic",
            Some("a prompt that asks for its topic"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        match &request.input_responses {
            None => Ok(ask(
                vec![(
                    "topic",
                    form("Which topic?", json!({"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]})),
                )],
                None,
            )
            .into()),
            Some(_) => {
                let topic = accepted(&request.input_responses, "topic")?
                    .and_then(|content| content["topic"].as_str())
                    .unwrap_or("nothing")
                    .to_owned();
                Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                    Role::User,
                    format!("Write about {topic}"),
                )])
                .into())
            }
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "secret://doc",
            "doc",
        )]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("secret://{name}", "any secret")
                .with_description("A secret by name"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match &request.input_responses {
            None => Ok(ask(
                vec![(
                    "consent",
                    url("Sign in to read the doc", "https://example.com/consent"),
                )],
                None,
            )
            .into()),
            Some(responses) => Ok(match responses["consent"]["action"].as_str() {
                Some("accept") => {
                    ReadResourceResult::new(vec![ResourceContents::text("the secret", request.uri)])
                }
                _ => {
                    ReadResourceResult::new(vec![ResourceContents::text("no consent", request.uri)])
                }
            }
            .into()),
        }
    }
}

/// Wraps [`TestServer`] to send results rmcp's typed handlers cannot produce.
#[derive(Clone, Default)]
pub struct RawResults(pub TestServer);

impl Service<RoleServer> for RawResults {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        if let ClientRequest::CallToolRequest(call) = &request {
            let raw = match call.params.name.as_ref() {
                "malformed" => Some(json!({
                    "resultType": "input_required",
                    "inputRequests": {"ask": {"method": "elicitation/create", "params": {"requestedSchema": {"type": "object", "properties": {}}}}},
                    "requestState": "x"
                })),
                "unknown_type" => Some(json!({"resultType": "streaming", "content": []})),
                _ => None,
            };
            if let Some(raw) = raw {
                self.0.tool_calls.fetch_add(1, Ordering::SeqCst);
                return Ok(ServerResult::CustomResult(CustomResult::new(raw)));
            }
        }
        <TestServer as Service<RoleServer>>::handle_request(&self.0, request, context).await
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        <TestServer as Service<RoleServer>>::handle_notification(&self.0, notification, context)
            .await
    }

    fn get_info(&self) -> ServerInfo {
        ServerHandler::get_info(&self.0)
    }
}

/// Serves on stdin/stdout until the client goes away.
pub async fn serve_stdio() {
    let service = RawResults::default()
        .serve(rmcp::transport::stdio())
        .await
        .expect("serve on stdio");
    let _ = service.waiting().await;
}

/// A Streamable HTTP server on 127.0.0.1 (stateless 2026-07-28); stops when `stop` is cancelled.
/// Returns the endpoint URL.
pub async fn serve_http(server: TestServer, stop: tokio_util::sync::CancellationToken) -> String {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_cancellation_token(stop.child_token()),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .expect("serve http");
    });
    url
}
