//! Where the sealer gets "now" from: the system clock in production, a settable clock in tests.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in whole seconds since the Unix epoch.
///
/// ```
/// use mrtr_runtime::token::{Clock, ManualClock};
///
/// fn is_after_2020(clock: &dyn Clock) -> bool {
///     clock.now_unix_seconds() > 1_577_836_800
/// }
/// assert!(!is_after_2020(&ManualClock::new(0)));
/// ```
pub trait Clock: Send + Sync {
    /// Seconds since 1970-01-01T00:00:00Z.
    fn now_unix_seconds(&self) -> u64;
}

/// The operating system's wall clock.
///
/// ```
/// use mrtr_runtime::token::{Clock, SystemClock};
///
/// assert!(SystemClock.now_unix_seconds() > 1_700_000_000);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_seconds(&self) -> u64 {
        // A clock set before 1970 reads as the epoch: tokens then look issued in the future
        // or expired and are rejected, which is the safe outcome.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs())
    }
}

/// A clock that only moves when told to; for tests of expiry and clock skew.
///
/// ```
/// use mrtr_runtime::token::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// clock.advance(600);
/// assert_eq!(clock.now_unix_seconds(), 1_600);
/// clock.set(5);
/// assert_eq!(clock.now_unix_seconds(), 5);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock stopped at `unix_seconds`.
    ///
    /// ```
    /// # use mrtr_runtime::token::{Clock, ManualClock};
    /// assert_eq!(ManualClock::new(42).now_unix_seconds(), 42);
    /// ```
    pub fn new(unix_seconds: u64) -> Self {
        Self {
            now: AtomicU64::new(unix_seconds),
        }
    }

    /// Moves the clock to `unix_seconds` (backwards is allowed).
    ///
    /// ```
    /// # use mrtr_runtime::token::{Clock, ManualClock};
    /// let clock = ManualClock::new(10);
    /// clock.set(3);
    /// assert_eq!(clock.now_unix_seconds(), 3);
    /// ```
    pub fn set(&self, unix_seconds: u64) {
        self.now.store(unix_seconds, Ordering::SeqCst);
    }

    /// Moves the clock forward by `seconds` (saturating at `u64::MAX`).
    ///
    /// ```
    /// # use mrtr_runtime::token::{Clock, ManualClock};
    /// let clock = ManualClock::new(u64::MAX - 1);
    /// clock.advance(10);
    /// assert_eq!(clock.now_unix_seconds(), u64::MAX);
    /// ```
    pub fn advance(&self, seconds: u64) {
        // fetch_update never fails when the closure always returns Some.
        let _ = self
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                Some(now.saturating_add(seconds))
            });
    }
}

impl Clock for ManualClock {
    fn now_unix_seconds(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}
