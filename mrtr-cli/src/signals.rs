//! What the person at the terminal did to a call, shared by the answers and the session:
//! pressed Ctrl-C (cancel the whole call), or declined or cancelled a question.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use tokio::sync::Notify;

/// Shared flags: "the call was interrupted" (Ctrl-C) and "a question was declined".
///
/// [`TerminalAnswers`](crate::TerminalAnswers) sets them; [`Session::run`](crate::Session::run)
/// stops the call when interrupted and turns a decline into exit code 2.
///
/// ```
/// let signals = mrtr_cli::Signals::default();
/// assert!(!signals.is_interrupted() && !signals.declined());
/// signals.note_declined();
/// signals.interrupt();
/// assert!(signals.is_interrupted() && signals.declined());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Signals {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    interrupted: AtomicBool,
    declined: AtomicBool,
    wake: Notify,
}

impl Signals {
    /// Marks the call as interrupted (Ctrl-C) and wakes whoever waits in
    /// [`interrupted`](Self::interrupted).
    pub fn interrupt(&self) {
        self.inner.interrupted.store(true, Ordering::SeqCst);
        self.inner.wake.notify_waiters();
    }

    /// Whether [`interrupt`](Self::interrupt) was called.
    pub fn is_interrupted(&self) -> bool {
        self.inner.interrupted.load(Ordering::SeqCst)
    }

    /// Resolves once the call is interrupted.
    pub async fn interrupted(&self) {
        loop {
            let woken = self.inner.wake.notified();
            if self.is_interrupted() {
                return;
            }
            woken.await;
        }
    }

    /// Records that a question was declined or cancelled.
    pub fn note_declined(&self) {
        self.inner.declined.store(true, Ordering::SeqCst);
    }

    /// Whether a question was declined or cancelled.
    pub fn declined(&self) -> bool {
        self.inner.declined.load(Ordering::SeqCst)
    }
}
