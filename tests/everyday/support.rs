//! The corpus machinery. Each body is written once inside `everyday!`, which emits it twice:
//! as an `#[mrtr::tool]` machine (`NAME::NAME`) and as a plain `async fn` with the same
//! parameters (`NAME::plain`) in which `ask!(..)` asks a scripted [`Oracle`]. [`compare`]
//! runs one [`Script`] through both — the machine through `Harness` (a token sealed and
//! opened every round) — and asserts the same result text, error flag and structured
//! content, and the same questions (the full elicitation requests, in order). The oracle
//! decodes answers with the machine's own decoder ([`Outcome::from_response`]).
//!
//! # Markers (exactly one per body; flipping a body is renaming its marker)
//!
//! - `ready! { "note"; everyday! { .. } #[tokio::test] async fn .. }` — emitted as written.
//!   A test that compiles but fails on today's `main` carries
//!   `#[ignore = "pending (N, ..): why"]`; delete that line once it passes.
//! - `ready! { "waiting (N, ..): why"; everyday! { .. } #[tokio::test] async fn .. }` — the
//!   `#[mrtr::tool]` half does not compile yet. Only the plain half is emitted (so the body
//!   still type-checks as plain Rust), the machine is a stub, and every test is emitted
//!   with `#[ignore = "waiting (N, ..): why"]` (so it type-checks too). A stub never counts
//!   as a pass: `compare` panics on it, unless `EVERYDAY_PLAIN_ONLY` is set, which checks a
//!   waiting body's expected values against its plain half alone:
//!   `EVERYDAY_PLAIN_ONLY=1 cargo test --test everyday -- --ignored`.
//!
//! Flip: `waiting!` → `ready!` (the reason literal may stay). Categories 4 and 5 use the
//! planned `AsJson` / `State` / `Harness::state`: until they exist, [`planned`] stands in for
//! them so those bodies type-check; when they land, switch the one `use` line in `dtos.rs`
//! and in `app_state.rs` and delete [`planned`] before flipping those bodies.
//!
//! `ask!` in the plain half uses a thread-local oracle: `#[tokio::test]`'s runtime runs the
//! test on one thread.

#![allow(dead_code)]

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::OnceLock;

use mrtr::machine::{Input, IntoToolResult, Machine, MachineDescriptor, Outcome};
use mrtr::testing::Harness;
use rmcp::model::{CallToolResult, ElicitRequestParams, InputRequest, Tool};
use serde_json::{Value, json};

use crate::machine_support::drive_with;

