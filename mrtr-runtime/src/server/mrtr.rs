//! The MRTR carrier (2026-07-28): a round's state travels sealed through the client.
//!
//! One presentation goes one way, in three calls the server makes in order:
//! [`Mrtr::begin`] opens the `requestState` (and claims the round in the ledger, or
//! answers what the ledger recorded), [`round::step_round`](super::round::step_round) runs
//! the round, [`Mrtr::reply`] seals what it asks, and [`Mrtr::conclude`] stamps the reply
//! and records it in the ledger. Nothing here calls back into the server.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use futures::future::Either;

use rmcp::ErrorData;
use rmcp::model::{
    CreateTaskResult, InputRequest, InputRequiredResult, InputResponses, JsonObject,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::errors;
use super::ledger::rounds::{Claimed, Held, Rounds};
use super::mcp_server::RecordSlot;
use super::payload::{self, PayloadError};
use super::ratelimit::log_limited;
use super::round::{
    Ask, Asked, Caller, Era, Resumed, RoundError, RoundInput, RoundLimits, RoundOutcome, Start,
    step_round,
};
use super::stamp::{Stamp, WithServerInfo};
use crate::machine::{Answers, AppStates, Machine, MachineDescriptor, ReplayPolicy, Resume};
use crate::token::{Binding, Envelope, SealError, SealInput, StateSealer};

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

/// One incoming `tools/call`, `prompts/get` or `resources/read`, as the MRTR carrier sees it.
#[derive(Debug)]
pub(crate) struct MrtrRequest<'a> {
    pub(crate) arguments: &'a JsonObject,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
    pub(crate) caller: Caller,
    /// For a task tool: after this many rounds the call continues as a task.
    pub(crate) task_after: Option<u32>,
    /// The reply's writer adds the stamp to a result without `_meta` as it writes it (the
    /// native HTTP path): the reply is not stamped here unless the ledger records it.
    pub(crate) stamped_on_write: bool,
    /// Where that writer takes a recorded round's record from, to write the reply from it.
    pub(crate) record_slot: Option<RecordSlot>,
}

/// What the client gets for one round.
#[derive(Debug)]
pub(crate) enum RoundReply<O> {
    /// The machine finished.
    Complete(O),
    /// The client must answer and retry.
    InputRequired(InputRequiredResult),
    /// The call continues as this task.
    Task(CreateTaskResult),
}

/// The per-server part of MRTR: sealing, the ledger, and the policies.
pub(crate) struct Mrtr {
    pub(crate) sealer: StateSealer,
    pub(crate) audience: String,
    pub(crate) stale_state: StaleStatePolicy,
    /// The application states `State<T>` parameters are filled from.
    pub(crate) states: Arc<AppStates>,
    /// The round ledger, when the server has one.
    pub(crate) rounds: Option<Rounds>,
    /// Rounds one call may take.
    pub(crate) max_rounds: u32,
    /// How long one round's own code may run.
    pub(crate) round_timeout: super::round::RoundTimeouts,
    /// What every reply's `_meta` is stamped with.
    pub(crate) stamp: Arc<Stamp>,
}

/// One presentation of a round, between [`Mrtr::begin`] and [`Mrtr::conclude`].
pub(crate) struct Pass<'a> {
    descriptor: &'a MachineDescriptor,
    audience: &'a str,
    arguments: &'a JsonObject,
    caller: Caller,
    task_after: Option<u32>,
    /// See [`MrtrRequest::stamped_on_write`].
    stamped_on_write: bool,
    /// See [`MrtrRequest::record_slot`].
    record_slot: Option<RecordSlot>,
    /// Where the round starts; taken by [`Pass::round_input`].
    start: Option<Start>,
    /// The claim on the round in the ledger, when it has one.
    held: Option<Held>,
    /// A question asked again keeps the expiry it already had.
    not_after: u64,
    /// Why a `requestState` was refused or set aside (the span's `rejection`).
    rejection: Option<&'static str>,
    /// The arguments' digest, made at most once (opening and sealing both bind to it).
    arguments_digest: std::cell::OnceCell<[u8; 32]>,
}

