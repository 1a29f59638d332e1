//! Tasks at work: creating them, running their machines in the background, parking them
//! on questions, and serving `tasks/get`, `tasks/update` and `tasks/cancel`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult,
    InputRequest, InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::settings::TaskSettings;
use super::store::{Admission, Created, StoredTask, TaskStore};
use crate::machine::{Answers, AppStates, Machine, Resume};
use crate::server::errors;
use crate::server::principal::is_unverified_credential;
use crate::server::ratelimit::log_limited;
use crate::server::round::{
    Asked, Caller, Era, Resumed, RoundInput, RoundLimits, RoundOutcome, Start, TaskHandOff,
    step_round,
};
use crate::server::stamp::Stamp;

/// A tool machine that may run as a task.
pub(crate) type ToolMachine = Arc<dyn Machine<Output = CallToolResult>>;

/// How many times a read-modify-write of one task is retried when another writer got there
/// first; each retry means another writer made progress, so this is never reached in
/// practice.
const MAX_WRITE_ATTEMPTS: usize = 32;

/// A task as the server encodes it into [`StoredTask::body`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TaskBody {
    /// Who created it: the only principal that sees it.
    principal: Option<String>,
    tool: String,
    /// The tool's fingerprint when the task was created: a deployment that changed the
    /// tool cannot resume its state.
    fingerprint: u64,
    arguments: JsonObject,
    /// The capabilities of the request that created the task; its questions are gated on
    /// them.
    capabilities: ClientCapabilities,
    status: TaskStatus,
    created_at_ms: u64,
    updated_at_ms: u64,
    ttl_ms: u64,
    /// Input rounds completed (what `RequestCx::round` says).
    round: u32,
    /// How many times the task has asked; makes every `inputRequests` key unique over the
    /// task's lifetime even when the machine asks the same key again.
    asks: u32,
    waiting: Option<Waiting>,
    result: Option<JsonObject>,
    error: Option<JsonObject>,
}

/// The questions a parked task waits on, the answers received so far, and the machine's
/// encoded state (the same bytes MRTR seals into `requestState`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Waiting {
    /// `(task key, machine key, request)`.
    asked: Vec<(String, String, InputRequest)>,
    /// Answers by task key.
    answers: BTreeMap<String, Value>,
    state: Vec<u8>,
}

/// What a run of the machine starts from.
struct Job {
    start: Start,
    arguments: JsonObject,
    caller: Caller,
}

/// How a task ends.
enum Settle {
    Completed(JsonObject),
    Failed(ErrorData),
}

/// The result of a read-modify-write.
enum Modified {
    /// The change was written; the task as written.
    Written(Box<TaskBody>),
    /// The change did not apply.
    Unchanged,
}

/// The server's tasks: the store, the settings, and the runs on this instance.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    settings: TaskSettings,
    states: Arc<AppStates>,
    tools: HashMap<String, ToolMachine>,
    /// Runs on this instance, so a cancel served here stops them at once; the generation
    /// keeps an ended run from removing the entry of the run that followed it.
    running: Mutex<HashMap<String, (u64, tokio::task::AbortHandle)>>,
    generation: AtomicU64,
    /// Stamps `serverInfo` (and the instance id) into results.
    stamp: Arc<Stamp>,
    /// The limits every round of a task is held to.
    limits: RoundLimits,
}

