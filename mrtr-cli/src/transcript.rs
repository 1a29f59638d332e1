//! The protocol transcript (`--verbose`, and the demo): every round's requests, the
//! answers, the `requestState` size and the task statuses, on stdout.

use std::io::Write;

use mrtr_runtime::client::{PendingCall, RoundObserver};
use rmcp::model::{ElicitRequest, ElicitRequestParams, InputRequest, InputResponses};
use serde_json::Value;

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

pub(crate) fn compact(value: &Value) -> String {
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
                // The typed schema keeps the server's field order.
                let fields = mrtr_runtime::form::RequestedForm::from_schema(requested_schema)
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
