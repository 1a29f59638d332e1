//! `#[derive(Form)]` end to end: the exact `requestedSchema` on the wire, and content a client
//! sends back going through the runtime's schema check and serde.

use mrtr::form::{Form, FormChoice};
use mrtr::machine::{AnswerProblem, Elicited, Outcome, input};
use serde::Deserialize;
use serde_json::{Value, json};

/// The example from the issue.
#[derive(mrtr::Form, Deserialize, Debug, PartialEq)]
struct Confirm {
    /// Apply the plan now?
    apply: bool,
    #[form(max_length = 200)]
    reason: Option<String>,
}

#[derive(mrtr::FormChoice, Deserialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Env {
    Staging,
    Prod,
}

#[derive(mrtr::FormChoice, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum Strategy {
    /// Blue/green
    BlueGreen,
    #[form(title = "Canary release")]
    Canary,
    AllAtOnce,
}

#[derive(mrtr::FormChoice, Deserialize, Debug, PartialEq)]
enum Region {
    #[serde(rename = "eu-west-1")]
    EuWest,
    #[serde(rename = "us-east-1")]
    UsEast,
    #[serde(skip)]
    #[allow(dead_code)]
    Internal,
}

/// Every field type and every attribute.
#[derive(mrtr::Form, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Everything {
    /// Who to notify
    /// when done.
    #[form(format = "email", title = "Email")]
    notify_email: String,
    #[form(format = "uri")]
    homepage: Option<String>,
    #[form(format = "date")]
    start_date: String,
    #[form(format = "date-time", default = "2026-01-01T00:00:00Z")]
    starts_at: Option<String>,
    #[form(min_length = 3, max_length = 20, default = "web")]
    service: String,
    retries: u8,
    #[form(minimum = -10, maximum = 10, default = 0)]
    offset: i32,
    #[form(minimum = 1)]
    big: u64,
    count: i64,
    #[form(minimum = 0.0, maximum = 1, default = 0.5)]
    ratio: f64,
    #[form(minimum = -1.5)]
    temperature: Option<f32>,
    /// Dry run
    ///
    /// Replaced: the attribute's description wins over the doc comment's rest.
    #[form(default = true, description = "Only print the plan")]
    dry_run: bool,
    env: Env,
    #[form(default = Strategy::Canary)]
    strategy: Option<Strategy>,
    #[form(min_items = 1, max_items = 2, default = [Region::EuWest])]
    regions: Vec<Region>,
    #[form(title = "Fallbacks")]
    fallbacks: Option<Vec<Strategy>>,
    #[serde(rename = "ID")]
    id: usize,
    #[serde(default)]
    note: String,
    #[serde(skip)]
    cache: Vec<(u8, u8)>,
}

mod choices {
    #[derive(mrtr::FormChoice, serde::Deserialize, Debug, PartialEq)]
    pub enum Size {
        Small,
        Large,
    }
}

const ALL_SIZES: [choices::Size; 2] = [choices::Size::Small, choices::Size::Large];

/// Qualified paths, defaults given by a constant, and `Option` defaults.
#[derive(mrtr::Form, Deserialize, Debug, PartialEq)]
struct Paths {
    #[form(default = choices::Size::Large)]
    size: crate::choices::Size,
    #[form(default = ALL_SIZES)]
    sizes: Option<std::vec::Vec<choices::Size>>,
    #[form(default = 3)]
    copies: Option<u16>,
    #[form(default = false)]
    rush: Option<bool>,
    label: std::string::String,
}

/// A form with no fields: a plain confirmation.
#[derive(mrtr::Form, Deserialize, Debug, PartialEq)]
struct Ack {}

fn wire<F: Form>() -> Value {
    serde_json::to_value(F::requested_schema()).unwrap()
}

