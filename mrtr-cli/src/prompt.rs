//! The questions asked at the terminal: one prompt per question, in the form's own field
//! order, titled with the field's title (its description as help), choices as a list,
//! defaults and bounds shown. Esc declines the question; Ctrl-C cancels the whole call.

use inquire::{Confirm, InquireError, MultiSelect, Select, Text, validator::Validation};
use mrtr_runtime::form::{Field, FieldKind, RequestedForm};
use rmcp::model::{ElicitResult, ElicitationAction, ElicitationSchema};
use serde_json::{Map, Value};

use crate::form;

/// Why a prompt did not produce an answer.
#[derive(Debug)]
pub(crate) enum Stop {
    /// Esc: the person declined this question.
    Declined,
    /// Ctrl-C: the person wants the whole call cancelled.
    Interrupted,
    /// The terminal could not ask (no TTY any more, an unreadable schema).
    Failed(String),
}

impl From<InquireError> for Stop {
    fn from(error: InquireError) -> Self {
        match error {
            InquireError::OperationCanceled => Stop::Declined,
            InquireError::OperationInterrupted => Stop::Interrupted,
            other => Stop::Failed(format!("the terminal prompt failed: {other}")),
        }
    }
}

/// Asks a whole form: a one-field question is one prompt worded as the server's message; a
/// form of several fields prints the message once, then asks each field by its title.
pub(crate) fn ask_form(message: &str, schema: &ElicitationSchema) -> Result<ElicitResult, Stop> {
    let form = RequestedForm::from_schema(schema)
        .map_err(|error| Stop::Failed(format!("this question cannot be asked here: {error}")))?;
    let mut content = Map::new();
    match form.fields() {
        [field] => {
            if let Some(value) = ask_field(field, &Wording::single(field, message))? {
                content.insert(field.name.clone(), value);
            }
        }
        fields => {
            eprintln!("{message}");
            for field in fields {
                if let Some(value) = ask_field(field, &Wording::of(field))? {
                    content.insert(field.name.clone(), value);
                }
            }
        }
    }
    Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
}

/// What a field's prompt says: the question, and the help line under it.
pub(crate) struct Wording {
    pub(crate) question: String,
    pub(crate) help: Vec<String>,
}

impl Wording {
    /// A field asked by its title; without one, by its description's first line (the
    /// rest becomes help), and only as a last resort by its property name.
    fn of(field: &Field) -> Self {
        let titled = field.label != field.name;
        let mut help = Vec::new();
        let question = match (&field.description, titled) {
            (Some(description), false) => {
                let mut lines = description.lines();
                let first = lines.next().unwrap_or(&field.name).trim().to_owned();
                let rest = lines.collect::<Vec<_>>().join(" ").trim().to_owned();
                if !rest.is_empty() {
                    help.push(rest);
                }
                first
            }
            (description, _) => {
                help.extend(description.iter().cloned());
                field.label.clone()
            }
        };
        Self { question, help }
    }

    /// The only field of a question: asked with the server's message; its title and
    /// description become help when they add something.
    fn single(field: &Field, message: &str) -> Self {
        let mut help = Vec::new();
        if field.label != field.name && field.label != message {
            help.push(field.label.clone());
        }
        help.extend(
            field
                .description
                .iter()
                .filter(|description| description.as_str() != message)
                .cloned(),
        );
        Self {
            question: message.to_owned(),
            help,
        }
    }

    /// The help line: the description, the bounds, "optional", then `keys`.
    fn help(&self, field: &Field, keys: &str) -> String {
        let mut parts = self.help.clone();
        parts.extend(bounds(field));
        if !field.required {
            parts.push("optional".into());
        }
        parts.push(keys.into());
        parts.join(" · ")
    }
}

