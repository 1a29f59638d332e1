//! How a run ends: the exit code, and failures told in words (no Rust type names), with
//! the flag that would help when there is one.

use mrtr_runtime::client::ClientError;

/// How a run of the terminal client ended; [`code`](Self::code) is the process exit code.
///
/// | code | meaning |
/// |------|---------|
/// | 0 | done: the call completed (or the listing was printed) |
/// | 1 | the tool, prompt or resource reported an error: an `isError` result, a JSON-RPC error for the call, a failed task |
/// | 2 | declined or cancelled: a question was declined (Esc, or the answers file), or the call was cancelled (Ctrl-C; a task is cancelled on the server too) |
/// | 3 | protocol or connection error: the server could not be started or reached, the connection dropped, the server sent something invalid, or asked for what this client does not offer |
/// | 64 | the command line is wrong or incomplete (a missing flag named in the message) |
///
/// ```
/// use mrtr_cli::Exit;
/// assert_eq!(Exit::Done.code(), 0);
/// assert_eq!(Exit::ToolError.code(), 1);
/// assert_eq!(Exit::Declined.code(), 2);
/// assert_eq!(Exit::Failed.code(), 3);
/// assert_eq!(Exit::Usage.code(), 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Done,
    /// 1: the tool (prompt, resource) reported an error.
    ToolError,
    /// 2: a question was declined, or the call cancelled.
    Declined,
    /// 3: protocol or connection error.
    Failed,
    /// 64: the command line is wrong or incomplete.
    Usage,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::ToolError => 1,
            Exit::Declined => 2,
            Exit::Failed => 3,
            Exit::Usage => 64,
        }
    }

    /// The exit code a failed call ends with: 1 when the server answered the call with an
    /// error, 2 when a task was cancelled, 3 otherwise.
    ///
    /// ```
    /// use mrtr_cli::Exit;
    /// use mrtr_runtime::client::ClientError;
    /// let refused = ClientError::Server(rmcp::ErrorData::invalid_params("no tool x", None));
    /// assert_eq!(Exit::of_error(&refused), Exit::ToolError);
    /// assert_eq!(Exit::of_error(&ClientError::Protocol("boom".into())), Exit::Failed);
    /// ```
    pub fn of_error(error: &ClientError) -> Exit {
        match error {
            // -32021: the client lacks a capability; the fix is on this side.
            ClientError::Server(data) if data.code.0 == MISSING_CAPABILITY => Exit::Failed,
            ClientError::Server(_) => Exit::ToolError,
            ClientError::TaskCancelled { .. } => Exit::Declined,
            ClientError::RetriesExhausted { last, .. } => Exit::of_error(last),
            _ => Exit::Failed,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

/// `MissingRequiredClientCapabilityError`.
const MISSING_CAPABILITY: i32 = -32021;

/// A call's failure in words: what happened, its cause when that helps, and what to try.
///
/// ```
/// use mrtr_cli::describe_error;
/// use mrtr_runtime::client::ClientError;
/// let error = ClientError::Server(rmcp::ErrorData::new(
///     rmcp::model::ErrorCode(-32021),
///     "Server requires the sampling capability",
///     Some(serde_json::json!({"requiredCapabilities": {"sampling": {}}})),
/// ));
/// assert!(describe_error(&error).contains("--sample-reply"));
/// ```
pub fn describe_error(error: &ClientError) -> String {
    match error {
        ClientError::Server(data) if data.code.0 == MISSING_CAPABILITY => {
            let needed: Vec<String> = data
                .data
                .as_ref()
                .and_then(|data| data.get("requiredCapabilities"))
                .and_then(|caps| caps.as_object())
                .map(|caps| caps.keys().cloned().collect())
                .unwrap_or_default();
            let hints: Vec<&str> = needed.iter().filter_map(|cap| flag_for(cap)).collect();
            let mut text = format!("the server needs {}, which was not offered", {
                if needed.is_empty() {
                    "a capability".to_owned()
                } else {
                    needed.join(" and ")
                }
            });
            if !hints.is_empty() {
                text.push_str(&format!(": pass {}", hints.join(", ")));
            }
            text
        }
        ClientError::Server(data) => format!("the server refused: {}", data.message),
        ClientError::RetriesExhausted { attempts, last } => {
            format!("{} (tried {attempts} times)", describe_error(last))
        }
        ClientError::Connect(source) => with_legacy_hint(format!(
            "could not connect to the server: {}",
            transport_cause(source.as_ref())
        )),
        ClientError::ConnectionLost { source, .. } => format!(
            "the connection to the server was lost: {}",
            transport_cause(source.as_ref())
        ),
        ClientError::Protocol(source) => with_legacy_hint(format!(
            "protocol error: {}",
            transport_cause(source.as_ref())
        )),
        ClientError::HandlerFailed { source, .. } => cause(source.as_ref()),
        ClientError::UnsupportedInputRequest { kind, .. } => {
            let short = kind.as_str();
            match flag_for(short.split('.').next().unwrap_or(short)) {
                Some(flag) => {
                    format!("the server asked for {kind}, which was not offered: pass {flag}")
                }
                None => format!("the server asked for {kind}, which this client cannot answer"),
            }
        }
        ClientError::MalformedInputRequest { key, source } => {
            format!(
                "the server sent an invalid question `{key}`: {}",
                cause(source.as_ref())
            )
        }
        ClientError::MalformedResult { source } => {
            format!(
                "the server sent an invalid result: {}",
                cause(source.as_ref())
            )
        }
        other => other.to_string(),
    }
}

/// The flag that offers a capability, for messages.
pub(crate) fn flag_for(capability: &str) -> Option<&'static str> {
    match capability {
        "sampling" => Some(
            "--sample-reply TEXT or --sample-command CMD (or run it at a terminal and type the reply)",
        ),
        "roots" => Some("--root DIR"),
        "elicitation" => Some("--answers FILE (or run it at a terminal)"),
        _ => None,
    }
}

/// A transport failure in words: the operating system's reason when the error carries one
/// (transports keep it only in their debug form), else the chain's messages.
fn transport_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let debug = format!("{error:?}");
    let known = [
        (
            "ConnectionRefused",
            "connection refused (is the server running at that address?)",
        ),
        ("dns error", "the host name does not resolve"),
        ("ConnectionReset", "the connection was reset"),
        ("TimedOut", "the connection timed out"),
        (
            "BrokenPipe",
            "the server closed the connection (did it exit?)",
        ),
        (
            "UnexpectedEof",
            "the server closed the connection (did it exit?)",
        ),
    ];
    match known.iter().find(|(marker, _)| debug.contains(marker)) {
        Some((_, reason)) => (*reason).to_owned(),
        None => cause(error),
    }
}

