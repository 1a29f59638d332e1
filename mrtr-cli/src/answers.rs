//! Where the terminal client's answers come from: the person at the terminal, or a script.
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

use std::{
    collections::{BTreeMap, VecDeque},
    path::PathBuf,
    sync::{Arc, Mutex},
};

use futures::future::BoxFuture;
use inquire::{Confirm, InquireError, MultiSelect, Select, Text, validator::Validation};
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
use mrtr_runtime::form::{Field, FieldKind, RequestedForm};

/// How sampling requests are answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SampleSource {
    /// Always this text.
    Reply(String),
    /// Run this shell command with the request JSON on stdin; its stdout is the reply.
    Command(String),
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
}

/// Roots and sampling settings for [`TerminalAnswers`].
#[derive(Debug, Clone, Default)]
pub struct AnswerOptions {
    /// Directories offered as roots (`file://` URIs are built from them).
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
        }
    }

    fn scripted_answer(
        &self,
        key: &str,
        schema: Option<&Value>,
    ) -> Result<ElicitResult, HandlerError> {
        let script = self.script.as_ref().expect("scripted mode");
        let answer = script
            .lock()
            .expect("script lock")
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
            .with(InputKind::UrlElicitation)
            .with(InputKind::Roots);
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
            let schema = serde_json::to_value(&request.requested_schema)
                .map_err(|error| HandlerError::failed(error.to_string()))?;
            if self.script.is_some() {
                return self.scripted_answer(&request.key, Some(&schema));
            }
            let _turn = self.prompt_turn.lock().await;
            tokio::task::spawn_blocking(move || prompt_form(&request.message, &schema))
                .await
                .map_err(|error| HandlerError::failed(error.to_string()))?
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
            tokio::task::spawn_blocking(move || {
                eprintln!("\n{}\n  URL: {}", request.message, request.url);
                let consent = Confirm::new("Open this URL and continue when done?")
                    .with_default(false)
                    .with_help_message("y = accept, n = decline, Esc = cancel the call")
                    .prompt();
                Ok(ElicitResult::new(match consent {
                    Ok(true) => ElicitationAction::Accept,
                    Ok(false) => ElicitationAction::Decline,
                    Err(error) => cancelled_or(error)?,
                }))
            })
            .await
            .map_err(|error| HandlerError::failed(error.to_string()))?
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
            let roots = if self.options.roots.is_empty() {
                vec![
                    std::env::current_dir()
                        .map_err(|error| HandlerError::failed(error.to_string()))?,
                ]
            } else {
                self.options.roots.clone()
            };
            Ok(ListRootsResult::new(
                roots
                    .iter()
                    .map(|path| {
                        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                        let name = absolute
                            .file_name()
                            .map(|name| name.to_string_lossy().into_owned());
                        let root = Root::new(format!("file://{}", absolute.display()));
                        match name {
                            Some(name) => root.with_name(name),
                            None => root,
                        }
                    })
                    .collect(),
            ))
        })
    }
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

/// Esc or Ctrl-C cancels the call; anything else is a handler failure.
fn cancelled_or(error: InquireError) -> Result<ElicitationAction, HandlerError> {
    match error {
        InquireError::OperationCanceled | InquireError::OperationInterrupted => {
            Ok(ElicitationAction::Cancel)
        }
        other => Err(HandlerError::failed(format!(
            "terminal prompt failed: {other}"
        ))),
    }
}

const FILL_IN: &str = "Answer";
const DECLINE: &str = "Decline";
const CANCEL: &str = "Cancel the call";

/// Asks for a whole form, field by field, after offering to decline or cancel.
fn prompt_form(message: &str, schema: &Value) -> Result<ElicitResult, HandlerError> {
    let form =
        RequestedForm::parse(schema).map_err(|error| HandlerError::failed(error.to_string()))?;
    let fields = form.fields();
    eprintln!();
    let choice = Select::new(message, vec![FILL_IN, DECLINE, CANCEL])
        .with_help_message("↑↓ to move, Enter to choose, Esc to cancel the call")
        .prompt();
    match choice {
        Ok(FILL_IN) => {}
        Ok(DECLINE) => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        Ok(_) => return Ok(ElicitResult::new(ElicitationAction::Cancel)),
        Err(error) => return Ok(ElicitResult::new(cancelled_or(error)?)),
    }
    let mut content = Map::new();
    for field in fields {
        match prompt_field(field) {
            Ok(Some(value)) => {
                content.insert(field.name.clone(), value);
            }
            Ok(None) => {}
            Err(error) => return Ok(ElicitResult::new(cancelled_or(error)?)),
        }
    }
    Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
}

