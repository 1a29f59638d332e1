//! A flow stepped round by round ([`Flow`], [`Progress`]) and ways to damage its
//! `requestState` ([`Tamper`]).

use std::fmt::Write as _;

use rmcp::model::InputResponses;
use serde_json::Value;

use crate::machine::Machine;
use crate::token::TOKEN_PREFIX;

use super::answers::{Answer, Question};
use super::harness::{Harness, Refused, Reply};
/// Where a flow stands after a request (see [`Flow::start`]).
///
/// ```
/// use mrtr_runtime::testing::Progress;
/// let done: Progress<u8> = Progress::Done(1);
/// assert!(done.questions().is_empty());
/// ```
#[derive(Debug)]
pub enum Progress<O> {
    /// The machine asked these questions; answer them with [`Flow::answer`].
    Asked(Vec<Question>),
    /// The machine finished.
    Done(O),
}

impl<O> Progress<O> {
    /// The keys asked, in key order (empty when done).
    ///
    /// ```
    /// # use mrtr_runtime::testing::Progress;
    /// assert!(Progress::<()>::Asked(vec![]).keys().is_empty());
    /// ```
    pub fn keys(&self) -> Vec<&str> {
        self.questions().iter().map(|q| q.key.as_str()).collect()
    }

    /// The questions asked (empty when done).
    ///
    /// ```
    /// # use mrtr_runtime::testing::Progress;
    /// assert!(Progress::Done("x").questions().is_empty());
    /// ```
    pub fn questions(&self) -> &[Question] {
        match self {
            Progress::Asked(questions) => questions,
            Progress::Done(_) => &[],
        }
    }

    /// The output, or `None` while questions are open.
    ///
    /// ```
    /// # use mrtr_runtime::testing::Progress;
    /// assert_eq!(Progress::Done(3).done(), Some(3));
    /// ```
    pub fn done(self) -> Option<O> {
        match self {
            Progress::Done(output) => Some(output),
            Progress::Asked(_) => None,
        }
    }
}

impl Progress<rmcp::model::CallToolResult> {
    /// A finished tool's text content, joined by newlines; `None` while questions are open.
    ///
    /// ```
    /// use mrtr_runtime::testing::Progress;
    /// use rmcp::model::{CallToolResult, ContentBlock};
    /// let done = Progress::Done(CallToolResult::success(vec![ContentBlock::text("ok")]));
    /// assert_eq!(done.text().as_deref(), Some("ok"));
    /// ```
    pub fn text(&self) -> Option<String> {
        let Progress::Done(result) = self else {
            return None;
        };
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
            .collect();
        Some(texts.join("\n"))
    }
}

/// Ways to damage a sealed `requestState`, as an attacker or a broken client would.
///
/// ```
/// use mrtr_runtime::testing::{Tamper, tamper};
/// assert!(tamper("mrtr3.AAAA", Tamper::WrongPrefix).starts_with("mrtr2."));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// Flip one bit of the authentication tag (→ `unauthentic`).
    FlipTagBit,
    /// Claim another key id (→ `unknown_key` where no such key is held).
    OtherKeyId,
    /// Drop all but the first few bytes (→ `malformed`).
    Truncate,
    /// The previous wire format's prefix, `mrtr2.` (→ `wrong_prefix`).
    WrongPrefix,
}

/// `request_state` damaged as `how` says; a string that is not a token gets the prefix
/// change only.
///
/// ```
/// use mrtr_runtime::testing::{Tamper, tamper};
/// assert_eq!(tamper("mrtr3.AAAAAAAA", Tamper::FlipTagBit), "mrtr3.AAAAAAAB");
/// ```
pub fn tamper(request_state: &str, how: Tamper) -> String {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let body = request_state
        .strip_prefix(TOKEN_PREFIX)
        .unwrap_or(request_state);
    let Ok(mut raw) = URL_SAFE_NO_PAD.decode(body) else {
        return format!("mrtr2.{body}");
    };
    match how {
        Tamper::FlipTagBit => {
            if let Some(last) = raw.last_mut() {
                *last ^= 1;
            }
        }
        Tamper::OtherKeyId => {
            if raw.len() >= 2 {
                raw[0] ^= 0xff;
                raw[1] ^= 0xff;
            }
        }
        Tamper::Truncate => raw.truncate(8),
        Tamper::WrongPrefix => return format!("mrtr2.{body}"),
    }
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(raw))
}

/// One round of a [`Flow`], as recorded for its transcript.
#[derive(Debug, Clone)]
pub(super) struct LoggedRound {
    /// The instance that asked.
    server: String,
    questions: Vec<Question>,
    token_len: usize,
    /// The answers sent back, by key (filled when the round is answered).
    answers: Vec<(String, Value)>,
}

