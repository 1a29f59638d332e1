//! Target 3: arbitrary `inputResponses` into answer decoding and schema validation, for
//! every input kind: a form with every field type and constraint `#[derive(Form)]` offers,
//! choice, multi-choice, text, confirm, URL, sampling (plain and with tools) and roots —
//! each also decoded as every other kind's outcome.
//!
//! Input: one byte picks the request, one the outcome type, the rest is the
//! `inputResponses` object as JSON text.
//!
//! Oracle: never a panic, and every accepted answer satisfies what was asked (bounds,
//! lengths, formats, options, item counts) — checked here independently of the runtime.

use std::sync::OnceLock;

use mrtr::machine::{Answers, Elicited, Outcome, Roots, Sampled, input};
use rmcp::model::InputRequest;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::answering::valid_answer;

/// An untitled single-select.
#[derive(mrtr::FormChoice, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Env {
    /// Development.
    Dev,
    /// Production.
    Prod,
}

/// A titled single-select (`oneOf` / `anyOf` of `{const, title}`).
#[derive(mrtr::FormChoice, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Blue/green
    BlueGreen,
    /// Canary release
    #[form(title = "Canary!")]
    Canary,
    /// Not offered.
    #[serde(skip)]
    #[allow(dead_code)]
    Hidden,
}

/// Every field type and constraint a form may have.
#[derive(mrtr::Form, Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Everything {
    /// Bounded text.
    #[form(min_length = 2, max_length = 8, title = "Name")]
    pub name: String,
    /// An email address.
    #[form(format = "email")]
    pub email: Option<String>,
    /// A URI.
    #[form(format = "uri")]
    pub site: Option<String>,
    /// A date.
    #[form(format = "date")]
    pub day: Option<String>,
    /// A date-time.
    #[form(format = "date-time")]
    pub at: Option<String>,
    /// A bounded signed integer.
    #[form(minimum = -5, maximum = 5)]
    pub small: i8,
    /// An unsigned integer (minimum 0 implied).
    pub big: Option<u64>,
    /// A bounded float.
    #[form(minimum = 0.5, maximum = 2.5)]
    pub ratio: Option<f64>,
    /// An unbounded float.
    pub single: Option<f32>,
    /// Yes or no.
    pub flag: bool,
    /// Single-select.
    pub env: Env,
    /// Titled single-select with a default.
    #[form(default = Strategy::Canary)]
    pub strategy: Option<Strategy>,
    /// Multi-select with item bounds.
    #[form(min_items = 1, max_items = 2)]
    pub tags: Vec<Env>,
    /// Titled multi-select.
    pub strategies: Option<Vec<Strategy>>,
    /// A defaulted integer.
    #[serde(default)]
    #[form(default = 3, maximum = 10)]
    pub retries: u16,
}

const CHOICES: [&str; 3] = ["staging", "prod", "ünïcode"];