#[test]
fn confirm_schema_is_exactly_the_spec_shape() {
    assert_eq!(
        wire::<Confirm>(),
        json!({
            "type": "object",
            "properties": {
                "apply": {"type": "boolean", "title": "Apply the plan now?"},
                "reason": {"type": "string", "maxLength": 200}
            },
            "required": ["apply"]
        })
    );
    assert_eq!(
        serde_json::to_string(&Confirm::requested_schema()).unwrap(),
        r#"{"type":"object","properties":{"apply":{"type":"boolean","title":"Apply the plan now?"},"reason":{"type":"string","maxLength":200}},"required":["apply"]}"#
    );
    let request =
        serde_json::to_value(input::form::<Confirm>("Run step 3?").into_request()).unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Run step 3?");
    assert_eq!(request["params"]["requestedSchema"], wire::<Confirm>());
}

#[test]
fn every_type_and_attribute_has_its_exact_wire_shape() {
    let expected = json!({
        "type": "object",
        "properties": {
            "notifyEmail": {"type": "string", "title": "Email", "description": "Who to notify when done.", "format": "email"},
            "homepage": {"type": "string", "format": "uri"},
            "startDate": {"type": "string", "format": "date"},
            "startsAt": {"type": "string", "format": "date-time", "default": "2026-01-01T00:00:00Z"},
            "service": {"type": "string", "minLength": 3, "maxLength": 20, "default": "web"},
            "retries": {"type": "integer", "minimum": 0},
            "offset": {"type": "integer", "minimum": -10, "maximum": 10, "default": 0},
            "big": {"type": "integer", "minimum": 1},
            "count": {"type": "integer"},
            "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.5},
            "temperature": {"type": "number", "minimum": -1.5},
            "dryRun": {"type": "boolean", "title": "Dry run", "description": "Only print the plan", "default": true},
            "env": {"type": "string", "enum": ["staging", "prod"]},
            "strategy": {"type": "string", "oneOf": [
                {"const": "blue-green", "title": "Blue/green"},
                {"const": "canary", "title": "Canary release"},
                {"const": "all-at-once", "title": "all-at-once"}
            ], "default": "canary"},
            "regions": {"type": "array", "minItems": 1, "maxItems": 2,
                "items": {"type": "string", "enum": ["eu-west-1", "us-east-1"]},
                "default": ["eu-west-1"]},
            "fallbacks": {"type": "array", "title": "Fallbacks", "items": {"anyOf": [
                {"const": "blue-green", "title": "Blue/green"},
                {"const": "canary", "title": "Canary release"},
                {"const": "all-at-once", "title": "all-at-once"}
            ]}},
            "ID": {"type": "integer", "minimum": 0},
            "note": {"type": "string"}
        },
        "required": ["notifyEmail", "startDate", "service", "retries", "offset", "big",
            "count", "ratio", "dryRun", "env", "regions", "ID"]
    });
    assert_eq!(wire::<Everything>(), expected);
}

