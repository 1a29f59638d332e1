//! The flows the benchmark drives, and the scripted user that answers them.
//!
//! The user answers whatever is asked from the request alone (field types, enums, bounds),
//! never from knowing the tool, so the same answerer drives both implementations; the final
//! text each flow must end with follows from those answers.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value, json};

/// What the client's model "writes" for every sampling request.
pub const SAMPLED_SUMMARY: &str = "Ship it after the smoke tests pass.";

/// The service the wizard deploys.
pub const WIZARD_SERVICE: &str = "api";

/// One benchmarked flow: which tool, with which arguments.
///
/// ```
/// use mrtr_bench::scenario::Scenario;
/// let survey: Scenario = "survey:3".parse().unwrap();
/// assert_eq!(survey, Scenario::Survey(3));
/// assert_eq!(survey.requests_per_flow(), 4);
/// assert_eq!(survey.expected_text(), "answer1,answer2,answer3");
/// assert!("survey:x".parse::<Scenario>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// `wizard(service)`: choose an environment, confirm it, sample a summary (4 requests).
    Wizard,
    /// `survey(n)`: `n` sequential text questions (`n + 1` requests).
    Survey(u32),
    /// `profile()`: one `#[derive(Form)]` form with three fields (2 requests).
    Profile,
}

impl Scenario {
    /// The tool's name on both servers.
    ///
    /// ```
    /// assert_eq!(mrtr_bench::scenario::Scenario::Survey(5).tool(), "survey");
    /// ```
    pub fn tool(self) -> &'static str {
        match self {
            Scenario::Wizard => "wizard",
            Scenario::Survey(_) => "survey",
            Scenario::Profile => "profile",
        }
    }

    /// The `arguments` of every request of the flow.
    ///
    /// ```
    /// use mrtr_bench::scenario::Scenario;
    /// assert_eq!(Scenario::Survey(2).arguments()["n"], 2);
    /// assert_eq!(Scenario::Wizard.arguments()["service"], "api");
    /// ```
    pub fn arguments(self) -> Map<String, Value> {
        let arguments = match self {
            Scenario::Wizard => json!({"service": WIZARD_SERVICE}),
            Scenario::Survey(n) => json!({"n": n}),
            Scenario::Profile => json!({}),
        };
        match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// How many requests one complete flow takes (the call plus one retry per round).
    ///
    /// ```
    /// assert_eq!(mrtr_bench::scenario::Scenario::Wizard.requests_per_flow(), 4);
    /// ```
    pub fn requests_per_flow(self) -> u32 {
        match self {
            Scenario::Wizard => 4,
            Scenario::Survey(n) => n + 1,
            Scenario::Profile => 2,
        }
    }

    /// The text a correct implementation finishes with, given [`answer`]'s answers.
    ///
    /// ```
    /// use mrtr_bench::scenario::Scenario;
    /// assert_eq!(Scenario::Profile.expected_text(), "answer1, 18, newsletter: true");
    /// ```
    pub fn expected_text(self) -> String {
        match self {
            // `answer` picks the last option (`prod`), confirms, and samples SAMPLED_SUMMARY.
            Scenario::Wizard => format!("{WIZARD_SERVICE} → prod: {SAMPLED_SUMMARY}"),
            Scenario::Survey(n) => (1..=n)
                .map(|round| format!("answer{round}"))
                .collect::<Vec<_>>()
                .join(","),
            // Name is text (round 1), age the form's minimum, newsletter `true`.
            Scenario::Profile => "answer1, 18, newsletter: true".to_string(),
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scenario::Survey(n) => write!(f, "survey:{n}"),
            other => f.write_str(other.tool()),
        }
    }
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.split_once(':') {
            None if text == "wizard" => Ok(Scenario::Wizard),
            None if text == "profile" => Ok(Scenario::Profile),
            Some(("survey", n)) => n.parse().map(Scenario::Survey).map_err(|_| {
                format!("`{text}`: the survey length must be a whole number, e.g. survey:5")
            }),
            _ => Err(format!(
                "unknown scenario `{text}`: expected wizard, profile or survey:N"
            )),
        }
    }
}

/// Answers one input request (its JSON, as on the wire) the way the scripted user does:
/// forms field by field (an enum's last option, `true`, a number's minimum, text
/// `answer{round}`), sampling with [`SAMPLED_SUMMARY`], roots with none. `round` counts the
/// flow's `input_required` results from 1.
///
/// ```
/// use serde_json::json;
/// let confirm = json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Go?",
///     "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}}});
/// let answer = mrtr_bench::scenario::answer(&confirm, 1).unwrap();
/// assert_eq!(answer, json!({"action": "accept", "content": {"confirm": true}}));
/// assert!(mrtr_bench::scenario::answer(&json!({"method": "ping"}), 1).is_err());
/// ```
pub fn answer(request: &Value, round: usize) -> Result<Value, String> {
    match request["method"].as_str() {
        Some("elicitation/create") => {
            let properties = request["params"]["requestedSchema"]["properties"]
                .as_object()
                .ok_or_else(|| format!("a form without properties: {request}"))?;
            let mut content = Map::new();
            for (field, schema) in properties {
                content.insert(field.clone(), answer_field(field, schema, round)?);
            }
            Ok(json!({"action": "accept", "content": content}))
        }
        Some("sampling/createMessage") => Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": SAMPLED_SUMMARY},
            "model": "bench-model",
        })),
        Some("roots/list") => Ok(json!({"roots": []})),
        _ => Err(format!(
            "an input request the bench cannot answer: {request}"
        )),
    }
}

fn answer_field(field: &str, schema: &Value, round: usize) -> Result<Value, String> {
    if let Some(options) = schema["enum"].as_array() {
        return options
            .last()
            .cloned()
            .ok_or_else(|| format!("field `{field}` offers no option"));
    }
    match schema["type"].as_str() {
        Some("boolean") => Ok(json!(true)),
        Some("integer") | Some("number") => {
            Ok(schema.get("minimum").cloned().unwrap_or_else(|| json!(0)))
        }
        Some("string") => Ok(json!(format!("answer{round}"))),
        _ => Err(format!(
            "field `{field}` has a type the bench cannot answer: {schema}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_print_as_they_parse() {
        for text in ["wizard", "profile", "survey:1", "survey:20"] {
            assert_eq!(text.parse::<Scenario>().unwrap().to_string(), text);
        }
        assert!("survey".parse::<Scenario>().is_err());
        assert!("quiz:3".parse::<Scenario>().is_err());
    }

    #[test]
    fn form_fields_are_answered_by_type() {
        let form = json!({"method": "elicitation/create", "params": {"requestedSchema": {"properties": {
            "env": {"type": "string", "enum": ["staging", "prod"]},
            "age": {"type": "integer", "minimum": 18, "maximum": 130},
            "name": {"type": "string"},
        }}}});
        assert_eq!(
            answer(&form, 3).unwrap()["content"],
            json!({"env": "prod", "age": 18, "name": "answer3"})
        );
        let odd = json!({"method": "elicitation/create", "params": {"requestedSchema": {"properties": {
            "blob": {"type": "object"}}}}});
        assert!(answer(&odd, 1).unwrap_err().contains("blob"));
    }
}