/// A presentation opened without waiting: decided, or its round to claim in the ledger.
#[allow(clippy::large_enum_variant)]
enum Opened<'a> {
    Ready(Result<Begun<'a>, (ErrorData, Option<&'static str>)>),
    Claim(Claiming<'a>),
}

/// An opened presentation whose round the ledger must grant before it runs.
struct Claiming<'a> {
    rounds: &'a Rounds,
    pass: Pass<'a>,
    token: String,
    envelope: Envelope,
    responses: InputResponses,
}

/// What [`Mrtr::begin`] decided.
// Made once per request and matched at once: boxing the pass would cost an allocation per
// request to save a move.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Begun<'a> {
    /// Run the round.
    Run(Pass<'a>),
    /// The ledger already holds this round's reply (encoded with [`Mrtr::conclude`]).
    Replayed(Vec<u8>),
}

impl Pass<'_> {
    /// Why the presented `requestState` was refused or set aside, if it was.
    #[cfg(feature = "testing")]
    pub(crate) fn rejection(&self) -> Option<&'static str> {
        self.rejection
    }

    /// The round to run, and the claim to renew while it runs.
    pub(crate) fn round_input<'p>(
        &'p mut self,
        states: &'p Arc<AppStates>,
        limits: RoundLimits,
    ) -> (RoundInput<'p>, Option<&'p Held>) {
        let start = self.start.take().unwrap_or(Start::Fresh {
            early_answers: InputResponses::default(),
        });
        // The rounds the call had taken when this request arrived.
        let round = match &start {
            Start::Fresh { .. } => 0,
            Start::Resumed(resumed) => resumed.round,
        };
        tracing::Span::current().record("round", round);
        let input = RoundInput {
            arguments: self.arguments,
            caller: &self.caller,
            states,
            limits,
            task_after: self.task_after,
            start,
            literals: self.descriptor.literals,
        };
        (input, self.held.as_ref())
    }

    fn binding(&self) -> Binding<'_> {
        let digest = *self
            .arguments_digest
            .get_or_init(|| crate::token::arguments_digest(Some(self.arguments)));
        Binding::with_arguments_digest(
            self.audience,
            self.descriptor.method(),
            self.descriptor.name(),
            digest,
            self.caller.principal.as_deref(),
        )
    }

    fn reject(&mut self, reason: &'static str) {
        tracing::Span::current().record("rejection", reason);
        self.rejection = Some(reason);
    }
}

impl Mrtr {
    /// The span one presentation runs in (`mrtr.round`).
    pub(crate) fn span(descriptor: &MachineDescriptor, request: &MrtrRequest<'_>) -> tracing::Span {
        tracing::info_span!(
            "mrtr.round",
            method = descriptor.method().as_str(),
            target = descriptor.name(),
            round = tracing::field::Empty,
            state_bytes_in = request.request_state.as_ref().map_or(0, |s| s.len()),
            state_bytes_out = tracing::field::Empty,
            outcome = tracing::field::Empty,
            rejection = tracing::field::Empty,
        )
    }

