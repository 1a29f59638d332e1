//! The conformance suite's ordinary (single round-trip) fixtures as a plain rmcp handler.
//!
//! Every name, URI and argument below is fixed by the suite's scenarios
//! (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, revisions 2026-07-28 and
//! 2025-11-25); the fixtures that ask the client for input are not here, they are written
//! with mrtr and put in front of this handler.

use std::{borrow::Cow, time::Duration};

use base64::{Engine, engine::general_purpose::STANDARD as BASE64};
use rmcp::{
    ErrorData as McpError, Peer, RoleServer, ServerHandler,
    handler::server::router::tool::ToolRouter,
    model::{
        CallToolResult, ClientCapabilities, CompleteRequestParams, CompleteResult, CompletionInfo,
        ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        PaginatedRequestParams, ProgressNotificationParam, Prompt, PromptArgument, PromptMessage,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        RequestMetaObject, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities,
        ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
    },
    service::RequestContext,
    tool, tool_handler, tool_router,
};
use serde_json::json;

/// A 1×1 red PNG, for the image fixtures.
const RED_DOT_PNG: &[u8] = include_bytes!("media/red-dot.png");
/// 10 ms of 8 kHz mono silence, for the audio fixture (the suite requires `audio/wav`).
const SILENCE_WAV: &[u8] = include_bytes!("media/silence.wav");

const STATIC_TEXT_URI: &str = "test://static-text";
const STATIC_BINARY_URI: &str = "test://static-binary";
const EXAMPLE_RESOURCE_URI: &str = "test://example-resource";
const TEMPLATE_URI: &str = "test://template/{id}/data";

/// How many progress notifications `test_tool_with_progress` sends before its result.
const PROGRESS_STEPS: u32 = 3;

/// The suite's single round-trip tools, prompts, resources and completions.
///
/// A standalone [`ServerHandler`]: serve it as it is, or put it behind a handler that adds
/// more fixtures in front of it.
#[derive(Debug, Clone)]
pub struct OrdinaryFixtures {
    tool_router: ToolRouter<Self>,
}

