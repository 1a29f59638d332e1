//! What the terminal client prints: a call's result (text as text, structured content
//! pretty-printed once) and the listings of tools, prompts and resources with their
//! arguments.

use mrtr_runtime::client::CallOutput;
use serde::Serialize;
use serde_json::Value;

/// The `_meta` key under which an mrtr server lists the input kinds a tool may ask for.
pub(crate) const INPUT_KINDS: &str = "io.github.mrtr/inputKinds";

fn json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// A call's result as lines for the terminal, and whether the tool reported an error.
///
/// ```
/// use mrtr_runtime::client::CallOutput;
/// use rmcp::model::{CallToolResult, ContentBlock};
/// let result = CallToolResult::success(vec![ContentBlock::text("deployed")]);
/// let (text, is_error) = mrtr_cli::render_output(&CallOutput::Tool(result));
/// assert_eq!((text.as_str(), is_error), ("deployed", false));
/// ```
pub fn render_output(output: &CallOutput) -> (String, bool) {
    match output {
        CallOutput::Tool(result) => {
            let result = json(result);
            let structured = result.get("structuredContent").filter(|v| !v.is_null());
            let mut lines = Vec::new();
            for block in result["content"].as_array().into_iter().flatten() {
                match block["text"].as_str() {
                    // The same data as the structured content: printed once, below.
                    Some(text) if structured.is_some_and(|s| same_json(text, s)) => {}
                    Some(text) => lines.push(text.to_owned()),
                    None => lines.push(content_placeholder(block)),
                }
            }
            if let Some(structured) = structured {
                lines.push(pretty(structured));
            }
            (lines.join("\n"), result["isError"] == true)
        }
        CallOutput::Prompt(result) => {
            let result = json(result);
            let mut lines = Vec::new();
            if let Some(description) = result["description"].as_str() {
                lines.push(description.to_owned());
            }
            for message in result["messages"].as_array().into_iter().flatten() {
                let role = message["role"].as_str().unwrap_or("user");
                let content = &message["content"];
                let text = match content["text"].as_str() {
                    Some(text) => text.to_owned(),
                    None => content_placeholder(content),
                };
                lines.push(format!("{role}: {text}"));
            }
            (lines.join("\n"), false)
        }
        CallOutput::Resource(result) => {
            let result = json(result);
            let lines: Vec<String> = result["contents"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|contents| match contents["text"].as_str() {
                    Some(text) => text.to_owned(),
                    None => format!(
                        "[{} bytes of {} at {}]",
                        contents["blob"].as_str().map_or(0, |b| b.len() * 3 / 4),
                        contents["mimeType"].as_str().unwrap_or("binary data"),
                        contents["uri"].as_str().unwrap_or("?")
                    ),
                })
                .collect();
            (lines.join("\n"), false)
        }
        _ => (String::new(), false),
    }
}

fn same_json(text: &str, structured: &Value) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == structured)
}

/// A content block that is not text, in words: `[image/png image]`, `[resource file://x]`.
fn content_placeholder(block: &Value) -> String {
    let kind = block["type"].as_str().unwrap_or("other");
    match kind {
        "image" | "audio" => format!(
            "[{} {kind}]",
            block["mimeType"].as_str().unwrap_or("binary")
        ),
        "resource_link" => format!("[resource {}]", block["uri"].as_str().unwrap_or("?")),
        "resource" => match block["resource"]["text"].as_str() {
            Some(text) => text.to_owned(),
            None => format!(
                "[resource {}]",
                block["resource"]["uri"].as_str().unwrap_or("?")
            ),
        },
        other => format!("[{other} content]"),
    }
}

/// The input kinds an entry's `_meta` says it may ask for (`["elicitation.form", ...]`).
pub(crate) fn input_kinds(entry: &Value) -> Vec<String> {
    entry["_meta"][INPUT_KINDS]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|kind| kind.as_str().map(str::to_owned))
        .collect()
}

fn heading(entry: &Value, name: &str) -> String {
    let mut line = name.to_owned();
    if let Some(title) = entry["title"].as_str().filter(|title| *title != name) {
        line.push_str(&format!(" ({title})"));
    }
    if let Some(description) = entry["description"].as_str() {
        line.push_str(&format!("\n    {}", description.replace('\n', "\n    ")));
    }
    line
}

fn asks_line(entry: &Value) -> Option<String> {
    let kinds = input_kinds(entry);
    (!kinds.is_empty()).then(|| format!("    asks for: {}", kinds.join(", ")))
}