    /// Checks the machine's declared scopes against what the request grants, opens the
    /// request's `requestState` (if any), claims the round in the ledger (when the server
    /// has one and the machine's rounds are protected), and decodes where the round
    /// starts. A refused state is `Err` with the one fixed message; the reason goes
    /// to the span and the log only.
    ///
    /// Everything before the claim runs at once; the returned future is the claim (boxed,
    /// and only when there is one to make), so a request's future never carries the
    /// opening's locals.
    pub(crate) fn begin<'a>(
        &'a self,
        descriptor: &'a MachineDescriptor,
        request: MrtrRequest<'a>,
    ) -> impl Future<Output = Result<Begun<'a>, (ErrorData, Option<&'static str>)>> + Send + 'a
    {
        match self.open(descriptor, request) {
            Opened::Ready(begun) => Either::Left(std::future::ready(begun)),
            Opened::Claim(claiming) => Either::Right(Box::pin(self.claimed(claiming))),
        }
    }

    /// [`begin`](Self::begin) up to the ledger's claim.
    fn open<'a>(
        &'a self,
        descriptor: &'a MachineDescriptor,
        request: MrtrRequest<'a>,
    ) -> Opened<'a> {
        let span = tracing::Span::current();
        let MrtrRequest {
            arguments,
            input_responses,
            request_state,
            caller,
            task_after,
            stamped_on_write,
            record_slot,
        } = request;
        // Before the state is opened or its round claimed: a request whose token lacks a
        // declared scope never reaches the ledger, so its refusal is not recorded as the
        // round's reply and replayed once the caller comes back with a stepped-up token.
        if let Err(scopes) = caller.scopes.check(&descriptor.scopes) {
            let refused = RoundError::InsufficientScope(scopes);
            span.record("outcome", refused.label());
            return Opened::Ready(Err((
                refused.to_error(descriptor.name(), &Era::Stateless),
                None,
            )));
        }
        let mut pass = Pass {
            descriptor,
            audience: &self.audience,
            arguments,
            caller,
            task_after,
            stamped_on_write,
            record_slot,
            start: None,
            held: None,
            not_after: u64::MAX,
            rejection: None,
            arguments_digest: std::cell::OnceCell::new(),
        };
        let responses = input_responses.unwrap_or_default();
        let Some(token) = request_state else {
            pass.start = Some(Start::Fresh {
                early_answers: responses,
            });
            return Opened::Ready(Ok(Begun::Run(pass)));
        };
        let envelope = match self.sealer.open(&token, &pass.binding()) {
            Ok(envelope) => envelope,
            Err(rejection) => {
                pass.reject(rejection.reason());
                span.record("outcome", "rejected");
                log_limited!(warn, %rejection, "requestState rejected");
                return Opened::Ready(Err((errors::rejected_state(), pass.rejection)));
            }
        };
        // An authentic resumed round is claimed before any of its code runs (forged tokens
        // never reach the ledger).
        if let Some(rounds) = &self.rounds
            && descriptor.replay != ReplayPolicy::Unprotected
        {
            return Opened::Claim(Claiming {
                rounds,
                pass,
                token,
                envelope,
                responses,
            });
        }
        Opened::Ready(self.opened(pass, envelope, responses))
    }

    /// Claims an opened round in the ledger, then decodes where it starts.
    async fn claimed<'a>(
        &'a self,
        claiming: Claiming<'a>,
    ) -> Result<Begun<'a>, (ErrorData, Option<&'static str>)> {
        let Claiming {
            rounds,
            mut pass,
            token,
            envelope,
            responses,
        } = claiming;
        let claim = rounds.claim(
            &token,
            envelope.expires_at,
            Some(&responses),
            pass.descriptor.replay,
        );
        let span = tracing::Span::current();
        match claim.await {
            Claimed::Run(held) => pass.held = Some(held),
            Claimed::Answered(recorded) => {
                span.record("outcome", "replayed");
                return Ok(Begun::Replayed(recorded));
            }
            Claimed::Refused(error) => {
                span.record("outcome", "refused by the round ledger");
                return Err((error, None));
            }
        }
        self.opened(pass, envelope, responses)
    }

    /// Where an opened (and, with a ledger, claimed) round starts.
    fn opened<'a>(
        &self,
        mut pass: Pass<'a>,
        envelope: Envelope,
        mut responses: InputResponses,
    ) -> Result<Begun<'a>, (ErrorData, Option<&'static str>)> {
        match self.resumed(&mut pass, envelope, &mut responses) {
            Ok(Some(resumed)) => pass.start = Some(Start::Resumed(resumed)),
            Ok(None) => {
                pass.start = Some(Start::Fresh {
                    early_answers: responses,
                })
            }
            Err(error) => return Err((error, pass.rejection)),
        }
        Ok(Begun::Run(pass))
    }

    /// Where an opened state resumes: `None` when it is stale and the flow restarts.
    fn resumed(
        &self,
        pass: &mut Pass<'_>,
        envelope: Envelope,
        responses: &mut InputResponses,
    ) -> Result<Option<Resumed>, ErrorData> {
        let descriptor = pass.descriptor;
        // This server never seals a round past its cap: such a state was sealed under a
        // higher cap (another configuration) or with a leaked key. Refused like any bad state.
        if envelope.round > self.max_rounds {
            pass.reject("round_beyond_cap");
            tracing::Span::current().record("outcome", "rejected");
            log_limited!(
                warn,
                round = envelope.round,
                cap = self.max_rounds,
                "requestState rejected: sealed past this server's round cap"
            );
            return Err(errors::rejected_state());
        }
        // Authentic but from another version of the tool: its code changed (another
        // fingerprint), or a form it asked is not one this build has (its schema changed).
        let stale = match envelope.check_fingerprint(descriptor.fingerprint) {
            Err(stale) => (stale.reason(), stale.to_string()),
            Ok(()) => match payload::decode_for_resume(&envelope.payload, descriptor.literals) {
                Ok((questions, recipes, state)) => {
                    pass.not_after = u64::from(envelope.expires_at);
                    let answers = Answers::from_asked(questions, std::mem::take(responses));
                    return Ok(Some(Resumed {
                        resume: Resume::new(state.clone(), answers),
                        asked: Asked {
                            requests: None,
                            recipes,
                            state,
                        },
                        round: envelope.round,
                        through_client: true,
                    }));
                }
                Err(PayloadError::UnknownForm(detail)) => ("unknown_form", detail),
                Err(PayloadError::Undecodable(reason)) => {
                    pass.reject("undecodable_pending_request");
                    log_limited!(warn, %reason, "requestState rejected: undecodable pending requests");
                    return Err(errors::rejected_state());
                }
            },
        };
        let (reason, stale) = stale;
        pass.reject(reason);
        match self.stale_state {
            StaleStatePolicy::Reject => {
                tracing::Span::current().record("outcome", "rejected");
                log_limited!(warn, %stale, "requestState sealed by another version of this machine");
                Err(errors::rejected_state())
            }
            StaleStatePolicy::Restart => {
                tracing::info!(%stale, "requestState sealed by another version; restarting the flow");
                // Answers belong to the old flow's questions.
                responses.clear();
                Ok(None)
            }
        }
    }

    /// Runs `work` while the claim on its round (if any) is renewed.
    ///
    /// Not an `async fn`: that would keep `work` twice (as its argument and as what it
    /// awaits), and `work` is most of a request's future.
    pub(crate) fn renewing<'a, F: Future + Send + 'a>(
        &'a self,
        held: Option<&'a Held>,
        work: F,
    ) -> impl Future<Output = F::Output> + Send + 'a {
        match (&self.rounds, held) {
            (Some(rounds), Some(held)) => Either::Left(Box::pin(rounds.renewing(held, work))),
            _ => Either::Right(work),
        }
    }

    /// The reply to a round's outcome: the result, the sealed questions, or the error from
    /// the round core's table. A hand-off is the server's to turn into a task before this.
    pub(crate) fn reply<O>(
        &self,
        pass: &mut Pass<'_>,
        outcome: RoundOutcome<O>,
    ) -> Result<RoundReply<O>, ErrorData> {
        let span = tracing::Span::current();
        span.record("outcome", outcome.label());
        match outcome {
            RoundOutcome::Done(output) => Ok(RoundReply::Complete(output)),
            RoundOutcome::Ask(ask) => self.seal(pass, ask).map(RoundReply::InputRequired),
            RoundOutcome::HandOff(_) => Err(errors::internal(
                "a round handed off to a task on a server without tasks",
            )),
            RoundOutcome::Failed(error) => {
                if let RoundError::RejectedState(reason) = &error {
                    pass.reject(reason);
                }
                Err(error.to_error(pass.descriptor.name(), &Era::Stateless))
            }
        }
    }

    /// Seals the ask's state and builds the `input_required` result.
    fn seal(&self, pass: &Pass<'_>, ask: Ask) -> Result<InputRequiredResult, ErrorData> {
        let span = tracing::Span::current();
        let payload = payload::encode_payload(&ask.recipes, &ask.state).map_err(|e| {
            errors::internal(&format!("the pending input requests do not encode: {e}"))
        })?;
        let not_after = if ask.again { pass.not_after } else { u64::MAX };
        let largest = ask.largest;
        let input = SealInput {
            fingerprint: pass.descriptor.fingerprint,
            round: ask.round,
            payload,
        };
        let token = self
            .sealer
            .seal_expiring_by(&pass.binding(), input, not_after)
            .map_err(|e| match e {
                SealError::TooLarge { size, limit } => {
                    span.record("outcome", "state too large");
                    RoundError::StateTooLarge {
                        size,
                        limit,
                        largest,
                    }
                    .to_error(pass.descriptor.name(), &Era::Stateless)
                }
                other => errors::internal(&format!("cannot seal the state: {other}")),
            })?;
        span.record("state_bytes_out", token.len());
        let requests: BTreeMap<String, InputRequest> = ask.requests.into_iter().collect();
        let input_requests = (!requests.is_empty()).then_some(requests);
        Ok(InputRequiredResult::new(input_requests, Some(token)))
    }

    /// Stamps the reply and hands it to the ledger to record when the pass holds its round
    /// (the reply does not wait for the record). A reply whose writer stamps it
    /// ([`MrtrRequest::stamped_on_write`]) is left as it is; when it is recorded, its record
    /// is written with the stamp that writer will add, as text, so a recorded reply is
    /// stamped as the round that made it was, whoever replays it.
    pub(crate) fn conclude<O>(
        &self,
        pass: Pass<'_>,
        mut reply: Result<RoundReply<O>, ErrorData>,
    ) -> Result<RoundReply<O>, ErrorData>
    where
        O: Serialize + WithServerInfo,
    {
        let recorded = self.rounds.is_some() && pass.held.is_some();
        // The record gets the stamp as text when the writer adds it the same way (a result
        // without a `_meta`); one with a `_meta` of its own is stamped here when recorded.
        let spliced = recorded && pass.stamped_on_write && without_meta(&mut reply);
        let stamp_now = !pass.stamped_on_write || (recorded && !spliced);
        if let Ok(reply) = &mut reply {
            match reply {
                RoundReply::Complete(result) if stamp_now => {
                    if let Some(meta) = result.meta_mut() {
                        self.stamp.apply(meta);
                    }
                }
                RoundReply::InputRequired(result) if stamp_now => {
                    self.stamp.apply(&mut result.meta)
                }
                // A task's creation is stamped here on every path.
                RoundReply::Task(created) => self.stamp.apply(&mut created.meta),
                RoundReply::Complete(_) | RoundReply::InputRequired(_) => {}
            }
        }
        if let (Some(rounds), Some(held)) = (&self.rounds, pass.held) {
            let record = encode_reply(&reply, spliced.then_some(&*self.stamp));
            // The writer writes the reply from its record: the same bytes, encoded once.
            if spliced && let (Some(slot), Some(record)) = (&pass.record_slot, &record) {
                let _ = slot.set(record.clone());
            }
            rounds.record(held, record);
        }
        reply
    }

    /// A reply the ledger recorded.
    pub(crate) fn replayed<O: DeserializeOwned>(
        recorded: &[u8],
    ) -> Result<RoundReply<O>, ErrorData> {
        decode_reply(recorded)
            .unwrap_or_else(|| Err(errors::internal("a recorded round outcome does not decode")))
    }

    /// The limits every round of this server is held to.
    pub(crate) fn limits(&self) -> RoundLimits {
        RoundLimits {
            max_rounds: self.max_rounds,
            max_state_bytes: self.max_state_bytes(),
            round_timeout: self.round_timeout.clone(),
        }
    }

    /// The largest `requestState` this server seals or opens.
    pub(crate) fn max_state_bytes(&self) -> usize {
        self.sealer.max_token_bytes()
    }

    /// Serves one presentation of a round whose machine never continues as a task.
    ///
    /// Not an `async fn`: the presentation is opened at once, so the future keeps only
    /// the opened round (and, with a ledger, its boxed claim), not the request as well.
    pub(crate) fn serve<'a, M>(
        &'a self,
        machine: &'a M,
        request: MrtrRequest<'a>,
    ) -> impl Future<Output = Result<RoundReply<M::Output>, ErrorData>> + Send + 'a
    where
        M: Machine + ?Sized,
        M::Output: Serialize + DeserializeOwned + WithServerInfo,
    {
        let begun = match self.open(machine.descriptor(), request) {
            Opened::Ready(begun) => begun,
            Opened::Claim(claiming) => {
                return Either::Right(Box::pin(async move {
                    match self.claimed(claiming).await {
                        Ok(Begun::Run(pass)) => self.run(machine, pass).await,
                        Ok(Begun::Replayed(recorded)) => Self::replayed(&recorded),
                        Err((error, _)) => Err(error),
                    }
                }));
            }
        };
        Either::Left(match begun {
            Ok(Begun::Run(pass)) => Either::Left(self.run(machine, pass)),
            Ok(Begun::Replayed(recorded)) => {
                Either::Right(std::future::ready(Self::replayed(&recorded)))
            }
            Err((error, _)) => Either::Right(std::future::ready(Err(error))),
        })
    }

    /// Runs an opened (and, with a ledger, claimed) round: its step, then its reply. An
    /// `async` block, not an `async fn`, which would keep the round's pass twice.
    #[allow(clippy::manual_async_fn)]
    fn run<'a, M>(
        &'a self,
        machine: &'a M,
        mut pass: Pass<'a>,
    ) -> impl Future<Output = Result<RoundReply<M::Output>, ErrorData>> + Send + 'a
    where
        M: Machine + ?Sized,
        M::Output: Serialize + DeserializeOwned + WithServerInfo,
    {
        async move {
            let (input, held) = pass.round_input(&self.states, self.limits());
            let outcome = self.renewing(held, step_round(machine, input)).await;
            let reply = self.reply(&mut pass, outcome);
            self.conclude(pass, reply)
        }
    }

    /// Serves one presentation without a ledger or stamps, also returning why a
    /// `requestState` was refused or set aside: the test kit's view.
    #[cfg(feature = "testing")]
    pub(crate) async fn serve_explained<M: Machine + ?Sized>(
        &self,
        machine: &M,
        request: MrtrRequest<'_>,
    ) -> (
        Result<RoundReply<M::Output>, ErrorData>,
        Option<&'static str>,
    ) {
        use tracing::Instrument as _;
        let span = Self::span(machine.descriptor(), &request);
        async {
            let mut pass = match self.begin(machine.descriptor(), request).await {
                Ok(Begun::Run(pass)) => pass,
                Ok(Begun::Replayed(_)) => {
                    return (Err(errors::internal("the test kit has no ledger")), None);
                }
                Err((error, rejection)) => return (Err(error), rejection),
            };
            let (input, _) = pass.round_input(&self.states, self.limits());
            let outcome = step_round(machine, input).await;
            let reply = self.reply(&mut pass, outcome);
            (reply, pass.rejection())
        }
        .instrument(span)
        .await
    }
}