/// The bounds and format of a field, in words.
fn bounds(field: &Field) -> Option<String> {
    match &field.kind {
        FieldKind::Text {
            min_length,
            max_length,
            format,
        } => {
            let length = range(
                min_length.map(|n| n as f64),
                max_length.map(|n| n as f64),
                " characters",
            );
            let format = format.as_deref().map(|format| match format {
                "email" => "an email address".to_owned(),
                "uri" => "a URI".to_owned(),
                "date" => "a date, YYYY-MM-DD".to_owned(),
                "date-time" => "a date and time, e.g. 2026-07-28T09:30:00Z".to_owned(),
                other => other.to_owned(),
            });
            let parts: Vec<String> = format.into_iter().chain(length).collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        FieldKind::Integer { minimum, maximum } => {
            range(*minimum, *maximum, "").map(|range| format!("a whole number {range}"))
        }
        FieldKind::Number { minimum, maximum } => {
            range(*minimum, *maximum, "").map(|range| format!("a number {range}"))
        }
        FieldKind::MultiChoice {
            min_items,
            max_items,
            ..
        } => range(min_items.map(|n| n as f64), max_items.map(|n| n as f64), "")
            .map(|range| format!("pick {range}")),
        _ => None,
    }
}

fn range(min: Option<f64>, max: Option<f64>, unit: &str) -> Option<String> {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            n.to_string()
        }
    };
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("from {} to {}{unit}", number(min), number(max))),
        (Some(min), None) => Some(format!("at least {}{unit}", number(min))),
        (None, Some(max)) => Some(format!("at most {}{unit}", number(max))),
        (None, None) => None,
    }
}

const SKIP: &str = "(skip)";

/// Asks one field with the prompt its kind calls for; `None` when an optional field is
/// skipped.
pub(crate) fn ask_field(field: &Field, wording: &Wording) -> Result<Option<Value>, Stop> {
    Ok(match &field.kind {
        FieldKind::Boolean => ask_boolean(field, wording)?,
        FieldKind::Choice { options } => ask_choice(field, wording, options)?,
        FieldKind::MultiChoice { options, .. } => ask_multi_choice(field, wording, options)?,
        FieldKind::Text { .. } | FieldKind::Integer { .. } | FieldKind::Number { .. } => {
            ask_text(field, wording)?
        }
        // A kind the restricted schema gains later: refuse rather than skip the field.
        _ => {
            return Err(Stop::Failed(format!(
                "`{}` is a kind of field this client cannot ask for",
                field.name
            )));
        }
    })
}

/// A yes/no question, starting at the field's default (or no).
fn ask_boolean(field: &Field, wording: &Wording) -> Result<Option<Value>, InquireError> {
    let default = field
        .default
        .as_ref()
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Confirm::new(&wording.question)
        .with_default(default)
        .with_help_message(&wording.help(field, "Esc declines"))
        .prompt()
        .map(|answer| Some(Value::Bool(answer)))
}

/// One option out of `options`, starting at the default; an optional field may be skipped.
fn ask_choice(
    field: &Field,
    wording: &Wording,
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
    let picked = Select::new(&wording.question, titles)
        .with_starting_cursor(start)
        .with_help_message(&wording.help(field, "↑↓ Enter · Esc declines"))
        .raw_prompt()?;
    Ok(options.get(picked.index).map(|(value, _)| value.clone()))
}

/// Any number of `options`, the defaults ticked, checked against the field's item bounds
/// before the prompt lets go; nothing picked skips an optional field.
fn ask_multi_choice(
    field: &Field,
    wording: &Wording,
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
    let picked = MultiSelect::new(&wording.question, titles)
        .with_default(&defaults)
        .with_help_message(&wording.help(field, "Space toggles, Enter confirms · Esc declines"))
        .with_validator(move |picked: &[inquire::list_option::ListOption<&&str>]| {
            let values = Value::Array(
                picked
                    .iter()
                    .filter_map(|option| all.get(option.index).cloned())
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
            .filter_map(|option| options.get(option.index).map(|(value, _)| value.clone()))
            .collect(),
    )))
}

/// A typed-in text or number, validated as it is typed; empty input takes the default.
fn ask_text(field: &Field, wording: &Wording) -> Result<Option<Value>, InquireError> {
    let checked = field.clone();
    let default = field.default.as_ref().map(|value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    });
    let help = wording.help(field, "Esc declines");
    let mut prompt = Text::new(&wording.question)
        .with_help_message(&help)
        .with_validator(move |input: &str| {
            Ok(match form::parse_text(&checked, input) {
                Ok(_) => Validation::Valid,
                Err(error) => Validation::Invalid(error.into()),
            })
        });
    if let Some(default) = &default {
        prompt = prompt.with_default(default);
    }
    let input = prompt.prompt()?;
    Ok(form::parse_text(field, &input)
        .unwrap_or(None)
        .or_else(|| field.default.clone()))
}

