//! One request through one machine: open the state, collect the answers, step, gate,
//! seal. Transport- and method-agnostic, so the rmcp adapter and the in-process test
//! driver share it.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequiredResult, InputResponses, JsonObject,
};
use tracing::Instrument;

use crate::error::ErrorChain;
use crate::machine::{
    AnswerProblem, Answers, AppStates, InputKind, Machine, MachineDescriptor, Question,
    RebuildError, Recipe, RequestCx, Resume, Run, Step, StepError, Suspend,
};
use crate::token::{Binding, Envelope, SealInput, StateSealer};

use super::ledger::RoundPolicy;
use super::ledger::rounds::{Claimed, Rounds};

use super::errors;

/// What to do with a state sealed by another version of the machine (its fingerprint
/// differs, or it asks a `#[derive(Form)]` form whose schema has changed): it is authentic,
/// just stale.
///
/// ```
/// use mrtr_runtime::server::StaleStatePolicy;
/// assert_eq!(StaleStatePolicy::default(), StaleStatePolicy::Restart);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StaleStatePolicy {
    /// Start the flow again from the beginning (the client sees a fresh `input_required`).
    #[default]
    Restart,
    /// Reject it like any other invalid state (`-32602`).
    Reject,
}

/// One incoming `tools/call`, `prompts/get` or `resources/read`, as the engine sees it.
#[derive(Debug)]
pub(crate) struct Incoming<'a> {
    pub(crate) arguments: &'a JsonObject,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) principal: Option<String>,
    /// When the machine continues as a task: after this many completed rounds, the next
    /// step is not run here but handed off ([`Answer::Handoff`]).
    pub(crate) handoff_at: Option<u32>,
}

/// What a request produced.
#[derive(Debug)]
pub(crate) enum Answer<O> {
    /// The machine finished.
    Complete(O),
    /// The client must answer and retry.
    InputRequired(InputRequiredResult),
    /// The MRTR phase is over: the rest runs as a task (see [`Incoming::handoff_at`]).
    Handoff(Handoff),
    /// The task a [`Handoff`] was turned into ([`Guard::hand_off`]), as the call answers it.
    Task(rmcp::model::CreateTaskResult),
}

/// The questions of a round, keyed, and the encoded state they were asked with.
pub(crate) type Asked = (Vec<(String, InputRequest)>, Vec<u8>);

/// Where a machine stands when its work moves from this request into a task.
#[derive(Debug)]
pub(crate) struct Handoff {
    /// The resume for the next step (`None`: the machine has not started).
    pub(crate) resume: Option<Resume>,
    /// Rounds completed so far.
    pub(crate) round: u32,
    /// What the resumed round asked and the state it suspended with, so a malformed answer
    /// can be asked again from the task.
    pub(crate) asked: Option<Asked>,
}

/// What one request answers: its result, or the JSON-RPC error.
pub(crate) type Served<O> = Result<Answer<O>, ErrorData>;

/// How a method's outcomes are finished (stamped), recorded in the round ledger and
/// replayed from it; the engine is generic over outputs, the server knows their types.
pub(crate) struct Guard<'a, O> {
    /// Serializes a finished outcome for the ledger (`None`: cannot, so not recorded).
    pub(crate) encode: fn(&Served<O>) -> Option<Vec<u8>>,
    /// Reads a recorded outcome back.
    pub(crate) decode: fn(&[u8]) -> Option<Served<O>>,
    /// Completes an outcome as the client sees it (`_meta` stamps), before it is recorded.
    pub(crate) finish: &'a (dyn Fn(&mut Served<O>) + Send + Sync),
    /// Turns a [`Handoff`] into its task while the round is still claimed, so the round's
    /// recorded outcome is the task: a replay gets the same task, never a second one.
    pub(crate) hand_off: Option<&'a HandOff<O>>,
}

/// Creates the task a round handed off to (see [`Guard::hand_off`]).
pub(crate) type HandOff<O> =
    dyn Fn(Handoff) -> futures::future::BoxFuture<'static, Served<O>> + Send + Sync;

