//! Where the terminal client's answers come from: the person at the terminal, or a script.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

use std::{
    collections::{BTreeMap, VecDeque},
    path::PathBuf,
    sync::{Arc, Mutex},
};

use futures::future::BoxFuture;
use mrtr_runtime::client::{
    FormElicitation, HandlerError, InputHandler, InputKind, InputKinds, RootsRequest,
    SamplingRequest, UrlElicitation,
};
use rmcp::model::{
    CreateMessageResult, ElicitResult, ElicitationAction, ListRootsResult, Root, SamplingMessage,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::form;
use crate::prompt::{self, Stop};
use crate::signals::Signals;

/// How sampling requests are answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SampleSource {
    /// Always this text.
    Reply(String),
    /// Run this shell command with the request JSON on stdin; its stdout is the reply.
    Command(String),
    /// Ask the person at the terminal to type the reply (the default on a terminal).
    Ask,
}

/// One scripted elicitation answer: `"accept"`, `"decline"`, `"cancel"`, or
/// `{"action": "accept", "content": {...}}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ScriptedAnswer {
    /// Just an action, no content.
    Action(ElicitationAction),
    /// An action with form content.
    Full {
        /// accept, decline or cancel.
        action: ElicitationAction,
        /// The form values (accept only).
        #[serde(default)]
        content: Option<Value>,
    },
}

/// A file of scripted elicitation answers.
///
/// ```json
/// {
///   "byKey":   { "service": {"action": "accept", "content": {"name": "api", "env": "staging"}},
///                "confirm": ["decline"] },
///   "inOrder": [ "cancel" ]
/// }
/// ```
/// `byKey` answers the input request with that key (a list answers it once per round, in
/// order); requests with no `byKey` entry take the next `inOrder` answer. Every accepted
/// form is validated against its schema like a typed one.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnswerScript {
    #[serde(default)]
    by_key: BTreeMap<String, OneOrMany>,
    #[serde(default)]
    in_order: VecDeque<ScriptedAnswer>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    Many(VecDeque<ScriptedAnswer>),
    One(ScriptedAnswer),
}

impl AnswerScript {
    /// Reads a script from JSON text.
    ///
    /// ```
    /// use futures::executor::block_on;
    /// use mrtr_runtime::client::{InputHandler, UrlElicitation};
    /// use mrtr_cli::{AnswerOptions, AnswerScript, TerminalAnswers};
    /// use rmcp::model::ElicitationAction;
    ///
    /// let script = AnswerScript::from_json(r#"{"byKey": {"login": "decline"}}"#).unwrap();
    /// let answers = TerminalAnswers::scripted(script, AnswerOptions::default());
    /// let url = "https://example.com".to_string();
    /// let login = UrlElicitation { key: "login".into(), message: "Sign in".into(), url };
    /// assert_eq!(block_on(answers.elicit_url(login)).unwrap().action, ElicitationAction::Decline);
    ///
    /// // A misspelled field is an error, not a script that answers nothing.
    /// let typo = AnswerScript::from_json(r#"{"bykey": {}}"#).unwrap_err();
    /// assert!(typo.contains("unknown field `bykey`"));
    /// ```
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|error| format!("invalid answers file: {error}"))
    }

    fn next(&mut self, key: &str) -> Option<ScriptedAnswer> {
        match self.by_key.get_mut(key) {
            Some(OneOrMany::Many(answers)) if !answers.is_empty() => answers.pop_front(),
            Some(OneOrMany::One(_)) => match self.by_key.remove(key) {
                Some(OneOrMany::One(answer)) => Some(answer),
                _ => None,
            },
            _ => self.in_order.pop_front(),
        }
    }
}

/// Answers `input_required` rounds for the terminal client: interactively with terminal
/// prompts, or from an [`AnswerScript`]; roots and sampling come from [`AnswerOptions`].
#[derive(Clone)]
pub struct TerminalAnswers {
    script: Option<Arc<Mutex<AnswerScript>>>,
    options: Arc<AnswerOptions>,
    // Terminal prompts of one round are asked one after another.
    prompt_turn: Arc<tokio::sync::Mutex<()>>,
    unattended: bool,
    signals: Signals,
}

/// Roots and sampling settings for [`TerminalAnswers`].
#[derive(Debug, Clone, Default)]
pub struct AnswerOptions {
    /// Directories offered as roots (`file://` URIs are built from them). When empty, an
    /// interactive client asks whether to share the current directory; a scripted one
    /// declares no roots capability.
    pub roots: Vec<PathBuf>,
    /// How to answer sampling; `None` declares no sampling capability.
    pub sample: Option<SampleSource>,
}

