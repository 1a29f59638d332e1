//! Retrying a request that failed in transit: the policy, and which failures qualify.
//!
//! A resumed round (one that carries a `requestState`) is safe to send again: a server
//! with a round ledger replays the recorded response to a re-presented round instead of
//! running it twice, and a server without one re-runs a round from the sealed state.

use std::time::Duration;

use rmcp::{model::ErrorData, service::ServiceError};
use serde_json::Value;

/// How the driver retries a request that failed in transit.
///
/// Every retry sends the same params — the same `requestState` and the same
/// `inputResponses` — under a new JSON-RPC id, after an exponential backoff with jitter.
/// What is retried:
///
/// - connection failures: refused or unreachable (the request never reached a server),
///   reset, or closed before the reply came;
/// - HTTP 502, 503 and 504 from the Streamable HTTP transport (a load balancer or proxy
///   that lost its upstream);
/// - JSON-RPC errors whose `data.retryable` is `true` (`-32050` round in progress,
///   `-32051` round ledger unavailable).
///
/// Never retried: any other JSON-RPC error (such as `-32602`), and a **first call** (no
/// `requestState` yet) that may have reached a server — anything but a refused connection
/// or an error the server marked retryable — unless
/// [`retry_first_calls`](Self::retry_first_calls) is on; then the code a tool runs before
/// its first question may run again. A client whose connection has stopped (a child
/// process that exited) is not retried either: resume the returned
/// [`PendingCall`](super::PendingCall) on a new connection.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::client::{DriverConfig, RetryPolicy};
///
/// let policy = RetryPolicy::default()
///     .with_max_retries(6)
///     .with_initial_backoff(Duration::from_millis(50))
///     .with_max_backoff(Duration::from_secs(1));
/// let config = DriverConfig::default().with_retries(policy);
/// assert_eq!(config.retry.max_retries, 6);
///
/// assert_eq!(RetryPolicy::default().max_retries, 4);
/// assert_eq!(DriverConfig::default().without_retries().retry.max_retries, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Most retries after the first attempt (default 4; 0 turns retrying off).
    pub max_retries: u32,
    /// Pause before the first retry (default 100 ms); doubles for each later one.
    pub initial_backoff: Duration,
    /// Longest pause between two attempts (default 2 s).
    pub max_backoff: Duration,
    /// Whether a first call that may have reached a server is retried (default `false`).
    pub retry_first_calls: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            retry_first_calls: false,
        }
    }
}

impl RetryPolicy {
    /// No retries: every failure is returned as it happened.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::client::RetryPolicy::none().max_retries, 0);
    /// ```
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Sets [`max_retries`](Self::max_retries).
    ///
    /// ```
    /// let policy = mrtr_runtime::client::RetryPolicy::default().with_max_retries(2);
    /// assert_eq!(policy.max_retries, 2);
    /// ```
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets [`initial_backoff`](Self::initial_backoff).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mrtr_runtime::client::RetryPolicy::default()
    ///     .with_initial_backoff(Duration::from_millis(20));
    /// assert_eq!(policy.initial_backoff, Duration::from_millis(20));
    /// ```
    pub fn with_initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// Sets [`max_backoff`](Self::max_backoff).
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mrtr_runtime::client::RetryPolicy::default()
    ///     .with_max_backoff(Duration::from_secs(5));
    /// assert_eq!(policy.max_backoff, Duration::from_secs(5));
    /// ```
    pub fn with_max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// Sets [`retry_first_calls`](Self::retry_first_calls): with `true`, a first call that
    /// failed in transit is retried too, so the code a tool runs before its first
    /// question may run twice (make it idempotent first).
    ///
    /// ```
    /// let policy = mrtr_runtime::client::RetryPolicy::default().retry_first_calls(true);
    /// assert!(policy.retry_first_calls);
    /// ```
    pub fn retry_first_calls(mut self, retry: bool) -> Self {
        self.retry_first_calls = retry;
        self
    }

    /// The pause before retry number `retry` (1 for the first): half of
    /// `initial_backoff × 2^(retry-1)`, capped at `max_backoff`, plus a random part up to
    /// the other half, so clients that failed together do not retry together.
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = mrtr_runtime::client::RetryPolicy::default();
    /// let pause = policy.backoff(3); // base 400 ms
    /// assert!(pause >= Duration::from_millis(200) && pause <= Duration::from_millis(400));
    /// assert!(policy.backoff(30) <= policy.max_backoff);
    /// ```
    pub fn backoff(&self, retry: u32) -> Duration {
        let doublings = retry.saturating_sub(1).min(20);
        let base = self
            .initial_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff);
        let half = base / 2;
        // Jitter needs no cryptographic quality; a failed read just means no jitter.
        let unit = getrandom::u64().unwrap_or(0) as f64 / u64::MAX as f64;
        half + (base - half).mul_f64(unit)
    }

    /// Whether a failure for `reason` may be retried for a request that carries a
    /// `requestState` (`resumed`) or not.
    pub(crate) fn permits(&self, reason: &RetryReason, resumed: bool) -> bool {
        // A first call is not protected by a round ledger: only send it again when it
        // surely never arrived, or the server itself said a retry is safe.
        resumed
            || self.retry_first_calls
            || matches!(
                reason,
                RetryReason::ConnectFailed | RetryReason::RetryableError { .. }
            )
    }
}