impl Default for OrdinaryFixtures {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_router]
impl OrdinaryFixtures {
    /// A handler with every ordinary fixture registered.
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Returns one text item (tools-call-simple-text)")]
    fn test_simple_text(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(
            "This is a simple text response for testing.",
        )])
    }

    #[tool(description = "Returns one PNG image item (tools-call-image)")]
    fn test_image_content(&self) -> CallToolResult {
        CallToolResult::success(vec![png_block()])
    }

    #[tool(description = "Returns one WAV audio item (tools-call-audio)")]
    fn test_audio_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::audio(
            BASE64.encode(SILENCE_WAV),
            "audio/wav",
        )])
    }

    #[tool(description = "Returns one embedded text resource (tools-call-embedded-resource)")]
    fn test_embedded_resource(&self) -> CallToolResult {
        CallToolResult::success(vec![embedded_example_resource()])
    }

    #[tool(description = "Returns text, image and resource items (tools-call-mixed-content)")]
    fn test_multiple_content_types(&self) -> CallToolResult {
        CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            png_block(),
            embedded_example_resource(),
        ])
    }

    #[tool(description = "Always fails as a tool, not as a protocol error (tools-call-error)")]
    fn test_error_handling(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])
    }

    #[tool(
        description = "Reports progress three times before answering (tools-call-with-progress)"
    )]
    async fn test_tool_with_progress(
        &self,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if let Some(token) = meta.get_progress_token() {
            for step in 0..PROGRESS_STEPS {
                let progress = ProgressNotificationParam::new(token.clone(), f64::from(step))
                    .with_total(f64::from(PROGRESS_STEPS));
                peer.notify_progress(progress).await.map_err(|error| {
                    McpError::internal_error(format!("could not send progress: {error}"), None)
                })?;
                // A short gap makes the notifications arrive as separate SSE events.
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "Progress reporting complete",
        )]))
    }

    #[tool(
        description = "Logs three info messages while it runs (tools-call-with-logging, 2025-11-25)"
    )]
    async fn test_tool_with_logging(
        &self,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        for (step, text) in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        .into_iter()
        .enumerate()
        {
            if step > 0 {
                // The scenario asks for spaced messages, as a real tool would produce them.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            #[expect(
                deprecated,
                reason = "SEP-2577 deprecates logging, but 2025-11-25 defines it"
            )]
            let message = rmcp::model::LoggingMessageNotificationParam::new(
                rmcp::model::LoggingLevel::Info,
                json!(text),
            );
            #[expect(
                deprecated,
                reason = "SEP-2577 deprecates logging, but 2025-11-25 defines it"
            )]
            peer.notify_logging_message(message)
                .await
                .map_err(|error| {
                    McpError::internal_error(format!("could not send log: {error}"), None)
                })?;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "Tool with logging executed successfully",
        )]))
    }

    #[tool(
        description = "Needs the sampling client capability; without it the call is refused with -32021 (server-stateless)"
    )]
    fn test_missing_capability(&self, meta: RequestMetaObject) -> Result<CallToolResult, McpError> {
        let declares_sampling = meta
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.sampling.is_some());
        if !declares_sampling {
            #[expect(
                deprecated,
                reason = "SEP-2577 deprecates sampling, but 2026-07-28 still defines it"
            )]
            return Err(McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_sampling().build(),
            ));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "The client declared sampling",
        )]))
    }

    #[tool(
        description = "Answers on the request's own stream with notifications and a result only, never a server-to-client request (server-stateless)"
    )]
    async fn test_streaming_elicitation(
        &self,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if let Some(token) = meta.get_progress_token() {
            peer.notify_progress(ProgressNotificationParam::new(token, 1.0).with_total(1.0))
                .await
                .map_err(|error| {
                    McpError::internal_error(format!("could not send progress: {error}"), None)
                })?;
        }
        // Under 2026-07-28 a server asks the user through an input_required result, so this
        // stream must never carry an `elicitation/create` request.
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "Streaming complete without any server-to-client request",
        )]))
    }

    #[tool(
        description = "Logs only when the request's _meta sets io.modelcontextprotocol/logLevel (server-stateless)"
    )]
    async fn test_logging_tool(
        &self,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if let Some(level) = meta.log_level() {
            #[expect(
                deprecated,
                reason = "SEP-2577 deprecates logging, but 2026-07-28 still defines it"
            )]
            let message = rmcp::model::LoggingMessageNotificationParam::new(
                level,
                json!("test_logging_tool ran"),
            );
            #[expect(
                deprecated,
                reason = "SEP-2577 deprecates logging, but 2026-07-28 still defines it"
            )]
            peer.notify_logging_message(message)
                .await
                .map_err(|error| {
                    McpError::internal_error(format!("could not send log: {error}"), None)
                })?;
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "Logging evaluated",
        )]))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for OrdinaryFixtures {
    fn get_info(&self) -> ServerConfig {
        // No listChanged or subscribe: a stateless fixture has nothing to push, and not
        // advertising them keeps `subscriptions/listen` unimplemented (-32601). Logging is
        // for 2025-11-25 sessions (`logging/setLevel`).
        #[expect(
            deprecated,
            reason = "SEP-2577 deprecates logging, but both revisions define it"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "mrtr-conformance-fixtures",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // 2026-07-28 statelessly, 2025-11-25 and older in sessions.
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    #[expect(
        deprecated,
        reason = "SEP-2577 deprecates logging, but 2025-11-25 defines it"
    )]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // The fixture's tools log at info regardless; accepting the level is what
        // logging-set-level checks.
        Ok(())
    }

    // resources/subscribe is how 2025-11-25 subscribes.
    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // Nothing here ever changes, so a subscription never fires; accepting it is all.
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let candidates: &[&str] = match (request.r#ref.as_prompt_name(), &*request.argument.name) {
            (Some("test_prompt_with_arguments"), "arg1" | "arg2") => {
                &["test", "testing", "testValue1", "testValue2"]
            }
            _ => &[],
        };
        let values = candidates
            .iter()
            .filter(|value| value.starts_with(&request.argument.value))
            .map(|value| (*value).to_owned())
            .collect();
        let completion =
            CompletionInfo::new(values).map_err(|reason| McpError::internal_error(reason, None))?;
        Ok(CompleteResult::new(completion))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                "test_simple_prompt",
                Some("A prompt without arguments"),
                None,
            ),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt that quotes its two arguments"),
                Some(vec![
                    PromptArgument::new("arg1")
                        .with_description("First argument")
                        .with_required(true),
                    PromptArgument::new("arg2")
                        .with_description("Second argument")
                        .with_required(true),
                ]),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt that embeds the resource it is given"),
                Some(vec![
                    PromptArgument::new("resourceUri")
                        .with_description("URI of the resource to embed")
                        .with_required(true),
                ]),
            ),
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt that carries an image"),
                None,
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let argument = |name: &str| -> Result<String, McpError> {
            request
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get(name))
                .and_then(|value| value.as_str())
                .map(str::to_owned)
                .ok_or_else(|| {
                    McpError::invalid_params(
                        format!("prompt {} needs the string argument {name}", request.name),
                        Some(json!({ "argument": name })),
                    )
                })
        };
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![PromptMessage::new_text(
                Role::User,
                "This is a simple prompt for testing.",
            )],
            "test_prompt_with_arguments" => vec![PromptMessage::new_text(
                Role::User,
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    argument("arg1")?,
                    argument("arg2")?
                ),
            )],
            "test_prompt_with_embedded_resource" => {
                let uri = argument("resourceUri")?;
                vec![
                    PromptMessage::new(
                        Role::User,
                        ContentBlock::resource(
                            ResourceContents::text("Embedded resource content for testing.", uri)
                                .with_mime_type("text/plain"),
                        ),
                    ),
                    PromptMessage::new_text(
                        Role::User,
                        "Please process the embedded resource above.",
                    ),
                ]
            }
            "test_prompt_with_image" => vec![
                PromptMessage::new(Role::User, png_block()),
                PromptMessage::new_text(Role::User, "Please describe the image above."),
            ],
            other => {
                return Err(McpError::invalid_params(
                    format!("unknown prompt: {other}"),
                    Some(json!({ "name": other })),
                ));
            }
        };
        Ok(GetPromptResult::new(messages).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(STATIC_TEXT_URI, "static-text")
                .with_description("A fixed text resource")
                .with_mime_type("text/plain"),
            Resource::new(STATIC_BINARY_URI, "static-binary")
                .with_description("A fixed binary resource (a PNG)")
                .with_mime_type("image/png"),
            Resource::new(EXAMPLE_RESOURCE_URI, "example-resource")
                .with_description("The resource the prompts and tools embed")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(TEMPLATE_URI, "template-data")
                .with_description("Data for the id in the URI")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let contents = match uri {
            STATIC_TEXT_URI => {
                ResourceContents::text("This is the content of the static text resource.", uri)
                    .with_mime_type("text/plain")
            }
            STATIC_BINARY_URI => {
                ResourceContents::blob(BASE64.encode(RED_DOT_PNG), uri).with_mime_type("image/png")
            }
            EXAMPLE_RESOURCE_URI => {
                ResourceContents::text("Embedded resource content for testing.", uri)
                    .with_mime_type("text/plain")
            }
            _ => match template_id(uri) {
                Some(id) => ResourceContents::text(
                    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
                        .to_string(),
                    uri,
                )
                .with_mime_type("application/json"),
                // rmcp turns this into -32602 for 2026-07-28 peers; `data.uri` names the miss.
                None => {
                    return Err(McpError::resource_not_found(
                        format!("resource not found: {uri}"),
                        Some(json!({ "uri": uri })),
                    ));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// The `{id}` of a `test://template/{id}/data` URI.
fn template_id(uri: &str) -> Option<&str> {
    uri.strip_prefix("test://template/")?
        .strip_suffix("/data")
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

fn png_block() -> ContentBlock {
    ContentBlock::image(BASE64.encode(RED_DOT_PNG), "image/png")
}

fn embedded_example_resource() -> ContentBlock {
    ContentBlock::resource(
        ResourceContents::text(
            "Embedded resource content for testing.",
            EXAMPLE_RESOURCE_URI,
        )
        .with_mime_type("text/plain"),
    )
}