/// A URL elicitation: the message and the URL, then "Open this URL and continue?" (Enter
/// says yes). Esc or "no" declines.
pub(crate) fn ask_url(message: &str, url: &str) -> Result<ElicitationAction, Stop> {
    eprintln!("{message}\n  {url}");
    let consent = Confirm::new("Open this URL and continue?")
        .with_default(true)
        .with_help_message("Enter when done · n or Esc declines · Ctrl-C cancels the call")
        .prompt();
    match consent {
        Ok(true) => Ok(ElicitationAction::Accept),
        Ok(false) => Ok(ElicitationAction::Decline),
        Err(error) => match Stop::from(error) {
            Stop::Declined => Ok(ElicitationAction::Decline),
            other => Err(other),
        },
    }
}

/// Sampling answered by the person: the conversation the server wants a reply to, then
/// the reply typed in. Esc or Ctrl-C cancels the call (sampling has no "decline").
pub(crate) fn ask_sample(conversation: &str) -> Result<String, Stop> {
    eprintln!("The server asks for a model's reply to:\n{conversation}");
    Text::new("Your reply")
        .with_help_message("typed as the model's answer · Esc or Ctrl-C cancels the call")
        .with_validator(|input: &str| {
            Ok(if input.trim().is_empty() {
                Validation::Invalid("write a reply (Esc cancels the call)".into())
            } else {
                Validation::Valid
            })
        })
        .prompt()
        .map_err(|error| match Stop::from(error) {
            Stop::Declined => Stop::Interrupted,
            other => other,
        })
}

/// Roots: whether to share `dir`; Enter shares it, "no" or Esc shares nothing.
pub(crate) fn ask_share_root(dir: &std::path::Path) -> Result<bool, Stop> {
    let answer = Confirm::new(&format!(
        "Share {} with the server as a root?",
        dir.display()
    ))
    .with_default(true)
    .with_help_message("the server asks which directories it may work in · n or Esc shares none")
    .prompt();
    match answer {
        Ok(share) => Ok(share),
        Err(error) => match Stop::from(error) {
            Stop::Declined => Ok(false),
            other => Err(other),
        },
    }
}

/// A value typed as JSON (an argument whose schema no simple prompt fits).
pub(crate) fn ask_json(wording: &Wording) -> Result<Value, Stop> {
    let input = Text::new(&wording.question)
        .with_help_message(&wording.help.join(" · "))
        .with_validator(|input: &str| {
            Ok(match serde_json::from_str::<Value>(input) {
                Ok(_) => Validation::Valid,
                Err(error) => Validation::Invalid(format!("not JSON: {error}").into()),
            })
        })
        .prompt()?;
    serde_json::from_str(&input).map_err(|error| Stop::Failed(format!("not JSON: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::form::tests::field;

    #[test]
    fn a_field_is_asked_by_its_title_with_its_description_and_bounds_as_help() {
        let quantity = field(
            json!({"type": "integer", "title": "How many", "description": "Per dish", "minimum": 1, "maximum": 20}),
            true,
        );
        let wording = Wording::of(&quantity);
        assert_eq!(wording.question, "How many");
        assert_eq!(
            wording.help(&quantity, "Esc declines"),
            "Per dish · a whole number from 1 to 20 · Esc declines"
        );
    }

    #[test]
    fn an_untitled_field_is_asked_by_its_description_not_its_name() {
        let note = field(
            json!({"type": "string", "description": "Kitchen note\nShown on the ticket.", "maxLength": 80}),
            false,
        );
        let wording = Wording::of(&note);
        assert_eq!(wording.question, "Kitchen note");
        assert_eq!(
            wording.help(&note, "Esc declines"),
            "Shown on the ticket. · at most 80 characters · optional · Esc declines"
        );
    }

    #[test]
    fn a_one_field_question_is_worded_as_the_server_asked_it() {
        let confirm = field(json!({"type": "boolean", "title": "Go ahead"}), true);
        let wording = Wording::single(&confirm, "Deploy api to production?");
        assert_eq!(wording.question, "Deploy api to production?");
        assert_eq!(wording.help, ["Go ahead"]);
        let same = field(json!({"type": "boolean", "title": "Deploy?"}), true);
        assert!(Wording::single(&same, "Deploy?").help.is_empty());
    }

    #[test]
    fn formats_and_item_counts_are_said_in_words() {
        let email = field(json!({"type": "string", "format": "email"}), true);
        assert_eq!(bounds(&email).as_deref(), Some("an email address"));
        let regions = field(
            json!({"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["eu", "us"]}}),
            true,
        );
        assert_eq!(bounds(&regions).as_deref(), Some("pick at least 1"));
        let ratio = field(json!({"type": "number", "minimum": 0.5}), true);
        assert_eq!(bounds(&ratio).as_deref(), Some("a number at least 0.5"));
    }
}
