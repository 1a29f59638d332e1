//! Category 10 (issue 33, classes 5 and 6): what a state may keep.
//!
//! - A `&'static str` taken from a `const` or `static` item the body names is kept like a
//!   body literal (it decodes again, pointing into the item's strings).
//! - The rewrite the refusal advises for a value shared through `Arc<Mutex<..>>` handles:
//!   one owned value.
//!   (The refusals themselves — an `Arc` inside a kept struct, `serde_json::Value`,
//!   `skip_serializing_if`, `flatten`, internally tagged and untagged enums, named by the
//!   local at seal time — are in `tests/everyday_rust.rs`; their `AsJson` rewrites are
//!   category 4.)

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::support::{Script, check};

pub const STAGES: [&str; 3] = ["dev", "staging", "prod"];
pub static OWNERS: &[(&str, u32)] = &[("ops", 2), ("web", 1)];

ready! {
    everyday! {
        async fn promote(stage: u32, team: String) -> Result<String, String> {
            let from = STAGES[stage as usize % STAGES.len()];
            let to = STAGES.get(stage as usize + 1).copied().unwrap_or("done");
            let owner = OWNERS.iter().find(|(name, _)| *name == team).map(|(name, _)| *name).unwrap_or("nobody");
            let ok = ask!(confirm(format!("Promote {team} from {from} to {to}?"))).ok().unwrap_or(false);
            let note = ask!(text(format!("Note for {owner}?"))).ok().unwrap_or_default();
            Ok(format!("{from}->{to}:{ok} by {owner} ({note})"))
        }
    }

    #[tokio::test]
    async fn strings_of_named_consts_and_statics_are_kept_like_literals() {
        let scripts = [
            Script::accept("yes").confirm(true).texts(["-", "fast"]),
            Script::accept("no").confirm(false).texts(["-", ""]),
            Script::accept("declined").decline_at(0),
        ];
        let runs = check(&promote::promote, json!({"stage": 1, "team": "ops"}), || promote::plain(1, "ops".into()), &scripts).await;
        assert_eq!(runs[0].ok(), "staging->prod:true by ops (fast)");
        assert_eq!(runs[1].ok(), "staging->prod:false by ops ()");
        let last = check(&promote::promote, json!({"stage": 2, "team": "x"}), || promote::plain(2, "x".into()), &[Script::accept("last").texts(["-", "n"])]).await;
        assert_eq!(last[0].ok(), "prod->done:true by nobody (n)");
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Journal {
    pub label: String,
    pub entries: Vec<String>,
}

ready! {
    everyday! {
        async fn keep_journal(label: String, count: u32) -> Result<String, String> {
            // The rewrite of `log = Arc::new(Mutex::new(..)); writer = log.clone();` kept
            // across the suspension (refused at seal time): one owned value.
            let mut journal = Journal { label: label.trim().to_string(), entries: Vec::new() };
            for i in 0..count {
                let entry = ask!(text(format!("Entry {i} for {}?", journal.label))).ok().unwrap_or_default();
                journal.entries.push(entry);
            }
            Ok(format!("{}: {} [{}]", journal.label, journal.entries.len(), journal.entries.join("|")))
        }
    }

    #[tokio::test]
    async fn a_shared_buffer_kept_as_one_owned_value() {
        let scripts = [
            Script::accept("two").texts(["a", "b"]),
            Script::accept("declined").decline_at(1),
        ];
        let runs = check(&keep_journal::keep_journal, json!({"label": "ops", "count": 2}), || keep_journal::plain("ops".into(), 2), &scripts).await;
        assert_eq!(runs[0].ok(), "ops: 2 [a|b]");
        assert_eq!(runs[1].ok(), "ops: 2 [ok|]");
    }
}