impl Tasks {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        settings: TaskSettings,
        states: Arc<AppStates>,
        tools: impl IntoIterator<Item = ToolMachine>,
        stamp: Arc<Stamp>,
        limits: RoundLimits,
    ) -> Arc<Self> {
        let tools = tools
            .into_iter()
            .map(|tool| (tool.descriptor().name().to_owned(), tool))
            .collect();
        Arc::new(Tasks {
            store,
            settings,
            states,
            tools,
            running: Mutex::default(),
            generation: AtomicU64::new(0),
            stamp,
            limits,
        })
    }

    /// Creates a task for a call whose MRTR phase ended in `handoff`, and starts its run.
    /// The task is in the store before this returns, so `tasks/get` finds it at once.
    /// `round`: the id of the round that handed off, when it came from a `requestState`;
    /// the same round re-sent gets the task it created, and nothing runs again.
    /// `address`: the caller's counted client address; an anonymous caller's tasks count
    /// against its quota as a principal's do.
    pub(crate) async fn create(
        self: &Arc<Self>,
        machine: ToolMachine,
        handoff: TaskHandOff,
        arguments: JsonObject,
        caller: Caller,
        address: Option<std::net::IpAddr>,
        round: Option<String>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let Caller {
            capabilities,
            principal,
            ..
        } = caller;
        let now = now_ms();
        let descriptor = machine.descriptor();
        let body = TaskBody {
            principal: principal.clone(),
            tool: descriptor.name().to_owned(),
            fingerprint: descriptor.fingerprint,
            arguments: arguments.clone(),
            capabilities: capabilities.clone(),
            status: TaskStatus::Working,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: self.settings.ttl_ms(),
            round: handoff.round,
            asks: 0,
            waiting: None,
            result: None,
            error: None,
        };
        let id = new_task_id()?;
        let stored = StoredTask {
            id: id.clone(),
            version: 1,
            expires_at_ms: now.saturating_add(body.ttl_ms),
            live: true,
            body: encode(&body)?,
        };
        let admission = Admission {
            owner: quota_owner(principal.as_deref(), address),
            round,
            max_live: self.settings.max_live(),
            max_live_per_owner: self.settings.max_live_per_principal(),
            max_kept: self.settings.max_kept(),
        };
        match self.store.create(&stored, &admission, now).await {
            Ok(Created::Created) => {}
            Ok(Created::Existing(existing)) => return self.existing(&existing, &principal).await,
            Ok(Created::Full) => return Err(errors::too_many_tasks(self.settings.max_live())),
            Ok(Created::OwnerFull) => {
                return Err(errors::too_many_tasks_for_principal(
                    self.settings.max_live_per_principal(),
                    principal.is_none(),
                ));
            }
            Ok(Created::Duplicate) => return Err(errors::internal("a new task id was taken")),
            Err(error) => {
                log_limited!(warn, %error, "cannot create a task");
                return Err(errors::task_store_unavailable());
            }
        }
        tracing::info!(task = %task_ref(&id), tool = %body.tool, "task created");
        let task = self.task_of(&id, &body);
        let start = match (handoff.resume, handoff.asked) {
            (Some(resume), Some(asked)) => Start::Resumed(Resumed {
                resume,
                asked,
                round: handoff.round,
                through_client: false,
            }),
            _ => Start::Fresh {
                early_answers: InputResponses::default(),
            },
        };
        let caller = Caller {
            capabilities,
            principal,
            era: Era::Stateless,
            // Checked when the task was created, on the request that created it.
            scopes: crate::server::ScopeCheck::Unchecked,
        };
        self.spawn(
            machine,
            id,
            Job {
                start,
                arguments,
                caller,
            },
        );
        Ok(CreateTaskResult::new(task))
    }

    /// The task a re-sent round created already, as its creation answered it (with its
    /// status now).
    async fn existing(
        &self,
        id: &str,
        principal: &Option<String>,
    ) -> Result<CreateTaskResult, ErrorData> {
        match self.load(id).await? {
            Some((_, body)) if body.principal == *principal => {
                Ok(CreateTaskResult::new(self.task_of(id, &body)))
            }
            // Expired (or dropped) between the store's answer and this read: a retry
            // creates the task afresh.
            _ => Err(errors::task_store_unavailable()),
        }
    }

    /// `tasks/get`.
    pub(crate) async fn get(
        &self,
        id: &str,
        principal: &Option<String>,
    ) -> Result<GetTaskResult, ErrorData> {
        let Some((_, body)) = self.load(id).await? else {
            return Err(errors::unknown_task(id));
        };
        if body.principal != *principal {
            return Err(errors::unknown_task(id));
        }
        let payload = match body.status {
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: body
                    .waiting
                    .iter()
                    .flat_map(|waiting| {
                        waiting
                            .asked
                            .iter()
                            .filter(|(key, _, _)| !waiting.answers.contains_key(key))
                            .map(|(key, _, request)| (key.clone(), request.clone()))
                    })
                    .collect(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: body.result.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: body.error.clone().unwrap_or_default(),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        let mut result = GetTaskResult::new(DetailedTask::new(self.task_of(id, &body), payload));
        self.stamp.apply(&mut result.meta);
        Ok(result)
    }

    /// `tasks/update`: records the answers to outstanding questions (others are ignored);
    /// once every question of the round is answered, the machine resumes in the background.
    pub(crate) async fn update(
        self: &Arc<Self>,
        id: &str,
        principal: &Option<String>,
        responses: InputResponses,
    ) -> Result<(), ErrorData> {
        let mut complete = None;
        let modified = self
            .modify(id, Some(principal), |body| {
                complete = None;
                if body.status != TaskStatus::InputRequired {
                    return false;
                }
                let Some(waiting) = body.waiting.as_mut() else {
                    return false;
                };
                let mut changed = false;
                for (key, value) in &responses {
                    let outstanding = waiting.asked.iter().any(|(asked, _, _)| asked == key)
                        && !waiting.answers.contains_key(key);
                    if outstanding && !value.is_null() {
                        waiting.answers.insert(key.clone(), value.clone());
                        changed = true;
                    }
                }
                if !changed {
                    return false;
                }
                if waiting
                    .asked
                    .iter()
                    .all(|(key, _, _)| waiting.answers.contains_key(key))
                {
                    complete = body.waiting.take();
                    body.status = TaskStatus::Working;
                }
                true
            })
            .await?;
        let (Modified::Written(body), Some(waiting)) = (modified, complete) else {
            return Ok(());
        };
        let Some(machine) = self
            .tools
            .get(&body.tool)
            .filter(|machine| machine.descriptor().fingerprint == body.fingerprint)
            .cloned()
        else {
            // Another version of the server created the task: its state is not this
            // tool's to resume.
            let error =
                errors::internal("the tool this task runs changed since the task was created");
            self.settle(id, Settle::Failed(error)).await;
            return Ok(());
        };
        let requests: Vec<(String, InputRequest)> = waiting
            .asked
            .iter()
            .map(|(_, key, request)| (key.clone(), request.clone()))
            .collect();
        let answers = waiting.asked.iter().filter_map(|(task_key, key, _)| {
            let answer = waiting.answers.get(task_key)?;
            Some((key.clone(), answer.clone()))
        });
        let answers = Answers::new(requests.clone(), answers);
        let start = Start::Resumed(Resumed {
            resume: Resume::new(waiting.state.clone(), answers),
            asked: Asked {
                requests: Some(requests),
                recipes: Vec::new(),
                state: waiting.state,
            },
            round: body.round,
            through_client: false,
        });
        let caller = Caller {
            capabilities: body.capabilities,
            principal: body.principal,
            era: Era::Stateless,
            // Checked when the task was created, on the request that created it.
            scopes: crate::server::ScopeCheck::Unchecked,
        };
        self.spawn(
            machine,
            id.to_owned(),
            Job {
                start,
                arguments: body.arguments,
                caller,
            },
        );
        Ok(())
    }

    /// `tasks/cancel`: a task that has not ended ends as `cancelled`; on an ended task it
    /// changes nothing.
    pub(crate) async fn cancel(
        &self,
        id: &str,
        principal: &Option<String>,
    ) -> Result<(), ErrorData> {
        let modified = self
            .modify(id, Some(principal), |body| {
                if body.status.is_terminal() {
                    return false;
                }
                body.status = TaskStatus::Cancelled;
                body.waiting = None;
                true
            })
            .await?;
        if let Modified::Written(_) = modified {
            tracing::info!(task = %task_ref(id), "task cancelled");
            if let Some((_, run)) = self.running().remove(id) {
                run.abort();
            }
        }
        Ok(())
    }

    fn running(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, (u64, tokio::task::AbortHandle)>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs the machine in the background, watched by a supervisor that turns a panic into
    /// a failed task and stops the run when another instance cancels the task.
    fn spawn(self: &Arc<Self>, machine: ToolMachine, id: String, job: Job) {
        let run = tokio::spawn(Arc::clone(self).run(machine, id.clone(), job));
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        self.running()
            .insert(id.clone(), (generation, run.abort_handle()));
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut run = run;
            let joined = loop {
                tokio::select! {
                    joined = &mut run => break Some(joined),
                    () = tokio::time::sleep(this.settings.cancel_check) => {
                        if let Ok(Some((_, body))) = this.load(&id).await
                            && body.status.is_terminal()
                        {
                            run.abort();
                            break None;
                        }
                    }
                }
            };
            {
                let mut running = this.running();
                if running.get(&id).is_some_and(|(g, _)| *g == generation) {
                    running.remove(&id);
                }
            }
            if let Some(Err(error)) = joined
                && error.is_panic()
            {
                log_limited!(error, task = %task_ref(&id), "a task's code panicked");
                let error = errors::internal("the tool panicked while running this task");
                this.settle(&id, Settle::Failed(error)).await;
            }
        });
    }

    /// One run: steps the machine from `job` to its next question or its end.
    async fn run(self: Arc<Self>, machine: ToolMachine, id: String, job: Job) {
        let Job {
            start,
            arguments,
            caller,
        } = job;
        let descriptor = machine.descriptor();
        let input = RoundInput {
            arguments: &arguments,
            caller: &caller,
            states: &self.states,
            limits: self.limits.clone(),
            task_after: None,
            start,
            literals: descriptor.literals,
        };
        match step_round(machine.as_ref(), input).await {
            RoundOutcome::Done(mut result) => {
                self.stamp.apply(&mut result.meta);
                let settle = match serde_json::to_value(&result) {
                    Ok(Value::Object(result)) => Settle::Completed(result),
                    _ => Settle::Failed(errors::internal("the tool's result does not serialize")),
                };
                self.settle(&id, settle).await;
            }
            RoundOutcome::Ask(ask) => {
                if ask.again {
                    tracing::info!(task = %task_ref(&id), "asking again");
                }
                self.park(&id, ask.requests, ask.state, ask.round).await;
            }
            RoundOutcome::Failed(error) => {
                let error = error.to_error(descriptor.name(), &caller.era);
                self.settle(&id, Settle::Failed(error)).await;
            }
            RoundOutcome::HandOff(_) => {
                let error = errors::internal("a task's round handed off to another task");
                self.settle(&id, Settle::Failed(error)).await;
            }
        }
    }

    /// Parks the task on `requests`, under keys no earlier question of the task used.
    async fn park(
        &self,
        id: &str,
        requests: Vec<(String, InputRequest)>,
        state: Vec<u8>,
        round: u32,
    ) {
        let written = self
            .modify(id, None, |body| {
                if body.status.is_terminal() {
                    return false;
                }
                body.asks += 1;
                let asks = body.asks;
                body.waiting = Some(Waiting {
                    asked: requests
                        .iter()
                        .map(|(key, request)| {
                            (format!("{key}#{asks}"), key.clone(), request.clone())
                        })
                        .collect(),
                    answers: BTreeMap::new(),
                    state: state.clone(),
                });
                body.round = round;
                body.status = TaskStatus::InputRequired;
                true
            })
            .await;
        if let Err(error) = written {
            log_limited!(warn, task = %task_ref(id), %error.message, "cannot park a task on its questions");
        }
    }

    /// Ends the task, unless it already ended (a cancel wins over a late result).
    async fn settle(&self, id: &str, settle: Settle) {
        let (result, error) = match settle {
            Settle::Completed(result) => (Some(result), None),
            Settle::Failed(error) => (None, error_object(&error)),
        };
        let written = self
            .modify(id, None, |body| {
                if body.status.is_terminal() {
                    return false;
                }
                body.status = if result.is_some() {
                    TaskStatus::Completed
                } else {
                    TaskStatus::Failed
                };
                body.result = result.clone();
                body.error = error.clone();
                body.waiting = None;
                true
            })
            .await;
        if let Err(error) = written {
            log_limited!(warn, task = %task_ref(id), %error.message, "cannot record how a task ended");
        }
    }

    async fn load(&self, id: &str) -> Result<Option<(StoredTask, TaskBody)>, ErrorData> {
        let stored = self.store.load(id, now_ms()).await.map_err(|error| {
            log_limited!(warn, %error, "cannot read a task");
            errors::task_store_unavailable()
        })?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        let body = serde_json::from_slice(&stored.body)
            .map_err(|e| errors::internal(&format!("a stored task does not decode: {e}")))?;
        Ok(Some((stored, body)))
    }

    /// Reads the task, applies `change` (which says whether it changed anything), and
    /// writes it back if the stored version did not move meanwhile; retries otherwise.
    /// `principal`: the caller's, checked against the task's (`None` for the server's own
    /// runs). A task that is gone, or not the caller's, is `-32602`.
    async fn modify(
        &self,
        id: &str,
        principal: Option<&Option<String>>,
        mut change: impl FnMut(&mut TaskBody) -> bool,
    ) -> Result<Modified, ErrorData> {
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let Some((stored, mut body)) = self.load(id).await? else {
                return Err(errors::unknown_task(id));
            };
            if principal.is_some_and(|principal| *principal != body.principal) {
                return Err(errors::unknown_task(id));
            }
            if !change(&mut body) {
                return Ok(Modified::Unchanged);
            }
            body.updated_at_ms = now_ms().max(body.updated_at_ms);
            let next = StoredTask {
                id: stored.id.clone(),
                version: stored.version + 1,
                expires_at_ms: stored.expires_at_ms,
                // An ended task frees its slot in the same write that ends it.
                live: stored.live && !body.status.is_terminal(),
                body: encode(&body)?,
            };
            match self.store.replace(&next, stored.version).await {
                Ok(true) => return Ok(Modified::Written(Box::new(body))),
                Ok(false) => continue,
                Err(error) => {
                    log_limited!(warn, %error, "cannot write a task");
                    return Err(errors::task_store_unavailable());
                }
            }
        }
        Err(errors::internal("a task kept changing under this write"))
    }

    fn task_of(&self, id: &str, body: &TaskBody) -> Task {
        Task::new(
            id,
            body.status,
            iso8601(body.created_at_ms),
            iso8601(body.updated_at_ms),
        )
        .with_ttl_ms(body.ttl_ms)
        .with_poll_interval_ms(self.settings.poll_interval_ms())
    }
}

