//! A panic in a tool's code (an `unwrap` on `None`, an index out of range) ends that request
//! with an internal error instead of ending the task that serves it: otherwise rmcp never
//! answers the request and the client waits for a reply that will not come.

use std::any::Any;
use std::panic::AssertUnwindSafe;

use futures::FutureExt as _;

use crate::machine::{Machine, Run, Step, StepError};

/// Steps `machine` once; a panic inside becomes [`StepError::Internal`] naming the panic's
/// message (logged by the caller, never sent to the client).
///
/// Unwind safety: the machine is a shared description of the tool's code and its state moved
/// into `run`, which the panic drops; shared application state the code touched is left as
/// a panicking tokio task would leave it (a `Mutex` it held is poisoned).
pub(crate) async fn step_catching_panics<M: Machine + ?Sized>(
    machine: &M,
    run: Run<'_>,
) -> Result<Step<M::Output>, StepError> {
    match AssertUnwindSafe(machine.step(run)).catch_unwind().await {
        Ok(stepped) => stepped,
        Err(payload) => Err(StepError::Internal(
            format!("the tool's code panicked: {}", panic_message(&*payload)).into(),
        )),
    }
}

/// The message of a `panic!`, `unwrap`, `expect` or index panic (a `&str` or a `String`).
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn the_message_of_each_kind_of_panic_is_read() {
        let literal = std::panic::catch_unwind(|| panic!("plain")).unwrap_err();
        assert_eq!(panic_message(&*literal), "plain");
        let formatted = std::panic::catch_unwind(|| panic!("{} {}", "with", 2)).unwrap_err();
        assert_eq!(panic_message(&*formatted), "with 2");
        let other = std::panic::catch_unwind(|| std::panic::panic_any(7_u8)).unwrap_err();
        assert_eq!(panic_message(&*other), "a panic without a message");
    }
}
