//! One round of a machine, the same for every carrier.
//!
//! MRTR (a sealed `requestState` through the client), legacy sessions (server→client
//! requests on a 2025 session) and tasks (a stored record) differ only in where a
//! suspension's questions go and where its state waits. Everything else is decided here,
//! once: stepping the machine with panics caught, the re-ask of an unusable answer, the cap
//! on rounds per call, the size cap on the kept state, the gate on input kinds the caller
//! did not declare, the "answer to a question never asked" check, the hand-off to a task,
//! and the one table that maps every failure to its JSON-RPC code and message
//! ([`RoundError::to_error`]).
//!
//! [`step_round`] does no I/O and calls nothing back: a carrier builds a [`RoundInput`],
//! awaits one [`RoundOutcome`], and carries it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::Either;

use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, InputRequest, InputResponses, JsonObject, ProtocolVersion};

use super::errors;
use super::payload;
use super::ratelimit::log_limited;
use crate::error::{BoxError, ErrorChain};
use crate::machine::{
    AnswerProblem, Answers, AppStates, InputKind, Machine, MachineDescriptor, Method, Recipe,
    RequestCx, Resume, Run, Step, StepError, Suspend,
};

/// How many rounds one call may take unless
/// [`McpServerBuilder::max_rounds_per_call`](super::McpServerBuilder::max_rounds_per_call)
/// says otherwise. Every time a call asks — a new question, or the same one again after an
/// unusable answer — is a round; the limit holds on every carrier (MRTR, legacy sessions,
/// tasks), so a tool that keeps asking, or a client that keeps answering wrongly, ends.
///
/// ```
/// assert_eq!(mrtr_runtime::server::DEFAULT_MAX_ROUNDS_PER_CALL, 64);
/// ```
pub const DEFAULT_MAX_ROUNDS_PER_CALL: u32 = 64;

/// How long one round of a tool's own code — from a call or an answer to its next
/// question or its result — may run unless
/// [`McpServerBuilder::round_timeout`](super::McpServerBuilder::round_timeout) says
/// otherwise. Past it the step is dropped (its future is never polled again) and the call
/// ends with `-32603` naming the tool and the limit; a task ends `failed` and frees its
/// slot. Held on every carrier (MRTR, legacy sessions, tasks).
///
/// 60 s: a round is the code between two questions, not the time a person takes to answer
/// (that is [`state_ttl`](super::McpServerBuilder::state_ttl) or
/// [`legacy_request_timeout`](super::McpServerBuilder::legacy_request_timeout)); a
/// request that holds its HTTP response open longer than a minute is cut by most proxies
/// and clients anyway, and it is twice the round ledger's default lease. Tools whose
/// rounds legitimately run longer (a task doing minutes of work) raise it or turn it off.
///
/// ```
/// assert_eq!(mrtr_runtime::server::DEFAULT_ROUND_TIMEOUT.as_secs(), 60);
/// ```
pub const DEFAULT_ROUND_TIMEOUT: Duration = Duration::from_secs(60);

/// The protocol the caller speaks, which decides how some failures are worded.
#[derive(Debug, Clone)]
pub(crate) enum Era {
    /// 2026-07-28 and later: stateless requests (MRTR, and tasks created from them).
    Stateless,
    /// A session negotiated through `initialize` at this older revision.
    Session(ProtocolVersion),
}

/// Who asks, and what they declared they can answer.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) principal: Option<String>,
    pub(crate) era: Era,
    /// What the request's access token grants, checked against the machine's declared scopes.
    pub(crate) scopes: super::ScopeCheck,
}

/// How long one round of a machine's own code may run: the server's
/// [`round_timeout`](super::McpServerBuilder::round_timeout) and the tools that override
/// it ([`round_timeout_for`](super::McpServerBuilder::round_timeout_for)).
#[derive(Debug, Clone, Default)]
pub(crate) struct RoundTimeouts {
    /// Every machine's deadline unless overridden (`None`: no deadline).
    pub(crate) default: Option<Duration>,
    /// Tools with their own deadline, by tool name.
    pub(crate) per_tool: Arc<HashMap<String, Option<Duration>>>,
}

