//! The rmcp `ServerHandler` face of [`McpServer`]: which requests a machine answers, and
//! which go to the fallback handler (stamped either way).

use std::future::Future;
use std::sync::Arc;

use futures::future::Either;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::model::{InputRequiredResult, InputResponses, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::errors;
use super::listing::Listed;
use super::mcp_server::McpServer;
use super::registry::ToolMachine;
use super::registry::merged_page;
use super::stamp::WithServerInfo;
use crate::machine::Machine;

/// The halves of `call_tool`, `get_prompt` and `read_resource` (see `call_tool`).
impl<F: ServerHandler> McpServer<F> {
    // The three below own the server (one reference count): their futures borrow nothing,
    // so the native path holds one without a wrapper that would keep the request's parts
    // a second time (an `async fn`'s future keeps each parameter twice).

    /// [`call_tool`](ServerHandler::call_tool), owning the server.
    pub(super) fn calling_tool(
        self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static
    where
        F: Send + Sync + 'static,
    {
        match self.inner.tools.get(&request.name).cloned() {
            None => Either::Left(Box::pin(async move {
                self.call_fallback_tool(request, context).await
            })),
            Some(machine) => Either::Right(self.call_machine_tool(machine, request, context)),
        }
    }

    /// [`get_prompt`](ServerHandler::get_prompt), owning the server.
    pub(super) fn getting_prompt(
        self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send + 'static
    where
        F: Send + Sync + 'static,
    {
        match self.inner.prompts.get(&request.name).cloned() {
            None => Either::Left(Box::pin(async move {
                self.get_fallback_prompt(request, context).await
            })),
            Some(machine) => {
                let GetPromptRequestParams {
                    arguments,
                    input_responses,
                    request_state,
                    ..
                } = request;
                let round = (arguments, input_responses, request_state);
                Either::Right(self.running(machine, context, round))
            }
        }
    }

    /// [`read_resource`](ServerHandler::read_resource), owning the server.
    pub(super) fn reading_resource(
        self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send + 'static
    where
        F: Send + Sync + 'static,
    {
        match self.inner.resources.get(&request.uri).cloned() {
            None => Either::Left(Box::pin(async move {
                self.read_fallback_resource(request, context).await
            })),
            Some(machine) => {
                let ReadResourceRequestParams {
                    input_responses,
                    request_state,
                    ..
                } = request;
                Either::Right(self.running(
                    machine,
                    context,
                    (None, input_responses, request_state),
                ))
            }
        }
    }

    /// A prompt's or resource's round (its arguments, answers and state), owning the server.
    /// An `async` block, not an `async fn`, which would keep each parameter twice.
    #[allow(clippy::manual_async_fn)]
    fn running<O, R>(
        self,
        machine: Arc<dyn Machine<Output = O>>,
        context: RequestContext<RoleServer>,
        (arguments, input_responses, request_state): (
            Option<JsonObject>,
            Option<InputResponses>,
            Option<String>,
        ),
    ) -> impl Future<Output = Result<R, ErrorData>> + Send + 'static
    where
        F: Send + Sync + 'static,
        O: Send + Sync + 'static + WithServerInfo + Serialize + DeserializeOwned,
        R: From<O> + From<InputRequiredResult> + Send + 'static,
    {
        async move {
            self.run_machine(
                machine,
                &context,
                arguments.as_ref(),
                input_responses,
                request_state,
            )
            .await
        }
    }

    /// A tool this server does not have: the fallback's answer, stamped.
    async fn call_fallback_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        let answer = self.inner.fallback.call_tool(request, context).await;
        let advertised = self.get_info().capabilities.tools.is_some();
        self.fallback_answer(
            advertised,
            answer,
            || errors::unknown("tool", &name),
            |server, answer| match answer {
                CallToolResponse::Complete(result) => server.stamped(result).into(),
                other => other,
            },
        )
    }

    /// A tool of this server: its rounds, and a task for the rest when it is a task tool
    /// and the client declared tasks.
    fn call_machine_tool(
        self,
        machine: ToolMachine,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static
    where
        F: Send + Sync + 'static,
    {
        let CallToolRequestParams {
            arguments,
            input_responses,
            request_state,
            ..
        } = request;
        async move {
            if let Some(support) = machine.descriptor().task {
                if let Some(tasks) = self.tasks_for(&context) {
                    // Boxed so that the common path's future stays small.
                    return Box::pin(self.run_task_tool(
                        tasks,
                        machine,
                        &context,
                        arguments,
                        input_responses,
                        request_state,
                        support.after_rounds,
                    ))
                    .await;
                }
                if support.required {
                    return Err(ErrorData::missing_required_client_capability(
                        rmcp::model::ClientCapabilities::builder()
                            .enable_tasks()
                            .build(),
                    ));
                }
            }
            self.run_machine(
                machine,
                &context,
                arguments.as_ref(),
                input_responses,
                request_state,
            )
            .await
        }
    }

    /// A prompt this server does not have: the fallback's answer, stamped.
    async fn get_fallback_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name.clone();
        let answer = self.inner.fallback.get_prompt(request, context).await;
        let advertised = self.get_info().capabilities.prompts.is_some();
        self.fallback_answer(
            advertised,
            answer,
            || errors::unknown("prompt", &name),
            |server, answer| match answer {
                GetPromptResponse::Complete(result) => server.stamped(result).into(),
                other => other,
            },
        )
    }

    /// A resource this server does not have: the fallback's answer, stamped.
    async fn read_fallback_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let answer = self.inner.fallback.read_resource(request, context).await;
        let advertised = self.get_info().capabilities.resources.is_some();
        self.fallback_answer(
            advertised,
            answer,
            || errors::resource_not_found(&uri),
            |server, answer| match answer {
                ReadResourceResponse::Complete(result) => server.stamped(result).into(),
                other => other,
            },
        )
    }
}

impl<F: ServerHandler> ServerHandler for McpServer<F> {
    fn get_info(&self) -> ServerConfig {
        let mut info = self.inner.fallback.get_info();
        info.server_info = self.inner.info.clone();
        let capabilities: &mut ServerCapabilities = &mut info.capabilities;
        if !self.inner.tools.is_empty() && capabilities.tools.is_none() {
            capabilities.tools = Some(Default::default());
        }
        if !self.inner.prompts.is_empty() && capabilities.prompts.is_none() {
            capabilities.prompts = Some(Default::default());
        }
        if !self.inner.resources.is_empty() && capabilities.resources.is_none() {
            capabilities.resources = Some(Default::default());
        }
        if self.inner.tasks.is_some() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .entry(rmcp::model::TASKS_EXTENSION_ID.to_owned())
                .or_default();
        }
        info
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let Some(tasks) = &self.inner.tasks else {
            return self.inner.fallback.get_task(request, context).await;
        };
        let principal = self.principal(&context);
        tasks.get(&request.task_id, &principal).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(tasks) = &self.inner.tasks else {
            return self.inner.fallback.update_task(request, context).await;
        };
        let principal = self.principal(&context);
        tasks
            .update(&request.task_id, &principal, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some(tasks) = &self.inner.tasks else {
            return self.inner.fallback.cancel_task(request, context).await;
        };
        let principal = self.principal(&context);
        tasks.cancel(&request.task_id, &principal).await
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        let versions = self.inner.fallback.supported_protocol_versions();
        if self.inner.legacy.enabled {
            return versions;
        }
        let modern = rmcp::model::ProtocolVersion::V_2026_07_28;
        let served: Vec<_> = versions
            .iter()
            .filter(|version| version.as_str() >= modern.as_str())
            .cloned()
            .collect();
        if served.is_empty() {
            std::borrow::Cow::Owned(vec![modern])
        } else {
            std::borrow::Cow::Owned(served)
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let fallback = &self.inner.fallback;
        let fallback_page = if fallback.get_info().capabilities.tools.is_some() {
            let page = fallback.list_tools(request.clone(), context).await?;
            Some((page.tools, page.next_cursor))
        } else {
            None
        };
        let (items, next_cursor) = merged_page(&self.inner.tools, request.as_ref(), fallback_page);
        let mut result = ListToolsResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(self.stamped(result))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        match self.inner.tools.listing(name) {
            Some(listing) => Tool::from_listing(listing),
            None => self.inner.fallback.get_tool(name),
        }
    }

    // Not `async fn`s: an `async fn`'s future keeps each parameter twice (as the parameter
    // and as the local it is moved into), and rmcp copies this future into every request's
    // task. The machine path keeps the request's parts once; the fallback path is boxed.
    // Each hands a clone of the server (a reference count) to its owning half above.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        self.clone().calling_tool(request, context)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let fallback = &self.inner.fallback;
        let fallback_page = if fallback.get_info().capabilities.prompts.is_some() {
            let page = fallback.list_prompts(request.clone(), context).await?;
            Some((page.prompts, page.next_cursor))
        } else {
            None
        };
        let (items, next_cursor) =
            merged_page(&self.inner.prompts, request.as_ref(), fallback_page);
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(self.stamped(result))
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send + '_ {
        self.clone().getting_prompt(request, context)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let fallback = &self.inner.fallback;
        let fallback_page = if fallback.get_info().capabilities.resources.is_some() {
            let page = fallback.list_resources(request.clone(), context).await?;
            Some((page.resources, page.next_cursor))
        } else {
            None
        };
        let (items, next_cursor) =
            merged_page(&self.inner.resources, request.as_ref(), fallback_page);
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(self.stamped(result))
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send + '_ {
        self.clone().reading_resource(request, context)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        // Machines have fixed URIs; answer an empty list when only they provide resources.
        if self
            .inner
            .fallback
            .get_info()
            .capabilities
            .resources
            .is_none()
            && !self.inner.resources.is_empty()
        {
            return Ok(self.stamped(ListResourceTemplatesResult::with_all_items(Vec::new())));
        }
        self.inner
            .fallback
            .list_resource_templates(request, context)
            .await
            .map(|result| self.stamped(result))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.inner
            .fallback
            .complete(request, context)
            .await
            .map(|result| self.stamped(result))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.inner.fallback.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        self.inner.fallback.listen(context).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        // rmcp routes a known method whose params do not parse (e.g. a non-string
        // `requestState`) here; answer it as the invalid-params error it is.
        if let Some(error) = errors::unparsable_params(&request.method, request.params.as_ref()) {
            return Err(error);
        }
        // The same for the tasks extension's methods, when this server serves tasks
        // (without them, `tasks/*` is a method this server does not have, as rmcp says).
        if self.inner.tasks.is_some()
            && let Some(error) =
                errors::unparsable_task_params(&request.method, request.params.as_ref())
        {
            return Err(error);
        }
        self.inner
            .fallback
            .on_custom_request(request, context)
            .await
    }

    // Logging is SEP-2577-deprecated; legacy sessions still set their level this way.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.fallback.set_level(request, context).await
    }

    // Legacy sessions subscribe this way (rmcp refuses it on 2026-07-28 requests).
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[allow(deprecated)]
        self.inner.fallback.subscribe(request, context).await
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        #[allow(deprecated)]
        self.inner.fallback.unsubscribe(request, context).await
    }

    /// A session's `initialize`: negotiated as rmcp does, without the tasks extension for
    /// revisions before 2026-07-28 (their clients never get tasks: a task is created only for
    /// a stateless request that declares the extension).
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if result.protocol_version.as_str() < rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
            && let Some(extensions) = result.capabilities.extensions.as_mut()
        {
            extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
            if extensions.is_empty() {
                result.capabilities.extensions = None;
            }
        }
        Ok(result)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.inner.fallback.on_initialized(context).await
    }

    async fn on_roots_list_changed(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.inner.fallback.on_roots_list_changed(context).await
    }

    async fn on_cancelled(
        &self,
        notification: rmcp::model::CancelledNotificationParam,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        self.inner
            .fallback
            .on_cancelled(notification, context)
            .await
    }

    async fn on_progress(
        &self,
        notification: rmcp::model::ProgressNotificationParam,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        self.inner.fallback.on_progress(notification, context).await
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        self.inner
            .fallback
            .on_custom_notification(notification, context)
            .await
    }
}
