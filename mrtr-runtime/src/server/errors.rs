//! The JSON-RPC errors the adapter answers with. One place, so codes and messages stay
//! consistent: `-32602` for bad parameters and every rejected `requestState` (one fixed
//! message; the reason goes only to `tracing`), `-32021` for undeclared capabilities,
//! `-32603` for bugs.

use rmcp::ErrorData;
use rmcp::model::ClientCapabilities;
use serde_json::Value;

use super::ratelimit::{RateLimited, log_limited};

use crate::error::ErrorChain;
use crate::machine::{InputKind, StepError};
use crate::token::REJECTED_STATE_MESSAGE;

/// `-32602` with the one message every rejected `requestState` gets.
pub(crate) fn rejected_state() -> ErrorData {
    ErrorData::invalid_params(REJECTED_STATE_MESSAGE, None)
}

/// `-32602` for arguments that do not match the schema.
pub(crate) fn invalid_arguments(cause: &(dyn std::error::Error + 'static)) -> ErrorData {
    ErrorData::invalid_params(format!("invalid arguments: {}", ErrorChain(cause)), None)
}

/// `-32021` naming every capability the pending requests need, as one object.
pub(crate) fn missing_capabilities(kinds: &[InputKind]) -> ErrorData {
    let mut error = ErrorData::missing_required_client_capability(required_capabilities(kinds));
    error.message = format!(
        "this request needs client capabilities it did not declare: {}",
        kind_names(kinds)
    )
    .into();
    error
}

/// The capabilities `kinds` need, merged into one object.
fn required_capabilities(kinds: &[InputKind]) -> ClientCapabilities {
    let mut required = serde_json::Map::new();
    for kind in kinds {
        if let Ok(Value::Object(one)) = serde_json::to_value(kind.required_capability()) {
            merge_objects(&mut required, one);
        }
    }
    // `{"elicitation": {}}` alone means form mode; once URL mode is also required, say so.
    if kinds.contains(&InputKind::FormElicitation) && kinds.contains(&InputKind::UrlElicitation) {
        required.insert(
            "elicitation".into(),
            serde_json::json!({"form": {}, "url": {}}),
        );
    }
    serde_json::from_value(Value::Object(required)).unwrap_or_default()
}

fn kind_names(kinds: &[InputKind]) -> String {
    kinds
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Legacy session: `-32600` naming what the session's `initialize` did not declare. The
/// revisions before 2026-07-28 have no code of their own for this (`-32021` is new there),
/// so it is the generic "this request cannot be served as sent", with the same
/// `requiredCapabilities` data.
pub(crate) fn legacy_missing_capabilities(kinds: &[InputKind], asked_before: u32) -> ErrorData {
    let required = serde_json::to_value(required_capabilities(kinds)).unwrap_or(Value::Null);
    let when = if asked_before == 0 {
        "nothing was sent to the client".to_string()
    } else {
        format!(
            "the call ended after {asked_before} answered round(s); this round's requests were not sent"
        )
    };
    ErrorData::new(
        rmcp::model::ErrorCode::INVALID_REQUEST,
        format!(
            "this call needs input the client did not declare at initialize: {} ({when})",
            kind_names(kinds)
        ),
        Some(serde_json::json!({ "requiredCapabilities": required })),
    )
}

/// Legacy session: `-32600` for a multi-select question in a revision whose elicitation
/// schemas have no arrays (before 2025-11-25).
pub(crate) fn legacy_multi_select_not_in_revision(
    version: &rmcp::model::ProtocolVersion,
) -> ErrorData {
    let since = rmcp::model::ProtocolVersion::V_2025_11_25;
    ErrorData::new(
        rmcp::model::ErrorCode::INVALID_REQUEST,
        format!(
            "this call asks a multi-select question, which protocol {version} does not have (it \
             arrived in {since}); connect with a newer protocol version (nothing of this round \
             was sent to the client)"
        ),
        Some(serde_json::json!({ "protocolVersion": version, "requires": since })),
    )
}

/// Legacy session: `-32600` for input the negotiated revision does not have (elicitation
/// before 2025-06-18, URL mode and sampling tools before 2025-11-25).
pub(crate) fn legacy_not_in_revision(
    kind: InputKind,
    version: &rmcp::model::ProtocolVersion,
    since: &rmcp::model::ProtocolVersion,
) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::INVALID_REQUEST,
        format!(
            "this call needs {} input, which protocol {version} does not have (it arrived in \
             {since}); connect with a newer protocol version",
            kind.as_str()
        ),
        Some(serde_json::json!({ "protocolVersion": version, "requires": since })),
    )
}

