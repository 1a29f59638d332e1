//! The terminal MRTR client behind the `mrtr` binary, callable as a library.
//!
//! Connect with [`connect`] (it prints a [`Transcript`] of every round) and run one
//! [`Action`] with [`run`]. Answers come from [`TerminalAnswers`]: terminal prompts
//! rendered field by field from each form's schema, or an [`AnswerScript`] when there is
//! no TTY.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mrtr_runtime::client::ClientError> {
//! use mrtr_cli::{Action, AnswerOptions, AnswerScript, TerminalAnswers};
//!
//! let script = AnswerScript::from_json(r#"{"inOrder": ["decline"]}"#).unwrap();
//! let answers = TerminalAnswers::scripted(script, AnswerOptions::default());
//! let transport = rmcp::transport::StreamableHttpClientTransport::from_uri("http://127.0.0.1:8080/mcp");
//! let client = mrtr_cli::connect(transport, answers).await?;
//! mrtr_cli::run(&client, &Action::CallTool { name: "deploy".into(), arguments: None }).await?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

mod answers;
pub mod form;

use std::io::Write;

pub use answers::{AnswerOptions, AnswerScript, SampleSource, ScriptedAnswer, TerminalAnswers};
use mrtr_runtime::client::{
    CallOutput, CallTarget, ClientError, MrtrClient, PendingCall, RoundObserver,
};
use rmcp::{
    model::{ElicitRequest, ElicitRequestParams, InputRequest, InputResponses, JsonObject},
    service::{ClientLifecycleMode, RoleClient},
    transport::IntoTransport,
};
use serde_json::Value;

/// What the terminal client does once connected.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// List tools, prompts and resources.
    List,
    /// `tools/call`.
    CallTool {
        /// Tool name.
        name: String,
        /// JSON object arguments.
        arguments: Option<JsonObject>,
    },
    /// `prompts/get`.
    GetPrompt {
        /// Prompt name.
        name: String,
        /// JSON object arguments.
        arguments: Option<JsonObject>,
    },
    /// `resources/read`.
    ReadResource {
        /// Resource URI.
        uri: String,
    },
}

/// Prints each round on stdout: the requests, the answers and the `requestState` size.
///
/// ```no_run
/// # async fn demo(transport: rmcp::transport::TokioChildProcess) -> Result<(), mrtr_runtime::client::ClientError> {
/// use mrtr_runtime::client::{InputHandlers, MrtrClient};
///
/// let client = MrtrClient::connect(transport, InputHandlers::new()).await?;
/// let client = client.with_observer(mrtr_cli::Transcript);
/// client.call_tool("deploy", None).await?; // prints every `input_required` round
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Transcript;

impl RoundObserver for Transcript {
    fn input_required(&self, pending: &PendingCall) {
        let mut out = std::io::stdout().lock();
        let state = match &pending.request_state {
            Some(state) => format!("requestState {} bytes", state.len()),
            None => "no requestState".into(),
        };
        let _ = writeln!(
            out,
            "── round {}: {} {} → input_required ({} request(s), {state})",
            pending.round,
            pending.target.method(),
            pending.target.name(),
            pending.input_requests.len()
        );
        for (key, request) in &pending.input_requests {
            let _ = writeln!(out, "   ? [{key}] {}", describe(request));
        }
        let _ = out.flush();
    }

    fn answered(&self, pending: &PendingCall, responses: &InputResponses) {
        let mut out = std::io::stdout().lock();
        for (key, response) in responses {
            let _ = writeln!(out, "   ! [{key}] {}", compact(response));
        }
        if let Some((task, _)) = current_task() {
            let _ = writeln!(
                out,
                "   → tasks/update {task} with {} answer(s)",
                responses.len()
            );
            let _ = out.flush();
            return;
        }
        let _ = writeln!(
            out,
            "   → retrying {} with {} answer(s){}",
            pending.target.method(),
            responses.len(),
            if pending.request_state.is_some() {
                " and the echoed requestState"
            } else {
                ""
            }
        );
        let _ = out.flush();
    }

    fn task_status(&self, task: &rmcp::model::Task) {
        // Printed when the status changes, not on every poll.
        let mut last = LAST_TASK_STATUS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let seen = (task.task_id.clone(), task.status);
        if last.as_ref() == Some(&seen) {
            return;
        }
        let fresh = last.as_ref().is_none_or(|(id, _)| *id != task.task_id);
        *last = (!task.status.is_terminal()).then_some(seen);
        drop(last);
        let mut out = std::io::stdout().lock();
        if fresh {
            let _ = writeln!(
                out,
                "── continues as task {} (the server works in the background; polling every {} ms)",
                task.task_id,
                task.poll_interval_ms.unwrap_or(500)
            );
        }
        let status = serde_json::to_value(task.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let message = task
            .status_message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        let _ = writeln!(out, "   task {}: {status}{message}", task.task_id);
        let _ = out.flush();
    }
}

/// The task the transcript follows and its last printed status (`None` once it ended).
static LAST_TASK_STATUS: std::sync::Mutex<Option<(String, rmcp::model::TaskStatus)>> =
    std::sync::Mutex::new(None);

fn current_task() -> Option<(String, rmcp::model::TaskStatus)> {
    LAST_TASK_STATUS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        format!("{}…", text.chars().take(160).collect::<String>())
    } else {
        text
    }
}

