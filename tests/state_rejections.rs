//! Every way a `requestState` can be wrong is answered with the one `-32602` error, the
//! flow never resumes, and nothing between suspensions runs; missing or malformed answers
//! are asked again; capabilities are checked on every retry. All through real sealing.

#[path = "../examples/hand_written/release_wizard.rs"]
mod release_wizard;
#[path = "support/renamed.rs"]
mod renamed;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mrtr::machine::{Machine, MachineDescriptor, Run, StepFuture};
use mrtr::rmcp::ErrorData;
use mrtr::rmcp::model::{CallToolResult, InputRequiredResult, InputResponses};
use mrtr::server::StaleStatePolicy;
use mrtr::testing::{Harness, Reply};
use mrtr::token::REJECTED_STATE_MESSAGE;
use release_wizard::PlanRelease;
use serde_json::json;

fn wizard() -> (PlanRelease, Arc<AtomicUsize>) {
    let plans = Arc::new(AtomicUsize::new(0));
    (PlanRelease::new(plans.clone()), plans)
}

fn args(service: &str) -> serde_json::Value {
    json!({ "service": service })
}

fn input_required<O: std::fmt::Debug>(reply: Result<Reply<O>, ErrorData>) -> InputRequiredResult {
    match reply {
        Ok(Reply::InputRequired(result)) => result,
        other => panic!("expected input_required, got {other:?}"),
    }
}

fn assert_rejected<O: std::fmt::Debug>(reply: Result<Reply<O>, ErrorData>) {
    match reply {
        Err(error) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            assert_eq!(error.message, REJECTED_STATE_MESSAGE);
            assert!(
                error.data.is_none(),
                "the reason is never sent to the client"
            );
        }
        Ok(reply) => panic!("expected the state to be rejected, got {reply:?}"),
    }
}

fn environment_answer() -> InputResponses {
    [(
        "environment".to_string(),
        json!({"action": "accept", "content": {"choice": "staging"}}),
    )]
    .into()
}

/// Round 1 of the wizard: the token that asks for the environment.
async fn first_token(harness: &Harness, tool: &PlanRelease) -> String {
    let round = input_required(harness.request(tool, args("api"), None, None).await);
    round.request_state.expect("sealed state")
}

#[tokio::test]
async fn tampered_truncated_extended_and_empty_tokens_are_rejected() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    let mut flipped = token.clone().into_bytes();
    let middle = flipped.len() / 2;
    flipped[middle] = if flipped[middle] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    let candidates = [
        flipped,
        token[..token.len() - 1].to_string(),
        token[..10].to_string(),
        format!("{token}-TAMPERED"),
        String::new(),
        "mrtr3.".to_string(),
        token.replacen("mrtr3.", "mrtr2.", 1),
        "not a token at all".to_string(),
        "x".repeat(70 * 1024),
    ];
    for candidate in candidates {
        let reply = harness
            .request(
                &tool,
                args("api"),
                Some(candidate.clone()),
                Some(environment_answer()),
            )
            .await;
        assert_rejected(reply);
    }
    assert_eq!(
        plans.load(Ordering::SeqCst),
        0,
        "no rejected state resumed the flow"
    );
}

#[tokio::test]
async fn a_token_for_other_arguments_is_rejected() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    let reply = harness
        .request(
            &tool,
            args("billing"),
            Some(token),
            Some(environment_answer()),
        )
        .await;
    assert_rejected(reply);
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

/// The wizard under another name: same state layout, different tool.
struct Renamed {
    inner: PlanRelease,
    descriptor: MachineDescriptor,
}

impl Machine for Renamed {
    type Output = CallToolResult;
    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }
    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        self.inner.step(run)
    }
}

#[tokio::test]
async fn a_token_from_another_tool_is_rejected() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    let other = Renamed {
        inner: PlanRelease::new(plans.clone()),
        descriptor: renamed::renamed(tool.descriptor(), "plan_release_elsewhere"),
    };
    let reply = harness
        .request(&other, args("api"), Some(token), Some(environment_answer()))
        .await;
    assert_rejected(reply);
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_token_for_another_principal_is_rejected() {
    let alice = Harness::new().principal("alice");
    let mallory = Harness::new().principal("mallory");
    let anonymous = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&alice, &tool).await;
    assert_rejected(
        mallory
            .request(
                &tool,
                args("api"),
                Some(token.clone()),
                Some(environment_answer()),
            )
            .await,
    );
    assert_rejected(
        anonymous
            .request(
                &tool,
                args("api"),
                Some(token.clone()),
                Some(environment_answer()),
            )
            .await,
    );
    assert_eq!(plans.load(Ordering::SeqCst), 0);
    input_required(
        alice
            .request(&tool, args("api"), Some(token), Some(environment_answer()))
            .await,
    );
    assert_eq!(
        plans.load(Ordering::SeqCst),
        1,
        "the right principal continues"
    );
}

