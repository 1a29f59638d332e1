//! Unit tests' view of what the code logged: a `tracing` subscriber writing plain text to a
//! buffer, installed for the current thread.

use std::sync::{Arc, Mutex};

/// The text logged while the guard of [`CapturedLogs::install`] lives.
#[derive(Clone, Default)]
pub(crate) struct CapturedLogs(Arc<Mutex<Vec<u8>>>);

impl CapturedLogs {
    /// Captures this thread's logs until the returned guard is dropped.
    pub(crate) fn install() -> (Self, tracing::subscriber::DefaultGuard) {
        let captured = CapturedLogs::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        (captured, tracing::subscriber::set_default(subscriber))
    }

    /// Everything logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for CapturedLogs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn what_is_logged_while_installed_is_captured_and_nothing_after() {
    let (logs, guard) = CapturedLogs::install();
    tracing::warn!(key = 7, "seen");
    drop(guard);
    tracing::warn!("not seen");
    let text = logs.text();
    assert!(
        text.contains("WARN") && text.contains("seen key=7"),
        "{text}"
    );
    assert!(!text.contains("not seen"), "{text}");
}