impl RoundTimeouts {
    /// The server's deadline, overridden for no tool.
    pub(crate) fn new(default: Option<Duration>) -> Self {
        RoundTimeouts {
            default,
            per_tool: Arc::default(),
        }
    }

    /// The deadline of a round of `descriptor`'s machine.
    pub(crate) fn of(&self, descriptor: &MachineDescriptor) -> Option<Duration> {
        let tool = (descriptor.method() == Method::CallTool)
            .then(|| self.per_tool.get(descriptor.name()))
            .flatten();
        tool.copied().unwrap_or(self.default)
    }
}

/// The limits a round is held to.
#[derive(Debug, Clone)]
pub(crate) struct RoundLimits {
    /// Rounds one call may take ([`DEFAULT_MAX_ROUNDS_PER_CALL`]).
    pub(crate) max_rounds: u32,
    /// The largest sealed state, in bytes of `requestState` (the same limit on every
    /// carrier, so a flow that works over a session also works over MRTR).
    pub(crate) max_state_bytes: usize,
    /// How long one round's own code may run ([`DEFAULT_ROUND_TIMEOUT`] unless the server
    /// or the tool says otherwise).
    pub(crate) round_timeout: RoundTimeouts,
}

/// The questions a suspension asked and the state they were asked with: what an unusable
/// answer asks again.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    /// The questions as sent; `None` when they come back from a sealed state, whose
    /// questions are rebuilt from `recipes` only when asked again.
    pub(crate) requests: Option<Vec<(String, InputRequest)>>,
    /// How each question is sealed (MRTR only; empty on the other carriers).
    pub(crate) recipes: Vec<(String, Recipe)>,
    pub(crate) state: Vec<u8>,
}

/// A call resumed with answers.
#[derive(Debug)]
pub(crate) struct Resumed {
    /// The state and the answers to resume with.
    pub(crate) resume: Resume,
    /// What the answered round asked.
    pub(crate) asked: Asked,
    /// Rounds the call has taken so far.
    pub(crate) round: u32,
    /// The state came back through the client (MRTR): a resume that does not fit the
    /// questions it was sealed with is a forged or incompatible state, not a machine bug.
    pub(crate) through_client: bool,
}

/// Where a round starts.
#[derive(Debug)]
pub(crate) enum Start {
    /// A first call. It may already carry the answers to the questions its first
    /// suspension asks (stateless clients do this): they are used once, right away.
    Fresh { early_answers: InputResponses },
    /// A call resumed with answers.
    Resumed(Resumed),
}

/// One round to run.
pub(crate) struct RoundInput<'a> {
    pub(crate) arguments: &'a JsonObject,
    pub(crate) caller: &'a Caller,
    pub(crate) states: &'a Arc<AppStates>,
    pub(crate) limits: RoundLimits,
    /// When the call continues as a task: after this many rounds, the next step is not run
    /// here but handed off ([`RoundOutcome::HandOff`]).
    pub(crate) task_after: Option<u32>,
    pub(crate) start: Start,
    /// The machine's body literals (questions are sealed by index into them).
    pub(crate) literals: &'static [&'static str],
}