/// Emits one body twice: `mod NAME { pub struct NAME /* the machine */; pub async fn
/// plain(..the same parameters..) }`. The body text is shared token for token; only
/// `ask!` differs (the attribute rewrites it in the machine; a local macro turns it into
/// [`ask_oracle`]`(..)` in the plain function).
macro_rules! everyday {
    // The plain half. `$d` is a `$` token, so the local `ask!` can have its own metavariables.
    (@plain ($d:tt) $(#[$attr:meta])* ($($params:tt)*) $($rest:tt)*) => {
        pub use self::plain_half::plain;

        // A module of its own so that the machine's unit struct (named like the tool) does
        // not shadow a parameter named like the tool here.
        mod plain_half {
            #[allow(unused_imports)]
            use super::super::*;

            macro_rules! ask {
                (key = $d key:literal, $d($d input:tt)*) => { ask!($d($d input)*) };
                ($d($d input:tt)*) => {{
                    #[allow(unused_imports)]
                    use ::mrtr::machine::input::*;
                    $crate::everyday::support::ask_oracle($d($d input)*)
                }};
            }

            $(#[$attr])*
            pub async fn plain($($params)*) $($rest)*
        }
    };
    // The plain half only, with a stub machine (used by `waiting!`).
    (@stub $why:literal; $(#[$attr:meta])* async fn $name:ident ( $($params:tt)* ) $($rest:tt)*) => {
        #[allow(non_camel_case_types, dead_code, clippy::needless_range_loop)]
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;

            /// Stands in for the machine until the body compiles through `#[mrtr::tool]`.
            pub struct $name;

            impl ::mrtr::machine::Machine for $name {
                type Output = ::rmcp::model::CallToolResult;
                fn descriptor(&self) -> &::mrtr::machine::MachineDescriptor {
                    $crate::everyday::support::waiting_descriptor()
                }
                fn step<'a>(
                    &'a self,
                    _run: ::mrtr::machine::Run<'a>,
                ) -> ::mrtr::machine::StepFuture<'a, Self::Output> {
                    panic!("{}", $why)
                }
            }

            everyday!(@plain ($) $(#[$attr])* ($($params)*) $($rest)*);
        }
    };
    // Both halves.
    ($(#[$attr:meta])* async fn $name:ident ( $($params:tt)* ) $($rest:tt)*) => {
        // Index loops are what authors write; the lint would only nag both halves.
        #[allow(non_camel_case_types, dead_code, clippy::needless_range_loop)]
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;

            $(#[$attr])*
            #[mrtr::tool]
            pub async fn $name($($params)*) $($rest)*

            everyday!(@plain ($) $(#[$attr])* ($($params)*) $($rest)*);
        }
    };
}

/// A body whose `#[mrtr::tool]` half compiles on today's `main`: emitted as written. The
/// optional leading literal is a note (kept so that flipping from `waiting!` is one word).
#[allow(unused_macros)]
macro_rules! ready {
    ($why:literal; $($items:tt)*) => {
        $($items)*
    };
    ($($items:tt)*) => {
        $($items)*
    };
}

/// A body whose `#[mrtr::tool]` half does not compile yet (see the module docs).
#[allow(unused_macros)]
macro_rules! waiting {
    (
        $why:literal;
        everyday! { $($body:tt)* }
        $( #[tokio::test] async fn $test:ident () { $($test_body:tt)* } )*
    ) => {
        everyday! { @stub $why; $($body)* }
        $(
            #[tokio::test]
            #[ignore = $why]
            async fn $test() { $($test_body)* }
        )*
    };
}

/// One question as a script sees it.
#[derive(Debug, Clone)]
pub struct Question {
    /// The elicitation message.
    pub message: String,
    /// The single field of the builder forms: `text`, `confirm`, `choice`, `choices`
    /// (empty for other requests).
    pub field: String,
    /// The options of `choice` / `multi_choice`.
    pub options: Vec<String>,
    /// The request as JSON (what is compared between the two halves).
    pub request: Value,
}

impl Question {
    fn of(request: &InputRequest) -> Question {
        let json = serde_json::to_value(request).expect("requests serialize");
        let (message, schema) = match request {
            InputRequest::Elicitation(elicit) => match &elicit.params {
                ElicitRequestParams::FormElicitationParams {
                    message,
                    requested_schema,
                    ..
                } => (
                    message.clone(),
                    serde_json::to_value(requested_schema).expect("schemas serialize"),
                ),
                ElicitRequestParams::UrlElicitationParams { message, .. } => {
                    (message.clone(), Value::Null)
                }
                _ => (String::new(), Value::Null),
            },
            _ => (String::new(), Value::Null),
        };
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let field = if properties.len() == 1 {
            properties.keys().next().cloned().unwrap_or_default()
        } else {
            String::new()
        };
        let enumeration = match field.as_str() {
            "choice" => &properties["choice"]["enum"],
            "choices" => &properties["choices"]["items"]["enum"],
            _ => &Value::Null,
        };
        let options = enumeration
            .as_array()
            .map(|values| {
                values
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        Question {
            message,
            field,
            options,
            request: json,
        }
    }
}

/// An accepted text answer.
pub fn say(text: impl Into<String>) -> Value {
    json!({"action": "accept", "content": {"text": text.into()}})
}

/// An accepted confirmation.
pub fn yes_no(confirm: bool) -> Value {
    json!({"action": "accept", "content": {"confirm": confirm}})
}

/// An accepted single choice.
pub fn pick(choice: impl Into<String>) -> Value {
    json!({"action": "accept", "content": {"choice": choice.into()}})
}

/// An accepted multiple choice.
pub fn pick_many(choices: &[&str]) -> Value {
    json!({"action": "accept", "content": {"choices": choices}})
}

/// A declined elicitation.
pub fn decline() -> Value {
    json!({"action": "decline"})
}

/// A cancelled elicitation.
pub fn cancel() -> Value {
    json!({"action": "cancel"})
}

type Rule = Rc<dyn Fn(&Question, usize) -> Option<Value>>;

/// Which option a default answer picks.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    First,
    Last,
    /// The `n`-th question picks option `n % len`.
    Rotate,
}

/// A scripted user: answers the `n`-th question (0-based, over the whole flow) from its
/// rules (first match wins), else with a default accept for the question's form.
#[derive(Clone)]
pub struct Script {
    /// Shown in assertion messages.
    pub name: String,
    rules: Vec<Rule>,
    texts: Vec<String>,
    confirm: bool,
    pick: Pick,
    /// Compare the questions as a multiset (a body that walks a `HashMap` asks in the
    /// map's order, which differs between two maps); the rules must then not depend on `n`.
    pub unordered: bool,
}

impl Script {
    /// Accepts everything: texts `"ok"`, confirmations `true`, the first option.
    pub fn accept(name: &str) -> Script {
        Script {
            name: name.to_string(),
            rules: Vec::new(),
            texts: vec!["ok".to_string()],
            confirm: true,
            pick: Pick::First,
            unordered: false,
        }
    }

    /// Declines every question.
    pub fn decline_all(name: &str) -> Script {
        Script::accept(name).rule(|_, _| Some(decline()))
    }

    /// The `n`-th question gets `texts[n % len]` when it is a text question.
    pub fn texts<S: Into<String>>(mut self, texts: impl IntoIterator<Item = S>) -> Script {
        self.texts = texts.into_iter().map(Into::into).collect();
        assert!(!self.texts.is_empty(), "at least one text");
        self
    }

    /// Every text question gets `answer(message)`.
    pub fn text_by(self, answer: impl Fn(&str) -> String + 'static) -> Script {
        self.rule(move |q, _| (q.field == "text").then(|| say(answer(&q.message))))
    }

    /// Confirmations answer `confirm`.
    pub fn confirm(mut self, confirm: bool) -> Script {
        self.confirm = confirm;
        self
    }

    /// Choices pick per `pick`.
    pub fn pick(mut self, pick: Pick) -> Script {
        self.pick = pick;
        self
    }

    /// The `n`-th question (0-based) is declined.
    pub fn decline_at(self, n: usize) -> Script {
        self.rule(move |_, i| (i == n).then(decline))
    }

    /// The `n`-th question (0-based) is cancelled.
    pub fn cancel_at(self, n: usize) -> Script {
        self.rule(move |_, i| (i == n).then(cancel))
    }

    /// A question whose message contains `part` gets `answer`.
    pub fn when(self, part: &'static str, answer: Value) -> Script {
        self.rule(move |q, _| q.message.contains(part).then(|| answer.clone()))
    }

    /// Adds a rule (earlier rules win).
    pub fn rule(mut self, rule: impl Fn(&Question, usize) -> Option<Value> + 'static) -> Script {
        self.rules.push(Rc::new(rule));
        self
    }

    /// Questions are compared as a multiset.
    pub fn unordered(mut self) -> Script {
        self.unordered = true;
        self
    }

    /// The answer to the `n`-th question.
    pub fn answer(&self, question: &Question, n: usize) -> Value {
        if let Some(answer) = self.rules.iter().find_map(|rule| rule(question, n)) {
            return answer;
        }
        let index = |len: usize| match self.pick {
            Pick::First => 0,
            Pick::Last => len.saturating_sub(1),
            Pick::Rotate => n % len.max(1),
        };
        match question.field.as_str() {
            "text" => say(self.texts[n % self.texts.len()].clone()),
            "confirm" => yes_no(self.confirm),
            "choice" => pick(question.options[index(question.options.len())].clone()),
            "choices" => {
                let chosen = &question.options[index(question.options.len())];
                pick_many(&[chosen])
            }
            other => panic!(
                "script `{}` has no answer for a `{other}` question: {}",
                self.name, question.message
            ),
        }
    }
}

thread_local! {
    static ORACLE: RefCell<Option<Oracle>> = const { RefCell::new(None) };
}

/// The plain half's `ask!`: asks this thread's current [`Oracle`] (set by [`compare`] while
/// it polls the plain half; `#[tokio::test]` runs on one thread).
pub fn ask_oracle<O: Outcome>(input: Input<O>) -> O {
    ORACLE.with(|oracle| {
        oracle
            .borrow_mut()
            .as_mut()
            .expect("`ask!` in a plain half outside `compare`")
            .ask(input)
    })
}

/// Answers the plain half's questions from the script, decoding the answer exactly as the
/// machine does ([`Outcome::from_response`]).
pub struct Oracle {
    script: Script,
    asked: Vec<Question>,
}

impl Oracle {
    pub fn new(script: Script) -> Oracle {
        Oracle {
            script,
            asked: Vec::new(),
        }
    }

    pub fn ask<O: Outcome>(&mut self, input: Input<O>) -> O {
        assert!(self.asked.len() < 5000, "the plain body asked too often");
        let request = input.into_request();
        let question = Question::of(&request);
        let response = self.script.answer(&question, self.asked.len());
        self.asked.push(question);
        O::from_response("oracle", &request, response)
            .unwrap_or_else(|e| panic!("script `{}` gave a bad answer: {e}", self.script.name))
    }

    /// The questions asked so far.
    pub fn asked(&self) -> &[Question] {
        &self.asked
    }
}

/// The name of the stub machine that `waiting!` puts in place of a body's machine.
const WAITING: &str = "__waiting";

/// The stub machine's descriptor. `compare` refuses to run a stub unless
/// `EVERYDAY_PLAIN_ONLY` is set: then it checks a waiting body's expected values against its
/// plain half alone (`EVERYDAY_PLAIN_ONLY=1 cargo test --test everyday -- --ignored`), which
/// says nothing about the machine.
pub fn waiting_descriptor() -> &'static MachineDescriptor {
    static DESCRIPTOR: OnceLock<MachineDescriptor> = OnceLock::new();
    DESCRIPTOR.get_or_init(|| {
        let schema = json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        MachineDescriptor::tool(
            Tool::new(WAITING, "a body still waiting for the macro", schema),
            [],
            0,
        )
    })
}

/// What one script produced (equal for both halves, or `compare` panicked).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The text of the result.
    pub text: String,
    /// Whether the result is an error result.
    pub is_error: bool,
    /// The messages asked, in order.
    pub asked: Vec<String>,
    /// The machine's rounds.
    pub rounds: usize,
    /// Only the plain half ran (a `waiting!` body under `EVERYDAY_PLAIN_ONLY`).
    pub plain_only: bool,
}

impl Run {
    /// The text, asserting the result is not an error.
    pub fn ok(&self) -> &str {
        assert!(
            !self.is_error,
            "expected success, got error `{}`",
            self.text
        );
        &self.text
    }

    /// The text, asserting the result is an error.
    pub fn err(&self) -> &str {
        assert!(self.is_error, "expected an error, got `{}`", self.text);
        &self.text
    }
}

fn result_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

fn sorted_if(unordered: bool, mut requests: Vec<String>) -> Vec<String> {
    if unordered {
        requests.sort();
    }
    requests
}

/// Runs `script` through `tool` (with `harness`: a token sealed and opened every round) and
/// through the plain half; asserts the same result and the same questions, and returns them.
pub async fn compare<M, R>(
    harness: &Harness,
    tool: &M,
    arguments: Value,
    plain: impl Future<Output = R>,
    script: &Script,
) -> Run
where
    M: Machine<Output = CallToolResult>,
    R: IntoToolResult,
{
    let name = &script.name;
    ORACLE.set(Some(Oracle::new(script.clone())));
    let expected = plain.await;
    let oracle = ORACLE.take().expect("the oracle is still there");
    let expected = expected
        .into_tool_result()
        .unwrap_or_else(|e| panic!("script `{name}`: the plain half failed: {e}"));

    if tool.descriptor().listing.name() == WAITING {
        assert!(
            std::env::var_os("EVERYDAY_PLAIN_ONLY").is_some(),
            "script `{name}`: this body is still `waiting!` (no machine to compare with)"
        );
        return Run {
            text: result_text(&expected),
            is_error: expected.is_error == Some(true),
            asked: oracle.asked.iter().map(|q| q.message.clone()).collect(),
            rounds: oracle.asked.len(),
            plain_only: true,
        };
    }

    let asked = RefCell::new(Vec::new());
    let flow = drive_with(harness, tool, arguments, |_, request, _| {
        let question = Question::of(request);
        let answer = script.answer(&question, asked.borrow().len());
        asked.borrow_mut().push(question);
        answer
    })
    .await
    .unwrap_or_else(|e| panic!("script `{name}`: the machine failed: {e:?}"));
    let asked = asked.into_inner();

    let requests = |questions: &[Question]| {
        sorted_if(
            script.unordered,
            questions.iter().map(|q| q.request.to_string()).collect(),
        )
    };
    assert_eq!(
        requests(&asked),
        requests(oracle.asked()),
        "script `{name}`: the machine asked other questions (left) than the plain body (right)"
    );
    let actual = (
        result_text(&flow.output),
        flow.output.is_error == Some(true),
    );
    let wanted = (result_text(&expected), expected.is_error == Some(true));
    assert_eq!(
        actual, wanted,
        "script `{name}`: the machine's result (left) differs from the plain body's (right)"
    );
    assert_eq!(
        flow.output.structured_content, expected.structured_content,
        "script `{name}`: structured content"
    );
    Run {
        text: actual.0,
        is_error: actual.1,
        asked: asked.into_iter().map(|q| q.message).collect(),
        rounds: flow.rounds.len(),
        plain_only: false,
    }
}

/// [`compare`] for every script, with a fresh default harness; `plain()` makes the plain
/// half's future for one run. The runs in script order.
pub async fn check<M, R, F>(
    tool: &M,
    arguments: Value,
    plain: impl Fn() -> F,
    scripts: &[Script],
) -> Vec<Run>
where
    M: Machine<Output = CallToolResult>,
    R: IntoToolResult,
    F: Future<Output = R>,
{
    let harness = Harness::new();
    let mut runs = Vec::new();
    for script in scripts {
        runs.push(compare(&harness, tool, arguments.clone(), plain(), script).await);
    }
    runs
}