/// The requests answers are decoded against, by index.
fn requests() -> &'static [InputRequest] {
    static REQUESTS: OnceLock<Vec<InputRequest>> = OnceLock::new();
    REQUESTS.get_or_init(|| {
        let tool = rmcp::model::Tool::new(
            "lookup",
            "Looks things up",
            json!({"type": "object", "properties": {"q": {"type": "string"}}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        vec![
            input::form::<Everything>("Everything?").into_request(),
            input::choice("Where?", CHOICES).into_request(),
            input::multi_choice("Which?", CHOICES).into_request(),
            input::text("Name?").into_request(),
            input::confirm("Sure?").into_request(),
            input::url("Approve", "https://example.com/approve").into_request(),
            input::prompt("Summarize")
                .system("Be brief")
                .max_tokens(64)
                .into_request(),
            input::prompt("Use a tool").tools(vec![tool]).into_request(),
            input::roots().into_request(),
        ]
    })
}

fn take<O: Outcome>(request: &InputRequest, responses: Map<String, Value>) -> Option<O> {
    let mut answers = Answers::new([("q".to_string(), request.clone())], responses);
    answers.take::<O>("q").ok()
}

fn is_email(text: &str) -> bool {
    text.rsplit_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit())
}

fn check_everything(form: &Everything) {
    let name = form.name.chars().count();
    assert!((2..=8).contains(&name), "name length {name}");
    if let Some(email) = &form.email {
        assert!(is_email(email), "email {email:?}");
    }
    if let Some(site) = &form.site {
        assert!(site.contains(':'), "uri {site:?}");
    }
    if let Some(day) = &form.day {
        assert!(is_date(day), "date {day:?}");
    }
    if let Some(at) = &form.at {
        assert!(
            at.get(..10).is_some_and(is_date) && at[10..].starts_with(['T', 't']),
            "date-time {at:?}"
        );
    }
    assert!((-5..=5).contains(&form.small), "small {}", form.small);
    if let Some(ratio) = form.ratio {
        assert!((0.5..=2.5).contains(&ratio), "ratio {ratio}");
    }
    assert!((1..=2).contains(&form.tags.len()), "tags {:?}", form.tags);
    assert!(form.retries <= 10, "retries {}", form.retries);
    let offered = |s: &Strategy| *s != Strategy::Hidden;
    assert!(form.strategy.iter().all(offered));
    assert!(form.strategies.iter().flatten().all(offered));
}

/// Runs one input.
///
/// ```
/// mrtr_fuzz::answers::run(br#"\x01\x00{"q": {"action": "accept", "content": {"choice": "prod"}}}"#);
/// ```
pub fn run(data: &[u8]) {
    let [request, outcome, rest @ ..] = data else {
        return;
    };
    let requests = requests();
    let request = &requests[usize::from(*request) % requests.len()];
    let responses = match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(responses)) => responses,
        Ok(other) => Map::from_iter([("q".to_string(), other)]),
        Err(_) => return,
    };
    match outcome % 9 {
        0 => {
            if let Some(Elicited::Accept(form)) = take::<Elicited<Everything>>(request, responses) {
                check_everything(&form);
            }
        }
        1 => {
            if let Some(Elicited::Accept(choice)) = take::<Elicited<String>>(request, responses) {
                // A text question accepts any string; a choice only an offered one.
                if requests[1] == *request {
                    assert!(CHOICES.contains(&choice.as_str()), "choice {choice:?}");
                }
            }
        }
        2 => {
            if let Some(Elicited::Accept(picked)) =
                take::<Elicited<Vec<String>>>(request, responses)
                && requests[2] == *request
            {
                assert!(
                    picked.iter().all(|p| CHOICES.contains(&p.as_str())),
                    "multi-choice {picked:?}"
                );
            }
        }
        3 => {
            let _ = take::<Elicited<bool>>(request, responses);
        }
        4 => {
            let _ = take::<Elicited<()>>(request, responses);
        }
        5 => {
            let _ = take::<Elicited<Value>>(request, responses);
        }
        6 => {
            if let Some(sampled) = take::<Sampled>(request, responses) {
                // Everything a tool may call on it must work on whatever was accepted.
                #[allow(deprecated)] // sampling: SEP-2577, still part of 2026-07-28 MRTR
                let model = sampled.result().model;
                assert_eq!(model, sampled.model());
                let _ = (sampled.text(), sampled.stop_reason());
            }
        }
        7 => {
            if let Some(roots) = take::<Roots>(request, responses) {
                let _ = roots.iter().map(|root| root.uri.len()).sum::<usize>();
            }
        }
        _ => {
            // Every answer of a matching kind, valid for its request, must be accepted.
            let valid = valid_answer(request);
            let mut answers = Answers::new(
                [("q".to_string(), request.clone())],
                [("q".to_string(), valid.clone())],
            );
            let accepted = match request {
                InputRequest::CreateMessage(_) => answers.take::<Sampled>("q").is_ok(),
                InputRequest::ListRoots(_) => answers.take::<Roots>("q").is_ok(),
                _ => answers.take::<Elicited<Value>>("q").is_ok(),
            };
            assert!(accepted, "a valid answer was refused: {valid}");
        }
    }
}

/// The seed corpus: a valid answer for every request, and a few malformed ones.
///
/// ```
/// assert!(mrtr_fuzz::answers::seeds().len() > 9);
/// ```
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for (index, request) in requests().iter().enumerate() {
        let body = json!({"q": valid_answer(request)}).to_string();
        for outcome in [index as u8, 5, 6, 7] {
            let mut seed = vec![index as u8, outcome];
            seed.extend_from_slice(body.as_bytes());
            seeds.push(seed);
        }
    }
    let everything = json!({"q": {"action": "accept", "content": {
        "name": "Zoë", "email": "a@b.c", "site": "urn:x", "day": "2026-02-28",
        "at": "2026-02-28T10:00:00Z", "small": -5, "big": 7, "ratio": 2.5, "single": 1e3,
        "flag": false, "env": "prod", "strategy": "blue-green", "tags": ["dev", "prod"],
        "strategies": ["canary"], "retries": 10
    }}});
    let mut seed = vec![0, 0];
    seed.extend_from_slice(everything.to_string().as_bytes());
    seeds.push(seed);
    let sampled = json!({"q": {"role": "assistant", "model": "m", "content": [
        {"type": "text", "text": "hi"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": "x"}},
        {"type": "resource_link", "uri": "file:///a", "name": "a"}
    ], "stopReason": "toolUse"}});
    let mut seed = vec![7, 6];
    seed.extend_from_slice(sampled.to_string().as_bytes());
    seeds.push(seed);
    seeds
}