/// What the caller is asked in this round.
#[derive(Debug)]
pub(crate) struct Ask {
    pub(crate) requests: Vec<(String, InputRequest)>,
    /// How each request is sealed, in the order of `requests`.
    pub(crate) recipes: Vec<(String, Recipe)>,
    pub(crate) state: Vec<u8>,
    /// The largest local the state keeps (name, encoded bytes), for a too-large error.
    pub(crate) largest: Option<(&'static str, usize)>,
    /// Rounds the call has taken, this one included.
    pub(crate) round: u32,
    /// The questions of the round before, asked again after an unusable answer (MRTR keeps
    /// the expiry they already had, so a client cannot keep a flow alive by answering
    /// wrongly).
    pub(crate) again: bool,
}

impl Ask {
    /// What this round asked, as the next round's [`Resumed::asked`].
    pub(crate) fn asked(&self) -> Asked {
        Asked {
            requests: Some(self.requests.clone()),
            recipes: self.recipes.clone(),
            state: self.state.clone(),
        }
    }
}

/// Where a machine stands when its work moves from this request into a task.
#[derive(Debug)]
pub(crate) struct TaskHandOff {
    /// The resume for the next step (`None`: the machine has not started).
    pub(crate) resume: Option<Resume>,
    /// Rounds taken so far.
    pub(crate) round: u32,
    /// What the resumed round asked, so an unusable answer can be asked again by the task.
    pub(crate) asked: Option<Asked>,
}

/// What one round produced.
#[derive(Debug)]
pub(crate) enum RoundOutcome<O> {
    /// The machine finished.
    Done(O),
    /// The caller must answer these questions.
    Ask(Ask),
    /// The rest of the call runs as a task.
    HandOff(TaskHandOff),
    /// The call ends with this error.
    Failed(RoundError),
}

impl<O> RoundOutcome<O> {
    /// A short name for logs and spans.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            RoundOutcome::Done(_) => "complete",
            RoundOutcome::Ask(_) => "input_required",
            RoundOutcome::HandOff(_) => "continues as a task",
            RoundOutcome::Failed(error) => error.label(),
        }
    }
}

/// Why a round ends the call. [`RoundError::to_error`] is the one table that maps each to
/// its JSON-RPC code and message.
#[derive(Debug)]
pub(crate) enum RoundError {
    /// The arguments do not match the machine's schema.
    InvalidArguments(BoxError),
    /// The round asks for input kinds the caller did not declare; `round` rounds were
    /// already asked (and answered) before it.
    Undeclared { kinds: Vec<InputKind>, round: u32 },
    /// The round asks a multi-select question of a session whose revision has none.
    MultiSelectNotInRevision { version: ProtocolVersion },
    /// The round asks for an input kind the caller's protocol revision does not have.
    NotInRevision {
        kind: InputKind,
        version: ProtocolVersion,
        since: ProtocolVersion,
    },
    /// The call reached the cap on rounds; `unusable` when the round it would have taken
    /// asks again after an unusable answer (key, problem).
    RoundCap {
        cap: u32,
        unusable: Option<(String, String)>,
    },
    /// The kept state would be larger than the server allows.
    StateTooLarge {
        size: usize,
        limit: usize,
        /// The largest local kept (name, encoded bytes), when the state names its locals.
        largest: Option<(&'static str, usize)>,
    },
    /// The machine's locals cannot be stored between rounds.
    Unstorable(StepError),
    /// A state that came back through the client does not fit this machine (`reason` is
    /// the `rejection` code logged).
    RejectedState(&'static str),
    /// The round's own code ran past the deadline and was dropped.
    Deadline { timeout: Duration },
    /// A bug: in the machine, or a state the server itself kept that does not fit.
    Internal(String),
    /// The machine declares OAuth scopes the request's token (or, without HTTP, the
    /// server's local grant) does not grant (all of the declared ones), refused before any
    /// of its code runs.
    InsufficientScope(super::MissingScopes),
}

impl RoundError {
    /// A short name for logs and spans.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            RoundError::InvalidArguments(_) => "invalid arguments",
            RoundError::Undeclared { .. }
            | RoundError::NotInRevision { .. }
            | RoundError::MultiSelectNotInRevision { .. } => "missing capability",
            RoundError::RoundCap { .. } => "round cap",
            RoundError::StateTooLarge { .. } => "state too large",
            RoundError::Unstorable(_) => "unstorable state",
            RoundError::RejectedState(_) => "rejected",
            RoundError::Deadline { .. } => "round timeout",
            RoundError::Internal(_) => "internal error",
            RoundError::InsufficientScope(_) => "insufficient scope",
        }
    }

