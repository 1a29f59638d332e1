//! A three-round tool written by hand against the machine contract, exactly as
//! `#[mrtr::tool]` lowers one: choose an environment, confirm (the question depends on the
//! choice), then let the client's model summarize the plan.
//!
//! The straight-line version it stands for:
//!
//! ```ignore
//! #[mrtr::tool]
//! async fn plan_release(service: String) -> Result<String, ToolError> {
//!     let env = ask!(choice(format!("Where should {service} go?"), ["staging", "production"])).accepted()?;
//!     let plan = make_plan(&service, &env);                                      // runs once per flow
//!     if !ask!(confirm(confirmation_message(&service, &env, &plan))).accepted()? { return Ok("Release cancelled.".into()) }
//!     let summary = sample!(prompt(format!("Summarize: {}", plan.join("; "))));
//!     Ok(format!("{service} → {env}: {}", summary.text()))
//! }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr::machine::{
    Elicited, InputKind, Machine, MachineDescriptor, Run, Sampled, Step, StepFuture, Suspend, input,
};
use mrtr::rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde::{Deserialize, Serialize};

/// The tool's arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct PlanReleaseArgs {
    /// The service to release.
    pub service: String,
}

/// The live locals at each suspension point. `service` is not here: arguments come back
/// with every retry and are bound into the token.
#[derive(Debug, Serialize, Deserialize)]
enum ReleaseState {
    /// Waiting for the environment.
    ChoosingEnvironment,
    /// Waiting for the confirmation.
    Confirming { env: String, plan: Vec<String> },
    /// Waiting for the summary.
    Summarizing { env: String },
}

/// Plans a release of a service in three rounds of input.
pub struct PlanRelease {
    descriptor: MachineDescriptor,
    plans_made: Arc<AtomicUsize>,
}

impl PlanRelease {
    /// The tool, counting how often it builds a plan into `plans_made` (each flow must
    /// build exactly one, whatever the number of rounds or server instances).
    pub fn new(plans_made: Arc<AtomicUsize>) -> Self {
        let schema = schemars::schema_for!(PlanReleaseArgs);
        let schema = serde_json::to_value(schema)
            .ok()
            .and_then(|value| value.as_object().cloned())
            .unwrap_or_default();
        let tool = Tool::new(
            "plan_release",
            "Plan a release: asks where to deploy, confirms, and summarizes the plan.",
            schema,
        );
        PlanRelease {
            descriptor: MachineDescriptor::tool(
                tool,
                [InputKind::FormElicitation, InputKind::Sampling],
                0x9e1e_a5e0_0000_0001,
            ),
            plans_made,
        }
    }

    fn make_plan(&self, service: &str, env: &str) -> Vec<String> {
        self.plans_made.fetch_add(1, Ordering::SeqCst);
        let mut plan = vec![
            format!("build {service}"),
            format!("run the {service} test suite"),
        ];
        if env == "production" {
            plan.push("canary 5% of traffic for 10 minutes".into());
        }
        plan.push(format!("deploy {service} to {env}"));
        plan
    }
}

fn confirmation_message(service: &str, env: &str, plan: &[String]) -> String {
    if env == "production" {
        format!(
            "Deploy {service} to PRODUCTION in {} steps? Live users will be affected.",
            plan.len()
        )
    } else {
        format!("Deploy {service} to {env} in {} steps?", plan.len())
    }
}

fn text(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

impl Machine for PlanRelease {
    type Output = CallToolResult;

    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }

    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        Box::pin(async move {
            let PlanReleaseArgs { service } = run.parse_arguments()?;
            let Some(mut resume) = run.resume else {
                let question = input::choice(
                    format!("Where should {service} go?"),
                    ["staging", "production"],
                );
                let suspend = Suspend::new(&ReleaseState::ChoosingEnvironment)?
                    .ask("environment", question)?;
                return Ok(Step::Suspend(suspend));
            };
            match resume.state::<ReleaseState>()? {
                ReleaseState::ChoosingEnvironment => {
                    let env: Elicited<String> = resume.answers().take("environment")?;
                    let Elicited::Accept(env) = env else {
                        return Ok(Step::Done(text(
                            "Release cancelled: no environment chosen.".into(),
                        )));
                    };
                    let plan = self.make_plan(&service, &env);
                    let question = input::confirm(confirmation_message(&service, &env, &plan));
                    let suspend = Suspend::new(&ReleaseState::Confirming { env, plan })?
                        .ask("confirm", question)?;
                    Ok(Step::Suspend(suspend))
                }
                ReleaseState::Confirming { env, plan } => {
                    let confirmed: Elicited<bool> = resume.answers().take("confirm")?;
                    if confirmed != Elicited::Accept(true) {
                        return Ok(Step::Done(text("Release cancelled.".into())));
                    }
                    let question = input::prompt(format!(
                        "Summarize this release plan in one sentence: {}",
                        plan.join("; ")
                    ))
                    .system("You write terse release notes.")
                    .max_tokens(100);
                    let suspend = Suspend::new(&ReleaseState::Summarizing { env })?
                        .ask("summary", question)?;
                    Ok(Step::Suspend(suspend))
                }
                ReleaseState::Summarizing { env } => {
                    let summary: Sampled = resume.answers().take("summary")?;
                    Ok(Step::Done(text(format!(
                        "{service} → {env}: {}",
                        summary.text()
                    ))))
                }
            }
        })
    }
}