/// How a reply is kept in the round ledger. Written from borrowed parts (`&O`, …: the
/// same bytes as the owned ones, without copying a reply per round), read into owned ones.
#[derive(serde::Serialize, serde::Deserialize)]
enum RecordedReply<O, I = InputRequiredResult, E = ErrorData, T = CreateTaskResult> {
    Complete(O),
    InputRequired(I),
    Error(E),
    Task(T),
}

/// A round's result that a writer stamping on write would stamp: one without a `_meta`.
fn without_meta<O: WithServerInfo>(reply: &mut Result<RoundReply<O>, ErrorData>) -> bool {
    match reply {
        Ok(RoundReply::Complete(result)) => result.meta_mut().is_some_and(|meta| meta.is_none()),
        Ok(RoundReply::InputRequired(result)) => result.meta.is_none(),
        Ok(RoundReply::Task(_)) | Err(_) => false,
    }
}

/// What a record's buffer starts with, besides the `requestState` it carries: a typical
/// record fits (see `REPLY_BYTES` in the HTTP writer).
const RECORD_BYTES: usize = 640;

/// The record of `reply`: the JSON of its owned form, with `stamp` (a stamp its writer adds
/// as it writes it) as the result's `_meta`, written as the stamp applied to it would be.
pub(crate) fn encode_reply<O: Serialize>(
    reply: &Result<RoundReply<O>, ErrorData>,
    stamp: Option<&Stamp>,
) -> Option<Vec<u8>> {
    type Borrowed<'a, O> = RecordedReply<&'a O, (), &'a ErrorData, &'a CreateTaskResult>;
    let state = match reply {
        Ok(RoundReply::InputRequired(result)) => {
            result.request_state.as_ref().map_or(0, String::len)
        }
        _ => 0,
    };
    let mut bytes = Vec::with_capacity(RECORD_BYTES + state);
    match reply {
        Ok(RoundReply::Complete(result)) => {
            serde_json::to_writer(&mut bytes, &Borrowed::Complete(result)).ok()?;
            if let Some(stamp) = stamp {
                with_stamp(&mut bytes, stamp)?;
            }
        }
        Ok(RoundReply::InputRequired(result)) => asking_record(&mut bytes, result, stamp)?,
        Ok(RoundReply::Task(created)) => {
            serde_json::to_writer(&mut bytes, &Borrowed::<O>::Task(created)).ok()?
        }
        Err(error) => serde_json::to_writer(&mut bytes, &Borrowed::<O>::Error(error)).ok()?,
    }
    Some(bytes)
}