fn describe(request: &InputRequest) -> String {
    match request {
        InputRequest::Elicitation(ElicitRequest { params, .. }) => match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                let fields = mrtr_runtime::form::RequestedForm::parse(&schema)
                    .map(|form| {
                        form.fields()
                            .iter()
                            .map(|field| {
                                format!("{}{}", field.name, if field.required { "*" } else { "" })
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_else(|error| error.to_string());
                format!("form: {message} [{fields}]")
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                format!("url: {message} <{url}>")
            }
            _ => "elicitation of an unknown mode".into(),
        },
        InputRequest::CreateMessage(request) => format!(
            "sampling: {} message(s), maxTokens {}",
            request.params.messages.len(),
            request.params.max_tokens
        ),
        InputRequest::ListRoots(_) => "roots/list".into(),
        _ => "an unknown kind of input request".into(),
    }
}

/// Connects over `transport` on the 2026-07-28 lifecycle with `answers` (which decide the
/// declared capabilities) and a [`Transcript`] attached.
pub async fn connect<T, E, A>(
    transport: T,
    answers: TerminalAnswers,
) -> Result<MrtrClient, ClientError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    Ok(MrtrClient::connect(transport, answers)
        .await?
        .with_observer(Transcript))
}

/// Like [`connect`], opening a pre-2026 session with `initialize` (2025-11-25) for servers
/// that predate MRTR: such a server asks by sending requests mid-call, and `answers` answers
/// them the same way (there are no rounds to print).
///
/// ```no_run
/// # async fn demo(transport: mrtr_runtime::rmcp::transport::TokioChildProcess) {
/// let answers = mrtr_cli::TerminalAnswers::unattended(Default::default());
/// let client = mrtr_cli::connect_legacy(transport, answers).await.unwrap();
/// # }
/// ```
pub async fn connect_legacy<T, E, A>(
    transport: T,
    answers: TerminalAnswers,
) -> Result<MrtrClient, ClientError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    Ok(
        MrtrClient::connect_with_lifecycle(transport, answers, ClientLifecycleMode::Initialize)
            .await?
            .with_observer(Transcript),
    )
}

/// Runs `action` with `client`, answering every round, and prints the outcome on stdout.
pub async fn run(client: &MrtrClient, action: &Action) -> Result<(), ClientError> {
    let target = match action {
        Action::List => return list(client).await,
        Action::CallTool { name, arguments } => CallTarget::tool(name, arguments.clone()),
        Action::GetPrompt { name, arguments } => CallTarget::prompt(name, arguments.clone()),
        Action::ReadResource { uri } => CallTarget::resource(uri),
    };
    let output = client.call(target).await?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "── complete");
    let rendered = match &output {
        CallOutput::Tool(result) => {
            let mut lines: Vec<String> = result
                .content
                .iter()
                .map(|block| match block.as_text() {
                    Some(text) => text.text.clone(),
                    None => compact(&serde_json::to_value(block).unwrap_or_default()),
                })
                .collect();
            if let Some(structured) = &result.structured_content {
                lines.push(compact(structured));
            }
            if result.is_error == Some(true) {
                lines.insert(0, "(the tool reported an error)".into());
            }
            lines
        }
        CallOutput::Prompt(result) => result
            .messages
            .iter()
            .map(|message| compact(&serde_json::to_value(message).unwrap_or_default()))
            .collect(),
        CallOutput::Resource(result) => result
            .contents
            .iter()
            .map(|contents| compact(&serde_json::to_value(contents).unwrap_or_default()))
            .collect(),
        _ => vec![format!("{output:?}")],
    };
    for line in rendered {
        let _ = writeln!(out, "{line}");
    }
    Ok(())
}

async fn list(client: &MrtrClient) -> Result<(), ClientError> {
    let peer = client.peer();
    let protocol = |error: rmcp::service::ServiceError| ClientError::Protocol(error.into());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "tools:");
    for tool in peer.list_all_tools().await.map_err(protocol)? {
        let _ = writeln!(
            out,
            "  {} — {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }
    if let Ok(prompts) = peer.list_all_prompts().await {
        let _ = writeln!(out, "prompts:");
        for prompt in prompts {
            let _ = writeln!(
                out,
                "  {} — {}",
                prompt.name,
                prompt.description.as_deref().unwrap_or("")
            );
        }
    }
    if let Ok(resources) = peer.list_all_resources().await {
        let _ = writeln!(out, "resources:");
        for resource in resources {
            let _ = writeln!(out, "  {} — {}", resource.uri, resource.name);
        }
    }
    Ok(())
}