#[tokio::test]
async fn an_expired_or_future_token_is_rejected() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    harness.clock().advance(601);
    assert_rejected(
        harness
            .request(&tool, args("api"), Some(token), Some(environment_answer()))
            .await,
    );

    let fresh = first_token(&harness, &tool).await;
    harness.clock().set(1_000_000_000);
    assert_rejected(
        harness
            .request(&tool, args("api"), Some(fresh), Some(environment_answer()))
            .await,
    );
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn think_time_counts_per_round_not_per_flow() {
    let harness = Harness::new();
    let (tool, _) = wizard();
    let token = first_token(&harness, &tool).await;
    harness.clock().advance(500);
    let round2 = input_required(
        harness
            .request(&tool, args("api"), Some(token), Some(environment_answer()))
            .await,
    );
    harness.clock().advance(500); // 1000 s into the flow, 500 s into this round
    let confirm: InputResponses = [(
        "confirm".to_string(),
        json!({"action": "accept", "content": {"confirm": true}}),
    )]
    .into();
    input_required(
        harness
            .request(&tool, args("api"), round2.request_state, Some(confirm))
            .await,
    );
}

#[tokio::test]
async fn missing_or_malformed_answers_are_asked_again_without_rerunning_code() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    let bad_answers: Vec<Option<InputResponses>> = vec![
        None,
        Some(InputResponses::new()),
        Some([("environment".to_string(), json!(null))].into()),
        Some([("environment".to_string(), json!(12345))].into()),
        Some([("environment".to_string(), json!({"action": "accept"}))].into()),
        Some(
            [(
                "environment".to_string(),
                json!({"action": "accept", "content": {"choice": "moon"}}),
            )]
            .into(),
        ),
        Some([("environment".to_string(), json!({"action": "maybe"}))].into()),
        Some(
            [(
                "unrelated".to_string(),
                json!({"action": "accept", "content": {"choice": "staging"}}),
            )]
            .into(),
        ),
    ];
    for answers in bad_answers {
        let again = input_required(
            harness
                .request(&tool, args("api"), Some(token.clone()), answers.clone())
                .await,
        );
        let keys: Vec<_> = again
            .input_requests
            .iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["environment"], "re-asked for {answers:?}");
        assert_ne!(
            again.request_state.as_deref(),
            Some(token.as_str()),
            "re-sealed with a fresh expiry"
        );
    }
    assert_eq!(
        plans.load(Ordering::SeqCst),
        0,
        "no code after the suspension ran"
    );
}

#[tokio::test]
async fn a_decline_is_a_real_answer_not_a_missing_one() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    let declined: InputResponses =
        [("environment".to_string(), json!({"action": "decline"}))].into();
    match harness
        .request(&tool, args("api"), Some(token), Some(declined))
        .await
    {
        Ok(Reply::Complete(result)) => {
            let text = result.content[0].as_text().unwrap().text.clone();
            assert_eq!(text, "Release cancelled: no environment chosen.");
        }
        other => panic!("expected completion, got {other:?}"),
    }
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn capabilities_are_checked_again_on_every_retry() {
    let (tool, plans) = wizard();
    let form_and_sampling = Harness::new();
    let token = first_token(&form_and_sampling, &tool).await;
    // The retry's _meta no longer declares elicitation, and round 2 asks a form question.
    let sampling_only =
        Harness::new().capabilities(serde_json::from_value(json!({"sampling": {}})).unwrap());
    let error = sampling_only
        .request(
            &tool,
            args("api"),
            Some(token.clone()),
            Some(environment_answer()),
        )
        .await
        .expect_err("the confirmation needs form elicitation");
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.data.unwrap()["requiredCapabilities"],
        json!({"elicitation": {}})
    );

    // Re-asking a pending form request to a client that dropped elicitation is gated too.
    let error = sampling_only
        .request(&tool, args("api"), Some(token), None)
        .await
        .expect_err("the pending question needs form elicitation");
    assert_eq!(error.code.0, -32021);
    // The first call with no capabilities at all is refused the same way.
    let nothing = Harness::new().capabilities(Default::default());
    let error = nothing
        .request(&tool, args("api"), None, None)
        .await
        .expect_err("no elicitation declared");
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        plans.load(Ordering::SeqCst),
        1,
        "the retry refused by the capability gate had run the code between the rounds once"
    );
}