/// Legacy session: `-32603` when the client answered a request with an error, closed the
/// session, or sent something that is not a reply to it.
pub(crate) fn legacy_client_error(key: &str, method: &str, detail: &str) -> ErrorData {
    tracing::info!(key, method, detail, "legacy client did not answer");
    ErrorData::internal_error(
        format!("the client did not answer {method} `{key}`: {detail}; the call is ended"),
        Some(serde_json::json!({ "key": key, "method": method })),
    )
}

/// Legacy session: `-32603` when the client did not answer within the configured timeout.
pub(crate) fn legacy_timeout(key: &str, method: &str, timeout: std::time::Duration) -> ErrorData {
    tracing::info!(
        key,
        method,
        ?timeout,
        "legacy client did not answer in time"
    );
    ErrorData::internal_error(
        format!(
            "the client did not answer {method} `{key}` within {} ms; the call is ended \
             (the request was cancelled on the client)",
            timeout.as_millis()
        ),
        Some(
            serde_json::json!({ "key": key, "method": method, "timeoutMs": timeout.as_millis() as u64 }),
        ),
    )
}

/// `-32603`: the tool kept asking past the cap on rounds per call (a loop that never ends,
/// or one the client keeps feeding); its name and the cap are in the message.
pub(crate) fn round_cap(target: &str, cap: u32) -> ErrorData {
    log_limited!(
        warn,
        target,
        cap,
        "a call reached the cap on rounds per call"
    );
    ErrorData::internal_error(
        format!(
            "`{target}` asked for input more than {cap} times in one call, this server's limit \
             (`max_rounds_per_call`); the call is ended"
        ),
        Some(serde_json::json!({ "maxRoundsPerCall": cap })),
    )
}

/// `-32603`: a round of the tool's own code ran past the server's deadline and was
/// dropped. Logged at WARN at most once a minute per process, with the count skipped.
pub(crate) fn round_timeout(target: &str, timeout: std::time::Duration) -> ErrorData {
    static LOG: std::sync::LazyLock<RateLimited> =
        std::sync::LazyLock::new(|| RateLimited::new(std::time::Duration::from_secs(60)));
    let millis = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    LOG.warn(|skipped| {
        tracing::warn!(
            target,
            timeout_ms = millis,
            skipped,
            "a round of a tool's code ran past the deadline; dropped"
        );
    });
    ErrorData::internal_error(
        format!(
            "`{target}` did not finish a round within {timeout:?}, this server's limit \
             (`round_timeout`); the call is ended"
        ),
        Some(serde_json::json!({ "roundTimeoutMs": millis })),
    )
}

/// `-32602`: an answer stayed unusable until the call reached the cap on rounds.
pub(crate) fn unusable_answers(target: &str, key: &str, problem: &str, cap: u32) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "the answer to `{key}` was unusable ({problem}) and `{target}` reached this \
             server's limit of {cap} rounds per call asking for it again; the call is ended"
        ),
        Some(serde_json::json!({ "key": key, "maxRoundsPerCall": cap })),
    )
}

/// Legacy session: the call was cancelled; rmcp sends nothing for a cancelled request,
/// so this only ends the machine.
pub(crate) fn legacy_cancelled() -> ErrorData {
    ErrorData::internal_error("the call was cancelled", None)
}