/// The tools with their arguments (from each input schema) and what they may ask for.
pub(crate) fn tools(tools: &[Value]) -> String {
    let mut out = Vec::new();
    for tool in tools {
        let name = tool["name"].as_str().unwrap_or("?");
        out.push(heading(tool, name));
        let schema = &tool["inputSchema"];
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if let Some(properties) = schema["properties"].as_object() {
            for (arg, property) in properties {
                out.push(argument_line(
                    arg,
                    Some(&type_of(property)),
                    required.contains(&arg.as_str()),
                    property["description"]
                        .as_str()
                        .or(property["title"].as_str()),
                ));
            }
        }
        out.extend(asks_line(tool));
    }
    if tools.is_empty() {
        out.push("(no tools)".into());
    }
    out.join("\n")
}

fn argument_line(name: &str, kind: Option<&str>, required: bool, about: Option<&str>) -> String {
    let mut line = format!("    --args {name}");
    if let Some(kind) = kind {
        line.push_str(&format!(": {kind}"));
    }
    line.push_str(if required {
        " (required)"
    } else {
        " (optional)"
    });
    if let Some(about) = about {
        line.push_str(&format!(" — {about}"));
    }
    line
}

/// A schema's type in a few words: `string`, `integer 1–20`, `one of a, b`.
pub(crate) fn type_of(property: &Value) -> String {
    if let Some(options) = property["enum"].as_array() {
        let names: Vec<String> = options
            .iter()
            .map(|v| v.as_str().map_or(v.to_string(), str::to_owned))
            .collect();
        return format!("one of {}", names.join(", "));
    }
    let kind = match &property["type"] {
        Value::String(kind) => kind.clone(),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|kind| *kind != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any JSON value".into(),
    };
    match (property["minimum"].as_f64(), property["maximum"].as_f64()) {
        (Some(min), Some(max)) => format!("{kind} {min}–{max}"),
        (Some(min), None) => format!("{kind} ≥ {min}"),
        (None, Some(max)) => format!("{kind} ≤ {max}"),
        (None, None) => kind,
    }
}

/// The prompts with their arguments.
pub(crate) fn prompts(prompts: &[Value]) -> String {
    let mut out = Vec::new();
    for prompt in prompts {
        let name = prompt["name"].as_str().unwrap_or("?");
        out.push(heading(prompt, name));
        for argument in prompt["arguments"].as_array().into_iter().flatten() {
            out.push(argument_line(
                argument["name"].as_str().unwrap_or("?"),
                None,
                argument["required"] == true,
                argument["description"]
                    .as_str()
                    .or(argument["title"].as_str()),
            ));
        }
        out.extend(asks_line(prompt));
    }
    if prompts.is_empty() {
        out.push("(no prompts)".into());
    }
    out.join("\n")
}

/// The resources, then the resource templates.
pub(crate) fn resources(resources: &[Value], templates: &[Value]) -> String {
    let mut out = Vec::new();
    for resource in resources {
        let uri = resource["uri"].as_str().unwrap_or("?");
        let mut entry = resource.clone();
        if entry["description"].is_null() {
            entry["description"] = resource["name"].clone();
        }
        out.push(heading(&entry, uri));
        out.extend(asks_line(resource));
    }
    if resources.is_empty() {
        out.push("(no resources)".into());
    }
    if !templates.is_empty() {
        out.push("templates (fill in the {placeholders}):".into());
        for template in templates {
            let uri = template["uriTemplate"].as_str().unwrap_or("?");
            let mut entry = template.clone();
            if entry["description"].is_null() {
                entry["description"] = template["name"].clone();
            }
            out.push(heading(&entry, uri));
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_content_is_printed_once_and_pretty() {
        let result: rmcp::model::CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": "{\"total\":3}"}],
            "structuredContent": {"total": 3}
        }))
        .unwrap();
        let (text, is_error) = render_output(&CallOutput::Tool(result));
        assert_eq!(text, "{\n  \"total\": 3\n}");
        assert!(!is_error);
    }

    #[test]
    fn tools_list_their_arguments_and_kinds() {
        let tool = json!({
            "name": "order_food", "description": "Take an order.",
            "inputSchema": {"type": "object", "properties": {
                "customer": {"type": "string", "description": "Who the order is for."}},
                "required": ["customer"]},
            "_meta": {INPUT_KINDS: ["elicitation.form", "sampling"]}
        });
        let text = tools(&[tool]);
        assert!(text.contains("order_food\n    Take an order."), "{text}");
        assert!(
            text.contains("--args customer: string (required) — Who the order is for."),
            "{text}"
        );
        assert!(
            text.contains("asks for: elicitation.form, sampling"),
            "{text}"
        );
    }
}