    /// The JSON-RPC error the caller gets, for machine `target` served in `era`.
    ///
    /// Codes: `-32602` for what the caller sent (arguments, a state that does not fit, a
    /// state grown too large from its input, unusable answers up to the cap); `-32021`
    /// (2026-07-28) or `-32600` (older sessions, which have no code for it) for input the
    /// caller did not declare; `-32603` for the server's side (a machine bug, a state that
    /// cannot be stored, a tool that keeps asking past the cap, a round past its deadline).
    pub(crate) fn to_error(&self, target: &str, era: &Era) -> ErrorData {
        match self {
            RoundError::InvalidArguments(cause) => errors::invalid_arguments(&**cause),
            RoundError::Undeclared { kinds, round } => match era {
                Era::Stateless => errors::missing_capabilities(kinds),
                Era::Session(_) => errors::legacy_missing_capabilities(kinds, *round),
            },
            RoundError::MultiSelectNotInRevision { version } => {
                errors::legacy_multi_select_not_in_revision(version)
            }
            RoundError::NotInRevision {
                kind,
                version,
                since,
            } => errors::legacy_not_in_revision(*kind, version, since),
            RoundError::RoundCap { cap, unusable } => match unusable {
                Some((key, problem)) => errors::unusable_answers(target, key, problem, *cap),
                None => errors::round_cap(target, *cap),
            },
            RoundError::StateTooLarge {
                size,
                limit,
                largest,
            } => errors::state_too_large(*size, *limit, *largest),
            RoundError::Unstorable(error) => errors::unstorable_state(target, error),
            RoundError::RejectedState(_) => errors::rejected_state(),
            RoundError::Deadline { timeout } => errors::round_timeout(target, *timeout),
            RoundError::Internal(detail) => errors::internal(detail),
            RoundError::InsufficientScope(missing) if missing.without_http => {
                errors::scopes_without_http(target, &missing.scopes)
            }
            RoundError::InsufficientScope(missing) => {
                errors::insufficient_scope(target, &missing.scopes)
            }
        }
    }
}

/// Runs one round: steps the machine from `input.start` (and once more when a first call
/// already carries its answers) to a suspension, its end, a hand-off or a failure. A round
/// whose code runs past `input.limits.round_timeout` is dropped and fails.
///
/// Not an `async fn`: one would keep `input` twice (as its argument and inside the round it
/// awaits); the round's future here is made at once and is all there is.
pub(crate) fn step_round<'a, M: Machine + ?Sized>(
    machine: &'a M,
    input: RoundInput<'a>,
) -> impl Future<Output = RoundOutcome<M::Output>> + 'a {
    // Before any of the machine's code runs, on every path: legacy sessions are checked
    // only here; a stateless request (and the call that creates a task) was already
    // checked before its round was claimed (`Mrtr::begin`), and passes again.
    if let Err(scopes) = input.caller.scopes.check(&machine.descriptor().scopes) {
        let refused = RoundOutcome::Failed(RoundError::InsufficientScope(scopes));
        return Either::Left(std::future::ready(refused));
    }
    Either::Right(match input.limits.round_timeout.of(machine.descriptor()) {
        Some(timeout) => Either::Left(
            tokio::time::timeout(timeout, run_round(machine, input)).map(move |outcome| {
                outcome.unwrap_or(RoundOutcome::Failed(RoundError::Deadline { timeout }))
            }),
        ),
        None => Either::Right(run_round(machine, input)),
    })
}

