//! The MRTR fixtures of the conformance suite (`test_input_required_result_*` tools and the
//! `test_input_required_result_prompt` prompt), written by hand against the machine
//! contract. Each is a tiny flow; the state records which round it is in and what an
//! earlier round answered.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28

use mrtr::machine::{
    Elicited, Input, InputKind, Machine, MachineDescriptor, RequestCx, Roots, Run, Sampled, Step,
    StepError, StepFuture, Suspend, input,
};
use mrtr::rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, Prompt, PromptMessage, Role, Tool,
};
use serde::{Deserialize, Serialize};

/// Which fixture a [`Fixture`] plays.
#[derive(Clone, Copy)]
enum Kind {
    Elicitation,
    Sampling,
    ListRoots,
    RequestState,
    MultipleInputs,
    MultiRound,
    TamperedState,
    Capabilities,
}

/// What a fixture keeps between rounds.
#[derive(Serialize, Deserialize)]
enum FixtureState {
    /// Waiting for the answers to round 1.
    FirstRound,
    /// `multi_round`: waiting for the color, remembering the name.
    SecondRound { name: String },
}

/// `{"name": string}`
#[derive(mrtr::Form, Deserialize)]
struct Name {
    name: String,
}

/// `{"color": string}`
#[derive(mrtr::Form, Deserialize)]
struct Color {
    color: String,
}

/// `{"ok": boolean}`
#[derive(mrtr::Form, Deserialize)]
struct Ok {
    ok: bool,
}

/// `{"context": string}`
#[derive(mrtr::Form, Deserialize)]
struct Context {
    context: String,
}

