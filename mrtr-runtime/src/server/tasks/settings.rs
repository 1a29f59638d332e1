//! How long tasks live, how many may be live, and how often their runners look for a
//! cancel.

use std::time::Duration;

/// Lifetimes and limits of tasks.
///
/// ```
/// use std::time::Duration;
/// use mrtr_runtime::server::tasks::TaskSettings;
/// let settings = TaskSettings::default().ttl(Duration::from_secs(60)).max_live_tasks(10);
/// assert_eq!(settings.ttl_ms(), 60_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSettings {
    ttl: Duration,
    max_live: usize,
    poll_interval: Duration,
    pub(super) cancel_check: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            ttl: Duration::from_secs(3600),
            max_live: 1000,
            poll_interval: Duration::from_millis(500),
            cancel_check: Duration::from_secs(1),
        }
    }
}

impl TaskSettings {
    /// How long a task stays readable after it is created (`ttlMs`, default one hour); it is
    /// discarded afterwards, finished or not.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().ttl(std::time::Duration::from_secs(5));
    /// assert_eq!(s.ttl_ms(), 5000);
    /// ```
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The most unexpired tasks (running, waiting or finished) the store may hold for this
    /// server (default 1000); past it `tools/call` answers the retryable `-32053`.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_live_tasks(3).max_live(), 3);
    /// ```
    pub fn max_live_tasks(mut self, max: usize) -> Self {
        self.max_live = max;
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`, default 500 ms).
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().poll_interval(std::time::Duration::from_millis(100));
    /// assert_eq!(s.poll_interval_ms(), 100);
    /// ```
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How often a running task looks in the store for a `tasks/cancel` served by another
    /// instance (default 1 s; a cancel served by this instance stops it at once).
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().cancel_check(std::time::Duration::from_millis(200));
    /// # let _ = s;
    /// ```
    pub fn cancel_check(mut self, interval: Duration) -> Self {
        self.cancel_check = interval.max(Duration::from_millis(10));
        self
    }

    /// The TTL in milliseconds.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().ttl_ms(), 3_600_000);
    /// ```
    pub fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// The cap on live tasks.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_live(), 1000);
    /// ```
    pub fn max_live(&self) -> usize {
        self.max_live
    }

    /// The suggested polling interval in milliseconds.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().poll_interval_ms(), 500);
    /// ```
    pub fn poll_interval_ms(&self) -> u64 {
        u64::try_from(self.poll_interval.as_millis()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_keep_what_they_are_given_within_their_floors() {
        let settings = TaskSettings::default()
            .ttl(Duration::from_secs(5))
            .max_live_tasks(3)
            .poll_interval(Duration::from_millis(100))
            .cancel_check(Duration::from_millis(200));
        assert_eq!(settings.ttl_ms(), 5_000);
        assert_eq!(settings.max_live(), 3);
        assert_eq!(settings.poll_interval_ms(), 100);
        assert_eq!(settings.cancel_check, Duration::from_millis(200));
        // Zero would mean "expired at once" or a busy loop: each has a floor.
        let floors = TaskSettings::default()
            .ttl(Duration::ZERO)
            .poll_interval(Duration::ZERO)
            .cancel_check(Duration::ZERO);
        assert_eq!(floors.ttl_ms(), 1);
        assert_eq!(floors.poll_interval_ms(), 1);
        assert_eq!(floors.cancel_check, Duration::from_millis(10));
        let defaults = TaskSettings::default();
        assert_eq!(
            (
                defaults.ttl_ms(),
                defaults.max_live(),
                defaults.poll_interval_ms()
            ),
            (3_600_000, 1000, 500)
        );
        assert_eq!(defaults.cancel_check, Duration::from_secs(1));
    }
}
