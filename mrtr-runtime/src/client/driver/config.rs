//! What the automatic round loop may do and who watches it: the limits of
//! [`DriverConfig`] (rounds, time, handler timeouts, retries) and the [`RoundObserver`]
//! hooks called as rounds are asked, answered, retried and followed as tasks.

use std::time::Duration;

use rmcp::model::{InputResponses, Task};

use crate::client::pending::PendingCall;
use crate::client::retry::{RetryPolicy, RetryReason};

/// Limits for the automatic round loop.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::client::DriverConfig;
///
/// let config = DriverConfig::default()
///     .with_max_rounds(4)
///     .with_budget(Some(Duration::from_secs(60)))
///     .with_handler_timeout(Some(Duration::from_secs(30)));
/// assert_eq!(config.max_rounds, 4);
/// assert_eq!(DriverConfig::default().max_rounds, 10);
/// // Requests that fail in transit are retried by default; see `RetryPolicy`.
/// assert_eq!(DriverConfig::default().retry.max_retries, 4);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DriverConfig {
    /// Most requests sent for one call, the first one included (default 10).
    pub max_rounds: usize,
    /// Wall-clock budget for one whole call, human think time included (default 15 minutes).
    pub budget: Option<Duration>,
    /// Longest one handler may take for one input request (default: no limit).
    pub handler_timeout: Option<Duration>,
    /// First pause before retrying a state-only `input_required` round; doubles up to 2 s.
    pub state_only_backoff: Duration,
    /// How a request that failed in transit is retried (default: up to 4 retries).
    pub retry: RetryPolicy,
}

impl Default for DriverConfig {
    fn default() -> Self {
        Self {
            max_rounds: rmcp::model::DEFAULT_MRTR_MAX_ROUNDS,
            budget: Some(Duration::from_secs(15 * 60)),
            handler_timeout: None,
            state_only_backoff: Duration::from_millis(100),
            retry: RetryPolicy::default(),
        }
    }
}

impl DriverConfig {
    /// Sets [`max_rounds`](Self::max_rounds).
    pub fn with_max_rounds(mut self, max_rounds: usize) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Sets [`budget`](Self::budget).
    pub fn with_budget(mut self, budget: Option<Duration>) -> Self {
        self.budget = budget;
        self
    }

    /// Sets [`handler_timeout`](Self::handler_timeout).
    pub fn with_handler_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handler_timeout = timeout;
        self
    }

    /// Sets [`state_only_backoff`](Self::state_only_backoff).
    pub fn with_state_only_backoff(mut self, backoff: Duration) -> Self {
        self.state_only_backoff = backoff;
        self
    }

    /// Sets [`retry`](Self::retry).
    ///
    /// ```
    /// use mrtr_runtime::client::{DriverConfig, RetryPolicy};
    /// let config = DriverConfig::default().with_retries(RetryPolicy::default().with_max_retries(8));
    /// assert_eq!(config.retry.max_retries, 8);
    /// ```
    pub fn with_retries(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Turns retrying off: every failure is returned as it happened.
    ///
    /// ```
    /// let config = mrtr_runtime::client::DriverConfig::default().without_retries();
    /// assert_eq!(config.retry, mrtr_runtime::client::RetryPolicy::none());
    /// ```
    pub fn without_retries(self) -> Self {
        self.with_retries(RetryPolicy::none())
    }
}

/// Watches the automatic round loop, e.g. to show progress in a UI or write a transcript.
///
/// ```no_run
/// # async fn demo(transport: rmcp::transport::TokioChildProcess) -> Result<(), mrtr_runtime::client::ClientError> {
/// use mrtr_runtime::client::{InputHandlers, MrtrClient, PendingCall, RoundObserver};
///
/// struct Log;
/// impl RoundObserver for Log {
///     fn input_required(&self, pending: &PendingCall) {
///         eprintln!("round {}: {} request(s)", pending.round, pending.input_requests.len());
///     }
/// }
///
/// let client = MrtrClient::connect(transport, InputHandlers::new()).await?.with_observer(Log);
/// client.call_tool("deploy", None).await?; // logs every `input_required` round
/// # Ok(()) }
/// ```
pub trait RoundObserver: Send + Sync + 'static {
    /// The server answered round `pending.round` with `input_required`.
    fn input_required(&self, pending: &PendingCall) {
        let _ = pending;
    }

    /// The answers for `pending` are ready and about to be sent.
    fn answered(&self, pending: &PendingCall, responses: &InputResponses) {
        let _ = (pending, responses);
    }

    /// Sending the request that continues `pending` failed on attempt `attempt` (1 for the
    /// first send) for `reason`; the same request is sent again after `pause`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mrtr_runtime::client::{PendingCall, RetryReason, RoundObserver};
    ///
    /// struct LogRetries;
    /// impl RoundObserver for LogRetries {
    ///     fn retrying(&self, pending: &PendingCall, attempt: u32, reason: &RetryReason, pause: Duration) {
    ///         eprintln!("round {}: attempt {attempt} failed ({reason}); retrying in {pause:?}", pending.round + 1);
    ///     }
    /// }
    /// ```
    fn retrying(&self, pending: &PendingCall, attempt: u32, reason: &RetryReason, pause: Duration) {
        let _ = (pending, attempt, reason, pause);
    }

    /// The call runs as a task (tasks extension): called when the task is created and on
    /// every `tasks/get`, with its status (`working`, `input_required`, ...). A task's
    /// questions then go through [`input_required`](Self::input_required) and
    /// [`answered`](Self::answered) like a round's.
    ///
    /// ```
    /// use mrtr_runtime::client::RoundObserver;
    /// struct Progress;
    /// impl RoundObserver for Progress {
    ///     fn task_status(&self, task: &rmcp::model::Task) {
    ///         eprintln!("task {}: {:?}", task.task_id, task.status);
    ///     }
    /// }
    /// ```
    fn task_status(&self, task: &Task) {
        let _ = task;
    }
}