/// A flow stepped round by round through real sealing: start it, look at what it asks,
/// answer with typed [`Answer`]s, hop to another server instance, replay or tamper a round,
/// and print a transcript for review. Made by [`Harness::flow`].
///
/// ```
/// # use mrtr_runtime::machine::*;
/// # struct Deploy(MachineDescriptor);
/// # impl Machine for Deploy {
/// #     type Output = String;
/// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
/// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
/// #         let Some(mut resume) = run.resume else {
/// #             let env = input::choice("Which environment?", ["staging", "prod"]);
/// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
/// #         };
/// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
/// #         let who = run.cx.principal().unwrap_or("anonymous");
/// #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
/// #     }) }
/// # }
/// # let deploy = Deploy(MachineDescriptor::tool(
/// #     rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new()), [InputKind::FormElicitation], 1));
/// use futures::executor::block_on;
/// use mrtr_runtime::testing::{Answer, Harness, Tamper};
///
/// let (one, two) = Harness::pair();
/// let mut flow = one.flow(&deploy, serde_json::json!({}));
/// assert_eq!(block_on(flow.start()).unwrap().keys(), ["env"]);
///
/// // A tampered state is refused, and the kit says exactly why.
/// let refused = block_on(flow.send_tampered(Tamper::FlipTagBit)).unwrap_err();
/// assert_eq!(refused.rejection, Some("unauthentic"));
///
/// // The next round is served by the other instance.
/// flow.on(&two);
/// let done = block_on(flow.answer([("env", Answer::choice("prod"))])).unwrap();
/// assert_eq!(done.done().unwrap(), "anonymous deployed prod");
/// assert!(flow.transcript().contains("round 1 @ one"));
/// ```
pub struct Flow<'h, M: Machine + ?Sized> {
    pub(super) harness: &'h Harness,
    pub(super) machine: &'h M,
    pub(super) arguments: Value,
    /// The state of the round waiting for answers.
    pub(super) request_state: Option<String>,
    /// What the last answered round sent: `(requestState, answers)`, for replays.
    pub(super) last_sent: Option<(Option<String>, InputResponses)>,
    pub(super) log: Vec<LoggedRound>,
    pub(super) finished: bool,
}

impl<'h, M: Machine + ?Sized> Flow<'h, M> {
    /// Sends the first request (no `requestState`).
    ///
    /// See [`Flow`] for an example.
    pub async fn start(&mut self) -> Result<Progress<M::Output>, Refused> {
        self.request_state = None;
        self.finished = false;
        self.send(None, InputResponses::new()).await
    }

    /// Answers the open round (every key it asked, or some, to see them asked again) and
    /// sends the retry with its `requestState`.
    ///
    /// See [`Flow`] for an example.
    pub async fn answer<'k>(
        &mut self,
        answers: impl IntoIterator<Item = (&'k str, Answer)>,
    ) -> Result<Progress<M::Output>, Refused> {
        let responses: InputResponses = answers
            .into_iter()
            .map(|(key, answer)| (key.to_string(), answer.0))
            .collect();
        if let Some(round) = self.log.last_mut() {
            round.answers = responses
                .iter()
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
        }
        let state = self.request_state.take();
        self.last_sent = Some((state.clone(), responses.clone()));
        self.send(state, responses).await
    }

    /// Serves the following requests on `harness` (another instance: same keys, separate
    /// everything else), as a load balancer would.
    ///
    /// See [`Flow`] for an example.
    pub fn on(&mut self, harness: &'h Harness) -> &mut Self {
        self.harness = harness;
        self
    }

