//! The tasks-extension fixtures of the conformance suite (`tasks-*`, SEP-2663), written as
//! `#[mrtr::tool]` machines: the same straight-line bodies run as tasks for a client that
//! declares `io.modelcontextprotocol/tasks`, and as ordinary calls for one that does not.

use std::time::Duration;

use mrtr::machine::{Elicited, ToolError};
use mrtr::server::McpServerBuilder;
use serde::Deserialize;

/// `{"name": string}`
#[derive(mrtr::Form, Deserialize)]
struct Name {
    name: String,
}

/// `{"name": string, "confirm": boolean}`
#[derive(mrtr::Form, Deserialize)]
struct NamedConfirmation {
    name: String,
    confirm: bool,
}

/// Greets, at once: never a task.
#[mrtr::tool]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Sleeps `seconds` seconds, then reports; runs as a task when the client allows it.
#[mrtr::tool(task = "optional")]
async fn slow_compute(
    /// How long the computation takes.
    seconds: u64,
    /// A label echoed in the result.
    label: Option<String>,
) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let label = label.unwrap_or_else(|| "compute".to_string());
    format!("{label}: done after {seconds}s")
}

/// Fails as a tool (not as a protocol error) after about a second; only as a task.
#[mrtr::tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("the job failed"))
}

/// Panics: the task ends `failed` with a JSON-RPC error.
#[mrtr::tool(task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job always fails inside the server")
}

/// Asks to confirm a deletion, then reports.
#[mrtr::tool(task = "optional")]
async fn confirm_delete(
    /// The file to delete.
    filename: String,
) -> String {
    match ask!(key = "confirm", confirm(format!("Delete {filename}?"))) {
        Elicited::Accept(true) => format!("Deleted {filename}."),
        _ => format!("Kept {filename}."),
    }
}

/// Asks two questions at once.
#[mrtr::tool(task = "optional")]
async fn multi_input() -> String {
    let (first, second) = mrtr::join!(
        ask!(key = "first", form::<NamedConfirmation>("First input")),
        ask!(key = "second", form::<NamedConfirmation>("Second input"))
    );
    let name = |answer: Elicited<NamedConfirmation>| {
        answer.ok().map_or_else(
            || "none".to_string(),
            |a| format!("{} ({})", a.name, a.confirm),
        )
    };
    format!("Got {} and {}", name(first), name(second))
}

/// Asks the user's name as an MRTR round, then finishes as a task.
#[mrtr::tool(task = "required", task_after = 1)]
async fn test_tool_with_task() -> String {
    let name = match ask!(key = "user_name", form::<Name>("What is your name?")) {
        Elicited::Accept(Name { name }) => name,
        _ => "nobody".to_string(),
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    format!("Hello, {name}! (finished as a task)")
}

/// Registers every tasks fixture.
pub fn register(builder: McpServerBuilder) -> McpServerBuilder {
    builder
        .tool(greet)
        .tool(slow_compute)
        .tool(failing_job)
        .tool(protocol_error_job)
        .tool(confirm_delete)
        .tool(multi_input)
        .tool(test_tool_with_task)
}
