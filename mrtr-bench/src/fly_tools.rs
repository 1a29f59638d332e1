//! The same tools written with [FlyMCPRust](https://crates.io/crates/flymcprust) 0.1.1, in
//! its own idiom: `#[tool] async fn` taking a `Ctx`, asking with `ctx.elicit(..).await?`
//! (`elicit_with_schema` where a field's title is the question), `ctx.sample(..)`, served by
//! its own hyper transport with its defaults (plain JSON responses, localhost Origin/Host
//! checks, HMAC-SHA256 `requestState` under a fresh random key, 600 s TTL).
//!
//! FlyMCPRust re-runs the tool from the start every round and replays earlier answers from
//! the state, so a question's key must be unique within one call: the survey asks under
//! `answer1`, `answer2`, ... where `mrtr` and the hand-written tool ask under `answer` each
//! round. Otherwise the questions (messages, fields, titles, the sampling prompt) and the
//! results are those of [`crate::macro_tools`], checked by `tests/side_by_side.rs`.
#![allow(deprecated)] // sampling is deprecated by SEP-2577 but still part of 2026-07-28

use std::io;
use std::net::SocketAddr;

use flymcprust::prelude::*;
use flymcprust::spec::{
    CreateMessageRequestParams, CreateMessageResultContent, Role, SamplingMessage,
    SamplingMessageContent, TextContent,
};
use flymcprust::transport::http::StreamableHttpService;
use flymcprust::{Elicitation, Server};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The profile form, derived by FlyMCPRust from the struct (titles as in `macro_tools`).
#[derive(Deserialize, JsonSchema)]
pub struct ProfileForm {
    /// The user's name.
    #[schemars(title = "Your name")]
    pub name: String,
    /// The user's age.
    #[schemars(title = "Your age", range(min = 18, max = 130))]
    pub age: u32,
    /// Newsletter opt-in.
    #[schemars(title = "Subscribe to the newsletter?")]
    pub newsletter: bool,
}

/// A one-field form whose field is titled with the question, as the other twins ask it.
fn single_field(field: &str, mut schema: Value, title: &str) -> Value {
    schema["title"] = json!(title);
    json!({"type": "object", "properties": {field: schema}, "required": [field]})
}

/// One field of an accepted single-field form, typed.
async fn ask_field<T: serde::de::DeserializeOwned>(
    ctx: &Ctx,
    key: &str,
    field: &str,
    schema: Value,
    message: String,
) -> Result<Option<T>, ToolError> {
    let form = single_field(field, schema, &message);
    match ctx.elicit_with_schema(key, message, form).await? {
        Elicitation::Accepted(mut content) => {
            let value = content.remove(field).unwrap_or(Value::Null);
            T::deserialize(value)
                .map(Some)
                .map_err(|_| ToolError::user(format!("`{field}` has the wrong type")))
        }
        Elicitation::Declined | Elicitation::Cancelled => Ok(None),
    }
}

fn not_accepted() -> ToolError {
    ToolError::user("The user did not accept.")
}

/// Deploy a service: choose the environment, confirm it, and let the client's model
/// summarize the deployment.
///
/// # Arguments
/// * `service` - The service to deploy.
#[tool]
pub async fn wizard(ctx: Ctx, service: String) -> Result<String, ToolError> {
    let options = json!({"type": "string", "enum": ["staging", "prod"]});
    let env: String = ask_field(
        &ctx,
        "env",
        "choice",
        options,
        format!("Where should {service} go?"),
    )
    .await?
    .ok_or_else(not_accepted)?;
    let confirmed: bool = ask_field(
        &ctx,
        "confirm",
        "confirm",
        json!({"type": "boolean"}),
        format!("Deploy {service} to {env}?"),
    )
    .await?
    .ok_or_else(not_accepted)?;
    if !confirmed {
        return Ok(format!("Deployment of {service} to {env} called off."));
    }
    let prompt = format!("Summarize the deployment of {service} to {env} in one sentence.");
    let message = SamplingMessage::new(
        SamplingMessageContent::TextContent(TextContent::new(prompt)),
        Role::User,
    );
    let sampled = ctx
        .sample(
            "summary",
            CreateMessageRequestParams::new(100, vec![message]),
        )
        .await?;
    let summary = match sampled.content {
        CreateMessageResultContent::TextContent(text) => text.text,
        _ => return Err(ToolError::user("the model did not answer with text")),
    };
    Ok(format!("{service} → {env}: {summary}"))
}

/// Ask `n` questions one after the other; the result is the answers joined by ",".
///
/// # Arguments
/// * `n` - How many questions to ask.
#[tool]
pub async fn survey(ctx: Ctx, n: u32) -> Result<String, ToolError> {
    let mut answers: Vec<String> = Vec::new();
    for question in 1..=n {
        let answer: String = ask_field(
            &ctx,
            &format!("answer{question}"),
            "text",
            json!({"type": "string"}),
            format!("Question {question} of {n}?"),
        )
        .await?
        .ok_or_else(not_accepted)?;
        answers.push(answer);
    }
    Ok(answers.join(","))
}

/// Ask for a profile in one form and echo it.
#[tool]
pub async fn profile(ctx: Ctx) -> Result<String, ToolError> {
    let profile: ProfileForm = ctx.elicit("profile", "Tell us about yourself.").await?;
    if !(18..=130).contains(&profile.age) {
        return Err(ToolError::user("age out of range"));
    }
    Ok(format!(
        "{}, {}, newsletter: {}",
        profile.name, profile.age, profile.newsletter
    ))
}

/// The FlyMCPRust server with the three tools.
///
/// ```
/// assert!(mrtr_bench::fly_tools::server().is_ok());
/// ```
pub fn server() -> Result<Server, Box<dyn std::error::Error + Send + Sync>> {
    Ok(Server::builder("fly-bench", env!("CARGO_PKG_VERSION"))
        .tool::<wizard>()
        .tool::<survey>()
        .tool::<profile>()
        .build()?)
}

/// Serves [`server`] at `/mcp` on `addr` with FlyMCPRust's own transport and defaults.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let (addr, _task) = mrtr_bench::fly_tools::serve("127.0.0.1:0".parse().unwrap()).await?;
/// # Ok(()) }
/// ```
pub async fn serve(addr: SocketAddr) -> io::Result<(SocketAddr, JoinHandle<()>)> {
    let service = StreamableHttpService::new(server().map_err(io::Error::other)?);
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let served =
            flymcprust::transport::http::serve(listener, service, "/mcp", std::future::pending())
                .await;
        if let Err(error) = served {
            eprintln!("bench-serve: the server stopped: {error}");
        }
    });
    Ok((bound, task))
}
