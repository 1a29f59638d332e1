//! The terminal MRTR client behind the `mrtr` binary, callable as a library.
//!
//! It behaves like the command-line tools people like: one prompt per question (the
//! field's title, its description as help, choices as a list, defaults and bounds shown),
//! Esc to decline a question, Ctrl-C to cancel the whole call, and a quiet screen unless
//! `--verbose` asks for the protocol transcript ([`Transcript`]).
//!
//! ```sh
//! mrtr tools -- ./my-server                      # what it offers, with arguments
//! mrtr call deploy --args '{"service": "api"}' -- ./my-server
//! mrtr call deploy --url http://127.0.0.1:8080/mcp
//! mrtr read secret://doc --url http://127.0.0.1:8080/mcp --answers answers.json
//! ```
//!
//! # Exit codes
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | done: the call completed (or the listing was printed) |
//! | 1 | the tool, prompt or resource reported an error (an `isError` result, a JSON-RPC error for the call, a failed task) |
//! | 2 | declined or cancelled: a question was declined (Esc, or the answers file), or the call was cancelled with Ctrl-C (a task is cancelled on the server with `tasks/cancel`, a legacy request with `notifications/cancelled`) |
//! | 3 | protocol or connection error: the server could not be started or reached, the connection dropped, the server sent something invalid or asked for what this run does not offer |
//! | 64 | the command line is wrong or incomplete (the message names the missing flag) |
//!
//! # Where answers come from
//!
//! [`TerminalAnswers`] asks the person at the terminal, or answers from an
//! [`AnswerScript`] (`--answers FILE`) when there is no TTY. Sampling is typed in at the
//! terminal unless `--sample-reply` or `--sample-command` answers it; roots are shared
//! only when given with `--root` or confirmed at the prompt.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mrtr_runtime::client::ClientError> {
//! use mrtr_cli::{Action, AnswerOptions, AnswerScript, Exit, Session, SessionOptions, TerminalAnswers};
//!
//! let script = AnswerScript::from_json(r#"{"inOrder": ["decline"]}"#).unwrap();
//! let answers = TerminalAnswers::scripted(script, AnswerOptions::default());
//! let transport = rmcp::transport::StreamableHttpClientTransport::from_uri("http://127.0.0.1:8080/mcp");
//! let session = Session::connect(transport, answers, SessionOptions::default()).await?;
//! let exit = session.run(&Action::CallTool { name: "deploy".into(), arguments: None }).await;
//! assert_eq!(exit, Exit::Declined);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

mod answers;
mod args;
mod exit;
pub mod form;
mod prompt;
mod render;
mod session;
mod signals;
mod transcript;

pub use answers::{AnswerOptions, AnswerScript, SampleSource, ScriptedAnswer, TerminalAnswers};
pub use exit::{Exit, describe_error};
pub use render::render_output;
use rmcp::model::JsonObject;
pub use session::{Session, SessionOptions};
pub use signals::Signals;
pub use transcript::Transcript;

/// What the terminal client does once connected.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// List tools, prompts and resources.
    List,
    /// List the tools with their arguments.
    ListTools,
    /// List the prompts with their arguments.
    ListPrompts,
    /// List the resources and resource templates.
    ListResources,
    /// `tools/call`.
    CallTool {
        /// Tool name.
        name: String,
        /// JSON object arguments.
        arguments: Option<JsonObject>,
    },
    /// `prompts/get`.
    GetPrompt {
        /// Prompt name.
        name: String,
        /// JSON object arguments.
        arguments: Option<JsonObject>,
    },
    /// `resources/read`.
    ReadResource {
        /// Resource URI.
        uri: String,
    },
}
