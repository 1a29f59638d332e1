//! Drive a machine in-process through the real server pipeline — sealing and opening a
//! real token every round — with scripted answers. For tests of your own tools.
//!
//! ```
//! # use mrtr_runtime::machine::*;
//! # struct Deploy(MachineDescriptor);
//! # impl Machine for Deploy {
//! #     type Output = String;
//! #     fn descriptor(&self) -> &MachineDescriptor { &self.0 }
//! #     fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, String> { Box::pin(async move {
//! #         let Some(mut resume) = run.resume else {
//! #             let env = input::choice("Which environment?", ["staging", "prod"]);
//! #             return Ok(Step::Suspend(Suspend::new(&())?.ask("env", env)?));
//! #         };
//! #         let env = resume.answers().take::<Elicited<String>>("env")?.ok();
//! #         let who = run.cx.principal().unwrap_or("anonymous");
//! #         Ok(Step::Done(format!("{who} deployed {}", env.as_deref().unwrap_or("nothing"))))
//! #     }) }
//! # }
//! # fn deploy(fingerprint: u64) -> Deploy {
//! #     let tool = rmcp::model::Tool::new("deploy", "Deploys", serde_json::Map::new());
//! #     Deploy(MachineDescriptor::tool(tool, [InputKind::FormElicitation], fingerprint))
//! # }
//! use futures::executor::block_on;
//! use mrtr_runtime::testing::Harness;
//! use serde_json::json;
//!
//! // `deploy(1)`: version 1 of a tool that asks "Which environment?" under the key `env`,
//! // then reports who deployed what.
//! let harness = Harness::new().principal("alice");
//! let transcript = block_on(harness.drive(&deploy(1), json!({}), |key, _request| {
//!     assert_eq!(key, "env");
//!     json!({"action": "accept", "content": {"choice": "staging"}})
//! }))
//! .unwrap();
//! assert_eq!(transcript.rounds.len(), 1);
//! assert_eq!(transcript.output, "alice deployed staging");
//! ```

mod answers;
mod flow;
mod harness;

pub use answers::{Answer, Question};
pub use flow::{Flow, Progress, Tamper, tamper};
#[cfg(feature = "fuzzing")]
pub(crate) use harness::HARNESS_AUDIENCE;
pub use harness::{Harness, Refused, Reply, RoundRecord, Transcript};
