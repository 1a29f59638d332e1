//! Facts about a machine that decide how a server carries its rounds: how a presented-again
//! round is replayed ([`ReplayPolicy`]) and whether the call continues as a task
//! ([`TaskSupport`]). They live with the machine, not the server, because the macro sets them
//! from the tool's attribute and every carrier reads them.

/// What a round ledger does with a round presented again, and with one whose instance died
/// while running it (`#[mrtr::tool(replay = "...")]`).
///
/// ```
/// use mrtr_runtime::machine::ReplayPolicy;
/// assert_eq!(ReplayPolicy::default(), ReplayPolicy::RerunAfterLease);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum ReplayPolicy {
    /// Each round runs once; if the instance running it dies, the round may run again once
    /// its lease expires (at least once, exactly once while instances stay up).
    #[default]
    RerunAfterLease,
    /// A round whose instance died mid-round is never run again: its presentation fails
    /// with `-32052` and the flow must start over. For rounds that act on the world and
    /// cannot tell whether they already did. Needs a ledger (`build()` refuses otherwise).
    AtMostOnce,
    /// Not claimed in the ledger: for rounds without side effects, which then cost no
    /// ledger round trip and keep working while the ledger is down.
    Unprotected,
}

/// Whether and how a tool runs as a task for clients that declare the tasks extension.
///
/// Set with `#[mrtr::tool(task = "optional")]` / `task = "required"` and `task_after = N`,
/// or [`MachineDescriptor::with_task`](crate::machine::MachineDescriptor::with_task) for a
/// hand-written machine.
///
/// ```
/// use mrtr_runtime::machine::TaskSupport;
/// let support = TaskSupport::required().after_rounds(1);
/// assert!(support.required);
/// assert_eq!(support.after_rounds, 1);
/// assert!(!TaskSupport::optional().required);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaskSupport {
    /// A client without the extension is refused with `-32021` instead of being served
    /// the ephemeral MRTR way.
    pub required: bool,
    /// How many input rounds are answered as ordinary MRTR rounds before the task is
    /// created (0: the task is created on the first call, before any code runs).
    pub after_rounds: u32,
}

impl TaskSupport {
    /// Runs as a task when the client declares the extension, as MRTR otherwise.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::TaskSupport::optional().after_rounds, 0);
    /// ```
    pub const fn optional() -> Self {
        TaskSupport {
            required: false,
            after_rounds: 0,
        }
    }

    /// Runs only as a task: a client without the extension gets `-32021`.
    ///
    /// ```
    /// assert!(mrtr_runtime::machine::TaskSupport::required().required);
    /// ```
    pub const fn required() -> Self {
        TaskSupport {
            required: true,
            after_rounds: 0,
        }
    }

    /// Answers the first `rounds` input rounds synchronously (MRTR) and creates the task
    /// when the answers to the last of them arrive.
    ///
    /// ```
    /// let s = mrtr_runtime::machine::TaskSupport::optional().after_rounds(2);
    /// assert_eq!(s.after_rounds, 2);
    /// ```
    pub const fn after_rounds(mut self, rounds: u32) -> Self {
        self.after_rounds = rounds;
        self
    }

    /// The former name of [`after_rounds`](Self::after_rounds).
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let s = mrtr_runtime::machine::TaskSupport::optional().after_mrtr_rounds(2);
    /// assert_eq!(s.after_rounds, 2);
    /// ```
    #[deprecated(since = "0.1.0", note = "renamed to `after_rounds`")]
    pub const fn after_mrtr_rounds(self, rounds: u32) -> Self {
        self.after_rounds(rounds)
    }
}