/// The innermost useful message of an error chain, with no Rust type names: the messages
/// of every cause joined, the Debug-looking parts dropped.
fn cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(error) = current {
        let text = error.to_string();
        let text = readable(&text);
        if !text.is_empty() && !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        current = error.source();
    }
    if parts.is_empty() {
        return "no reason given".into();
    }
    parts.join(": ")
}

/// Drops what reads like Rust (`Some(..)`, `Error { kind: .. }`, `StreamableHttpError::...`)
/// from an error message.
fn readable(text: &str) -> String {
    let looks_like_rust = |word: &str| {
        word.contains("::")
            || word.contains("Error {")
            || word.contains("Error(")
            || word.starts_with("Some(")
            || word.contains("kind: ")
            || word.contains(['{', '}'])
    };
    text.split(": ")
        .filter(|part| !part.trim().is_empty() && !looks_like_rust(part))
        .collect::<Vec<_>>()
        .join(": ")
        .trim()
        .to_owned()
}

/// Adds the `--legacy` hint when the message says the server predates 2026-07-28.
fn with_legacy_hint(message: String) -> String {
    let lower = message.to_lowercase();
    let legacy = [
        "session id",
        "protocol version",
        "unsupported version",
        "server/discover",
        "method not found",
        "-32601",
        "-32022",
        "initialize",
    ]
    .iter()
    .any(|marker| lower.contains(marker));
    if legacy {
        format!(
            "{message}\nhint: this server may only speak MCP 2025-11-25; try again with --legacy"
        )
    } else {
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_session_id_suggests_legacy() {
        let error = ClientError::Connect("Unexpected server response: Missing session ID".into());
        let text = describe_error(&error);
        assert!(text.contains("Missing session ID"), "{text}");
        assert!(text.contains("--legacy"), "{text}");
    }

    #[test]
    fn rust_looking_parts_are_dropped() {
        assert_eq!(
            readable("send failed: Client(reqwest::Error { kind: Connect }): connection refused"),
            "send failed: connection refused"
        );
    }
}
