//! Real `#[mrtr::tool]` / `#[mrtr::prompt]` / `#[mrtr::resource]` machines whose sealed
//! states cover the shapes a suspension keeps: strings, integers, floats, options, vectors,
//! maps, tuples, enums, `&'static str` literals, snapshot loops and `AsJson`.

use std::collections::{BTreeMap, HashMap};

use mrtr::machine::{AsJson, Elicited, ToolError};
use serde::{Deserialize, Serialize};

/// A choice kept across suspensions.
#[derive(mrtr::FormChoice, Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Small.
    Small,
    /// Large.
    Large,
}

/// A form answer kept whole across a suspension.
#[derive(mrtr::Form, Serialize, Deserialize, Clone, Debug)]
pub struct Sizing {
    /// The tier.
    pub tier: Tier,
    /// How many.
    #[form(minimum = 1, maximum = 9)]
    pub count: u8,
    /// Ratio.
    #[form(minimum = 0.0, maximum = 1.0)]
    pub ratio: Option<f64>,
}

/// Integers, a string vector and a map kept across a suspending loop.
#[mrtr::tool]
pub async fn tally(rounds: u8) -> Result<String, ToolError> {
    let mut names: Vec<String> = Vec::new();
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut total: i64 = -3;
    for i in 0..rounds.min(3) {
        let name = ask!(text(format!("Name {i}?"))).accepted()?;
        *counts.entry(name.clone()).or_default() += 1;
        total += i64::from(i) * 7;
        names.push(name);
    }
    Ok(format!("{names:?} {total} {}", counts.len()))
}

/// String literals (`&'static str`), an option of one, a tuple and a float.
#[mrtr::tool]
pub async fn literals(prod: bool) -> Result<String, ToolError> {
    let env = if prod { "production" } else { "staging" };
    let mut picked: Option<&'static str> = None;
    let pairs = vec![("alpha", true), ("beta", false)];
    let scale = 1.5f64;
    if ask!(confirm(format!("Use {env}?"))).accepted()? {
        picked = Some("confirmed");
    }
    let note = ask!(text("Note?")).ok().unwrap_or_default();
    Ok(format!("{env} {picked:?} {pairs:?} {scale} {note}"))
}

/// A snapshot loop over borrowed strings, a `BTreeMap` and an `AsJson` value.
#[mrtr::tool]
pub async fn snapshot(items: Vec<String>) -> Result<String, ToolError> {
    let mut kept: BTreeMap<String, bool> = BTreeMap::new();
    let mut log = AsJson(serde_json::json!({"seen": []}));
    for item in &items {
        let keep = ask!(confirm(format!("Keep {item}?"))).accepted()?;
        kept.insert(item.clone(), keep);
        if let Some(seen) = log["seen"].as_array_mut() {
            seen.push(serde_json::Value::String(item.clone()));
        }
    }
    Ok(format!("{kept:?} {}", *log))
}

/// A form struct, an enum and a nested option kept whole; a `match` on the answer.
#[mrtr::tool]
pub async fn sizing() -> Result<String, ToolError> {
    let sizing = ask!(form::<Sizing>("Size?")).accepted()?;
    let tiers: Vec<Option<Tier>> = vec![Some(sizing.tier), None];
    let again = match ask!(choice("Again?", ["yes", "no"])) {
        Elicited::Accept(answer) => answer == "yes",
        Elicited::Decline | Elicited::Cancel => false,
    };
    let roots = roots!();
    Ok(format!("{sizing:?} {tiers:?} {again} {}", roots.len()))
}

/// A prompt that samples and keeps the sampled text.
#[mrtr::prompt]
pub async fn summary(topic: String) -> String {
    let first = sample!(prompt(format!("Summarize {topic}")))
        .text()
        .to_owned();
    let tone = ask!(choice("Tone?", ["dry", "warm"]))
        .ok()
        .unwrap_or_default();
    format!("{first} ({tone})")
}

/// A resource that asks for approval on a URL and the workspace roots.
#[mrtr::resource(uri = "vault://secret")]
pub async fn vault() -> String {
    let roots = roots!();
    let approved = ask!(url("Approve", "https://example.com/approve")).is_accepted();
    format!("{} roots, approved: {approved}", roots.len())
}