/// [`step_round`] without the deadline.
async fn run_round<M: Machine + ?Sized>(
    machine: &M,
    input: RoundInput<'_>,
) -> RoundOutcome<M::Output> {
    let RoundInput {
        arguments,
        caller,
        states,
        limits,
        task_after,
        start,
        literals,
    } = input;
    let (mut resume, mut resumed_from, mut round, mut early_answers) = match start {
        Start::Fresh { early_answers } => (None, None, 0, early_answers),
        Start::Resumed(resumed) => {
            let Resumed {
                resume,
                asked,
                round,
                through_client,
            } = resumed;
            (
                Some(resume),
                Some((asked, through_client)),
                round,
                InputResponses::default(),
            )
        }
    };
    loop {
        if task_after.is_some_and(|after| round >= after) {
            return RoundOutcome::HandOff(TaskHandOff {
                resume,
                round,
                asked: resumed_from.map(|(asked, _)| asked),
            });
        }
        let cx = RequestCx::for_server(
            caller.capabilities.clone(),
            caller.principal.clone(),
            round,
            Arc::clone(states),
        )
        .with_scopes(caller.scopes.granted().cloned());
        let run = Run {
            arguments,
            resume: resume.take(),
            cx: &cx,
        };
        let suspend = match super::unwind::step_catching_panics(machine, run).await {
            Ok(Step::Done(output)) => return RoundOutcome::Done(output),
            Ok(Step::Suspend(suspend)) => suspend,
            Err(StepError::Answer(problem)) => {
                let Some((asked, through_client)) = resumed_from else {
                    return RoundOutcome::Failed(RoundError::Internal(format!(
                        "the machine took an answer on a fresh call: {problem}"
                    )));
                };
                if *problem.problem() == AnswerProblem::NotAsked {
                    return RoundOutcome::Failed(never_asked(&problem, through_client));
                }
                tracing::info!(key = problem.key(), problem = %problem.problem(), "asking again");
                let unusable = (problem.key().to_owned(), problem.problem().to_string());
                return ask_again(asked, round, limits, caller, literals, unusable);
            }
            Err(error) => {
                let through_client = resumed_from.as_ref().is_some_and(|(_, through)| *through);
                return RoundOutcome::Failed(step_failure(error, through_client));
            }
        };
        let ask = match new_ask(suspend, round.saturating_add(1), literals) {
            Ok(ask) => ask,
            Err(error) => return RoundOutcome::Failed(error),
        };
        // A first call may carry the answers to the questions it is about to be asked.
        if resumed_from.is_none() && answers_every_question(&ask, &early_answers) {
            let requests = ask.requests.clone();
            let answers = Answers::new(requests, std::mem::take(&mut early_answers));
            round = ask.round;
            resume = Some(Resume::new(ask.state.clone(), answers));
            resumed_from = Some((ask.asked(), false));
            continue;
        }
        return checked(ask, limits, caller);
    }
}

/// The suspension as a round's [`Ask`]: its requests, how each is sealed, its state.
fn new_ask(suspend: Suspend, round: u32, literals: &[&str]) -> Result<Ask, RoundError> {
    let largest = suspend.largest_local();
    let (requests, recipes, state) = suspend.into_stored_parts();
    let recipes = recipes
        .iter()
        .zip(&requests)
        .map(|(recipe, (key, request))| Ok((key.clone(), recipe.stored(request, literals)?)))
        .collect::<Result<_, serde_json::Error>>()
        .map_err(|e| RoundError::Internal(format!("an input request does not serialize: {e}")))?;
    Ok(Ask {
        requests,
        recipes,
        state,
        largest,
        round,
        again: false,
    })
}

/// Whether `responses` holds a non-null answer to every question of `ask`.
fn answers_every_question(ask: &Ask, responses: &InputResponses) -> bool {
    !ask.requests.is_empty()
        && ask
            .requests
            .iter()
            .all(|(key, _)| responses.get(key).is_some_and(|value| !value.is_null()))
}

/// The round before, asked again after an unusable answer to `unusable.0`.
fn ask_again<O>(
    asked: Asked,
    round: u32,
    limits: RoundLimits,
    caller: &Caller,
    literals: &'static [&'static str],
    unusable: (String, String),
) -> RoundOutcome<O> {
    if round >= limits.max_rounds {
        return RoundOutcome::Failed(RoundError::RoundCap {
            cap: limits.max_rounds,
            unusable: Some(unusable),
        });
    }
    let requests = match asked.requests {
        Some(requests) => requests,
        None => match payload::rebuild_requests(&asked.recipes, literals) {
            Ok(requests) => requests,
            Err(error) => return RoundOutcome::Failed(RoundError::Internal(error.to_string())),
        },
    };
    let ask = Ask {
        requests,
        recipes: asked.recipes,
        state: asked.state,
        largest: None,
        round: round.saturating_add(1),
        again: true,
    };
    checked(ask, limits, caller)
}

