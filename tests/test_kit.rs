//! The test kit (`mrtr::testing`) on the showcase's deploy wizard, as the guide shows it (docs/guide/testing.md):
//! round by round with typed answers, across two instances, with replayed and tampered
//! rounds refused for the exact reason, and the transcript kept as a reviewed snapshot
//! (`tests/test_kit/deploy_wizard.transcript`; `MRTR_BLESS=1` rewrites it).

#[path = "../examples/showcase/deploy_wizard.rs"]
#[allow(dead_code)]
mod wizard;

use mrtr::machine::InputKind;
use mrtr::testing::{Answer, Harness, Tamper};
use mrtr::token::REJECTED_STATE_MESSAGE;
use serde_json::json;
use wizard::deploy_wizard;

// docs/guide/testing.md shows this test's body, on a smaller tool.
#[tokio::test]
async fn a_deploy_hops_instances_and_its_transcript_is_reviewed() {
    let (one, two) = Harness::pair();
    let mut flow = one.flow(&deploy_wizard, json!({"service": "api"}));

    let asked = flow.start().await.unwrap();
    assert_eq!(asked.keys(), ["environment"]);
    assert_eq!(asked.questions()[0].kind, InputKind::FormElicitation);
    assert_eq!(asked.questions()[0].message, "Where should api go?");

    flow.on(&two); // the next round lands on the other instance
    let asked = flow
        .answer([("environment", Answer::choice("production"))])
        .await
        .unwrap();
    assert!(asked.questions()[0].message.contains("PRODUCTION"));

    flow.on(&one);
    flow.answer([("confirm", Answer::confirm(true))])
        .await
        .unwrap();
    let asked = flow
        .answer([("version", Answer::text("1.4"))])
        .await
        .unwrap();
    assert!(
        asked.questions()[0]
            .message
            .starts_with("`1.4` is not a version")
    );
    let done = flow
        .answer([("version", Answer::text("1.4.2"))])
        .await
        .unwrap();
    assert_eq!(
        done.text().unwrap(),
        "Deploying api 1.4.2 to production (2 version attempt(s))."
    );

    let transcript = flow.transcript();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/test_kit/deploy_wizard.transcript"
    );
    if std::env::var_os("MRTR_BLESS").is_some() {
        std::fs::write(path, &transcript).unwrap();
    }
    let snapshot = std::fs::read_to_string(path).unwrap();
    assert_eq!(
        transcript, snapshot,
        "run with MRTR_BLESS=1 if the change is intended"
    );
    assert!(
        include_str!("../docs/guide/testing.md").contains(&snapshot),
        "docs/guide/testing.md must show tests/test_kit/deploy_wizard.transcript"
    );
}

#[tokio::test]
async fn tampered_rounds_are_refused_for_the_exact_reason() {
    let harness = Harness::new();
    let mut flow = harness.flow(&deploy_wizard, json!({"service": "api"}));
    flow.start().await.unwrap();
    for (how, reason) in [
        (Tamper::FlipTagBit, "unauthentic"),
        (Tamper::OtherKeyId, "unknown_key"),
        (Tamper::Truncate, "malformed"),
        (Tamper::WrongPrefix, "wrong_prefix"),
    ] {
        let refused = flow.send_tampered(how).await.unwrap_err();
        assert_eq!(refused.rejection, Some(reason), "{how:?}");
        // The client only ever sees the one generic message.
        assert_eq!(refused.error.code.0, -32602);
        assert_eq!(refused.error.message, REJECTED_STATE_MESSAGE);
    }

    // The state is bound to the arguments: the same round for another service is refused.
    let state = flow.request_state().unwrap().to_string();
    let refused = harness
        .request_explained(&deploy_wizard, json!({"service": "db"}), Some(state), None)
        .await
        .unwrap_err();
    assert_eq!(refused.rejection, Some("unauthentic"));

    // Nothing above moved the flow: it still continues.
    let asked = flow
        .answer([("environment", Answer::choice("staging"))])
        .await
        .unwrap();
    assert_eq!(asked.keys(), ["confirm"]);
}

#[tokio::test]
async fn a_replayed_round_runs_again_until_it_expires() {
    let harness = Harness::new();
    let mut flow = harness.flow(&deploy_wizard, json!({"service": "api"}));
    flow.start().await.unwrap();
    flow.answer([("environment", Answer::choice("staging"))])
        .await
        .unwrap();
    let declined = flow.answer([("confirm", Answer::decline())]).await.unwrap();
    let expected = "Deployment of api to staging called off.";
    assert_eq!(declined.text().unwrap(), expected);

    // States are not single-use: within the TTL the same round answers the same way.
    assert_eq!(flow.replay().await.unwrap().text().unwrap(), expected);

    harness.clock().advance(601);
    let refused = flow.replay().await.unwrap_err();
    assert_eq!(refused.rejection, Some("expired"));
}

#[tokio::test]
async fn instances_with_other_keys_do_not_continue_a_flow() {
    let one = Harness::new();
    let stranger = Harness::with_keys(mrtr::token::KeyRing::new(
        mrtr::token::KeyId(1),
        mrtr::token::SecretKey::from_bytes([9; 32]),
    ));
    let mut flow = one.flow(&deploy_wizard, json!({"service": "api"}));
    flow.start().await.unwrap();
    flow.on(&stranger);
    let refused = flow
        .answer([("environment", Answer::choice("staging"))])
        .await
        .unwrap_err();
    assert_eq!(refused.rejection, Some("unauthentic"));
}