/// The per-server part of the pipeline: sealing and policies.
pub(crate) struct Engine {
    pub(crate) sealer: StateSealer,
    pub(crate) audience: String,
    pub(crate) stale_state: StaleStatePolicy,
    /// The application states `State<T>` parameters are filled from.
    pub(crate) states: Arc<AppStates>,
    /// The round ledger, when the server has one.
    pub(crate) rounds: Option<Rounds>,
}

/// A suspension held in memory: the requests and the encoded state.
struct Pending {
    /// The requests as sent; `None` when restored from a token, whose requests went to
    /// the machine's answers (they are rebuilt from the recipes if asked again).
    requests: Option<Vec<(String, InputRequest)>>,
    /// How each request is stored in the token, keyed.
    recipes: Vec<(String, Recipe)>,
    state: Vec<u8>,
    /// The round the client is asked to answer (1 for the first suspension).
    round: u32,
    /// A re-ask keeps the expiry the question already had.
    not_after: u64,
}

/// Where the step's resume came from; decides what "ask again" re-sends.
enum Origin {
    Fresh,
    Token(Pending),
    EagerAnswers(Pending),
}

impl Engine {
    /// What the machine sees of this request in round `round`: the client's capabilities,
    /// the principal and the application states.
    pub(crate) fn request_cx(
        &self,
        capabilities: &ClientCapabilities,
        principal: &Option<String>,
        round: u32,
    ) -> RequestCx {
        RequestCx::for_server(
            capabilities.clone(),
            principal.clone(),
            round,
            Arc::clone(&self.states),
        )
    }

    /// Serves one request for `machine` through the round ledger (when the server has one):
    /// resumed rounds are claimed, and their finished outcomes recorded and replayed with
    /// `guard`'s codec.
    pub(crate) async fn serve_guarded<M: Machine + ?Sized>(
        &self,
        machine: &M,
        incoming: Incoming<'_>,
        guard: &Guard<'_, M::Output>,
    ) -> Served<M::Output> {
        self.serve_with(machine, incoming, Some(guard)).await.0
    }

    /// Serves one request without a ledger, also returning why a `requestState` was refused
    /// or set aside (the `rejection` code the `mrtr.round` span records), for the test kit.
    #[cfg(feature = "testing")]
    pub(crate) async fn serve_explained<M: Machine + ?Sized>(
        &self,
        machine: &M,
        incoming: Incoming<'_>,
    ) -> (Result<Answer<M::Output>, ErrorData>, Option<&'static str>) {
        self.serve_with(machine, incoming, None).await
    }

    async fn serve_with<M: Machine + ?Sized>(
        &self,
        machine: &M,
        incoming: Incoming<'_>,
        guard: Option<&Guard<'_, M::Output>>,
    ) -> (Served<M::Output>, Option<&'static str>) {
        let descriptor = machine.descriptor();
        let span = tracing::info_span!(
            "mrtr.round",
            method = descriptor.method().as_str(),
            target = descriptor.name(),
            round = tracing::field::Empty,
            state_bytes_in = incoming.request_state.as_ref().map_or(0, |s| s.len()),
            state_bytes_out = tracing::field::Empty,
            outcome = tracing::field::Empty,
            rejection = tracing::field::Empty,
        );
        let mut rejection = None;
        let result = self
            .serve_in_span(machine, incoming, &mut rejection, guard)
            .instrument(span)
            .await;
        (result, rejection)
    }