fn merge_objects(into: &mut serde_json::Map<String, Value>, from: serde_json::Map<String, Value>) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(more)) => merge_objects(existing, more),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// `-32602` for a `tools/call`, `prompts/get` or `resources/read` whose params do not
/// parse; `None` for any other method. The message names the offending field.
pub(crate) fn unparsable_params(method: &str, params: Option<&Value>) -> Option<ErrorData> {
    let params = params.cloned().unwrap_or(Value::Null);
    let problem = match method {
        "tools/call" => serde_json::from_value::<rmcp::model::CallToolRequestParams>(params).err(),
        "prompts/get" => {
            serde_json::from_value::<rmcp::model::GetPromptRequestParams>(params).err()
        }
        "resources/read" => {
            serde_json::from_value::<rmcp::model::ReadResourceRequestParams>(params).err()
        }
        _ => return None,
    };
    let detail = problem.map_or_else(
        || "params do not match the method".to_string(),
        |e| without_client_text(&e.to_string()),
    );
    Some(ErrorData::invalid_params(
        format!(
            "invalid {method} params: {detail} (requestState must be a string, inputResponses an object)"
        ),
        None,
    ))
}

/// A serde error without the client's own text (the value of a wrong type, an unknown
/// variant or field): only the kind of value and what was expected, so the message can be
/// logged (rmcp logs every error reply at WARN) without echoing what a client sent.
fn without_client_text(detail: &str) -> String {
    let expected = |rest: &str| {
        rest.rfind(", expected ")
            .map_or("", |at| &rest[at..])
            .to_owned()
    };
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = detail.strip_prefix(prefix) {
            let kind = rest.split([' ', ',']).next().unwrap_or("value");
            return format!("{prefix}{kind}{}", expected(rest));
        }
    }
    for prefix in ["unknown variant ", "unknown field "] {
        if let Some(rest) = detail.strip_prefix(prefix) {
            return format!("{}{}", prefix.trim_end(), expected(rest));
        }
    }
    detail.to_owned()
}

/// The methods of the tasks extension whose params [`unparsable_task_params`] checks.
pub(crate) const TASK_METHODS: [&str; 3] = ["tasks/get", "tasks/update", "tasks/cancel"];

/// `-32602` for a `tasks/get`, `tasks/update` or `tasks/cancel` whose params do not parse
/// (rmcp hands those to `on_custom_request`); `None` for any other method. The message and
/// `data.field` name the missing or invalid field.
pub(crate) fn unparsable_task_params(method: &str, params: Option<&Value>) -> Option<ErrorData> {
    if !TASK_METHODS.contains(&method) {
        return None;
    }
    let kind = |value: &Value| match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let (field, problem) = match params {
        None | Some(Value::Null) => (
            "taskId",
            "is missing (the request has no params)".to_owned(),
        ),
        Some(Value::Object(params)) => match params.get("taskId") {
            None => ("taskId", "is missing".to_owned()),
            Some(Value::String(_)) => match (method, params.get("inputResponses")) {
                ("tasks/update", None) => ("inputResponses", "is missing".to_owned()),
                ("tasks/update", Some(value)) if !value.is_object() => (
                    "inputResponses",
                    format!("must be an object of answers by key, not {}", kind(value)),
                ),
                _ => match params.get("_meta") {
                    Some(value) if !value.is_object() && !value.is_null() => {
                        ("_meta", format!("must be an object, not {}", kind(value)))
                    }
                    _ => ("params", "do not match the method".to_owned()),
                },
            },
            Some(value) => ("taskId", format!("must be a string, not {}", kind(value))),
        },
        Some(value) => ("params", format!("must be an object, not {}", kind(value))),
    };
    Some(ErrorData::invalid_params(
        format!("invalid {method} params: `{field}` {problem}"),
        Some(serde_json::json!({ "field": field })),
    ))
}

