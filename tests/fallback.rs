//! An existing rmcp server behind machine tools, prompts and resources (`build_with`),
//! driven by rmcp's client over real TCP on 127.0.0.1 (newline-delimited JSON-RPC, as over
//! stdio): listings are merged, machines first, and drop the existing entries a machine
//! shadows; what no machine serves reaches the existing server and its answers come back
//! stamped with `serverInfo`; its capabilities, completions, subscriptions, logging level
//! and the client's notifications pass through to it unchanged.
#![allow(deprecated)] // logging and resources/subscribe are legacy-only (SEP-2577)

use std::collections::BTreeSet;
use std::time::Duration;

use mrtr::rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, CompleteRequestParams,
    CompleteResult, CompletionInfo, ContentBlock, CustomNotification, CustomRequest, CustomResult,
    ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, MetaObject, NumberOrString, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, Prompt, PromptMessage, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Reference, Resource, ResourceContents,
    ResourceTemplate, Role, ServerCapabilities, ServerConfig, ServerNotification, ServerResult,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use mrtr::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService,
    ServiceError, SubscriptionContext,
};
use mrtr::rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use mrtr::server::{INPUT_KINDS_META_KEY, McpServer};
use mrtr::token::{KeyId, KeyRing, SecretKey};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A bound so a broken server fails a test instead of hanging it; never asserted on.
const HANG_GUARD: Duration = Duration::from_secs(30);
const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Translates a word into the language the user picks (shadows the existing `translate`).
#[mrtr::tool]
async fn translate(word: String) -> String {
    let language = ask!(choice("Into which language?", ["fr", "de"]))
        .ok()
        .unwrap_or_default();
    format!("{word} in {language}")
}

/// A haiku on a topic, once the user agrees to one.
#[mrtr::prompt(name = "haiku")]
async fn haiku_prompt(topic: String) -> Vec<PromptMessage> {
    let _ = ask!(confirm("Seventeen syllables?"));
    vec![PromptMessage::new_text(
        Role::User,
        format!("A haiku about {topic}."),
    )]
}

/// Today's notes.
#[mrtr::resource(uri = "notes://today", mime_type = "text/plain")]
async fn notes() -> String {
    "nothing yet".to_string()
}

/// The application's existing rmcp server: one tool the machine shadows, two more over two
/// pages, a prompt, a resource and a template, completions, logging and subscriptions. It
/// reports every pass-through request and notification it sees on `events`.
#[derive(Clone)]
struct Existing {
    events: mpsc::UnboundedSender<String>,
}

impl Existing {
    fn new() -> (Self, mpsc::UnboundedReceiver<String>) {
        let (events, received) = mpsc::unbounded_channel();
        (Self { events }, received)
    }

    fn saw(&self, event: String) {
        let _ = self.events.send(event);
    }
}

/// `_meta` the existing server puts on its own results, to see it kept beside the stamp.
fn own_meta() -> Option<MetaObject> {
    let mut meta = MetaObject::new();
    meta.0
        .insert("example.com/origin".into(), json!("existing"));
    Some(meta)
}

fn tool(name: &str, description: &str) -> Tool {
    let schema: JsonObject = serde_json::from_value(json!({
        "type": "object",
        "properties": {"word": {"type": "string"}},
    }))
    .unwrap();
    Tool::new(name.to_string(), description.to_string(), schema)
}