    /// The `requestState` of the open round.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct T(MachineDescriptor);
    /// # impl Machine for T {
    /// #     type Output = ();
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, _: Run<'a>) -> StepFuture<'a, ()> { Box::pin(async { Ok(Step::Done(())) }) }
    /// # }
    /// # let t = T(MachineDescriptor::tool(rmcp::model::Tool::new("t", "T", serde_json::Map::new()), [], 1));
    /// let harness = mrtr_runtime::testing::Harness::new();
    /// let mut flow = harness.flow(&t, serde_json::json!({}));
    /// futures::executor::block_on(flow.start()).unwrap();
    /// assert_eq!(flow.request_state(), None); // finished at once
    /// ```
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }

    /// Sends the last answered round again — the same `requestState` and answers — without
    /// changing the flow: a replay within the TTL is accepted (states are not single-use),
    /// one after [`Harness::clock`] moved past it is refused as `expired`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct Deploy(MachineDescriptor);
    /// # impl Machine for Deploy {
    /// #     type Output = String;
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
    /// #         let Some(mut resume) = run.resume else {
    /// #             let env = input::choice("Which environment?", ["staging", "prod"]);
    /// #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
    /// #         };
    /// #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
    /// #         Ok(Step::Done(format!("deployed {}", env.as_deref().unwrap_or("nothing"))))
    /// #     }) }
    /// # }
    /// # let deploy = Deploy(MachineDescriptor::tool(
    /// #     rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new()), [InputKind::FormElicitation], 1));
    /// use futures::executor::block_on;
    /// use mrtr_runtime::testing::{Answer, Harness};
    ///
    /// let harness = Harness::new();
    /// let mut flow = harness.flow(&deploy, serde_json::json!({}));
    /// block_on(flow.start()).unwrap();
    /// block_on(flow.answer([("env", Answer::choice("prod"))])).unwrap();
    /// assert_eq!(block_on(flow.replay()).unwrap().done().unwrap(), "deployed prod");
    /// harness.clock().advance(601);
    /// assert_eq!(block_on(flow.replay()).unwrap_err().rejection, Some("expired"));
    /// ```
    pub async fn replay(&self) -> Result<Progress<M::Output>, Refused> {
        let (state, responses) = self.last_sent.clone().unwrap_or_default();
        let (progress, _) = self.exchange(state, responses).await?;
        Ok(progress)
    }

    /// Sends the open round's `requestState` damaged as `how` says (with no answers),
    /// without changing the flow. A refusal carries the exact [`Refused::rejection`].
    ///
    /// See [`Flow`] for an example.
    pub async fn send_tampered(&self, how: Tamper) -> Result<Progress<M::Output>, Refused> {
        let state = self
            .request_state
            .as_deref()
            .map(|state| tamper(state, how));
        let (progress, _) = self.exchange(state, InputResponses::new()).await?;
        Ok(progress)
    }

    /// Sends any `requestState` with `answers` on the current instance, without changing
    /// the flow (e.g. a state from another flow, or the open one with other arguments via
    /// [`Harness::request_explained`]).
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// # struct T(MachineDescriptor);
    /// # impl Machine for T {
    /// #     type Output = ();
    /// #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
    /// #     fn step<'a>(&'a self, _: Run<'a>) -> StepFuture<'a, ()> { Box::pin(async { Ok(Step::Done(())) }) }
    /// # }
    /// # let t = T(MachineDescriptor::tool(rmcp::model::Tool::new("t", "T", serde_json::Map::new()), [], 1));
    /// use futures::executor::block_on;
    /// let harness = mrtr_runtime::testing::Harness::new();
    /// let flow = harness.flow(&t, serde_json::json!({}));
    /// let refused = block_on(flow.send_state("not a token".into(), [])).unwrap_err();
    /// assert_eq!(refused.rejection, Some("wrong_prefix"));
    /// ```
    pub async fn send_state<'k>(
        &self,
        request_state: String,
        answers: impl IntoIterator<Item = (&'k str, Answer)>,
    ) -> Result<Progress<M::Output>, Refused> {
        let responses = answers
            .into_iter()
            .map(|(key, answer)| (key.to_string(), answer.0))
            .collect();
        let (progress, _) = self.exchange(Some(request_state), responses).await?;
        Ok(progress)
    }

    /// The flow so far as stable text for review (e.g. kept beside a test as a snapshot):
    /// each round's instance, questions with their kind, the answers sent and the size of
    /// the sealed `requestState`; no tokens, nonces or times, so it only changes when the
    /// flow does.
    ///
    /// See [`Flow`] for an example; the README shows one for the deploy wizard.
    pub fn transcript(&self) -> String {
        let mut out = String::new();
        for (index, round) in self.log.iter().enumerate() {
            let _ = writeln!(
                out,
                "round {} @ {}: requestState {} bytes",
                index + 1,
                round.server,
                round.token_len
            );
            for question in &round.questions {
                let _ = writeln!(
                    out,
                    "  ? {} [{:?}] {}",
                    question.key, question.kind, question.message
                );
            }
            for (key, value) in &round.answers {
                let _ = writeln!(out, "  ! {key} {value}");
            }
        }
        if self.finished {
            out.push_str("done\n");
        }
        out
    }

    async fn send(
        &mut self,
        state: Option<String>,
        responses: InputResponses,
    ) -> Result<Progress<M::Output>, Refused> {
        let (progress, token) = self.exchange(state, responses).await?;
        match &progress {
            Progress::Asked(questions) => {
                self.log.push(LoggedRound {
                    server: self.harness.name().to_owned(),
                    questions: questions.clone(),
                    token_len: token.as_ref().map_or(0, String::len),
                    answers: Vec::new(),
                });
                self.request_state = token;
            }
            Progress::Done(_) => self.finished = true,
        }
        Ok(progress)
    }

    async fn exchange(
        &self,
        state: Option<String>,
        responses: InputResponses,
    ) -> Result<(Progress<M::Output>, Option<String>), Refused> {
        let responses = (!responses.is_empty()).then_some(responses);
        match self
            .harness
            .request_explained(self.machine, self.arguments.clone(), state, responses)
            .await?
        {
            Reply::Complete(output) => Ok((Progress::Done(output), None)),
            Reply::InputRequired(result) => {
                let questions = result
                    .input_requests
                    .iter()
                    .flatten()
                    .map(|(key, request)| Question::new(key.clone(), request))
                    .collect();
                Ok((Progress::Asked(questions), result.request_state))
            }
        }
    }
}

impl Harness {
    /// A flow of `machine` with `arguments`, stepped round by round (see [`Flow`]).
    ///
    /// See [`Flow`] for an example.
    pub fn flow<'h, M: Machine + ?Sized>(
        &'h self,
        machine: &'h M,
        arguments: Value,
    ) -> Flow<'h, M> {
        Flow {
            harness: self,
            machine,
            arguments,
            request_state: None,
            last_sent: None,
            log: Vec::new(),
            finished: false,
        }
    }
}