/// `-32602` for a call whose next state would exceed the size cap: it grew from the
/// client's arguments or answers. Logged at WARN at most once a minute per process, with
/// the count of the ones skipped.
pub(crate) fn state_too_large(
    size: usize,
    limit: usize,
    largest: Option<(&'static str, usize)>,
) -> ErrorData {
    static LOG: std::sync::LazyLock<RateLimited> =
        std::sync::LazyLock::new(|| RateLimited::new(std::time::Duration::from_secs(60)));
    LOG.warn(|skipped| {
        tracing::warn!(
            size,
            limit,
            skipped,
            "refused a call whose kept state would exceed the size limit"
        );
    });
    let largest = largest
        .map(|(local, bytes)| format!(" The largest is `{local}` ({bytes} bytes)."))
        .unwrap_or_default();
    ErrorData::invalid_params(
        format!(
            "the state this call keeps between rounds is too large: sealed, it would be {size} \
             bytes, over this server's {limit}-byte limit. It holds the tool's locals that live \
             across the suspension, which grow with the call's arguments and answers or with what \
             the tool computes.{largest} Send smaller input if yours is large (tool authors: keep \
             less across the suspension, or raise `max_state_bytes`)"
        ),
        None,
    )
}

/// `-32602` for a tool or prompt this server does not have (the method exists; the
/// name is the invalid parameter).
pub(crate) fn unknown(kind: &str, name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("unknown {kind}: `{name}`"),
        Some(serde_json::json!({ "name": name })),
    )
}

/// `-32602` for a resource this server does not have (2026-07-28's resource-not-found).
pub(crate) fn resource_not_found(uri: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("resource not found: `{uri}`"),
        Some(serde_json::json!({ "uri": uri })),
    )
}

/// A tool that declares OAuth scopes the request's token does not grant: `-32600`
/// naming them (`data.requiredScopes`); behind the `auth` layer the HTTP response is also
/// `403` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`.
pub(crate) fn insufficient_scope(target: &str, scopes: &[String]) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "insufficient_scope: `{target}` needs the OAuth scopes {:?}; authorize with them and retry",
            scopes.join(" ")
        ),
        Some(serde_json::json!({ "requiredScopes": scopes })),
    )
}

/// A tool that declares OAuth scopes, called without HTTP (over stdio): no access token
/// can grant them, only the server's `local_scopes`. `-32600` naming them
/// (`data.requiredScopes`) and how to grant them.
pub(crate) fn scopes_without_http(target: &str, scopes: &[String]) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "insufficient_scope: `{target}` needs the OAuth scopes {:?}, and this request came \
             without HTTP (e.g. over stdio), which carries no access token: the server grants \
             scopes to such requests only as its author configures \
             (`McpServerBuilder::local_scopes`)",
            scopes.join(" ")
        ),
        Some(serde_json::json!({ "requiredScopes": scopes })),
    )
}

/// `-32603` for a machine bug; the detail is logged, not sent.
pub(crate) fn internal(detail: &str) -> ErrorData {
    log_limited!(error, detail, "mrtr machine failed");
    ErrorData::internal_error("the server failed to process this request", None)
}

/// `-32603` for a machine whose locals cannot be stored in `requestState`: the author's
/// bug, and one only the author can fix, so the reason is in the message (it names types,
/// never values) and in the log.
pub(crate) fn unstorable_state(target: &str, error: &StepError) -> ErrorData {
    let reason = ErrorChain(error).to_string();
    log_limited!(error, target, reason, "mrtr machine state cannot be stored");
    ErrorData::internal_error(format!("`{target}` cannot continue: {reason}"), None)
}

/// `-32050`: another presentation of this round is still running; retry shortly.
pub(crate) const ROUND_IN_PROGRESS: i32 = -32050;
/// `-32051`: the round ledger cannot be reached; nothing ran; retry shortly.
pub(crate) const LEDGER_UNAVAILABLE: i32 = -32051;
/// `-32052`: an at-most-once round whose instance died mid-round; start the flow again.
pub(crate) const ROUND_ABANDONED: i32 = -32052;

fn server_error(code: i32, message: &str, data: Value) -> ErrorData {
    ErrorData::new(rmcp::model::ErrorCode(code), message.to_owned(), Some(data))
}

/// `-32050`, retryable: the round is being run by another presentation.
pub(crate) fn round_in_progress() -> ErrorData {
    server_error(
        ROUND_IN_PROGRESS,
        "this round is still being processed by another request; retry with the same requestState",
        serde_json::json!({ "retryable": true }),
    )
}