impl ServerHandler for Existing {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_completions()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let second_page = request.and_then(|r| r.cursor).as_deref() == Some("page-2");
        if second_page {
            return Ok(ListToolsResult::with_all_items(vec![tool(
                "spell",
                "Spells a word.",
            )]));
        }
        let mut page = ListToolsResult::with_all_items(vec![
            tool("translate", "The existing translator."),
            tool("define", "Defines a word."),
        ]);
        page.next_cursor = Some("page-2".into());
        Ok(page)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        ["define", "spell"]
            .contains(&name)
            .then(|| tool(name, "An existing tool."))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "define" {
            return Err(ErrorData::method_not_found::<
                mrtr::rmcp::model::CallToolRequestMethod,
            >());
        }
        let word = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get("word"))
            .and_then(Value::as_str)
            .ok_or_else(|| ErrorData::invalid_params("define needs a word", None))?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
            "{word}: a unit of language"
        ))]);
        result.meta = own_meta();
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new("haiku", Some("The existing haiku."), None),
            Prompt::new("greeting", Some("Says hello."), None),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "greeting" {
            return Err(ErrorData::method_not_found::<
                mrtr::rmcp::model::GetPromptRequestMethod,
            >());
        }
        let mut result =
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, "Say hello.")]);
        result.meta = own_meta();
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("notes://today", "existing-notes"),
            Resource::new("file:///readme", "readme"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("file:///{path}", "file"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "file:///readme" {
            return Err(ErrorData::method_not_found::<
                mrtr::rmcp::model::ReadResourceRequestMethod,
            >());
        }
        let mut result =
            ReadResourceResult::new(vec![ResourceContents::text("Read me.", "file:///readme")]);
        result.meta = own_meta();
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.saw(format!("complete {}", request.argument.value));
        let values = ["fr", "french"]
            .iter()
            .filter(|value| value.starts_with(&request.argument.value))
            .map(|value| value.to_string())
            .collect();
        Ok(CompleteResult::new(
            CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?,
        ))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Ok(CustomResult::new(json!({ "echo": request.method })))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.saw("listen".into());
        context
            .sink()
            .notify_tool_list_changed()
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        context.cancelled().await;
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.saw(format!("set_level {:?}", request.level));
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.saw(format!("subscribe {}", request.uri));
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.saw(format!("unsubscribe {}", request.uri));
        Ok(())
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        self.saw("initialized".into());
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.saw("roots_list_changed".into());
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.saw(format!(
            "cancelled {}",
            notification.reason.unwrap_or_default()
        ));
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        self.saw(format!("progress {}", notification.progress));
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleServer>,
    ) {
        self.saw(format!("custom {}", notification.method));
    }
}

fn keys() -> KeyRing {
    KeyRing::new(KeyId(1), SecretKey::from_bytes([3; 32]))
}

/// The translate tool, the haiku prompt and the notes resource in front of `Existing`.
fn mixed() -> (McpServer<Existing>, mpsc::UnboundedReceiver<String>) {
    let (existing, events) = Existing::new();
    let server = McpServer::builder("mixed")
        .keys(keys())
        .tool(translate)
        .prompt(haiku_prompt)
        .resource(notes)
        .build_with(existing)
        .unwrap();
    (server, events)
}

type Client = RunningService<RoleClient, ()>;

/// Serves `server` to one client over a TCP connection on 127.0.0.1.
async fn connect<S: ServerHandler>(server: S, lifecycle: ClientLifecycleMode) -> Client {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        if let Ok(running) = server.serve(stream).await {
            let _ = running.waiting().await;
        }
    });
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    ().serve_with_lifecycle(stream, lifecycle)
        .await
        .expect("the client connects")
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// The `name` of the `serverInfo` a result's `_meta` carries.
fn stamped_name(meta: &Option<MetaObject>) -> Option<String> {
    let info = meta.as_ref()?.0.get(SERVER_INFO_META_KEY)?;
    Some(info["name"].as_str()?.to_string())
}

fn input_kinds(meta: &Option<MetaObject>) -> Option<Value> {
    meta.as_ref()?.0.get(INPUT_KINDS_META_KEY).cloned()
}

fn page(cursor: &str) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(Some(cursor.to_string())))
}

fn mcp_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}