#[test]
fn properties_keep_declaration_order_on_the_wire() {
    let text = serde_json::to_string(&Everything::requested_schema()).unwrap();
    let names = [
        "notifyEmail",
        "homepage",
        "startDate",
        "startsAt",
        "service",
        "retries",
        "offset",
        "big",
        "count",
        "ratio",
        "temperature",
        "dryRun",
        "env",
        "strategy",
        "regions",
        "fallbacks",
        "ID",
        "note",
    ];
    let positions: Vec<usize> = names
        .iter()
        .map(|name| {
            text.find(&format!("\"{name}\":{{"))
                .unwrap_or_else(|| panic!("{name} in {text}"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn qualified_paths_and_computed_defaults() {
    assert_eq!(
        wire::<Paths>(),
        json!({
            "type": "object",
            "properties": {
                "size": {"type": "string", "enum": ["Small", "Large"], "default": "Large"},
                "sizes": {"type": "array", "items": {"type": "string", "enum": ["Small", "Large"]},
                    "default": ["Small", "Large"]},
                "copies": {"type": "integer", "minimum": 0, "default": 3},
                "rush": {"type": "boolean", "default": false},
                "label": {"type": "string"}
            },
            "required": ["size", "label"]
        })
    );
}

#[test]
fn an_empty_form_has_no_properties_and_no_required_list() {
    assert_eq!(wire::<Ack>(), json!({"type": "object", "properties": {}}));
}

#[test]
fn a_client_parsing_the_schema_with_rmcp_gets_the_same_wire_json() {
    for schema in [wire::<Confirm>(), wire::<Everything>(), wire::<Ack>()] {
        let parsed: mrtr::rmcp::model::ElicitationSchema =
            serde_json::from_value(schema.clone()).unwrap();
        assert_eq!(serde_json::to_value(parsed).unwrap(), schema);
    }
}

#[test]
fn choice_options_follow_serde() {
    let values: Vec<_> = Region::OPTIONS.iter().map(|o| o.value).collect();
    assert_eq!(values, ["eu-west-1", "us-east-1"]);
    assert_eq!(Region::UsEast.value(), "us-east-1");
    assert_eq!(Strategy::AllAtOnce.value(), "all-at-once");
}

/// Runs content through what the runtime does with an accepted answer: schema check, then serde.
fn answer<F: Form>(content: Value) -> Result<Elicited<F>, String> {
    let request = input::form::<F>("question").into_request();
    Elicited::<F>::from_response(
        "q",
        &request,
        json!({"action": "accept", "content": content}),
    )
    .map_err(|e| match e.problem() {
        AnswerProblem::Malformed(reason) => reason.clone(),
        other => panic!("expected a malformed answer, got {other:?}"),
    })
}

fn valid_everything() -> Value {
    json!({
        "notifyEmail": "ops@example.org",
        "startDate": "2026-12-02",
        "startsAt": "2026-12-02T12:00:00+01:00",
        "service": "api",
        "retries": 3,
        "offset": -2,
        "big": 10,
        "count": -5,
        "ratio": 1,
        "temperature": 2.5,
        "dryRun": false,
        "env": "prod",
        "strategy": "all-at-once",
        "regions": ["us-east-1", "eu-west-1"],
        "fallbacks": [],
        "ID": 7
    })
}

#[test]
fn content_a_client_sends_round_trips_into_the_struct() {
    assert_eq!(
        answer::<Confirm>(json!({"apply": true, "reason": "go"})).unwrap(),
        Elicited::Accept(Confirm {
            apply: true,
            reason: Some("go".into())
        })
    );
    assert_eq!(
        answer::<Confirm>(json!({"apply": false})).unwrap(),
        Elicited::Accept(Confirm {
            apply: false,
            reason: None
        })
    );
    let Elicited::Accept(everything) = answer::<Everything>(valid_everything()).unwrap() else {
        panic!("accepted")
    };
    assert_eq!(
        everything,
        Everything {
            notify_email: "ops@example.org".into(),
            homepage: None,
            start_date: "2026-12-02".into(),
            starts_at: Some("2026-12-02T12:00:00+01:00".into()),
            service: "api".into(),
            retries: 3,
            offset: -2,
            big: 10,
            count: -5,
            ratio: 1.0,
            temperature: Some(2.5),
            dry_run: false,
            env: Env::Prod,
            strategy: Some(Strategy::AllAtOnce),
            regions: vec![Region::UsEast, Region::EuWest],
            fallbacks: Some(vec![]),
            id: 7,
            note: String::new(),
            cache: vec![],
        }
    );
    assert_eq!(answer::<Ack>(json!({})).unwrap(), Elicited::Accept(Ack {}));
}

#[test]
fn content_outside_the_schema_is_rejected_before_serde() {
    let cases = [
        (
            "notifyEmail",
            json!("not-an-email"),
            "`notifyEmail` must be an email address",
        ),
        (
            "homepage",
            json!("no scheme"),
            "`homepage` must be an absolute URI",
        ),
        (
            "startDate",
            json!("2026-02-30"),
            "`startDate` must be a calendar date",
        ),
        (
            "startsAt",
            json!("tomorrow"),
            "`startsAt` must be a date-time",
        ),
        (
            "service",
            json!("ab"),
            "`service` must be at least 3 characters",
        ),
        ("retries", json!(-1), "`retries` must be at least 0"),
        ("offset", json!(11), "`offset` must be at most 10"),
        ("offset", json!(1.5), "`offset` must be a whole number"),
        ("ratio", json!(1.01), "`ratio` must be at most 1"),
        ("dryRun", json!("yes"), "`dryRun` must be true or false"),
        ("env", json!("dev"), "`env` must be one of:"),
        (
            "strategy",
            json!("Canary release"),
            "`strategy` must be one of:",
        ),
        (
            "regions",
            json!([]),
            "`regions` must have at least 1 item(s)",
        ),
        (
            "regions",
            json!(["eu-west-1", "us-east-1", "eu-west-1"]),
            "`regions` must have at most 2 item(s)",
        ),
        (
            "fallbacks",
            json!(["canary", "Internal"]),
            "`fallbacks` holds \"Internal\", which is not one of:",
        ),
    ];
    for (field, value, expected) in cases {
        let mut content = valid_everything();
        content[field] = value.clone();
        let error = answer::<Everything>(content).unwrap_err();
        assert!(error.contains(expected), "{field}={value}: {error}");
    }
    let mut missing = valid_everything();
    missing.as_object_mut().unwrap().remove("env");
    assert!(
        answer::<Everything>(missing)
            .unwrap_err()
            .contains("`env` is required")
    );
}

#[test]
fn decline_and_cancel_carry_no_content() {
    let request = input::form::<Confirm>("question").into_request();
    let declined = Elicited::<Confirm>::from_response("q", &request, json!({"action": "decline"}));
    assert_eq!(declined.unwrap(), Elicited::Decline);
    let cancelled = Elicited::<Confirm>::from_response("q", &request, json!({"action": "cancel"}));
    assert_eq!(cancelled.unwrap(), Elicited::Cancel);
}

/// Asks for `Everything` and answers with what the form held.
#[mrtr::tool]
async fn fill_in() -> Result<String, mrtr::machine::ToolError> {
    let form = ask!(key = "form", form::<Everything>("Fill in the release.")).accepted()?;
    Ok(format!("{} in {:?}", form.service, form.env))
}

/// A derived form's question travels in `requestState` as a registry key, not as its
/// schema, and comes back from that key exactly as it was asked: re-asked after a missing
/// answer, checked against the schema, and resumed.
#[tokio::test]
async fn a_derived_form_is_stored_as_a_key_and_asked_again_identically() {
    use mrtr::rmcp::model::InputResponses;
    use mrtr::testing::{Harness, Reply};

    let harness = Harness::new();
    let asked = |reply: Result<Reply<_>, _>| match reply {
        Ok(Reply::InputRequired(result)) => result,
        other => panic!("expected input_required, got {other:?}"),
    };
    let first = asked(harness.request(&fill_in, json!({}), None, None).await);
    let question = serde_json::to_value(&first.input_requests).unwrap();
    let schema_json = serde_json::to_string(&Everything::requested_schema()).unwrap();
    let state = first.request_state.expect("sealed state");
    assert!(
        state.len() < schema_json.len() / 4,
        "a {}-byte state for a {}-byte schema",
        state.len(),
        schema_json.len()
    );

    // No answer: the same question again, rebuilt from the key.
    let again = asked(
        harness
            .request(&fill_in, json!({}), Some(state.clone()), None)
            .await,
    );
    assert_eq!(
        serde_json::to_value(&again.input_requests).unwrap(),
        question
    );

    // An answer outside the schema is checked against the rebuilt schema: asked again.
    let mut wrong = valid_everything();
    wrong["retries"] = json!(-1);
    let responses: InputResponses = [(
        "form".to_string(),
        json!({"action": "accept", "content": wrong}),
    )]
    .into();
    let again = asked(
        harness
            .request(&fill_in, json!({}), Some(state.clone()), Some(responses))
            .await,
    );
    assert_eq!(
        serde_json::to_value(&again.input_requests).unwrap(),
        question
    );

    let responses: InputResponses = [(
        "form".to_string(),
        json!({"action": "accept", "content": valid_everything()}),
    )]
    .into();
    match harness
        .request(&fill_in, json!({}), Some(state), Some(responses))
        .await
    {
        Ok(Reply::Complete(result)) => {
            let text = serde_json::to_value(&result).unwrap()["content"][0]["text"].clone();
            assert_eq!(text, "api in Prod");
        }
        other => panic!("expected the tool to finish, got {other:?}"),
    }
}

/// A state whose pending form this build does not have (the form's schema changed between
/// deploys: another key) is stale, like one sealed by other code: the flow restarts, or is
/// refused under `StaleStatePolicy::Reject` — never resumed with a question nobody asked.
#[tokio::test]
async fn a_pending_form_this_build_does_not_know_is_a_stale_state() {
    use mrtr::machine::Machine;
    use mrtr::server::StaleStatePolicy;
    use mrtr::testing::{Harness, Reply};
    use mrtr::token::{Clock, KeyId, KeyRing, REJECTED_STATE_MESSAGE, SecretKey};
    use mrtr_runtime::fuzz_api::{BindingSpec, FuzzSealer, split_payload};

    let keys = KeyRing::new(KeyId(1), SecretKey::from_bytes([0x45; 32]));
    let harness = Harness::with_keys(keys.clone());
    let Ok(Reply::InputRequired(asked)) = harness.request(&fill_in, json!({}), None, None).await
    else {
        panic!("the tool asks first");
    };
    let sealer = FuzzSealer::new(keys.clone(), harness.clock().now_unix_seconds());
    let binding = BindingSpec::for_harness(fill_in.descriptor(), Default::default());
    let opened = sealer
        .open(asked.request_state.as_deref().unwrap(), &binding)
        .expect("the harness's own token");
    let (recipes, state) = split_payload(&opened.payload).expect("a server payload");
    // `[1 request]["form"][variant Form][8-byte key][message]`: change the key's first byte.
    let mut recipes = recipes.to_vec();
    let form_key_at = 1 + 1 + "form".len() + 1;
    recipes[form_key_at] ^= 0x01;
    let payload = [recipes.as_slice(), state].concat();
    let other_build = sealer
        .seal_payload(&binding, opened.fingerprint, opened.round, payload, [7; 24])
        .expect("seals");

    let answer = || -> mrtr::rmcp::model::InputResponses {
        [(
            "form".to_string(),
            json!({"action": "accept", "content": valid_everything()}),
        )]
        .into()
    };
    // Restart (the default): the flow begins again with the question this build asks.
    match harness
        .request(
            &fill_in,
            json!({}),
            Some(other_build.clone()),
            Some(answer()),
        )
        .await
    {
        Ok(Reply::InputRequired(again)) => assert_eq!(
            serde_json::to_value(&again.input_requests).unwrap(),
            serde_json::to_value(&asked.input_requests).unwrap()
        ),
        other => panic!("expected the flow to restart, got {other:?}"),
    }
    let strict = Harness::with_keys(keys).stale_state(StaleStatePolicy::Reject);
    let refused = strict
        .request_explained(&fill_in, json!({}), Some(other_build), Some(answer()))
        .await
        .expect_err("refused under Reject");
    assert_eq!(refused.error.code.0, -32602);
    assert_eq!(refused.error.message, REJECTED_STATE_MESSAGE);
    assert_eq!(refused.rejection, Some("unknown_form"));
}
