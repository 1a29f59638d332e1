//! The benchmarked tools written as a user of `mrtr` writes them: straight-line functions
//! with `ask!`/`sample!`, compiled into sealed state machines by `#[mrtr::tool]`.

use mrtr::machine::ToolError;
use mrtr::server::McpServer;
use mrtr::token::KeyRing;
use serde::{Deserialize, Serialize};

/// The profile form: three fields, one of them bounded.
///
/// ```
/// use mrtr::form::Form;
/// let schema = serde_json::to_value(mrtr_bench::macro_tools::Profile::requested_schema()).unwrap();
/// assert_eq!(schema["properties"]["age"]["minimum"], 18);
/// ```
#[derive(mrtr::Form, Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Profile {
    /// Your name
    pub name: String,
    /// Your age
    #[form(minimum = 18, maximum = 130)]
    pub age: u32,
    /// Subscribe to the newsletter?
    pub newsletter: bool,
}

/// Deploy a service: choose the environment, confirm it, and let the client's model
/// summarize the deployment.
#[mrtr::tool]
pub async fn wizard(
    /// The service to deploy.
    service: String,
) -> Result<String, ToolError> {
    let env = ask!(
        key = "env",
        choice(format!("Where should {service} go?"), ["staging", "prod"])
    )
    .accepted()?;
    if !ask!(
        key = "confirm",
        confirm(format!("Deploy {service} to {env}?"))
    )
    .accepted()?
    {
        return Ok(format!("Deployment of {service} to {env} called off."));
    }
    let summary = sample!(
        key = "summary",
        prompt(format!(
            "Summarize the deployment of {service} to {env} in one sentence."
        ))
        .max_tokens(100)
    );
    Ok(format!("{service} → {env}: {}", summary.text()))
}

/// Ask `n` questions one after the other; the result is the answers joined by ",".
#[mrtr::tool]
pub async fn survey(
    /// How many questions to ask.
    n: u32,
) -> Result<String, ToolError> {
    let mut answers: Vec<String> = Vec::new();
    for question in 1..=n {
        let answer =
            ask!(key = "answer", text(format!("Question {question} of {n}?"))).accepted()?;
        answers.push(answer);
    }
    Ok(answers.join(","))
}

/// Ask for a profile in one form and echo it.
#[mrtr::tool]
pub async fn profile() -> Result<String, ToolError> {
    let profile = ask!(key = "profile", form::<Profile>("Tell us about yourself.")).accepted()?;
    Ok(format!(
        "{}, {}, newsletter: {}",
        profile.name, profile.age, profile.newsletter
    ))
}

/// The `mrtr` server with the three tools, sealing with a fresh process-local key.
///
/// ```
/// let server = mrtr_bench::macro_tools::server().unwrap();
/// # drop(server);
/// ```
pub fn server() -> Result<McpServer, Box<dyn std::error::Error + Send + Sync>> {
    Ok(McpServer::builder("mrtr-bench")
        .keys(KeyRing::generate_process_local()?)
        .tool(wizard)
        .tool(survey)
        .tool(profile)
        .build()?)
}