    async fn serve_in_span<M: Machine + ?Sized>(
        &self,
        machine: &M,
        mut incoming: Incoming<'_>,
        rejection_seen: &mut Option<&'static str>,
        guard: Option<&Guard<'_, M::Output>>,
    ) -> Served<M::Output> {
        let principal = incoming.principal.take();
        let span = tracing::Span::current();
        let descriptor = machine.descriptor();
        let binding = Binding::new(
            &self.audience,
            descriptor.method().into(),
            descriptor.name(),
            Some(incoming.arguments),
            principal.as_deref(),
        );
        let envelope = match &incoming.request_state {
            None => None,
            Some(token) => match self.sealer.open(token, &binding) {
                Ok(envelope) => Some(envelope),
                Err(rejection) => {
                    span.record("rejection", rejection.reason());
                    *rejection_seen = Some(rejection.reason());
                    span.record("outcome", "rejected");
                    tracing::warn!(%rejection, "requestState rejected");
                    return Err(errors::rejected_state());
                }
            },
        };
        // An authentic resumed round is claimed before any of its code runs (forged tokens
        // never reach the ledger).
        let held = match (guard, &self.rounds, &incoming.request_state, &envelope) {
            (Some(guard), Some(rounds), Some(token), Some(envelope))
                if descriptor.rounds != RoundPolicy::Unprotected =>
            {
                let responses = incoming.input_responses.as_ref();
                // The ledger's futures are boxed: held inline, they would make every
                // request's future (and each copy of it) kilobytes larger, ledger or not.
                match Box::pin(rounds.claim(
                    token,
                    envelope.expires_at,
                    responses,
                    descriptor.rounds,
                ))
                .await
                {
                    Claimed::Run(held) => Some((rounds, held)),
                    Claimed::Answered(response) => {
                        span.record("outcome", "replayed");
                        return (guard.decode)(&response).unwrap_or_else(|| {
                            Err(errors::internal("a recorded round outcome does not decode"))
                        });
                    }
                    Claimed::Refused(error) => {
                        span.record("outcome", "refused by the round ledger");
                        return Err(error);
                    }
                }
            }
            _ => None,
        };
        let hand_off = guard.and_then(|guard| guard.hand_off);
        let run = async {
            let served = self
                .resume_opened(
                    machine,
                    (&binding, &principal),
                    incoming,
                    envelope,
                    rejection_seen,
                )
                .await;
            match (served, hand_off) {
                (Ok(Answer::Handoff(handoff)), Some(hand_off)) => hand_off(handoff).await,
                (served, _) => served,
            }
        };
        let mut served = match &held {
            Some((rounds, held)) => Box::pin(rounds.renewing(held, run)).await,
            None => run.await,
        };
        if let Some(guard) = guard {
            (guard.finish)(&mut served);
            if let Some((rounds, held)) = held {
                Box::pin(rounds.record(held, (guard.encode)(&served))).await;
            }
        }
        served
    }