impl TerminalAnswers {
    /// Asks the person at the terminal.
    pub fn interactive(options: AnswerOptions) -> Self {
        Self {
            script: None,
            options: Arc::new(options),
            prompt_turn: Arc::default(),
            unattended: false,
            signals: Signals::default(),
        }
    }

    /// Asks at the terminal when stdin is one, else answers from `script` (what a demo
    /// wants: a person gets prompts, CI gets the scripted run and its transcript).
    pub fn interactive_or_scripted(script: AnswerScript, options: AnswerOptions) -> Self {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() {
            Self::interactive(options)
        } else {
            Self::scripted(script, options)
        }
    }

    /// For a run with neither a terminal nor a script: listing and calls that ask nothing
    /// work; an elicitation fails with a hint to pass an answers file.
    pub fn unattended(options: AnswerOptions) -> Self {
        let mut answers = Self::scripted(AnswerScript::default(), options);
        answers.unattended = true;
        answers
    }

    /// Answers from `script`, without a terminal.
    pub fn scripted(script: AnswerScript, options: AnswerOptions) -> Self {
        Self {
            script: Some(Arc::new(Mutex::new(script))),
            options: Arc::new(options),
            prompt_turn: Arc::default(),
            unattended: false,
            signals: Signals::default(),
        }
    }

    /// The flags this client's prompts set: Ctrl-C (cancel the call) and declined
    /// questions. [`Session`](crate::Session) watches them.
    pub fn signals(&self) -> Signals {
        self.signals.clone()
    }

    /// Whether the person at the terminal is asked (no script).
    pub fn is_interactive(&self) -> bool {
        self.script.is_none()
    }

    /// Settles what a terminal prompt came to: Esc declines (noted in the signals),
    /// Ctrl-C interrupts the call and never answers, so nothing more is sent.
    async fn settle<T>(&self, outcome: Result<T, Stop>, declined: T) -> Result<T, HandlerError> {
        match outcome {
            Ok(answer) => Ok(answer),
            Err(Stop::Declined) => {
                self.signals.note_declined();
                Ok(declined)
            }
            Err(Stop::Interrupted) => {
                self.signals.interrupt();
                std::future::pending().await
            }
            Err(Stop::Failed(reason)) => Err(HandlerError::failed(reason)),
        }
    }

    fn scripted_answer(
        &self,
        key: &str,
        schema: Option<&Value>,
    ) -> Result<ElicitResult, HandlerError> {
        let Some(script) = self.script.as_ref() else {
            return Err(HandlerError::failed("no answers file"));
        };
        let answer = script
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .next(key)
            .ok_or_else(|| {
                HandlerError::failed(if self.unattended {
                    format!(
                        "no terminal to ask `{key}` on: pass --answers FILE with scripted answers"
                    )
                } else {
                    format!("the answers file has no answer for `{key}`")
                })
            })?;
        let (action, content) = match answer {
            ScriptedAnswer::Action(action) => (action, None),
            ScriptedAnswer::Full { action, content } => (action, content),
        };
        if action != ElicitationAction::Accept {
            self.signals.note_declined();
        }
        let mut result = ElicitResult::new(action.clone());
        if action == ElicitationAction::Accept
            && let Some(schema) = schema
        {
            let content = content.unwrap_or_else(|| Value::Object(Map::new()));
            form::check_scripted(schema, &content).map_err(|error| {
                HandlerError::failed(format!("scripted answer for `{key}`: {error}"))
            })?;
            result = result.with_content(content);
        }
        Ok(result)
    }
}

impl InputHandler for TerminalAnswers {
    fn supported(&self) -> InputKinds {
        let mut kinds = InputKinds::none()
            .with(InputKind::FormElicitation)
            .with(InputKind::UrlElicitation);
        if self.is_interactive() || !self.options.roots.is_empty() {
            kinds = kinds.with(InputKind::Roots);
        }
        if self.options.sample.is_some() {
            kinds = kinds.with(InputKind::Sampling);
        }
        kinds
    }

