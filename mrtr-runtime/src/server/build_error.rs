//! Why `McpServerBuilder::build` refused to build a server.

use crate::token::KeyRingError;

/// A server that would fail at its first request is refused when it is built.
///
/// ```
/// use mrtr_runtime::server::BuildError;
/// let error = BuildError::MissingState { machine: "purge".into(), state: "app::Pool" };
/// assert!(error.to_string().contains(".app_state("));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The sealing keys could not be loaded.
    #[error(transparent)]
    Keys(#[from] KeyRingError),
    /// A machine takes `State<T>` but no `T` was registered.
    #[error(
        "`{machine}` takes `State<{state}>`, but no `{state}` is registered; add `.app_state(value)` to the server builder"
    )]
    MissingState {
        /// The tool or prompt name, or the resource URI.
        machine: String,
        /// The missing state's type name.
        state: &'static str,
    },
    /// A machine is `replay = "at_most_once"`, which only a round ledger can keep.
    #[error(
        "`{machine}` runs its rounds at most once, which needs a round ledger; add `.round_ledger(MemoryLedger::new())` for one instance, or a shared ledger such as `RedisLedger` for several"
    )]
    AtMostOnceWithoutLedger {
        /// The tool or prompt name, or the resource URI.
        machine: String,
    },
    /// A machine keeps a local across a suspension whose type the state could never read
    /// back (found before any round runs; see
    /// [`Machine::unreadable_locals`](crate::machine::Machine::unreadable_locals)).
    #[error("`{machine}`: {local}")]
    UnreadableLocal {
        /// The tool or prompt name, or the resource URI.
        machine: String,
        /// The local, where inside it, and the fix.
        #[source]
        local: crate::machine::UnreadableLocal,
    },
    /// A per-tool setting names a tool that is not registered.
    #[error(
        "`{knob}` names the tool `{tool}`, which is not registered on this server; register it with `.tool(...)` or fix the name"
    )]
    UnknownTool {
        /// The name given.
        tool: String,
        /// The builder method it was given to (e.g. `round_timeout_for`).
        knob: &'static str,
    },
}
