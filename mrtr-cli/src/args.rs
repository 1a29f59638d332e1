//! A call's arguments from the listing: what `tools/list` (each input schema) and
//! `prompts/list` say a call takes, and asking for a required one that `--args` lacks.

use mrtr_runtime::form::RequestedForm;
use serde_json::{Value, json};

use crate::prompt::{self, Stop, Wording};

/// One argument a tool or prompt takes.
#[derive(Debug, Clone)]
pub(crate) struct Argument {
    pub(crate) name: String,
    pub(crate) required: bool,
    /// Its JSON Schema (prompt arguments are strings).
    pub(crate) schema: Value,
}

/// The arguments of a listed tool, from its input schema.
pub(crate) fn from_schema(tool: &Value) -> Vec<Argument> {
    let schema = &tool["inputSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| Argument {
            name: name.clone(),
            required: required.contains(&name.as_str()),
            schema: property.clone(),
        })
        .collect()
}

/// The arguments of a listed prompt (strings).
pub(crate) fn from_prompt(prompt: &Value) -> Vec<Argument> {
    prompt["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|argument| {
            let mut schema = json!({"type": "string"});
            for key in ["title", "description"] {
                if let Some(text) = argument[key].as_str() {
                    schema[key] = json!(text);
                }
            }
            Some(Argument {
                name: argument["name"].as_str()?.to_owned(),
                required: argument["required"] == true,
                schema,
            })
        })
        .collect()
}

/// Asks for `argument` at the terminal: with the prompt its schema calls for when it is a
/// simple value, else as JSON.
pub(crate) fn ask(argument: &Argument) -> Result<Value, Stop> {
    let form = json!({
        "type": "object",
        "properties": {&argument.name: argument.schema},
        "required": [&argument.name],
    });
    let mut help: Vec<String> = argument.schema["description"]
        .as_str()
        .map(str::to_owned)
        .into_iter()
        .collect();
    let title = argument.schema["title"]
        .as_str()
        .unwrap_or(&argument.name)
        .to_owned();
    let question = format!("{title} (argument `{}`)", argument.name);
    if let Some(field) = RequestedForm::parse(&form)
        .ok()
        .and_then(|form| form.fields().first().cloned())
    {
        let wording = Wording { question, help };
        return prompt::ask_field(&field, &wording)?
            .ok_or_else(|| Stop::Failed(format!("`{}` is required", argument.name)));
    }
    help.push("as JSON".into());
    let wording = Wording { question, help };
    prompt::ask_json(&wording)
}
