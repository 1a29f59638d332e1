//! The scale-out recipe's test tool and what its node (`cluster-node`) and load driver
//! (`cluster-load`) share: the questions each variant asks, how the driver answers them,
//! the result a flow ends with, and the effects file that counts how often each round's
//! code ran.
//!
//! The tool, `steps(flow)`, asks three questions. Its code runs in four rounds (before the
//! first question, and after each answer); every round appends `flow round instance
//! variant` to the effects file, so a round whose code ran twice shows up as a repeated
//! `(flow, round)`. Variant 2 is a changed body of the same tool (another fingerprint): a
//! rolling deploy.
//!
//! ```
//! use mrtr_bench::cluster::{FlowResult, answer, question};
//! let answers = (1..=3).map(|n| answer("f7", &question(2, n, "f7"))).collect();
//! let result = FlowResult { flow: "f7".into(), variant: 2, answers };
//! assert!(result.check("f7").is_ok());
//! assert!(result.check("f8").is_err());
//! ```

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use mrtr::State;
use mrtr::machine::ToolError;
use serde::{Deserialize, Serialize};

/// The tool's listed name, the same in both variants.
pub const TOOL_NAME: &str = "steps";

/// Questions each flow answers; its code runs in one more round than this.
pub const QUESTIONS: u32 = 3;

/// The `_meta` key naming the instance that ran a round.
pub const INSTANCE_META_KEY: &str = "io.mrtr/instance";

/// The text of question `number` (1-based) of `flow` as variant `variant` asks it.
///
/// ```
/// assert_ne!(mrtr_bench::cluster::question(1, 1, "f"), mrtr_bench::cluster::question(2, 1, "f"));
/// ```
pub fn question(variant: u8, number: u32, flow: &str) -> String {
    format!("[v{variant}] question {number} of {QUESTIONS} for flow {flow}?")
}

/// What the driver answers to `asked` in `flow`: derived from both, so an answer resumed
/// into another flow or another variant's question does not check.
///
/// ```
/// assert_eq!(mrtr_bench::cluster::answer("f1", "q?"), "f1 says yes to: q?");
/// ```
pub fn answer(flow: &str, asked: &str) -> String {
    format!("{flow} says yes to: {asked}")
}

/// What a completed flow returns (as JSON text): the answers the tool received, in order.
///
/// ```
/// use mrtr_bench::cluster::{FlowResult, answer, question};
/// let wrong = FlowResult { flow: "f".into(), variant: 1, answers: vec![answer("f", &question(2, 1, "f"))] };
/// assert!(wrong.check("f").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowResult {
    /// The flow id argument.
    pub flow: String,
    /// The variant that completed the flow.
    pub variant: u8,
    /// The answers, question 1 first.
    pub answers: Vec<String>,
}

impl FlowResult {
    /// Checks the result belongs to `flow` and that every answer is the one given to this
    /// variant's question of that number: nothing was resumed into the wrong flow or variant.
    ///
    /// ```
    /// use mrtr_bench::cluster::FlowResult;
    /// let short = FlowResult { flow: "f".into(), variant: 1, answers: vec![] };
    /// assert!(short.check("f").unwrap_err().contains("answers"));
    /// ```
    pub fn check(&self, flow: &str) -> Result<(), String> {
        if self.flow != flow {
            return Err(format!("flow {flow} completed as flow {}", self.flow));
        }
        let expected: Vec<String> = (1..=QUESTIONS)
            .map(|number| answer(flow, &question(self.variant, number, flow)))
            .collect();
        for (number, (got, want)) in self.answers.iter().zip(&expected).enumerate() {
            if got != want {
                return Err(format!(
                    "flow {flow}: variant {} received {got:?} for question {}, expected {want:?} (mis-resumed)",
                    self.variant,
                    number + 1
                ));
            }
        }
        if self.answers.len() != expected.len() {
            return Err(format!(
                "flow {flow}: {} answers, expected {}",
                self.answers.len(),
                expected.len()
            ));
        }
        Ok(())
    }
}

/// One node's identity and effects file, injected into every round as `State<Node>`.
///
/// ```no_run
/// let node = mrtr_bench::cluster::Node::open("a", 1, "/tmp/effects".as_ref()).unwrap();
/// node.effect("f1", 1).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct Node {
    instance: Arc<str>,
    variant: u8,
    effects: Arc<File>,
}

impl Node {
    /// Opens (creating it if needed) the effects file for appending.
    pub fn open(instance: &str, variant: u8, effects: &Path) -> std::io::Result<Node> {
        let file = OpenOptions::new().create(true).append(true).open(effects)?;
        Ok(Node {
            instance: instance.into(),
            variant,
            effects: Arc::new(file),
        })
    }

    /// The variant this node serves.
    pub fn variant(&self) -> u8 {
        self.variant
    }

    /// Appends `flow round instance variant`: one `write` of one line on an `O_APPEND`
    /// file, so lines from concurrent rounds and other processes never interleave.
    pub fn effect(&self, flow: &str, round: u32) -> std::io::Result<()> {
        let line = format!("{flow} {round} {} {}\n", self.instance, self.variant);
        let written = (&*self.effects).write(line.as_bytes())?;
        if written != line.len() {
            return Err(std::io::Error::other("short write to the effects file"));
        }
        Ok(())
    }

    /// The JSON text a completed flow returns.
    pub fn result(&self, flow: &str, answers: Vec<String>) -> Result<String, ToolError> {
        let result = FlowResult {
            flow: flow.to_owned(),
            variant: self.variant,
            answers,
        };
        Ok(serde_json::to_string(&result)?)
    }
}

/// A flow id must be one word: it is a field of the effects file's lines.
fn check_flow(flow: &str) -> Result<(), ToolError> {
    if flow.is_empty() || flow.len() > 64 || flow.contains(char::is_whitespace) {
        return Err(ToolError::new(
            "flow must be 1 to 64 characters without whitespace",
        ));
    }
    Ok(())
}

/// Variant 1 of `steps`: three questions, each round's code recorded in the effects file.
#[mrtr::tool(name = "steps")]
pub async fn steps_v1(
    node: State<Node>,
    /// The flow id, one word.
    flow: String,
) -> Result<String, ToolError> {
    check_flow(&flow)?;
    node.effect(&flow, 1)?;
    let first = ask!(key = "q1", text(question(1, 1, &flow))).accepted()?;
    node.effect(&flow, 2)?;
    let second = ask!(key = "q2", text(question(1, 2, &flow))).accepted()?;
    node.effect(&flow, 3)?;
    let third = ask!(key = "q3", text(question(1, 3, &flow))).accepted()?;
    node.effect(&flow, 4)?;
    node.result(&flow, vec![first, second, third])
}

/// Variant 2 of `steps`: the same questions reworded (another body, so another
/// fingerprint); states sealed by variant 1 restart under it, and the other way round.
#[mrtr::tool(name = "steps")]
pub async fn steps_v2(
    node: State<Node>,
    /// The flow id, one word.
    flow: String,
) -> Result<String, ToolError> {
    check_flow(&flow)?;
    node.effect(&flow, 1)?;
    let first = ask!(key = "q1", text(question(2, 1, &flow))).accepted()?;
    node.effect(&flow, 2)?;
    let second = ask!(key = "q2", text(question(2, 2, &flow))).accepted()?;
    node.effect(&flow, 3)?;
    let third = ask!(key = "q3", text(question(2, 3, &flow))).accepted()?;
    node.effect(&flow, 4)?;
    node.result(&flow, vec![first, second, third])
}