/// `-32051`, retryable: the ledger could not be reached, so the round did not run.
pub(crate) fn ledger_unavailable() -> ErrorData {
    server_error(
        LEDGER_UNAVAILABLE,
        "the round ledger is unavailable, so this round did not run; retry with the same requestState",
        serde_json::json!({ "retryable": true }),
    )
}

/// `-32052`, final: an at-most-once round may have run on an instance that died.
pub(crate) fn round_abandoned() -> ErrorData {
    server_error(
        ROUND_ABANDONED,
        "this round was started on an instance that stopped before it finished, and it runs at most once; start the flow again",
        serde_json::json!({ "retryable": false }),
    )
}

/// `-32053`: the server holds as many live tasks as it allows; retry later.
pub(crate) const TOO_MANY_TASKS: i32 = -32053;
/// `-32054`: the task store cannot be reached; retry shortly.
pub(crate) const TASK_STORE_UNAVAILABLE: i32 = -32054;

/// `-32053`, retryable: the cap on live tasks is reached, so no task was created.
pub(crate) fn too_many_tasks(limit: usize) -> ErrorData {
    server_error(
        TOO_MANY_TASKS,
        "the server holds as many live tasks as it allows (`max_live_tasks`); retry later",
        serde_json::json!({ "retryable": true, "maxLiveTasks": limit }),
    )
}

/// `-32053`: the caller's own quota of live tasks is reached, so no task was created; it
/// frees as the caller's tasks end (complete, fail, or `tasks/cancel`).
/// `anonymous`: the caller has no principal and is counted by its client address.
pub(crate) fn too_many_tasks_for_principal(limit: usize, anonymous: bool) -> ErrorData {
    let whose = if anonymous {
        "per anonymous client address"
    } else {
        "per principal"
    };
    server_error(
        TOO_MANY_TASKS,
        &format!(
            "you hold {limit} live tasks, this server's limit {whose} \
             (`max_live_tasks_per_principal`); retry once one of them ends, or cancel one"
        ),
        serde_json::json!({ "retryable": true, "maxLiveTasksPerPrincipal": limit }),
    )
}

/// `-32054`, retryable: the task store could not be reached.
pub(crate) fn task_store_unavailable() -> ErrorData {
    server_error(
        TASK_STORE_UNAVAILABLE,
        "the task store is unavailable; retry shortly",
        serde_json::json!({ "retryable": true }),
    )
}

/// `-32602`: no such task for this principal. A task of another principal answers the same,
/// so ids cannot be probed.
pub(crate) fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task `{id}`"), None)
}