fn encode(body: &TaskBody) -> Result<Vec<u8>, ErrorData> {
    serde_json::to_vec(body).map_err(|e| errors::internal(&format!("a task does not encode: {e}")))
}

/// A JSON-RPC error as the `error` of a failed task.
fn error_object(error: &ErrorData) -> Option<JsonObject> {
    match serde_json::to_value(error) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

/// 128 random bits, hex: unguessable, so knowing one task id says nothing of another.
fn new_task_id() -> Result<String, ErrorData> {
    let mut bytes = [0u8; 16];
    // Without randomness the id would be guessable: refuse to create the task.
    getrandom::fill(&mut bytes)
        .map_err(|e| errors::internal(&format!("no randomness for a task id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whose quota a task counts against: its principal's, else (an anonymous caller, or an
/// `Authorization` header nothing verified, which a client could vary per call) its client
/// address's, else none (held to the server-wide cap only).
fn quota_owner(principal: Option<&str>, address: Option<std::net::IpAddr>) -> Option<String> {
    let unverified = principal.is_some_and(is_unverified_credential);
    match (principal, address) {
        (Some(_), Some(ip)) if unverified => {
            Some(owner_of(&format!("\0address:{}", ip.to_canonical())))
        }
        (Some(principal), _) => Some(owner_of(principal)),
        (None, Some(ip)) => Some(owner_of(&format!("\0address:{}", ip.to_canonical()))),
        (None, None) => None,
    }
}

/// Whose quota a principal's tasks count against: a digest of the principal (hex), so a
/// store's keys never carry the principal itself.
fn owner_of(principal: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(principal.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn iso8601(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(i64::MAX))
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A short, stable reference to a task for logs: the first 8 hex digits of the SHA-256 of
/// its id. The id itself is the capability to read and answer the task, so it is never
/// logged at INFO or above.
pub(crate) fn task_ref(id: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(id.as_bytes());
    digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }
}
