//! The issue's `deploy` example, end to end through real sealing, plus the state sizes.

mod machine_support;

use machine_support::*;
use mrtr::machine::{Elicited, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(mrtr::Form, Serialize, Deserialize)]
struct Confirm {
    /// Apply the plan now?
    apply: bool,
    #[form(max_length = 200)]
    reason: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Step {
    name: String,
    risky: bool,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

#[derive(Serialize, Deserialize)]
struct Plan {
    steps: Vec<Step>,
}

impl Plan {
    fn steps(self) -> Vec<Step> {
        self.steps
    }
}

async fn make_plan(service: &str, env: &str) -> Result<Plan, ToolError> {
    if service.is_empty() {
        return Err(ToolError::new("no service"));
    }
    Ok(Plan {
        steps: vec![
            Step {
                name: format!("build {service}"),
                risky: false,
            },
            Step {
                name: format!("migrate {env}"),
                risky: true,
            },
            Step {
                name: format!("switch {env}"),
                risky: true,
            },
        ],
    })
}

/// Deploy a service, asking which environment and for confirmation.
#[mrtr::tool]
async fn deploy(
    /// The service to deploy.
    service: String,
) -> Result<String, ToolError> {
    let env = ask!(choice("Which environment?", ["staging", "prod"])).accepted()?;
    let plan = make_plan(&service, &env).await?;
    let described = format!("{} steps", plan.steps.len());
    let mut notes = Vec::new();
    for step in plan.steps() {
        if step.risky {
            match ask!(form::<Confirm>(format!("Run {step}?"))) {
                Elicited::Accept(c) if c.apply => notes.push(c.reason),
                Elicited::Accept(_) | Elicited::Decline => continue,
                Elicited::Cancel => return Ok("cancelled".into()),
            }
        }
    }
    let (summary, roots) = mrtr::join!(sample!(prompt(format!("Summarize {described}"))), roots!());
    Ok(format!(
        "{service} → {env}: {} ({} notes, {} roots)",
        summary.text(),
        notes.len(),
        roots.len()
    ))
}

fn script(key: &str, request: &rmcp::model::InputRequest, _round: usize) -> serde_json::Value {
    if key.starts_with("sample") {
        return sampled("all good");
    }
    if key.starts_with("roots") {
        return roots(&["file:///src"]);
    }
    let message = message(request);
    if message.starts_with("Which") {
        accept(json!({"choice": "prod"}))
    } else {
        accept(json!({"apply": true, "reason": "ok"}))
    }
}

#[tokio::test]
async fn deploy_runs_through_every_round() {
    let flow = drive(&deploy, json!({"service": "api"}), script)
        .await
        .unwrap();
    assert_eq!(
        text(&flow.output),
        "api → prod: all good (2 notes, 1 roots)"
    );
    assert_eq!(flow.rounds.len(), 4);
    assert_eq!(flow.rounds[3], vec!["roots_3", "sample_2"]);
}

#[tokio::test]
async fn deploy_cancel_returns_early_and_decline_continues() {
    let cancelled = drive(&deploy, json!({"service": "api"}), |key, request, round| {
        if round == 1 {
            cancel()
        } else {
            script(key, request, round)
        }
    })
    .await
    .unwrap();
    assert_eq!(text(&cancelled.output), "cancelled");
    let declined = drive(&deploy, json!({"service": "api"}), |key, request, round| {
        if round == 1 {
            decline()
        } else {
            script(key, request, round)
        }
    })
    .await
    .unwrap();
    assert_eq!(
        text(&declined.output),
        "api → prod: all good (1 notes, 1 roots)"
    );
    let refused = drive(&deploy, json!({"service": "api"}), |_, _, _| decline())
        .await
        .unwrap();
    assert_eq!(refused.output.is_error, Some(true));
    assert_eq!(text(&refused.output), "the user declined");
}

#[tokio::test]
async fn deploy_lists_its_arguments_and_inputs() {
    use mrtr::machine::{InputKind, Listing, Machine};
    let descriptor = deploy.descriptor();
    let Listing::Tool(tool) = &descriptor.listing else {
        panic!("not a tool")
    };
    assert_eq!(tool.name, "deploy");
    assert_eq!(
        tool.description.as_deref(),
        Some("Deploy a service, asking which environment and for confirmation.")
    );
    let schema = serde_json::Value::Object((*tool.input_schema).clone());
    assert_eq!(
        schema["properties"]["service"]["description"],
        "The service to deploy."
    );
    assert_eq!(schema["required"], json!(["service"]));
    assert_eq!(
        descriptor.input_kinds,
        vec![
            InputKind::FormElicitation,
            InputKind::Sampling,
            InputKind::Roots
        ]
    );
    let missing = drive(&deploy, json!({}), script).await.err().unwrap();
    assert_eq!(missing.code, rmcp::model::ErrorCode::INVALID_PARAMS);
}

/// Twenty rounds of one loop, accumulating answers.
#[mrtr::tool]
async fn twenty() -> String {
    let mut answers = Vec::new();
    for i in 0..20u32 {
        let answer = ask!(text(format!("q{i}"))).ok().unwrap_or_default();
        answers.push(answer);
    }
    answers.join("")
}

/// Prints the state sizes (run with `--nocapture`); the assertions keep them bounded.
#[tokio::test]
async fn state_bytes_per_round() {
    let raw = drive_raw(&deploy, json!({"service": "api"}), script)
        .await
        .unwrap();
    let sealed = drive(&deploy, json!({"service": "api"}), script)
        .await
        .unwrap();
    println!(
        "deploy: raw state bytes per round {:?}, requestState chars {:?}",
        raw.state_sizes, sealed.state_sizes
    );
    assert!(raw.state_sizes.iter().all(|size| *size < 200));
    let raw = drive_raw(&twenty, json!({}), |_, _, _| accept(json!({"text": "x"})))
        .await
        .unwrap();
    let sealed = drive(&twenty, json!({}), |_, _, _| accept(json!({"text": "x"})))
        .await
        .unwrap();
    println!(
        "20-round loop: raw {:?}, requestState chars {:?}",
        raw.state_sizes, sealed.state_sizes
    );
    assert_eq!(text(&sealed.output), "x".repeat(20));
    assert_eq!(raw.state_sizes.len(), 20);
    assert!(raw.state_sizes[19] < raw.state_sizes[0] + 60);
}

/// The README's `deploy`, word for word.
#[mrtr::tool]
async fn readme_deploy(
    /// The service to deploy, e.g. "api".
    service: String,
) -> Result<String, ToolError> {
    let env = ask!(choice(
        format!("Where should {service} go?"),
        ["staging", "production"]
    ))
    .accepted()?; // a decline or cancel ends the call here
    let plan = format!("{service} to {env}"); // runs once per call, whatever the rounds
    if ask!(confirm(format!("Deploy {plan}?"))) != Elicited::Accept(true) {
        return Ok(format!("Called off: {plan}."));
    }
    Ok(format!("Deployed {plan}."))
}

/// The README example's state per round (run with `--nocapture`): the figure issue 33's
/// closing note holds steady.
#[tokio::test]
async fn readme_deploy_state_bytes_per_round() {
    let answers = |_: &str, request: &rmcp::model::InputRequest, _: usize| {
        if message(request).starts_with("Where") {
            accept(json!({"choice": "production"}))
        } else {
            accept(json!({"confirm": true}))
        }
    };
    let raw = drive_raw(&readme_deploy, json!({"service": "api"}), answers)
        .await
        .unwrap();
    let sealed = drive(&readme_deploy, json!({"service": "api"}), answers)
        .await
        .unwrap();
    println!(
        "README deploy: raw state bytes per round {:?}, requestState chars {:?}",
        raw.state_sizes, sealed.state_sizes
    );
    assert_eq!(text(&sealed.output), "Deployed api to production.");
    assert_eq!(raw.state_sizes.len(), 2);
    assert!(raw.state_sizes.iter().all(|size| *size < 100));
}