#[tokio::test]
async fn listings_put_machines_first_and_drop_the_entries_they_shadow() {
    let (server, _events) = mixed();
    let client = connect(server, modern()).await;

    let first = client.list_tools(None).await.unwrap();
    let names: Vec<&str> = first.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["translate", "define"]);
    let machine_tool = &first.tools[0];
    assert_eq!(
        machine_tool.description.as_deref(),
        Some(
            "Translates a word into the language the user picks (shadows the existing `translate`)."
        )
    );
    assert_eq!(
        input_kinds(&machine_tool.meta),
        Some(json!(["elicitation.form"]))
    );
    assert_eq!(input_kinds(&first.tools[1].meta), None);
    assert_eq!(first.next_cursor.as_deref(), Some("page-2"));
    assert_eq!(stamped_name(&first.meta).as_deref(), Some("mixed"));

    // A later page is the existing server's alone, with its cursor.
    let second = client.list_tools(page("page-2")).await.unwrap();
    let names: Vec<&str> = second.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["spell"]);
    assert_eq!(second.next_cursor, None);
    assert_eq!(stamped_name(&second.meta).as_deref(), Some("mixed"));

    let prompts = client.list_prompts(None).await.unwrap();
    let names: Vec<&str> = prompts.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["haiku", "greeting"]);
    assert_eq!(
        prompts.prompts[0].description.as_deref(),
        Some("A haiku on a topic, once the user agrees to one.")
    );
    assert_eq!(
        input_kinds(&prompts.prompts[0].meta),
        Some(json!(["elicitation.form"]))
    );
    assert_eq!(stamped_name(&prompts.meta).as_deref(), Some("mixed"));

    let resources = client.list_resources(None).await.unwrap();
    let uris: Vec<&str> = resources.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["notes://today", "file:///readme"]);
    assert_eq!(resources.resources[0].name, "notes");
    // A machine that asks nothing has no input kinds to list.
    assert_eq!(input_kinds(&resources.resources[0].meta), None);
    assert_eq!(stamped_name(&resources.meta).as_deref(), Some("mixed"));

    let templates = client.list_resource_templates(None).await.unwrap();
    let uris: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    assert_eq!(uris, ["file:///{path}"]);
    assert_eq!(stamped_name(&templates.meta).as_deref(), Some("mixed"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn what_no_machine_serves_reaches_the_existing_server_and_comes_back_stamped() {
    let (server, mut events) = mixed();
    let client = connect(server, modern()).await;

    let defined = client
        .call_tool(
            CallToolRequestParams::new("define")
                .with_arguments(json!({"word": "word"}).as_object().cloned().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(
        defined.content[0].as_text().unwrap().text,
        "word: a unit of language"
    );
    assert_eq!(stamped_name(&defined.meta).as_deref(), Some("mixed"));
    assert_eq!(
        defined.meta.as_ref().unwrap().0["example.com/origin"],
        "existing"
    );

    let greeting = client
        .get_prompt(GetPromptRequestParams::new("greeting"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&greeting.messages[0]).unwrap()["content"]["text"],
        "Say hello."
    );
    assert_eq!(stamped_name(&greeting.meta).as_deref(), Some("mixed"));

    let readme = client
        .read_resource(ReadResourceRequestParams::new("file:///readme"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&readme.contents[0]).unwrap()["text"],
        "Read me."
    );
    assert_eq!(stamped_name(&readme.meta).as_deref(), Some("mixed"));
    assert_eq!(
        readme.meta.as_ref().unwrap().0["example.com/origin"],
        "existing"
    );

    let completed = client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("greeting"),
            ArgumentInfo::new("language", "fr"),
        ))
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["fr", "french"]);
    assert_eq!(stamped_name(&completed.meta).as_deref(), Some("mixed"));
    assert_eq!(events.recv().await.as_deref(), Some("complete fr"));

    let custom = client
        .send_request(ClientRequest::CustomRequest(CustomRequest::new(
            "example.com/echo",
            Some(json!({})),
        )))
        .await
        .unwrap();
    let ServerResult::CustomResult(custom) = custom else {
        panic!("expected the existing server's custom result, got {custom:?}");
    };
    assert_eq!(custom.0, json!({"echo": "example.com/echo"}));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_existing_servers_errors_pass_through_and_unknown_names_are_invalid_params() {
    let (server, _events) = mixed();
    let client = connect(server, modern()).await;

    // An error of the existing server's own reaches the client as it is.
    let refused = client
        .call_tool(CallToolRequestParams::new("define"))
        .await
        .map(|_| ())
        .map_err(mcp_error)
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(refused.message, "define needs a word");

    // Its "no such method" for a name nobody serves is 2026-07-28's unknown-name error.
    let unknown = client
        .call_tool(CallToolRequestParams::new("nope"))
        .await
        .map(|_| ())
        .map_err(mcp_error)
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(unknown.message, "unknown tool: `nope`");
    assert_eq!(unknown.data, Some(json!({"name": "nope"})));

    let unknown = client
        .get_prompt(GetPromptRequestParams::new("nope"))
        .await
        .map(|_| ())
        .map_err(mcp_error)
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(unknown.message, "unknown prompt: `nope`");

    let unknown = client
        .read_resource(ReadResourceRequestParams::new("file:///nope"))
        .await
        .map(|_| ())
        .map_err(mcp_error)
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(unknown.message, "resource not found: `file:///nope`");
    assert_eq!(unknown.data, Some(json!({"uri": "file:///nope"})));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_existing_servers_capabilities_are_kept_and_machines_add_theirs() {
    let (server, _events) = mixed();
    let client = connect(server, modern()).await;
    let info = client.peer_info().expect("the server was discovered");
    let capabilities = &info.capabilities;
    assert_eq!(
        capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.prompts.as_ref().unwrap().list_changed,
        Some(true)
    );
    assert_eq!(
        capabilities.resources.as_ref().unwrap().subscribe,
        Some(true)
    );
    assert!(capabilities.completions.is_some());
    assert!(capabilities.logging.is_some());
    assert_eq!(info.server_info.as_ref().unwrap().name, "mixed");
    client.cancel().await.unwrap();

    // Without an existing server, only what the machines serve is advertised.
    for (server, advertised) in [
        (
            McpServer::builder("tools")
                .keys(keys())
                .tool(translate)
                .build(),
            [true, false, false],
        ),
        (
            McpServer::builder("prompts")
                .keys(keys())
                .prompt(haiku_prompt)
                .build(),
            [false, true, false],
        ),
        (
            McpServer::builder("resources")
                .keys(keys())
                .resource(notes)
                .build(),
            [false, false, true],
        ),
    ] {
        let client = connect(server.unwrap(), modern()).await;
        let capabilities = client.peer_info().unwrap().capabilities.clone();
        let seen = [
            capabilities.tools.is_some(),
            capabilities.prompts.is_some(),
            capabilities.resources.is_some(),
        ];
        assert_eq!(seen, advertised, "{capabilities:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn without_an_existing_server_what_is_not_advertised_is_method_not_found() {
    let server = McpServer::builder("resources-only")
        .keys(keys())
        .resource(notes)
        .build()
        .unwrap();
    let client = connect(server, modern()).await;

    // Machines have fixed URIs, so their server has no templates: an empty list.
    let templates = client.list_resource_templates(None).await.unwrap();
    assert!(templates.resource_templates.is_empty());
    assert_eq!(
        stamped_name(&templates.meta).as_deref(),
        Some("resources-only")
    );

    // No prompts are served here: prompts/get is -32601, not an unknown prompt.
    let refused = client
        .get_prompt(GetPromptRequestParams::new("haiku"))
        .await
        .map(|_| ())
        .map_err(mcp_error)
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::METHOD_NOT_FOUND);
    client.cancel().await.unwrap();
}

#[test]
fn get_tool_finds_machine_tools_and_the_existing_servers() {
    let (server, _events) = mixed();
    let machine_tool = server.get_tool("translate").expect("the machine tool");
    assert_eq!(
        input_kinds(&machine_tool.meta),
        Some(json!(["elicitation.form"]))
    );
    assert!(machine_tool.input_schema.contains_key("properties"));
    let define = server
        .get_tool("define")
        .expect("the existing server's tool");
    assert_eq!(define.description.as_deref(), Some("An existing tool."));
    assert!(server.get_tool("nope").is_none());
}

#[tokio::test]
async fn subscriptions_listen_reaches_the_existing_server() {
    let (server, mut events) = mixed();
    let client = connect(server, modern()).await;
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = client.listen(filter).await.expect("the listen is accepted");
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    let notification = tokio::time::timeout(HANG_GUARD, subscription.next())
        .await
        .expect("the existing server's notification arrives")
        .unwrap();
    assert!(
        matches!(
            notification,
            Some(ServerNotification::ToolListChangedNotification(_))
        ),
        "{notification:?}"
    );
    assert_eq!(events.recv().await.as_deref(), Some("listen"));
    drop(subscription);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_legacy_session_passes_logging_subscriptions_and_notifications_through() {
    let (server, mut events) = mixed();
    let client = connect(server, ClientLifecycleMode::Initialize).await;

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    client
        .subscribe(SubscribeRequestParams::new("file:///readme"))
        .await
        .unwrap();
    client
        .unsubscribe(UnsubscribeRequestParams::new("file:///readme"))
        .await
        .unwrap();
    client.notify_roots_list_changed().await.unwrap();
    client
        .send_notification(ClientNotification::CancelledNotification(
            CancelledNotification::new(CancelledNotificationParam::new(
                Some(NumberOrString::Number(999)),
                Some("gave up".into()),
            )),
        ))
        .await
        .unwrap();
    client
        .notify_progress(ProgressNotificationParam::new(
            ProgressToken(NumberOrString::String("upload".into())),
            0.5,
        ))
        .await
        .unwrap();
    client
        .send_notification(ClientNotification::CustomNotification(
            CustomNotification::new("notifications/example/ping", None),
        ))
        .await
        .unwrap();

    let expected: BTreeSet<String> = [
        "initialized",
        "set_level Warning",
        "subscribe file:///readme",
        "unsubscribe file:///readme",
        "roots_list_changed",
        "cancelled gave up",
        "progress 0.5",
        "custom notifications/example/ping",
    ]
    .map(String::from)
    .into();
    let mut seen = BTreeSet::new();
    // Notifications are handled concurrently: collect until all arrived, in any order.
    while seen.len() < expected.len() {
        let event = tokio::time::timeout(HANG_GUARD, events.recv())
            .await
            .unwrap_or_else(|_| panic!("the existing server saw only {seen:?}"))
            .expect("the server is running");
        seen.insert(event);
    }
    assert_eq!(seen, expected);
    client.cancel().await.unwrap();
}