    /// Opens nothing: resumes the machine from an opened `envelope` (or starts it) and runs
    /// it to its next suspension or its end.
    async fn resume_opened<M: Machine + ?Sized>(
        &self,
        machine: &M,
        (binding, principal): (&Binding<'_>, &Option<String>),
        incoming: Incoming<'_>,
        envelope: Option<Envelope>,
        rejection_seen: &mut Option<&'static str>,
    ) -> Served<M::Output> {
        let span = tracing::Span::current();
        // Every rejection code goes to the span (the server log) and to the caller.
        let mut reject = |reason: &'static str| {
            span.record("rejection", reason);
            *rejection_seen = Some(reason);
        };
        let descriptor = machine.descriptor();

        let mut responses = incoming.input_responses.unwrap_or_default();
        let mut origin = Origin::Fresh;
        let mut resume = None;
        let mut completed_rounds = 0;

        if let Some(envelope) = envelope {
            // Authentic but from another version of the tool: its code changed (another
            // fingerprint), or a form it asked is not one this build has (its schema changed).
            let decoded = match envelope.check_fingerprint(descriptor.fingerprint) {
                Err(stale) => Err((stale.reason(), stale.to_string())),
                Ok(()) => match decode_for_resume(&envelope.payload, descriptor.literals) {
                    Ok(decoded) => Ok(decoded),
                    Err(PayloadError::UnknownForm(detail)) => Err(("unknown_form", detail)),
                    Err(PayloadError::Undecodable(reason)) => {
                        reject("undecodable_pending_request");
                        tracing::warn!(%reason, "requestState rejected");
                        return Err(errors::rejected_state());
                    }
                },
            };
            match decoded {
                Ok((asked, recipes, state)) => {
                    completed_rounds = envelope.round;
                    let answers = Answers::from_asked(asked, std::mem::take(&mut responses));
                    resume = Some(Resume::new(state.clone(), answers));
                    origin = Origin::Token(Pending {
                        requests: None,
                        recipes,
                        state,
                        round: envelope.round,
                        not_after: u64::from(envelope.expires_at),
                    });
                }
                Err((reason, stale)) => {
                    reject(reason);
                    match self.stale_state {
                        StaleStatePolicy::Reject => {
                            span.record("outcome", "rejected");
                            tracing::warn!(%stale, "requestState sealed by another version of this machine");
                            return Err(errors::rejected_state());
                        }
                        StaleStatePolicy::Restart => {
                            tracing::info!(%stale, "requestState sealed by another version; restarting the flow");
                            // Answers belong to the old flow's questions.
                            responses.clear();
                        }
                    }
                }
            }
        }

        loop {
            span.record("round", completed_rounds);
            if incoming.handoff_at.is_some_and(|at| completed_rounds >= at) {
                span.record("outcome", "continues as a task");
                let asked = match &origin {
                    Origin::Fresh => None,
                    Origin::Token(pending) | Origin::EagerAnswers(pending) => {
                        let requests = match &pending.requests {
                            Some(requests) => requests.clone(),
                            None => rebuild_requests(&pending.recipes, descriptor.literals)
                                .map_err(|e| errors::internal(&e.to_string()))?,
                        };
                        Some((requests, pending.state.clone()))
                    }
                };
                return Ok(Answer::Handoff(Handoff {
                    resume: resume.take(),
                    round: completed_rounds,
                    asked,
                }));
            }
            let cx = self.request_cx(&incoming.capabilities, principal, completed_rounds);
            let run = Run {
                arguments: incoming.arguments,
                resume: resume.take(),
                cx: &cx,
            };
            match super::unwind::step_catching_panics(machine, run).await {
                Ok(Step::Done(output)) => {
                    span.record("outcome", "complete");
                    return Ok(Answer::Complete(output));
                }
                Ok(Step::Suspend(suspend)) => {
                    let pending = into_pending(suspend, completed_rounds + 1, descriptor.literals)
                        .map_err(|e| {
                            errors::internal(&format!("an input request does not serialize: {e}"))
                        })?;
                    // A first call may carry answers to the questions it is about to be
                    // asked (stateless clients do this); use them once, right away.
                    if matches!(origin, Origin::Fresh)
                        && !pending.recipes.is_empty()
                        && pending
                            .recipes
                            .iter()
                            .all(|(key, _)| responses.get(key).is_some_and(|v| !v.is_null()))
                    {
                        let asked = pending.requests.clone().unwrap_or_default();
                        let answers = Answers::new(asked, std::mem::take(&mut responses));
                        resume = Some(Resume::new(pending.state.clone(), answers));
                        completed_rounds = pending.round;
                        origin = Origin::EagerAnswers(pending);
                        continue;
                    }
                    return self.ask(binding, &incoming.capabilities, descriptor, pending);
                }
                Err(StepError::Answer(problem))
                    if *problem.problem() == AnswerProblem::NotAsked
                        && matches!(origin, Origin::Token(_)) =>
                {
                    // The sealed pending requests do not match the state they were sealed
                    // with: only a forged (leaked-key) or incompatible token does that.
                    span.record("outcome", "rejected");
                    reject("pending_requests_do_not_match_state");
                    tracing::warn!(%problem, "authentic requestState resumes at a key it never asked");
                    return Err(errors::rejected_state());
                }
                Err(StepError::Answer(problem))
                    if *problem.problem() == AnswerProblem::NotAsked =>
                {
                    // The machine took a key it never asked: its bug, not the client's.
                    span.record("outcome", "internal error");
                    return Err(errors::internal(&problem.to_string()));
                }
                Err(StepError::Answer(problem)) => {
                    tracing::info!(key = problem.key(), problem = %problem.problem(), "asking again");
                    match origin {
                        Origin::Token(pending) | Origin::EagerAnswers(pending) => {
                            return self.ask(binding, &incoming.capabilities, descriptor, pending);
                        }
                        Origin::Fresh => {
                            return Err(errors::internal(&format!(
                                "machine took an answer on a fresh call: {problem}"
                            )));
                        }
                    }
                }
                Err(StepError::InvalidArguments(cause)) => {
                    span.record("outcome", "invalid arguments");
                    return Err(errors::invalid_arguments(&*cause));
                }
                Err(StepError::StateMismatch(cause)) => {
                    span.record("outcome", "rejected");
                    reject("undecodable_state");
                    tracing::warn!(detail = %ErrorChain(&*cause), "authentic requestState does not decode as this machine's state");
                    return Err(errors::rejected_state());
                }
                Err(error @ StepError::Unstorable { .. }) => {
                    span.record("outcome", "unstorable state");
                    return Err(errors::unstorable_state(descriptor.name(), &error));
                }
                Err(error) => {
                    span.record("outcome", "internal error");
                    return Err(errors::internal(&ErrorChain(&error).to_string()));
                }
            }
        }
    }

