//! One connection and one action: checks before the call (what the tool may ask for, its
//! missing arguments), the call itself with Ctrl-C cancelling it (MRTR: stop; a task:
//! `tasks/cancel`; a legacy session: `notifications/cancelled`), and what is printed.

use std::sync::{Arc, Mutex, PoisonError};

use mrtr_runtime::client::{
    CallOutput, CallTarget, ClientError, DriverConfig, InputHandler, InputKind, InputKinds,
    MrtrClient, RoundObserver,
};
use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, CancelTaskParams, CancelledNotification,
        CancelledNotificationParam, ClientNotification, ClientRequest, GetPromptRequest,
        GetPromptRequestParams, GetTaskParams, JsonObject, ReadResourceRequest,
        ReadResourceRequestParams, ServerResult, Task,
    },
    service::{ClientLifecycleMode, PeerRequestOptions, RoleClient},
    transport::IntoTransport,
};
use serde_json::Value;

use crate::{
    Action, Exit, Signals, TerminalAnswers, Transcript, args, describe_error, exit::flag_for,
    render,
};

/// How a [`Session`] talks and prints.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Print the protocol transcript (every round, answer and task status) on stdout.
    pub verbose: bool,
    /// Open a pre-2026 session with `initialize` (2025-11-25) for servers that predate MRTR.
    pub legacy: bool,
    /// The round loop's limits.
    pub config: DriverConfig,
}

/// A connected terminal client: runs one [`Action`] and says how it ended ([`Exit`]).
///
/// ```no_run
/// # async fn demo() -> Result<(), mrtr_runtime::client::ClientError> {
/// use mrtr_cli::{Action, AnswerOptions, AnswerScript, Session, SessionOptions, TerminalAnswers};
///
/// let script = AnswerScript::from_json(r#"{"inOrder": ["decline"]}"#).unwrap();
/// let answers = TerminalAnswers::scripted(script, AnswerOptions::default());
/// let transport = rmcp::transport::StreamableHttpClientTransport::from_uri("http://127.0.0.1:8080/mcp");
/// let session = Session::connect(transport, answers, SessionOptions::default()).await?;
/// let exit = session.run(&Action::CallTool { name: "deploy".into(), arguments: None }).await;
/// assert_eq!(exit.code(), 2); // the question was declined
/// session.close().await;
/// # Ok(()) }
/// ```
pub struct Session {
    client: MrtrClient,
    signals: Signals,
    offered: InputKinds,
    interactive: bool,
    legacy: bool,
    verbose: bool,
    task: Arc<Mutex<Option<String>>>,
}