    fn elicit(
        &self,
        request: FormElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            if self.script.is_some() {
                let schema = serde_json::to_value(&request.requested_schema)
                    .map_err(|error| HandlerError::failed(error.to_string()))?;
                return self.scripted_answer(&request.key, Some(&schema));
            }
            let _turn = self.prompt_turn.lock().await;
            let FormElicitation {
                message,
                requested_schema,
                ..
            } = request;
            let outcome =
                tokio::task::spawn_blocking(move || prompt::ask_form(&message, &requested_schema))
                    .await
                    .map_err(|error| HandlerError::failed(error.to_string()))?;
            self.settle(outcome, ElicitResult::new(ElicitationAction::Decline))
                .await
        })
    }

    fn elicit_url(
        &self,
        request: UrlElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        Box::pin(async move {
            if self.script.is_some() {
                return self.scripted_answer(&request.key, None);
            }
            let _turn = self.prompt_turn.lock().await;
            let outcome = tokio::task::spawn_blocking(move || {
                prompt::ask_url(&request.message, &request.url)
            })
            .await
            .map_err(|error| HandlerError::failed(error.to_string()))?;
            let action = self.settle(outcome, ElicitationAction::Decline).await?;
            if action != ElicitationAction::Accept {
                self.signals.note_declined();
            }
            Ok(ElicitResult::new(action))
        })
    }

    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        Box::pin(async move {
            let text = match &self.options.sample {
                Some(SampleSource::Reply(text)) => text.clone(),
                Some(SampleSource::Command(command)) => run_sampler(command, &request).await?,
                Some(SampleSource::Ask) => {
                    let _turn = self.prompt_turn.lock().await;
                    let conversation = conversation(&request);
                    let outcome =
                        tokio::task::spawn_blocking(move || prompt::ask_sample(&conversation))
                            .await
                            .map_err(|error| HandlerError::failed(error.to_string()))?;
                    self.settle(outcome, String::new()).await?
                }
                None => return Err(HandlerError::Unsupported),
            };
            Ok(CreateMessageResult::new(
                SamplingMessage::assistant_text(text),
                "mrtr-terminal".into(),
            )
            .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
        })
    }

    fn list_roots(
        &self,
        _request: RootsRequest,
    ) -> BoxFuture<'_, Result<ListRootsResult, HandlerError>> {
        Box::pin(async move {
            let roots = if !self.options.roots.is_empty() {
                self.options.roots.clone()
            } else if self.is_interactive() {
                let here = std::env::current_dir()
                    .map_err(|error| HandlerError::failed(error.to_string()))?;
                let _turn = self.prompt_turn.lock().await;
                let asked = here.clone();
                let outcome = tokio::task::spawn_blocking(move || prompt::ask_share_root(&asked))
                    .await
                    .map_err(|error| HandlerError::failed(error.to_string()))?;
                if self.settle(outcome, false).await? {
                    vec![here]
                } else {
                    Vec::new()
                }
            } else {
                return Err(HandlerError::Unsupported);
            };
            Ok(ListRootsResult::new(roots.iter().map(root).collect()))
        })
    }
}

/// A directory as a `file://` root named after its last component.
fn root(path: &PathBuf) -> Root {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
    let name = absolute
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    let root = Root::new(format!("file://{}", absolute.display()));
    match name {
        Some(name) => root.with_name(name),
        None => root,
    }
}

/// The conversation of a sampling request, as lines to read: the system prompt, then each
/// message with its role.
fn conversation(request: &SamplingRequest) -> String {
    let params = serde_json::to_value(&request.params).unwrap_or_default();
    let mut lines = Vec::new();
    if let Some(system) = params["systemPrompt"].as_str() {
        lines.push(format!("  (system) {system}"));
    }
    for message in params["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        let contents = match &message["content"] {
            Value::Array(blocks) => blocks.clone(),
            block => vec![block.clone()],
        };
        for block in contents {
            let text = match block["text"].as_str() {
                Some(text) => text.to_owned(),
                None => format!("[{} content]", block["type"].as_str().unwrap_or("other")),
            };
            lines.push(format!("  ({role}) {text}"));
        }
    }
    lines.join("\n")
}

async fn run_sampler(command: &str, request: &SamplingRequest) -> Result<String, HandlerError> {
    use tokio::io::AsyncWriteExt;
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        HandlerError::failed(format!("sampling command {what}: {error}"))
    };
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|error| failed("did not start", &error))?;
    let input = serde_json::to_vec(&request.params).map_err(|error| failed("input", &error))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that ignores the request may close its stdin early; that is fine.
        if let Err(error) = stdin.write_all(&input).await
            && error.kind() != std::io::ErrorKind::BrokenPipe
        {
            return Err(failed("stdin", &error));
        }
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|error| failed("failed", &error))?;
    if !output.status.success() {
        return Err(failed("exited with", &output.status));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_owned())
}