/// The record of a reply that asks, written in one pass as the HTTP writer writes it (the
/// bytes rmcp's writer makes, without its `Value` tree per request), `stamp` as its `_meta`.
#[cfg(feature = "server-http")]
fn asking_record(
    bytes: &mut Vec<u8>,
    result: &InputRequiredResult,
    stamp: Option<&Stamp>,
) -> Option<()> {
    let asking = super::asking::Asking(result, stamp.map(Stamp::written));
    serde_json::to_writer(
        bytes,
        &RecordedReply::<(), _, (), ()>::InputRequired(asking),
    )
    .ok()
}

/// The record of a reply that asks (no path stamps on write without `server-http`).
#[cfg(not(feature = "server-http"))]
fn asking_record(
    bytes: &mut Vec<u8>,
    result: &InputRequiredResult,
    stamp: Option<&Stamp>,
) -> Option<()> {
    if stamp.is_some() {
        return None;
    }
    serde_json::to_writer(
        bytes,
        &RecordedReply::<(), _, (), ()>::InputRequired(result),
    )
    .ok()
}

/// `{"Complete":{…}}` with `stamp` as the inner object's `_meta` (it has none).
#[cfg(feature = "server-http")]
fn with_stamp(bytes: &mut Vec<u8>, stamp: &Stamp) -> Option<()> {
    // The variant's name has no colon: the result starts after the first one.
    let start = bytes.iter().position(|&byte| byte == b':')? + 1;
    if bytes.pop() != Some(b'}') || !stamp.write_into(bytes, start) {
        return None;
    }
    bytes.push(b'}');
    Some(())
}