/// Why a request is being retried, as a [`RoundObserver`](super::RoundObserver) sees it.
///
/// ```
/// use mrtr_runtime::client::RetryReason;
/// assert_eq!(RetryReason::HttpStatus(503).to_string(), "HTTP 503");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryReason {
    /// No connection could be opened (refused, unreachable): the request never reached a
    /// server.
    ConnectFailed,
    /// The connection broke (reset, closed) before the reply came.
    ConnectionLost,
    /// The HTTP transport got this status (502, 503 or 504) from a server or proxy.
    HttpStatus(u16),
    /// The server answered with a JSON-RPC error marked `"retryable": true`.
    RetryableError {
        /// The JSON-RPC error code, e.g. -32050.
        code: i32,
        /// The error message.
        message: String,
    },
}

impl std::fmt::Display for RetryReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetryReason::ConnectFailed => f.write_str("could not connect"),
            RetryReason::ConnectionLost => f.write_str("connection lost before the reply"),
            RetryReason::HttpStatus(status) => write!(f, "HTTP {status}"),
            RetryReason::RetryableError { code, message } => {
                write!(f, "retryable server error {code}: {message}")
            }
        }
    }
}

/// The statuses a proxy answers when its upstream is down or restarting.
#[cfg(feature = "client-http")]
const RETRYABLE_HTTP_STATUSES: [u16; 3] = [502, 503, 504];

/// Which retryable failure `error` is, or `None` when it must not be retried.
pub(crate) fn retry_reason(error: &ServiceError) -> Option<RetryReason> {
    match error {
        ServiceError::McpError(data) => retryable_error(data),
        // The response stream closed before its final response, or the service stopped.
        ServiceError::TransportClosed => Some(RetryReason::ConnectionLost),
        ServiceError::TransportSend(send) => transport_failure(send.error.as_ref()),
        _ => None,
    }
}

/// A JSON-RPC error the server marked `data.retryable: true`.
pub(crate) fn retryable_error(data: &ErrorData) -> Option<RetryReason> {
    let retryable = data
        .data
        .as_ref()
        .and_then(|data| data.get("retryable"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    retryable.then(|| RetryReason::RetryableError {
        code: data.code.0,
        message: data.message.to_string(),
    })
}

fn transport_failure(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> Option<RetryReason> {
    #[cfg(feature = "client-http")]
    if let Some(http) = error.downcast_ref::<HttpError>() {
        return http_failure(http);
    }
    io_failure(error)
}

#[cfg(feature = "client-http")]
type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;

#[cfg(feature = "client-http")]
fn http_failure(error: &HttpError) -> Option<RetryReason> {
    use rmcp::transport::streamable_http_client::StreamableHttpError as E;
    match error {
        E::HttpStatus(status) => RETRYABLE_HTTP_STATUSES
            .contains(&status.status)
            .then_some(RetryReason::HttpStatus(status.status)),
        // Refused, unreachable, DNS or TLS failure: no request bytes were sent.
        E::Client(client) if client.is_connect() => Some(RetryReason::ConnectFailed),
        E::Client(client) if client.is_builder() || client.is_redirect() => None,
        E::Client(_)
        | E::Io(_)
        | E::Sse(_)
        | E::UnexpectedEndOfStream
        | E::TransportChannelClosed => Some(RetryReason::ConnectionLost),
        _ => None,
    }
}

/// Any other transport: an I/O error in the cause chain that says the connection failed.
fn io_failure(error: &(dyn std::error::Error + 'static)) -> Option<RetryReason> {
    use std::io::ErrorKind;
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                ErrorKind::ConnectionRefused => Some(RetryReason::ConnectFailed),
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe
                | ErrorKind::NotConnected
                | ErrorKind::UnexpectedEof => Some(RetryReason::ConnectionLost),
                _ => None,
            };
        }
        cause = current.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use rmcp::model::ErrorCode;
    use serde_json::json;

    use super::*;

    #[test]
    fn backoff_doubles_within_its_jitter_band_and_stops_at_the_cap() {
        let policy = RetryPolicy::default();
        for retry in 1..=8 {
            let base = Duration::from_millis(100 * (1 << (retry - 1))).min(policy.max_backoff);
            let pause = policy.backoff(retry);
            assert!(pause >= base / 2 && pause <= base, "{retry}: {pause:?}");
        }
    }

    #[test]
    fn only_errors_marked_retryable_are_retried() {
        let marked = ErrorData::new(
            ErrorCode(-32050),
            "round in progress",
            Some(json!({"retryable": true})),
        );
        assert_eq!(
            retry_reason(&ServiceError::McpError(marked)),
            Some(RetryReason::RetryableError {
                code: -32050,
                message: "round in progress".into()
            })
        );
        let invalid = ErrorData::invalid_params("different inputResponses", None);
        assert_eq!(retry_reason(&ServiceError::McpError(invalid)), None);
        let abandoned = ErrorData::new(
            ErrorCode(-32052),
            "round abandoned",
            Some(json!({"retryable": false})),
        );
        assert_eq!(retry_reason(&ServiceError::McpError(abandoned)), None);
    }

    #[test]
    fn first_calls_are_retried_only_when_they_never_arrived_or_by_choice() {
        let policy = RetryPolicy::default();
        assert!(policy.permits(&RetryReason::ConnectFailed, false));
        assert!(!policy.permits(&RetryReason::ConnectionLost, false));
        assert!(!policy.permits(&RetryReason::HttpStatus(502), false));
        assert!(policy.permits(&RetryReason::HttpStatus(502), true));
        let opted_in = policy.retry_first_calls(true);
        assert!(opted_in.permits(&RetryReason::ConnectionLost, false));
    }

    #[test]
    fn io_errors_in_the_chain_are_classified() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(io_failure(&refused), Some(RetryReason::ConnectFailed));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(io_failure(&reset), Some(RetryReason::ConnectionLost));
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(io_failure(&denied), None);
    }
}
