//! A prompt that asks the user for its topic instead of requiring it as an argument.

use mrtr::machine::Elicited;
use mrtr::rmcp::model::{PromptMessage, Role};

/// Explain a topic; asks which topic (and how deep) when it is called.
#[mrtr::prompt(name = "explain")]
pub async fn explain_prompt(
    /// Who the explanation is for, e.g. "a new team member".
    audience: Option<String>,
) -> Vec<PromptMessage> {
    let audience = audience.unwrap_or_else(|| "a curious beginner".to_string());
    let topic = match ask!(key = "topic", text("What should be explained?")) {
        Elicited::Accept(topic) if !topic.trim().is_empty() => topic.trim().to_string(),
        _ => {
            return vec![PromptMessage::new_text(
                Role::User,
                "Ask me which topic I would like explained, then explain it simply.",
            )];
        }
    };
    let depth = ask!(
        key = "depth",
        choice(format!("How deep on {topic}?"), ["overview", "in depth"])
    )
    .ok()
    .unwrap_or_else(|| "overview".to_string());
    vec![PromptMessage::new_text(
        Role::User,
        format!("Explain {topic} to {audience}. Give an {depth} with one concrete example."),
    )]
}