/// The ask, once it is within the round cap and the state budget and the caller declared
/// every input kind it needs.
fn checked<O>(ask: Ask, limits: RoundLimits, caller: &Caller) -> RoundOutcome<O> {
    if ask.round > limits.max_rounds {
        return RoundOutcome::Failed(RoundError::RoundCap {
            cap: limits.max_rounds,
            unusable: None,
        });
    }
    if let Err(error) = gate(&ask.requests, caller, ask.round.saturating_sub(1)) {
        return RoundOutcome::Failed(error);
    }
    let size = payload::sealed_size(ask.round, &ask.recipes, &ask.state);
    if size > limits.max_state_bytes {
        return RoundOutcome::Failed(RoundError::StateTooLarge {
            size,
            limit: limits.max_state_bytes,
            largest: ask.largest,
        });
    }
    RoundOutcome::Ask(ask)
}

/// Refuses a round that asks for something the caller's revision lacks or its request
/// (or session) did not declare; nothing of the round is sent then.
pub(crate) fn gate(
    requests: &[(String, InputRequest)],
    caller: &Caller,
    asked_before: u32,
) -> Result<(), RoundError> {
    let mut kinds: Vec<InputKind> = requests.iter().map(|(_, r)| InputKind::of(r)).collect();
    kinds.sort();
    kinds.dedup();
    if let Era::Session(version) = &caller.era
        && let Some((kind, since)) = kinds.iter().find_map(|kind| {
            introduced_in(*kind)
                .filter(|since| version.as_str() < since.as_str())
                .map(|since| (*kind, since))
        })
    {
        return Err(RoundError::NotInRevision {
            kind,
            version: version.clone(),
            since,
        });
    }
    if let Era::Session(version) = &caller.era
        && version.as_str() < ProtocolVersion::V_2025_11_25.as_str()
        && requests
            .iter()
            .any(|(_, request)| asks_multi_select(request))
    {
        return Err(RoundError::MultiSelectNotInRevision {
            version: version.clone(),
        });
    }
    kinds.retain(|kind| !kind.is_declared_by(&caller.capabilities));
    if kinds.is_empty() {
        Ok(())
    } else {
        Err(RoundError::Undeclared {
            kinds,
            round: asked_before,
        })
    }
}

/// Whether `request` is a form with an array (multi-select) field, which elicitation
/// schemas have only since 2025-11-25.
fn asks_multi_select(request: &InputRequest) -> bool {
    let InputRequest::Elicitation(elicit) = request else {
        return false;
    };
    let rmcp::model::ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = &elicit.params
    else {
        return false;
    };
    requested_schema.properties.values().any(|property| {
        serde_json::to_value(property)
            .is_ok_and(|schema| schema.get("type").and_then(|t| t.as_str()) == Some("array"))
    })
}

/// The first protocol revision that has `kind`, if it is newer than 2024-11-05.
fn introduced_in(kind: InputKind) -> Option<ProtocolVersion> {
    match kind {
        InputKind::FormElicitation => Some(ProtocolVersion::V_2025_06_18),
        InputKind::UrlElicitation | InputKind::SamplingWithTools => {
            Some(ProtocolVersion::V_2025_11_25)
        }
        InputKind::Sampling | InputKind::Roots => None,
    }
}

/// The machine resumed at an answer its round never asked for.
fn never_asked(problem: &crate::machine::AnswerError, through_client: bool) -> RoundError {
    if through_client {
        // The sealed questions do not match the state they were sealed with: only a forged
        // (leaked-key) or incompatible token does that.
        log_limited!(warn, %problem, "authentic requestState resumes at a key it never asked");
        RoundError::RejectedState("pending_requests_do_not_match_state")
    } else {
        // The machine took a key it never asked: its bug, not the client's.
        RoundError::Internal(problem.to_string())
    }
}