fn help(field: &Field, hint: &str) -> String {
    let mut parts: Vec<String> = field.description.iter().cloned().collect();
    if !field.required {
        parts.push("optional".into());
    }
    if !hint.is_empty() {
        parts.push(hint.into());
    }
    parts.join(" · ")
}

const SKIP: &str = "(skip)";

/// Asks for one field with the prompt its kind calls for; `None` when an optional field is
/// skipped.
fn prompt_field(field: &Field) -> Result<Option<Value>, InquireError> {
    match &field.kind {
        FieldKind::Boolean => prompt_boolean(field),
        FieldKind::Choice { options } => prompt_choice(field, options),
        FieldKind::MultiChoice { options, .. } => prompt_multi_choice(field, options),
        FieldKind::Text { .. } | FieldKind::Integer { .. } | FieldKind::Number { .. } => {
            prompt_text(field)
        }
        // A kind the restricted schema gains later: refuse rather than skip the field.
        other => Err(InquireError::Custom(
            format!(
                "field `{}`: this client cannot ask for {other:?}",
                field.name
            )
            .into(),
        )),
    }
}

/// A yes/no question, starting at the field's default (or no).
fn prompt_boolean(field: &Field) -> Result<Option<Value>, InquireError> {
    let default = field
        .default
        .as_ref()
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Confirm::new(&field.label)
        .with_default(default)
        .with_help_message(&help(field, "y/n"))
        .prompt()
        .map(|answer| Some(Value::Bool(answer)))
}

/// One option out of `options`, starting at the default; an optional field may be skipped.
fn prompt_choice(
    field: &Field,
    options: &[(Value, String)],
) -> Result<Option<Value>, InquireError> {
    let mut titles: Vec<&str> = options.iter().map(|(_, title)| title.as_str()).collect();
    if !field.required {
        titles.push(SKIP);
    }
    let start = field
        .default
        .as_ref()
        .and_then(|default| options.iter().position(|(value, _)| value == default))
        .unwrap_or(0);
    let picked = Select::new(&field.label, titles)
        .with_starting_cursor(start)
        .with_help_message(&help(field, "↑↓ Enter"))
        .raw_prompt()?;
    Ok(options.get(picked.index).map(|(value, _)| value.clone()))
}

/// Any number of `options`, the defaults ticked, checked against the field's item bounds
/// before the prompt lets go; nothing picked skips an optional field.
fn prompt_multi_choice(
    field: &Field,
    options: &[(Value, String)],
) -> Result<Option<Value>, InquireError> {
    let titles: Vec<&str> = options.iter().map(|(_, title)| title.as_str()).collect();
    let defaults: Vec<usize> = field
        .default
        .as_ref()
        .and_then(Value::as_array)
        .map(|chosen| {
            options
                .iter()
                .enumerate()
                .filter(|(_, (value, _))| chosen.contains(value))
                .map(|(index, _)| index)
                .collect()
        })
        .unwrap_or_default();
    let checked = field.clone();
    let all: Vec<Value> = options.iter().map(|(value, _)| value.clone()).collect();
    let picked = MultiSelect::new(&field.label, titles)
        .with_default(&defaults)
        .with_help_message(&help(field, "Space to toggle, Enter to confirm"))
        .with_validator(move |picked: &[inquire::list_option::ListOption<&&str>]| {
            let values = Value::Array(
                picked
                    .iter()
                    .map(|option| all[option.index].clone())
                    .collect(),
            );
            Ok(match checked.check(&values) {
                Ok(()) => Validation::Valid,
                Err(error) => Validation::Invalid(error.problem().to_owned().into()),
            })
        })
        .raw_prompt()?;
    if picked.is_empty() && !field.required {
        return Ok(None);
    }
    Ok(Some(Value::Array(
        picked
            .iter()
            .map(|option| options[option.index].0.clone())
            .collect(),
    )))
}

/// A typed-in text or number, validated as it is typed; empty input takes the default.
fn prompt_text(field: &Field) -> Result<Option<Value>, InquireError> {
    let checked = field.clone();
    let default = field.default.as_ref().map(|value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    });
    let mut prompt = Text::new(&field.label).with_validator(move |input: &str| {
        Ok(match form::parse_text(&checked, input) {
            Ok(_) => Validation::Valid,
            Err(error) => Validation::Invalid(error.into()),
        })
    });
    let hint = help(field, "");
    if !hint.is_empty() {
        prompt = prompt.with_help_message(&hint);
    }
    if let Some(default) = &default {
        prompt = prompt.with_default(default);
    }
    let input = prompt.prompt()?;
    Ok(form::parse_text(field, &input)
        .unwrap_or(None)
        .or_else(|| field.default.clone()))
}