    /// Gates the requests on this request's capabilities, seals the state, and builds the
    /// `input_required` result.
    fn ask<O>(
        &self,
        binding: &Binding<'_>,
        capabilities: &ClientCapabilities,
        descriptor: &MachineDescriptor,
        pending: Pending,
    ) -> Result<Answer<O>, ErrorData> {
        let span = tracing::Span::current();
        let requests = match pending.requests {
            Some(requests) => requests,
            None => rebuild_requests(&pending.recipes, descriptor.literals)
                .map_err(|e| errors::internal(&e.to_string()))?,
        };
        let mut undeclared: Vec<InputKind> = requests
            .iter()
            .map(|(_, request)| InputKind::of(request))
            .filter(|kind| !kind.is_declared_by(capabilities))
            .collect();
        if !undeclared.is_empty() {
            undeclared.sort();
            undeclared.dedup();
            span.record("outcome", "missing capability");
            return Err(errors::missing_capabilities(&undeclared));
        }
        let payload = encode_payload(&pending.recipes, &pending.state).map_err(|e| {
            errors::internal(&format!("the pending input requests do not encode: {e}"))
        })?;
        let token = self
            .sealer
            .seal_expiring_by(
                binding,
                SealInput {
                    fingerprint: descriptor.fingerprint,
                    round: pending.round,
                    payload,
                },
                pending.not_after,
            )
            .map_err(|e| match e {
                // The client's arguments or answers made the state too big: its input, so
                // invalid params, and only a rate-limited WARN (clients cannot flood the log).
                crate::token::SealError::TooLarge { size, limit } => {
                    span.record("outcome", "state too large");
                    errors::state_too_large(size, limit)
                }
                other => errors::internal(&format!("cannot seal the state: {other}")),
            })?;
        span.record("state_bytes_out", token.len());
        span.record("outcome", "input_required");
        let requests: BTreeMap<String, InputRequest> = requests.into_iter().collect();
        let input_requests = (!requests.is_empty()).then_some(requests);
        Ok(Answer::InputRequired(InputRequiredResult::new(
            input_requests,
            Some(token),
        )))
    }
}

fn into_pending(
    suspend: Suspend,
    round: u32,
    literals: &[&str],
) -> Result<Pending, serde_json::Error> {
    let (requests, recipes, state) = suspend.into_stored_parts();
    let recipes = recipes
        .iter()
        .zip(&requests)
        .map(|(recipe, (key, request))| Ok((key.clone(), recipe.stored(request, literals)?)))
        .collect::<Result<_, _>>()?;
    Ok(Pending {
        requests: Some(requests),
        recipes,
        state,
        round,
        not_after: u64::MAX,
    })
}