/// `{"input": string}`
#[derive(mrtr::Form, Deserialize)]
struct Anything {
    input: String,
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

fn accepted_or<T>(answer: Elicited<T>, otherwise: &str, show: impl FnOnce(T) -> String) -> String {
    match answer {
        Elicited::Accept(value) => show(value),
        _ => otherwise.to_string(),
    }
}

fn empty_object_schema() -> serde_json::Map<String, serde_json::Value> {
    serde_json::json!({"type": "object", "properties": {}})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// One conformance fixture tool.
pub struct Fixture {
    kind: Kind,
    descriptor: MachineDescriptor,
}

impl Fixture {
    fn new(kind: Kind, name: &'static str, description: &'static str, kinds: &[InputKind]) -> Self {
        let tool = Tool::new(name, description, empty_object_schema());
        Fixture {
            kind,
            descriptor: MachineDescriptor::tool(
                tool,
                kinds.iter().copied(),
                0xc0f0_0000 + kind as u64,
            ),
        }
    }

    /// Every MRTR fixture tool.
    pub fn all() -> Vec<Fixture> {
        use InputKind::*;
        vec![
            Fixture::new(
                Kind::Elicitation,
                "test_input_required_result_elicitation",
                "Asks the user's name, then greets them",
                &[FormElicitation],
            ),
            Fixture::new(
                Kind::Sampling,
                "test_input_required_result_sampling",
                "Asks the client's model a question",
                &[Sampling],
            ),
            Fixture::new(
                Kind::ListRoots,
                "test_input_required_result_list_roots",
                "Lists the client's roots",
                &[Roots],
            ),
            Fixture::new(
                Kind::RequestState,
                "test_input_required_result_request_state",
                "Asks for confirmation with sealed request state",
                &[FormElicitation],
            ),
            Fixture::new(
                Kind::MultipleInputs,
                "test_input_required_result_multiple_inputs",
                "Asks for a name, a sampled greeting and the roots in one round",
                &[FormElicitation, Sampling, Roots],
            ),
            Fixture::new(
                Kind::MultiRound,
                "test_input_required_result_multi_round",
                "Asks a name, then a favorite color",
                &[FormElicitation],
            ),
            Fixture::new(
                Kind::TamperedState,
                "test_input_required_result_tampered_state",
                "Asks for confirmation; tampered state is rejected",
                &[FormElicitation],
            ),
            Fixture::new(
                Kind::Capabilities,
                "test_input_required_result_capabilities",
                "Asks only what the client declared",
                &[FormElicitation, Sampling, Roots],
            ),
        ]
    }

    fn first_round(&self, cx: &RequestCx) -> Result<Step<CallToolResult>, StepError> {
        let suspend = Suspend::new(&FixtureState::FirstRound)?;
        let suspend = match self.kind {
            Kind::Elicitation => {
                suspend.ask("user_name", input::form::<Name>("What is your name?"))?
            }
            Kind::Sampling => suspend.ask("capital_question", capital_question())?,
            Kind::ListRoots => suspend.ask("client_roots", input::roots())?,
            Kind::RequestState | Kind::TamperedState => {
                suspend.ask("confirm", input::form::<Ok>("Please confirm to continue"))?
            }
            Kind::MultipleInputs => suspend
                .ask("user_name", input::form::<Name>("What is your name?"))?
                .ask(
                    "greeting",
                    input::prompt("Generate a greeting").max_tokens(50),
                )?
                .ask("client_roots", input::roots())?,
            Kind::MultiRound => {
                suspend.ask("step1", input::form::<Name>("Step 1: What is your name?"))?
            }
            Kind::Capabilities => {
                let mut suspend = suspend;
                if cx.supports(InputKind::FormElicitation) {
                    suspend =
                        suspend.ask("elicit_input", input::form::<Anything>("Provide input"))?;
                }
                if cx.supports(InputKind::Sampling) {
                    suspend = suspend.ask(
                        "sample_input",
                        input::prompt("Sample request").max_tokens(50),
                    )?;
                }
                if cx.supports(InputKind::Roots) {
                    suspend = suspend.ask("roots_input", input::roots())?;
                }
                if suspend.requests().is_empty() {
                    return Ok(Step::Done(text(
                        "The client declared no input capability; nothing to ask.",
                    )));
                }
                suspend
            }
        };
        Ok(Step::Suspend(suspend))
    }
}

fn capital_question() -> Input<Sampled> {
    input::prompt("What is the capital of France?").max_tokens(100)
}

impl Machine for Fixture {
    type Output = CallToolResult;

    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }

    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        Box::pin(async move {
            let Some(mut resume) = run.resume else {
                return self.first_round(run.cx);
            };
            let state: FixtureState = resume.state()?;
            let answers = resume.answers();
            let done = match (self.kind, state) {
                (Kind::Elicitation, _) => {
                    let name: Elicited<Name> = answers.take("user_name")?;
                    accepted_or(name, "No name given.", |n| format!("Hello, {}!", n.name))
                }
                (Kind::Sampling, _) => {
                    let answer: Sampled = answers.take("capital_question")?;
                    format!("The model answered: {}", answer.text())
                }
                (Kind::ListRoots, _) => {
                    let roots: Roots = answers.take("client_roots")?;
                    format!("Found {} root(s)", roots.len())
                }
                (Kind::RequestState | Kind::TamperedState, _) => {
                    let ok: Elicited<Ok> = answers.take("confirm")?;
                    accepted_or(ok, "state-ok: not confirmed", |ok| {
                        format!("state-ok: confirmed={}", ok.ok)
                    })
                }
                (Kind::MultipleInputs, _) => {
                    let name: Elicited<Name> = answers.take("user_name")?;
                    let greeting: Sampled = answers.take("greeting")?;
                    let roots: Roots = answers.take("client_roots")?;
                    let name = accepted_or(name, "someone", |n| n.name);
                    format!("{} {name}; {} root(s)", greeting.text(), roots.len())
                }
                (Kind::MultiRound, FixtureState::FirstRound) => {
                    let name: Elicited<Name> = answers.take("step1")?;
                    let name = accepted_or(name, "someone", |n| n.name);
                    let next = Suspend::new(&FixtureState::SecondRound { name })?.ask(
                        "step2",
                        input::form::<Color>("Step 2: What is your favorite color?"),
                    )?;
                    return Ok(Step::Suspend(next));
                }
                (Kind::MultiRound, FixtureState::SecondRound { name }) => {
                    let color: Elicited<Color> = answers.take("step2")?;
                    let color = accepted_or(color, "no color", |c| c.color);
                    format!("Multi-round complete for {name} who likes {color}")
                }
                (Kind::Capabilities, _) => {
                    // Whatever was asked was gated on this flow's capabilities; count answers.
                    let mut got = Vec::new();
                    if run.cx.supports(InputKind::FormElicitation) {
                        let answer: Elicited<Anything> = answers.take("elicit_input")?;
                        got.push(accepted_or(answer, "elicitation declined", |a| {
                            format!("elicitation: {}", a.input)
                        }));
                    }
                    if run.cx.supports(InputKind::Sampling) {
                        let answer: Sampled = answers.take("sample_input")?;
                        got.push(format!("sampling: {}", answer.text()));
                    }
                    if run.cx.supports(InputKind::Roots) {
                        let roots: Roots = answers.take("roots_input")?;
                        got.push(format!("roots: {}", roots.len()));
                    }
                    format!("Answered: {}", got.join(", "))
                }
            };
            Ok(Step::Done(text(done)))
        })
    }
}

/// The `test_input_required_result_prompt` prompt: asks for context, then returns a
/// message using it.
pub struct ContextPrompt {
    descriptor: MachineDescriptor,
}

impl ContextPrompt {
    /// The prompt fixture.
    pub fn new() -> Self {
        let prompt = Prompt::new(
            "test_input_required_result_prompt",
            Some("Asks for context through an elicitation before producing its message"),
            None,
        );
        ContextPrompt {
            descriptor: MachineDescriptor::prompt(
                prompt,
                [InputKind::FormElicitation],
                0xc0f0_1000,
            ),
        }
    }
}

impl Machine for ContextPrompt {
    type Output = GetPromptResult;

    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }

    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, GetPromptResult> {
        Box::pin(async move {
            let Some(mut resume) = run.resume else {
                let ask = input::form::<Context>("What context should the prompt use?");
                return Ok(Step::Suspend(
                    Suspend::new(&FixtureState::FirstRound)?.ask("user_context", ask)?,
                ));
            };
            let FixtureState::FirstRound = resume.state()? else {
                return Err(StepError::StateMismatch("the prompt has one round".into()));
            };
            let context: Elicited<Context> = resume.answers().take("user_context")?;
            let context = accepted_or(context, "none", |c| c.context);
            let message =
                PromptMessage::new_text(Role::User, format!("Prompt with context: {context}"));
            Ok(Step::Done(GetPromptResult::new(vec![message])))
        })
    }
}