/// Only the native HTTP path stamps on write, and it needs `server-http`.
#[cfg(not(feature = "server-http"))]
fn with_stamp(_: &mut Vec<u8>, _: &Stamp) -> Option<()> {
    None
}

fn decode_reply<O: DeserializeOwned>(bytes: &[u8]) -> Option<Result<RoundReply<O>, ErrorData>> {
    Some(match serde_json::from_slice(bytes).ok()? {
        RecordedReply::Complete(result) => Ok(RoundReply::Complete(result)),
        RecordedReply::InputRequired(result) => Ok(RoundReply::InputRequired(result)),
        RecordedReply::Error(error) => Err(error),
        RecordedReply::Task(created) => Ok(RoundReply::Task(created)),
    })
}

/// A reply that asks one form question, for tests.
#[cfg(test)]
pub(crate) fn a_form_question() -> InputRequiredResult {
    serde_json::from_value(serde_json::json!({
        "inputRequests": {"go": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Go?",
            "requestedSchema": {"type": "object", "properties": {}}}}},
        "requestState": "mrtr3.state",
        "resultType": "input_required",
    }))
    .expect("a reply that asks")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// A reply is recorded as the bytes of its owned form (what earlier instances wrote and
    /// read) and reads back.
    #[test]
    fn a_reply_is_recorded_as_its_owned_form_and_reads_back() {
        let input = a_form_question();
        let error = ErrorData::invalid_params("no", Some(json!({"why": 1})));
        type Reply = Result<RoundReply<Value>, ErrorData>;
        let replies: [(Reply, RecordedReply<Value>); 3] = [
            (
                Ok(RoundReply::Complete(json!({"done": true}))),
                RecordedReply::Complete(json!({"done": true})),
            ),
            (
                Ok(RoundReply::InputRequired(input.clone())),
                RecordedReply::InputRequired(input),
            ),
            (Err(error.clone()), RecordedReply::Error(error)),
        ];
        for (reply, owned) in replies {
            let recorded = encode_reply(&reply, None).unwrap();
            assert_eq!(recorded, serde_json::to_vec(&owned).unwrap());
            let back = decode_reply::<Value>(&recorded).unwrap();
            assert_eq!(encode_reply(&back, None).unwrap(), recorded);
        }
    }

    /// A round's record made with the stamp its writer adds as text is, byte for byte, the
    /// record of the reply with the stamp applied (what every instance wrote before), for
    /// each result a round makes; a result with a `_meta` of its own is not spliced.
    #[cfg(feature = "server-http")]
    #[test]
    fn a_record_with_the_written_stamp_is_the_record_of_the_stamped_reply() {
        use rmcp::model::{
            CallToolResult, ContentBlock, GetPromptResult, Implementation, PromptMessage,
            ReadResourceResult, ResourceContents, Role,
        };

        fn agree<O: Serialize + WithServerInfo + Clone>(result: O, stamp: &Stamp) {
            let mut unstamped: Result<RoundReply<O>, ErrorData> =
                Ok(RoundReply::Complete(result.clone()));
            assert!(without_meta(&mut unstamped));
            let mut stamped = result;
            stamp.apply(stamped.meta_mut().unwrap());
            let stamped = Ok(RoundReply::Complete(stamped));
            let spliced = encode_reply(&unstamped, Some(stamp)).unwrap();
            assert_eq!(
                String::from_utf8(spliced).unwrap(),
                String::from_utf8(encode_reply(&stamped, None).unwrap()).unwrap()
            );
        }

        for stamp in [
            Stamp::new(&Implementation::new("shop", "1.2.3"), Some("n1".to_owned())),
            Stamp::new(&Implementation::new("shop", "1.2.3"), None),
        ] {
            agree(
                CallToolResult::success(vec![ContentBlock::text("done")]),
                &stamp,
            );
            agree(CallToolResult::default(), &stamp);
            agree(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, "hi")]),
                &stamp,
            );
            agree(
                ReadResourceResult::new(vec![ResourceContents::text("body", "file:///a")]),
                &stamp,
            );

            let input = a_form_question();
            let mut unstamped: Result<RoundReply<CallToolResult>, ErrorData> =
                Ok(RoundReply::InputRequired(input.clone()));
            assert!(without_meta(&mut unstamped));
            let mut stamped = input;
            stamp.apply(&mut stamped.meta);
            let spliced = encode_reply(&unstamped, Some(&stamp)).unwrap();
            let applied = encode_reply::<CallToolResult>(
                &Ok(RoundReply::InputRequired(stamped.clone())),
                None,
            )
            .unwrap();
            assert_eq!(spliced, applied);
            // And what rmcp's own writer makes of the stamped result, in its record.
            let derived =
                serde_json::to_vec(&RecordedReply::<Value>::InputRequired(stamped.clone()))
                    .unwrap();
            assert_eq!(spliced, derived);
            // Stamped already, or not a round's result: the writer does not splice it.
            assert!(!without_meta::<CallToolResult>(&mut Ok(
                RoundReply::InputRequired(stamped)
            )));
            assert!(!without_meta::<CallToolResult>(&mut Err(
                ErrorData::invalid_params("no", None)
            )));
        }
    }
}