/// The sealed payload: `postcard([(key, recipe)])` followed by the machine's state bytes
/// (postcard is self-delimiting, so the state needs no length prefix).
pub(crate) fn encode_payload(
    recipes: &[(String, Recipe)],
    state: &[u8],
) -> Result<Vec<u8>, postcard::Error> {
    let mut payload = postcard::to_allocvec(recipes)?;
    payload.extend_from_slice(state);
    Ok(payload)
}

/// The pending requests (rebuilt from their recipes), the keyed recipes, and the state.
#[cfg(feature = "fuzzing")]
type Decoded = (Vec<(String, InputRequest)>, Vec<(String, Recipe)>, Vec<u8>);

/// Why a sealed payload does not give back its pending requests.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    /// It does not decode, or a request does not rebuild: only a forged token does that.
    #[error("{0}")]
    Undecodable(String),
    /// It asks a form this build does not have: sealed by another version of the code.
    #[error("{0}")]
    UnknownForm(String),
}

#[cfg(feature = "fuzzing")]
pub(crate) fn decode_payload(
    payload: &[u8],
    literals: &[&'static str],
) -> Result<Decoded, PayloadError> {
    let (recipes, state) = decode_recipes(payload)?;
    let requests = rebuild_requests(&recipes, literals)?;
    Ok((requests, recipes, state.to_vec()))
}

/// The keyed recipes of a sealed payload.
type Recipes = Vec<(String, Recipe)>;

/// The questions a resumed round's answers are taken against, the keyed recipes, and the
/// state.
type Resumable = (Vec<(String, Question)>, Recipes, Vec<u8>);

/// Like `decode_payload`, for resuming: a one-field question or a registered form is
/// checked (its form is known and every string it refers to resolves, as a rebuild would
/// check) but kept as its recipe, since its answer is checked against its form alone; any
/// other request is rebuilt.
fn decode_for_resume(
    payload: &[u8],
    literals: &'static [&'static str],
) -> Result<Resumable, PayloadError> {
    let (recipes, state) = decode_recipes(payload)?;
    let asked = recipes
        .iter()
        .map(|(key, recipe)| {
            let checked = match recipe.single_field(literals) {
                Some(field) => Some(field.map(drop)),
                None => recipe.registered_form(literals).map(|form| form.map(drop)),
            };
            let asked = match checked {
                Some(Ok(())) => Question::Stored {
                    recipe: recipe.clone(),
                    literals,
                },
                Some(Err(error)) => return Err(rebuild_error(key, error)),
                None => Question::Sent(
                    recipe
                        .rebuild(literals)
                        .map_err(|error| rebuild_error(key, error))?,
                ),
            };
            Ok((key.clone(), asked))
        })
        .collect::<Result<_, _>>()?;
    Ok((asked, recipes, state.to_vec()))
}

/// The keyed recipes of a payload, and the machine's state bytes after them.
fn decode_recipes(payload: &[u8]) -> Result<(Recipes, &[u8]), PayloadError> {
    postcard::take_from_bytes::<Vec<(String, Recipe)>>(payload)
        .map_err(|e| PayloadError::Undecodable(format!("sealed input requests do not decode: {e}")))
}

fn rebuild_requests(
    recipes: &[(String, Recipe)],
    literals: &[&'static str],
) -> Result<Vec<(String, InputRequest)>, PayloadError> {
    recipes
        .iter()
        .map(|(key, recipe)| {
            let request = recipe
                .rebuild(literals)
                .map_err(|error| rebuild_error(key, error))?;
            Ok((key.clone(), request))
        })
        .collect()
}

/// A sealed request that does not rebuild: from another version of the code (an unknown
/// form), or forged.
fn rebuild_error(key: &str, error: RebuildError) -> PayloadError {
    let detail = format!("sealed input request `{key}` does not rebuild: {error}");
    match error {
        RebuildError::UnknownForm => PayloadError::UnknownForm(detail),
        RebuildError::Invalid(_) => PayloadError::Undecodable(detail),
    }
}
