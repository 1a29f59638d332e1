//! Following a call the server turned into a task (tasks extension): `tasks/get` polled
//! with backoff, its questions answered once each and sent back with `tasks/update`.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientRequest, CreateTaskResult, GetTaskParams, GetTaskRequest, GetTaskResult,
    InputResponses, ServerResult, TaskPayload, UpdateTaskParams, UpdateTaskRequest,
};
use serde_json::Value;

use super::client::MrtrClient;
use crate::client::error::ClientError;
use crate::client::pending::{CallOutput, PendingCall};

impl MrtrClient {
    /// Follows a task to its end: polls `tasks/get`, answers its questions once each, and
    /// returns its result (a failed task is the JSON-RPC error it failed with).
    pub(super) async fn follow_task(
        &self,
        pending: &PendingCall,
        created: CreateTaskResult,
    ) -> Result<CallOutput, ClientError> {
        let task = created.task;
        let id = task.task_id.clone();
        for observer in &self.observers {
            observer.task_status(&task);
        }
        let floor = Duration::from_millis(task.poll_interval_ms.unwrap_or(500).clamp(10, 60_000));
        let mut pause = floor;
        let mut status = task.status;
        let mut answered = std::collections::BTreeSet::new();
        let mut asks = 0u32;
        loop {
            tokio::time::sleep(pause).await;
            let request =
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id.clone())));
            let detailed = match self
                .send_with_retries(pending, &InputResponses::new(), request)
                .await?
            {
                ServerResult::GetTaskResult(GetTaskResult { task, .. }) => task,
                other => {
                    return Err(ClientError::MalformedResult {
                        source: format!("tasks/get answered something else: {other:?}").into(),
                    });
                }
            };
            for observer in &self.observers {
                observer.task_status(&detailed.task);
            }
            // Slow down while nothing changes; poll at the server's pace again once it does.
            pause = if detailed.task.status == status {
                (pause.saturating_mul(3) / 2).min(Duration::from_secs(5))
            } else {
                floor
            };
            status = detailed.task.status;
            match detailed.payload {
                TaskPayload::Completed { result } => {
                    let result: CallToolResult = serde_json::from_value(Value::Object(result))
                        .map_err(|error| ClientError::MalformedResult {
                            source: error.into(),
                        })?;
                    return Ok(CallOutput::Tool(result));
                }
                TaskPayload::Failed { error } => {
                    let error: rmcp::ErrorData = serde_json::from_value(Value::Object(error))
                        .map_err(|error| ClientError::MalformedResult {
                            source: error.into(),
                        })?;
                    return Err(ClientError::Server(error));
                }
                TaskPayload::Cancelled => return Err(ClientError::TaskCancelled { task_id: id }),
                TaskPayload::InputRequired { input_requests } => {
                    // Keys are never reused within a task, so a key answered once is done
                    // even if a poll still shows it before the server applied the update.
                    let fresh: rmcp::model::InputRequests = input_requests
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if fresh.is_empty() {
                        continue;
                    }
                    asks += 1;
                    let ask = PendingCall {
                        target: pending.target.clone(),
                        round: pending.round + asks,
                        input_requests: fresh,
                        request_state: None,
                        meta: None,
                    };
                    for observer in &self.observers {
                        observer.input_required(&ask);
                    }
                    let responses = self.answer(&ask).await?;
                    for observer in &self.observers {
                        observer.answered(&ask, &responses);
                    }
                    answered.extend(responses.keys().cloned());
                    let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
                        UpdateTaskParams::new(id.clone(), responses.clone()),
                    ));
                    self.send_with_retries(&ask, &responses, request).await?;
                    pause = floor;
                }
                _ => {}
            }
        }
    }
}
