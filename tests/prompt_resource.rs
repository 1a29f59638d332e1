//! `#[mrtr::prompt]` and `#[mrtr::resource]` through real sealing.

mod machine_support;

use machine_support::*;
use mrtr::machine::{Listing, Machine, RequestCx};
use rmcp::model::{PromptMessage, Role};
use serde_json::json;

/// Brainstorm ideas on a topic, asking for the tone first.
#[mrtr::prompt(name = "brainstorm")]
async fn brainstorm_prompt(
    /// What to brainstorm about.
    topic: String,
    /// How many ideas.
    count: Option<String>,
) -> Vec<PromptMessage> {
    let tone = ask!(choice("Tone?", ["serious", "playful"]))
        .ok()
        .unwrap_or_else(|| "neutral".into());
    let count = count.unwrap_or_else(|| "3".into());
    vec![PromptMessage::new_text(
        Role::User,
        format!("Give {count} {tone} ideas about {topic}."),
    )]
}

/// Today's notes, for the workspace the client shows.
#[mrtr::resource(uri = "notes://today", mime_type = "text/plain")]
async fn notes(cx: &RequestCx) -> String {
    let roots = if cx.supports(mrtr::machine::InputKind::Roots) {
        roots!().len()
    } else {
        0
    };
    format!("{roots} roots")
}

#[tokio::test]
async fn prompt_asks_then_returns_messages() {
    let flow = drive(&brainstorm_prompt, json!({"topic": "tea"}), |_, _, _| {
        accept(json!({"choice": "playful"}))
    })
    .await
    .unwrap();
    assert_eq!(flow.rounds.len(), 1);
    let message = &flow.output.messages[0];
    assert_eq!(
        serde_json::to_value(message).unwrap()["content"]["text"],
        "Give 3 playful ideas about tea."
    );
    let Listing::Prompt(prompt) = &brainstorm_prompt.descriptor().listing else {
        panic!()
    };
    assert_eq!(prompt.name, "brainstorm");
    let arguments = prompt.arguments.as_ref().unwrap();
    assert_eq!(arguments[0].name, "topic");
    assert_eq!(arguments[0].required, Some(true));
    assert_eq!(arguments[1].required, Some(false));
    assert_eq!(arguments[1].description.as_deref(), Some("How many ideas."));
}

#[tokio::test]
async fn resource_reads_with_roots() {
    let flow = drive(&notes, json!({}), |_, _, _| {
        roots(&["file:///a", "file:///b"])
    })
    .await
    .unwrap();
    assert_eq!(flow.rounds.len(), 1);
    let contents = serde_json::to_value(&flow.output.contents[0]).unwrap();
    assert_eq!(contents["text"], "2 roots");
    assert_eq!(contents["uri"], "notes://today");
    let Listing::Resource(resource) = &notes.descriptor().listing else {
        panic!()
    };
    assert_eq!(resource.uri, "notes://today");
    assert_eq!(resource.mime_type.as_deref(), Some("text/plain"));
}

/// The house style, shared by every prompt and resource (application state).
#[derive(Clone)]
struct Style {
    voice: &'static str,
}

/// A prompt with application state: not listed as an argument.
#[mrtr::prompt(name = "styled")]
async fn styled_prompt(style: mrtr::State<Style>, topic: String) -> String {
    let tone = ask!(choice("Tone?", ["serious", "playful"]))
        .ok()
        .unwrap_or_default();
    format!("In a {} voice, {tone} ideas about {topic}.", style.voice)
}

/// A resource with application state.
#[mrtr::resource(uri = "notes://styled")]
async fn styled_notes(mrtr::State(style): mrtr::State<Style>) -> String {
    let count = roots!().len();
    format!("{} notes for {count} roots", style.voice)
}

#[tokio::test]
async fn prompts_and_resources_take_app_state_too() {
    let harness = mrtr::testing::Harness::new().app_state(Style { voice: "warm" });
    let flow = drive_with(
        &harness,
        &styled_prompt,
        json!({"topic": "tea"}),
        |_, _, _| accept(json!({"choice": "playful"})),
    )
    .await
    .unwrap();
    assert_eq!(
        serde_json::to_value(&flow.output.messages[0]).unwrap()["content"]["text"],
        "In a warm voice, playful ideas about tea."
    );
    let Listing::Prompt(prompt) = &styled_prompt.descriptor().listing else {
        panic!()
    };
    let names: Vec<&str> = prompt
        .arguments
        .iter()
        .flatten()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["topic"]);

    let flow = drive_with(&harness, &styled_notes, json!({}), |_, _, _| {
        roots(&["file:///a"])
    })
    .await
    .unwrap();
    let contents = serde_json::to_value(&flow.output.contents[0]).unwrap();
    assert_eq!(contents["text"], "warm notes for 1 roots");
}
