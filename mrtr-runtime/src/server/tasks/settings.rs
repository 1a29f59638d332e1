//! How long tasks live, how many may be live (on the server and per principal), how many
//! are kept, and how often their runners look for a cancel.

use std::time::Duration;

/// Lifetimes and limits of tasks.
///
/// | Knob | Default | What it bounds |
/// |---|---|---|
/// | [`ttl`](Self::ttl) | 1 hour | how long a task (live or ended) stays readable |
/// | [`max_live_tasks`](Self::max_live_tasks) | 1000 | live tasks on the server, all principals together |
/// | [`max_live_tasks_per_principal`](Self::max_live_tasks_per_principal) | 100 | live tasks of one principal; an anonymous caller over HTTP (or an `Authorization` header nothing verified) is counted by its client address instead (over stdio, or from a loopback address not counted by [`per_address_includes_loopback`](crate::server::http::HttpServing::per_address_includes_loopback): the server-wide cap only) |
/// | [`max_kept_tasks`](Self::max_kept_tasks) | 4000 | tasks kept, live or ended; past it the ended ones that expire first are dropped early |
/// | [`poll_interval`](Self::poll_interval) | 500 ms | the `pollIntervalMs` suggested to clients |
/// | [`cancel_check`](Self::cancel_check) | 1 s | how often a run looks for a cancel served elsewhere |
///
/// A task is *live* from its creation until it completes, fails or is cancelled: then it
/// frees its slot at once, and its record stays readable by `tasks/get` until the TTL.
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
    max_live_per_principal: usize,
    max_kept: usize,
    poll_interval: Duration,
    pub(super) cancel_check: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            ttl: Duration::from_secs(3600),
            max_live: 1000,
            max_live_per_principal: 100,
            max_kept: 4000,
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

    /// The most live tasks (working or waiting on input) the store may hold for this server,
    /// all principals together (default 1000); past it `tools/call` answers the retryable
    /// `-32053` naming `max_live_tasks`. A completed, failed or cancelled task does not count.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_live_tasks(3).max_live(), 3);
    /// ```
    pub fn max_live_tasks(mut self, max: usize) -> Self {
        self.max_live = max;
        self
    }

    /// The most live tasks one principal may hold (default 100), beside
    /// [`max_live_tasks`](Self::max_live_tasks), so one principal cannot take every slot;
    /// past it that principal's `tools/call` answers `-32053` naming
    /// `max_live_tasks_per_principal` (retryable once one of its own tasks ends; other
    /// principals are not affected).
    ///
    /// Anonymous callers (no principal) are counted per client address instead: the peer
    /// address [`BoundHttp`](crate::server::http::BoundHttp) accepted the connection from,
    /// with the same quota, so one anonymous address cannot take every slot either. A
    /// loopback address is counted only when
    /// [`per_address_includes_loopback`](crate::server::http::HttpServing::per_address_includes_loopback)
    /// is on (a loopback peer is this machine, e.g. a same-host proxy that every client
    /// shares); anonymous callers without a counted address (stdio, loopback, a router
    /// served by other means) are held to `max_live_tasks` only. **Behind a reverse proxy
    /// every anonymous caller shares the proxy's address**: authenticate callers, or raise
    /// this quota.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().max_live_tasks_per_principal(5);
    /// assert_eq!(s.max_live_per_principal(), 5);
    /// ```
    pub fn max_live_tasks_per_principal(mut self, max: usize) -> Self {
        self.max_live_per_principal = max;
        self
    }

    /// The most tasks the store keeps, live or ended (default 4000, never fewer than
    /// [`max_live_tasks`](Self::max_live_tasks)): ended tasks free their slot at once but
    /// stay readable until the TTL, and this bounds how many; past it, creating a task drops
    /// the ended tasks that expire first (their `tasks/get` then answers as for an unknown
    /// task).
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// let s = TaskSettings::default().max_live_tasks(10).max_kept_tasks(5);
    /// assert_eq!(s.max_kept(), 10);
    /// ```
    pub fn max_kept_tasks(mut self, max: usize) -> Self {
        self.max_kept = max;
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

    /// The quota of live tasks per principal.
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_live_per_principal(), 100);
    /// ```
    pub fn max_live_per_principal(&self) -> usize {
        self.max_live_per_principal
    }

    /// The most tasks kept, live or ended (at least [`max_live`](Self::max_live)).
    ///
    /// ```
    /// # use mrtr_runtime::server::tasks::TaskSettings;
    /// assert_eq!(TaskSettings::default().max_kept(), 4000);
    /// ```
    pub fn max_kept(&self) -> usize {
        self.max_kept.max(self.max_live)
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
                defaults.max_live_per_principal(),
                defaults.max_kept(),
                defaults.poll_interval_ms()
            ),
            (3_600_000, 1000, 100, 4000, 500)
        );
        assert_eq!(defaults.cancel_check, Duration::from_secs(1));
    }
}