#[tokio::test]
async fn a_state_from_another_version_of_the_tool_restarts_or_is_rejected() {
    let (tool, plans) = wizard();
    let harness = Harness::new();
    let token = first_token(&harness, &tool).await;
    let mut descriptor = tool.descriptor().clone();
    descriptor.fingerprint ^= 1;
    let next_version = Renamed {
        inner: PlanRelease::new(plans.clone()),
        descriptor,
    };

    let restarted = input_required(
        harness
            .request(
                &next_version,
                args("api"),
                Some(token.clone()),
                Some(environment_answer()),
            )
            .await,
    );
    let keys: Vec<_> = restarted
        .input_requests
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, ["environment"], "the flow starts over");

    let strict = Harness::new().stale_state(StaleStatePolicy::Reject);
    assert_rejected(
        strict
            .request(
                &next_version,
                args("api"),
                Some(token),
                Some(environment_answer()),
            )
            .await,
    );
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn answers_sent_with_the_first_call_are_used_once() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    // A stateless client may answer the first question before being asked.
    let round2 = input_required(
        harness
            .request(&tool, args("api"), None, Some(environment_answer()))
            .await,
    );
    let keys: Vec<_> = round2
        .input_requests
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(keys, ["confirm"]);
    assert_eq!(plans.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn invalid_arguments_are_invalid_params() {
    let harness = Harness::new();
    let (tool, _) = wizard();
    let error = harness
        .request(&tool, json!({"service": 7}), None, None)
        .await
        .expect_err("bad arguments");
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.starts_with("invalid arguments"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn asking_again_keeps_the_expiry_the_question_had() {
    let harness = Harness::new();
    let (tool, plans) = wizard();
    let token = first_token(&harness, &tool).await;
    harness.clock().advance(500);
    let bad: InputResponses = [("environment".to_string(), json!(12345))].into();
    let again = input_required(
        harness
            .request(&tool, args("api"), Some(token), Some(bad))
            .await,
    );
    // 200 s later the question is 700 s old: past the 600 s TTL despite the re-ask.
    harness.clock().advance(200);
    let reply = harness
        .request(
            &tool,
            args("api"),
            again.request_state,
            Some(environment_answer()),
        )
        .await;
    assert_rejected(reply);
    assert_eq!(plans.load(Ordering::SeqCst), 0);
}

/// A machine that takes an answer under a key it never asked: a bug on the server side.
struct TypoMachine {
    descriptor: MachineDescriptor,
}

impl TypoMachine {
    /// The wizard's descriptor under the name `typo`.
    fn new() -> Self {
        let (wizard_tool, _) = wizard();
        TypoMachine {
            descriptor: renamed::renamed(wizard_tool.descriptor(), "typo"),
        }
    }

    /// An answer to the one question it asks.
    fn answer() -> InputResponses {
        [(
            "name".to_string(),
            json!({"action": "accept", "content": {"text": "Ada"}}),
        )]
        .into()
    }
}

impl Machine for TypoMachine {
    type Output = CallToolResult;
    fn descriptor(&self) -> &MachineDescriptor {
        &self.descriptor
    }
    fn step<'a>(&'a self, run: Run<'a>) -> StepFuture<'a, CallToolResult> {
        Box::pin(async move {
            let Some(mut resume) = run.resume else {
                let suspend = mrtr::machine::Suspend::new(&())?
                    .ask("name", mrtr::machine::input::text("Name?"))?;
                return Ok(mrtr::machine::Step::Suspend(suspend));
            };
            let _: mrtr::machine::Elicited<String> = resume.answers().take("nmae")?;
            unreachable!("a key that was never asked has no answer")
        })
    }
}

/// A resumed round whose code takes an answer under a key its sealed pending requests never
/// asked is not asked again (that would loop forever). On a token it is refused as a state
/// whose pending requests do not match it (`-32602`): from the engine's side, a hand-written
/// machine with this bug and a token forged with a leaked key look the same (issue 13's
/// hostile_state finding), and a forged token must not be reported as a server fault.
#[tokio::test]
async fn taking_a_key_that_was_never_asked_is_refused_not_reasked() {
    let harness = Harness::new();
    let typo = TypoMachine::new();
    let first = input_required(harness.request(&typo, args("api"), None, None).await);
    let answers = TypoMachine::answer();
    let refused = harness
        .request_explained(&typo, args("api"), first.request_state, Some(answers))
        .await
        .expect_err("a resume at a key never asked");
    assert_eq!(refused.error.code.0, -32602);
    assert_eq!(
        refused.rejection,
        Some("pending_requests_do_not_match_state")
    );
}

/// The same bug on a first call that carried its answers up front (the eager path): there is
/// no token to blame, so it is the server's fault (`-32603`), and the question is not asked
/// again (asking it again would loop: the code would take the same wrong key next time).
#[tokio::test]
async fn taking_a_key_never_asked_after_eager_answers_is_an_internal_error() {
    let harness = Harness::new();
    let typo = TypoMachine::new();
    let eager = TypoMachine::answer();
    let failed = harness
        .request(&typo, args("api"), None, Some(eager))
        .await
        .expect_err("the machine's bug is an error, not a question asked again");
    assert_eq!(failed.code.0, -32603);
}
