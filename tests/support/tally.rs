//! A `#[mrtr::tool]` whose every stretch of code between two suspensions bumps its own
//! counter, so a test can prove each stretch ran once per flow — in-process (read the
//! counters) or in a child process (the result reports them).
#![allow(dead_code)] // each includer uses a subset

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mrtr::State;
use mrtr::machine::{Elicited, ToolError};

/// How often each stretch of `tally` ran.
#[derive(Debug, Default)]
pub struct Runs {
    /// Before the first suspension.
    pub before: AtomicU32,
    /// Between the first and the second.
    pub between: AtomicU32,
    /// After the second (the joined round).
    pub after: AtomicU32,
}

impl Runs {
    /// `[before, between, after]`.
    pub fn snapshot(&self) -> [u32; 3] {
        [
            self.before.load(Ordering::SeqCst),
            self.between.load(Ordering::SeqCst),
            self.after.load(Ordering::SeqCst),
        ]
    }
}

/// Asks a name, then — in one round — a confirmation and the roots, then the model.
#[mrtr::tool]
pub async fn tally(
    State(runs): State<Arc<Runs>>,
    /// What is being tallied.
    label: String,
) -> Result<String, ToolError> {
    runs.before.fetch_add(1, Ordering::SeqCst);
    let name = ask!(text(format!("Who is the {label} for?"))).accepted()?;
    runs.between.fetch_add(1, Ordering::SeqCst);
    let (go, roots) = mrtr::join!(
        ask!(confirm(format!("Tally {label} for {name}?"))),
        roots!()
    );
    runs.after.fetch_add(1, Ordering::SeqCst);
    if go != Elicited::Accept(true) {
        return Ok(format!("{label} for {name}: not confirmed"));
    }
    let note = sample!(prompt(format!("One word about {name}")).max_tokens(10));
    let [before, between, after] = runs.snapshot();
    Ok(format!(
        "{label} for {name}: {} root(s), note `{}` | runs {before}/{between}/{after}",
        roots.len(),
        note.text()
    ))
}