impl Session {
    /// Connects over `transport` answering with `answers` (which decide the declared
    /// capabilities); asks for missing arguments when `answers` is interactive.
    pub async fn connect<T, E, A>(
        transport: T,
        answers: TerminalAnswers,
        options: SessionOptions,
    ) -> Result<Self, ClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let signals = answers.signals();
        let interactive = answers.is_interactive();
        let mut session = Self::connect_with(transport, answers, signals, options).await?;
        session.interactive = interactive;
        Ok(session)
    }

    /// Like [`connect`](Self::connect) with any handler (for example one wrapping
    /// [`TerminalAnswers`]) and the [`Signals`] its prompts set.
    pub async fn connect_with<T, E, A>(
        transport: T,
        handler: impl InputHandler,
        signals: Signals,
        options: SessionOptions,
    ) -> Result<Self, ClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let offered = handler.supported();
        let lifecycle = if options.legacy {
            ClientLifecycleMode::Initialize
        } else {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            }
        };
        let task = Arc::new(Mutex::new(None));
        let mut client = MrtrClient::connect_with_lifecycle(transport, handler, lifecycle)
            .await?
            .with_config(options.config)
            .with_observer(TaskWatch {
                task: task.clone(),
                quiet: !options.verbose,
            });
        if options.verbose {
            client = client.with_observer(Transcript);
        }
        Ok(Self {
            client,
            signals,
            offered,
            interactive: false,
            legacy: options.legacy,
            verbose: options.verbose,
            task,
        })
    }

    /// The MRTR client underneath.
    pub fn client(&self) -> &MrtrClient {
        &self.client
    }

    /// Closes the connection.
    pub async fn close(self) {
        self.client.close().await;
    }

    /// Runs `action`: prints the listing or the result on stdout and any failure on stderr
    /// (`mrtr: ...`), and returns how it ended.
    pub async fn run(&self, action: &Action) -> Exit {
        let target = match action {
            Action::List => return self.list(true, true, true).await,
            Action::ListTools => return self.list(true, false, false).await,
            Action::ListPrompts => return self.list(false, true, false).await,
            Action::ListResources => return self.list(false, false, true).await,
            Action::CallTool { name, arguments } => CallTarget::tool(name, arguments.clone()),
            Action::GetPrompt { name, arguments } => CallTarget::prompt(name, arguments.clone()),
            Action::ReadResource { uri } => CallTarget::resource(uri),
        };
        let target = match self.prepare(target).await {
            Ok(target) => target,
            Err((exit, message)) => {
                eprintln!("mrtr: {message}");
                return exit;
            }
        };
        let outcome = tokio::select! {
            outcome = self.call(&target) => Some(outcome),
            () = self.signals.interrupted() => None,
            () = ctrl_c(&self.signals) => None,
        };
        match outcome {
            // Cancelling asks the server; a server that does not answer, or a second
            // Ctrl-C, must not keep the user waiting.
            None => tokio::select! {
                exit = tokio::time::timeout(CANCEL_WAIT, self.cancel()) => {
                    exit.unwrap_or_else(|_| {
                        eprintln!(
                            "mrtr: cancelled; the server did not confirm within {} s",
                            CANCEL_WAIT.as_secs()
                        );
                        Exit::Declined
                    })
                }
                _ = tokio::signal::ctrl_c() => {
                    eprintln!("mrtr: cancelled (not waiting for the server)");
                    Exit::Declined
                }
            },
            Some(Ok(output)) => {
                if self.verbose {
                    println!("── complete");
                }
                let (text, is_error) = render::render_output(&output);
                if !text.is_empty() {
                    println!("{text}");
                }
                if self.signals.declined() {
                    Exit::Declined
                } else if is_error {
                    eprintln!("mrtr: the {} reported an error", noun(&target));
                    Exit::ToolError
                } else {
                    Exit::Done
                }
            }
            Some(Err(error)) => {
                eprintln!("mrtr: {}", describe_error(&error));
                match Exit::of_error(&error) {
                    Exit::ToolError if self.signals.declined() => Exit::Declined,
                    exit => exit,
                }
            }
        }
    }

    /// The call: the MRTR driver, or on a legacy session one request the server answers
    /// after asking its questions mid-call.
    async fn call(&self, target: &CallTarget) -> Result<CallOutput, ClientError> {
        if !self.legacy {
            return self.client.call(target.clone()).await;
        }
        let request = legacy_request(target);
        let peer = self.client.peer();
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|error| ClientError::Protocol(error.into()))?;
        let id = handle.id.clone();
        // Dropped by Ctrl-C: tell the server the request is abandoned.
        let guard = LegacyCancel {
            peer: peer.clone(),
            id: Some(id),
        };
        let result = handle.await_response().await;
        guard.disarm();
        match result.map_err(|error| match error {
            rmcp::service::ServiceError::McpError(data) => ClientError::Server(data),
            other => ClientError::Protocol(other.into()),
        })? {
            ServerResult::CallToolResult(result) => Ok(CallOutput::Tool(result)),
            ServerResult::GetPromptResult(result) => Ok(CallOutput::Prompt(result)),
            ServerResult::ReadResourceResult(result) => Ok(CallOutput::Resource(result)),
            _ => Err(ClientError::MalformedResult {
                source: format!("not a {} result", target.method()).into(),
            }),
        }
    }

    /// Ctrl-C: stops the call. A running task is cancelled on the server (`tasks/cancel`)
    /// and followed until the server reports it cancelled; a legacy request gets
    /// `notifications/cancelled`; an MRTR call simply sends nothing more.
    async fn cancel(&self) -> Exit {
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(task) = task else {
            let what = if self.legacy {
                "the server was told to stop (notifications/cancelled)"
            } else {
                "nothing more was sent to the server"
            };
            CANCELLING.flush().await;
            eprintln!("mrtr: cancelled; {what}");
            return Exit::Declined;
        };
        let peer = self.client.peer();
        if let Err(error) = peer.cancel_task(CancelTaskParams::new(task.clone())).await {
            eprintln!(
                "mrtr: cancelled here, but the server did not take tasks/cancel for task {task}: {}",
                describe_error(&ClientError::Protocol(error.into()))
            );
            return Exit::Declined;
        }
        // Cancellation is cooperative: ask until the server reports the task ended.
        let mut status = String::from("cancel requested");
        for _ in 0..50 {
            match peer.get_task(GetTaskParams::new(task.clone())).await {
                Ok(result) => {
                    status = status_word(&result.task.task);
                    if result.task.task.status.is_terminal() {
                        break;
                    }
                }
                Err(_) => break,
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        eprintln!("mrtr: cancelled; the server reports task {task}: {status}");
        Exit::Declined
    }

    /// Before the call: refuses a tool, prompt or resource that may ask for a kind of input
    /// this client does not offer (naming the flag that offers it), and asks for the
    /// required arguments missing from `--args` when there is a terminal.
    async fn prepare(&self, target: CallTarget) -> Result<CallTarget, (Exit, String)> {
        let Some(entry) = self.listed(&target).await else {
            return Ok(target);
        };
        let missing: Vec<InputKind> = InputKind::ALL
            .into_iter()
            .filter(|kind| {
                render::input_kinds(&entry).contains(&kind.as_str().to_owned())
                    && !self.offered.contains(*kind)
            })
            .collect();
        if let Some(kind) = missing.first() {
            let capability = kind.as_str().split('.').next().unwrap_or_default();
            let flag = flag_for(capability).unwrap_or("a client that offers it");
            return Err((
                Exit::Usage,
                format!(
                    "`{}` may ask for {kind}, which this run does not offer; nothing was sent. Pass {flag}.",
                    target.name()
                ),
            ));
        }
        match target {
            CallTarget::Tool { name, arguments } => {
                let arguments = self.complete(&entry, arguments, args::from_schema)?;
                Ok(CallTarget::Tool { name, arguments })
            }
            CallTarget::Prompt { name, arguments } => {
                let arguments = self.complete(&entry, arguments, args::from_prompt)?;
                Ok(CallTarget::Prompt { name, arguments })
            }
            other => Ok(other),
        }
    }

    /// The listing entry of `target` (as JSON), if the server lists it.
    async fn listed(&self, target: &CallTarget) -> Option<Value> {
        let peer = self.client.peer();
        let entries: Vec<Value> = match target {
            CallTarget::Tool { .. } => to_values(peer.list_all_tools().await.ok()?),
            CallTarget::Prompt { .. } => to_values(peer.list_all_prompts().await.ok()?),
            CallTarget::Resource { .. } => to_values(peer.list_all_resources().await.ok()?),
        };
        let key = match target {
            CallTarget::Resource { .. } => "uri",
            _ => "name",
        };
        entries
            .into_iter()
            .find(|entry| entry[key].as_str() == Some(target.name()))
    }

    /// Asks for the required arguments `arguments` lacks, when there is a terminal.
    fn complete(
        &self,
        entry: &Value,
        arguments: Option<JsonObject>,
        spec: fn(&Value) -> Vec<args::Argument>,
    ) -> Result<Option<JsonObject>, (Exit, String)> {
        let wanted: Vec<args::Argument> = spec(entry)
            .into_iter()
            .filter(|arg| arg.required)
            .filter(|arg| {
                !arguments
                    .as_ref()
                    .is_some_and(|a| a.contains_key(&arg.name))
            })
            .collect();
        if wanted.is_empty() || !self.interactive {
            return Ok(arguments);
        }
        let mut arguments = arguments.unwrap_or_default();
        for arg in wanted {
            match args::ask(&arg) {
                Ok(value) => {
                    arguments.insert(arg.name.clone(), value);
                }
                Err(crate::prompt::Stop::Failed(reason)) => return Err((Exit::Failed, reason)),
                Err(_) => {
                    return Err((
                        Exit::Declined,
                        "cancelled before the call; nothing was sent".into(),
                    ));
                }
            }
        }
        Ok(Some(arguments))
    }

    async fn list(&self, tools: bool, prompts: bool, resources: bool) -> Exit {
        let peer = self.client.peer();
        let all = tools && prompts && resources;
        let mut sections = Vec::new();
        if tools {
            match peer.list_all_tools().await {
                Ok(list) => sections.push(titled(all, "tools", render::tools(&to_values(list)))),
                Err(error) => return listing_failed("tools", error),
            }
        }
        if prompts {
            match peer.list_all_prompts().await {
                Ok(list) => {
                    sections.push(titled(all, "prompts", render::prompts(&to_values(list))))
                }
                Err(error) if all => drop(error),
                Err(error) => return listing_failed("prompts", error),
            }
        }
        if resources {
            let templates = peer
                .list_all_resource_templates()
                .await
                .map(to_values)
                .unwrap_or_default();
            match peer.list_all_resources().await {
                Ok(list) => sections.push(titled(
                    all,
                    "resources",
                    render::resources(&to_values(list), &templates),
                )),
                Err(error) if all => drop(error),
                Err(error) => return listing_failed("resources", error),
            }
        }
        println!("{}", sections.join("\n\n"));
        Exit::Done
    }
}

fn titled(all: bool, title: &str, body: String) -> String {
    if all {
        format!("{title}:\n{body}")
    } else {
        body
    }
}

fn listing_failed(what: &str, error: rmcp::service::ServiceError) -> Exit {
    let error = ClientError::Protocol(error.into());
    eprintln!("mrtr: could not list {what}: {}", describe_error(&error));
    Exit::Failed
}

fn to_values<T: serde::Serialize>(items: Vec<T>) -> Vec<Value> {
    items
        .iter()
        .filter_map(|item| serde_json::to_value(item).ok())
        .collect()
}

fn noun(target: &CallTarget) -> &'static str {
    match target {
        CallTarget::Tool { .. } => "tool",
        CallTarget::Prompt { .. } => "prompt",
        CallTarget::Resource { .. } => "resource",
    }
}