/// Every other way a step fails.
fn step_failure(error: StepError, through_client: bool) -> RoundError {
    match error {
        StepError::InvalidArguments(cause) => RoundError::InvalidArguments(cause),
        StepError::StateMismatch(cause) if through_client => {
            log_limited!(warn, detail = %ErrorChain(&*cause), "authentic requestState does not decode as this machine's state");
            RoundError::RejectedState("undecodable_state")
        }
        error @ StepError::Unstorable { .. } => RoundError::Unstorable(error),
        other => RoundError::Internal(ErrorChain(&other).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::input;
    use rmcp::model::ErrorCode;
    use serde_json::json;

    fn caller(capabilities: serde_json::Value, era: Era) -> Caller {
        Caller {
            capabilities: serde_json::from_value(capabilities).unwrap(),
            principal: None,
            era,
            scopes: crate::server::ScopeCheck::Unchecked,
        }
    }

    #[test]
    fn undeclared_kinds_are_refused_before_sending() {
        let requests = vec![("ask_0".to_string(), input::confirm("Sure?").into_request())];
        let session = Era::Session(ProtocolVersion::V_2025_11_25);
        let error = gate(&requests, &caller(json!({}), session.clone()), 0).unwrap_err();
        let error = error.to_error("t", &session);
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST, "{error:?}");
        assert!(error.message.contains("elicitation"), "{}", error.message);
        let stateless = gate(&requests, &caller(json!({}), Era::Stateless), 0).unwrap_err();
        assert_eq!(stateless.to_error("t", &Era::Stateless).code.0, -32021);
        assert!(gate(&requests, &caller(json!({"elicitation": {}}), session), 0).is_ok());
    }

    #[test]
    fn revisions_without_elicitation_say_so() {
        let requests = vec![("ask_0".to_string(), input::confirm("Sure?").into_request())];
        let era = Era::Session(ProtocolVersion::V_2025_03_26);
        let error = gate(
            &requests,
            &caller(json!({"elicitation": {}}), era.clone()),
            0,
        )
        .unwrap_err()
        .to_error("t", &era);
        assert!(error.message.contains("2025-03-26"), "{}", error.message);
        let roots = vec![("roots_0".to_string(), input::roots().into_request())];
        let old = Era::Session(ProtocolVersion::V_2024_11_05);
        assert!(gate(&roots, &caller(json!({"roots": {}}), old), 0).is_ok());
    }

    #[test]
    fn multi_select_is_refused_before_2025_11_25_and_asked_since() {
        let pick = vec![(
            "ask_0".to_string(),
            input::multi_choice("Which?", ["a", "b"]).into_request(),
        )];
        let declared = json!({"elicitation": {}});
        let june = Era::Session(ProtocolVersion::V_2025_06_18);
        let error = gate(&pick, &caller(declared.clone(), june.clone()), 0)
            .unwrap_err()
            .to_error("t", &june);
        assert_eq!(error.code, ErrorCode::INVALID_REQUEST, "{error:?}");
        assert!(error.message.contains("multi-select"), "{}", error.message);
        assert!(error.message.contains("2025-06-18"), "{}", error.message);
        let november = Era::Session(ProtocolVersion::V_2025_11_25);
        assert!(gate(&pick, &caller(declared.clone(), november), 0).is_ok());
        // A single choice is fine in 2025-06-18.
        let one = vec![(
            "ask_0".to_string(),
            input::choice("Which?", ["a", "b"]).into_request(),
        )];
        assert!(gate(&one, &caller(declared, june), 0).is_ok());
    }

    #[test]
    fn an_undeclared_kind_after_answered_rounds_says_so() {
        let sample = vec![("s".to_string(), input::prompt("Sum up").into_request())];
        let era = Era::Session(ProtocolVersion::V_2025_11_25);
        let first = gate(&sample, &caller(json!({}), era.clone()), 0)
            .unwrap_err()
            .to_error("t", &era);
        assert!(
            first.message.contains("nothing was sent"),
            "{}",
            first.message
        );
        let later = gate(&sample, &caller(json!({}), era.clone()), 2)
            .unwrap_err()
            .to_error("t", &era);
        assert!(
            !later.message.contains("nothing was sent"),
            "{}",
            later.message
        );
        assert!(
            later.message.contains("after 2 answered round(s)"),
            "{}",
            later.message
        );
    }
}