/// `-32602`: the round already ran with other `inputResponses`.
pub(crate) fn answers_conflict() -> ErrorData {
    ErrorData::invalid_params(
        "this round was already answered with different inputResponses; continue from the requestState of its response",
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_capabilities_merges_into_one_object() {
        let error = missing_capabilities(&[
            InputKind::FormElicitation,
            InputKind::UrlElicitation,
            InputKind::Roots,
        ]);
        assert_eq!(error.code.0, -32021);
        let data = error.data.expect("requiredCapabilities");
        assert_eq!(
            data["requiredCapabilities"],
            serde_json::json!({"elicitation": {"form": {}, "url": {}}, "roots": {}})
        );
    }

    #[test]
    fn unparsable_mrtr_params_are_invalid_params_naming_the_problem() {
        let params = serde_json::json!({"name": "t", "requestState": 5});
        let error = unparsable_params("tools/call", Some(&params)).expect("tools/call is ours");
        assert_eq!(error.code.0, -32602);
        assert!(
            error.message.contains("invalid tools/call params"),
            "{}",
            error.message
        );
        assert!(unparsable_params("custom/thing", Some(&params)).is_none());
    }

    /// Every error this module makes, with the code clients dispatch on, a phrase of the
    /// message that tells them what happened or what to do, and the data they can read.
    #[test]
    fn each_error_has_its_code_its_message_and_its_data() {
        use serde_json::json;
        let timeout = std::time::Duration::from_millis(1500);
        let not_storable = StepError::Internal("a HashMap<K, V> key is not a string".into());
        let cases: Vec<(ErrorData, i32, &str, Option<Value>)> = vec![
            (
                legacy_client_error("k", "roots/list", "closed"),
                -32603,
                "the client did not answer roots/list `k`: closed",
                Some(json!({"key": "k", "method": "roots/list"})),
            ),
            (
                legacy_timeout("k", "sampling/createMessage", timeout),
                -32603,
                "within 1500 ms",
                Some(json!({"key": "k", "method": "sampling/createMessage", "timeoutMs": 1500})),
            ),
            (
                unusable_answers("t", "k", "not a number", 3),
                -32602,
                "the answer to `k` was unusable (not a number) and `t` reached this server's limit of 3 rounds",
                Some(json!({"key": "k", "maxRoundsPerCall": 3})),
            ),
            (
                round_cap("t", 3),
                -32603,
                "`t` asked for input more than 3 times in one call",
                Some(json!({"maxRoundsPerCall": 3})),
            ),
            (legacy_cancelled(), -32603, "cancelled", None),
            (
                state_too_large(9000, 4096, None),
                -32602,
                "sealed, it would be 9000 bytes, over this server's 4096-byte limit",
                None,
            ),
            (
                unknown("tool", "nope"),
                -32602,
                "unknown tool: `nope`",
                Some(json!({"name": "nope"})),
            ),
            (
                resource_not_found("file:///x"),
                -32602,
                "resource not found: `file:///x`",
                Some(json!({"uri": "file:///x"})),
            ),
            (
                unstorable_state("wizard", &not_storable),
                -32603,
                "`wizard` cannot continue: ",
                None,
            ),
            (
                round_in_progress(),
                -32050,
                "retry with the same requestState",
                Some(json!({"retryable": true})),
            ),
            (
                ledger_unavailable(),
                -32051,
                "did not run",
                Some(json!({"retryable": true})),
            ),
            (
                round_abandoned(),
                -32052,
                "start the flow again",
                Some(json!({"retryable": false})),
            ),
            (
                too_many_tasks(7),
                -32053,
                "retry later",
                Some(json!({"retryable": true, "maxLiveTasks": 7})),
            ),
            (
                too_many_tasks_for_principal(3, false),
                -32053,
                "you hold 3 live tasks, this server's limit per principal (`max_live_tasks_per_principal`)",
                Some(json!({"retryable": true, "maxLiveTasksPerPrincipal": 3})),
            ),
            (
                task_store_unavailable(),
                -32054,
                "task store is unavailable",
                Some(json!({"retryable": true})),
            ),
            (unknown_task("t-1"), -32602, "unknown task `t-1`", None),
            (answers_conflict(), -32602, "different inputResponses", None),
        ];
        for (error, code, phrase, data) in cases {
            assert_eq!(error.code.0, code, "{}", error.message);
            assert!(
                error.message.contains(phrase),
                "{:?} lacks {phrase:?}",
                error.message
            );
            assert_eq!(error.data, data, "{}", error.message);
        }
    }

    #[test]
    fn unparsable_params_of_each_mrtr_method_name_the_method() {
        let params = serde_json::json!({"name": 5, "uri": 5, "requestState": 5});
        for method in ["tools/call", "prompts/get", "resources/read"] {
            let error = unparsable_params(method, Some(&params)).expect("an MRTR method");
            assert_eq!(error.code.0, -32602);
            assert!(
                error
                    .message
                    .starts_with(&format!("invalid {method} params: invalid type")),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn unparsable_params_never_echo_the_client_text() {
        let params = serde_json::json!({"name": "t", "arguments": "SECRET\", expected x"});
        let error = unparsable_params("tools/call", Some(&params)).expect("tools/call is ours");
        assert!(!error.message.contains("SECRET"), "{}", error.message);
        assert!(
            error
                .message
                .contains("invalid type: string, expected a map"),
            "{}",
            error.message
        );
        assert_eq!(
            without_client_text("unknown variant `SECRET`, expected `a` or `b`"),
            "unknown variant, expected `a` or `b`"
        );
    }

    #[test]
    fn rejected_state_is_invalid_params() {
        assert_eq!(rejected_state().code.0, -32602);
    }
}