fn status_word(task: &Task) -> String {
    serde_json::to_value(task.status)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}

/// How long a cancelled call waits for the server to confirm (a task's `tasks/cancel`).
const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Resolves on SIGINT (Ctrl-C outside a prompt), marking the call interrupted. A prompt
/// reads Ctrl-C as a key instead and interrupts through the [`Signals`] itself.
async fn ctrl_c(signals: &Signals) {
    match tokio::signal::ctrl_c().await {
        Ok(()) => signals.interrupt(),
        // No signal handling here: only a prompt's Ctrl-C can interrupt.
        Err(_) => std::future::pending().await,
    }
}

/// The single request of a legacy call.
fn legacy_request(target: &CallTarget) -> ClientRequest {
    match target {
        CallTarget::Tool { name, arguments } => {
            let mut params = CallToolRequestParams::new(name.clone());
            params.arguments = arguments.clone();
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        }
        CallTarget::Prompt { name, arguments } => {
            let mut params = GetPromptRequestParams::new(name.clone());
            params.arguments = arguments.clone();
            ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
        }
        CallTarget::Resource { uri } => ClientRequest::ReadResourceRequest(
            ReadResourceRequest::new(ReadResourceRequestParams::new(uri.clone())),
        ),
    }
}

/// Sends `notifications/cancelled` for a legacy request whose caller stopped waiting (the
/// call future was dropped by Ctrl-C).
struct LegacyCancel {
    peer: rmcp::service::Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl LegacyCancel {
    fn disarm(mut self) {
        self.id = None;
    }
}

impl Drop for LegacyCancel {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("cancelled at the terminal (Ctrl-C)".into()),
        ));
        CANCELLING.with_sender(async move {
            let _ = peer
                .send_notification(ClientNotification::CancelledNotification(notification))
                .await;
        });
    }
}

