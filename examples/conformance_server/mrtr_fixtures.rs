//! The MRTR fixtures of the conformance suite — the `test_input_required_result_*` tools and
//! the `test_input_required_result_prompt` prompt — written as straight-line code with
//! `#[mrtr::tool]` / `#[mrtr::prompt]`. Keys are the ones the suite expects.

use mrtr::machine::{Elicited, InputKind, RequestCx};
use mrtr::rmcp::model::{PromptMessage, Role};
use mrtr::server::McpServerBuilder;
use serde::Deserialize;

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
struct Confirmation {
    ok: bool,
}

/// `{"context": string}`
#[derive(mrtr::Form, Deserialize)]
struct Context {
    context: String,
}

/// `{"input": string}`
#[derive(mrtr::Form, Deserialize)]
struct FreeText {
    input: String,
}

/// Asks the user's name, then greets them.
#[mrtr::tool]
async fn test_input_required_result_elicitation() -> String {
    match ask!(key = "user_name", form::<Name>("What is your name?")) {
        Elicited::Accept(Name { name }) => format!("Hello, {name}!"),
        Elicited::Decline | Elicited::Cancel => "No name given.".to_string(),
    }
}

/// Asks the client's model a question.
#[mrtr::tool]
async fn test_input_required_result_sampling() -> String {
    let answer = sample!(
        key = "capital_question",
        prompt("What is the capital of France?").max_tokens(100)
    );
    format!("The model answered: {}", answer.text())
}

/// Lists the client's roots.
#[mrtr::tool]
async fn test_input_required_result_list_roots() -> String {
    let roots = roots!(key = "client_roots");
    format!("Found {} root(s)", roots.len())
}

/// Asks for confirmation; the answer comes back with the sealed request state.
#[mrtr::tool]
async fn test_input_required_result_request_state() -> String {
    let confirmed = ask!(
        key = "confirm",
        form::<Confirmation>("Please confirm to continue")
    );
    format!(
        "state-ok: confirmed={}",
        confirmed.ok().is_some_and(|c| c.ok)
    )
}

/// Asks for a name, a sampled greeting and the roots, all in one round.
#[mrtr::tool]
async fn test_input_required_result_multiple_inputs() -> String {
    let (name, greeting, roots) = mrtr::join!(
        ask!(key = "user_name", form::<Name>("What is your name?")),
        sample!(
            key = "greeting",
            prompt("Generate a greeting").max_tokens(50)
        ),
        roots!(key = "client_roots")
    );
    let name = name.ok().map_or_else(|| "someone".to_string(), |n| n.name);
    format!("{} {name}; {} root(s)", greeting.text(), roots.len())
}

/// Asks a name, then — in a second round — a favorite color.
#[mrtr::tool]
async fn test_input_required_result_multi_round() -> String {
    let name = ask!(key = "step1", form::<Name>("Step 1: What is your name?"))
        .ok()
        .map_or_else(|| "someone".to_string(), |n| n.name);
    let color = ask!(
        key = "step2",
        form::<Color>("Step 2: What is your favorite color?")
    )
    .ok()
    .map_or_else(|| "no color".to_string(), |c| c.color);
    format!("Multi-round complete for {name} who likes {color}")
}

/// Asks for confirmation; a tampered request state is rejected before this code resumes.
#[mrtr::tool]
async fn test_input_required_result_tampered_state() -> String {
    let confirmed = ask!(
        key = "confirm",
        form::<Confirmation>("Please confirm to continue")
    );
    format!("confirmed={}", confirmed.ok().is_some_and(|c| c.ok))
}

/// Asks only for what this request's capabilities declare.
#[mrtr::tool]
async fn test_input_required_result_capabilities(cx: &RequestCx) -> String {
    if cx.supports(InputKind::Sampling) {
        let answer = sample!(
            key = "sample_input",
            prompt("Sample request").max_tokens(50)
        );
        format!("sampling: {}", answer.text())
    } else if cx.supports(InputKind::FormElicitation) {
        let answer = ask!(key = "elicit_input", form::<FreeText>("Provide input"));
        format!(
            "elicitation: {}",
            answer.ok().map_or_else(String::new, |a| a.input)
        )
    } else if cx.supports(InputKind::Roots) {
        let roots = roots!(key = "roots_input");
        format!("roots: {}", roots.len())
    } else {
        "The client declared no input capability; nothing to ask.".to_string()
    }
}

/// Asks for context through an elicitation before producing its message.
#[mrtr::prompt]
async fn test_input_required_result_prompt() -> Vec<PromptMessage> {
    let context = ask!(
        key = "user_context",
        form::<Context>("What context should the prompt use?")
    )
    .ok()
    .map_or_else(|| "none".to_string(), |c| c.context);
    vec![PromptMessage::new_text(
        Role::User,
        format!("Prompt with context: {context}"),
    )]
}

/// Registers every MRTR fixture.
pub fn register(builder: McpServerBuilder) -> McpServerBuilder {
    builder
        .tool(test_input_required_result_elicitation)
        .tool(test_input_required_result_sampling)
        .tool(test_input_required_result_list_roots)
        .tool(test_input_required_result_request_state)
        .tool(test_input_required_result_multiple_inputs)
        .tool(test_input_required_result_multi_round)
        .tool(test_input_required_result_tampered_state)
        .tool(test_input_required_result_capabilities)
        .prompt(test_input_required_result_prompt)
}
