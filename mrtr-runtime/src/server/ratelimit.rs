//! At most one log line per interval for events a client can trigger at will, with the
//! count of the ones skipped, so no client can flood the log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Lets one call through per interval.
pub(crate) struct RateLimited {
    start: Instant,
    interval: Duration,
    /// Milliseconds since `start` of the last call let through, plus one (0: never).
    last_plus_one: AtomicU64,
    skipped: AtomicU64,
}

impl RateLimited {
    pub(crate) fn new(interval: Duration) -> Self {
        RateLimited {
            start: Instant::now(),
            interval,
            last_plus_one: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
        }
    }

    /// Runs `log` with the number of skipped calls if one interval has passed since the
    /// last run (or on the first call); otherwise counts this call as skipped.
    pub(crate) fn warn(&self, log: impl FnOnce(u64)) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.last_plus_one.load(Ordering::Relaxed);
        let interval = u64::try_from(self.interval.as_millis()).unwrap_or(u64::MAX);
        let due = last == 0 || now.saturating_add(1) >= last.saturating_add(interval);
        if due
            && self
                .last_plus_one
                .compare_exchange(
                    last,
                    now.saturating_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            log(self.skipped.swap(0, Ordering::Relaxed));
        } else {
            self.skipped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Logs at `warn` or `error` at most once a minute for this call site (one kind of event),
/// with the count of the lines skipped since the last one as the `skipped` field:
/// `log_limited!(warn, %reason, "requestState rejected")`. For events a client can
/// trigger once per request.
macro_rules! log_limited {
    ($level:ident, $($arg:tt)+) => {{
        static LOG: std::sync::LazyLock<$crate::server::ratelimit::RateLimited> =
            std::sync::LazyLock::new(|| {
                $crate::server::ratelimit::RateLimited::new(std::time::Duration::from_secs(60))
            });
        LOG.warn(|skipped| tracing::$level!(skipped, $($arg)+));
    }};
}
pub(crate) use log_limited;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_per_interval_then_the_skipped_count() {
        let limited = RateLimited::new(Duration::from_secs(3600));
        let mut logged = Vec::new();
        for _ in 0..5 {
            limited.warn(|skipped| logged.push(skipped));
        }
        assert_eq!(logged, [0]);
        assert_eq!(limited.skipped.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_zero_interval_lets_every_call_through() {
        let limited = RateLimited::new(Duration::ZERO);
        let mut logged = 0;
        for _ in 0..3 {
            limited.warn(|_| logged += 1);
        }
        assert_eq!(logged, 3);
    }
}