/// Cancellation notifications still being sent; [`Session::cancel`] waits for them.
static CANCELLING: Pending = Pending(Mutex::new(Vec::new()));

struct Pending(Mutex<Vec<tokio::task::JoinHandle<()>>>);

impl Pending {
    fn with_sender(&self, work: impl Future<Output = ()> + Send + 'static) {
        let handle = tokio::spawn(work);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(handle);
    }

    async fn flush(&self) {
        let handles: Vec<_> =
            std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        for handle in handles {
            let _ = handle.await;
        }
    }
}

/// Follows the task a call became: remembers its id for Ctrl-C and, unless verbose, says
/// once that the call continues in the background.
struct TaskWatch {
    task: Arc<Mutex<Option<String>>>,
    quiet: bool,
}

impl RoundObserver for TaskWatch {
    fn task_status(&self, task: &Task) {
        let mut current = self.task.lock().unwrap_or_else(PoisonError::into_inner);
        if task.status.is_terminal() {
            *current = None;
            return;
        }
        if current.as_deref() != Some(task.task_id.as_str()) {
            if self.quiet {
                eprintln!(
                    "The server continues this call in the background (task {}); Ctrl-C cancels it.",
                    task.task_id
                );
            }
            *current = Some(task.task_id.clone());
        }
    }
}
